"""Column generation and its lower bounds, checked against brute force (n <= 12).

Every bound reported anywhere (progress events, the result, each pricing routine) must be
<= the exact optimum computed by :func:`tests._helpers.brute_force_optimum`.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import pysdcmicro
from pysdcmicro import InvalidInputError, column_generation, decomposition
from pysdcmicro._context import Context
from pysdcmicro.optimization._column_generation import solve_column_generation
from pysdcmicro.optimization._column_generation import _centre_search
from pysdcmicro.optimization._anchored_pricing import anchored_pricing
from pysdcmicro.optimization._exact_pricing import exact_pricing
from pysdcmicro.optimization._heuristic_pricing import heuristic_pricing
from pysdcmicro.optimization._lagrangian import (
    anchor_lagrangian_bound,
    anchor_relaxation,
    lagrangian_bound,
    neighbours,
    nn_dual,
    record_bounds,
)

from .._helpers import assert_k_partition, brute_force_optimum, naive_sse, zscore

DET = {"pricing_deterministic_time": 5.0}


def _instance(seed, n=None, k=None):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(6, 13)) if n is None else n
    k = int(rng.choice([2, 3, 4])) if k is None else k
    X = rng.normal(size=(n, int(rng.integers(1, 4)))) * rng.uniform(0.5, 5)
    if seed % 3 == 0:  # some ties and duplicates
        X[: n // 3] = np.round(X[: n // 3])
        X[-1] = X[0]
    return X, k


def _min_rc_by_size(Z, pi, k):
    """Exact minimum reduced cost of each size by enumeration (naive)."""
    n = Z.shape[0]
    out = {}
    for s in range(k, min(2 * k - 1, n) + 1):
        best = math.inf
        for C in itertools.combinations(range(n), s):
            G = Z[list(C)]
            best = min(best, float(((G - G.mean(axis=0)) ** 2).sum()) - pi[list(C)].sum())
        out[s] = best
    return out


@pytest.mark.parametrize("seed", range(24))
def test_integer_solution_is_the_brute_force_optimum_and_bounds_are_below(seed):
    X, k = _instance(seed)
    n = X.shape[0]
    res = column_generation(X, k, rng=seed, keep_history=True, **DET)
    Z = zscore(X)
    opt, _ = brute_force_optimum(Z, k)
    assert_k_partition(res.labels, n, k)
    assert res.sse == pytest.approx(opt, rel=1e-9, abs=1e-12)
    sst = res.sst
    assert res.lower_bound is not None
    assert res.lower_bound * sst / 100 <= opt + 1e-9
    # Every intermediate Lagrangian bound and the LP value are below the optimum too.
    for event in res.history:
        if event.lower_bound is not None:
            assert event.lower_bound * sst / 100 <= opt + 1e-9
    if n >= 2 * k:
        assert res.info["converged"]
        assert res.info["lp_value"] <= opt + 1e-9
        assert res.info.get("optimal") is True
        assert res.gap == pytest.approx(0.0, abs=1e-4)  # percent


@pytest.mark.parametrize("seed", range(12))
def test_bound_after_few_iterations_is_valid(seed):
    """Stopped early (1-3 iterations, no integer step), the bound is still valid."""
    X, k = _instance(100 + seed)
    Z = zscore(X)
    opt, _ = brute_force_optimum(Z, k)
    for iters in (1, 2, 3):
        sol = solve_column_generation(Z, k, Context(0), max_iterations=iters, mip=False, **DET)
        if sol.lower_bound is not None:
            assert sol.lower_bound <= opt + 1e-9
        assert sol.status in ("done", "limit")


@pytest.mark.parametrize("seed", range(15))
def test_lagrangian_bound_for_any_duals(seed):
    """LB(pi) = sum(pi) + min{sum r_s n_s} <= optimum for arbitrary pi, with exact r_s or
    with the cheap per-record, anchored and CP-SAT bounds in place of r_s."""
    X, k = _instance(200 + seed)
    Z = zscore(X)
    n = Z.shape[0]
    opt, _ = brute_force_optimum(Z, k)
    rng = np.random.default_rng(seed)
    pi = rng.normal(scale=1.0, size=n) + opt / n
    exact = _min_rc_by_size(Z, pi, k)
    assert lagrangian_bound(pi, exact, n) <= opt + 1e-9
    # The DP is never weaker than floor(n/k) * min r_s.
    r = min(exact.values())
    assert lagrangian_bound(pi, exact, n) >= pi.sum() + (n // k) * min(0.0, r) - 1e-9
    _, dist = neighbours(Z, n)
    _, rec = record_bounds(dist, pi, k)
    for s, value in exact.items():
        assert rec[s] <= value + 1e-9
        anc = anchored_pricing(Z, dist, pi, k, s, deterministic_time=5.0)
        assert anc["bound"] <= value + 1e-9
        if anc["proven"]:  # then it is exact up to the sign clip
            assert anc["bound"] >= min(0.0, value) - 1e-7
        for rows, rc in anc["columns"]:
            assert rows.size == s
            assert rc == pytest.approx(naive_sse(Z[rows], np.zeros(s, dtype=int)) - pi[rows].sum())
        glob = exact_pricing(Z, dist, pi, k, s, time_limit=None, deterministic_time=5.0, workers=1,
                             seed=0, max_records=100)
        assert glob["bound"] <= value + 1e-9
        if glob["proven"]:
            assert glob["bound"] >= min(0.0, value) - 1e-6


def _min_rc_by_anchor(Z, pi, k, s):
    """Exact minimum reduced cost of the size-s groups whose lowest-index member is i."""
    n = Z.shape[0]
    out = np.full(n, np.inf)
    for C in itertools.combinations(range(n), s):
        G = Z[list(C)]
        rc = float(((G - G.mean(axis=0)) ** 2).sum()) - pi[list(C)].sum()
        out[C[0]] = min(out[C[0]], rc)
    return out


@pytest.mark.parametrize("seed", range(15))
def test_nn_dual_prices_no_group_negative(seed):
    """u_i = min_s a_i(s)/(2s) is dual feasible: SSE(C) >= u(C) for EVERY group of k..2k-1
    records (enumerated), so sum(u) <= the brute-force optimum."""
    X, k = _instance(300 + seed)
    Z = zscore(X)
    n = Z.shape[0]
    _, dist = neighbours(Z, n)
    u = nn_dual(dist, k)
    assert np.all(u >= 0)
    for s in range(k, min(2 * k - 1, n) + 1):
        assert _min_rc_by_anchor(Z, u, k, s)[: n - s + 1].min() >= -1e-9
    opt, _ = brute_force_optimum(Z, k)
    assert u.sum() <= opt + 1e-9


@pytest.mark.parametrize("seed", range(15))
def test_anchor_bounds_and_anchor_lagrangian_for_any_duals(seed):
    """Per-anchor values (relaxation, and anchored pricing's solved or CP-SAT values) never
    exceed the exact per-anchor minimum, and sum(pi) + the floor(n/k) most negative of them
    is <= the optimum for arbitrary duals."""
    X, k = _instance(400 + seed)
    Z = zscore(X)
    n = Z.shape[0]
    opt, _ = brute_force_optimum(Z, k)
    rng = np.random.default_rng(seed)
    _, dist = neighbours(Z, n)
    for scale in (0.3, 1.0, 3.0):
        pi = rng.normal(scale=scale, size=n) + opt / n
        relax, exact_vals, priced = {}, {}, {}
        for s in range(k, min(2 * k - 1, n) + 1):
            exact_s = _min_rc_by_anchor(Z, pi, k, s)
            relax[s] = anchor_relaxation(Z, dist, pi, s)[0]
            priced[s] = anchored_pricing(Z, dist, pi, k, s, deterministic_time=5.0)["anchor_values"]
            exact_vals[s] = exact_s
            finite = np.isfinite(exact_s)
            # Anchors too large for CP-SAT keep their relaxation bound: still valid.
            small = anchored_pricing(Z, dist, pi, k, s, deterministic_time=5.0, enumerate_limit=0,
                                     max_records=1)
            assert np.all(np.minimum(small["anchor_values"][finite], 0.0)
                          <= np.minimum(exact_s[finite], 0.0) + 1e-9)
            assert small["cpsat_calls"] == 0
            assert np.all(relax[s][finite] <= exact_s[finite] + 1e-9)
            assert np.all(np.minimum(priced[s][finite], 0.0) <= np.minimum(exact_s[finite], 0.0) + 1e-9)
            assert np.all(np.isinf(relax[s][~finite]))  # no group anchored there
        for vals in (exact_vals, relax, priced):
            assert anchor_lagrangian_bound(pi, vals, k) <= opt + 1e-9


@pytest.mark.parametrize("seed", range(8))
def test_bound_search_is_valid_for_any_duals(seed):
    X, k = _instance(500 + seed)
    Z = zscore(X)
    n = Z.shape[0]
    opt, _ = brute_force_optimum(Z, k)
    _, dist = neighbours(Z, n)
    u = nn_dual(dist, k)
    pi = np.random.default_rng(seed).normal(scale=1.0, size=n) + opt / n
    from pysdcmicro._context import Deadline

    bound, columns, steps = _centre_search(Z, dist, k, u, pi, deadline=Deadline(None), anchor_time=1.0,
                                           deterministic_time=5.0, workers=1, seed=0, max_steps=6)
    assert u.sum() - 1e-6 <= bound <= opt + 1e-9
    assert 1 <= len(steps) <= 6
    for rows, rc in columns:
        assert k <= rows.size <= 2 * k - 1


def test_unfinished_exact_pricing_still_gives_a_positive_bound():
    """Stopped before exact pricing converges (k = 5, 90 records in 3 tight clusters of
    different spread), the bound is the best of the neighbour bound and the bound search:
    positive and <= the best partition found. Without them (earlier code) the bound at the
    master's duals was negative and reported as 0."""
    rng = np.random.default_rng(3)
    X = np.concatenate([rng.normal(c, w, size=(30, 3)) for c, w in ((0, 0.5), (4, 1.0), (9, 2.0))])
    Z = zscore(X)
    # Deterministic budgets, no clock (a time limit of 8 s made this fail twice at load ~25:
    # the bound search got no time): two iterations, two search steps, exact pricing by
    # node budgets (pricing_deterministic_time), no time limit (so no ICSM restarts).
    sol = solve_column_generation(Z, 5, Context(0), max_iterations=2, mip=False, bound_steps=2,
                                  pricing_deterministic_time=1.0)
    nn = sol.info["nn_bound"]
    assert 0 < nn <= sol.lower_bound
    assert sol.lower_bound <= naive_sse(Z, sol.labels) + 1e-9
    assert 1 <= len(sol.info["bound_search"]) <= 2, "the bound search ran"


@pytest.mark.parametrize("scale_target", [50.0, 1e3, 1e8])
def test_integer_scaling_rounds_in_the_safe_direction(scale_target):
    """With coarse integer scaling, CP-SAT's bound (and the anchored CP-SAT path) stays <=
    the true minimum reduced cost."""
    X, k = _instance(7, n=11, k=3)
    Z = zscore(X)
    n = Z.shape[0]
    rng = np.random.default_rng(3)
    pi = rng.uniform(0.0, 2.0, size=n)
    exact = _min_rc_by_size(Z, pi, k)
    _, dist = neighbours(Z, n)
    for s, value in exact.items():
        glob = exact_pricing(Z, dist, pi, k, s, time_limit=None, deterministic_time=5.0, workers=1,
                             seed=0, max_records=100, scale_target=scale_target)
        assert glob["bound"] <= value + 1e-12
        anc = anchored_pricing(Z, dist, pi, k, s, deterministic_time=5.0, enumerate_limit=0,
                               scale_target=scale_target)
        assert anc["cpsat_calls"] >= 0
        assert anc["bound"] <= value + 1e-12


def test_heuristic_columns_have_the_reduced_cost_they_claim():
    X, k = _instance(11, n=12, k=3)
    Z = zscore(X)
    pi = np.full(12, 1.0)
    idx, _ = neighbours(Z, 8)
    cols = heuristic_pricing(Z, idx, pi, k)
    assert cols
    for rows, rc in cols:
        assert k <= rows.size <= 2 * k - 1
        assert rc < 0
        assert rc == pytest.approx(naive_sse(Z[rows], np.zeros(rows.size, dtype=int)) - pi[rows].sum())


def test_neighbours_match_a_full_sort():
    Z = zscore(np.random.default_rng(0).normal(size=(50, 3)))
    idx, dist = neighbours(Z, 7)
    D = ((Z[:, None] - Z[None]) ** 2).sum(-1)
    for i in range(50):
        assert idx[i, 0] == i
        np.testing.assert_allclose(dist[i], np.sort(D[i])[:7], atol=1e-12)


@pytest.mark.parametrize("lp_solver", ["highs", "glop"])
@pytest.mark.parametrize("mip_solver", ["highs", "cpsat"])
def test_lp_and_mip_engines_agree(lp_solver, mip_solver):
    X, k = _instance(5, n=12, k=3)
    ref = column_generation(X, k, rng=0, **DET)
    res = column_generation(X, k, rng=0, lp_solver=lp_solver, mip_solver=mip_solver,
                            mip_deterministic_time=5.0, **DET)
    assert res.info["lp_value"] == pytest.approx(ref.info["lp_value"], rel=1e-7)
    assert res.sse == pytest.approx(ref.sse, rel=1e-9)


def test_casc_subset_gap_is_small(casc):
    """60 Tarragona records at k=3: converged LP bound, integer solution within 1 %."""
    df = casc("tarragona")
    rows = np.sort(np.random.default_rng(1).choice(len(df), 60, replace=False))
    res = column_generation(df.iloc[rows], 3, rng=0, **DET)
    assert res.info["converged"]
    assert res.lower_bound <= res.information_loss + 1e-9
    assert res.gap <= 1.0  # percent
    mdav_il = pysdcmicro.mdav(df.iloc[rows], 3).information_loss
    assert res.information_loss <= mdav_il


def test_time_limit_keeps_a_valid_incumbent_and_bound():
    X = np.random.default_rng(4).normal(size=(80, 3))
    res = column_generation(X, 3, rng=0, time_limit=0.3)
    assert_k_partition(res.labels, 80, 3)
    assert res.status in ("done", "limit")
    assert res.information_loss <= pysdcmicro.mdav(X, 3).information_loss + 1e-9
    if res.lower_bound is not None:
        assert res.lower_bound <= res.information_loss + 1e-9


@pytest.mark.parametrize("option,value,message", [
    ("lp_solver", "cplex", "`lp_solver` must be one of 'highs', 'glop'; got 'cplex'."),
    ("max_columns", 5, "`max_columns` must be an integer >= 100; got 5."),
    ("pricing_time", 0, "`pricing_time` must be > 0; got 0."),
    ("exact_model", "full", "`exact_model` must be one of 'anchored', 'global'; got 'full'."),
])
def test_bad_options(option, value, message):
    with pytest.raises(InvalidInputError, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        column_generation(np.random.default_rng(0).normal(size=(10, 2)), 2, **{option: value})


@pytest.mark.subprocess
def test_decomposition_never_worse_than_its_start_and_independent_of_processes():
    X = np.random.default_rng(9).normal(size=(90, 3))
    a = decomposition(X, 3, s=3, n_jobs=1, rng=5, **DET)
    b = decomposition(X, 3, s=3, n_jobs=2, rng=5, **DET)
    np.testing.assert_array_equal(a.labels, b.labels)
    assert_k_partition(a.labels, 90, 3)
    assert a.info["subsets"] == 3
    assert a.sse <= a.info["step2_sse"] + 1e-9
    assert a.sse == pytest.approx(naive_sse(zscore(X), a.labels), rel=1e-9)
    assert a.lower_bound is None


def test_split_along_groups_keeps_groups_whole():
    from pysdcmicro.optimization._decomposition import split_along_groups

    Z = zscore(np.random.default_rng(2).normal(size=(100, 2)))
    labels = pysdcmicro.constructive.mdav_labels(Z, 4)
    for order in ("path", "sequential"):
        subsets = split_along_groups(Z, labels, 4, order)
        assert 1 <= len(subsets) <= 4
        assert sorted(np.concatenate(subsets).tolist()) == list(range(100))
        for rows in subsets:
            inside = set(rows.tolist())
            for g in np.unique(labels[rows]):
                assert set(np.flatnonzero(labels == g).tolist()) <= inside


def test_cli_report_shows_the_lower_bound():
    X, k = _instance(2, n=12, k=3)
    res = column_generation(X, k, rng=0, **DET)
    assert "lower bound" in res.summary()
    assert res.to_dict()["lower_bound"] == res.lower_bound


@pytest.mark.parametrize("local_search", ["icsm", "none"])
def test_decomposition_local_search_choices(local_search):
    X = np.random.default_rng(4).normal(size=(60, 3))
    res = decomposition(X, 3, s=2, n_jobs=1, rng=1, local_search=local_search, **DET)
    assert_k_partition(res.labels, 60, 3)
    assert res.info["local_search"] == local_search
    assert res.sse == pytest.approx(naive_sse(zscore(X), res.labels), rel=1e-9)
    # never worse than the best of MDAV and V-MDAV (step 2), and step 7 never worse than step 5
    assert res.sse <= res.info["step2_sse"] + 1e-9
    assert res.info["step7_sse"] <= res.info["step5_sse"] + 1e-9


def test_decomposition_icsm_restarts_without_time_limit_falls_back_to_one_run():
    X = np.random.default_rng(5).normal(size=(45, 2))
    res = decomposition(X, 3, s=2, n_jobs=1, rng=0, local_search="icsm-restarts", **DET)
    assert_k_partition(res.labels, 45, 3)
    assert "ICSM ran without restarts" in res.message


@pytest.mark.parametrize("option, value, message", [
    ("local_search", "tabu", "`local_search` must be one of 'two-swap', 'icsm', 'icsm-restarts', 'none'; got 'tabu'."),
    ("n_jobs", -2, "`n_jobs` must be None, -1 or an integer >= 0; got -2."),
])
def test_decomposition_bad_options(option, value, message):
    with pytest.raises(InvalidInputError) as err:
        decomposition(np.random.default_rng(0).normal(size=(12, 2)), 3, **{option: value})
    assert message in str(err.value)


def test_column_generation_bad_stall_share():
    with pytest.raises(InvalidInputError) as err:
        column_generation(np.random.default_rng(0).normal(size=(10, 2)), 2, stall_share=2)
    assert "`stall_share`" in str(err.value) and "got 2" in str(err.value)


def test_column_generation_never_worse_than_mdav_two_swap_seed():
    # The pool is seeded with two-swap from the best heuristic seed, so even a run stopped
    # after one iteration returns at most that SSE.
    X = np.random.default_rng(21).normal(size=(80, 4))
    swap = pysdcmicro.microaggregate(X, 4, method="mdav", improve="two-swap")
    res = column_generation(X, 4, rng=0, max_iterations=1, mip=False)
    assert_k_partition(res.labels, 80, 4)
    assert res.sse <= swap.sse + 1e-9


def test_mip_over_a_capped_pool_keeps_the_incumbent():
    """mip_columns caps the MIP to the groups of least reduced cost plus the incumbent's:
    still a valid k-partition, never worse than its MDAV seed."""
    X = np.random.default_rng(8).normal(size=(60, 3))
    full = column_generation(X, 3, rng=0, max_iterations=3, **DET)
    capped = column_generation(X, 3, rng=0, max_iterations=3, mip_columns=10, **DET)
    assert_k_partition(capped.labels, 60, 3)
    assert capped.info["mip_columns_capped_from"] > capped.info["mip_columns"]
    assert capped.info["mip_columns"] <= 10 + 20  # the cap plus the incumbent's 20 groups
    assert "mip_columns_capped_from" not in full.info or full.info["mip_columns_capped_from"] > 20_000
    assert capped.sse <= pysdcmicro.microaggregate(X, 3, method="mdav").sse + 1e-9
    assert naive_sse(zscore(X), capped.labels) == pytest.approx(capped.sse, rel=1e-9)


@pytest.mark.parametrize("kind", ["glop", "highs"])
def test_master_lp_takes_a_time_limit(kind):
    from pysdcmicro.optimization._master import ColumnPool, group_cost, make_master

    Z = zscore(np.random.default_rng(2).normal(size=(9, 2)))
    pool = ColumnPool(9)
    for rows in ([0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8]):
        pool.add(np.array(rows), group_cost(Z, np.array(rows)))
    free = make_master(kind, pool).solve()
    limited = make_master(kind, pool).solve(time_limit=30.0)
    assert limited["status"] == free["status"] == "optimal"
    assert limited["objective"] == pytest.approx(free["objective"])


# --- branch-and-bound pricing, smoothing, bound sources, the integer side ---------------------


def _anchor_brute(D, pis, s):
    best = math.inf
    for rest in itertools.combinations(range(1, D.shape[0]), s - 1):
        C = (0,) + rest
        best = min(best, D[np.ix_(C, C)].sum() / (2 * s) - pis[list(C)].sum())
    return best


@pytest.mark.parametrize("seed", range(40))
def test_branch_and_bound_anchor_is_exact_and_a_bound_when_stopped(seed):
    from pysdcmicro.optimization._branch_and_bound import branch_and_bound_anchor
    from pysdcmicro.optimization._lagrangian import _sqdist

    rng = np.random.default_rng(seed)
    m = int(rng.integers(3, 12))
    s = int(rng.integers(2, min(m, 7) + 1))
    Z = rng.normal(size=(m, int(rng.integers(1, 4))))
    if seed % 3 == 0:
        Z = np.round(Z)  # ties
    D = _sqdist(Z, Z)
    pis = rng.normal(size=m) * rng.uniform(0.1, 5)
    want = min(0.0, _anchor_brute(D, pis, s))
    res = branch_and_bound_anchor(D, pis, s)
    assert res["complete"]
    assert res["value"] == pytest.approx(want, abs=1e-9)
    for pos, rc in res["columns"]:
        assert pos[0] == 0 and len(set(pos.tolist())) == s
        assert rc == pytest.approx(D[np.ix_(pos, pos)].sum() / (2 * s) - pis[pos].sum())
        assert rc < 0
    for limit in (1, 2, 5):  # stopped early: still a lower bound
        stopped = branch_and_bound_anchor(D, pis, s, node_limit=limit)
        assert stopped["value"] <= want + 1e-9


@pytest.mark.parametrize("seed", range(40))
def test_compiled_branch_and_bound_is_exact_and_a_bound_when_stopped(seed):
    pytest.importorskip("numba")
    from pysdcmicro.optimization._branch_and_bound import _bb_compiled, _bb_kernel, _bb_points
    from pysdcmicro.optimization._lagrangian import _sqdist

    rng = np.random.default_rng(seed)
    m = int(rng.integers(3, 12))
    s = int(rng.integers(2, min(m, 7) + 1))
    Z = rng.normal(size=(m, int(rng.integers(1, 4))))
    if seed % 3 == 0:
        Z = np.round(Z)  # ties
    D = _sqdist(Z, Z)
    pis = rng.normal(size=m) * rng.uniform(0.1, 5)
    want = min(0.0, _anchor_brute(D, pis, s))
    kernel = _bb_kernel()
    res = _bb_compiled(kernel, D, pis, s, node_limit=None, deadline=None, keep=3, rate=[1e5])
    assert res["complete"]
    assert res["value"] == pytest.approx(want, abs=1e-9)
    if want < -1e-9:
        assert res["columns"] and res["columns"][0][1] == pytest.approx(want, abs=1e-9)
    for pos, rc in res["columns"]:
        assert pos[0] == 0 and len(set(pos.tolist())) == s
        assert rc == pytest.approx(D[np.ix_(pos, pos)].sum() / (2 * s) - pis[pos].sum())
        assert rc < 0
    for limit in (1, 2, 3, 5, 8):  # stopped early: still a lower bound
        stopped = _bb_compiled(kernel, D, pis, s, node_limit=limit, deadline=None, keep=3, rate=[1e5])
        assert stopped["value"] <= want + 1e-9
        assert stopped["complete"] or stopped["nodes"] >= limit
    # The variant on points, with the weaker pair bounds from all records (here: the same
    # records) and candidates in any order.
    order = np.concatenate([[0], 1 + rng.permutation(m - 1)])
    Dn = D.copy()
    np.fill_diagonal(Dn, np.inf)
    A = np.zeros((m - 1, s))
    r = min(s - 1, m - 1)
    A[:, 1:r + 1] = np.cumsum(np.sort(Dn[order[1:]], axis=1)[:, :r], axis=1)[:, :s - 1]
    points = _bb_kernel(points=True)
    res = _bb_points(points, Z[order], pis[order], A, s, node_limit=None, deadline=None, keep=3, rate=[1e5])
    assert res["complete"] and res["value"] == pytest.approx(want, abs=1e-9)
    for pos, rc in res["columns"]:
        pos = order[pos]
        assert pos[0] == 0 and len(set(pos.tolist())) == s
        assert rc == pytest.approx(D[np.ix_(pos, pos)].sum() / (2 * s) - pis[pos].sum())
    for limit in (1, 2, 3, 5, 8):
        stopped = _bb_points(points, Z[order], pis[order], A, s, node_limit=limit, deadline=None, keep=3,
                             rate=[1e5])
        assert stopped["value"] <= want + 1e-9


@pytest.mark.parametrize("seed", range(15))
def test_shifted_anchor_bound_is_at_least_the_plain_one_and_below_the_optimum(seed):
    """The uniform-shift search (lam) only raises the anchor bound, and stays <= the optimum
    with the exact per-anchor minima and with their relaxations, for arbitrary duals."""
    X, k = _instance(900 + seed)
    Z = zscore(X)
    n = Z.shape[0]
    opt, _ = brute_force_optimum(Z, k)
    rng = np.random.default_rng(seed)
    _, dist = neighbours(Z, n)
    for scale in (0.3, 1.0, 3.0):
        pi = rng.normal(scale=scale, size=n) + opt / n * rng.uniform(0.2, 2.0)
        exact_vals = {s: _min_rc_by_anchor(Z, pi, k, s) for s in range(k, min(2 * k - 1, n) + 1)}
        relax = {s: anchor_relaxation(Z, dist, pi, s)[0] for s in exact_vals}
        for vals in (exact_vals, relax):
            plain = anchor_lagrangian_bound(pi, vals, k, shift=False)
            shifted = anchor_lagrangian_bound(pi, vals, k)
            assert plain - 1e-9 <= shifted <= opt + 1e-9


@pytest.mark.parametrize("seed", range(12))
def test_bb_and_cpsat_anchored_pricing_agree_with_brute_force(seed):
    X, k = _instance(700 + seed)
    Z = zscore(X)
    n = Z.shape[0]
    opt, _ = brute_force_optimum(Z, k)
    pi = np.random.default_rng(seed).normal(scale=1.0, size=n) + opt / n
    _, dist = neighbours(Z, n)
    exact = _min_rc_by_size(Z, pi, k)
    for s, value in exact.items():
        bb = anchored_pricing(Z, dist, pi, k, s, anchor_solver="bb")
        assert bb["proven"]
        assert min(0.0, value) - 1e-7 <= bb["bound"] <= value + 1e-9
        cp = anchored_pricing(Z, dist, pi, k, s, anchor_solver="cpsat", deterministic_time=5.0)
        assert cp["bound"] <= value + 1e-9


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("options", [{"smoothing": 0.5}, {"smoothing": 0.0},
                                     {"anchor_solver": "cpsat", "smoothing": 0.0}])
def test_stabilised_and_plain_column_generation_prove_the_optimum(seed, options):
    """Smoothed or not, B&B or CP-SAT pricing: every bound <= brute-force optimum, the LP
    converges and the integer answer is the optimum; the bound's source is named."""
    X, k = _instance(800 + seed)
    n = X.shape[0]
    res = column_generation(X, k, rng=seed, keep_history=True, **DET, **options)
    Z = zscore(X)
    opt, _ = brute_force_optimum(Z, k)
    assert_k_partition(res.labels, n, k)
    assert res.sse == pytest.approx(opt, rel=1e-9, abs=1e-12)
    assert res.lower_bound * res.sst / 100 <= opt + 1e-9
    for event in res.history:
        if event.lower_bound is not None:
            assert event.lower_bound * res.sst / 100 <= opt + 1e-9
    assert res.info["bound_source"]
    if n >= 2 * k:
        assert res.info["converged"]
        assert res.info["lp_value"] <= opt + 1e-9


@pytest.mark.parametrize("seed", range(8))
def test_every_bound_proven_at_a_smoothed_point_is_below_the_optimum(seed):
    """Each exact round at a smoothed point (alpha > 0: between the best-bound centre and the
    master's duals) proves a Lagrangian bound there (``info["priced_bounds"]``); every one
    of them is <= the brute-force optimum, and the smoothed loop (heuristic pricing at the
    smoothed point too) still converges to the LP value."""
    X, k = _instance(1100 + seed)
    n = X.shape[0]
    Z = zscore(X)
    opt, _ = brute_force_optimum(Z, k)
    for alpha in (0.5, 0.9):
        res = column_generation(X, k, rng=seed, mip=False, smoothing=alpha, **DET)
        smoothed = [b for a, b in res.info.get("priced_bounds", []) if a > 0]
        if n >= 2 * k:
            assert smoothed, "an exact round ran at a smoothed point"
            assert res.info["converged"]
            assert res.info["lp_value"] <= opt + 1e-9
        for bound in smoothed:
            assert bound <= opt + 1e-9
        assert res.lower_bound * res.sst / 100 <= opt + 1e-9


def test_stopped_smoothed_run_reports_a_valid_bound_and_its_source():
    X = np.random.default_rng(5).normal(size=(12, 2))
    Z = zscore(X)
    opt, _ = brute_force_optimum(Z, 3)
    for it in (1, 2, 3):
        res = column_generation(X, 3, rng=0, max_iterations=it, mip=False, smoothing=0.5, **DET)
        assert res.lower_bound * res.sst / 100 <= opt + 1e-9
        assert res.info["bound_source"] in {
            "neighbour", "Lagrangian (master duals)", "Lagrangian (smoothed duals)",
            "LP value (Lagrangian (master duals))", "LP value (Lagrangian (smoothed duals))"}


def test_seeds_include_icsm_and_the_answer_is_never_worse():
    X = np.random.default_rng(31).normal(size=(90, 4))
    res = column_generation(X, 5, rng=0, max_iterations=2, mip=False)
    assert "icsm" in res.info["seeds"]
    assert res.sse <= min(res.info["seeds"].values()) + 1e-9
    icsm = pysdcmicro.microaggregate(X, 5, method="icsm")
    assert res.sse <= icsm.sse + 1e-9


@pytest.mark.parametrize("option,value,message", [
    ("anchor_solver", "dfs", "anchor_solver"),
    ("smoothing", 1.5, "smoothing"),
    ("heuristic_share", -0.1, "heuristic_share"),
    ("ascent_share", 0.95, "ascent_share"),
    ("ascent_nodes", 0, "ascent_nodes"),
    ("ascent_share", 0.8, "bound_share` \\+ `ascent_share"),
])
def test_new_bad_options(option, value, message):
    with pytest.raises((InvalidInputError, pysdcmicro.InvalidTypeError), match=message):
        column_generation(np.random.default_rng(0).normal(size=(12, 2)), 3, **{option: value})


def _min_ratio_by_record(Z, pi, k):
    """Exact min over groups C containing i (k..2k-1 records) of rc(C)/|C|, by enumeration."""
    n = Z.shape[0]
    out = np.full(n, np.inf)
    for s in range(k, min(2 * k - 1, n) + 1):
        for C in itertools.combinations(range(n), s):
            G = Z[list(C)]
            r = (float(((G - G.mean(axis=0)) ** 2).sum()) - pi[list(C)].sum()) / s
            for i in C:
                out[i] = min(out[i], r)
    return out


@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("seed", range(6))
def test_record_lagrangian_from_truncated_pricing_is_valid_for_any_duals(seed, compiled):
    """The per-record Lagrangian sum(pi) + sum_i m_i is <= the brute-force optimum for random
    duals, whatever the node budget (1 node: open-node bounds only; large: exact), and with a
    large budget m_i is the exact minimum ratio."""
    from pysdcmicro.optimization._record_ascent import record_lagrangian, record_supergradient

    X, k = _instance(900 + seed)
    Z = zscore(X)
    n = Z.shape[0]
    opt, _ = brute_force_optimum(Z, k)
    _, dist = neighbours(Z, n)
    rng = np.random.default_rng(seed)
    for scale in (0.0, 0.3, 1.0, 3.0):
        pi = rng.normal(scale=scale, size=n) + opt / n
        exact = _min_ratio_by_record(Z, pi, k)
        for budget in (1, 3, 10**6):
            res = record_lagrangian(Z, dist, pi, k, node_limit=budget, compiled=compiled)
            assert np.all(res["m"] <= exact + 1e-9)
            assert np.all(res["ratio"] >= exact - 1e-9)  # real groups
            assert res["bound"] <= opt + 1e-9
            if budget == 10**6:
                assert res["complete"]
                np.testing.assert_allclose(res["m"], exact, atol=1e-9)
            g = record_supergradient(res["groups"], n)
            assert g.shape == (n,) and np.all(g <= 1.0)
        # Any warm start of the bisection and per-record budgets stay valid; two threads
        # give the serial result exactly.
        starts = rng.normal(scale=scale + 0.1, size=n)
        budgets = rng.integers(1, 6, size=n)
        one = record_lagrangian(Z, dist, pi, k, node_limit=budgets, starts=starts, compiled=compiled,
                                threads=1)
        assert np.all(one["m"] <= exact + 1e-9) and one["bound"] <= opt + 1e-9
        two = record_lagrangian(Z, dist, pi, k, node_limit=budgets, starts=starts, compiled=compiled,
                                threads=2)
        assert two["bound"] == one["bound"] and np.array_equal(two["m"], one["m"])
        assert np.array_equal(two["ratio"], one["ratio"]) and two["nodes"] == one["nodes"]


@pytest.mark.parametrize("seed", range(5))
def test_record_ascent_is_monotone_valid_and_its_duals_are_dual_feasible(seed):
    """Every step of the record ascent (from random, infeasible duals; node budgets 1 and
    unlimited) proves a bound <= the brute-force optimum, steps after the first never go
    down, and the duals returned price no group negative (brute force)."""
    from pysdcmicro.optimization._record_ascent import record_ascent

    X, k = _instance(950 + seed)
    Z = zscore(X)
    n = Z.shape[0]
    opt, _ = brute_force_optimum(Z, k)
    _, dist = neighbours(Z, n)
    pi = np.random.default_rng(seed).normal(scale=1.0, size=n) + opt / n
    for budget in (1, 10**6):
        res = record_ascent(Z, dist, pi, k, node_limit=budget, max_steps=6, min_gain=0.0)
        bounds = [b for b, _, _ in res["steps"]]
        assert res["bound"] == max(bounds) <= opt + 1e-9
        assert all(b2 >= b1 - 1e-9 for b1, b2 in zip(bounds[1:], bounds[2:]))
        assert min(_min_rc_by_size(Z, res["duals"], k).values()) >= -1e-9
        assert res["duals"].sum() <= opt + 1e-9


def test_engine_reports_the_record_ascent_bound_when_the_lp_is_not_solved():
    """A run stopped after one iteration (LP not converged) runs the record ascent; its bound,
    and the reported one, stay below the brute-force optimum, and the source is named."""
    X, k = _instance(977, n=12, k=3)
    Z = zscore(X)
    opt, _ = brute_force_optimum(Z, k)
    sol = solve_column_generation(Z, k, Context(0), max_iterations=1, mip=False,
                                  bound_steps=0, ascent_steps=5, exact=True, **DET)
    steps = sol.info["record_ascent"]
    assert 1 <= len(steps) <= 5
    assert max(b for b, _, _ in steps) <= opt + 1e-9
    assert sol.lower_bound <= opt + 1e-9
    assert sol.info["bound_source"] in ("Lagrangian (truncated pricing, record ascent)",
                                        "Lagrangian (master duals)", "neighbour")


class _CountingClock:
    """A deterministic clock: every read advances it by ``step`` (work measured in clock
    reads, never in wall time)."""

    def __init__(self, step=1.0):
        self.t, self.step, self.reads = 0.0, step, 0

    def __call__(self):
        self.reads += 1
        self.t += self.step
        return self.t


@pytest.mark.parametrize("seed", range(2))
def test_record_lagrangian_stops_at_its_deadline_and_stays_valid(seed):
    """Once the deadline has expired the records not reached get the O(n k) neighbour ratio
    in one pass (the clock is read once more, not once per record as before, when each of them
    still paid its own relaxation), and the bound stays below the brute-force optimum."""
    from pysdcmicro._context import Deadline
    from pysdcmicro.optimization._record_ascent import _neighbour_ratio, record_lagrangian

    X, k = _instance(1300 + seed, n=10)
    Z = zscore(X)
    n = Z.shape[0]
    opt, _ = brute_force_optimum(Z, k)
    _, dist = neighbours(Z, n)
    pi = np.random.default_rng(seed).normal(scale=0.5, size=n) + opt / n
    exact = _min_ratio_by_record(Z, pi, k)
    np.testing.assert_array_less(_neighbour_ratio(np.cumsum(dist, axis=1), pi, k, np.arange(n)), exact + 1e-9)
    clock = _CountingClock()
    deadline = Deadline(3.0, clock=clock)  # expired from the third read on
    res = record_lagrangian(Z, dist, pi, k, node_limit=10**6, deadline=deadline)
    assert clock.reads <= 5 and not res["complete"]
    assert np.all(res["m"] <= exact + 1e-9) and res["bound"] <= opt + 1e-9


def test_heuristic_pricing_skips_the_blocks_left_at_its_deadline():
    from pysdcmicro._context import Deadline

    Z = zscore(np.random.default_rng(5).normal(size=(150, 2)))
    idx, _ = neighbours(Z, 12)
    pi = np.full(150, 2.0)
    late = heuristic_pricing(Z, idx, pi, 3, deadline=Deadline(0.0))
    first = heuristic_pricing(Z, idx, pi, 3, seeds=np.arange(64))
    assert [r.tolist() for r, _ in late] == [r.tolist() for r, _ in first]
    assert len(heuristic_pricing(Z, idx, pi, 3)) > len(late)


def test_every_step_of_a_limited_run_gets_a_budget_ending_at_the_deadline(monkeypatch):
    """Spies on the steps of the engine: under a time limit each one (heuristic pricing, the
    record ascent, the MIP, the seeds' and the final ICSM) receives a deadline no later than
    the run's, and ``info["phases"]`` lists every phase with one (a deterministic clock)."""
    from pysdcmicro._context import Deadline
    from pysdcmicro.optimization import _column_generation as cg

    seen = []

    def spy(fn, name, key):
        def wrapped(*args, **kwargs):
            d = kwargs.get(key)
            seen.append((name, None if d is None else getattr(d, "deadline", d)))
            return fn(*args, **kwargs)
        return wrapped

    monkeypatch.setattr(cg, "heuristic_pricing", spy(cg.heuristic_pricing, "heuristic", "deadline"))
    monkeypatch.setattr(cg, "record_ascent", spy(cg.record_ascent, "ascent", "deadline"))
    clock = _CountingClock(0.01)
    root = Deadline(3.0, clock=clock)
    X, k = _instance(1400, n=40, k=3)
    sol = solve_column_generation(zscore(X), k, Context(0, _deadline=root), max_iterations=3,
                                  ascent_switch=0.0, **DET)
    names = {name for name, _ in seen}
    assert "heuristic" in names
    for name, d in seen:
        assert d is not None and d._end <= root._end, name
    assert sol.info["phases"] and all(row[3] is not None for row in sol.info["phases"])


def test_registered_options_are_the_fields_of_the_options_dataclass():
    """The dataclass is the one list of options: the registry (hence the CLI's `--option` and
    `pysdcmicro methods`) reads its names, defaults and types, and each field has a doc."""
    import dataclasses

    from pysdcmicro._registry import get_method
    from pysdcmicro.optimization._column_generation import ColumnGenerationOptions

    spec = get_method("column-generation")
    fields = dataclasses.fields(ColumnGenerationOptions)
    assert list(spec.options) == [f.name for f in fields]
    assert {name: o.default for name, o in spec.options.items()} == {f.name: f.default for f in fields}
    assert spec.options["max_iterations"].annotation == "int | None"
    assert spec.options["max_iterations"].coerce("7", "column-generation") == 7
    assert spec.options["lp_solver"].annotation == "str"
    assert all(f.metadata["doc"] for f in fields)
    with pytest.raises(dataclasses.FrozenInstanceError):
        ColumnGenerationOptions().mip = False
    ColumnGenerationOptions().check()  # the defaults are valid
    with pytest.raises(InvalidInputError, match="cuts_per_round"):
        ColumnGenerationOptions(cuts_per_round=0).check()
