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
from dataclasses import dataclass, field

import numpy as np

from .. import _ortools
from .._context import Context
from .._errors import InvalidInputError
from .._partition import canonical_labels, groups_from_labels, sse
from .._registry import register_method
from .._result import Solution
from .._validation import check_choice, check_n_jobs, check_number, check_positive_int
from ..constructive._mdav import mdav_labels
from ._master import ColumnPool, group_cost, make_master
from ._anchored_pricing import CutRows, anchored_pricing
from ._branch_and_bound import _bb_kernel
from ._exact_pricing import enumerate_below, exact_pricing
from ._heuristic_pricing import heuristic_pricing
from ._lagrangian import (anchor_lagrangian_bound, anchor_relaxation, lagrangian_bound, neighbours, nn_dual,
                          record_bounds)
from ._record_ascent import record_ascent

__all__ = ["solve_column_generation", "seed_partitions", "ColumnGenerationOptions"]

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
                    phases: _Phases | None = None, first: tuple | None = None,
                    ) -> tuple[list[tuple[str, np.ndarray]], list[str]]:
    """Heuristic k-partitions that seed the column pool: MDAV, optimal runs along the MDAV
    order (Hansen-Mukherjee), V-MDAV, two-swap from the best of them, and ICSM from the
    MDAV as method ``icsm`` runs it (with restarts for ``heuristic_share`` of the time under a time limit,
    one deterministic run without); V-MDAV, two-swap and ICSM when registered. ``first``:
    the MDAV labels and order when the caller computed them already. Under a time limit the
    seeds after the first are skipped once it has passed."""
    from ..univariate._hansen_mukherjee import optimal_runs

    if phases is None:
        phases = _Phases(time.monotonic())
    notes = []
    order: list = []
    limited = ctx.deadline.limited
    if first is not None:
        labels, order = first[0], list(first[1])
    else:
        with phases("seed mdav", ctx.deadline):  # cut short by the deadline: the rest in principal-axis runs
            labels = mdav_labels(Z, k, order=order, deadline=ctx.deadline if limited else None)
    out = [("mdav", labels)]
    if limited and ctx.expired():
        notes.append("the time limit came during the first seed (MDAV): no further seeds")
        return out, notes
    try:
        with phases("seed mdav-order runs", ctx.deadline):
            hm_labels, _ = optimal_runs(Z, np.asarray(order), k)
        out.append(("mdav-order runs", np.asarray(hm_labels)))
    except Exception as exc:  # pragma: no cover - defensive, the seeds are optional
        notes.append(f"optimal runs seed skipped: {exc}")
    if limited and ctx.expired():
        notes.append("the time limit came during the seeds: seeded with MDAV and its runs only")
        return out, notes
    spec = optional_spec("method", "vmdav")
    if spec is None:
        notes.append("vmdav not available: seeded without it")
    else:
        with phases("seed vmdav", ctx.deadline):
            sol = spec.core(Z, k, ctx.child(stage="vmdav"))
        out.append(("vmdav", np.asarray(sol.labels)))
    # Two-swap from the best seed (at most a tenth of the time): a better incumbent for the
    # MIP, and its groups in the pool.
    swap = optional_spec("improvement", "two-swap")
    if swap is None:
        notes.append("two-swap not available: seeded without it")
    if limited and ctx.expired():
        notes.append("the time limit came during the seeds: no two-swap or ICSM seed")
        return out, notes
    if swap is not None:
        start = min(out, key=lambda item: sse(Z, item[1]))[1]
        sub = ctx.child(fraction=0.1, stage="seed two-swap")
        with phases("seed two-swap", sub.deadline):
            out.append(("two-swap", np.asarray(swap.core(Z, start, k, sub).labels)))
    # ICSM from MDAV, as method `icsm` runs it: it reaches in seconds partitions that the MIP
    # over the generated groups does not. From MDAV, not from the best seed, whose local
    # optimum it may not leave.
    icsm = optional_spec("improvement", "icsm")
    if icsm is None:
        notes.append("icsm not available: seeded without it")
    elif limited and ctx.expired():
        notes.append("the time limit came during the seeds: no ICSM seed")
    elif heuristic_share > 0:
        # First ICSM's own run (at most half the time, so that it can finish), then restarts
        # for heuristic_share of the time under a time limit.
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


def _option(default, doc: str):
    """A field of :class:`ColumnGenerationOptions`: its default and its one-line doc."""
    return field(default=default, metadata={"doc": doc})


@dataclass(frozen=True)
class ColumnGenerationOptions:
    """The options of method ``column-generation``, written once: the registry lists these
    fields (the CLI's ``--option NAME=VALUE``), :meth:`check` validates them at the public
    boundary, and the run reads them. Each field's ``doc`` metadata says what it does."""

    max_iterations: int | None = _option(None, "at most this many master LP solves; None: until converged")
    neighbours: int = _option(0, "candidates per record in heuristic pricing; 0: max(4k + 4, 16)")
    columns_per_iteration: int = _option(0, "columns added per pricing round; 0: max(50, n)")
    max_columns: int = _option(200000, "pool cap: above it the pool keeps the groups of least reduced cost")
    exact: bool = _option(True, "exact pricing when the heuristic finds no negative group")
    exact_max_records: int = _option(400, "largest reduced model of global exact pricing")
    pricing_time: float = _option(20.0, "seconds per exact pricing call (the most a raised anchor_time reaches)")
    pricing_deterministic_time: float | None = _option(None, "deterministic budget per pricing call (reproducible)")
    mip: bool = _option(True, "solve the set-partitioning MIP over the generated groups")
    mip_time: float = _option(60.0, "seconds for the MIP")
    mip_deterministic_time: float | None = _option(None, "deterministic budget of a CP-SAT MIP")
    n_jobs: int | None = _option(None, "CP-SAT search threads; None or 0: 1, -1: every available core")
    lp_solver: str = _option("glop", "master LP solver: 'glop' (warm re-solves) or 'highs'")
    enumerate_limit: int = _option(50000, "enumerate every group when there are at most this many")
    exact_model: str = _option("anchored", "exact pricing per anchor ('anchored') or one reduced model ('global')")
    mip_solver: str = _option("highs", "MIP solver: 'highs' or 'cpsat'")
    anchor_time: float = _option(2.0, "first seconds per anchored CP-SAT call, raised when pricing stalls")
    close_gap: bool = _option(True, "after an optimal MIP within 2 %, enumerate the groups that could be better")
    stall_share: float = _option(0.25, "share of the time left that one raised round of unproven anchors may use")
    bound_share: float = _option(0.15, "share of the column-generation time kept for the bound search")
    bound_steps: int | None = _option(None, "steps of the bound search; None: 16 under a time limit, else 0")
    mip_columns: int = _option(20_000, "pooled groups in the MIP, those of least reduced cost")
    anchor_solver: str = _option("bb", "per-anchor solver: 'bb' (branch and bound) or 'cpsat'")
    smoothing: float = _option(0.0, "Wentges smoothing of the priced duals; 0: off")
    heuristic_share: float = _option(0.1, "share of a time limit for ICSM restarts among the seeds")
    exact_trigger: int | None = _option(
        None, "with smoothing: a heuristic round adding fewer columns goes on to exact pricing; None: max(10, n/20)")
    ascent_share: float = _option(0.2, "share of the column-generation time kept for the record ascent")
    ascent_steps: int | None = _option(None, "steps of the record ascent; None: 50 under a time limit, else 0")
    ascent_nodes: int = _option(200, "node budget of each branch and bound in the ascent")
    ascent_switch: float = _option(
        0.25, "share of the loop's time after which, with no exact round finished, the ascent takes over; 1: never")
    cut_rounds: int | None = _option(
        None, "rounds of subset-row cuts after a solved LP; None: 50 under a time limit at k <= 3, else 0")
    cuts_per_round: int = _option(600, "subset-row cuts added per round")

    def check(self) -> None:
        """Raise :class:`InvalidInputError` (or ``InvalidTypeError``) naming the first option
        out of its range."""
        check_positive_int(self.max_iterations, "max_iterations", allow_none=True)
        check_positive_int(self.neighbours, "neighbours", minimum=0)
        check_positive_int(self.columns_per_iteration, "columns_per_iteration", minimum=0)
        check_positive_int(self.max_columns, "max_columns", minimum=100)
        check_positive_int(self.exact_max_records, "exact_max_records", minimum=1)
        check_number(self.pricing_time, "pricing_time", low=0, low_open=True)
        check_number(self.pricing_deterministic_time, "pricing_deterministic_time", low=0, low_open=True,
                     allow_none=True)
        check_number(self.mip_time, "mip_time", low=0, low_open=True)
        check_number(self.mip_deterministic_time, "mip_deterministic_time", low=0, low_open=True, allow_none=True)
        check_n_jobs(self.n_jobs, default=1)
        check_choice(self.lp_solver, "lp_solver", _LP_SOLVERS)
        check_positive_int(self.enumerate_limit, "enumerate_limit", minimum=0)
        check_choice(self.exact_model, "exact_model", ("anchored", "global"))
        check_choice(self.mip_solver, "mip_solver", ("highs", "cpsat"))
        check_number(self.anchor_time, "anchor_time", low=0, low_open=True)
        check_number(self.stall_share, "stall_share", low=0, high=1)
        check_number(self.bound_share, "bound_share", low=0, high=0.9)
        check_positive_int(self.bound_steps, "bound_steps", minimum=0, allow_none=True)
        check_positive_int(self.mip_columns, "mip_columns", minimum=1)
        check_choice(self.anchor_solver, "anchor_solver", ("bb", "cpsat"))
        check_number(self.smoothing, "smoothing", low=0, high=0.99)
        check_number(self.heuristic_share, "heuristic_share", low=0, high=0.9)
        check_positive_int(self.exact_trigger, "exact_trigger", minimum=1, allow_none=True)
        check_number(self.ascent_share, "ascent_share", low=0, high=0.9)
        check_positive_int(self.ascent_steps, "ascent_steps", minimum=0, allow_none=True)
        check_positive_int(self.ascent_nodes, "ascent_nodes", minimum=1)
        check_number(self.ascent_switch, "ascent_switch", low=0, high=1)
        check_positive_int(self.cut_rounds, "cut_rounds", minimum=0, allow_none=True)
        check_positive_int(self.cuts_per_round, "cuts_per_round", minimum=1)
        if self.bound_share + self.ascent_share > 0.9:
            raise InvalidInputError("`bound_share` + `ascent_share` must be <= 0.9; "
                                    f"got {self.bound_share + self.ascent_share:g}.")


def solve_column_generation(Z: np.ndarray, k: int, ctx: Context, *, seeds: list[np.ndarray] | None = None,
                            integral_groups: bool = False, cut_time: float | None = None,
                            lp_share: float = 0.8, enumerate_anchor: int = 300_000,
                            **options) -> Solution:
    """The column-generation engine (see :func:`column_generation`); ``options`` are the
    fields of :class:`ColumnGenerationOptions`, taken as valid.

    ``seeds``: the k-partitions whose groups start the pool (default: those of
    :func:`seed_partitions`; callers passing their own, as decomposition and auto do, also
    skip the record ascent and the cuts by default). With ``integral_groups``, a converged
    run's ``info["integral_groups"]`` lists the groups (row arrays) at value 1 in the optimal
    master LP (``auto``'s dives fix them). ``cut_time``: at most this many seconds for the
    subset-row cut rounds (``auto`` caps them so that its dives keep their time); None: the
    bound search's and the ascent's time. ``lp_share``: the share of the time for the LP
    phases when a MIP follows. ``enumerate_anchor``: the most groups one anchor enumerates."""
    run = _ColumnGenerationRun(Z, k, ctx, ColumnGenerationOptions(**options), seeds=seeds,
                               integral_groups=integral_groups, cut_time=cut_time, lp_share=lp_share,
                               enumerate_anchor=enumerate_anchor)
    return run.run()


class _ColumnGenerationRun:
    """One run of column generation, a method per phase: initial columns, the LP/pricing loop
    (heuristic, then exact rounds), subset-row cuts, bound search, record ascent, the MIP
    over the pool (with the gap-closing enumerations), final ICSM restarts, result.

    The best partition (``best_labels``, ``best_sse``) and the best proven bound (``lower``,
    with its ``source``) only ever improve; ``pi`` are the latest master duals."""

    def __init__(self, Z: np.ndarray, k: int, ctx: Context, opt: ColumnGenerationOptions, *,
                 seeds, integral_groups: bool, cut_time: float | None, lp_share: float,
                 enumerate_anchor: int):
        self.Z, self.k, self.ctx, self.opt = Z, k, ctx, opt
        self.n = Z.shape[0]
        self.seeds = seeds
        self.own_seeds = seeds is None  # the standalone method (decomposition and auto pass their own)
        self.integral_groups, self.cut_time = integral_groups, cut_time
        self.lp_share, self.enumerate_anchor = lp_share, enumerate_anchor
        self.started = time.monotonic()
        self.threads = check_n_jobs(opt.n_jobs, default=1)  # CP-SAT's num_workers
        self.info: dict = {"lp_solver": opt.lp_solver, "cpsat_workers": self.threads}
        self.notes: list[str] = []
        self.sizes = range(k, min(2 * k - 1, self.n) + 1)
        # Loop state: the latest master solution, the best bounds, the stabilisation centre.
        self.pi = self.rec = self.lp_value = self.lp_x = None
        self.lb_pi = self.lb_filter = -math.inf
        self.converged, self.switched, self.status = False, False, "done"
        self.it = self.exact_rounds = self.mispricings = self.bb_nodes = self.exact_calls = 0
        self.finished_rounds = 0  # exact rounds that priced every size to a proof
        self.exact_det = 0.0
        self.priced_bounds: list = []
        self.info_anchor: list = []
        self.anchor_time_raised: list = []
        self.factors: list = []
        self.history_sources: dict = {}
        self.anchor_time = opt.anchor_time  # raised when exact pricing stalls
        self.full_rounds = None  # every exact round prices every size (decided at the first)
        self.cut_duals = None

    # -- the run ----------------------------------------------------------------
    def run(self) -> Solution:
        if self.n < 2 * self.k:
            value = group_cost(self.Z, np.arange(self.n))
            self.info.update(iterations=0, converged=True, lp_value=value)
            return Solution(labels=np.zeros(self.n, dtype=np.int64), status="done", lower_bound=value,
                            message="fewer than 2k records: one group, optimal", info=self.info)
        self.phases = _Phases(self.started)
        self.info["phases"] = self.phases.rows
        self.info["steps"] = self.phases.steps
        self._initial_columns()
        if self.cut_short is not None:
            return self._seed_result()
        self._plan_time()
        self._pricing_loop()
        self._subset_row_cuts()
        self._bound_search()
        self._record_ascent()
        self._loop_info()
        self._mip()
        self._final_icsm()
        return self._result()

    def _raise_lower(self, value: float, why: str) -> None:
        if value > self.lower:
            self.lower, self.source = value, why
            self.history_sources[why] = self.history_sources.get(why, 0) + 1

    def _offer(self, labels: np.ndarray, value: float, found_by: str) -> None:
        self.best_labels, self.best_sse = labels, value
        self.ctx.offer(labels, value)
        self.info["found_by"] = found_by

    # -- initial columns ----------------------------------------------------------
    def _initial_columns(self) -> None:
        """Neighbour lists, the seed partitions and their groups in the pool, the master,
        and the neighbour bound."""
        Z, k, n, ctx, opt = self.Z, self.k, self.n, self.ctx, self.opt
        # Neighbours first (O(n^2 d)): the neighbour bound exists before the seeds use the time.
        L = opt.neighbours or min(n, max(4 * k + 4, 16))
        self.L = max(L, min(n, 2 * k))
        self.cut_short = None
        first = None
        if ctx.deadline.limited and self.seeds is None:
            # Under a time limit the first seed comes first: a short limit still gets MDAV
            # (cut short by the deadline, if need be, with the rest in principal-axis runs).
            order: list = []
            with self.phases("seed mdav", ctx.deadline):
                labels = mdav_labels(Z, k, order=order, deadline=ctx.deadline)
            first = (labels, order)
            ctx.offer(labels, sse(Z, labels))
        with self.phases("neighbours", ctx.deadline):
            found = neighbours(Z, self.L, deadline=ctx.deadline if ctx.deadline.limited else None)
        if found is None:  # the time limit came first: the seeds so far
            self.cut_short = "while the neighbour lists were computed"
            if self.seeds is None:
                self.seeds = [first[0]]
            self.lower, self.source = -math.inf, "none"
        else:
            self.nbr_idx, self.nbr_dist = found
        names = None
        if self.seeds is None:
            named, self.notes = seed_partitions(Z, k, ctx, heuristic_share=opt.heuristic_share,
                                                phases=self.phases, first=first)
            self.seeds = [lab for _, lab in named]
            names = [name for name, _ in named]
            self.info["seeds"] = {name: float(sse(Z, lab)) for name, lab in named}
        self.best_labels, self.best_sse = None, math.inf
        for pos, lab in enumerate(self.seeds):
            value = sse(Z, lab)
            if value < self.best_sse:
                self.best_labels, self.best_sse = np.asarray(lab), value
                self.info["found_by"] = f"seed {names[pos]}" if names else "seed"
        ctx.offer(self.best_labels, self.best_sse)
        if self.cut_short is None and ctx.deadline.limited and ctx.expired():
            self.cut_short = "during the seed partitions"
            self.lower, self.source = -math.inf, "none"
        if self.cut_short is not None:
            return
        self.pool = ColumnPool(n)
        for lab in self.seeds:
            for rows in _partition_columns(lab, k):
                if rows.size <= 2 * k - 1:
                    self.pool.add(rows, group_cost(Z, rows))
        # Groups of 2k or more from a seed: pooled anyway, so that the master stays feasible.
        for lab in self.seeds:
            for rows in _partition_columns(lab, k):
                if rows.size > 2 * k - 1:
                    self.pool.add(rows, group_cost(Z, rows))
        self.per_iter = opt.columns_per_iteration or max(50, n)
        self.exact_trigger = opt.exact_trigger if opt.exact_trigger is not None else max(10, self.per_iter // 20)
        self.master = make_master(opt.lp_solver, self.pool)
        # A dual-feasible point from nearest neighbours alone: its sum bounds the optimum before
        # any LP, and it is the first centre of the bound search and of the smoothing.
        self.centre = nn_dual(self.nbr_dist, k)
        self.lower = _safe(float(self.centre.sum()), self.centre)
        self.source = "neighbour"
        self.info["nn_bound"] = self.lower
        self.stab_centre, self.stab_bound = self.centre.copy(), self.lower

    def _plan_time(self) -> None:
        """The shares of the time: the loop, the bound search, the ascent (both only under a
        time limit by default), the cuts, and the MIP after them."""
        ctx, opt = self.ctx, self.opt
        total = ctx.remaining()
        finite = math.isfinite(total)
        lp_part = self.lp_share if opt.mip else 1.0
        self.bound_steps = opt.bound_steps if opt.bound_steps is not None else (16 if finite else 0)
        self.search_seconds = opt.bound_share * lp_part * total if finite else None
        reserve = opt.bound_share if (opt.exact and self.bound_steps) else 0.0
        # The ascent and the cuts, by default, only for the method itself: callers passing
        # their own seeds keep their whole time for the partition.
        self.ascent_steps = opt.ascent_steps if opt.ascent_steps is not None else (
            50 if (finite and self.own_seeds) else 0)
        self.ascent_seconds = opt.ascent_share * lp_part * total if finite else None
        self.ascent_on = bool(opt.exact and self.ascent_steps and opt.ascent_share > 0)
        if self.ascent_on:
            reserve += opt.ascent_share
        # Cuts by default at k <= 3 only: at larger k their time would come out of the final ICSM.
        self.cut_rounds = opt.cut_rounds if opt.cut_rounds is not None else (
            50 if (finite and self.own_seeds and self.k <= 3) else 0)
        if ctx.deadline.limited and (opt.mip or reserve):
            self.cg_ctx = ctx.child(fraction=lp_part * (1.0 - reserve))
        else:
            self.cg_ctx = ctx
        # The end of the loop's, the bound search's and the ascent's time (the MIP's after it).
        self.bound_end = ctx.deadline.child(fraction=lp_part)
        self.loop_started = time.monotonic()
        self.loop_budget = self.cg_ctx.remaining()

    # -- LP / pricing loop ------------------------------------------------------------
    def _pricing_loop(self) -> None:
        """Master LP, heuristic pricing, and exact pricing when the heuristic finds little,
        until the LP is solved or a limit is reached."""
        opt = self.opt
        while self._may_iterate():
            self.it += 1
            if not self._solve_master():
                break
            added = self._heuristic_round()
            mode = "heuristic"
            # With smoothing, a heuristic round adding only a few columns (the heuristic
            # phase's tail) goes on to an exact round too, which raises the centre and the bound.
            few = opt.smoothing > 0.0 and opt.exact and 0 < added < self.exact_trigger
            if added == 0 or few:
                if not opt.exact:
                    self.notes.append("heuristic pricing found no negative column; exact pricing disabled")
                    break
                mode = "exact"
                if self._exact_rounds(pending=added):
                    break
            self.ctx.report(iteration=self.it, sse=self.best_sse, lower_bound=self.lower,
                            stage="column generation", lp=self.lp_value, columns=len(self.pool), pricing=mode)
            if len(self.pool) > opt.max_columns:
                _shrink(self.pool, self.master, self.pi, self.best_labels, opt.max_columns)

    def _may_iterate(self) -> bool:
        opt, cg_ctx = self.opt, self.cg_ctx
        if opt.max_iterations is not None and self.it >= opt.max_iterations:
            self.status = "limit"
            self.notes.append(f"iteration limit {opt.max_iterations} reached before convergence")
            return False
        if cg_ctx.expired() and self.it > 0:
            self.status = "limit"
            self.notes.append("time limit reached during column generation")
            return False
        if self.ascent_on and self.it > 0 and not self.finished_rounds and math.isfinite(self.loop_budget) \
                and cg_ctx.remaining() <= (1.0 - opt.ascent_switch) * self.loop_budget:
            # No exact round finishes, so the loop proves no more than the master duals' cheap
            # bound: the rest of its time, and the bound search's, go to the record ascent.
            self.switched = True
            self.status = "limit"
            self.notes.append(f"no exact pricing round finished in {time.monotonic() - self.loop_started:.0f} s "
                              f"of column generation: its remaining time went to the record ascent")
            return False
        return True

    def _solve_master(self) -> bool:
        """Solve the master LP and take the cheap bound at its duals; False to stop the loop."""
        cg_ctx = self.cg_ctx
        rem = cg_ctx.remaining()
        if self.it == 1:
            # The master over the seeds' groups is always solved once, so that a run cut short
            # still reports duals and an LP value.
            rem = max(rem, 1.0)
        with self.phases.step("master LP", cg_ctx.deadline):
            lp = self.master.solve(time_limit=rem if math.isfinite(rem) else None)
        if lp["status"] != "optimal":  # the seeds keep the master feasible: time ran out
            self.notes.append("time limit reached while solving the master LP" if cg_ctx.expired()
                              else f"master LP failed: {lp.get('message', '')}")
            self.status = "limit"
            return False
        self.pi, self.lp_value = lp["duals"], lp["objective"]
        self.lp_x = lp.get("x")
        # lb_pi: the bound at the current duals; lb_filter: the same with every size bound
        # clipped at 0, so that z(x) >= lb_filter + rc_C for every partition x using column C
        # (a column with rc_C > incumbent - lb_filter is in no better partition).
        _, self.rec = record_bounds(self.nbr_dist, self.pi, self.k)
        self.lb_pi = _safe(lagrangian_bound(self.pi, self.rec, self.n), self.pi)
        self.lb_filter = _safe(lagrangian_bound(self.pi, _clip(self.rec), self.n), self.pi)
        self._raise_lower(self.lb_pi, "Lagrangian (master duals)")
        if cg_ctx.expired():
            self.status = "limit"
            self.notes.append("time limit reached during column generation")
            return False
        return True

    def _heuristic_round(self) -> int:
        """Heuristic pricing (at the smoothed duals with smoothing); pools the groups negative
        at the master's duals and returns their number."""
        pi, opt = self.pi, self.opt
        price = pi if opt.smoothing == 0.0 else opt.smoothing * self.stab_centre + (1.0 - opt.smoothing) * pi
        with self.phases.step("heuristic pricing", self.cg_ctx.deadline):
            cols = heuristic_pricing(self.Z, self.nbr_idx, price, self.k, deadline=self.cg_ctx.deadline)
        added = 0
        for rows, _rc in cols[:self.per_iter]:
            cost = group_cost(self.Z, rows)
            if cost - float(pi[rows].sum()) < -1e-9 and self.pool.add(rows, cost) is not None:
                added += 1
        return added

    def _exact_rounds(self, pending: int) -> bool:
        """Exact rounds at this master solution (smoothed duals first, halving the smoothing
        on a mis-pricing); ``pending``: heuristic columns the master has not seen. Returns
        True to stop the loop (LP solved, or pricing can prove no more)."""
        opt, cg_ctx = self.opt, self.cg_ctx
        if self.full_rounds is None:
            # Decided at the first exact round: importing numba costs seconds, which short runs
            # that never reach exact pricing should not pay.
            with self.phases("pricing kernel (numba import or compile)", cg_ctx.deadline):
                self.full_rounds = opt.exact_model == "anchored" and opt.anchor_solver == "bb" and \
                    _bb_kernel(points=True, deadline=cg_ctx.deadline) is not None
        nsizes = len(self.sizes)
        alpha = opt.smoothing
        while True:
            if alpha > 0.0:
                price = alpha * self.stab_centre + (1.0 - alpha) * self.pi
                rec_p = record_bounds(self.nbr_dist, price, self.k)[1]
            else:
                price, rec_p = self.pi, self.rec
            self.exact_rounds += 1
            rnd = self._exact_round(price)
            self._round_bound(price, rec_p, rnd, alpha)
            found, proven, unproven = rnd["found"], rnd["proven"], rnd["unproven"]
            full_round = found == 0 and len(proven) == nsizes
            if len(proven) == nsizes and all(proven):
                self.finished_rounds += 1
            if self.lp_value is not None and \
                    self.stab_bound >= self.lp_value - 1e-7 * max(1.0, abs(self.lp_value)):
                self.converged = True  # the bound reached the LP value: no column can lower it
                self.info["converged_by"] = "bound = LP value"
                return True
            if rnd["improving"] or pending:
                return False  # the master changes: solve it again
            if alpha > 0.0:
                # Mis-pricing (no column negative at the master's duals): price closer to them.
                self.mispricings += 1
                alpha = alpha / 2.0 if alpha > 0.125 else 0.0
                if cg_ctx.expired():
                    self.status = "limit"
                    self.notes.append("time limit reached during exact pricing")
                    return True
                continue
            # Stalled at the master's duals with anchors unproven at their per-call limit: more
            # time per anchor (fourfold, at most pricing_time, and at most what lets a round of
            # them fit in stall_share of the time left), then price again.
            raised = min(opt.pricing_time, 4 * self.anchor_time,
                         opt.stall_share * cg_ctx.remaining() / max(unproven, 1))
            can_raise = (found == 0 and unproven > 0 and not cg_ctx.expired()
                         and raised >= 1.25 * self.anchor_time and opt.pricing_deterministic_time is None)
            if full_round:
                self.converged = all(proven)
                if not self.converged and can_raise:
                    self.anchor_time = raised
                    self.anchor_time_raised.append(raised)
                    continue
                if not self.converged:
                    self.notes.append(f"exact pricing: {unproven} anchors unproven at {self.anchor_time:g} s each")
                return True
            if can_raise:
                self.anchor_time = raised
                self.anchor_time_raised.append(raised)
                continue
            if found == 0:
                self.status = "limit"
                self.notes.append("time limit reached during exact pricing" if cg_ctx.expired() else
                                  "exact pricing stopped at its per-call limit without a proof")
                return True
            return False

    def _exact_round(self, price: np.ndarray) -> dict:
        """Exact pricing of every size at ``price`` (stopping after the first size with new
        columns unless rounds are full); pools the negative groups found."""
        Z, k, opt = self.Z, self.k, self.opt
        rnd = {"bounds": {}, "anchor_vals": {}, "proven": [], "found": 0, "improving": 0, "unproven": 0}
        for s in self.sizes:
            if self.cg_ctx.expired():
                break
            res, found_cols = self._price_size(price, s, rnd)
            if res["factor"] is not None:
                self.factors.append(res["factor"])
            rnd["bounds"][s] = res["bound"]
            rnd["proven"].append(res["proven"])
            for rows, rc in found_cols[:self.per_iter]:
                if rc < -1e-9:
                    cost = group_cost(Z, rows)
                    if self.pool.add(rows, cost) is not None:
                        rnd["found"] += 1
                        if cost - float(self.pi[rows].sum()) < -1e-9:
                            rnd["improving"] += 1  # negative at the master's duals, not only at `price`
            if rnd["found"] and s < self.sizes[-1] and not self.full_rounds:
                rnd["proven"].append(False)  # not a final round: the remaining sizes wait
                break
            if opt.exact_model != "anchored" and rnd["found"]:
                # Negative columns near the exact one, by the heuristic from its members.
                more = heuristic_pricing(Z, self.nbr_idx, price, k, seeds=found_cols[0][0])
                for rows, _rc in more[: max(10, self.per_iter // 10)]:
                    self.pool.add(rows, group_cost(Z, rows))
        return rnd

    def _price_size(self, price: np.ndarray, s: int, rnd: dict) -> tuple[dict, list]:
        """One exact pricing call for size ``s`` (anchored or global); its result and the
        groups it found, as ``(rows, rc)``."""
        Z, k, opt, cg_ctx = self.Z, self.k, self.opt, self.cg_ctx
        det = opt.pricing_deterministic_time
        tl = None if det is not None else _pricing_limit(cg_ctx, opt.pricing_time)
        if opt.exact_model == "anchored":
            with self.phases.step("exact pricing (anchored)", cg_ctx.deadline):
                res = anchored_pricing(Z, self.nbr_dist, price, k, s, deadline=cg_ctx.deadline,
                                       enumerate_limit=self.enumerate_anchor,
                                       time_limit=None if tl is None else min(tl, self.anchor_time),
                                       max_found=None if self.full_rounds else max(10, self.per_iter // 5),
                                       deterministic_time=det, workers=self.threads, seed=self.ctx.seed(),
                                       anchor_solver=opt.anchor_solver)
            self.exact_calls += res["cpsat_calls"]
            self.bb_nodes += res.get("bb_nodes", 0)
            rnd["unproven"] += max(0, res["anchors"] - res["solved"])  # anchors stopped at their limit
            self.info_anchor.append((s, res["anchors"], res["solved"]))
            rnd["anchor_vals"][s] = res["anchor_values"]
            return res, res["columns"]
        with self.phases.step("exact pricing (global)", cg_ctx.deadline):
            res = exact_pricing(Z, self.nbr_dist, price, k, s, time_limit=tl, deterministic_time=det,
                                workers=self.threads, seed=self.ctx.seed(), max_records=opt.exact_max_records)
        self.exact_calls += 1
        self.exact_det += res.get("deterministic_time", 0.0)
        rnd["unproven"] += 0 if res["proven"] else 1
        return res, ([(res["column"], res["rc"])] if res["column"] is not None else [])

    def _round_bound(self, price: np.ndarray, rec_p: dict, rnd: dict, alpha: float) -> None:
        """The Lagrangian bound an exact round proves at ``price`` (per size, and per anchor
        charged once); raises the bound and moves the stabilisation centre."""
        n, k = self.n, self.k
        bounds, anchor_vals = rnd["bounds"], rnd["anchor_vals"]
        for s in self.sizes:
            bounds.setdefault(s, rec_p[s])  # sizes not reached: the per-record bound
        lb_p = _safe(lagrangian_bound(price, bounds, n), price)
        lb_p_filter = _safe(lagrangian_bound(price, _clip(bounds), n), price)
        missing = len(anchor_vals) < len(self.sizes)
        if anchor_vals and not (missing and self.cg_ctx.expired()):
            # Sizes not priced this round take their relaxation (an O(n^2 d) pass per size:
            # skipped once the time is up).
            for s in self.sizes:
                if s not in anchor_vals:
                    anchor_vals[s] = anchor_relaxation(self.Z, self.nbr_dist, price, s)[0]
            lb_anchor = _safe(anchor_lagrangian_bound(price, anchor_vals, k), price)
            lb_p = max(lb_p, lb_anchor)
            lb_p_filter = max(lb_p_filter, lb_anchor)
        if alpha == 0.0:
            self.lb_pi = max(self.lb_pi, lb_p)
            self.lb_filter = max(self.lb_filter, lb_p_filter)
        self._raise_lower(lb_p, "Lagrangian (master duals)" if alpha == 0.0 else "Lagrangian (smoothed duals)")
        if len(self.priced_bounds) < 1000:  # one (alpha, bound) per exact round, for checks
            self.priced_bounds.append((float(alpha), float(lb_p)))
        if lb_p > self.stab_bound:
            self.stab_centre, self.stab_bound = price, lb_p

    # -- bounds beyond the loop ---------------------------------------------------------
    def _subset_row_cuts(self) -> None:
        """After a solved LP: subset-row cuts on triples, priced with their penalties, in the
        time of the bound search and the ascent (which a solved LP skips)."""
        opt = self.opt
        if not (opt.exact and self.cut_rounds and self.converged and self.pi is not None and self.full_rounds
                and not self.ctx.expired()):
            return
        from ._cuts import cut_phase

        cut_info: dict = {"bound_before": float(self.lower)}
        lp_value = self.lp_value

        def on_bound(value: float, proven_lp: bool) -> None:
            if value > lp_value:
                self._raise_lower(value, "LP value with subset-row cuts" if proven_lp else
                                  "Lagrangian (subset-row cuts)")

        cut_end = self.bound_end if self.cut_time is None else self.bound_end.child(self.cut_time)
        with self.phases("subset-row cuts", cut_end):
            cres = cut_phase(self.Z, self.k, self.nbr_dist, self.pool, deadline=cut_end,
                             max_rounds=self.cut_rounds, per_round=opt.cuts_per_round, per_iter=self.per_iter,
                             anchor_time=self.anchor_time, on_bound=on_bound, lp_value=lp_value)
        cut_info.update({key: cres[key] for key in ("bound", "lp_value", "rounds", "cuts", "columns",
                                                    "lp_solves", "pricing_rounds", "bb_nodes", "lp_seconds",
                                                    "pricing_seconds", "separation_seconds", "stopped")})
        if cres["stopped"]:
            self.notes.append(f"subset-row cuts stopped: {cres['stopped']}")
        cut_info["bound_after"] = float(self.lower)
        self.info["subset_row_cuts"] = cut_info
        self.cut_duals = cres.get("proven_duals")  # (pi, sigma, triples, value) proven by pricing

    def _bound_search(self) -> None:
        """When the LP was not solved: bounds at duals between the neighbour centre and the
        master's duals (see :func:`_centre_search`)."""
        opt, ctx = self.opt, self.ctx
        if not (opt.exact and self.bound_steps and not self.converged and self.pi is not None
                and not ctx.expired() and not self.switched
                and (self.search_seconds is None or self.search_seconds > 0)):
            return
        deadline = ctx.deadline.child(self.search_seconds)
        with self.phases("bound search", deadline):
            found_bound, extra, steps = _centre_search(
                self.Z, self.nbr_dist, self.k, self.centre, self.pi, deadline=deadline,
                anchor_time=self.anchor_time, deterministic_time=opt.pricing_deterministic_time,
                workers=self.threads, seed=ctx.seed(), max_steps=self.bound_steps)
        self.info["bound_search"] = steps
        self._raise_lower(found_bound, "Lagrangian (bound search)")
        for rows, _rc in extra:
            self.pool.add(rows, group_cost(self.Z, rows))

    def _record_ascent(self) -> None:
        """When the LP was not solved: the per-record Lagrangian from truncated pricing,
        climbing through dual-feasible points from the best-bound duals so far."""
        opt, ctx = self.opt, self.ctx
        if not (opt.exact and self.ascent_steps and not self.converged and self.pi is not None
                and not ctx.expired() and (self.ascent_seconds is None or self.ascent_seconds > 0)):
            return
        deadline = self.bound_end if self.switched else ctx.deadline.child(self.ascent_seconds)
        with self.phases("record ascent", deadline):
            asc = record_ascent(self.Z, self.nbr_dist, self.stab_centre, self.k, deadline=deadline,
                                node_limit=opt.ascent_nodes, max_steps=self.ascent_steps)
        self.info["record_ascent"] = [(round(b, 6), nodes, done) for b, nodes, done in asc["steps"]]
        self._raise_lower(_safe(asc["bound"], asc["duals"]), "Lagrangian (truncated pricing, record ascent)")
        for rows in asc["columns"][: max(self.n, 1000)]:
            self.pool.add(rows, group_cost(self.Z, rows))

    def _loop_info(self) -> None:
        """What the LP phases leave in ``info``."""
        info, k = self.info, self.k
        if self.integral_groups and self.converged and self.lp_x is not None:
            # the last master solution is optimal: its columns at 1, before the pool grows
            info["integral_groups"] = [self.pool.members[p] for p in np.flatnonzero(np.asarray(self.lp_x) > 0.99)]
        info.update(iterations=self.it, converged=self.converged, lp_value=self.lp_value, columns=len(self.pool),
                    neighbours=int(self.L), exact_pricing_calls=self.exact_calls, exact_model=self.opt.exact_model,
                    last_anchor_rounds=self.info_anchor[-(2 * k):], anchor_time_raised_to=self.anchor_time_raised,
                    pricing_deterministic_time=round(self.exact_det, 3),
                    cost_scale_factor=min(self.factors) if self.factors else None,
                    cg_seconds=round(time.monotonic() - self.started, 3))

    # -- integer solution -----------------------------------------------------------------
    def _run_mip(self, complete: bool, cut_filter=None) -> str | None:
        """The MIP over the pool; ``complete``: every group that could be better is pooled, so
        an optimal MIP proves its bound. Returns the MIP's status."""
        opt, ctx = self.opt, self.ctx
        with self.phases("MIP" + (" (complete)" if complete else ""), ctx.deadline):
            mip_labels, mip_info = _solve_mip(self.Z, self.k, self.pool, self.pi, self.lb_filter, self.best_labels,
                                              self.best_sse, ctx, opt.mip_time, opt.mip_deterministic_time,
                                              self.threads, opt.mip_solver,
                                              max_columns=None if complete else opt.mip_columns,
                                              cut_filter=cut_filter)
        self.info.update({key: v for key, v in mip_info.items() if not key.startswith("_")})
        if mip_labels is not None:
            value = sse(self.Z, mip_labels)
            if value < self.best_sse:
                self._offer(mip_labels, value, "MIP over the generated groups")
        if complete and mip_info.get("mip_status") == "optimal" and mip_info.get("_bound") is not None:
            # Every column that could beat the incumbent was in the MIP, solved to optimality:
            # its bound (less the solver's tolerance) bounds the optimum.
            proven = float(mip_info["_bound"])
            proven -= 1e-7 * abs(proven) + 1e-9
            self._raise_lower(min(self.best_sse, proven),
                              "MIP over every group that could be better (optimality proof)")
            self.info["optimal"] = True
        return mip_info.get("mip_status")

    def _mip(self) -> None:
        """The integer solution over the pool: over every group when there are few, over the
        groups within the cut master's slack, or over the pool and then, when the gap is
        small, over every group that could be better."""
        opt, ctx = self.opt, self.ctx
        if not (opt.mip and self.pi is not None and not ctx.expired()):
            return
        if self.converged and math.isfinite(self.lb_filter) and _count_columns(self.n, self.k) <= opt.enumerate_limit:
            # Small instance: pool every group that could be in a better solution, so that an
            # optimal MIP over the pool is a proven optimum.
            self.info["enumerated_columns"] = _enumerate_columns(self.Z, self.k, self.pool, self.pi,
                                                                 self.best_sse - self.lb_filter)
            self._run_mip(True)
            return
        cut_slack = _cut_slack(self.cut_duals, self.best_sse, self.n, self.k)
        if self.converged and opt.close_gap and cut_slack is not None and self.best_sse > 0 \
                and 1e-6 < cut_slack / self.best_sse <= 0.02 and cut_slack < self.best_sse - self.lb_filter:
            self._close_gap_with_cuts(cut_slack)
        elif self._run_mip(False) == "optimal" and self.converged and math.isfinite(self.lb_filter) \
                and opt.close_gap and 1e-6 < (self.best_sse - self.lb_filter) / max(self.best_sse, 1e-300) <= 0.02 \
                and not ctx.expired():
            self._close_gap()

    def _close_gap_with_cuts(self, cut_slack: float) -> None:
        """At the duals of the master with cuts every group's reduced cost (penalties included)
        is >= 0, so a better partition holds only groups within the slack
        (docs/guide/lower-bounds.md): pool them all, then the MIP over those and the
        incumbent's groups. When the enumeration cannot finish, the MIP runs over the pool."""
        ctx = self.ctx
        complete, added = _enumerate_with_cuts(self.Z, self.nbr_dist, self.k, self.pool, self.cut_duals, cut_slack,
                                               self.phases, ctx.deadline, self.enumerate_anchor, self.opt.max_columns)
        self.info["enumerated_columns"] = added
        self.info["enumeration_complete"] = complete
        self.info["enumeration_duals"] = "master with subset-row cuts"
        if complete and not ctx.expired():
            for rows in groups_from_labels(canonical_labels(self.best_labels)):
                self.pool.add(rows, group_cost(self.Z, rows))
            self._run_mip(True, cut_filter=(self.cut_duals, cut_slack))
        elif not ctx.expired():
            self._run_mip(False)

    def _close_gap(self) -> None:
        """Enumerate, anchor by anchor, every group that could be in a better partition
        (reduced cost <= incumbent - bound); complete enumeration + optimal MIP = proven optimum."""
        ctx = self.ctx
        complete = True
        added = 0
        for size in range(self.k, 2 * self.k):
            with self.phases.step("enumerate below", ctx.deadline):
                groups, done = enumerate_below(self.Z, self.nbr_dist, self.pi, self.k, size,
                                               self.best_sse - self.lb_filter, enumerate_limit=self.enumerate_anchor,
                                               max_columns=min(self.opt.max_columns, 50_000), deadline=ctx.deadline)
            complete &= done
            for rows, _rc in groups:
                if self.pool.add(rows, group_cost(self.Z, rows)) is not None:
                    added += 1
            if added > 50_000:
                complete = False
                break
        self.info["enumerated_columns"] = added
        self.info["enumeration_complete"] = complete
        if added and not ctx.expired():
            self._run_mip(complete)

    def _final_icsm(self) -> None:
        """Under a time limit, the time left goes to ICSM restarts from the best partition,
        unless the bound proves it optimal."""
        ctx = self.ctx
        self.proven_optimal = bool(self.info.get("optimal")) or (
            math.isfinite(self.lower) and self.best_sse - self.lower <= 1e-9 * max(1.0, self.best_sse))
        icsm = optional_spec("improvement", "icsm")
        if not (self.own_seeds and ctx.deadline.limited and not self.proven_optimal and icsm is not None
                and not ctx.expired() and ctx.remaining() > 0.5):
            return
        polish_started = time.monotonic()
        with self.phases("final icsm restarts", ctx.deadline):
            sol = icsm.core(self.Z, np.asarray(self.best_labels), self.k, ctx.child(stage="final icsm restarts"),
                            max_restarts=None)
        value = sse(self.Z, sol.labels)
        self.info["final_icsm"] = {"seconds": round(time.monotonic() - polish_started, 3),
                                   "sse_before": float(self.best_sse), "sse_after": float(min(value, self.best_sse))}
        if value < self.best_sse - 1e-12 * max(1.0, self.best_sse):
            self._offer(np.asarray(sol.labels), value, "final icsm restarts")

    # -- result ------------------------------------------------------------------------------
    def _seed_result(self) -> Solution:
        """The best seed partition, when the time limit came before the column pool existed."""
        self.info.update(iterations=0, converged=False, found_by=self.info.get("found_by", "seed"))
        msg = "; ".join(self.notes + [f"time limit reached {self.cut_short}: the best seed partition, no bound"])
        return Solution(labels=np.asarray(self.best_labels, dtype=np.int64), status="limit", message=msg,
                        lower_bound=None, info=self.info)

    def _result(self) -> Solution:
        info, lp_value = self.info, self.lp_value
        if self.proven_optimal:
            self.notes.append("optimal: the lower bound equals the partition's SSE")
        lower, source = self.lower, self.source
        if lower > self.best_sse:  # never report a bound above a known solution (float noise)
            info["bound_clamped_by"] = float(lower - self.best_sse)
            lower = self.best_sse
        if self.converged and source.startswith("Lagrangian") and "subset-row" not in source \
                and lp_value is not None and lower >= lp_value - 1e-6 * max(1.0, abs(lp_value)):
            source = "LP value (" + source + ")"
        info.update(bound_source=source, bound_improvements=self.history_sources, exact_rounds=self.exact_rounds,
                    mispricings=self.mispricings, bb_nodes=self.bb_nodes, smoothing=self.opt.smoothing,
                    priced_bounds=self.priced_bounds, anchor_solver=self.opt.anchor_solver)
        status = "limit" if (not self.converged and self.status == "done") else self.status
        msg = "; ".join(self.notes)
        if self.converged:
            msg = (msg + "; " if msg else "") + "LP relaxation solved to optimality"
        return Solution(labels=np.asarray(self.best_labels, dtype=np.int64), status=status,
                        message=msg, lower_bound=None if not math.isfinite(lower) else float(lower), info=info)


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
    so the search climbs from the centre's bound towards the LP value where pricing at the
    master's duals does not finish a round.

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
                                   deterministic_time=deterministic_time, workers=workers, seed=seed,
                                   stop_relaxation=True)
            if res is None:  # the step's time ran out during this size's anchor bounds
                clean = False
                break
            vals[s] = res["anchor_values"]
            clean = clean and res["proven"] and not res["columns"]
            columns.extend(res["columns"])
        if len(vals) < len(sizes):
            # Cut short by the step's time (the sizes not priced, or the one whose anchor
            # bounds were stopped): no bound from this step; a shorter step next.
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
        # A restricted MIP: over the whole pool of a large set HiGHS may find no partition in
        # its time and overrun its limit.
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
                 summary="column generation on the set-partitioning model: certified lower bound and MIP over the generated groups",
                 options=ColumnGenerationOptions, renamed={"workers": "n_jobs"})
def _column_generation_solver(Z: np.ndarray, k: int, ctx: Context, **options) -> Solution:
    ColumnGenerationOptions(**options).check()
    return solve_column_generation(Z, k, ctx, **options)
