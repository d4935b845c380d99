"""The asv benchmarks (benchmarks/benchmarks/) cannot rot: every benchmark's setup and body
run once, on a few dozen rows (``PYSDCMICRO_ASV_TINY=1``), for the first value of each
parameter. The numbers are not checked here (they are asv's to record), only that each
benchmark runs and that each ``track_`` returns an information loss."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import math
import sys
from pathlib import Path

import pytest

ASV_DIR = Path(__file__).resolve().parents[1] / "benchmarks" / "benchmarks"
PACKAGE = "pysdcmicro_asv_benchmarks"  # a name of its own: the repository's benchmarks/ is another package
MODULES = sorted(p.stem for p in ASV_DIR.glob("*.py") if not p.stem.startswith("_"))
PREFIXES = ("time_", "peakmem_", "track_", "mem_")


def _package():
    if PACKAGE not in sys.modules:
        spec = importlib.util.spec_from_file_location(PACKAGE, ASV_DIR / "__init__.py",
                                                      submodule_search_locations=[str(ASV_DIR)])
        module = importlib.util.module_from_spec(spec)
        sys.modules[PACKAGE] = module
        spec.loader.exec_module(module)
    return sys.modules[PACKAGE]


def _cases():
    _package()
    for name in MODULES:
        module = importlib.import_module(f"{PACKAGE}.{name}")
        for cls_name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != module.__name__ or cls_name.startswith("_"):
                continue
            methods = [m for m in dir(cls) if m.startswith(PREFIXES)]
            if methods:
                yield pytest.param(cls, methods, id=f"{name}.{cls_name}")


def test_every_module_has_benchmarks():
    assert {"methods", "univariate", "large"} <= set(MODULES)
    assert len(list(_cases())) >= 7


@pytest.mark.parametrize(("cls", "methods"), list(_cases()))
def test_benchmark_runs_once_on_tiny_data(cls, methods, monkeypatch):
    monkeypatch.setenv("PYSDCMICRO_ASV_TINY", "1")
    params = getattr(cls, "params", None)
    if params is None:
        args = ()
    elif params and isinstance(params[0], (list, tuple)):
        args = tuple(p[0] for p in params)
    else:
        args = (params[0],)
    bench = cls()
    try:
        if hasattr(bench, "setup"):
            bench.setup(*args)
    except NotImplementedError as exc:  # asv's skip: the CASC files are absent
        pytest.skip(str(exc))
    for name in methods:
        value = getattr(bench, name)(*args)
        if name.startswith("track_"):
            assert isinstance(value, float) and math.isfinite(value) and 0.0 <= value <= 100.0, (name, value)
    if hasattr(bench, "teardown"):
        bench.teardown(*args)


def test_runner_loads_gaussian_and_statsmodels_data():
    from benchmarks._run_cell import load_dataset

    X = load_dataset("synthetic:gaussian:500:3:1")
    assert X.shape == (500, 3) and abs(float(X.mean())) < 0.2 and 0.8 < float(X.std()) < 1.2
    pytest.importorskip("statsmodels")
    anes = load_dataset("statsmodels:anes96")
    assert anes.shape == (944, 11) and all(dtype.kind in "if" for dtype in anes.dtypes)


def test_auto_default_suite_cases_load():
    from benchmarks.suites import auto_default

    assert {case["label"] for case in auto_default.CASES} == {"auto (no limit)", "mdav + two-swap"}
    assert all("time_limit" not in case for case in auto_default.CASES)
