"""Merging the improvements of several partitions (``pysdcmicro.optimization._merge``)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pysdcmicro._partition import canonical_labels, sse
from pysdcmicro.optimization._merge import difference_components, group_sse, merge_improvements


def _random_partition(rng, n: int, k: int) -> np.ndarray:
    """A random k-partition of n records (groups of k..2k-1 records, in random order)."""
    sizes = []
    left = n
    while left >= 2 * k:
        s = int(rng.integers(k, 2 * k))
        if left - s < k:
            s = left
        sizes.append(s)
        left -= s
    if left:
        sizes.append(left)
    labels = np.repeat(np.arange(len(sizes)), sizes)
    return labels[rng.permutation(n)]


def _groups(labels: np.ndarray) -> set:
    return {frozenset(np.flatnonzero(labels == g).tolist()) for g in np.unique(labels)}


def test_group_sse_adds_up_to_the_partition_sse():
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((50, 3))
    labels = canonical_labels(_random_partition(rng, 50, 3))
    assert group_sse(Z, labels).sum() == pytest.approx(sse(Z, labels), rel=1e-12)


def test_components_are_unions_of_whole_groups_of_both_partitions():
    rng = np.random.default_rng(1)
    a = canonical_labels(_random_partition(rng, 40, 3))
    b = canonical_labels(_random_partition(rng, 40, 3))
    of_record, of_a, of_b = difference_components(a, b)
    for c in np.unique(of_record):
        rows = set(np.flatnonzero(of_record == c).tolist())
        assert rows == {i for g in np.flatnonzero(of_a == c) for i in np.flatnonzero(a == g)}
        assert rows == {i for g in np.flatnonzero(of_b == c) for i in np.flatnonzero(b == g)}


def _two_regions():
    """Two far-apart regions of 6 records each (two tight pairs of triples in each), and a
    base that groups both regions badly."""
    cluster = np.array([[0.0], [0.1], [0.2], [5.0], [5.1], [5.2]])
    Z = np.vstack([cluster, cluster + 100.0])
    bad = np.array([0, 1, 0, 1, 0, 1])  # each group mixes the two triples
    good = np.array([0, 0, 0, 1, 1, 1])
    base = np.concatenate([bad, bad + 2])
    return Z, base, bad, good


def test_improvements_in_different_regions_add_up():
    Z, base, bad, good = _two_regions()
    first = np.concatenate([good, bad + 2])  # improves the first region only
    second = np.concatenate([bad, good + 2])  # the second only
    merged, value, info = merge_improvements(Z, base, [first, second])
    best_single = min(sse(Z, first), sse(Z, second))
    assert value == pytest.approx(sse(Z, np.concatenate([good, good + 2])))
    assert value < best_single - 1.0
    assert value == pytest.approx(sse(Z, merged))
    assert info == {"components": 2, "applied": 2, "from_candidates": 2}


def test_a_worse_difference_is_left_out():
    Z, base, bad, good = _two_regions()
    worse = np.array([0, 0, 1, 1, 0, 1])  # mixes the two triples of region two
    base = np.concatenate([bad, good + 2])
    cand = np.concatenate([good, worse + 2])  # improves region one, spoils region two
    merged, value, _ = merge_improvements(Z, base, [cand])
    assert _groups(merged) == _groups(np.concatenate([good, good + 2]))
    assert value < min(sse(Z, base), sse(Z, cand))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(6, 60), k=st.integers(2, 4), m=st.integers(1, 4))
def test_merge_is_a_k_partition_of_groups_taken_from_the_inputs_and_never_worse(seed, n, k, m):
    rng = np.random.default_rng(seed)
    if n < 2 * k:
        n = 2 * k
    Z = rng.standard_normal((n, 2))
    base = _random_partition(rng, n, k)
    cands = [_random_partition(rng, n, k) for _ in range(m)]
    before = base.copy(), [c.copy() for c in cands]
    merged, value, _ = merge_improvements(Z, base, cands)
    assert np.array_equal(base, before[0]) and all(np.array_equal(c, d) for c, d in zip(cands, before[1]))
    assert merged.shape == (n,) and np.bincount(merged).min() >= k
    allowed = _groups(base).union(*(_groups(c) for c in cands))
    assert _groups(merged) <= allowed
    assert value == pytest.approx(sse(Z, merged), rel=1e-12, abs=1e-12)
    assert value <= sse(Z, base) + 1e-9
