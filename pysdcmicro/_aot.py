"""Ahead-of-time compiled kernels: machine code made when the package is built, so that the
first call on a fresh install does not wait for numba.

numba compiles a kernel the first time a process calls it, and keeps the machine code in its
on-disk cache for later processes. On a fresh install the first call pays several
CPU-seconds per kernel family for that: more than the call's own work on the blocked path
at 10^5 records, or in ``auto`` on a few thousand. So the build (``setup.py``, on ``pip
install``) compiles the families listed in :data:`EXPORTS` with numba's ahead-of-time
compiler (``numba.pycc``) into the extension module :data:`EXTENSION`, from the same source
as the JIT kernels:

* the same LLVM code for the same types, so the same results (the tests compare them);
* the GIL released during a call, as the JIT kernels' ``nogil=True`` (a watching thread can
  stop MDAV's rounds at a time limit or a Ctrl-C);
* the extension needs numpy only at run time: a process that uses only these families does
  not import numba (half a second and about 100 MiB per process, worker processes
  included).

At run time :func:`family` returns a family's compiled functions when the extension is
importable and was built from the kernel sources on disk (their hash is compiled in), and
None otherwise: then numba's JIT kernels serve, as without the extension. A call whose
argument types differ from the compiled signature (checked on every call: the compiled
wrapper does not check them) runs the JIT kernel.
``PYSDCMICRO_NO_AOT`` turns the extension off, and so does ``PYSDCMICRO_NO_NUMBA`` (plain
Python).

This module imports nothing from the package, so that ``setup.py`` can load it by path and
call :func:`build` in the build environment (numpy and numba, no pandas or scipy).
"""

from __future__ import annotations

import hashlib
import importlib
import os
import re
import sys
import threading
import types
from typing import Any

__all__ = ["EXTENSION", "EXPORTS", "family", "source_stamp", "build"]

#: The extension module's name: top level, so that the one in the environment is found
#: whichever copy of the package is imported (the stamp decides whether it is used).
EXTENSION = "_pysdcmicro_kernels"

#: family -> (kernel module, {function: (numba return type, argument types)}): the types the
#: package passes (a call with others runs the JIT kernel).
EXPORTS: dict[str, tuple[str, dict[str, tuple[str, str]]]] = {
    "mdav": ("pysdcmicro.constructive._mdav_numba", {
        "mdav_rounds": ("i8", "f8[:,::1], f8[::1], f4[:,::1], f4[::1], f8, f8, i8, i8[::1], i8[::1]"),
    }),
    "blocked": ("pysdcmicro.large._local_numba", {
        "sweeps": ("i8", "f8[:,::1], i8[::1], i8, i8, i8[:,::1], i8, f8, i8[:,::1], i8[::1], i8[::1], i8[::1], "
                         "f8[:,::1], f8[:,::1], f8[::1], b1, i8[::1], i8[::1], i8[::1], i8"),
        "nearest_groups": ("i8[:,::1]", "f8[:,::1], i8"),
    }),
    "icsm": ("pysdcmicro.local_search._icsm_numba", {
        "pool_moves": ("Tuple((f8[::1], i8[::1], i8[::1], i1[::1]))",
                       "f8[:,::1], i8[::1], i8[::1], f8[:,::1], f8[::1], i8[::1], i8[::1], i8[:,::1], i8, i8, f8, "
                       "i8, i8[::1]"),
        "npn_tour": ("i8[::1]", "f8[:,::1], i8[::1], i8[::1], i8[::1], i8[::1], i8[::1], i8[::1], i8[:,::1], i8, "
                                "i8[::1]"),
        "best_cycle": ("Tuple((f8, i8, i8, i8[:,::1], i8[:,::1]))",
                       "f8[:,::1], i8[::1], f8[:,::1], f8[::1], i8[::1], i8[::1], i8[:,::1], i8[::1], i8, i8, i8, "
                       "i8[::1]"),
        "near_groups": ("i8[:,::1]", "f8[:,::1], i8[::1], i8[::1], i8[::1], f8[:,::1], i8[:,::1], i8"),
        "refine_groups": ("i8[:,::1]", "f8[:,::1], i8[:,::1]"),
    }),
    "tour": ("pysdcmicro.univariate._hm_numba", {
        "dp_circular": ("Tuple((f8[::1], f8[::1], i8[:,::1]))", "f8[:,::1], i8, i8, i8"),
        "backtrack": ("i8[::1]", "i8[::1], i8"),
    }),
    "two-swap": ("pysdcmicro.local_search._two_swap_numba", {
        "swap_moves": ("UniTuple(i8, 2)",
                       "f8[:,::1], i8[::1], i8[::1], f8[:,::1], f8[:,::1], f8[::1], i8[:,::1], i8[::1], i8[::1], "
                       "f8[::1], i8[::1], f8, i8, f8[::1]"),
        "best_rows": ("void", "f8[:,::1], i8[::1], i8[::1], f8[:,::1], f8[::1], i8[::1], f8[::1], i8[::1]"),
    }),
}

#: The source files (relative to the package) the compiled code is made from.
SOURCES = ("constructive/_mdav_numba.py", "large/_local_numba.py", "local_search/_icsm_numba.py",
           "local_search/_two_swap_numba.py", "univariate/_hm_numba.py", "_select.py",
           "_compile.py")  # its njit decorates the kernels


def source_stamp(root: str | None = None) -> int:
    """A 63-bit hash of :data:`SOURCES` and :data:`EXPORTS` under the package folder ``root``."""
    root = root or os.path.dirname(os.path.abspath(__file__))
    h = hashlib.sha256(repr(sorted((f, sorted(e.items())) for f, (_, e) in EXPORTS.items())).encode())
    for rel in SOURCES:
        with open(os.path.join(root, *rel.split("/")), "rb") as fh:
            h.update(fh.read())
    return int.from_bytes(h.digest()[:8], "little") >> 1


_DTYPES = {"f8": "float64", "f4": "float32", "i8": "int64", "b1": "bool"}


def _argument_checks(args: str) -> tuple:
    """Per argument of :data:`EXPORTS`' argument types: ``(dtype name, ndim)`` for an array
    (C order), ``(dtype name, 0)`` for a scalar."""
    out = []
    for token in re.findall(r"[a-z]\d+(?:\[[^\]]*\])?", args):
        code, _, dims = token.partition("[")
        out.append((_DTYPES[code], dims.count(",") + 1 if dims else 0))
    return tuple(out)


def _fits(value: Any, dtype: str, ndim: int) -> bool:
    import numpy as np

    if ndim:
        return (type(value) is np.ndarray and value.dtype.name == dtype and value.ndim == ndim
                and value.flags.c_contiguous and value.flags.aligned and value.flags.writeable)
    if dtype == "bool":
        return isinstance(value, (bool, np.bool_))
    if dtype == "int64":
        return isinstance(value, (int, np.integer)) and -2 ** 63 <= value < 2 ** 63
    return isinstance(value, (float, int, np.floating, np.integer))


class _Kernel:
    """A compiled function. Its wrapper converts arguments without checking them (an array
    of another dtype or order would be misread), so the types are checked here, and
    arguments of other types go to the JIT kernel of the same source."""

    __slots__ = ("_fn", "_module", "_name", "_checks", "__name__")

    def __init__(self, fn: Any, module: str, name: str, signature: str) -> None:
        self._fn, self._module, self._name, self.__name__ = fn, module, name, name
        self._checks = _argument_checks(signature)

    def __call__(self, *args: Any) -> Any:
        if len(args) == len(self._checks) and all(_fits(a, *c) for a, c in zip(args, self._checks)):
            return self._fn(*args)
        return getattr(importlib.import_module(self._module), self._name)(*args)


_FAMILIES: dict[str, Any] = {}
_LOCK = threading.Lock()
_STAMP_OK: bool | None = None


def _extension_current() -> Any:
    """The extension module when it is importable and built from the sources on disk."""
    global _STAMP_OK
    try:
        ext = importlib.import_module(EXTENSION)
    except Exception:  # not built (no compiler, numba without pycc), or built for another numpy
        return None
    if _STAMP_OK is None:
        try:
            _STAMP_OK = int(ext.source_stamp()) == source_stamp()
        except Exception:
            _STAMP_OK = False
    return ext if _STAMP_OK else None


def family(name: str) -> types.SimpleNamespace | None:
    """The compiled functions of the family ``name`` (attributes named as in the kernel
    module), or None when the JIT kernels must serve."""
    if os.environ.get("PYSDCMICRO_NO_AOT") or os.environ.get("PYSDCMICRO_NO_NUMBA"):
        return None
    if name not in _FAMILIES:
        with _LOCK:
            if name not in _FAMILIES:
                ext = _extension_current()
                found = None
                if ext is not None and name in EXPORTS:
                    module, functions = EXPORTS[name]
                    try:
                        found = types.SimpleNamespace(**{
                            f: _Kernel(getattr(ext, f"{name}__{f}"), module, f, args)
                            for f, (_, args) in functions.items()})
                    except AttributeError:
                        found = None
                _FAMILIES[name] = found
    return _FAMILIES[name]


def _reset() -> None:
    """Forget what :func:`family` found (tests switch the extension on and off)."""
    global _STAMP_OK
    with _LOCK:
        _FAMILIES.clear()
        _STAMP_OK = None


def build(output_dir: str, root: str | None = None, cpu: str = "") -> str:
    """Compile :data:`EXPORTS` into the extension :data:`EXTENSION` in ``output_dir`` from the
    package source in ``root`` (default: this file's folder); returns the file's path.

    ``cpu`` is LLVM's target CPU name: '' (the default) is the generic CPU of the platform,
    so that the extension runs on every machine of it; "host" tunes for the building
    machine. Runs in a process of its own (``setup.py``'s): the package's ``__init__`` is not
    executed, only the kernel modules are imported."""
    import warnings

    root = os.path.abspath(root or os.path.dirname(os.path.abspath(__file__)))
    if "numba" not in sys.modules:  # the JIT callees compiled on the way stay out of the source tree
        import tempfile

        os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="pysdcmicro-build-")
    if "pysdcmicro" not in sys.modules:  # bare package objects: the kernel modules' imports only
        for name, sub in (("pysdcmicro", ""), ("pysdcmicro.constructive", "constructive"),
                          ("pysdcmicro.large", "large"), ("pysdcmicro.local_search", "local_search"),
                          ("pysdcmicro.univariate", "univariate")):
            pkg = types.ModuleType(name)
            pkg.__path__ = [os.path.join(root, sub) if sub else root]
            sys.modules[name] = pkg
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba.pycc announces its deprecation on import
        import numba.pycc.compiler as pycc_compiler
        from numba.pycc import CC

    stamp = source_stamp(root)
    cc = CC(EXTENSION)
    cc.output_dir = output_dir
    cc.target_cpu = cpu
    cc.verbose = False
    for fam, (module, functions) in EXPORTS.items():
        mod = importlib.import_module(module)
        for fn, (returns, args) in functions.items():
            cc.export(f"{fam}__{fn}", f"{returns}({args})")(getattr(mod, fn).py_func)

    def stamp_fn():
        return stamp

    cc.export("source_stamp", "i8()")(stamp_fn)

    # numba.pycc's exported wrappers keep the GIL; the JIT kernels release it (nogil=True)
    # and the package relies on that (a thread watches MDAV's rounds for the time limit)
    class _Flags(pycc_compiler.Flags):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.release_gil = True

    saved = pycc_compiler.Flags
    pycc_compiler.Flags = _Flags
    try:
        cc.compile()
    finally:
        pycc_compiler.Flags = saved
    return os.path.join(output_dir, cc.output_file)
