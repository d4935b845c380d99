"""Sorting-based methods (``simple``, ``single``, ``pca``, ``onedims``) and
``measure="onestep"``: partitions, determinism, hand-checked examples, and (marked ``r``)
cell-by-cell equality with sdcMicro's ``microaggregation()`` on the CASC sets and on
sdcMicro's ``testdata``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pysdcmicro
from pysdcmicro import microaggregate
from pysdcmicro._aggregate import ONESTEP_BOUND, group_statistic
from pysdcmicro._errors import InvalidInputError
from pysdcmicro._partition import canonical_labels
from pysdcmicro.constructive._sorting import (
    onedims_labels, pca_labels, pca_scores, simple_labels, single_labels, sorted_runs,
)

from .._helpers import assert_k_partition

SORTING = ["simple", "single", "pca"]

# Two variables, ten records: every method's groups can be worked out by hand.
TOY = np.array([[5, 2], [1, 8], [9, 1], [3, 9], [7, 3], [2, 7], [8, 4], [4, 6], [6, 5], [10, 10]], dtype=float)


def _same_groups(a, b):
    return np.array_equal(canonical_labels(np.asarray(a)), canonical_labels(np.asarray(b)))


def test_registered():
    names = pysdcmicro.methods()
    for name in SORTING:
        assert name in names


@pytest.mark.parametrize("n,k", [(6, 3), (7, 3), (8, 3), (20, 5), (24, 5), (29, 5), (31, 10), (5, 3), (9, 5)])
def test_runs_are_k_partitions_with_the_remainder_last(n, k):
    order = np.random.default_rng(n * k).permutation(n)
    labels = sorted_runs(order, k)
    if n < 2 * k:
        assert labels.tolist() == [0] * n
        return
    assert_k_partition(labels, n, k, max_size=2 * k - 1)
    sizes = np.bincount(labels)
    assert sizes[:-1].tolist() == [k] * (n // k - 1) and sizes[-1] == k + n % k
    # each run is a contiguous stretch of the order
    assert np.all(np.diff(labels[order]) >= 0)


@pytest.mark.parametrize("method", SORTING)
@pytest.mark.parametrize("k", [2, 3, 4, 7])
def test_methods_give_k_partitions_and_repeat(method, k):
    X = np.random.default_rng(k).normal(size=(53, 4)) * [1, 10, 100, 0.1]
    first = microaggregate(X, k, method=method)
    assert_k_partition(first.labels, 53, k, max_size=2 * k - 1)
    again = microaggregate(X, k, method=method)
    np.testing.assert_array_equal(first.labels, again.labels)
    np.testing.assert_array_equal(first.data, again.data)


def test_toy_by_hand():
    # simple: rows 1-3, 4-6, 7-10
    assert simple_labels(10, 3).tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2, 2]
    r = microaggregate(TOY, 3, method="simple")
    np.testing.assert_allclose(r.data[:, 0], [5, 5, 5, 4, 4, 4, 7, 7, 7, 7])
    # single (first variable): a = 1,2,3 | 4,5,6 | 7,8,9,10
    r = microaggregate(TOY, 3, method="single")
    np.testing.assert_allclose(r.data[:, 0], [5, 2, 8.5, 2, 8.5, 2, 8.5, 5, 5, 8.5])
    # single on the second variable: b = 1,2,3 | 4,5,6 | 7,8,9,10
    r = microaggregate(TOY, 3, method="single", varsort=2)
    np.testing.assert_allclose(r.data[:, 1], [2, 8.5, 2, 8.5, 2, 8.5, 5, 5, 5, 8.5])
    # pca: the two variables have equal spread and negative correlation, so the axis is
    # (1, -1)/sqrt(2) and the order is by a - b: rows 2,4,6 | 8,10,9 | 1,5,7,3
    r = microaggregate(TOY, 3, method="pca")
    assert _same_groups(r.labels, [2, 0, 2, 0, 2, 0, 2, 1, 1, 1])
    np.testing.assert_allclose(r.data[[1, 7, 0]], [[2, 8], [20 / 3, 7], [7.25, 2.5]])


def test_single_ties_keep_row_order():
    x = np.array([1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0])
    # sorted stably: rows 1,3,5 (the zeros) then 0,2,4,6
    assert single_labels(x, 3).tolist() == [1, 0, 1, 0, 1, 0, 1]
    x = np.array([2.0, 1.0, 1.0, 1.0, 1.0, 0.0])
    assert single_labels(x, 3).tolist() == [1, 0, 0, 1, 1, 0]


def test_pca_axis_sign_puts_the_last_group_where_the_first_variable_is_large():
    t = np.arange(7, dtype=float)
    X = np.column_stack([t, -2 * t + 0.01 * (t % 2)])
    s = pca_scores(X)
    assert np.all(np.diff(s) > 0)  # increasing with the first variable
    assert pca_labels(X, 3).tolist() == [0, 0, 0, 1, 1, 1, 1]
    assert pca_labels(X[:, ::-1], 3).tolist() == [1, 1, 1, 1, 0, 0, 0]


@pytest.mark.parametrize("method", ["single", "pca"])
def test_groups_do_not_depend_on_row_order(method):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 3))
    perm = rng.permutation(40)
    a = microaggregate(X, 4, method=method).labels
    b = microaggregate(X[perm], 4, method=method).labels
    assert _same_groups(a[perm], b)


def test_varsort_is_checked():
    X = np.random.default_rng(0).normal(size=(12, 3))
    with pytest.raises(InvalidInputError, match="varsort.*between 1 and 3"):
        microaggregate(X, 3, method="single", varsort=4)
    with pytest.raises(InvalidInputError, match="varsort"):
        microaggregate(X, 3, method="single", varsort=0)
    with pytest.raises(TypeError, match="varsort"):
        microaggregate(X, 3, method="single", varsort=1.5)


def test_onedims_is_registered_per_variable():
    spec = pysdcmicro.methods()["onedims"]
    assert spec.per_variable and not spec.options
    assert not any(pysdcmicro.methods()[name].per_variable for name in SORTING)


@pytest.mark.parametrize("k", [2, 3, 5])
def test_onedims_equals_the_per_variable_single_call(k):
    # integer values with many ties, a constant-free frame with a text column and strata
    rng = np.random.default_rng(k)
    n = 6 * k + int(rng.integers(0, k))
    df = pd.DataFrame(rng.integers(-5, 6, size=(n, 3)) * [1, 10, 1000], columns=["a", "b", "c"]).astype(float)
    df.insert(1, "id", [f"r{i}" for i in range(n)])
    df["s"] = np.repeat([0, 1], [n // 2, n - n // 2])
    cols = ["a", "b", "c"]
    for extra in ({}, {"strata": "s"}, {"measure": "median"}, {"strata": "s", "strata_scaling": "stratum"}):
        got = microaggregate(df, k, variables=cols, method="onedims", **extra)
        want = microaggregate(df, k, variables=[[c] for c in cols], method="single", **extra)
        pd.testing.assert_frame_equal(got.data, want.data)
        assert got.information_loss == pytest.approx(want.information_loss, rel=1e-12)
        assert got.settings["variable_groups"] == [["a"], ["b"], ["c"]]
        for c, info in zip(cols, got.info["variable_groups"]):
            assert info["variables"] == [c] and info["k_anonymous"]
            for labels in [np.asarray(info["labels"])]:
                if "strata" not in extra:
                    assert _same_groups(labels, single_labels(df[c].to_numpy(), k))
    # the default columns (every numeric one) and groups given: each column on its own
    plain = microaggregate(df.drop(columns="s"), k, method="onedims")
    assert plain.settings["variable_groups"] == [["a"], ["b"], ["c"]]
    grouped = microaggregate(df, k, variables=[["a", "b"], ["c"]], method="onedims")
    pd.testing.assert_frame_equal(grouped.data, microaggregate(df, k, variables=cols, method="onedims").data)
    # arrays: column positions
    X = df[cols].to_numpy()
    np.testing.assert_array_equal(microaggregate(X, k, method="onedims").data,
                                  microaggregate(X, k, variables=[[0], [1], [2]], method="single").data)


def test_onedims_on_one_column_constant_columns_and_blocks():
    x = np.array([5.0, 1, 9, 3, 7, 2, 8])
    one = microaggregate(x[:, None], 3, method="onedims")  # one column: the ordinary path
    assert _same_groups(one.labels, single_labels(x, 3)) and "variable_groups" not in one.info
    X = np.column_stack([x, np.full(7, 4.0), x[::-1]])
    with pytest.warns(pysdcmicro.ConstantColumnWarning, match="column 1 is constant"):
        res = microaggregate(X, 3, method="onedims")
    assert res.variables == [0, 1, 2] and res.settings["variable_groups"] == [[0], [2]]
    assert res.data[:, 1].tolist() == [4.0] * 7
    with pytest.raises(InvalidInputError, match="every chosen variable is constant"):
        microaggregate(np.full((7, 2), 1.0), 3, method="onedims")
    with pytest.raises(InvalidInputError, match="'onedims' sorts each variable on the whole data.*blocks=4"):
        microaggregate(X[:, [0, 2]], 3, method="onedims", blocks=4)
    with pytest.raises(InvalidInputError, match="'onedims' sorts each variable on the whole data.*no Dask `client`"):
        microaggregate(X[:, [0, 2]], 3, method="onedims", client="tcp://localhost:8786")


def test_onedims_labels_and_the_variable_group_release():
    labels = onedims_labels(TOY, 3)
    assert labels.shape == (10, 2)
    for j in range(2):
        assert _same_groups(labels[:, j], single_labels(TOY[:, j], 3))
    df = pd.DataFrame(TOY, columns=["a", "b"])
    r = microaggregate(df, 3, variables=[["a"], ["b"]], method="single")
    np.testing.assert_allclose(r.data["a"], [5, 2, 8.5, 2, 8.5, 2, 8.5, 5, 5, 8.5])
    np.testing.assert_allclose(r.data["b"], [2, 8.5, 2, 8.5, 2, 8.5, 5, 5, 5, 8.5])
    assert all(g["k_anonymous"] for g in r.info["variable_groups"])


def test_onestep_by_hand():
    x = np.array([[0.0], [1], [2], [3], [100],      # median 2, MAD 1: 100 -> 2 + bound
                  [5], [5], [5], [5], [40],         # MAD 0: the median
                  [0], [2], [4], [6], [8], [9]])    # nothing clipped: the mean
    labels = np.repeat([0, 1, 2], [5, 5, 6])
    got = group_statistic(x, labels, 3, measure="onestep")[:, 0]
    np.testing.assert_allclose(got, [(6 + 2 + ONESTEP_BOUND) / 5, 5.0, 29 / 6], rtol=1e-15)
    # even group: median 1 (mean of the middle two), MAD median(51, 1, 1, 2) = 1.5
    y = np.array([[0.0], [2], [3], [-50]])
    lo = 1 - 1.5 * ONESTEP_BOUND
    np.testing.assert_allclose(group_statistic(y, np.zeros(4, int), 1, measure="onestep")[0, 0],
                               (0 + 2 + 3 + lo) / 4, rtol=1e-15)


def test_onestep_in_the_facade_skips_missing_cells_and_is_scale_equivariant():
    rng = np.random.default_rng(1)
    X = rng.standard_t(2, size=(30, 2)) * [1, 1000]
    X[3, 1] = np.nan
    a = microaggregate(X, 5, method="simple", measure="onestep")
    assert np.isnan(a.data[3, 1])
    b = microaggregate(X * 8.0, 5, method="simple", measure="onestep")
    np.testing.assert_allclose(b.data[~np.isnan(X)], 8.0 * a.data[~np.isnan(X)], rtol=1e-12)
    for rows in a.groups:
        vals = a.data[rows, 0]
        assert np.all(vals == vals[0])
        x = X[rows, 0]
        assert x.min() <= vals[0] <= x.max()


# ---------------------------------------------------------------------------------------
# Equality with sdcMicro (R, rpy2 and sdcMicro needed)

@pytest.fixture(scope="module")
def sdc():
    from pysdcmicro.bridges import sdcmicro as bridge

    try:
        bridge.check_r(sdcmicro=True)
    except bridge.RUnavailableError as exc:
        pytest.skip(str(exc))
    import rpy2.robjects as ro

    session = bridge._session()
    call = ro.r("function(x, k, m, meas) as.data.frame(sdcMicro::microaggregation("
                "x, aggr = k, method = m, measure = meas)$mx)")
    call_varsort = ro.r("function(x, k, v) as.data.frame(sdcMicro::microaggregation("
                        "x, aggr = k, method = 'single', varsort = v)$mx)")

    def run(frame, k, method, measure="mean", varsort=None):
        x = session.to_r(frame)
        out = call(x, k, method, measure) if varsort is None else call_varsort(x, k, varsort)
        return session.to_py(out).to_numpy(dtype=float)

    return run


def _ours(frame, k, method, measure="mean", **options):
    cols = list(frame.columns)
    res = microaggregate(frame, k, variables=cols, method=method, measure=measure, **options)
    return res.data[cols].to_numpy(dtype=float)


@pytest.mark.r
@pytest.mark.parametrize("dataset", ["tarragona", "census", "eia"])
@pytest.mark.parametrize("k", [3, 5, 10])
@pytest.mark.parametrize("method", ["simple", "single", "onedims", "pca"])
def test_equal_to_sdcmicro_cell_by_cell(sdc, casc, dataset, k, method):
    frame = casc(dataset).astype(float)
    np.testing.assert_allclose(_ours(frame, k, method), sdc(frame, k, method), rtol=1e-12, atol=1e-9)


@pytest.mark.r
@pytest.mark.parametrize("dataset", ["tarragona", "census", pytest.param("eia", marks=pytest.mark.slow)])
@pytest.mark.parametrize("k", [3, 5, 10])
def test_onestep_equal_to_sdcmicro_cell_by_cell(sdc, casc, dataset, k):
    frame = casc(dataset).astype(float)
    np.testing.assert_allclose(_ours(frame, k, "pca", "onestep"), sdc(frame, k, "pca", "onestep"),
                               rtol=1e-12, atol=1e-9)


@pytest.mark.r
@pytest.mark.parametrize("k", [3, 5, 10])
@pytest.mark.parametrize("measure", ["mean", "median", "onestep"])
def test_onedims_equal_to_sdcmicro_on_its_testdata(sdc, k, measure):
    from pysdcmicro.bridges import sdcmicro as bridge

    frame = bridge.load_dataset("testdata")[["expend", "income", "savings"]].astype(float)
    np.testing.assert_allclose(_ours(frame, k, "onedims", measure), sdc(frame, k, "onedims", measure),
                               rtol=1e-12, atol=1e-9)


@pytest.mark.r
def test_single_varsort_equal_to_sdcmicro(sdc, casc):
    frame = casc("tarragona").astype(float)
    np.testing.assert_allclose(_ours(frame, 5, "single", varsort=4), sdc(frame, 5, "single", varsort=4),
                               rtol=1e-12, atol=1e-9)


@pytest.mark.r
@pytest.mark.parametrize("method", ["simple", "single", "onedims", "pca"])
def test_equal_to_sdcmicro_on_small_random_sets_with_ties(sdc, method):
    # Small random sets (n = k*m + remainder, 2-5 variables, integer values with many ties,
    # mixed signs and scales): the tie order, the remainder group and the principal-axis sign.
    rng = np.random.default_rng(30)
    for trial in range(12):
        k = int(rng.integers(2, 6))
        n = 2 * k + int(rng.integers(0, 4 * k))
        p = int(rng.integers(2, 6))
        X = rng.integers(-4, 5, size=(n, p)) @ rng.integers(-3, 4, size=(p, p)) + rng.integers(0, 3, size=(n, p))
        frame = pd.DataFrame(X.astype(float), columns=[f"v{j}" for j in range(p)])
        if (frame.std() == 0).any() or np.linalg.matrix_rank(frame.to_numpy() - frame.mean().to_numpy()) < p:
            continue
        for measure in ("mean", "onestep"):
            np.testing.assert_allclose(_ours(frame, k, method, measure), sdc(frame, k, method, measure),
                                       rtol=1e-12, atol=1e-9, err_msg=f"trial {trial}, k={k}, {measure}")
