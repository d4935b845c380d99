"""One name per idea: ``n_jobs`` for worker processes/threads, ``neighbours`` for candidate
lists (the old names are deprecated aliases), and ``gap`` in percent wherever it is shown."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pytest

import pysdcmicro
from pysdcmicro import column_generation, decomposition, microaggregate, tsp_mhm
from pysdcmicro._context import ProgressEvent
from pysdcmicro._errors import InvalidInputError, InvalidTypeError
from pysdcmicro._methods import all_improvements, all_methods
from pysdcmicro._validation import check_n_jobs, cores_available

OLD_NAMES = ("processes", "workers", "neighbors")
CG = {"pricing_deterministic_time": 2.0, "max_iterations": 50, "mip_solver": "cpsat", "mip_deterministic_time": 2.0}
DECOMP = {"s": 2, "pricing_deterministic_time": 2.0, "max_iterations": 50, "mip_deterministic_time": 2.0}


def _X(n=30, seed=0):
    return np.random.default_rng(seed).normal(size=(n, 2))


@pytest.mark.parametrize("method, old, new, value, options", [
    ("auto", "processes", "n_jobs", 1, {}),
    ("decomposition", "processes", "n_jobs", 1, DECOMP),
    ("column-generation", "workers", "n_jobs", 2, CG),
    ("tsp-mhm", "neighbors", "neighbours", 5, {"iterations": 30}),
    ("mhm", "neighbors", "neighbours", 5, {"ordering": "tsp", "iterations": 30}),
])
def test_old_option_name_warns_and_gives_the_same_result(method, old, new, value, options):
    X = _X()
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        ref = microaggregate(X, 3, method=method, rng=0, **{new: value}, **options)
    with pytest.warns(FutureWarning, match=f"option `{old}` of method '{method}' is deprecated.*use `{new}`") as rec:
        res = microaggregate(X, 3, method=method, rng=0, **{old: value}, **options)
    assert rec[0].filename == __file__  # shown at the caller's line
    np.testing.assert_array_equal(res.labels, ref.labels)
    assert res.information_loss == ref.information_loss
    assert res.settings["options"] == ref.settings["options"] and old not in res.settings["options"]


def test_method_functions_take_the_old_names_with_a_warning_at_the_callers_line():
    X = _X()
    with pytest.warns(FutureWarning, match="use `n_jobs`") as rec:
        a = decomposition(X, 3, processes=1, rng=0, **DECOMP)
    assert rec[0].filename == __file__
    b = decomposition(X, 3, n_jobs=1, rng=0, **DECOMP)
    np.testing.assert_array_equal(a.labels, b.labels)
    with pytest.warns(FutureWarning, match="use `neighbours`") as rec:
        c = tsp_mhm(X, 3, neighbors=5, iterations=30, rng=0)
    assert rec[0].filename == __file__
    np.testing.assert_array_equal(c.labels, tsp_mhm(X, 3, neighbours=5, iterations=30, rng=0).labels)
    with pytest.warns(FutureWarning, match="use `n_jobs`"):
        column_generation(X, 3, workers=1, rng=0, **CG)


@pytest.mark.parametrize("call, message", [
    (lambda X: microaggregate(X, 3, method="auto", n_jobs=2, processes=1),
     "give `n_jobs` only (`processes` is its deprecated name); got both, n_jobs=2 and processes=1."),
    (lambda X: tsp_mhm(X, 3, neighbours=6, neighbors=5),
     "give `neighbours` only (`neighbors` is its deprecated name); got both, neighbours=6 and neighbors=5."),
])
def test_old_and_new_name_together_is_an_error(call, message):
    with pytest.raises(InvalidInputError) as err:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            call(_X())
    assert message in str(err.value)


def test_the_registry_lists_only_the_new_names():
    for spec in [*all_methods().values(), *all_improvements().values()]:
        assert not set(OLD_NAMES) & set(spec.options), spec.name
        for old, new in spec.renamed.items():
            assert new in spec.options and old not in spec.options
            assert spec.options[old] is spec.options[new]  # a front end reading the type by the old name
    for name in ("auto", "decomposition", "column-generation"):
        assert "n_jobs" in all_methods()[name].options


def test_methods_command_lists_only_the_new_names():
    proc = subprocess.run([sys.executable, "-m", "pysdcmicro", "methods"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "n_jobs=None" in proc.stdout and "neighbours=" in proc.stdout
    for old in OLD_NAMES:
        assert f"{old}=" not in proc.stdout


@pytest.mark.parametrize("n_jobs, expected", [(None, 7), (0, 7), (1, 1), (3, 3), (-1, None)])
def test_n_jobs_follows_scikit_learns_convention(n_jobs, expected):
    assert check_n_jobs(n_jobs, default=7) == (cores_available() if expected is None else expected)


@pytest.mark.parametrize("n_jobs, error", [(-2, InvalidInputError), (True, InvalidTypeError), (1.5, InvalidTypeError)])
def test_bad_n_jobs(n_jobs, error):
    with pytest.raises(error, match=r"`n_jobs` must be None, -1 or an integer >= 0"):
        check_n_jobs(n_jobs, default=1)


@pytest.mark.parametrize("n_jobs, threads", [(None, 1), (0, 1), (2, 2), (-1, None)])
def test_n_jobs_reaches_column_generation_threads(n_jobs, threads):
    res = microaggregate(_X(), 3, method="column-generation", rng=0, n_jobs=n_jobs, **CG)
    assert res.info["cpsat_workers"] == (cores_available() if threads is None else threads)
    assert res.settings["options"]["n_jobs"] == n_jobs


def test_gap_is_a_percent_in_the_result_and_its_json():
    res = column_generation(_X(12), 3, rng=0, max_iterations=1, exact=False, mip=False)
    assert res.lower_bound is not None and res.gap is not None
    expected = 100.0 * (res.information_loss - res.lower_bound) / res.information_loss
    assert expected > 1.0  # a gap that tells a percent from a fraction
    assert res.gap == pytest.approx(expected)
    assert json.loads(json.dumps(res.to_dict()))["gap"] == pytest.approx(expected)
    assert f"(gap {expected:.2f} %)" in res.summary()
    report = pysdcmicro.report(res, _X(12))
    assert report.gap == pytest.approx(expected) and f"gap {expected:.2f} %" in report.to_text()


def test_progress_event_gap_is_a_percent():
    event = ProgressEvent(method="m", stage="", elapsed=1.0, information_loss=10.0, lower_bound=9.0)
    assert event.gap == pytest.approx(10.0)
    assert ProgressEvent(method="m", stage="", elapsed=1.0, information_loss=10.0).gap is None
