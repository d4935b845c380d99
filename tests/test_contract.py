"""Contract tests run over every registered method and improvement step (STYLE item 14).

Whatever the method: a valid k-partition covering every record once, SSE equal to an
independent computation, same seed -> same labels, DataFrame and ndarray give the same
answer, the input is never mutated, a time limit returns a valid incumbent, and the
documented behaviour on n < 2k, duplicates and constant columns.

A method that partitions one variable at a time (``per_variable``: ``onedims``) has one
partition per column (``info["variable_groups"]``): each is checked as a k-partition, the
SSE is the sum of the columns' own, and its release is k-anonymous per variable, which is
what its report says (not jointly).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import pysdcmicro
from pysdcmicro import ConstantColumnWarning, microaggregate

from ._helpers import assert_k_partition, naive_sse, naive_sst, partitions_of, zscore
from .method_budgets import budget, improvement_budget

METHODS = sorted(pysdcmicro.methods())
IMPROVEMENTS = sorted(pysdcmicro.improvements())


def _data(n=40, d=3, seed=0, duplicates=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 20, d) + rng.uniform(-5, 5, d)
    if duplicates:
        X[-duplicates:] = X[:duplicates]
    return X


def _run(X, k, method, **kw):
    return microaggregate(X, k, method=method, **{**budget(method), **kw})


def _partitions(res, p):
    return partitions_of(res)


def _independent_sse(Z, res):
    return sum(naive_sse(Z[:, cols], labels) for cols, labels in _partitions(res, Z.shape[1]))


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("k", [2, 3, 5])
def test_valid_partition_and_independent_sse(method, k):
    X = _data(n=37, d=3, seed=k)
    res = _run(X, k, method, rng=0)
    assert_k_partition(res.labels, 37, k)
    assert sorted(np.concatenate(res.groups).tolist()) == list(range(37))
    parts = _partitions(res, 3)
    assert sorted(c for cols, _ in parts for c in cols) == [0, 1, 2]
    Z = zscore(X)
    assert res.sse == pytest.approx(_independent_sse(Z, res), rel=1e-9, abs=1e-12)
    assert res.sst == pytest.approx(naive_sst(Z), rel=1e-12)
    assert res.information_loss == pytest.approx(100 * _independent_sse(Z, res) / naive_sst(Z), rel=1e-9)
    assert res.status in pysdcmicro.STATUSES
    # The released values are the group means of the original values (of each partition's columns).
    for cols, labels in parts:
        assert_k_partition(labels, 37, k)
        for g in np.unique(labels):
            rows = np.flatnonzero(labels == g)
            block = X[np.ix_(rows, cols)]
            np.testing.assert_allclose(res.data[np.ix_(rows, cols)], np.broadcast_to(block.mean(axis=0), block.shape),
                                       rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("method", METHODS)
def test_same_seed_same_labels(method):
    X = _data(n=30, seed=3)
    a = _run(X, 3, method, rng=42)
    b = _run(X, 3, method, rng=42)
    np.testing.assert_array_equal(a.labels, b.labels)
    assert a.settings["rng"] == 42
    assert a.settings == b.settings


@pytest.mark.parametrize("method", METHODS)
def test_frame_and_array_agree_and_input_untouched(method):
    X = _data(n=28, d=3, seed=5)
    df = pd.DataFrame(X, columns=["x", "y", "z"], index=[f"i{j}" for j in range(28)])
    df.insert(1, "label", [f"L{j % 4}" for j in range(28)])
    before = df.copy(deep=True)
    X_before = X.copy()
    r_df = _run(df, 3, method, rng=1)
    r_np = _run(X, 3, method, rng=1)
    pd.testing.assert_frame_equal(df, before)
    np.testing.assert_array_equal(X, X_before)
    np.testing.assert_array_equal(r_df.labels, r_np.labels)
    assert list(r_df.data.columns) == list(df.columns)
    assert list(r_df.data.index) == list(df.index)
    assert r_df.data["label"].tolist() == df["label"].tolist()
    np.testing.assert_allclose(r_df.data[["x", "y", "z"]].to_numpy(), r_np.data, rtol=1e-12)


@pytest.mark.parametrize("method", METHODS)
def test_tiny_time_limit_returns_valid_incumbent(method):
    X = _data(n=60, d=4, seed=9)
    res = _run(X, 3, method, rng=0, time_limit=1e-4)
    assert_k_partition(res.labels, 60, 3)
    assert res.status in ("done", "limit")


def test_time_limit_caps_a_deterministic_mip_budget(monkeypatch):
    """Deterministic budgets make a run reproducible; a time limit given with them still
    bounds the wall time. Column generation's CP-SAT MIP got no wall limit when
    ``mip_deterministic_time`` was set and ran 10 s past a 2-s limit on 300 Census records."""
    from pysdcmicro import _ortools

    seen = []
    real = _ortools.cpsat_set_partition

    def spy(*args, **kwargs):
        seen.append((kwargs.get("time_limit"), kwargs.get("deterministic_time")))
        return real(*args, **kwargs)

    monkeypatch.setattr(_ortools, "cpsat_set_partition", spy)
    X = _data(n=30, d=3, seed=9)
    opts = budget("column-generation")
    microaggregate(X, 3, method="column-generation", rng=0, time_limit=3, heuristic_share=0.0, **opts)
    assert seen, "the MIP over the pool ran"
    for time_limit, det in seen:
        assert det == opts["mip_deterministic_time"]
        assert time_limit is not None and 0 < time_limit <= 3
    seen.clear()
    microaggregate(X, 3, method="column-generation", rng=0, **opts)  # no limit: deterministic only
    assert seen and all(time_limit is None for time_limit, _ in seen)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("n,k", [(3, 3), (5, 3), (7, 4), (9, 5)])
def test_fewer_than_2k_records_make_one_group(method, n, k):
    X = _data(n=n, d=2, seed=n)
    res = _run(X, k, method, rng=0)
    assert res.n_groups == 1
    np.testing.assert_allclose(res.data, np.broadcast_to(X.mean(axis=0), X.shape))


@pytest.mark.parametrize("method", METHODS)
def test_duplicates(method):
    X = _data(n=24, d=2, seed=11, duplicates=10)
    res = _run(X, 3, method, rng=0)
    assert_k_partition(res.labels, 24, 3)
    X2 = np.repeat(_data(n=4, d=2, seed=1), 5, axis=0)  # 4 distinct points, 5 copies each
    res2 = _run(X2, 3, method, rng=0)
    assert_k_partition(res2.labels, 20, 3)


@pytest.mark.parametrize("method", METHODS)
def test_constant_column_is_kept_and_ignored(method):
    X = _data(n=30, d=2, seed=2)
    Xc = np.column_stack([X[:, 0], np.full(30, 7.5), X[:, 1]])
    with pytest.warns(ConstantColumnWarning, match="column 1 is constant"):
        res_c = _run(Xc, 3, method, rng=0)
    res = _run(X, 3, method, rng=0)
    assert res_c.data[:, 1].tolist() == [7.5] * 30
    assert res_c.information_loss == pytest.approx(_independent_sse(zscore(Xc), res_c) / naive_sst(zscore(Xc)) * 100)
    np.testing.assert_array_equal(res_c.labels, res.labels)


@pytest.mark.parametrize("method", METHODS)
def test_report_has_the_documented_keys(method):
    res = _run(_data(n=20, seed=4), 3, method, rng=0)
    report = res.to_dict()
    for key in ("method", "k", "n", "variables", "information_loss", "sse", "sst", "lower_bound",
                "n_groups", "min_group_size", "max_group_size", "seconds", "status", "settings"):
        assert key in report
    assert report["settings"]["method"] == method
    assert report["settings"]["rng"] == 0


@pytest.mark.parametrize("method", METHODS)
def test_report_states_the_anonymity_the_method_gives(method):
    from pysdcmicro.metrics import equivalence_class_sizes
    from pysdcmicro.reporting import report

    X = _data(n=30, d=3, seed=6)
    res = _run(X, 3, method, rng=0)
    rep = report(res).to_dict()
    joint = bool(equivalence_class_sizes(res.data).min() >= 3)
    assert rep["k_anonymous"] is joint  # the whole release, whatever the method
    if pysdcmicro.methods()[method].per_variable:
        assert rep["k_anonymity"]["scope"] == "per variable"
        assert rep["k_anonymity"]["within_each_group"] is True
        assert rep["k_anonymity"]["jointly"] is joint
        assert rep["headline"][0]["value"] == "per variable only"
        for j in range(3):  # each column on its own: k-anonymous
            assert np.unique(res.data[:, j], return_counts=True)[1].min() >= 3
    else:
        assert joint and rep["k_anonymity"]["scope"] == "joint"


@pytest.mark.parametrize("step", IMPROVEMENTS)
@pytest.mark.parametrize("k", [2, 3, 4])
def test_improvement_never_worse_and_keeps_sizes(step, k):
    X = _data(n=41, d=3, seed=20 + k)
    start = microaggregate(X, k, method="mdav")
    res = microaggregate(X, k, method="mdav", improve=step, improve_options=improvement_budget(step) or None, rng=0)
    assert_k_partition(res.labels, 41, k, max_size=2 * k - 1)
    assert res.sse <= start.sse + 1e-9
    assert res.sse == pytest.approx(naive_sse(zscore(X), res.labels), rel=1e-9)


@pytest.mark.parametrize("method", METHODS)
def test_seedless_run_records_the_fixed_seed_that_repeats_it(method):
    X = _data(n=40, d=3, seed=12)
    first = _run(X, 3, method)  # no rng: the fixed default seed, recorded
    assert first.settings["rng"] == 0
    again = _run(X, 3, method)
    np.testing.assert_array_equal(first.labels, again.labels)
