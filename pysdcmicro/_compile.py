"""Whether a call will compile numba kernels before it runs, so that the progress line can
say why the first run on an install is slow.

numba compiles a kernel the first time a process calls it and keeps the machine code in
its on-disk cache (``cache=True``), which later processes load in a fraction of the time.
A kernel is *cold* when neither this process nor the disk cache has it; the families
compiled when the package was built (:mod:`pysdcmicro._aot`) never are. The check reads
the dispatcher's signatures and the cache index only; it compiles nothing, and it imports a
kernel module only when numba is installed (the call would import it anyway).

:func:`njit` is the decorator the kernel modules share: numba's, or none without numba.
"""

from __future__ import annotations

import importlib
import os
import pickle
import sys
from typing import Any

__all__ = ["njit", "cached", "kernels_for", "cold_kernels", "announce", "COMPILING"]

#: The stage the progress line shows while kernels are compiled.
COMPILING = "compiling numba kernels (first run on this install; later runs load them from the cache)"

_MODULES = {
    "mdav": ("pysdcmicro.constructive._mdav_numba", ("mdav_rounds",)),
    "icsm": ("pysdcmicro.local_search._icsm_numba",
             ("pool_moves", "npn_tour", "best_cycle", "near_groups", "refine_groups")),
    "tour": ("pysdcmicro.univariate._hm_numba", ("dp_circular", "backtrack")),
    "two-swap": ("pysdcmicro.local_search._two_swap_numba", ("swap_moves", "best_rows")),
    "blocked": ("pysdcmicro.large._local_numba", ("sweeps", "nearest_groups")),
}

#: The kernel families each method (or the blocked path) calls with numba installed.
_USES = {
    "auto": ("icsm", "tour", "two-swap"),
    "icsm": ("icsm", "tour"),
    "two-swap": ("two-swap",),
    "blocked": ("mdav", "blocked"),
}


def kernels_for(method: str, *, blocked: bool = False, steps: tuple = ()) -> tuple[str, ...]:
    """The kernel families a call of ``method`` (with improvement ``steps``) uses. On the
    blocked path ``auto`` runs MDAV and the repair sweeps in each block (``effort="light"``),
    not ICSM."""
    names: list[str] = []
    keys = ((method,) if not (blocked and method == "auto") else ()) + tuple(steps)
    for key in keys + (("blocked",) if blocked else ()):
        for family in _USES.get(key, ()):
            if family not in names:
                names.append(family)
    return tuple(names)


def njit(*args: Any, **kwargs: Any) -> Any:
    """numba's ``njit`` for the kernel modules; without numba, or with the environment
    variable ``PYSDCMICRO_NO_NUMBA`` set, no compilation: the functions run as plain Python
    (the same arithmetic). numba is imported here, when a kernel module is."""
    compiled = None
    if not os.environ.get("PYSDCMICRO_NO_NUMBA"):
        try:
            from numba import njit as compiled
        except ImportError:  # pragma: no cover - numba is a dependency
            compiled = None
    if compiled is not None:
        return compiled(*args, **kwargs)
    if args and callable(args[0]):
        return args[0]
    return lambda fn: fn


def _numba_installed() -> bool:
    try:
        return importlib.util.find_spec("numba") is not None
    except (ImportError, ValueError):  # pragma: no cover
        return False


def cached(fn: Any, *, unknown: bool = False) -> bool:
    """Whether calling the numba function ``fn`` costs no compilation: compiled in this
    process already, or numba's disk cache holds it (its index for ``fn``'s source file).
    ``unknown`` is the answer when numba's internals cannot be read."""
    if getattr(fn, "signatures", None):
        return True
    try:
        return bool(fn._cache._cache_file._load_index())
    except Exception:  # numba internals moved, or no cache object
        return unknown


def _cold(fn: Any) -> bool:
    return not cached(fn, unknown=True)  # cannot tell: say nothing


def _first_line(source: str, function: str) -> int | None:
    """The line numba names a kernel's cache files by (``co_firstlineno``: the first
    decorator's line)."""
    lines = source.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(f"def {function}("):
            while i > 0 and lines[i - 1].startswith("@"):
                i -= 1
            return i + 1
    return None


def _numba_version() -> str | None:
    try:
        from importlib.metadata import version

        return version("numba")
    except Exception:  # pragma: no cover  (no metadata: the exact check decides)
        return None


def _index_fresh(module_name: str, functions: tuple[str, ...]) -> bool:
    """Whether numba's cache index of every one of ``functions`` is in the kernel module's
    ``__pycache__`` folder, written by the installed numba after the module's source was
    last changed: then the kernels load from the cache. Reads files only, without importing
    numba (half a second) or the module. False means "cannot tell this way" (another cache
    location, an index older than the source, another numba): the exact check decides."""
    if os.environ.get("NUMBA_CACHE_DIR") or os.environ.get("NUMBA_CACHE_LOCATOR_CLASSES"):
        return False
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          *module_name.split(".")[1:]) + ".py"
    try:
        with open(source, encoding="utf-8") as fh:
            text = fh.read()
        source_mtime = os.stat(source).st_mtime
    except OSError:
        return False
    version = _numba_version()
    if version is None:
        return False
    stem = os.path.splitext(os.path.basename(source))[0]
    tag = f"py{sys.version_info[0]}{sys.version_info[1]}{getattr(sys, 'abiflags', '')}"
    for function in functions:
        line = _first_line(text, function)
        index = os.path.join(os.path.dirname(source), "__pycache__", f"{stem}.{function}-{line}.{tag}.nbi")
        try:
            if line is None or os.stat(index).st_mtime < source_mtime:
                return False
            with open(index, "rb") as fh:  # numba's index starts with the numba version that wrote it
                if pickle.load(fh) != version:
                    return False
        except Exception:
            return False
    return True


def cold_kernels(families: tuple[str, ...]) -> list[str]:
    """The kernels of ``families`` that the next call would compile (``module.function``)."""
    if not families or not _numba_installed():
        return []
    from . import _aot

    out = []
    for family in families:
        if _aot.family(family) is not None:  # compiled when the package was built
            continue
        module_name, functions = _MODULES[family]
        if module_name not in sys.modules and _index_fresh(module_name, functions):
            continue
        try:
            module = importlib.import_module(module_name)
        except Exception:  # a kernel module that cannot load is the call's error to raise
            continue
        out.extend(f"{module_name}.{name}" for name in functions if _cold(getattr(module, name, None)))
    return out


def announce(ctx: Any, method: str, *, blocked: bool = False, steps: tuple = ()) -> list[str]:
    """Report :data:`COMPILING` on ``ctx``'s progress line when the call will compile
    kernels; returns the cold kernels."""
    cold = cold_kernels(kernels_for(method, blocked=blocked, steps=steps))
    if cold:
        ctx.report(stage=COMPILING, kernels=len(cold))
    return cold
