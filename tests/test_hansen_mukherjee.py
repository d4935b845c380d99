"""Optimal grouping along an order equals brute force over all run partitions (n <= 12)."""

from __future__ import annotations

import numpy as np
import pytest

from pysdcmicro.univariate import optimal_runs

from ._helpers import brute_force_optimum, naive_sse


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
