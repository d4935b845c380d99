"""Local search: move costs against recomputation, two-swap local optimality by brute force,
ICSM's heuristics (Tour2Assignment, pool, n-opt cycles), restarts, API and CLI.

Reference values: Castro, Gentile, Spagnolo-Arrizabalaga, PSD 2022 (paper file 000), Table 1
"Step 3" column (two-swap after MDAV); Mortazavi and Jalili 2015 (paper file 003), Table 2
(ICSM, one run).
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pysdcmicro
from pysdcmicro import InvalidInputError, InvalidTypeError, microaggregate
from pysdcmicro import _compile
from pysdcmicro.constructive._mdav import mdav_labels
from pysdcmicro.local_search._icsm import (
    NEIGHBOURS,
    _best_cycle,
    _best_cycle_dense,
    circular_runs,
    complex_heuristic,
    group_scores,
    icsm_search,
    neighbour_groups,
    partition_tour,
    perturb,
    pool_candidates,
    simple_heuristic,
    tour_to_assignment,
)
from pysdcmicro.local_search._state import Partition
from pysdcmicro.local_search._two_swap import two_swap_search
from pysdcmicro.univariate import optimal_runs

from .._helpers import assert_k_partition, k_partitions, naive_sse, zscore


def _random_partition(rng, n, k, max_size=None):
    """Labels of a random partition of range(n) into groups of k..max_size (n >= k)."""
    max_size = 2 * k - 1 if max_size is None else max_size
    sizes = []
    left = n
    while left >= 2 * k:
        s = int(rng.integers(k, min(max_size, left - k) + 1))
        sizes.append(s)
        left -= s
    sizes.append(left)  # k..2k-1
    labels = np.repeat(np.arange(len(sizes)), sizes)
    return labels[rng.permutation(n)]


@st.composite
def instances(draw, min_n=4, max_n=24):
    seed = draw(st.integers(0, 2**31 - 1))
    k = draw(st.integers(2, 4))
    n = draw(st.integers(max(min_n, 2 * k), max_n))
    d = draw(st.integers(1, 4))
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, d)) * rng.uniform(0.2, 5.0, d)
    if draw(st.booleans()):
        Z[n // 2:] = Z[: n - n // 2]  # exact duplicates
    labels = _random_partition(rng, n, k)
    return Z, labels, k, rng


def _moved(labels, i, h):
    out = np.array(labels, copy=True)
    out[i] = h
    return out


# ---------------------------------------------------------------------------
# Closed-form move costs = recomputation
# ---------------------------------------------------------------------------
@given(instances())
def test_every_swap_cost_equals_recomputation(inst):
    Z, labels, k, rng = inst
    P = Partition(Z, labels)
    base = naive_sse(Z, P.labels)
    assert P.sse() == pytest.approx(base, rel=1e-9, abs=1e-9)
    rows = P.swap_rows(np.arange(P.n))
    direct = P.swap_rows_direct(np.arange(P.n))
    for i, j in itertools.combinations(range(P.n), 2):
        if P.labels[i] == P.labels[j]:
            assert np.isinf(rows[i, j]) and np.isinf(direct[i, j])
            continue
        after = P.labels.copy()
        after[i], after[j] = P.labels[j], P.labels[i]
        truth = naive_sse(Z, after) - base
        assert P.swap_delta(i, j) == pytest.approx(truth, abs=1e-9)
        assert rows[i, j] == pytest.approx(truth, abs=1e-9)
        assert rows[j, i] == pytest.approx(truth, abs=1e-9)
        assert direct[i, j] == pytest.approx(truth, abs=1e-9)


@given(instances())
def test_migration_and_icsm_weights_equal_recomputation(inst):
    Z, labels, k, rng = inst
    P = Partition(Z, labels)
    base = naive_sse(Z, P.labels)
    M = P.migrate_rows(np.arange(P.n), k, 2 * k - 1)
    for i in range(P.n):
        A = P.labels[i]
        for h in range(P.g):
            if h == A:
                assert np.isinf(M[i, h])
                continue
            truth = naive_sse(Z, _moved(P.labels, i, h)) - base
            assert P.migrate_delta(i, h) == pytest.approx(truth, abs=1e-9)
            allowed = P.sizes[A] > k and P.sizes[h] < 2 * k - 1
            if allowed:
                assert M[i, h] == pytest.approx(truth, abs=1e-9)
            else:
                assert np.isinf(M[i, h])
        col = P.migrate_col(int((A + 1) % P.g), k, 2 * k - 1) if P.g > 1 else None
        if col is not None:
            np.testing.assert_allclose(np.where(np.isinf(col), 0, col),
                                       np.where(np.isinf(M[:, (A + 1) % P.g]), 0, M[:, (A + 1) % P.g]), atol=1e-9)
    # R1 (replacement), R2 (add), R3 (remove), one group at a time (eqs. 3, 5, 6 of paper 003)
    for i, j in itertools.combinations(range(P.n), 2):
        A, B = P.labels[i], P.labels[j]
        if A == B:
            continue
        GB = [r for r in P.members[B] if r != j] + [i]
        assert P.replace_delta(i, j) == pytest.approx(
            naive_sse(Z[GB], np.zeros(len(GB), int)) - P.group_sse(B), abs=1e-9)
        GB = P.members[B] + [i]
        assert P.add_delta(i, B) == pytest.approx(naive_sse(Z[GB], np.zeros(len(GB), int)) - P.group_sse(B),
                                                  abs=1e-9)
        GA = [r for r in P.members[A] if r != i]
        assert P.remove_delta(i) == pytest.approx(naive_sse(Z[GA], np.zeros(len(GA), int)) - P.group_sse(A),
                                                  abs=1e-9)


def test_paper_example_1_of_r1():
    """Paper 003, Example 1: T = [2..7], G1 = [2, 3, 4], G2 = [5, 6, 7];
    R1(3, G2, 6) = 6 (G2 = [5, 3, 7] has SSE 8 instead of 2)."""
    P = Partition(np.arange(2.0, 8.0)[:, None], np.array([0, 0, 0, 1, 1, 1]))
    assert P.replace_delta(1, 4) == pytest.approx(6.0)


@given(instances(max_n=18))
def test_applied_moves_keep_the_statistics_exact(inst):
    Z, labels, k, rng = inst
    P = Partition(Z, labels)
    for _ in range(15):
        i, j = rng.integers(P.n, size=2)
        if P.labels[i] != P.labels[j]:
            predicted = P.sse() + P.swap_delta(int(i), int(j))
            P.apply_swap(int(i), int(j))
        else:
            h = int(rng.integers(P.g))
            if h == P.labels[i] or P.sizes[P.labels[i]] <= k:
                continue
            predicted = P.sse() + P.migrate_delta(int(i), h)
            P.apply_migrate(int(i), h)
        assert P.sse() == pytest.approx(naive_sse(Z, P.labels), abs=1e-9)
        assert P.sse() == pytest.approx(predicted, abs=1e-9)
        assert sorted(itertools.chain(*P.members)) == list(range(P.n))
        assert all(P.labels[r] == h for h in range(P.g) for r in P.members[h])
        np.testing.assert_array_equal(P.sizes, np.bincount(P.labels, minlength=P.g))
        # the cached factors of the swap rows follow the moves
        np.testing.assert_allclose(np.where(np.isinf(P.swap_rows(np.arange(P.n))), 0, P.swap_rows(np.arange(P.n))),
                                   np.where(np.isinf(P.swap_rows_direct(np.arange(P.n))), 0,
                                            P.swap_rows_direct(np.arange(P.n))), atol=1e-9)


# ---------------------------------------------------------------------------
# Two-swap
# ---------------------------------------------------------------------------
def _improving_swap_exists(Z, labels, tol=1e-7):
    base = naive_sse(Z, labels)
    for i, j in itertools.combinations(range(len(labels)), 2):
        if labels[i] != labels[j]:
            after = labels.copy()
            after[i], after[j] = labels[j], labels[i]
            if naive_sse(Z, after) < base - tol:
                return True
    return False


def _improving_migration_exists(Z, labels, k, tol=1e-7):
    base = naive_sse(Z, labels)
    sizes = np.bincount(labels)
    for i in range(len(labels)):
        for h in range(sizes.size):
            if h != labels[i] and sizes[labels[i]] > k and sizes[h] < 2 * k - 1:
                if naive_sse(Z, _moved(labels, i, h)) < base - tol:
                    return True
    return False


@pytest.mark.parametrize("n,k,seed", [(6, 2, 0), (7, 2, 1), (8, 3, 2),
                                     pytest.param(9, 3, 3, marks=pytest.mark.slow)])
def test_two_swap_reaches_a_true_local_optimum_from_every_start(n, k, seed):
    """Every k-partition of a tiny set (blocks of k..2k-1) is a start; the two-swap result
    has no improving swap (brute force over all pairs), the same group sizes, and with
    one_opt no improving migration either."""
    Z = np.random.default_rng(seed).normal(size=(n, 2))
    starts = 0
    for part in k_partitions(n, k):
        labels = np.empty(n, dtype=np.int64)
        for g, block in enumerate(part):
            labels[list(block)] = g
        base = naive_sse(Z, labels)
        for one_opt in (False, True):
            P = Partition(Z, labels)
            moves, status = two_swap_search(P, k, one_opt=one_opt)
            assert status == "done"
            out = P.labels
            assert naive_sse(Z, out) <= base + 1e-12
            assert not _improving_swap_exists(Z, out)
            if one_opt:
                assert not _improving_migration_exists(Z, out, k)
                assert_k_partition(out, n, k, max_size=2 * k - 1)
            else:
                assert sorted(np.bincount(out)) == sorted(np.bincount(labels))
        starts += 1
    assert starts > 5


@given(instances(max_n=40))
def test_two_swap_never_worse_and_keeps_sizes(inst):
    Z, labels, k, rng = inst
    P = Partition(Z, labels)
    before = P.sse()
    two_swap_search(P, k, one_opt=True)
    assert P.sse() <= before + 1e-9
    assert P.sse() == pytest.approx(naive_sse(Z, P.labels), abs=1e-9)
    assert_k_partition(P.labels, len(labels), k, max_size=2 * k - 1)


def test_two_swap_is_the_best_improvement_sequence():
    """The incremental bookkeeping replays Fig. 1: each move is the best over all pairs."""
    rng = np.random.default_rng(5)
    Z = rng.normal(size=(45, 3))
    labels = _random_partition(rng, 45, 3)
    ref = Partition(Z, labels)
    fast = Partition(Z, labels)
    for step in range(1, 12):
        D = ref.swap_rows(np.arange(ref.n))
        best = D.min()
        if best >= -1e-9:
            break
        i, j = np.unravel_index(np.argmin(D), D.shape)
        ref.apply_swap(int(i), int(j))
        fast = Partition(Z, labels)
        two_swap_search(fast, 3, max_iterations=step)
        assert fast.sse() == pytest.approx(ref.sse(), abs=1e-9)


def test_two_swap_iteration_limit_and_time_limit_return_valid_partitions():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(80, 3))
    res = pysdcmicro.two_swap(X, "mdav", 3, max_iterations=2)
    assert res.status == "limit" and res.info["two_swap_moves"] == 2
    start = microaggregate(X, 3, method="mdav")
    assert res.sse < start.sse
    res = pysdcmicro.two_swap(X, "mdav", 3, time_limit=1e-6)
    assert_k_partition(res.labels, 80, 3)
    assert res.status == "limit"


def test_two_swap_public_function_with_labels_and_errors():
    X = np.array([[0.0], [1.0], [10.0], [11.0], [0.5], [10.5]])
    res = pysdcmicro.two_swap(X, ["a", "a", "a", "b", "b", "b"], 3)
    assert res.information_loss == pytest.approx(100 * naive_sse(zscore(X), res.labels) / naive_sse(
        zscore(X), np.zeros(6, int)))
    assert res.method == "given+two-swap"
    with pytest.raises(InvalidInputError, match="`labels` must hold one group label per record"):
        pysdcmicro.two_swap(X, [0, 0, 0, 1, 1], 3)
    with pytest.raises(InvalidInputError, match="groups of at least k=3 records; group 1 has 2"):
        pysdcmicro.two_swap(X, [0, 0, 0, 0, 1, 1], 3)
    with pytest.raises(InvalidTypeError, match="`one_opt` must be True or False"):
        microaggregate(X, 3, improve="two-swap", improve_options={"one_opt": "yes"})


@pytest.mark.parametrize("k,expected", [(5, 20.74), (10, 30.77)])
def test_two_swap_after_mdav_matches_castro_2022_table_1(casc, k, expected):
    """Paper 000, Table 1, Step 3 column: Tarragona, MDAV start (the Step-2 choice at
    k = 5 and 10), two-swap: IL 20.74 and 30.77 (two decimals published)."""
    res = microaggregate(casc("tarragona"), k, method="mdav", improve="two-swap")
    assert res.information_loss == pytest.approx(expected, abs=0.005)
    assert res.group_sizes.min() == k


# ---------------------------------------------------------------------------
# ICSM pieces
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(40))
def test_circular_runs_equal_best_rotation_of_the_linear_dp(seed):
    # The batched circular DP against the plain definition: the best linear DP over the
    # 2k-1 rotations of the sequence (each rotation solved on its own).
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 6))
    n = int(rng.integers(k, 70))
    Z = rng.normal(size=(n, 3))
    labels, cost = circular_runs(Z, k)
    ref = min(optimal_runs(np.roll(Z, -shift, axis=0), np.arange(n), k)[1] for shift in range(min(2 * k - 1, n)))
    assert cost == pytest.approx(ref, abs=1e-9)
    assert cost == pytest.approx(naive_sse(Z, labels), abs=1e-9)
    if n >= 2 * k:
        assert_k_partition(labels, n, k, max_size=2 * k - 1)
        # every group is a run of the cyclic order
        for g in np.unique(labels):
            pos = np.flatnonzero(labels == g)
            gaps = np.diff(np.concatenate([pos, [pos[0] + n]]))
            assert np.count_nonzero(gaps != 1) <= 1


@given(instances(max_n=40))
def test_tour_keeps_groups_contiguous_and_tour2assignment_never_worse(inst):
    Z, labels, k, rng = inst
    P = Partition(Z, labels)
    tour = partition_tour(P)
    assert sorted(tour.tolist()) == list(range(P.n))
    along = P.labels[tour]
    assert np.count_nonzero(along[1:] != along[:-1]) == P.g - 1
    new, cost = tour_to_assignment(P, k)
    assert cost <= P.sse() + 1e-9
    assert cost == pytest.approx(naive_sse(Z, new), abs=1e-9)
    assert_k_partition(new, P.n, k, max_size=2 * k - 1)


@given(instances(max_n=40), st.integers(1, 30))
def test_simple_heuristic_gain_is_exact(inst, pool):
    Z, labels, k, rng = inst
    P = Partition(Z, labels)
    before = P.sse()
    applied, gain = simple_heuristic(P, k, pool_size=pool)
    assert applied <= pool
    assert P.sse() == pytest.approx(before + gain, abs=1e-9)
    assert P.sse() == pytest.approx(naive_sse(Z, P.labels), abs=1e-9)
    assert gain <= 0
    assert_k_partition(P.labels, P.n, k, max_size=2 * k - 1)


def _direct_scores(P):
    """Eq. 7 summed edge by edge."""
    out = np.zeros(P.g)
    for i in range(P.n):
        for j in range(P.n):
            if P.labels[i] != P.labels[j]:
                out[P.labels[i]] += P.replace_delta(i, j) - P.replace_delta(j, i)
    return out


@given(instances(max_n=20))
def test_group_scores_closed_form_equals_edge_sums(inst):
    Z, labels, k, rng = inst
    P = Partition(Z, labels)
    np.testing.assert_allclose(group_scores(P), _direct_scores(P), atol=1e-8)


@given(instances(max_n=30))
def test_best_cycle_cost_is_the_true_sse_change(inst):
    Z, labels, k, rng = inst
    P = Partition(Z, labels)
    base = naive_sse(Z, P.labels)
    for s in range(P.g):
        found = _best_cycle(P, s, k, 2 * k - 1)
        if found is None:
            continue
        cost, records, groups = found
        after = P.labels.copy()
        after[records] = groups
        assert cost < 0
        assert naive_sse(Z, after) - base == pytest.approx(cost, abs=1e-9)
        assert_k_partition(after, P.n, k, max_size=2 * k - 1)
        # a valid cycle touches each group once
        touched = list(P.labels[records]) + []
        assert len(set(touched)) == len(touched)
    Q = Partition(Z, labels)
    moved, gain = complex_heuristic(Q, k, cycle_groups=P.g)
    assert Q.sse() == pytest.approx(base + gain, abs=1e-9) and gain <= 0


def test_complex_heuristic_finds_a_three_group_cycle():
    """Three tight clusters; each group holds one record of the next group's cluster. The
    clustered partition is one cyclic shift of three records away (no single swap or
    migration reaches it); the n-opt step finds that 3-cycle."""
    centers = np.array([[0.0, 0.0], [10.0, 0.0], [5.0, 8.0]])
    Z = np.repeat(centers, 3, axis=0) + np.random.default_rng(0).normal(0, 0.1, (9, 2))
    labels = np.array([0, 0, 1, 1, 1, 2, 2, 2, 0])
    P = Partition(Z, labels)
    before = P.sse()
    moved, gain = complex_heuristic(P, 3, cycle_groups=3)
    assert moved == 3
    assert P.sse() == pytest.approx(before + gain, abs=1e-9)
    np.testing.assert_array_equal(P.labels, [0, 0, 0, 1, 1, 1, 2, 2, 2])


@pytest.mark.parametrize("seed", range(6))
def test_icsm_search_never_worse_valid_and_not_worse_than_optimum(seed):
    from .._helpers import brute_force_optimum

    rng = np.random.default_rng(seed)
    n, k = 11, 3
    Z = rng.normal(size=(n, 2))
    labels = _random_partition(rng, n, k)
    opt, _ = brute_force_optimum(Z, k)
    P, rounds, status = icsm_search(Z, labels, k)
    assert status == "done"
    assert opt - 1e-9 <= P.sse() <= naive_sse(Z, labels) + 1e-9
    assert_k_partition(P.labels, n, k, max_size=2 * k - 1)


def test_perturb_keeps_sizes_and_changes_at_most_the_chosen_records():
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(60, 2))
    P = Partition(Z, _random_partition(rng, 60, 3))
    for scope in ("local", "global"):
        out = perturb(P, np.random.default_rng(1), 20, scope=scope)
        assert np.count_nonzero(out != P.labels) <= 20
        np.testing.assert_array_equal(np.bincount(out), P.sizes)


# ---------------------------------------------------------------------------
# ICSM through the API
# ---------------------------------------------------------------------------
def _blobs(n=150, d=3, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(0, 4, size=(12, d))
    return centers[rng.integers(12, size=n)] + rng.normal(size=(n, d))


def test_icsm_improves_mdav_and_restarts_improve_icsm():
    X = _blobs()
    base = microaggregate(X, 3, method="mdav")
    one = pysdcmicro.icsm(X, 3)
    assert one.status == "done" and one.information_loss < base.information_loss
    assert one.info["restarts"] == 0
    more = pysdcmicro.icsm(X, 3, max_restarts=40, rng=3)
    assert more.information_loss <= one.information_loss + 1e-12
    assert more.info["restarts"] == 40
    assert_k_partition(more.labels, X.shape[0], 3, max_size=5)
    full = pysdcmicro.icsm(X, 3, max_restarts=3, restart_scope="full", rng=3)
    assert full.information_loss <= one.information_loss + 1e-12


def test_icsm_restarts_are_deterministic_for_a_seed():
    X = _blobs(seed=4)
    a = pysdcmicro.icsm(X, 4, max_restarts=15, rng=11)
    b = pysdcmicro.icsm(X, 4, max_restarts=15, rng=11)
    np.testing.assert_array_equal(a.labels, b.labels)
    assert a.settings["options"]["max_restarts"] == 15


def test_icsm_time_limit_and_progress():
    X = _blobs(n=200, seed=1)
    events = []
    res = pysdcmicro.icsm(X, 3, max_restarts=None, time_limit=0.5, rng=0, progress=events.append)
    assert res.status == "limit"
    assert_k_partition(res.labels, 200, 3, max_size=5)
    # every event but the one-line notice of a first run's compiling (an editable install's
    # cold numba cache) carries the IL so far
    work = [e for e in events if e.stage != _compile.COMPILING]
    assert work and all(e.information_loss is not None for e in work)
    stages = {e.stage for e in work}
    assert "icsm" in stages
    ils = [e.information_loss for e in events if e.stage == "restarts"]
    assert ils == sorted(ils, reverse=True) or not ils
    # an expired deadline at entry still returns a valid partition (MDAV)
    res = pysdcmicro.icsm(X, 3, time_limit=1e-9)
    assert_k_partition(res.labels, 200, 3)
    assert res.status == "limit"


def test_icsm_improvement_after_any_method():
    X = _blobs(seed=2)
    start = microaggregate(X, 3, method="mdav")
    res = microaggregate(X, 3, method="mdav", improve="icsm", rng=0)
    assert res.sse < start.sse
    assert res.method == "mdav+icsm"
    chain = microaggregate(X, 3, method="mdav", improve=["two-swap", ("icsm", {"max_restarts": 5})], rng=0)
    assert chain.sse <= microaggregate(X, 3, method="mdav", improve="two-swap").sse + 1e-9


@pytest.mark.parametrize("options,match", [
    ({"pool_size": 0}, "`pool_size` must be an integer >= 1; got 0."),
    ({"perturbation": 1}, "`perturbation` must be an integer >= 2; got 1."),
    ({"restart_scope": "all"}, "`restart_scope` must be one of 'region', 'full'"),
    ({"max_restarts": None}, "`max_restarts` must be an integer when there is no time_limit"),
    ({"max_restarts": -1}, "`max_restarts` must be an integer >= 0; got -1."),
    ({"region_groups": 1}, "`region_groups` must be an integer >= 2; got 1."),
])
def test_icsm_option_errors(options, match):
    with pytest.raises(InvalidInputError, match=match.replace("(", r"\(").replace(")", r"\)")):
        microaggregate(_blobs(n=30), 3, method="icsm", **options)


@pytest.mark.slow
@pytest.mark.parametrize("k,published", [(3, 14.81), (5, 20.69)])
def test_icsm_single_run_reaches_table_2(casc, k, published):
    """Paper 003, Table 2 (ICSM from MDAV, one run): Tarragona IL 14.81 (k=3), 20.69 (k=5).
    We must be within +0.05 or lower."""
    res = microaggregate(casc("tarragona"), k, method="icsm")
    assert res.status == "done"
    assert res.information_loss <= published + 0.05
    assert res.group_sizes.min() >= k and res.group_sizes.max() <= 2 * k - 1


@pytest.mark.slow
@pytest.mark.parametrize("name,k,published", [
    ("tarragona", 10, 30.70), ("census", 3, 4.85), ("census", 5, 7.78), ("census", 10, 11.93),
    ("eia", 3, 0.36), ("eia", 5, 0.78), ("eia", 10, 2.24),
])
def test_icsm_single_run_reaches_table_2_slow(casc, name, k, published):
    """Paper 003, Table 2, the other cells (several seconds each)."""
    res = microaggregate(casc(name), k, method="icsm", variables=list(casc(name).columns))
    assert res.information_loss <= published + 0.05


# ---------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------
@pytest.mark.subprocess
def test_cli_improve_and_icsm(tmp_path):
    X = _blobs(n=40, d=2, seed=3)
    path = tmp_path / "in.csv"
    pd.DataFrame(X, columns=["a", "b"]).to_csv(path, index=False)
    rep = tmp_path / "rep.json"
    proc = subprocess.run([sys.executable, "-m", "pysdcmicro", "microaggregate", str(path), "--k", "3",
                           "--method", "mdav", "--improve", "two-swap", "--improve-option", "one_opt=true", "--report", str(rep),
                           "--output", str(tmp_path / "out.csv")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(rep.read_text())
    assert report["method"] == "mdav+two-swap"
    assert report["settings"]["improve"][0]["options"]["one_opt"] is True
    proc = subprocess.run([sys.executable, "-m", "pysdcmicro", "microaggregate", str(path), "--k", "3",
                           "--method", "icsm", "--option", "max_restarts=5", "--seed", "2", "--report", str(rep),
                           "--output", str(tmp_path / "out.csv")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(rep.read_text())
    assert report["method"] == "icsm" and report["restarts"] == 5
    assert report["settings"]["options"]["max_restarts"] == 5


# ---------------------------------------------------------------------------
# Neighbour-restricted kernels of ICSM
# ---------------------------------------------------------------------------
def _dense_improving_moves(P, k, tol):
    """Every improving exchange and migration, from the unexpanded formulas of the dense
    reference rows (swap_rows_direct, migrate_rows): {(a, b, kind): value}."""
    out = {}
    D = P.swap_rows_direct(np.arange(P.n))
    M = P.migrate_rows(np.arange(P.n), k, 2 * k - 1)
    for i, j in zip(*np.nonzero(D < -tol)):
        if i < j:
            out[(int(i), int(j), 0)] = float(D[i, j])
    for i, h in zip(*np.nonzero(M < -tol)):
        out[(int(i), int(h), 1)] = float(M[i, h])
    return out


@given(instances(max_n=30))
def test_pool_kernel_with_all_groups_equals_the_dense_rows(inst):
    Z, labels, k, rng = inst
    P = Partition(Z, labels)
    tol = 1e-9
    vals, a, b, kinds = pool_candidates(P, k, pool_size=10**6, tol=tol, neighbours=None)
    got = {(int(x), int(y), int(t)): float(v) for v, x, y, t in zip(vals, a, b, kinds)}
    want = _dense_improving_moves(P, k, tol)
    assert got.keys() == want.keys()
    for key, v in got.items():
        assert v == pytest.approx(want[key], abs=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_neighbour_pool_values_equal_recomputation(seed):
    """Enough groups (g > neighbours) that the lists restrict the moves: every move the
    kernel returns has the value of the direct formula and of a naive recomputation, and
    is among the dense reference's improving moves; the pool keeps the best ones."""
    rng = np.random.default_rng(seed)
    n, k = 240, 3
    Z = rng.normal(size=(n, 2))
    if seed % 2:
        Z[n // 2:] = Z[: n - n // 2]  # duplicates
    P = Partition(Z, _random_partition(rng, n, k))
    assert P.g > NEIGHBOURS + 1
    nb = neighbour_groups(P)
    assert nb.shape == (P.g, NEIGHBOURS)
    for h in range(P.g):
        row = nb[h][nb[h] >= 0]
        assert h not in row and len(set(row.tolist())) == row.size
        dist = ((P.cent[row] - P.cent[h]) ** 2).sum(axis=1)
        assert np.all(np.diff(dist) >= 0)
    tol = 1e-9
    want = _dense_improving_moves(P, k, tol)
    vals, a, b, kinds = pool_candidates(P, k, pool_size=10**6, tol=tol)
    assert 0 < vals.size <= len(want)
    base = naive_sse(Z, P.labels)
    for v, x, y, t in list(zip(vals, a, b, kinds))[:60]:
        x, y = int(x), int(y)
        assert (x, y, int(t)) in want
        if t == 0:
            assert v == pytest.approx(P.swap_delta(x, y), abs=1e-9)
            after = P.labels.copy()
            after[x], after[y] = P.labels[y], P.labels[x]
        else:
            assert v == pytest.approx(P.migrate_delta(x, y), abs=1e-9)
            after = _moved(P.labels, x, y)
        assert v == pytest.approx(naive_sse(Z, after) - base, abs=1e-9)
    top, _, _, _ = pool_candidates(P, k, pool_size=10, tol=tol)
    np.testing.assert_allclose(np.sort(top), np.sort(vals)[:10])


@given(instances(max_n=24))
def test_cycle_kernel_with_all_groups_equals_the_dense_search(inst):
    Z, labels, k, rng = inst
    P = Partition(Z, labels)
    for s in range(P.g):
        dense = _best_cycle_dense(P, s, k, 2 * k - 1)
        fast = _best_cycle(P, s, k, 2 * k - 1, neighbours=None)
        assert (dense is None) == (fast is None)
        if dense is not None:
            assert fast[0] == pytest.approx(dense[0], abs=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_neighbour_cycles_are_true_sse_changes(seed):
    rng = np.random.default_rng(seed)
    n, k = 210, 3
    Z = rng.normal(size=(n, 3))
    P = Partition(Z, _random_partition(rng, n, k))
    assert P.g > NEIGHBOURS + 1
    base = naive_sse(Z, P.labels)
    found_any = False
    for s in range(0, P.g, 5):
        found = _best_cycle(P, s, k, 2 * k - 1)
        if found is None:
            continue
        found_any = True
        cost, records, groups = found
        after = P.labels.copy()
        after[records] = groups
        assert cost < 0
        assert naive_sse(Z, after) - base == pytest.approx(cost, abs=1e-9)
        assert_k_partition(after, n, k, max_size=2 * k - 1)
        assert len(set(P.labels[records].tolist())) == len(records)
    assert found_any


@pytest.mark.parametrize("seed", range(3))
def test_icsm_search_on_many_groups_is_valid_with_independent_sse(seed):
    rng = np.random.default_rng(seed)
    n, k = 400, 3 + seed
    Z = rng.normal(size=(n, 3)) * [1.0, 3.0, 0.3]
    start = _random_partition(rng, n, k)
    work = {}
    P, rounds, status = icsm_search(Z, start, k, work=work)
    assert status == "done"
    assert_k_partition(P.labels, n, k, max_size=2 * k - 1)
    assert P.sse() == pytest.approx(naive_sse(Z, P.labels), rel=1e-9)
    assert P.sse() < naive_sse(Z, start)
    # a local optimum of the neighbour pool: no improving move left among the candidates
    vals, _, _, _ = pool_candidates(P, k, pool_size=10)
    assert vals.size == 0


def test_icsm_work_is_bounded_on_tie_heavy_data():
    """Many exact duplicates (40 distinct points, 3000 records): the pool's evaluations
    per round are bounded by groups x neighbours x (group size)^2 terms (no all-pairs
    scan), and the search ends after a bounded number of rounds."""
    rng = np.random.default_rng(0)
    points = rng.normal(size=(40, 3))
    Z = points[rng.integers(40, size=3000)]
    k = 3
    start = mdav_labels(Z, k)
    work = {}
    P, rounds, status = icsm_search(Z, start, k, work=work)
    assert status == "done"
    assert_k_partition(P.labels, Z.shape[0], k, max_size=2 * k - 1)
    assert P.sse() <= naive_sse(Z, start) + 1e-9
    g_max = Z.shape[0] // k
    s_max = 2 * k - 1
    per_pool = g_max * NEIGHBOURS * (s_max * s_max + 2 * s_max)
    assert work["evaluations"] <= work["pools"] * per_pool
    assert work["evaluations"] < work["pools"] * Z.shape[0] ** 2 / 20
    assert work["pools"] <= 60 and work["cycles"] <= 30
    assert work["tour_scans"] <= work["tours"] * Z.shape[0]
