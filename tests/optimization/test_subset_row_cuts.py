"""Subset-row cuts on triples in the column-generation master (beyond the LP):
pricing with cut penalties, separation, the Lagrangian bound with cut multipliers, and the
whole method against brute force on instances of at most 12 records (k = 2..4)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from pysdcmicro._context import Context
from pysdcmicro._partition import sse
from pysdcmicro.optimization._column_generation import solve_column_generation
from pysdcmicro.optimization._cuts import cut_bound, separate_triples
from pysdcmicro.optimization._anchored_pricing import CutRows, anchored_pricing
from pysdcmicro.optimization._lagrangian import neighbours

from .._helpers import brute_force_optimum, zscore


def _rc(Z, pi, cuts, C):
    G = Z[list(C)]
    return float(((G - G.mean(axis=0)) ** 2).sum()) - pi[list(C)].sum() + cuts.penalty(np.array(C))


def _random_cuts(rng, n, count):
    T = np.array([np.sort(rng.choice(n, 3, replace=False)) for _ in range(count)])
    return CutRows(n, T, rng.uniform(0.0, 1.5, count))


def test_penalty_is_floor_half_of_the_overlap():
    cuts = CutRows(6, np.array([[0, 1, 2], [1, 2, 3]]), np.array([1.0, 10.0]))
    assert cuts.penalty(np.array([0, 4, 5])) == 0.0
    assert cuts.penalty(np.array([0, 1, 4])) == 1.0
    assert cuts.penalty(np.array([0, 1, 2])) == 11.0  # floor(3/2) = 1 for the first, 2 of the second
    assert cuts.penalty(np.array([0, 1, 2, 3])) == 11.0


@pytest.mark.parametrize("seed", range(4))
def test_pricing_with_cuts_matches_enumeration_and_bounds_when_stopped(seed):
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(7, 11)), int(rng.choice([2, 3]))
    Z = rng.normal(size=(n, 2))
    _, nbr_dist = neighbours(Z, n)
    pi = rng.uniform(0.0, 2.0, n)
    cuts = _random_cuts(rng, n, 6)
    for s in range(k, 2 * k):
        exact = min(_rc(Z, pi, cuts, C) for C in itertools.combinations(range(n), s))
        res = anchored_pricing(Z, nbr_dist, pi, k, s, cuts=cuts)
        assert res["proven"]
        assert res["bound"] <= exact + 1e-9
        if exact < -1e-9:
            assert res["bound"] == pytest.approx(exact, abs=1e-7)
            rows, rc = res["columns"][0]
            assert rc == pytest.approx(_rc(Z, pi, cuts, rows), abs=1e-9)
            assert rc == pytest.approx(exact, abs=1e-7)
        # Per anchor, stopped after a few nodes: still a bound.
        for limit in (1, 2, 5):
            stopped = anchored_pricing(Z, nbr_dist, pi, k, s, cuts=cuts, node_limit=limit)
            for i in range(n):
                groups = [C for C in itertools.combinations(range(i, n), s) if C[0] == i]
                if groups:
                    assert stopped["anchor_values"][i] <= min(_rc(Z, pi, cuts, C) for C in groups) + 1e-9


def test_separation_finds_the_fractional_triangle():
    members = [np.array([0, 1]), np.array([0, 2]), np.array([1, 2]), np.array([3, 4])]
    x = np.array([0.5, 0.5, 0.5, 1.0])
    out = separate_triples(members, x)
    assert [t for _v, t in out] == [(0, 1, 2)]
    assert out[0][0] == pytest.approx(1.5)
    assert separate_triples(members, x, existing={(0, 1, 2)}) == []


@pytest.mark.parametrize("seed", range(6))
def test_cut_lagrangian_is_below_the_optimum_for_any_multipliers(seed):
    rng = np.random.default_rng(10 + seed)
    n, k = int(rng.integers(6, 10)), int(rng.choice([2, 3]))
    Z = zscore(rng.normal(size=(n, 2)))
    opt, _ = brute_force_optimum(Z, k)
    pi = rng.uniform(-0.5, 1.5, n) * opt / n * 2
    cuts = _random_cuts(rng, n, 5)
    sigma = -cuts.weights
    anchor_vals, size_bounds = {}, {}
    for s in range(k, min(2 * k - 1, n) + 1):
        v = np.full(n, np.inf)
        for C in itertools.combinations(range(n), s):
            v[C[0]] = min(v[C[0]], _rc(Z, pi, cuts, C))
        anchor_vals[s] = np.minimum(v, 0.0)
        size_bounds[s] = float(np.min(v[np.isfinite(v)]))
    assert cut_bound(pi, sigma, anchor_vals, size_bounds, k) <= opt + 1e-9


@pytest.mark.parametrize("seed", [4, 6, 9, 10, 22])
def test_cuts_raise_the_bound_above_the_lp_and_stay_below_the_optimum(seed):
    """Instances where the plain LP is fractional (LP value below the optimum): every bound
    the cut rounds prove is below the brute-force optimum, the last is above the LP value,
    and the run returns the optimum."""
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(8, 13)), int(rng.choice([2, 3, 4]))
    Z = zscore(rng.normal(size=(n, int(rng.integers(1, 4)))))
    opt, _ = brute_force_optimum(Z, k)
    seen = []
    sol = solve_column_generation(Z, k, Context(0), cut_rounds=10, pricing_deterministic_time=5.0)
    c = sol.info["subset_row_cuts"]
    assert sol.info["lp_value"] < opt - 1e-6  # the plain LP is fractional here
    assert c["bound"] <= opt + 1e-9
    assert c["bound"] > sol.info["lp_value"] + 1e-7
    for ncuts, value, bound, proven, _added, _secs in c["rounds"]:
        seen.append(bound)
        assert proven and bound <= opt + 1e-9 and value <= opt + 1e-9
    assert seen == sorted(seen)
    assert sol.lower_bound <= opt + 1e-9
    assert sse(Z, sol.labels) == pytest.approx(opt, rel=1e-9, abs=1e-12)
    assert math.isfinite(c["bound_after"]) and c["bound_after"] >= c["bound_before"]


@pytest.mark.parametrize("option, value", [("cut_rounds", -1), ("cuts_per_round", 0)])
def test_bad_cut_options(option, value):
    import pysdcmicro

    with pytest.raises((pysdcmicro.InvalidInputError, pysdcmicro.InvalidTypeError), match=option):
        pysdcmicro.column_generation(np.random.default_rng(0).normal(size=(12, 2)), 3, **{option: value})


def test_cut_rounds_stop_cleanly_when_the_compiled_pricing_is_unavailable(monkeypatch):
    """A short time limit may leave no time to load the compiled search with penalties: the
    cut rounds stop with the bound proven so far and say why, instead of failing."""
    from pysdcmicro.optimization import _cuts

    monkeypatch.setattr(_cuts, "_bb_kernel", lambda **kw: None)
    rng = np.random.default_rng(4)
    n, k = int(rng.integers(8, 13)), int(rng.choice([2, 3, 4]))
    Z = zscore(rng.normal(size=(n, int(rng.integers(1, 4)))))
    opt, _ = brute_force_optimum(Z, k)
    sol = solve_column_generation(Z, k, Context(0), cut_rounds=10, pricing_deterministic_time=5.0)
    c = sol.info["subset_row_cuts"]
    assert c["stopped"] and "subset-row cuts stopped" in sol.message
    assert sol.lower_bound <= opt + 1e-9
    assert sse(Z, sol.labels) == pytest.approx(opt, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_enumeration_with_cuts_pools_every_group_within_the_slack(seed):
    """The optimality proof's enumeration at the duals of a master with cuts: every group
    whose reduced cost with the penalties is <= the slack is pooled (brute force), and none
    above it."""
    import time

    from pysdcmicro.optimization._column_generation import _Phases, _enumerate_with_cuts
    from pysdcmicro.optimization._master import ColumnPool

    rng = np.random.default_rng(40 + seed)
    n, k = int(rng.integers(8, 11)), int(rng.choice([2, 3]))
    Z = rng.normal(size=(n, 2))
    _, nbr_dist = neighbours(Z, n)
    pi = rng.uniform(0.0, 2.0, n)
    cuts = _random_cuts(rng, n, 6)
    slack = 0.8
    pool = ColumnPool(n)
    complete, added = _enumerate_with_cuts(Z, nbr_dist, k, pool, (pi, -cuts.weights, cuts.triples, 0.0), slack,
                                           _Phases(time.monotonic()), Context(0).deadline, 300_000, 200_000)
    want = {C for s in range(k, 2 * k) for C in itertools.combinations(range(n), s)
            if _rc(Z, pi, cuts, C) <= slack}
    got = {tuple(int(r) for r in np.sort(rows)) for rows in pool.members}
    assert complete and added == len(got)
    assert got == want


@pytest.mark.parametrize("seed", [2, 34, 38])
def test_the_master_with_cuts_proves_the_optimum(seed):
    """Instances (found by a scan of seeds 0-39) where the bound with cuts is within 2 % of
    the incumbent but below it: the groups within the slack at the cut master's duals, then
    the MIP over them, prove the brute-force optimum (``enumerate_limit=0`` keeps the run
    off the small-instance path that enumerates every group)."""
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(9, 13)), int(rng.choice([2, 3]))
    Z = zscore(rng.normal(size=(n, int(rng.integers(1, 4)))))
    opt, _ = brute_force_optimum(Z, k)
    sol = solve_column_generation(Z, k, Context(0), cut_rounds=1, pricing_deterministic_time=5.0,
                                  enumerate_limit=0)
    assert sol.info["subset_row_cuts"]["bound"] < opt - 1e-9
    assert sol.info["enumeration_duals"] == "master with subset-row cuts"
    assert sol.info["enumeration_complete"] and sol.info["optimal"]
    assert sol.lower_bound <= opt + 1e-9
    assert sol.lower_bound == pytest.approx(opt, rel=1e-6)  # the MIP bound less its tolerance
    assert sse(Z, sol.labels) == pytest.approx(opt, rel=1e-9, abs=1e-12)
