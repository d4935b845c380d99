"""Subset-row cuts on triples (Jepsen, Petersen, Spoorendonk and Pisinger 2008) for the
set-partitioning master of column generation: beyond the LP value.

For a triple ``T`` of records, every partition uses at most one group holding two or more of
them, so

    sum_C floor(|C cap T| / 2) x_C <= 1

is valid for every integer solution, and an LP solution with fractional groups may violate
it. The master with cuts is ``min w x, sum_{C ∋ i} x_C = 1, sum_C a_TC x_C <= 1, x >= 0``
(``a_TC = floor(|C cap T|/2)``), with duals ``pi`` (free) and ``sigma_T <= 0``; a group's
reduced cost is ``rc(C) = SSE(C) - pi(C) - sum_T sigma_T a_TC`` (the penalty
``-sum_T sigma_T a_TC`` is >= 0; priced by :func:`._anchored_pricing.anchored_pricing` with ``cuts``).

The bound (valid for ANY ``pi`` and ANY ``sigma <= 0``): for an integer partition ``x``,

    SSE(x) = sum_i pi_i + sum_T sigma_T (a_T x) + sum_C rc(C) x_C
          >= sum_i pi_i + sum_T sigma_T        + sum_C rc(C) x_C,

since ``a_T x <= 1`` and ``sigma_T <= 0``; the last sum is bounded from below by the anchor
argument of :func:`._lagrangian.anchor_lagrangian_bound` from per-anchor lower bounds on the
reduced costs with penalties. When exact pricing proves no group negative, the bound is the
master's LP value with the cuts.
"""

from __future__ import annotations

import math
import time
from itertools import combinations
from typing import TYPE_CHECKING

import numpy as np

from ._master import ColumnPool, group_cost
from ._anchored_pricing import CutRows, anchored_pricing
from ._branch_and_bound import _bb_kernel
from ._lagrangian import anchor_lagrangian_bound, lagrangian_bound

if TYPE_CHECKING:
    from scipy import sparse

__all__ = ["separate_triples", "CutMaster", "cut_phase"]


def separate_triples(members: list, x: np.ndarray, *, existing: set | None = None, max_cuts: int = 100,
                     per_record: int = 2, tol: float = 1e-6) -> list:
    """Violated subset-row cuts on triples at the LP solution ``x`` over the groups
    ``members`` (sorted row arrays): the most violated first, at most ``max_cuts``, each
    record in at most ``per_record`` of them. Only records in fractional groups can be in a
    violated triple (a record covered by a group at 1 leaves the others of a triple only
    groups without it); ``lhs(T) = w_ab + w_ac + w_bc - 2 w_abc`` from the pair and triple
    weights of the fractional groups. Returns ``[(lhs, (a, b, c)), ...]``."""
    existing = existing or set()
    pair: dict = {}
    triple: dict = {}
    nbr: dict = {}
    for c in np.flatnonzero((x > tol) & (x < 1.0 - tol)):
        rows = [int(r) for r in members[c]]
        v = float(x[c])
        for a, b in combinations(rows, 2):
            pair[(a, b)] = pair.get((a, b), 0.0) + v
            nbr.setdefault(a, set()).add(b)
            nbr.setdefault(b, set()).add(a)
        if len(rows) >= 3:
            for t in combinations(rows, 3):
                triple[t] = triple.get(t, 0.0) + v
    seen: dict = {}
    for i, near in nbr.items():
        for j, l in combinations(sorted(near), 2):
            t = tuple(sorted((i, j, l)))
            if t in seen or t in existing:
                continue
            a, b, c = t
            seen[t] = pair.get((a, b), 0.0) + pair.get((a, c), 0.0) + pair.get((b, c), 0.0) \
                - 2.0 * triple.get(t, 0.0)
    violated = sorted(((v, t) for t, v in seen.items() if v > 1.0 + tol), key=lambda item: (-item[0], item[1]))
    out, used = [], {}
    for v, t in violated:
        if len(out) >= max_cuts:
            break
        if any(used.get(r, 0) >= per_record for r in t):
            continue
        for r in t:
            used[r] = used.get(r, 0) + 1
        out.append((v, t))
    return out


class CutMaster:
    """The master LP over a pool with subset-row cut rows (HiGHS through
    :func:`scipy.optimize.linprog`, rebuilt each solve)."""

    def __init__(self, pool: ColumnPool):
        self.pool = pool
        self.triples: list = []

    def coefficients(self) -> sparse.csr_matrix:
        """``a_TC = floor(|C cap T| / 2)`` (cuts x columns)."""
        from scipy import sparse

        n = self.pool.n
        T = np.asarray(self.triples, dtype=np.int64).reshape(-1, 3)
        S = sparse.csr_matrix((np.ones(T.size), T.ravel(), np.arange(0, T.size + 1, 3)),
                              shape=(T.shape[0], n))
        cnt = (S @ self.pool.matrix()).tocsr()
        cnt.data = np.floor(cnt.data / 2.0)
        cnt.eliminate_zeros()
        return cnt

    def solve(self, time_limit: float | None = None) -> dict:
        from scipy.optimize import linprog

        A = self.pool.matrix()
        c = np.asarray(self.pool.costs)
        kw = {}
        if self.triples:
            kw = {"A_ub": self.coefficients(), "b_ub": np.ones(len(self.triples))}
        res = linprog(c, A_eq=A, b_eq=np.ones(self.pool.n), bounds=(0, None), method="highs",
                      options=None if time_limit is None else {"time_limit": max(0.01, float(time_limit))}, **kw)
        if res.status != 0:
            return {"status": "failed", "message": res.message}
        sigma = np.minimum(np.asarray(res.ineqlin.marginals, dtype=np.float64), 0.0) if self.triples else np.zeros(0)
        return {"status": "optimal", "objective": float(res.fun), "x": np.asarray(res.x),
                "duals": np.asarray(res.eqlin.marginals, dtype=np.float64), "sigma": sigma}


def cut_bound(pi: np.ndarray, sigma: np.ndarray, anchor_vals: dict, size_bounds: dict, k: int) -> float:
    """``sum(pi) + sum(sigma) + (the anchor or size form of the Lagrangian)``, lowered by a
    float margin: valid for any ``pi`` and ``sigma <= 0`` when the per-anchor / per-size
    values bound the reduced costs with penalties from below (see the module docstring)."""
    n = pi.size
    base = lagrangian_bound(pi, size_bounds, n)
    if anchor_vals:
        base = max(base, anchor_lagrangian_bound(pi, anchor_vals, k))
    value = base + float(np.sum(np.minimum(sigma, 0.0)))
    return value - 1e-9 * (float(np.abs(pi).sum()) + float(np.abs(sigma).sum()) + 1.0)


def cut_phase(Z: np.ndarray, k: int, nbr_dist: np.ndarray, pool: ColumnPool, *, deadline, max_rounds: int,
              per_round: int = 600, per_iter: int | None = None, anchor_time: float = 2.0,
              per_record: int = 2, on_bound=None, lp_value: float | None = None) -> dict:
    """Rounds of separation and column generation with cuts, from a pool whose plain LP is
    solved. Each round: solve the master with the cuts so far, price every size exactly with
    their penalties (every exact round proves :func:`cut_bound`), add the negative groups and
    repeat; when none is left, the master's value is proven and new cuts are separated at its
    solution. Stops at ``deadline``, after ``max_rounds`` rounds of separation, or when no
    cut is violated. ``on_bound(value, proven_lp)`` is called with every bound proven.
    ``lp_value``: the plain LP's value, proven by the loop; when the first master solve
    (no cuts yet) reaches it, cuts are separated at once (its duals, from another LP solver
    and degenerate, would only re-price a solved LP).

    Returns ``{"bound", "lp_value" (the last master value proven by pricing, or None),
    "rounds": [(cuts, master value, bound, proven, columns added, seconds), ...],
    "cuts", "columns", "lp_solves", "pricing_rounds", "bb_nodes", "lp_seconds",
    "pricing_seconds", "separation_seconds"}``.
    """
    n = Z.shape[0]
    per_iter = per_iter or max(50, n)
    master = CutMaster(pool)
    existing: set = set()
    best = -math.inf
    proven_value = None
    rounds: list = []
    added_total = lp_solves = pricing_rounds = bb_nodes = 0
    sizes = range(k, min(2 * k - 1, n) + 1)
    separated = 0
    t_round = time.monotonic()
    added_round = 0
    proven_duals = None
    secs = {"lp_seconds": 0.0, "pricing_seconds": 0.0, "separation_seconds": 0.0}
    stopped = None
    while not deadline.expired():
        rem = deadline.remaining()
        t0 = time.monotonic()
        lp = master.solve(time_limit=rem if math.isfinite(rem) else None)
        secs["lp_seconds"] += time.monotonic() - t0
        lp_solves += 1
        if lp["status"] != "optimal":
            break
        pi, sigma, value = lp["duals"], lp["sigma"], lp["objective"]
        solved = (not master.triples and lp_value is not None
                  and abs(value - lp_value) <= 1e-7 * max(1.0, abs(lp_value)))
        t0 = time.monotonic()
        cuts = CutRows(n, np.asarray(master.triples, dtype=np.int64).reshape(-1, 3), -sigma) \
            if master.triples else None
        anchor_vals, size_bounds, found, proven = {}, {}, 0, True
        if cuts is not None and not solved and _bb_kernel(points=True, deadline=deadline, cuts=True) is None:
            # The compiled search with penalties is not loaded and the time left is too short
            # to load or compile it (see _branch_and_bound._bb_kernel): stop with the bound proven so far.
            stopped = "the compiled pricing with cuts could not be loaded in the time left"
            break
        for s in sizes:
            if solved:
                break
            if deadline.expired():
                proven = False
                break
            try:
                res = anchored_pricing(Z, nbr_dist, pi, k, s, deadline=deadline, time_limit=anchor_time, cuts=cuts)
            except RuntimeError:  # the kernel check above raced with the deadline
                stopped = "the compiled pricing with cuts could not be loaded in the time left"
                proven = False
                break
            bb_nodes += res.get("bb_nodes", 0)
            anchor_vals[s] = res["anchor_values"]
            size_bounds[s] = res["bound"]
            proven = proven and res["proven"]
            for rows, rc in res["columns"][:per_iter]:
                if rc < -1e-9 and pool.add(rows, group_cost(Z, rows)) is not None:
                    found += 1
        pricing_rounds += 0 if solved else 1
        secs["pricing_seconds"] += time.monotonic() - t0
        added_total += found
        added_round += found
        if len(anchor_vals) == len(sizes):
            bound = cut_bound(pi, sigma, anchor_vals, size_bounds, k)
            if bound > best:
                best = bound
            if on_bound is not None:
                on_bound(bound, proven and found == 0)
        if found:
            continue
        if not proven:
            break  # an anchor stopped at its limit without a proof: time is short
        if solved:
            best = max(best, lp_value - 1e-9 * (float(np.abs(pi).sum()) + 1.0))  # proven by the loop
        proven_value = value
        # The duals of the last master whose pricing proved no group negative: with them
        # every group's reduced cost (penalties included) is >= 0, which is what the
        # optimality proof after the MIP needs (see `_column_generation`).
        proven_duals = (pi.copy(), sigma.copy(), list(master.triples), float(value))
        rounds.append((len(master.triples), round(value, 9), round(best, 9), True, added_round,
                       round(time.monotonic() - t_round, 3)))
        if separated >= max_rounds:
            break
        t0 = time.monotonic()
        new = separate_triples(pool.members, lp["x"], existing=existing, max_cuts=per_round,
                               per_record=per_record)
        secs["separation_seconds"] += time.monotonic() - t0
        if not new:
            break
        for _v, t in new:
            existing.add(t)
            master.triples.append(t)
        separated += 1
        t_round, added_round = time.monotonic(), 0
    return {"bound": best, "lp_value": proven_value, "rounds": rounds, "cuts": len(master.triples),
            "columns": added_total, "lp_solves": lp_solves, "pricing_rounds": pricing_rounds,
            "bb_nodes": bb_nodes, "triples": list(master.triples), "proven_duals": proven_duals,
            "stopped": stopped, **{key: round(v, 3) for key, v in secs.items()}}
