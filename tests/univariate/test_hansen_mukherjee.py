"""Optimal grouping along an order equals brute force over all run partitions (n <= 12)."""

from __future__ import annotations

import numpy as np
import pytest

from pysdcmicro.univariate import optimal_runs

from .._helpers import brute_force_optimum, naive_sse


def _compositions(n, lo, hi):
    if n == 0:
        yield []
        return
    for s in range(lo, min(hi, n) + 1):
        for rest in _compositions(n - s, lo, hi):
            yield [s] + rest


def _brute(Z, order, k, circular):
    n = len(order)
    best = np.inf
    shifts = range(n) if circular else [0]
    for shift in shifts:
        rot = np.roll(order, -shift)
        for comp in _compositions(n, k, 2 * k - 1):
            labels = np.empty(n, dtype=int)
            labels[rot] = np.repeat(np.arange(len(comp)), comp)
            best = min(best, naive_sse(Z, labels))
    return best


@pytest.mark.parametrize("circular", [False, True])
@pytest.mark.parametrize("k", [2, 3, 4])
@pytest.mark.parametrize("seed", range(6))
def test_matches_brute_force(k, seed, circular):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(k, 13))
    Z = rng.normal(size=(n, 3))
    order = rng.permutation(n)
    labels, cost = optimal_runs(Z, order, k, circular=circular)
    _, counts = np.unique(labels, return_counts=True)
    assert counts.min() >= k and counts.max() <= max(2 * k - 1, n if n < 2 * k else 0)
    assert cost == pytest.approx(naive_sse(Z, labels), abs=1e-9)
    assert cost == pytest.approx(_brute(Z, order, k, circular), abs=1e-9)


def test_circular_never_worse_than_linear():
    rng = np.random.default_rng(1)
    for _ in range(20):
        Z = rng.normal(size=(40, 2))
        order = rng.permutation(40)
        assert optimal_runs(Z, order, 3, circular=True)[1] <= optimal_runs(Z, order, 3)[1] + 1e-9


def test_sorted_1d_is_optimal_univariate():
    rng = np.random.default_rng(3)
    x = np.sort(rng.exponential(size=10))[:, None]
    labels, cost = optimal_runs(x, np.arange(10), 3)
    # Identity order on sorted 1-D data: the optimum over *all* k-partitions (brute force).
    assert cost == pytest.approx(brute_force_optimum(x, 3)[0], abs=1e-12)


# --------------------------------------------------------------------------- numerics
from pysdcmicro.univariate import _hansen_mukherjee as _hm  # noqa: E402


def _exact_group_sse(Zo, runs):
    """SSE of consecutive runs, two-pass per run in extended precision (the reference)."""
    Zl = np.asarray(Zo, dtype=np.longdouble)
    total = np.longdouble(0)
    pos = 0
    for s in runs:
        G = Zl[pos:pos + s]
        total += ((G - G.mean(axis=0)) ** 2).sum()
        pos += s
    return float(total)


def _reference_dp(Zo, k):
    """The DP fed costs computed two-pass in extended precision (an exact-cost reference)."""
    n = Zo.shape[0]
    Zl = np.asarray(Zo, dtype=np.longdouble)
    C = np.full((k, n + 1), np.inf)
    for s in range(k, 2 * k):
        if s > n:
            continue
        W = np.lib.stride_tricks.sliding_window_view(Zl, s, axis=0)  # (n-s+1, d, s)
        mu = W.mean(axis=-1, keepdims=True)
        C[s - k, s:] = ((W - mu) ** 2).sum(axis=(-1, -2)).astype(np.float64)
    cost, runs = _hm._linear(C, n, k)
    return cost, runs


def _clustered_1d(n, seed):
    """Sorted 1-D data: six far outliers first, then dense Gaussian records. The prefix sums
    of the former implementation (centred running sums) reach 6e12 after the outliers, so
    every later cost errs by ~1e-4, far more than a group's cost (~1e-8)."""
    rng = np.random.default_rng(seed)
    x = np.concatenate([-1e6 - np.arange(6.0), rng.normal(size=n - 6)])
    return np.sort(x)[:, None]


@pytest.mark.parametrize("seed", range(3))
def test_stable_costs_match_exact_cost_reference(seed):
    Zo = _clustered_1d(20_000, seed)
    labels, cost = optimal_runs(Zo, np.arange(Zo.shape[0]), 3)
    _, ref_runs = _reference_dp(Zo, 3)
    runs = np.bincount(labels)
    ours, ref = _exact_group_sse(Zo, runs), _exact_group_sse(Zo, ref_runs)
    assert ours <= ref * (1 + 1e-12)
    assert cost == pytest.approx(ours, rel=1e-12)


def test_running_sum_costs_are_not_enough_here():
    """The data of the test above defeats the former prefix-sum costs (centred running sums),
    so that test can fail."""
    Zo = _clustered_1d(20_000, 0)
    n, k = Zo.shape[0], 3
    xc = Zo[:, 0] - Zo[:, 0].mean()
    P = np.concatenate([[0.0], np.cumsum(xc)])
    Q = np.concatenate([[0.0], np.cumsum(xc ** 2)])
    C = np.full((k, n + 1), np.inf)
    for s in range(k, 2 * k):
        C[s - k, s:] = np.maximum((Q[s:] - Q[:-s]) - (P[s:] - P[:-s]) ** 2 / s, 0.0)
    _, naive_runs = _hm._linear(C, n, k)
    _, ref_runs = _reference_dp(Zo, k)
    assert _exact_group_sse(Zo, naive_runs) > _exact_group_sse(Zo, ref_runs) * (1 + 1e-6)


def test_welford_costs_equal_two_pass_costs():
    rng = np.random.default_rng(5)
    Zo = rng.normal(size=(60, 3)) * 1e3 + 1e6
    C = _hm.run_costs(Zo, 3)
    for s in range(3, 6):
        for j in range(s, 61):
            G = Zo[j - s:j].astype(np.longdouble)
            assert C[s - 3, j] == pytest.approx(float(((G - G.mean(axis=0)) ** 2).sum()), rel=1e-9)
    assert np.isinf(C[0, :3]).all()


needs_numba = pytest.mark.skipif(not _hm.have_compiled_kernel(), reason="numba not installed")


@needs_numba
@pytest.mark.parametrize("seed", range(12))
def test_compiled_kernel_equals_numpy_path(seed):
    """Same operations in the same order: bitwise the same DP, ties (rounded data) included."""
    rng = np.random.default_rng(seed)
    n, d, k = int(rng.integers(10, 500)), int(rng.integers(1, 4)), int(rng.integers(2, 7))
    Z = rng.normal(size=(n, d))
    if seed % 2:
        Z = np.round(Z * 2)  # many exact ties
    nb = _hm._kernels()
    for a, b in zip(_hm._dp_numpy(Z, k, 2 * k - 1), nb.dp_linear(Z, k, 2 * k - 1)):
        assert np.array_equal(a, b)
    if n >= 2 * k:
        R = 2 * k - 1
        C = _hm._window_costs(np.concatenate([Z, Z[:R - 1]]), 0, n + R, k, 2 * k - 1)
        for a, b in zip(_hm._circular_numpy(C, n, k, R), nb.dp_circular(C, n, k, R)):
            assert np.array_equal(a, b)


@needs_numba
def test_compiled_path_used_at_large_n_gives_same_labels(monkeypatch):
    rng = np.random.default_rng(9)
    x = rng.normal(size=(3000, 2))
    order = rng.permutation(3000)
    monkeypatch.setattr(_hm, "_COMPILED_MIN_WORK", 0)
    fast = optimal_runs(x, order, 4)
    monkeypatch.setattr(_hm, "_COMPILED_MIN_WORK", 10**18)
    slow = optimal_runs(x, order, 4)
    assert np.array_equal(fast[0], slow[0]) and fast[1] == slow[1]
