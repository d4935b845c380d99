"""Distance-based record linkage (pysdcmicro.metrics.record_linkage_risk) against a brute-force
n x n oracle written independently from the definition, on data with many exact ties."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pysdcmicro
from pysdcmicro import metrics
from pysdcmicro._errors import InvalidInputError, InvalidTypeError


def _oracle(X, M, top):
    """Every pair's squared distance; ties within a relative 1e-9, as documented (small n only)."""
    X = np.asarray(X, float)
    M = np.asarray(M, float)
    mean, sd = X.mean(0), X.std(0, ddof=1)
    keep = sd > 0
    Z = (X[:, keep] - mean[keep]) / sd[keep]
    Zm = (M[:, keep] - mean[keep]) / sd[keep]
    p, q = [], []
    for i in range(len(Z)):
        d = [float(np.sum((Z[i] - Zm[j]) ** 2)) for j in range(len(Zm))]
        own = d[i]
        tol = 1e-9 * own + 1e-15
        a = sum(1 for v in d if v < own - tol)
        b = sum(1 for v in d if abs(v - own) <= tol)
        p.append(1.0 / b if a == 0 else 0.0)
        q.append(min(b, max(top - a, 0)) / b)
    return float(np.mean(p)), float(np.mean(q))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k", [2, 3, 5])
def test_matches_brute_force_on_microaggregated_data(seed, k):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 6, size=(40, 3)).astype(float)   # small integers: many exact ties
    res = pysdcmicro.microaggregate(X, k, method="mdav")
    M = res.data
    for top in (1, 3, 7):
        r = metrics.record_linkage_risk(X, M, top=top)
        p, q = _oracle(X, M, top)
        assert r.linked == pytest.approx(p, abs=1e-12)
        assert r.within_top == pytest.approx(q, abs=1e-12)
    assert r.n_released_points == len(np.unique(np.round(M, 12), axis=0))


def test_ties_are_counted_fractionally_on_a_hand_computed_toy():
    # records 0-2 released as 2.0 (one point, three records), 3 released as itself, 4 and 5 as 11.5
    X = np.array([[1.0], [2.0], [3.0], [10.0], [11.0], [12.0]])
    M = np.array([[2.0], [2.0], [2.0], [10.0], [11.5], [11.5]])
    r = metrics.record_linkage_risk(X, M, top=1, per_record=True)
    # records 0-2: own point (3 records) nearest -> 1/3 each; record 3: exact -> 1;
    # records 4, 5: own point 11.5 (two records) at 0.5, the next (10) farther -> 1/2 each
    assert r.per_record.tolist() == pytest.approx([1 / 3, 1 / 3, 1 / 3, 1.0, 0.5, 0.5])
    assert r.linked == pytest.approx((3 * (1 / 3) + 1 + 0.5 + 0.5) / 6)
    assert r.n_released_points == 3
    # top = 2 for record 4 (own pair at 0.5, then 10 at 1): both of the pair fit -> 1
    assert metrics.record_linkage_risk(X, M, top=2).within_top == pytest.approx(
        (3 * (2 / 3) + 1 + 1 + 1) / 6)


def test_unmasked_data_is_fully_linked_and_shuffled_release_is_not():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(500, 4))
    assert metrics.record_linkage_risk(X, X).linked == 1.0
    shuffled = X[rng.permutation(500)]
    assert metrics.record_linkage_risk(X, shuffled).linked < 0.05


def test_standardized_with_the_originals_mean_and_sd():
    # scaling one column of both files by 1000 changes nothing; the masked file's own spread is
    # never used (a masked column with sd 0 still links through the original's sd)
    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 2))
    M = X + rng.normal(scale=0.3, size=X.shape)
    r1 = metrics.record_linkage_risk(X, M)
    S = np.array([1000.0, 1.0])
    assert metrics.record_linkage_risk(X * S, M * S).linked == pytest.approx(r1.linked)
    M2 = M.copy()
    M2[:, 1] = 0.0
    assert 0 <= metrics.record_linkage_risk(X, M2).linked <= 1


def test_dataframes_variables_constant_columns_and_no_mutation():
    df = pd.DataFrame({"a": [1.0, 2, 3, 10, 11, 12], "c": [5.0] * 6, "s": list("abcdef")})
    m = df.copy()
    m["a"] = [2.0, 2, 2, 11, 11, 11]
    before = df.copy()
    r = metrics.record_linkage_risk(df, m)
    assert r.variables == ["a"] and r.linked == pytest.approx(1 / 3)
    pd.testing.assert_frame_equal(df, before)
    assert set(r.to_dict()) >= {"linked", "within_top", "top", "n_records", "n_released_points"}


def test_bad_input_names_the_parameter():
    X = np.arange(12.0).reshape(6, 2)
    with pytest.raises(InvalidInputError, match="`top` must be an integer >= 1; got 0"):
        metrics.record_linkage_risk(X, X, top=0)
    with pytest.raises(InvalidTypeError, match="`top`"):
        metrics.record_linkage_risk(X, X, top=1.5)
    Y = X.copy()
    Y[3, 1] = np.nan
    with pytest.raises(InvalidInputError, match="missing value .* row 3"):
        metrics.record_linkage_risk(X, Y)
    with pytest.raises(InvalidInputError, match="constant"):
        metrics.record_linkage_risk(np.ones((4, 2)), np.ones((4, 2)))


def test_large_microaggregated_release_runs_without_a_distance_matrix():
    # 2 * 10^4 records in ~1000 x fewer points than an n x n matrix would need
    rng = np.random.default_rng(3)
    X = rng.lognormal(size=(20000, 3))
    order = np.argsort(X[:, 0], kind="stable")
    M = X.copy()
    for s in range(0, 20000, 4):                      # groups of 4 along the first variable
        rows = order[s:s + 4]
        M[rows] = X[rows].mean(axis=0)
    r = metrics.record_linkage_risk(X, M)
    assert r.n_released_points == 5000
    assert 0 < r.linked <= 0.25 + 1e-12


def _link_before_s27(Z, Zm, top):
    """The earlier implementation (unbounded k-nearest queries over np.unique's
    points), kept as the reference the bounded queries must equal number for number."""
    from scipy.spatial import cKDTree

    U, own, counts = np.unique(Zm, axis=0, return_inverse=True, return_counts=True)
    own = np.asarray(own).reshape(-1)
    m = U.shape[0]
    tree = cKDTree(U)
    n = Z.shape[0]
    a = np.zeros(n, dtype=np.int64)
    b = np.ones(n, dtype=np.int64)
    diff = Z - U[own]
    own_d2 = np.einsum("ij,ij->i", diff, diff)
    pending = np.arange(n)
    K = min(m, top + 2)
    while pending.size:
        rows = pending
        dist, idx = tree.query(Z[rows], k=K)
        dist = dist.reshape(len(rows), K)
        idx = idx.reshape(len(rows), K)
        diff = Z[rows][:, None, :] - U[idx]
        d2 = np.einsum("ijk,ijk->ij", diff, diff)
        is_own = idx == own[rows][:, None]
        o = np.where(is_own.any(axis=1), np.where(is_own, d2, -np.inf).max(axis=1), own_d2[rows])[:, None]
        c = counts[idx]
        tol = 1e-9 * o + 1e-15
        closer = np.where(d2 < o - tol, c, 0).sum(axis=1)
        ties = np.where(np.abs(d2 - o) <= tol, c, 0).sum(axis=1)
        covered = np.full(len(rows), K >= m) | (dist[:, -1] > np.sqrt(own_d2[rows]) * (1 + 1e-9) + 1e-12)
        done = covered | (closer >= top)
        a[rows[done]] = closer[done]
        b[rows[done]] = np.where(covered[done], ties[done], 1)
        pending = rows[~done]
        K = min(m, 2 * K)
    b = np.maximum(b, 1)
    return np.where(a == 0, 1.0 / b, 0.0), np.minimum(b, np.maximum(top - a, 0)) / b, m


@pytest.mark.parametrize("seed", range(3))
def test_bounded_queries_equal_the_previous_implementation_on_tied_data(seed):
    from pysdcmicro.metrics._linkage import _link

    rng = np.random.default_rng(seed)
    X = rng.integers(0, 4, size=(300, 3)).astype(float)          # many duplicates and equal distances
    groups = pysdcmicro.microaggregate(X, 3, method="mdav").data
    mean, sd = X.mean(0), X.std(0, ddof=1)
    for M in (groups, X, X[rng.permutation(300)], X + rng.integers(-1, 2, size=X.shape), -0.0 * X):
        Z, Zm = (X - mean) / sd, (M - mean) / sd
        for top in (1, 3, 5):
            p0, q0, m0 = _link_before_s27(Z, Zm, top)
            p1, q1, m1 = _link(np.ascontiguousarray(Z), np.ascontiguousarray(Zm), top)
            assert m1 == m0
            np.testing.assert_array_equal(p1, p0)
            np.testing.assert_array_equal(q1, q0)
