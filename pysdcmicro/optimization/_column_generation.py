"""Column generation for microaggregation with certified lower bounds.

The set-partitioning model (6)-(7) of Castro, Gentile and Spagnolo-Arrizabalaga (PSD 2022;
the algorithm of their COR 2022 paper): one column per group ``C`` of ``k..2k-1`` records,
cost ``w_C = SSE(C)``, every record covered exactly once. Its LP relaxation is solved by
column generation; every iteration where the minimum reduced cost is bounded from below
gives the Lagrangian bound

    LB(pi) = sum_i pi_i + min { sum_s r_s n_s : sum_s s n_s = n }  >=  sum(pi) + floor(n/k) min_s r_s

(``r_s`` a lower bound on the reduced cost of every size-``s`` group), valid for any
duals ``pi``; at convergence it is the LP value. Integer solutions come from a set-
partitioning MIP over the generated columns (CP-SAT), never worse than the heuristic
seeds.
"""

from __future__ import annotations

import math
import time
from contextlib import contextmanager

import numpy as np

from .. import _ortools
from .._context import Context
from .._errors import InvalidInputError
from .._partition import canonical_labels, groups_from_labels, sse
from .._registry import register_method
from .._result import Solution
from .._validation import check_choice, check_number, check_positive_int
from ..constructive._mdav import mdav_labels
from ._master import ColumnPool, group_cost, make_master
from ._pricing import (anchor_lagrangian_bound, anchor_relaxation, anchored_pricing, enumerate_below,
                       exact_pricing, heuristic_pricing, lagrangian_bound, neighbours, nn_dual,
                       record_ascent, record_bounds)

__all__ = ["column_generation", "solve_column_generation", "seed_partitions"]

_LP_SOLVERS = ("highs", "glop")


def optional_spec(kind: str, name: str):
    """The method (``kind="method"``) or improvement step of that name that the seeds and
    the final search use, imported directly (an object with ``name`` and ``core``), or None."""
    from types import SimpleNamespace

    from ..constructive._vmdav import _vmdav_solver
    from ..local_search._icsm import _icsm_improver
    from ..local_search._two_swap import _two_swap_improver

    cores = {("method", "vmdav"): _vmdav_solver, ("improvement", "two-swap"): _two_swap_improver,
             ("improvement", "icsm"): _icsm_improver}
    core = cores.get((kind, name))
    return None if core is None else SimpleNamespace(name=name, core=core)


def seed_partitions(Z: np.ndarray, k: int, ctx: Context, *, heuristic_share: float = 0.1,
                    phases: _Phases | None = None) -> tuple[list[tuple[str, np.ndarray]], list[str]]:
    """Heuristic k-partitions that seed the column pool: MDAV, optimal runs along the MDAV
    order (Hansen-Mukherjee), V-MDAV, two-swap from the best of them, and ICSM from the
    MDAV as method ``icsm`` runs it (with restarts for ``heuristic_share`` of the time under a time limit,
    one deterministic run without); V-MDAV, two-swap and ICSM when registered."""
    from ..univariate._hansen_mukherjee import optimal_runs

    if phases is None:
        phases = _Phases(time.monotonic())
    notes = []
    order: list = []
    with phases("seed mdav", ctx.deadline):
        labels = mdav_labels(Z, k, order=order)
    out = [("mdav", labels)]
    try:
        with phases("seed mdav-order runs", ctx.deadline):
            hm_labels, _ = optimal_runs(Z, np.asarray(order), k)
        out.append(("mdav-order runs", np.asarray(hm_labels)))
    except Exception as exc:  # pragma: no cover - defensive, the seeds are optional
        notes.append(f"optimal runs seed skipped: {exc}")
    spec = optional_spec("method", "vmdav")
    if spec is None:
        notes.append("vmdav not available: seeded without it")
    else:
        with phases("seed vmdav", ctx.deadline):
            sol = spec.core(Z, k, ctx.child(stage="vmdav"))
        out.append(("vmdav", np.asarray(sol.labels)))
    # Two-swap from the best seed (at most a tenth of the time): a better incumbent for
    # the MIP, and its groups in the pool (on the 120-s full-set runs of vignette 2,
    # column generation returned the MDAV or V-MDAV seed at k >= 5, above MDAV + two-swap).
    swap = optional_spec("improvement", "two-swap")
    if swap is None:
        notes.append("two-swap not available: seeded without it")
    if swap is not None:
        start = min(out, key=lambda item: sse(Z, item[1]))[1]
        sub = ctx.child(fraction=0.1, stage="seed two-swap")
        with phases("seed two-swap", sub.deadline):
            out.append(("two-swap", np.asarray(swap.core(Z, start, k, sub).labels)))
    # ICSM (restarts under a time limit) from MDAV, as method `icsm` runs it: at k >= 5 the
    # MIP over the generated groups returned its two-swap seed, above what ICSM reaches in
    # seconds (issue 14: a 30-s run on Tarragona k = 3 returned 15.04, ICSM gets 14.68 in
    # 4 s). Started from MDAV, not from the best seed: on a 90-record test ICSM from the
    # two-swap seed stopped at a worse local optimum than ICSM from MDAV.
    icsm = optional_spec("improvement", "icsm")
    if icsm is None:
        notes.append("icsm not available: seeded without it")
    elif heuristic_share > 0:
        # First ICSM's own run (at most half the time: a 30-s run on Tarragona k = 3 under
        # load gave it 3 s, too few to finish the 16-s run, and returned 14.87 against its
        # 14.68), then restarts for heuristic_share of the time under a time limit.
        sub = ctx.child(fraction=0.5, stage="seed icsm")
        with phases("seed icsm", sub.deadline):
            sol = icsm.core(Z, np.asarray(labels), k, sub, max_restarts=0)
        out.append(("icsm", np.asarray(sol.labels)))
        if ctx.deadline.limited and not ctx.expired():
            sub = ctx.child(fraction=heuristic_share, stage="seed icsm restarts")
            with phases("seed icsm restarts", sub.deadline):
                sol = icsm.core(Z, np.asarray(sol.labels), k, sub, max_restarts=None)
            out.append(("icsm-restarts", np.asarray(sol.labels)))
    return out, notes


class _Phases:
    """Phase timestamps of one run, for ``info["phases"]``: per phase ``(name, start, end,
    deadline)`` in seconds from the start of the run (``deadline`` None when unlimited), and
    per repeated step (LP solve, pricing) its count, seconds and worst overrun past the
    deadline it was given. A phase ending after its deadline is an overrun to explain."""

    def __init__(self, started: float):
        self.started = started
        self.rows: list = []
        self.steps: dict = {}

    def _end(self, deadline) -> float | None:
        if deadline is None:
            return None
        rem = deadline.remaining()
        return None if not math.isfinite(rem) else time.monotonic() + rem

    @contextmanager
    def __call__(self, name: str, deadline=None):
        a = time.monotonic()
        end = self._end(deadline)
        try:
            yield
        finally:
            b = time.monotonic()
            self.rows.append((name, round(a - self.started, 3), round(b - self.started, 3),
                              None if end is None else round(end - self.started, 3)))

    @contextmanager
    def step(self, name: str, deadline=None):
        a = time.monotonic()
        end = self._end(deadline)
        try:
            yield
        finally:
            b = time.monotonic()
            row = self.steps.setdefault(name, [0, 0.0, 0.0])
            row[0] += 1
            row[1] = round(row[1] + b - a, 3)
            if end is not None:
                row[2] = round(max(row[2], b - end), 3)

    def as_info(self) -> dict:
        return {"phases": self.rows, "steps": {k: tuple(v) for k, v in self.steps.items()}}


def _partition_columns(labels: np.ndarray, k: int) -> list[np.ndarray]:
    """Groups of a k-partition, with groups of 2k or more split (never raises SSE... when
    split optimally; here split along the MDAV order inside the group)."""
    out = []
    for rows in groups_from_labels(canonical_labels(labels)):
        out.append(np.sort(rows))
    return out


def solve_column_generation(Z: np.ndarray, k: int, ctx: Context, *,
                            seeds: list[np.ndarray] | None = None,
                            max_iterations: int | None = None, neighbours_count: int = 0,
                            columns_per_iteration: int = 0, max_columns: int = 200_000,
                            exact: bool = True, exact_max_records: int = 400,
                            pricing_time: float = 20.0,
                            pricing_deterministic_time: float | None = None,
                            mip: bool = True, mip_time: float = 60.0,
                            mip_deterministic_time: float | None = None, workers: int = 1,
                            lp_solver: str = "glop", lp_share: float = 0.8,
                            enumerate_limit: int = 50_000, exact_model: str = "anchored",
                            enumerate_anchor: int = 300_000, mip_solver: str = "highs",
                            anchor_time: float = 2.0, close_gap: bool = True,
                            stall_share: float = 0.25, bound_share: float = 0.15,
                            bound_steps: int | None = None, mip_columns: int = 20_000,
                            anchor_solver: str = "bb", smoothing: float = 0.0,
                            heuristic_share: float = 0.1, exact_trigger: int | None = None,
                            ascent_share: float = 0.2, ascent_steps: int | None = None,
                            ascent_nodes: int = 200, ascent_switch: float = 0.25,
                            cut_rounds: int | None = None, cuts_per_round: int = 600,
                            integral_groups: bool = False, cut_time: float | None = None) -> Solution:
    """The column-generation engine (see :func:`column_generation`).

    With ``integral_groups``, a converged run's ``info["integral_groups"]`` lists the groups
    (row arrays) at value 1 in the optimal master LP (``auto``'s dives fix them).
    ``cut_time``: at most this many seconds for the subset-row cut rounds (``auto`` caps them
    so that its dives keep their time); None: the bound search's and the ascent's time."""
    n = Z.shape[0]
    started = time.monotonic()
    info: dict = {"lp_solver": lp_solver, "cpsat_workers": workers}
    if n < 2 * k:
        labels = np.zeros(n, dtype=np.int64)
        value = group_cost(Z, np.arange(n))
        info.update(iterations=0, converged=True, lp_value=value)
        return Solution(labels=labels, status="done", lower_bound=value,
                        message="fewer than 2k records: one group, optimal", info=info)

    notes: list[str] = []
    names = None
    phases = _Phases(started)
    info["phases"] = phases.rows
    info["steps"] = phases.steps
    own_seeds = seeds is None  # the standalone method (decomposition passes its own seeds)
    # Neighbour lists first (O(n^2 d) time, O(n L) memory; 0.1-0.5 s of CPU on the CASC
    # sets): the neighbour bound then exists before the seeds use any of the time.
    L = neighbours_count or min(n, max(4 * k + 4, 16))
    L = max(L, min(n, 2 * k))
    with phases("neighbours", ctx.deadline):
        nbr_idx, nbr_dist = neighbours(Z, L)
    if seeds is None:
        named, notes = seed_partitions(Z, k, ctx, heuristic_share=heuristic_share, phases=phases)
        seeds = [lab for _, lab in named]
        names = [name for name, _ in named]
        info["seeds"] = {name: float(sse(Z, lab)) for name, lab in named}
    best_labels, best_sse = None, math.inf
    for pos, lab in enumerate(seeds):
        value = sse(Z, lab)
        if value < best_sse:
            best_labels, best_sse = np.asarray(lab), value
            info["found_by"] = f"seed {names[pos]}" if names else "seed"
    ctx.offer(best_labels, best_sse)

    pool = ColumnPool(n)
    for lab in seeds:
        for rows in _partition_columns(lab, k):
            if rows.size <= 2 * k - 1:
                pool.add(rows, group_cost(Z, rows))
    # Groups of 2k or more from a seed: pool them anyway so the master stays feasible.
    for lab in seeds:
        for rows in _partition_columns(lab, k):
            if rows.size > 2 * k - 1:
                pool.add(rows, group_cost(Z, rows))

    per_iter = columns_per_iteration or max(50, n)
    if exact_trigger is None:
        exact_trigger = max(10, per_iter // 20)
    master = make_master(lp_solver, pool)
    # A dual-feasible point from nearest neighbours alone: its sum bounds the optimum before
    # any LP is solved, and it is the first centre of the bound search after the loop.
    centre = nn_dual(nbr_dist, k)
    nn_lower = _safe(float(centre.sum()), centre)
    info["nn_bound"] = nn_lower
    total = ctx.remaining()
    if bound_steps is None:  # the search needs a budget: by default only under a time limit
        bound_steps = 16 if math.isfinite(total) else 0
    search_seconds = bound_share * (lp_share if mip else 1.0) * total if math.isfinite(total) else None
    reserve = bound_share if (exact and bound_steps) else 0.0
    if ascent_steps is None:
        # Like the bound search, by default only under a time limit; and only for the method
        # itself: callers passing their own seeds (decomposition's subsets, auto) keep their
        # whole time for the partition.
        ascent_steps = 50 if (math.isfinite(total) and own_seeds) else 0
    ascent_seconds = ascent_share * (lp_share if mip else 1.0) * total if math.isfinite(total) else None
    if exact and ascent_steps and ascent_share > 0:
        reserve += ascent_share
    if ctx.deadline.limited and (mip or reserve):
        cg_ctx = ctx.child(fraction=(lp_share if mip else 1.0) * (1.0 - reserve))
    else:
        cg_ctx = ctx
    # The end of the loop's, the bound search's and the ascent's time together (the MIP's
    # share after it): where a switched ascent may run to.
    bound_end = ctx.deadline.child(fraction=lp_share if mip else 1.0)
    ascent_on = bool(exact and ascent_steps and ascent_share > 0)
    loop_started = time.monotonic()
    loop_budget = cg_ctx.remaining()
    switched = False
    finished_rounds = 0  # exact rounds that priced every size to a proof

    # lb_pi: the bound at the current duals; lb_filter: the same with every size bound clipped
    # at 0, so that z(x) >= lb_filter + rc_C for every partition x using column C (hence a
    # column with rc_C > incumbent - lb_filter is in no better partition).
    lb_pi = lb_filter = -math.inf
    lower = nn_lower
    source = "neighbour"
    history_sources: dict = {}

    def raise_lower(value: float, why: str) -> None:
        nonlocal lower, source
        if value > lower:
            lower, source = value, why
            history_sources[why] = history_sources.get(why, 0) + 1

    # Wentges smoothing: exact pricing at alpha * centre + (1 - alpha) * duals, the centre
    # being the duals with the best Lagrangian bound so far (first the neighbour point).
    stab_centre, stab_bound = centre.copy(), nn_lower
    exact_rounds = mispricings = bb_nodes = 0
    priced_bounds: list = []
    lp_value = None
    lp_x = None
    pi = None
    converged = False
    status = "done"
    it = 0
    exact_calls = 0
    info_anchor: list = []
    notes_stall: list = []
    exact_det = 0.0
    factors = []
    # With the compiled branch and bound a round over every anchor and size takes seconds on
    # the full CASC sets (Tarragona k = 5: 1.5 s per size): every exact round then prices
    # every size completely, so each one proves a Lagrangian bound from exact values.
    # (Decided at the first exact round: importing numba costs seconds, which short runs that
    # never reach exact pricing should not pay.)
    full_rounds = None
    while True:
        if max_iterations is not None and it >= max_iterations:
            status = "limit"
            notes.append(f"iteration limit {max_iterations} reached before convergence")
            break
        if cg_ctx.expired() and it > 0:
            status = "limit"
            notes.append("time limit reached during column generation")
            break
        if ascent_on and it > 0 and not finished_rounds and math.isfinite(loop_budget) \
                and cg_ctx.remaining() <= (1.0 - ascent_switch) * loop_budget:
            # Stalled (k = 10 on the full sets: no exact pricing round finishes, so the loop
            # proves no more than the master duals' cheap bound): the rest of the loop's time,
            # and the bound search's, go to the record ascent, the one argument that then
            # proves more. (First tried: "no bound above the neighbour point"; on full Census
            # and EIA at k = 10 the master duals' bound passed it and the switch never came.)
            switched = True
            status = "limit"
            notes.append(f"no exact pricing round finished in {time.monotonic() - loop_started:.0f} s "
                         f"of column generation: its remaining time went to the record ascent")
            break
        it += 1
        rem = cg_ctx.remaining()
        if it == 1:
            # The master over the seeds' groups alone (a few thousand columns, milliseconds)
            # is always solved once, so that a run cut short still reports duals and an LP
            # value (the ICSM seed may have used the whole share of a very short limit).
            rem = max(rem, 1.0)
        # Limited: on full EIA at k = 10 one GLOP re-solve over a large pool ran past a
        # 600-s limit by minutes.
        with phases.step("master LP", cg_ctx.deadline):
            lp = master.solve(time_limit=rem if math.isfinite(rem) else None)
        if lp["status"] != "optimal":  # the seeds keep the master feasible: time ran out
            notes.append("time limit reached while solving the master LP" if cg_ctx.expired()
                         else f"master LP failed: {lp.get('message', '')}")
            status = "limit"
            break
        pi, lp_value = lp["duals"], lp["objective"]
        lp_x = lp.get("x")
        # Cheap valid bound at every iteration.
        _, rec = record_bounds(nbr_dist, pi, k)
        lb_pi = _safe(lagrangian_bound(pi, rec, n), pi)
        lb_filter = _safe(lagrangian_bound(pi, _clip(rec), n), pi)
        raise_lower(lb_pi, "Lagrangian (master duals)")
        if cg_ctx.expired():
            status = "limit"
            notes.append("time limit reached during column generation")
            break
        # With smoothing the heuristic prices at the smoothed point too (Wentges 1997): at the
        # degenerate master's duals (full Census, k = 5: the LP value stayed at the seed's for
        # a dozen iterations) its columns are poor; near the best-bound centre they are the
        # groups of a good partition. Only columns negative at the master's duals change the
        # master; when there are none, exact pricing follows (a mis-pricing is resolved there).
        price_h = pi if smoothing == 0.0 else smoothing * stab_centre + (1.0 - smoothing) * pi
        with phases.step("heuristic pricing", cg_ctx.deadline):
            cols = heuristic_pricing(Z, nbr_idx, price_h, k, deadline=cg_ctx.deadline)
        added = 0
        for rows, _rc in cols[:per_iter]:
            cost = group_cost(Z, rows)
            if cost - float(pi[rows].sum()) < -1e-9 and pool.add(rows, cost) is not None:
                added += 1
        mode = "heuristic"
        # With smoothing, a heuristic round that adds only a few columns (the tail of the
        # heuristic phase: on full Census, k = 5, twenty iterations moved the LP value by
        # 0.04 %) goes on to an exact round too, which raises the centre and the bound.
        few = smoothing > 0.0 and exact and 0 < added < exact_trigger
        # (Tried and dropped: also an exact round when the master's LP value stalls. On full
        # Tarragona and Census at k = 10 that round, at the smoothed point, ran 162 s without
        # finishing and left a weaker bound than the defaults; benchmarks/results/colgen.md.)
        if added == 0 or few:
            if not exact:
                notes.append("heuristic pricing found no negative column; exact pricing disabled")
                break
            mode = "exact"
            pending = added  # heuristic columns the master has not seen yet
            if full_rounds is None:
                from ._pricing import _bb_kernel

                with phases("pricing kernel (numba import or compile)", cg_ctx.deadline):
                    full_rounds = exact_model == "anchored" and anchor_solver == "bb" and \
                        _bb_kernel(points=True, deadline=cg_ctx.deadline) is not None
            alpha = smoothing
            stop_loop = False
            while True:  # exact rounds at this master solution (smoothed duals first)
                if alpha > 0.0:
                    price = alpha * stab_centre + (1.0 - alpha) * pi
                    rec_p = record_bounds(nbr_dist, price, k)[1]
                else:
                    price, rec_p = pi, rec
                exact_rounds += 1
                bounds = {}
                anchor_vals = {}
                proven = []
                found = 0
                improving = 0  # columns negative at the master's duals, not only at `price`
                unproven = 0  # anchors (or global models) that stopped at their limit this round
                for s in range(k, min(2 * k - 1, n) + 1):
                    if cg_ctx.expired():
                        break
                    tl = None if pricing_deterministic_time is not None else _pricing_limit(cg_ctx, pricing_time)
                    if exact_model == "anchored":
                        with phases.step("exact pricing (anchored)", cg_ctx.deadline):
                            res = anchored_pricing(Z, nbr_dist, price, k, s, deadline=cg_ctx.deadline,
                                                   enumerate_limit=enumerate_anchor,
                                                   time_limit=None if tl is None else min(tl, anchor_time),
                                                   max_found=None if full_rounds else max(10, per_iter // 5),
                                                   deterministic_time=pricing_deterministic_time,
                                                   workers=workers, seed=ctx.seed(), anchor_solver=anchor_solver)
                        exact_calls += res["cpsat_calls"]
                        bb_nodes += res.get("bb_nodes", 0)
                        found_cols = res["columns"]
                        unproven += max(0, res["anchors"] - res["solved"])
                        info_anchor.append((s, res["anchors"], res["solved"]))
                        anchor_vals[s] = res["anchor_values"]
                    else:
                        with phases.step("exact pricing (global)", cg_ctx.deadline):
                            res = exact_pricing(Z, nbr_dist, price, k, s, time_limit=tl,
                                                deterministic_time=pricing_deterministic_time, workers=workers,
                                                seed=ctx.seed(), max_records=exact_max_records)
                        exact_calls += 1
                        exact_det += res.get("deterministic_time", 0.0)
                        unproven += 0 if res["proven"] else 1
                        found_cols = [(res["column"], res["rc"])] if res["column"] is not None else []
                    if res["factor"] is not None:
                        factors.append(res["factor"])
                    bounds[s] = res["bound"]
                    proven.append(res["proven"])
                    for rows, rc in found_cols[:per_iter]:
                        if rc < -1e-9:
                            cost = group_cost(Z, rows)
                            if pool.add(rows, cost) is not None:
                                found += 1
                                if cost - float(pi[rows].sum()) < -1e-9:
                                    improving += 1
                    if found and s < min(2 * k - 1, n) and not full_rounds:
                        proven.append(False)  # not a final round: the remaining sizes wait
                        break
                    if exact_model != "anchored" and found:
                        # Negative columns near the exact one, by the heuristic from its members.
                        more = heuristic_pricing(Z, nbr_idx, price, k, seeds=found_cols[0][0])
                        for rows, _rc in more[: max(10, per_iter // 10)]:
                            pool.add(rows, group_cost(Z, rows))
                for s in range(k, min(2 * k - 1, n) + 1):
                    bounds.setdefault(s, rec_p[s])  # sizes not reached: the per-record bound
                lb_p = _safe(lagrangian_bound(price, bounds, n), price)
                lb_p_filter = _safe(lagrangian_bound(price, _clip(bounds), n), price)
                missing = len(anchor_vals) < min(2 * k - 1, n) - k + 1
                if anchor_vals and not (missing and cg_ctx.expired()):
                    # Each anchor charged once (sizes not priced this round: their relaxation,
                    # an O(n^2 d) pass per size: skipped once the time is up).
                    for s in range(k, min(2 * k - 1, n) + 1):
                        if s not in anchor_vals:
                            anchor_vals[s] = anchor_relaxation(Z, nbr_dist, price, s)[0]
                    lb_anchor = _safe(anchor_lagrangian_bound(price, anchor_vals, k), price)
                    lb_p = max(lb_p, lb_anchor)
                    lb_p_filter = max(lb_p_filter, lb_anchor)
                if alpha == 0.0:
                    lb_pi = max(lb_pi, lb_p)
                    lb_filter = max(lb_filter, lb_p_filter)
                raise_lower(lb_p, "Lagrangian (master duals)" if alpha == 0.0 else "Lagrangian (smoothed duals)")
                if len(priced_bounds) < 1000:  # one (alpha, bound) per exact round, for checks
                    priced_bounds.append((float(alpha), float(lb_p)))
                if lb_p > stab_bound:
                    stab_centre, stab_bound = price, lb_p
                added = found
                full_round = found == 0 and len(proven) == min(2 * k - 1, n) - k + 1
                if len(proven) == min(2 * k - 1, n) - k + 1 and all(proven):
                    finished_rounds += 1
                if lp_value is not None and stab_bound >= lp_value - 1e-7 * max(1.0, abs(lp_value)):
                    # The bound reached the LP value: the LP is solved (no column can lower it).
                    converged = True
                    info["converged_by"] = "bound = LP value"
                    stop_loop = True
                    break
                if improving or pending:
                    break  # the master changes: solve it again
                if alpha > 0.0:
                    # Mis-pricing (no column negative at the master's duals): the centre has
                    # moved (or not); price closer to the master's duals.
                    mispricings += 1
                    alpha = alpha / 2.0 if alpha > 0.125 else 0.0
                    if cg_ctx.expired():
                        stop_loop = True
                        status = "limit"
                        notes.append("time limit reached during exact pricing")
                        break
                    continue
                # Priced at the master's duals.
                # Stalled (no column, some anchors stopped at their per-call limit without a
                # proof): give them more time and price again (the LP is unchanged): fourfold, at
                # most pricing_time, and at most what lets a whole round of the unproven anchors
                # fit in stall_share of the time left, so that on large sets the budget is not
                # spent in a few exact rounds (measured on full Tarragona k = 3: uncapped raises
                # left 3 exact rounds in 1200 s and a worse pool, see benchmarks/results/colgen.md).
                raised = min(pricing_time, 4 * anchor_time,
                             stall_share * cg_ctx.remaining() / max(unproven, 1))
                can_raise = (found == 0 and unproven > 0 and not cg_ctx.expired()
                             and raised >= 1.25 * anchor_time and pricing_deterministic_time is None)
                if full_round:
                    converged = all(proven)
                    if not converged and can_raise:
                        anchor_time = raised
                        notes_stall.append(anchor_time)
                        continue
                    if not converged:
                        notes.append(f"exact pricing: {unproven} anchors unproven at {anchor_time:g} s each")
                    stop_loop = True
                    break
                if can_raise:
                    anchor_time = raised
                    notes_stall.append(anchor_time)
                    continue
                if found == 0:
                    status = "limit"
                    notes.append("time limit reached during exact pricing" if cg_ctx.expired() else
                                 "exact pricing stopped at its per-call limit without a proof")
                    stop_loop = True
                break
            if stop_loop:
                break
        ctx.report(iteration=it, sse=best_sse, lower_bound=lower, stage="column generation",
                   lp=lp_value, columns=len(pool), pricing=mode)
        if len(pool) > max_columns:
            _shrink(pool, master, pi, best_labels, max_columns)

    if cut_rounds is None:
        # Like the ascent: by default under a time limit, for the method itself; and at k <= 3,
        # where it was measured (part (j) of benchmarks/results/colgen.md): at larger k the
        # time would come out of the final ICSM restarts, unmeasured.
        cut_rounds = 50 if (math.isfinite(total) and own_seeds and k <= 3) else 0
    cut_duals = None  # (pi, sigma, triples, value) of the last master with cuts proven by pricing
    if exact and cut_rounds and converged and pi is not None and full_rounds and not ctx.expired():
        # Beyond the LP (issue 16, k = 3): subset-row cuts on triples, priced with their
        # penalties, in the time of the bound search and the ascent (which a solved LP skips).
        from ._cuts import cut_phase

        cut_info: dict = {"bound_before": float(lower)}

        def on_bound(value: float, proven_lp: bool) -> None:
            if value > lp_value:
                raise_lower(value, "LP value with subset-row cuts" if proven_lp else
                            "Lagrangian (subset-row cuts)")

        cut_end = bound_end if cut_time is None else bound_end.child(cut_time)
        with phases("subset-row cuts", cut_end):
            cres = cut_phase(Z, k, nbr_dist, pool, deadline=cut_end, max_rounds=cut_rounds,
                             per_round=cuts_per_round, per_iter=per_iter, anchor_time=anchor_time,
                             on_bound=on_bound, lp_value=lp_value)
        cut_info.update({key: cres[key] for key in ("bound", "lp_value", "rounds", "cuts", "columns",
                                                    "lp_solves", "pricing_rounds", "bb_nodes", "lp_seconds",
                                                    "pricing_seconds", "separation_seconds", "stopped")})
        if cres["stopped"]:
            notes.append(f"subset-row cuts stopped: {cres['stopped']}")
        cut_info["bound_after"] = float(lower)
        info["subset_row_cuts"] = cut_info
        cut_duals = cres.get("proven_duals")

    if exact and bound_steps and not converged and pi is not None and not ctx.expired() \
            and not switched and (search_seconds is None or search_seconds > 0):
        # Bound search: valid bounds at duals between a dual-feasible centre and the
        # master's duals (whose own exact pricing did not finish); see _centre_search.
        deadline = ctx.deadline.child(search_seconds)
        with phases("bound search", deadline):
            found_bound, extra, steps = _centre_search(
                Z, nbr_dist, k, centre, pi, deadline=deadline, anchor_time=anchor_time,
                deterministic_time=pricing_deterministic_time, workers=workers, seed=ctx.seed(),
                max_steps=bound_steps)
        info["bound_search"] = steps
        raise_lower(found_bound, "Lagrangian (bound search)")
        for rows, _rc in extra:
            pool.add(rows, group_cost(Z, rows))

    if exact and ascent_steps and not converged and pi is not None and not ctx.expired() \
            and (ascent_seconds is None or ascent_seconds > 0):
        # Record ascent (issue 16, k = 10): the per-record Lagrangian from truncated pricing
        # (branch and bound per record and size stopped at `ascent_nodes` nodes, bisection on
        # the cut-off), climbing through dual-feasible points pi + m from the best-bound
        # duals so far; every step proves a bound whatever the budget.
        deadline = bound_end if switched else ctx.deadline.child(ascent_seconds)
        with phases("record ascent", deadline):
            asc = record_ascent(Z, nbr_dist, stab_centre, k, deadline=deadline, node_limit=ascent_nodes,
                                max_steps=ascent_steps)
        info["record_ascent"] = [(round(b, 6), nodes, done) for b, nodes, done in asc["steps"]]
        raise_lower(_safe(asc["bound"], asc["duals"]), "Lagrangian (truncated pricing, record ascent)")
        for rows in asc["columns"][: max(n, 1000)]:
            pool.add(rows, group_cost(Z, rows))

    if integral_groups and converged and lp_x is not None:
        # the last master solution is optimal (converged): its columns at 1, before the pool grows
        info["integral_groups"] = [pool.members[p] for p in np.flatnonzero(np.asarray(lp_x) > 0.99)]
    info.update(iterations=it, converged=converged, lp_value=lp_value, columns=len(pool),
                neighbours=int(L), exact_pricing_calls=exact_calls, exact_model=exact_model,
                last_anchor_rounds=info_anchor[-(2 * k):], anchor_time_raised_to=notes_stall,
                pricing_deterministic_time=round(exact_det, 3),
                cost_scale_factor=min(factors) if factors else None,
                cg_seconds=round(time.monotonic() - started, 3))

    # Integer solution over the pool.
    def run_mip(complete: bool, cut_filter=None) -> None:
        nonlocal best_labels, best_sse
        with phases("MIP" + (" (complete)" if complete else ""), ctx.deadline):
            mip_labels, mip_info = _solve_mip(Z, k, pool, pi, lb_filter, best_labels, best_sse, ctx,
                                              mip_time, mip_deterministic_time, workers, mip_solver,
                                              max_columns=None if complete else mip_columns,
                                              cut_filter=cut_filter)
        info.update({key: v for key, v in mip_info.items() if not key.startswith("_")})
        if mip_labels is not None:
            value = sse(Z, mip_labels)
            if value < best_sse:
                best_labels, best_sse = mip_labels, value
                ctx.offer(best_labels, best_sse)
                info["found_by"] = "MIP over the generated groups"
        if complete and mip_info.get("mip_status") == "optimal" and mip_info.get("_bound") is not None:
            # Every column that could beat the incumbent was in the MIP, solved to optimality:
            # its bound (less the solver's tolerance) bounds the optimum.
            proven = float(mip_info["_bound"])
            proven -= 1e-7 * abs(proven) + 1e-9
            raise_lower(min(best_sse, proven), "MIP over every group that could be better (optimality proof)")
            info["optimal"] = True
        return mip_info.get("mip_status")

    if mip and pi is not None and not ctx.expired():
        if converged and math.isfinite(lb_filter) and _count_columns(n, k) <= enumerate_limit:
            # Small instance: pool every group that could be in a better solution, so that
            # an optimal MIP over the pool is a proven optimum.
            info["enumerated_columns"] = _enumerate_columns(Z, k, pool, pi, best_sse - lb_filter)
            run_mip(True)
        else:
            cut_slack = _cut_slack(cut_duals, best_sse, n, k)
            if converged and close_gap and cut_slack is not None and best_sse > 0 \
                    and 1e-6 < cut_slack / best_sse <= 0.02 and cut_slack < best_sse - lb_filter:
                # The optimality proof from the master with subset-row cuts (its bound is the
                # closer one): with its duals every group's reduced cost (penalties included)
                # is >= 0, so a partition better than the incumbent holds only groups whose
                # reduced cost is <= the slack (docs/guide/lower-bounds.md). Pool them all,
                # then the MIP over just those and the incumbent's groups.
                # When the enumeration cannot finish (too many groups within the slack: on
                # full Tarragona at k = 3 a 0.1 % gap leaves over 260,000 of size 3), nothing
                # is pooled and the MIP runs over the pool as it would without the cuts.
                complete, added = _enumerate_with_cuts(Z, nbr_dist, k, pool, cut_duals, cut_slack, phases,
                                                       ctx.deadline, enumerate_anchor, max_columns)
                info["enumerated_columns"] = added
                info["enumeration_complete"] = complete
                info["enumeration_duals"] = "master with subset-row cuts"
                if complete and not ctx.expired():
                    for rows in groups_from_labels(canonical_labels(best_labels)):
                        pool.add(rows, group_cost(Z, rows))
                    run_mip(True, cut_filter=(cut_duals, cut_slack))
                elif not ctx.expired():
                    run_mip(False)
            elif run_mip(False) == "optimal" and converged and math.isfinite(lb_filter) \
                    and close_gap and 1e-6 < (best_sse - lb_filter) / max(best_sse, 1e-300) <= 0.02 \
                    and not ctx.expired():
                # Enumerate, anchor by anchor, every group that could be in a better partition
                # (reduced cost <= incumbent - bound); complete enumeration + optimal MIP =
                # proven optimum.
                complete = True
                added = 0
                for size in range(k, 2 * k):
                    with phases.step("enumerate below", ctx.deadline):
                        groups, done = enumerate_below(Z, nbr_dist, pi, k, size, best_sse - lb_filter,
                                                       enumerate_limit=enumerate_anchor,
                                                       max_columns=min(max_columns, 50_000),
                                                       deadline=ctx.deadline)
                    complete &= done
                    for rows, _rc in groups:
                        if pool.add(rows, group_cost(Z, rows)) is not None:
                            added += 1
                    if added > 50_000:
                        complete = False
                        break
                info["enumerated_columns"] = added
                info["enumeration_complete"] = complete
                if added and not ctx.expired():
                    run_mip(complete)
    proven_optimal = bool(info.get("optimal")) or (math.isfinite(lower) and best_sse - lower <= 1e-9 * max(1.0, best_sse))
    icsm = optional_spec("improvement", "icsm")
    if own_seeds and ctx.deadline.limited and not proven_optimal and icsm is not None and not ctx.expired() \
            and ctx.remaining() > 0.5:
        # The time left goes to ICSM restarts from the best partition: a run stops early only
        # with a proof of optimality.
        polish_started = time.monotonic()
        with phases("final icsm restarts", ctx.deadline):
            sol = icsm.core(Z, np.asarray(best_labels), k, ctx.child(stage="final icsm restarts"),
                            max_restarts=None)
        value = sse(Z, sol.labels)
        info["final_icsm"] = {"seconds": round(time.monotonic() - polish_started, 3),
                              "sse_before": float(best_sse), "sse_after": float(min(value, best_sse))}
        if value < best_sse - 1e-12 * max(1.0, best_sse):
            best_labels, best_sse = np.asarray(sol.labels), value
            ctx.offer(best_labels, best_sse)
            info["found_by"] = "final icsm restarts"
    if proven_optimal:
        notes.append("optimal: the lower bound equals the partition's SSE")
    if lower > best_sse:  # never report a bound above a known solution (float noise)
        info["bound_clamped_by"] = float(lower - best_sse)
        lower = best_sse
    if converged and source.startswith("Lagrangian") and "subset-row" not in source and lp_value is not None \
            and lower >= lp_value - 1e-6 * max(1.0, abs(lp_value)):
        source = "LP value (" + source + ")"
    info.update(bound_source=source, bound_improvements=history_sources, exact_rounds=exact_rounds,
                mispricings=mispricings, bb_nodes=bb_nodes, smoothing=smoothing,
                priced_bounds=priced_bounds,
                anchor_solver=anchor_solver)
    if not converged and status == "done":
        status = "limit"
    msg = "; ".join(notes)
    if converged:
        msg = (msg + "; " if msg else "") + "LP relaxation solved to optimality"
    return Solution(labels=np.asarray(best_labels, dtype=np.int64), status=status,
                    message=msg, lower_bound=None if not math.isfinite(lower) else float(lower),
                    info=info)


def _cut_slack(cut_duals, best_sse: float, n: int, k: int) -> float | None:
    """``incumbent - (sum(pi) + sum(sigma))`` at the duals of a master with cuts whose pricing
    proved every reduced cost >= -1e-9, widened by the float and pricing tolerances; None
    without such duals."""
    if cut_duals is None or not math.isfinite(best_sse):
        return None
    pi_c, sigma_c = cut_duals[0], cut_duals[1]
    base = float(np.sum(pi_c)) + float(np.sum(np.minimum(sigma_c, 0.0)))
    tol = 1e-9 * (float(np.abs(pi_c).sum()) + float(np.abs(sigma_c).sum()) + 1.0) + (n // k + 1) * 1e-9
    return max(best_sse - base, 0.0) + tol


def _enumerate_with_cuts(Z, nbr_dist, k, pool, cut_duals, slack, phases, deadline, enumerate_anchor,
                         max_columns) -> tuple[bool, int]:
    """Pool every group whose reduced cost at the duals of a master with subset-row cuts
    (penalties included) is <= ``slack``. The penalties are >= 0, so these groups are among
    those whose reduced cost without them is <= ``slack`` (:func:`enumerate_below`, anchor
    by anchor), filtered by their exact reduced cost. Returns ``(complete, count)``; the
    groups are pooled only when the enumeration is complete (at most 50,000 of them)."""
    from ._pricing import CutRows

    pi_c, sigma_c, triples = cut_duals[0], cut_duals[1], cut_duals[2]
    rows_c = CutRows(Z.shape[0], np.asarray(triples, dtype=np.int64).reshape(-1, 3), -np.minimum(sigma_c, 0.0))
    complete, keep = True, []
    for size in range(k, 2 * k):
        with phases.step("enumerate below", deadline):
            groups, done = enumerate_below(Z, nbr_dist, pi_c, k, size, slack, enumerate_limit=enumerate_anchor,
                                           max_columns=min(max_columns, 200_000), deadline=deadline)
        complete &= done
        keep.extend(rows for rows, rc in groups if rc + rows_c.penalty(rows) <= slack)
        if not complete or len(keep) > 50_000 or deadline.expired():
            return False, len(keep)
    added = sum(pool.add(rows, group_cost(Z, rows)) is not None for rows in keep)
    return True, added


def _centre_search(Z: np.ndarray, nbr_dist: np.ndarray, k: int, centre: np.ndarray, pi: np.ndarray, *,
                   deadline, anchor_time: float, deterministic_time: float | None, workers: int,
                   seed: int, max_steps: int = 16) -> tuple[float, list, list]:
    """The best valid lower bound at duals ``p = centre + lam (pi - centre)``.

    ``centre`` must be dual feasible (no column has a negative reduced cost), so that
    ``sum(centre)`` is a bound; ``pi`` are the master's duals, whose exact pricing did not
    finish. Each step prices ``p`` exactly, anchor by anchor (every anchor not reached in
    time keeps its relaxation bound), and bounds the optimum by
    :func:`anchor_lagrangian_bound` at ``p``, valid for any ``p``. A step that proves no
    negative column makes ``p`` the new centre and doubles ``lam`` (at most 1/2); any other
    halves it.
    Near the centre the candidate sets of the anchors are small and exact pricing is quick,
    so the search climbs from the centre's bound towards the LP value (measured on full
    Tarragona, k = 5: the neighbour bound 13.93 % rises to 15.48 % in one 3-s step, where
    pricing at the master's duals does not finish a round in 5 minutes).

    Returns ``(bound, columns, steps)``: the negative columns met (worth pooling) and one
    ``(lam, bound, clean)`` per step.
    """
    n = Z.shape[0]
    sizes = range(k, min(2 * k - 1, n) + 1)
    best = _safe(float(np.sum(centre)), centre)
    lam = 0.5
    columns: list = []
    steps: list = []
    while len(steps) < max_steps and lam >= 1.0 / 64 and not deadline.expired():
        p = centre + lam * (pi - centre)
        step_deadline = deadline.child(fraction=0.5)
        vals, clean = {}, True
        for s in sizes:
            if step_deadline.expired():
                clean = False
                break
            res = anchored_pricing(Z, nbr_dist, p, k, s, deadline=step_deadline,
                                   time_limit=None if deterministic_time is not None else anchor_time,
                                   deterministic_time=deterministic_time, workers=workers, seed=seed)
            vals[s] = res["anchor_values"]
            clean = clean and res["proven"] and not res["columns"]
            columns.extend(res["columns"])
        if len(vals) < len(sizes):
            # Cut short by the step's time: the sizes not priced would need their
            # relaxation, an O(n^2 d) pass each without a deadline (10 s past the search's
            # deadline at a tenth of a core on Tarragona, k = 10), for a step bound that is
            # rarely the best: no bound from this step; a shorter step next.
            steps.append((lam, None, False))
            lam /= 2.0
            continue
        for s in sizes:
            if s not in vals:
                vals[s] = anchor_relaxation(Z, nbr_dist, p, s)[0]
        value = _safe(anchor_lagrangian_bound(p, vals, k), p)
        steps.append((lam, value, clean))
        best = max(best, value)
        if clean:
            centre = p
            lam = min(0.5, 2.0 * lam)
        else:
            lam /= 2.0
    return best, columns, steps


def _clip(bounds: dict) -> dict:
    return {s: min(0.0, v) for s, v in bounds.items()}


def _count_columns(n: int, k: int) -> int:
    return sum(math.comb(n, s) for s in range(k, min(2 * k - 1, n) + 1))


def _enumerate_columns(Z: np.ndarray, k: int, pool: ColumnPool, pi: np.ndarray, slack: float) -> int:
    """Pool every group of k..2k-1 records whose reduced cost is <= ``slack``."""
    import itertools

    n = Z.shape[0]
    added = 0
    tol = slack + 1e-9 * (float(np.abs(pi).sum()) + 1.0)
    for s in range(k, min(2 * k - 1, n) + 1):
        it = itertools.combinations(range(n), s)
        while True:
            chunk = np.fromiter(itertools.chain.from_iterable(itertools.islice(it, 20000)),
                                dtype=np.int64)
            if chunk.size == 0:
                break
            comb = chunk.reshape(-1, s)
            G = Z[comb]
            diff = G - G.mean(axis=1, keepdims=True)
            cost = np.einsum("cij,cij->c", diff, diff)
            rc = cost - pi[comb].sum(axis=1)
            for r in np.flatnonzero(rc <= tol):
                if pool.add(comb[r], float(cost[r])) is not None:
                    added += 1
    return added


def _wall_cap(ctx: Context) -> float | None:
    """With a deterministic budget the run's own time limit still caps the wall time (the
    result is then time-dependent, status ``limit``); without a limit, none."""
    rem = ctx.remaining()
    return max(0.01, rem) if math.isfinite(rem) else None


def _pricing_limit(ctx: Context, pricing_time: float) -> float:
    rem = ctx.remaining()
    return max(0.01, min(pricing_time, rem)) if math.isfinite(rem) else pricing_time


def _safe(value: float, pi: np.ndarray) -> float:
    """Lower a bound by a margin covering floating-point error in sums of duals and costs."""
    return value - 1e-9 * (float(np.abs(pi).sum()) + 1.0)


def _shrink(pool: ColumnPool, master, pi, best_labels, cap):
    rc = pool.reduced_costs(pi)
    must = set()
    for rows in groups_from_labels(canonical_labels(best_labels)):
        p = pool.position(rows)
        if p is not None:
            must.add(p)
    order = np.argsort(rc, kind="stable")
    keep = list(order[: cap // 2])
    keep = np.array(sorted(set(keep) | must), dtype=np.int64)
    pool.keep(keep)
    master.reset()


def _highs_set_partition(n, members, costs, time_limit):
    """Set partitioning MIP over given columns with HiGHS (scipy.optimize.milp), gap 0."""
    from scipy import sparse
    from scipy.optimize import Bounds, LinearConstraint, milp

    ind = np.concatenate(members)
    ptr = np.r_[0, np.cumsum([m.size for m in members])]
    A = sparse.csc_matrix((np.ones(ind.size), ind, ptr), shape=(n, len(members)))
    options = {"mip_rel_gap": 0.0, "disp": False}
    if time_limit is not None:
        options["time_limit"] = max(0.01, float(time_limit))
    r = milp(np.asarray(costs, dtype=np.float64), constraints=LinearConstraint(A, 1, 1),
             integrality=np.ones(len(members)), bounds=Bounds(0, 1), options=options)
    status = {0: "optimal", 1: "feasible"}.get(r.status, "failed")
    if r.x is None:
        return {"status": "unknown" if r.status == 1 else status, "columns": None, "bound": None}
    bound = getattr(r, "mip_dual_bound", None)
    return {"status": status, "columns": np.flatnonzero(r.x > 0.5), "bound": bound}


def _solve_mip(Z, k, pool, pi, lower, best_labels, best_sse, ctx, mip_time, mip_det, workers,
               mip_solver="highs", max_columns=None, cut_filter=None):
    """Set partitioning over the pooled columns of size k..2k-1 (HiGHS or CP-SAT); with
    ``max_columns``, over that many of least reduced cost plus the incumbent's groups; with
    ``cut_filter = (cut_duals, slack)``, only the columns whose reduced cost at the duals of a
    master with subset-row cuts (penalties included) is <= ``slack``, plus the incumbent's."""
    n = Z.shape[0]
    costs = np.asarray(pool.costs)
    sizes = np.array([m.size for m in pool.members])
    rc = pool.reduced_costs(pi)
    usable = sizes <= 2 * k - 1
    # A column with reduced cost above (incumbent - Lagrangian bound) cannot be in a better
    # solution: z(x) = LB-part + sum rc x >= lower + rc_C (when every rc bound is >= its min).
    if math.isfinite(lower):
        usable &= rc <= (best_sse - lower) + 1e-9 * max(1.0, best_sse)
    if cut_filter is not None:
        from ._pricing import CutRows

        (pi_c, sigma_c, triples, _value), slack = cut_filter
        rows_c = CutRows(n, np.asarray(triples, dtype=np.int64).reshape(-1, 3), -np.minimum(sigma_c, 0.0))
        rc_c = pool.reduced_costs(pi_c)
        for c in np.flatnonzero(usable & (rc_c <= slack)):
            usable[c] = rc_c[c] + rows_c.penalty(pool.members[c]) <= slack
        usable &= rc_c <= slack
    hint_cols = []
    for rows in groups_from_labels(canonical_labels(best_labels)):
        p = pool.position(rows)
        if p is not None and sizes[p] <= 2 * k - 1:
            usable[p] = True
            hint_cols.append(p)
    cols = np.flatnonzero(usable)
    capped_from = None
    if max_columns is not None and cols.size > max_columns:
        # A restricted MIP: on full-set pools (68,575 columns on Tarragona k = 10) HiGHS
        # found no partition in 120 s and overran its limit by 17-56 s.
        capped_from = int(cols.size)
        cols = np.union1d(cols[np.argsort(rc[cols], kind="stable")[:max_columns]],
                          np.asarray(hint_cols, dtype=np.int64))
    where = {int(c): i for i, c in enumerate(cols)}
    hint = [where[c] for c in hint_cols] if len(hint_cols) == len(groups_from_labels(canonical_labels(best_labels))) else None
    tl = None
    if mip_det is None or mip_solver == "highs":
        rem = ctx.remaining()
        tl = min(mip_time, rem) if math.isfinite(rem) else mip_time
        if tl <= 0.01:
            return None, {"mip_status": "skipped (no time left)"}
    fell_back = False
    if mip_solver == "highs":
        # HiGHS may overrun its limit (see above): when the run's deadline binds, it gets 85 %.
        tl_highs = 0.85 * tl if tl is not None and tl < mip_time else tl
        res = _highs_set_partition(n, [pool.members[c] for c in cols], costs[cols], tl_highs)
        info = {"mip_solver": "highs", "mip_status": res["status"], "mip_columns": int(cols.size),
                "_bound": res["bound"]}
        if capped_from is not None:
            info["mip_columns_capped_from"] = capped_from
        if res["columns"] is None and hint is not None and tl is not None and ctx.remaining() > 1.0:
            # HiGHS found no partition in time (scipy's milp takes no start); CP-SAT starts
            # from the incumbent's groups.
            mip_solver, fell_back = "cpsat", True
            tl = min(tl, ctx.remaining())
    if mip_solver != "highs":
        top = float(costs[cols].max())
        # every column costing 0 (duplicated records): 2**30 / 1e-300 is inf and 0 * inf nan
        scale = 2.0**30 / top if top > 2.0**30 / 1e300 else 1.0
        icost = np.rint(costs[cols] * scale).astype(np.int64)
        res = _ortools.cpsat_set_partition(n, [pool.members[c] for c in cols], icost, hint=hint,
                                           time_limit=tl if mip_det is None else _wall_cap(ctx),
                                           deterministic_time=mip_det, workers=workers,
                                           seed=ctx.seed())
        # Costs rint(F w): the true cost of any partition is >= (integer bound - 0.5 * groups) / F.
        bound = None
        if res["bound"] is not None:
            bound = (res["bound"] - 0.5 * (n // k)) / scale
        info = {"mip_solver": "highs, then cpsat" if fell_back else "cpsat",
                "mip_status": res["status"], "mip_columns": int(cols.size),
                "mip_cost_scale_factor": scale, "_bound": bound}
    if res["columns"] is None:
        return None, info
    labels = np.empty(n, dtype=np.int64)
    for g, c in enumerate(res["columns"]):
        labels[pool.members[cols[c]]] = g
    return labels, info


@register_method("column-generation",
                 summary="column generation on the set-partitioning model: certified lower bound and MIP over the generated groups")
def _column_generation_solver(Z: np.ndarray, k: int, ctx: Context, *, max_iterations: int | None = None,
                              neighbours: int = 0, columns_per_iteration: int = 0,
                              max_columns: int = 200000, exact: bool = True,
                              exact_max_records: int = 400, pricing_time: float = 20.0,
                              pricing_deterministic_time: float | None = None, mip: bool = True,
                              mip_time: float = 60.0, mip_deterministic_time: float | None = None,
                              workers: int = 1, lp_solver: str = "glop",
                              enumerate_limit: int = 50000, exact_model: str = "anchored",
                              mip_solver: str = "highs", anchor_time: float = 2.0,
                              close_gap: bool = True, stall_share: float = 0.25,
                              bound_share: float = 0.15, bound_steps: int | None = None,
                              mip_columns: int = 20_000, anchor_solver: str = "bb",
                              smoothing: float = 0.0, heuristic_share: float = 0.1,
                              exact_trigger: int | None = None, ascent_share: float = 0.2,
                              ascent_steps: int | None = None, ascent_nodes: int = 200,
                              ascent_switch: float = 0.25, cut_rounds: int | None = None,
                              cuts_per_round: int = 600) -> Solution:
    check_positive_int(max_iterations, "max_iterations", allow_none=True)
    check_positive_int(neighbours, "neighbours", minimum=0)
    check_positive_int(columns_per_iteration, "columns_per_iteration", minimum=0)
    check_positive_int(max_columns, "max_columns", minimum=100)
    check_positive_int(exact_max_records, "exact_max_records", minimum=1)
    check_number(pricing_time, "pricing_time", low=0, low_open=True)
    check_number(pricing_deterministic_time, "pricing_deterministic_time", low=0, low_open=True, allow_none=True)
    check_number(mip_time, "mip_time", low=0, low_open=True)
    check_number(mip_deterministic_time, "mip_deterministic_time", low=0, low_open=True, allow_none=True)
    check_positive_int(workers, "workers")
    check_choice(lp_solver, "lp_solver", _LP_SOLVERS)
    check_positive_int(enumerate_limit, "enumerate_limit", minimum=0)
    check_choice(exact_model, "exact_model", ("anchored", "global"))
    check_choice(mip_solver, "mip_solver", ("highs", "cpsat"))
    check_number(anchor_time, "anchor_time", low=0, low_open=True)
    check_number(stall_share, "stall_share", low=0, high=1)
    check_number(bound_share, "bound_share", low=0, high=0.9)
    check_positive_int(bound_steps, "bound_steps", minimum=0, allow_none=True)
    check_positive_int(mip_columns, "mip_columns", minimum=1)
    check_choice(anchor_solver, "anchor_solver", ("bb", "cpsat"))
    check_number(smoothing, "smoothing", low=0, high=0.99)
    check_number(heuristic_share, "heuristic_share", low=0, high=0.9)
    check_positive_int(exact_trigger, "exact_trigger", minimum=1, allow_none=True)
    check_number(ascent_share, "ascent_share", low=0, high=0.9)
    check_positive_int(ascent_steps, "ascent_steps", minimum=0, allow_none=True)
    check_positive_int(ascent_nodes, "ascent_nodes", minimum=1)
    check_number(ascent_switch, "ascent_switch", low=0, high=1)
    check_positive_int(cut_rounds, "cut_rounds", minimum=0, allow_none=True)
    check_positive_int(cuts_per_round, "cuts_per_round", minimum=1)
    if bound_share + ascent_share > 0.9:
        raise InvalidInputError(f"`bound_share` + `ascent_share` must be <= 0.9; got {bound_share + ascent_share:g}.")
    return solve_column_generation(
        Z, k, ctx, max_iterations=max_iterations, neighbours_count=neighbours,
        columns_per_iteration=columns_per_iteration, max_columns=max_columns, exact=exact,
        exact_max_records=exact_max_records, pricing_time=pricing_time,
        pricing_deterministic_time=pricing_deterministic_time, mip=mip, mip_time=mip_time,
        mip_deterministic_time=mip_deterministic_time, workers=workers, lp_solver=lp_solver,
        enumerate_limit=enumerate_limit, exact_model=exact_model, mip_solver=mip_solver,
        anchor_time=anchor_time, close_gap=close_gap, stall_share=stall_share,
        bound_share=bound_share, bound_steps=bound_steps, mip_columns=mip_columns,
        anchor_solver=anchor_solver, smoothing=smoothing, heuristic_share=heuristic_share,
        exact_trigger=exact_trigger, ascent_share=ascent_share, ascent_steps=ascent_steps,
        ascent_nodes=ascent_nodes, ascent_switch=ascent_switch, cut_rounds=cut_rounds,
        cuts_per_round=cuts_per_round)
