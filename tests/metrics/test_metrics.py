"""The measures of pysdcmicro.metrics against hand-computed toys and naive re-implementations
written from the definitions (sdcMicro 5.8.1 dUtility / dRisk documentation; Mateo-Sanz,
Sebe & Domingo-Ferrer, PSD 2004)."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pysdcmicro
from pysdcmicro import metrics
from pysdcmicro.datasets import make_demo_data, make_synthetic

from .._helpers import naive_sse, naive_sst, zscore

# Toy used throughout, every value by hand: x = 1, 2, 3, 10, 11, 12 grouped {1,2,3}, {10,11,12}.
X1 = np.array([[1.0], [2.0], [3.0], [10.0], [11.0], [12.0]])
M1 = np.array([[2.0], [2.0], [2.0], [11.0], [11.0], [11.0]])
SD_X1 = math.sqrt(125.5 / 5)   # sum of squares about 6.5 is 125.5
SD_M1 = math.sqrt(121.5 / 5)   # 6 * 4.5^2


# -- naive references, written from the definitions -------------------------------------------
def naive_il1s(X, M):
    total = 0.0
    for j in range(X.shape[1]):
        col = [v for v in X[:, j] if not math.isnan(v)]
        s = statistics.stdev(col)
        for i in range(X.shape[0]):
            if math.isnan(X[i, j]) or math.isnan(M[i, j]):
                continue
            d = abs(X[i, j] - M[i, j])
            if s == 0:
                if d == 0:
                    continue
                return math.inf
            total += d / (s * math.sqrt(2))
    return total


def naive_interval_risk(X, M, f):
    n, p = X.shape
    sds = [statistics.stdev(M[:, j]) for j in range(p)]
    at_risk = 0
    for i in range(n):
        if all(M[i, j] - f * sds[j] <= X[i, j] <= M[i, j] + f * sds[j] for j in range(p)):
            at_risk += 1
    return at_risk / n


def naive_eigen(X, M):
    e1 = np.sort(np.linalg.eigvals(np.corrcoef(X, rowvar=False)).real)[::-1]
    e2 = np.sort(np.linalg.eigvals(np.corrcoef(M, rowvar=False)).real)[::-1]
    return float(sum(abs(a - b) / a for a, b in zip(e1, e2)))


def masked_by_mdav(n, d, k, seed):
    X = make_synthetic(n, d, rng=seed)
    res = pysdcmicro.microaggregate(X, k, method="mdav")
    return X, res.data, res


# -- IL (SSE/SST) ------------------------------------------------------------------------------
def test_il_sse_toy_by_hand():
    assert metrics.il_sse(X1, M1) == pytest.approx(100 * 4 / 125.5, rel=1e-12)


@pytest.mark.parametrize("seed,k", [(0, 3), (1, 5), (2, 2)])
def test_il_sse_equals_the_results_information_loss(seed, k):
    X, M, res = masked_by_mdav(90, 4, k, seed)
    assert metrics.il_sse(X, M) == pytest.approx(res.information_loss, rel=1e-10)
    Z = zscore(X)
    assert metrics.il_sse(X, M) == pytest.approx(100 * naive_sse(Z, res.labels) / naive_sst(Z), rel=1e-10)


def test_il_sse_with_strata_and_scaling_none():
    df = make_demo_data(150, rng=4)
    qi = ["employees", "turnover", "wages"]
    for kwargs in ({"strata": "region"}, {"scaling": "none"}):
        res = pysdcmicro.microaggregate(df, 3, variables=qi, **kwargs)
        assert metrics.il_sse(df, res.data, variables=qi) == pytest.approx(res.information_loss, rel=1e-10)


# -- IL1s ----------------------------------------------------------------------------------------
def test_il1s_toy_by_hand():
    # |x - x'| sums to 4; sdcMicro's IL1s is the sum (not the mean) over the cells.
    assert metrics.il1s(X1, M1) == pytest.approx(4 / (math.sqrt(2) * SD_X1), rel=1e-12)
    assert metrics.il1s(X1, M1, per_cell=True) == pytest.approx(4 / (math.sqrt(2) * SD_X1) / 6, rel=1e-12)


def test_il1s_uses_the_sd_of_the_original():
    # Shrinking the masked spread must not change the scale of the measure.
    X = np.array([[0.0], [10.0], [20.0], [30.0]])
    M = np.array([[5.0], [5.0], [25.0], [25.0]])
    assert metrics.il1s(X, M) == pytest.approx(20 / (math.sqrt(2) * statistics.stdev([0, 10, 20, 30])))


@given(st.integers(0, 10_000), st.integers(2, 5))
def test_il1s_matches_the_naive_definition(seed, k):
    X, M, _ = masked_by_mdav(40, 3, k, seed)
    assert metrics.il1s(X, M) == pytest.approx(naive_il1s(X, M), rel=1e-10)


def test_il1s_missing_values_are_skipped_and_constant_columns_follow_sdcmicro():
    X = np.array([[1.0, 5.0], [2.0, 5.0], [np.nan, 5.0], [4.0, 5.0]])
    M = np.array([[1.5, 5.0], [1.5, 5.0], [4.0, 5.0], [np.nan, 5.0]])
    # Column 1: sd of (1, 2, 4) over the 3 present values; only rows 0-1 have both values.
    expected = (0.5 + 0.5) / (math.sqrt(2) * statistics.stdev([1.0, 2.0, 4.0]))
    assert metrics.il1s(X, M) == pytest.approx(expected)
    assert metrics.il1s(X, M) == pytest.approx(naive_il1s(X, M))
    M2 = M.copy()
    M2[0, 1] = 6.0  # a constant original column that changed: d / 0 is infinite, as in R
    assert metrics.il1s(X, M2) == math.inf


# -- IL1 -------------------------------------------------------------------------------------------
def test_il1_relative_deviation_skips_zero_cells():
    X = np.array([[1.0, 0.0], [3.0, 2.0]])
    M = np.array([[2.0, 1.0], [2.0, 1.0]])
    # 100 * (1/1 + 1/3) for column 1; column 2: the x = 0 cell is dropped, 100 * 1/2 remains.
    assert metrics.il1(X, M) == pytest.approx(100 * (1 + 1 / 3 + 1 / 2))


# -- eigen ------------------------------------------------------------------------------------------
def test_eigen_toy_by_hand():
    X = np.array([[1.0, 2.0], [2.0, 1.0], [3.0, 4.0], [4.0, 3.0]])  # correlation 0.6
    M = np.array([[1.5, 1.5], [1.5, 1.5], [3.5, 3.5], [3.5, 3.5]])  # correlation 1
    # eigenvalues (1.6, 0.4) -> (2, 0): |1.6 - 2| / 1.6 + |0.4 - 0| / 0.4
    assert metrics.eigen_utility(X, M) == pytest.approx(0.25 + 1.0, rel=1e-12)
    assert metrics.eigen_utility(X, X) == pytest.approx(0.0, abs=1e-12)


@given(st.integers(0, 10_000), st.integers(2, 6))
def test_eigen_matches_numpy_correlation_eigenvalues(seed, k):
    X, M, _ = masked_by_mdav(50, 4, k, seed)
    assert metrics.eigen_utility(X, M) == pytest.approx(naive_eigen(X, M), rel=1e-8)


def test_eigen_is_invariant_to_rescaling_either_data_set():
    X, M, _ = masked_by_mdav(60, 3, 3, 9)
    base = metrics.eigen_utility(X, M)
    scale = np.array([2.0, 1000.0, 0.01])
    assert metrics.eigen_utility(X * scale + 7, M) == pytest.approx(base, rel=1e-9)
    assert metrics.eigen_utility(X, M * scale - 3) == pytest.approx(base, rel=1e-9)


def test_eigen_is_nan_when_a_masked_column_is_constant():
    X = np.array([[1.0, 2.0], [2.0, 1.0], [3.0, 4.0], [4.0, 3.0]])
    M = X.copy()
    M[:, 1] = 2.5
    assert math.isnan(metrics.eigen_utility(X, M))


# -- interval disclosure risk ------------------------------------------------------------------------
def test_interval_risk_toy_by_hand():
    # Half-width 0.05 * sd(masked) = 0.246: only x = 2 and x = 11 lie within it.
    assert metrics.interval_disclosure_risk(X1, M1) == pytest.approx(2 / 6)
    flags = metrics.interval_disclosure_risk(X1, M1, per_record=True)
    assert flags.tolist() == [False, True, False, False, True, False]
    # Half-width 1 / SD_M1 standard deviations is exactly 1: the bounds are included.
    assert metrics.interval_disclosure_risk(X1, M1, sd_fraction=1.0 / SD_M1) == pytest.approx(1.0)
    assert metrics.interval_disclosure_risk(X1, M1, sd_fraction=0.999 / SD_M1) == pytest.approx(2 / 6)


def test_interval_risk_uses_the_sd_of_the_masked_data():
    X = np.array([[0.0], [1.0], [100.0], [101.0]])
    M = np.array([[0.5], [0.5], [100.5], [100.5]])
    # 0.01 * sd(M) = 0.577 > 0.5: every record is inside its interval.
    assert metrics.interval_disclosure_risk(X, M, sd_fraction=0.01) == pytest.approx(1.0)
    # Around masked values with a tiny spread the half-width is 0.01 * sd(0.5, 0.5, 0.5, 0.6) = 0.0005
    # and no record is inside; with the original's sd (57.7) records 0 and 1 would be.
    M_small = np.array([[0.5], [0.5], [0.5], [0.6]])
    assert metrics.interval_disclosure_risk(X, M_small, sd_fraction=0.01) == 0.0


@given(st.integers(0, 10_000), st.integers(2, 5), st.sampled_from([0.01, 0.05, 0.2, 1.0]))
def test_interval_risk_matches_the_naive_definition(seed, k, f):
    X, M, _ = masked_by_mdav(40, 2, k, seed)
    assert metrics.interval_disclosure_risk(X, M, sd_fraction=f) == pytest.approx(naive_interval_risk(X, M, f))


def test_interval_risk_missing_values_count_as_inside():
    X = np.array([[1.0, np.nan], [5.0, 2.0], [9.0, 3.0]])
    M = np.array([[1.0, 2.0], [6.0, 2.0], [8.0, 3.0]])
    assert metrics.interval_disclosure_risk(X, M, per_record=True).tolist() == [True, False, False]


def test_interval_risk_rejects_a_negative_fraction():
    with pytest.raises(ValueError, match=r"`sd_fraction` must be a finite number >= 0; got -1."):
        metrics.interval_disclosure_risk(X1, M1, sd_fraction=-1)
    with pytest.raises(TypeError, match="`sd_fraction` must be a finite number >= 0; got 'a'."):
        metrics.interval_disclosure_risk(X1, M1, sd_fraction="a")


# -- k-anonymity ----------------------------------------------------------------------------------------
def naive_counts(rows):
    keys = [tuple("nan" if isinstance(v, float) and math.isnan(v) else v for v in r) for r in rows]
    return [keys.count(key) for key in keys]


def test_frequency_counts_and_classes():
    M = np.array([[2.0, 1.0], [2.0, 1.0], [5.0, 1.0], [np.nan, 0.0], [np.nan, 0.0]])
    assert metrics.frequency_counts(M).tolist() == naive_counts(M.tolist()) == [2, 2, 1, 2, 2]
    assert metrics.equivalence_class_sizes(M).tolist() == [2, 1, 2]
    assert not metrics.is_k_anonymous(M, 2)
    assert metrics.is_k_anonymous(M, 2, variables=[1])


def test_k_anonymity_over_mixed_dtype_columns():
    df = pd.DataFrame({"x": [1.0, 1.0, 1.0, 2.0, 2.0, 2.0], "region": list("aabbbb")})
    assert metrics.is_k_anonymous(df, 3, variables=["x"])
    assert not metrics.is_k_anonymous(df, 3, variables=["x", "region"])
    assert metrics.frequency_counts(df, variables=["x", "region"]).tolist() == [2, 2, 1, 3, 3, 3]


@given(st.integers(0, 10_000), st.integers(2, 6), st.integers(12, 60))
def test_microaggregated_output_is_k_anonymous_and_the_input_is_not(seed, k, n):
    X = make_synthetic(n, 3, rng=seed)
    res = pysdcmicro.microaggregate(X, k, method="mdav")
    assert metrics.is_k_anonymous(res.data, k)
    assert metrics.frequency_counts(res.data).min() >= k
    assert not metrics.is_k_anonymous(X, 2)  # continuous data: every record unique


def test_is_k_anonymous_checks_k():
    with pytest.raises(ValueError, match="`k` must be an integer >= 2; got 1."):
        metrics.is_k_anonymous(M1, 1)


# -- per-variable changes ----------------------------------------------------------------------------
@given(st.integers(0, 10_000), st.integers(2, 5))
def test_microaggregation_keeps_means_and_shrinks_variance(seed, k):
    X, M, _ = masked_by_mdav(45, 3, k, seed)
    ch = metrics.variable_changes(X, M)
    np.testing.assert_allclose(ch["mean_masked"], X.mean(axis=0), rtol=1e-12, atol=1e-12)
    assert (ch["variance_ratio"] <= 1 + 1e-12).all()
    np.testing.assert_allclose(ch["sd_original"], X.std(axis=0, ddof=1), rtol=1e-12)


def test_variable_changes_and_correlations_toy():
    ch = metrics.variable_changes(X1, M1)
    assert ch.loc[0, "variance_ratio"] == pytest.approx(121.5 / 125.5)
    X = np.array([[1.0, 2.0], [2.0, 1.0], [3.0, 4.0], [4.0, 3.0]])
    M = np.array([[1.5, 1.5], [1.5, 1.5], [3.5, 3.5], [3.5, 3.5]])
    c = metrics.correlation_changes(X, M)
    assert c["original"].iloc[0, 1] == pytest.approx(0.6)
    assert c["masked"].iloc[0, 1] == pytest.approx(1.0)
    assert c["max_abs_change"] == pytest.approx(0.4) and c["pair"] == (0, 1)
    assert metrics.correlation_changes(X1, M1)["pair"] is None


# -- input handling --------------------------------------------------------------------------------------
def test_frames_and_arrays_give_the_same_numbers():
    df = make_demo_data(90, rng=1)
    qi = ["employees", "turnover", "wages"]
    res = pysdcmicro.microaggregate(df, 3, variables=qi, method="mdav")
    X, M = df[qi].to_numpy(float), res.data[qi].to_numpy(float)
    for f in (metrics.il_sse, metrics.il1s, metrics.il1, metrics.eigen_utility, metrics.interval_disclosure_risk):
        assert f(df, res.data, variables=qi) == pytest.approx(f(X, M), rel=1e-12), f.__name__


def test_default_variables_are_the_shared_numeric_columns():
    a = pd.DataFrame({"id": list("abcd"), "x": [1.0, 2.0, 3.0, 4.0], "y": [4.0, 3.0, 1.0, 2.0]})
    b = a.assign(x=[1.5, 1.5, 3.5, 3.5])
    assert metrics.il1s(a, b) == pytest.approx(metrics.il1s(a, b, variables=["x", "y"]))


@pytest.mark.parametrize("call,exc,message", [
    (lambda: metrics.il1s(X1, M1[:5]), ValueError, "`masked` must have as many records as `original` (6); got 5."),
    (lambda: metrics.il1s(pd.DataFrame({"a": [1.0, 2.0]}), pd.DataFrame({"b": [1.0, 2.0]}), variables=["a"]),
     ValueError, "unknown column 'a' in `masked`; it is in `original` only."),
    (lambda: metrics.il1s(pd.DataFrame({"a": [1.0, 2.0]}), pd.DataFrame({"a": [1.0, 2.0]}), variables=["z"]),
     ValueError, "unknown column 'z' in `variables`"),
    (lambda: metrics.il1s(pd.DataFrame({"a": [1.0, 2.0]}), np.ones((2, 1))), TypeError,
     "`original` and `masked` must both be DataFrames or both be arrays"),
    (lambda: metrics.il1s(pd.DataFrame({"a": ["x", "y"]}), pd.DataFrame({"a": ["x", "y"]}), variables=["a"]),
     TypeError, "column 'a' of `original` must be numeric; got dtype"),
    (lambda: metrics.il1s(np.array([[1.0], [np.inf]]), np.ones((2, 1))), ValueError,
     "column 0 of `original` has an infinite value (inf) at row 1"),
    (lambda: metrics.il1s("a.csv", M1), TypeError, "`original` must be a pandas DataFrame or a 2-D numeric array"),
])
def test_bad_input_messages(call, exc, message):
    with pytest.raises(exc) as info:
        call()
    assert message in str(info.value)
