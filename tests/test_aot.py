"""The kernels compiled when the package is built (pysdcmicro._aot): the same results as
numba's JIT kernels, the GIL released, used only when built from the sources on disk."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import threading
import time
import types

import numpy as np
import pytest

from pysdcmicro import _aot, _compile
from pysdcmicro._context import Context

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_BUILD = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("_aot_build", sys.argv[1])
aot = importlib.util.module_from_spec(spec)
spec.loader.exec_module(aot)
print(aot.build(sys.argv[2]))
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The extension: the one in the environment when it is current, else built here from
    the source tree (a process of its own, as setup.py does it)."""
    pytest.importorskip("numba")
    _aot._reset()
    if _aot._extension_current() is None:
        folder = tmp_path_factory.mktemp("aot")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        out = subprocess.run([sys.executable, "-c", _BUILD, os.path.join(ROOT, "pysdcmicro", "_aot.py"), str(folder)],
                             capture_output=True, text=True, timeout=900, env=env)
        if out.returncode != 0 and "pycc" in out.stderr:
            pytest.skip(f"this numba cannot compile ahead of time: {out.stderr.strip().splitlines()[-1]}")
        assert out.returncode == 0, out.stderr[-3000:]
        sys.modules.pop(_aot.EXTENSION, None)
        sys.path.insert(0, str(folder))
        _aot._reset()
    assert _aot._extension_current() is not None
    yield _aot
    _aot._reset()


def _datasets():
    rng = np.random.default_rng(7)
    grid = rng.integers(0, 4, size=(3000, 3)).astype(float)  # tie-heavy: many equal distances
    dup = np.repeat(rng.standard_normal((300, 5)), 7, axis=0)  # exact duplicates
    return {"gaussian": rng.standard_normal((5000, 8)), "grid": grid, "duplicates": dup,
            "two-scale": np.c_[rng.standard_normal(2000) * 1e6, rng.standard_normal(2000)]}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(_datasets()))
@pytest.mark.parametrize("k", [3, 5])
def test_built_mdav_rounds_are_the_jit_rounds(built, name, k):
    from pysdcmicro.constructive import _mdav_numba
    from pysdcmicro.constructive._mdav_arrays import prepare

    Z = _datasets()[name]
    out = []
    for rounds in (built.family("mdav").mdav_rounds, _mdav_numba.mdav_rounds):
        labels = np.full(Z.shape[0], -9, dtype=np.int64)
        g = rounds(*prepare(Z), k, labels, np.zeros(1, dtype=np.int64))
        out.append((g, labels))
    assert out[0][0] == out[1][0]
    assert np.array_equal(out[0][1], out[1][1])
    assert np.bincount(out[0][1]).min() >= k


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(_datasets()))
def test_built_repair_sweeps_are_the_jit_sweeps(built, name, monkeypatch):
    from pysdcmicro.constructive import mdav_labels
    from pysdcmicro.large import _local, _local_numba

    Z = _datasets()[name]
    start = mdav_labels(Z, 3)
    runs = []
    for kernels in (built.family("blocked"), _local_numba):
        monkeypatch.setattr(_local, "_NB", kernels)
        sol = _local.batch_local_search(Z, start, 3, Context(0))
        runs.append(sol)
    assert np.array_equal(runs[0].labels, runs[1].labels)
    assert runs[0].info == runs[1].info
    C = np.random.default_rng(1).standard_normal((500, 4))
    assert np.array_equal(built.family("blocked").nearest_groups(C, 6), _local_numba.nearest_groups(C, 6))


@pytest.mark.slow
def test_built_rounds_release_the_gil(built):
    """A thread that sets the stop flag 10 ms in stops the rounds early only if it can run
    while they do (the rounds take about a second here)."""
    from pysdcmicro.constructive._mdav_arrays import prepare

    Z = np.random.default_rng(0).standard_normal((100_000, 10))
    args = prepare(Z)
    labels = np.full(Z.shape[0], -9, dtype=np.int64)
    flag = np.zeros(1, dtype=np.int64)

    def stop():
        time.sleep(0.01)
        flag[0] = 1

    t = threading.Thread(target=stop)
    t.start()
    built.family("mdav").mdav_rounds(*args, 5, labels, flag)
    t.join()
    assert (labels == -1).sum() > Z.shape[0] // 2


def test_arguments_of_other_types_run_the_jit_kernel(built):
    """The compiled wrapper would misread them (another order) or crash (another dtype)."""
    from pysdcmicro.large import _local_numba

    C = np.random.default_rng(2).standard_normal((50, 3))
    readonly = C.copy()
    readonly.flags.writeable = False
    for other in (np.asfortranarray(C), C[:, ::-1], C.astype(np.float32), readonly, C[::2]):
        assert np.array_equal(built.family("blocked").nearest_groups(other, 4), _local_numba.nearest_groups(other, 4))
    assert np.array_equal(built.family("blocked").nearest_groups(C, np.int32(4)), _local_numba.nearest_groups(C, 4))


def test_built_families_are_not_cold(built):
    assert _compile.cold_kernels(("mdav", "blocked")) == []


class _FakeExtension(types.ModuleType):
    def __init__(self, stamp):
        super().__init__(_aot.EXTENSION)
        self.source_stamp = lambda: stamp
        self.mdav__mdav_rounds = lambda *a: "built"
        self.blocked__sweeps = self.blocked__nearest_groups = lambda *a: "built"


@pytest.fixture
def fake_extension(monkeypatch):
    def install(stamp):
        monkeypatch.setitem(sys.modules, _aot.EXTENSION, _FakeExtension(stamp))
        _aot._reset()

    monkeypatch.delenv("PYSDCMICRO_NO_AOT", raising=False)
    monkeypatch.delenv("PYSDCMICRO_NO_NUMBA", raising=False)
    yield install
    monkeypatch.undo()
    _aot._reset()


def test_an_extension_built_from_other_sources_is_not_used(fake_extension):
    fake_extension(_aot.source_stamp() ^ 1)
    assert _aot.family("mdav") is None
    assert _aot.family("blocked") is None


def test_a_current_extension_serves_its_families(fake_extension, monkeypatch):
    fake_extension(_aot.source_stamp())
    assert _aot.family("blocked").nearest_groups(np.zeros((4, 2)), 1) == "built"
    assert _aot.family("mdav") is not None
    assert _aot.family("no-such-family") is None
    monkeypatch.setenv("PYSDCMICRO_NO_AOT", "1")
    assert _aot.family("mdav") is None
    monkeypatch.delenv("PYSDCMICRO_NO_AOT")
    monkeypatch.setenv("PYSDCMICRO_NO_NUMBA", "1")  # plain Python everywhere
    assert _aot.family("mdav") is None


def test_the_stamp_covers_every_source_of_the_compiled_code():
    """Every kernel the exported functions call is in a file the stamp hashes."""
    pytest.importorskip("numba")
    for module in {m for m, _ in _aot.EXPORTS.values()}:
        mod = importlib.import_module(module)
        for value in vars(mod).values():
            py = getattr(value, "py_func", None)
            if py is not None:
                rel = py.__module__.split(".", 1)[1].replace(".", "/") + ".py"
                assert rel in _aot.SOURCES, rel


_FRESH = """
import hashlib, os, sys
import numpy as np
from pysdcmicro import microaggregate

X = np.random.default_rng(5).standard_normal((60000, 10))
res = microaggregate(X, 5, rng=0, n_jobs=2)
print(hashlib.sha1(np.ascontiguousarray(res.labels).tobytes()).hexdigest(), "numba" in sys.modules,
      len(os.listdir(os.environ["NUMBA_CACHE_DIR"])))
"""


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_fresh_install_with_the_built_kernels_compiles_nothing(built, tmp_path):
    """The blocked path on an empty numba cache: with the built kernels nothing is compiled
    (the cache stays empty) and numba is not imported in the calling process; the partition
    is the one numba's JIT kernels give."""
    folder = os.path.dirname(sys.modules[_aot.EXTENSION].__file__)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([ROOT, folder])}
    env.pop("PYSDCMICRO_NO_NUMBA", None)
    outs = []
    for i, no_aot in enumerate(("", "1")):
        cache = tmp_path / f"cache{i}"
        cache.mkdir()
        out = subprocess.run([sys.executable, "-c", _FRESH], capture_output=True, text=True, timeout=900,
                             env={**env, "NUMBA_CACHE_DIR": str(cache), "PYSDCMICRO_NO_AOT": no_aot})
        assert out.returncode == 0, out.stderr[-2000:]
        outs.append(out.stdout.split())
    built_run, jit_run = outs
    assert built_run[0] == jit_run[0]
    assert built_run[1:] == ["False", "0"]
    assert jit_run[2] != "0"  # the JIT run did compile into its cache
