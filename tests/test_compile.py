"""The progress line says when a call compiles numba kernels first."""

import os

import numpy as np
import pytest

from pysdcmicro import _compile, microaggregate
from pysdcmicro.datasets import make_synthetic


def test_kernels_for_names_the_families_a_call_uses():
    assert _compile.kernels_for("auto") == ("icsm", "tour", "two-swap")
    assert _compile.kernels_for("mdav") == ()
    assert _compile.kernels_for("mdav", steps=("two-swap",)) == ("two-swap",)
    assert _compile.kernels_for("auto", blocked=True) == ("mdav", "blocked")
    assert _compile.kernels_for("icsm", blocked=True) == ("icsm", "tour", "mdav", "blocked")


def test_a_kernel_compiled_in_this_process_is_not_cold():
    pytest.importorskip("numba")
    X = make_synthetic(60, 3, rng=1)
    microaggregate(X, 3, method="mdav", improve="two-swap")  # compiles or loads two-swap's kernels
    assert _compile.cold_kernels(("two-swap",)) == []


def test_cold_kernels_put_compiling_on_the_progress_line(monkeypatch):
    pytest.importorskip("numba")
    monkeypatch.setenv("PYSDCMICRO_NO_AOT", "1")  # numba's JIT kernels, as without the built ones
    monkeypatch.setattr(_compile, "_cold", lambda fn: True)
    monkeypatch.setattr(_compile, "_index_fresh", lambda module, functions: False)
    events = []
    X = make_synthetic(60, 3, rng=1)
    microaggregate(X, 3, method="mdav", improve="two-swap", progress=events.append)
    stages = [e.stage for e in events]
    assert _compile.COMPILING in stages
    assert stages.index(_compile.COMPILING) < len(stages) - 1  # said before the work, not after
    first = events[stages.index(_compile.COMPILING)]
    assert first.extra == {"kernels": 2}


def test_warm_kernels_say_nothing(monkeypatch):
    monkeypatch.setattr(_compile, "_cold", lambda fn: False)
    events = []
    microaggregate(make_synthetic(60, 3, rng=1), 3, method="auto", progress=events.append)
    assert _compile.COMPILING not in [e.stage for e in events]
    assert np.isfinite(events[-1].elapsed)



@pytest.mark.parametrize("module", sorted({m for m, _ in _compile._MODULES.values()}
                                          | {"pysdcmicro.constructive._vmdav_numba", "pysdcmicro._select"}))
def test_every_kernel_module_imports_with_numba(module):
    """The callers fall back to plain numpy when a kernel module cannot be imported (numba
    missing), so a broken kernel module would otherwise only show as a slower run."""
    pytest.importorskip("numba")
    import importlib

    importlib.import_module(module)

# ---------------------------------------------------------------- the written-out sorts

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from pysdcmicro import _select  # noqa: E402

_values = st.lists(st.one_of(st.integers(-3, 3).map(float), st.floats(-1e6, 1e6, allow_nan=False)),
                   min_size=1, max_size=200)


@settings(max_examples=200, deadline=None)
@given(_values, st.data())
def test_kth_smallest_is_the_partition_order_statistic(values, data):
    v = np.array(values)
    n = data.draw(st.integers(1, v.size))
    kth = data.draw(st.integers(1, n))
    want = np.partition(v[:n], kth - 1)[kth - 1]
    assert _select.kth_smallest(v, n, kth) == want
    assert getattr(_select.kth_smallest, "py_func", _select.kth_smallest)(v, n, kth) == want
    assert (v == np.array(values)).all()  # the input is not reordered


@settings(max_examples=200, deadline=None)
@given(_values, st.data())
def test_stable_argsort_is_numpys_mergesort(values, data):
    v = np.array(values)
    n = data.draw(st.integers(0, v.size))
    want = np.argsort(v[:n], kind="mergesort")
    assert (_select.stable_argsort(v, n) == want).all()
    assert (getattr(_select.stable_argsort, "py_func", _select.stable_argsort)(v, n) == want).all()


_LITERALS = """
import sys
import numpy as np
from pysdcmicro import microaggregate
from pysdcmicro.datasets import make_synthetic
from pysdcmicro.large import microaggregate_blocked

X = make_synthetic(12000, 10, rng=2)
microaggregate(X[:3000], 3, method="icsm")
microaggregate(X, 3, method="mdav")  # 12000 x 10: the compiled rounds
microaggregate_blocked(X, 3, n_jobs=1)
for name, module in list(sys.modules.items()):
    if name.startswith("pysdcmicro") and (name.endswith("_numba") or name.endswith("_select")):
        for attr, fn in vars(module).items():
            for sig in getattr(fn, "signatures", None) or ():
                if any("Literal" in str(t) for t in sig):
                    print(f"{name}.{attr}{sig}")
"""


@pytest.mark.slow
@pytest.mark.subprocess
def test_no_kernel_compiles_a_literal_specialization(tmp_path):
    """A counter that starts at 0 and is passed to another kernel makes numba compile that
    kernel twice (for ``Literal[int](0)`` and for int64): seconds more on a fresh install.
    Compiled here from an empty cache (MDAV's rounds, the repair sweeps, ICSM), since
    kernels loaded from a cache show only the signature a call asks for."""
    pytest.importorskip("numba")
    import os
    import subprocess
    import sys

    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "PYSDCMICRO_NO_AOT": "1"}  # numba's JIT kernels
    env.pop("PYSDCMICRO_NO_NUMBA", None)
    out = subprocess.run([sys.executable, "-c", _LITERALS], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout == ""


_BLOCKED_TWICE = """
import hashlib
import numpy as np
from pysdcmicro import microaggregate

X = np.random.default_rng(5).standard_normal((60000, 10))
res = microaggregate(X, 5, rng=0, n_jobs=2)
print(hashlib.sha1(np.ascontiguousarray(res.labels).tobytes()).hexdigest(), res.info["blocks"]["executor"])
"""


@pytest.mark.slow
@pytest.mark.subprocess
def test_blocked_path_on_a_fresh_install_gives_the_same_partition(tmp_path):
    """On an empty numba cache the two workers compile one kernel family each (the other
    taking MDAV's numpy rounds meanwhile); the partition is the one a filled cache gives."""
    pytest.importorskip("numba")
    import os
    import subprocess
    import sys

    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "PYSDCMICRO_NO_AOT": "1"}  # numba's JIT kernels
    env.pop("PYSDCMICRO_NO_NUMBA", None)
    outs = []
    for _ in range(2):  # cold, then warm
        out = subprocess.run([sys.executable, "-c", _BLOCKED_TWICE], env=env, capture_output=True, text=True,
                             timeout=900)
        assert out.returncode == 0, out.stderr[-2000:]
        outs.append(out.stdout.split())
    assert outs[0] == outs[1]
    assert outs[0][1] == "processes"


def test_the_cache_index_on_disk_tells_a_warm_kernel_without_importing_numba(monkeypatch):
    """The quick check reads numba's index files only; after MDAV's rounds were compiled (or
    loaded) it finds them, as numba's own index loader does, and anything it cannot vouch for
    (another cache folder, another numba, a kernel without an index) falls back to the exact
    check."""
    pytest.importorskip("numba")
    if os.environ.get("NUMBA_CACHE_DIR"):
        pytest.skip("NUMBA_CACHE_DIR is set: the quick check leaves that cache to numba")
    from pysdcmicro.constructive import _mdav_numba
    from pysdcmicro.large._executors import compile_family

    compile_family("mdav")  # compiles MDAV's rounds, or loads them, and numba writes its index
    module, functions = _compile._MODULES["mdav"]
    assert _compile._index_fresh(module, functions) is True
    assert _compile.cached(_mdav_numba.mdav_rounds)
    assert _compile._index_fresh(module, ("no_such_kernel",)) is False
    monkeypatch.setattr(_compile, "_numba_version", lambda: "0.0.0")
    assert _compile._index_fresh(module, functions) is False
    monkeypatch.undo()
    monkeypatch.setenv("NUMBA_CACHE_DIR", "/nonexistent")
    assert _compile._index_fresh(module, functions) is False


def test_the_quick_check_closes_the_files_it_reads():
    import gc
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for module, functions in _compile._MODULES.values():
            _compile._index_fresh(module, functions)
        gc.collect()
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]
