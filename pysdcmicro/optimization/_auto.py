"""Method ``auto``: the best partition the time allows, without choosing a method by hand.

Two regimes, both described by an :class:`AutoPlan` (option ``plan``; the default plan
unless given):

* **No time limit: a fixed amount of work** chosen from ``n``, ``d`` and ``k`` alone (no
  clock is read), so the same seed gives the same partition on any machine:

  1. MDAV, then (on small data, ``n^2 d <= two_swap_max_work``) two-swap local search: the
     *baseline*;
  2. (``n <= icsm_max_n``) one ICSM run from MDAV (Mortazavi and Jalili 2015), within a
     budget of work units (:meth:`AutoPlan.icsm_work`: a fixed allowance plus a share per
     record), then ``restarts`` region restarts of ICSM and, when a restart improved, a
     final ICSM pass on all the data with what is left of the budget (at least a quarter);
  3. a lower bound from nearest neighbours (``n <= bound_max_n``; column generation's
     dual-feasible point ``u_i = min_s a_i(s)/(2s)``), so ``gap`` is known.

  The work is counted, not timed, so it is bounded on every input: ICSM's rounds grow
  faster than n on large data (each round is O(n) and the rounds keep finding small
  improvements), and two-swap costs O(n^2 d). The allowance lets ICSM converge on data
  of a few thousand records (the CASC sets); above, the budget stops it first. Every step
  starts from the best partition so far and only an improvement replaces it, so the answer
  is never worse than the baseline.

* **With a time limit: a portfolio on every core** until the deadline. This process runs
  MDAV + two-swap (the shared incumbent), then every core starts ICSM region restarts at
  once. Alone: one ICSM run from MDAV, then restarts. With worker processes and n <=
  ``chains_max_n``: one restart chain per process on all the data (each with its own first
  ICSM run and seed); at the end of every epoch (15 s with two chains, down to 5 s with six
  or more: :meth:`AutoPlan.epoch_length`) the chains' improvements are merged into the best
  partition (:mod:`._merge`: each chain improves some regions of the same start, and the
  improvements of different regions add up), which every chain starts the next epoch from.
  Larger n: the best partition is cut into parts of whole groups (along
  a path over the group centroids, from another group in each of two epochs), each part
  gets its own restarts in its own process, and the union (a k-partition whose SSE is the
  sum of the parts') replaces the incumbent when better; a final ICSM pass on all the data
  repairs the parts' borders. Column generation (for its proven lower bound and its integer
  answer) takes a worker on a small problem (``n <= colgen_small_n``) or from 3 cores, the
  decomposition heuristic from 4 cores; they start from the shared incumbent. On long
  budgets with chains (``cg_*``), column generation takes a worker's chain over, seeded
  with the best partition; when it is done with a converged LP the worker dives (``_dives``:
  fix part of the incumbent's LP-integral groups, column generation + MIP on the records
  left) in rounds until the deadline, else it runs a chain again. At ``k <= cut_max_k``
  column generation adds subset-row cuts after its LP, for the bound. A Ctrl-C asks the
  workers for their best partitions (``interrupt_wait``). ``info["components"]`` says what
  each component found and in how many seconds, ``info["winner"]`` which one found the
  answer. Such runs stop by the clock, so they are not reproducible even with a seed, unless
  the plan gives count budgets (``epoch_restarts``, ``chain_epochs``, ...).

The large-data path (``blocks``, more than 50 000 records) runs ``auto`` inside each block
with ``effort="light"``: MDAV then, with numba installed, the compiled move/swap/dissolve
sweeps of :func:`pysdcmicro.large.batch_local_search` (without numba: two-swap) on the
block; the border repair follows.
"""

from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._context import Context
from .._errors import InvalidInputError, InvalidTypeError
from .._interrupt import is_ctrl_c
from .._partition import sse
from .._registry import register_method
from .._result import Solution
from .._validation import check_choice, check_n_jobs, check_positive_int
from .._validation import cores_available as available_cores
from ..constructive._mdav import mdav_labels

__all__ = ["AutoPlan", "ICSM_MAX_N", "BOUND_MAX_N", "fixed_plan", "neighbour_bound", "region_groups",
           "chain_regions"]


@dataclass(frozen=True)
class AutoPlan:
    """How much work ``auto`` does and how it spreads a time limit over the cores.

    ``AutoPlan()`` is the default plan; ``microaggregate(..., method="auto", plan=...)``
    runs another one (tests use count budgets here instead of the clock). Fields at None are
    derived from the data or the time limit, as in the default plan.

    Attributes
    ----------
    icsm, restarts, bound : bool, int, bool or None
        Without a time limit: one ICSM run from MDAV (default: when ``2k <= n <=
        icsm_max_n``), that many ICSM region restarts after it (default: about one per
        group, ``5n / (4k)``, or ``3n / (4k)`` above k = 5, at least 5; at most
        ``max(100, restart_records / n)``, above k = 5 ``max(50, restart_records / n * 5 / k)``:
        a restart
        re-solves about 30 groups in a few milliseconds, so on data of a thousand records
        hundreds of restarts cost a second or two, while on larger data the first ICSM run
        takes the time), the nearest-neighbour lower bound (default: when ``2k <= n <=
        bound_max_n``).
    restart_records : int
        See ``restarts``.
    icsm_max_n, bound_max_n : int
        Above these many records no ICSM run and no bound (O(n^2 d) time) without a time
        limit; the portfolio skips the bound above ``bound_max_n`` too.
    work_base, work_per_record : float
        ICSM's budget without a time limit, in work units times ``d`` (a unit is one move,
        edge or tour evaluation over the ``d`` columns): ``work_base + work_per_record * n``
        for the first run and the final pass together (the final pass gets at least a
        quarter of it).
    two_swap_max_work : float
        Without a time limit, the baseline runs two-swap after MDAV only when ``n^2 d`` is
        at most this (its first scan alone is O(n^2 d)).
    min_worker_limit : float
        Worker processes start only for a limit of at least this many seconds (starting one
        imports numpy and pysdcmicro in a fresh interpreter).
    colgen_small_n : int
        On 2 cores column generation has a worker from the start only up to this many
        records (its exact pricing converges there); from 3 cores always.
    chains_max_n : int
        Up to this many records the restarts run as chains on all the data (restarts on
        parts miss the improvements that cross a part's border); above, on parts.
    epoch_seconds, min_epoch_seconds : float
        Two chains exchange the best partition this often; ``c`` chains every
        ``epoch_seconds * 2 / c`` seconds, at least ``min_epoch_seconds``
        (:meth:`epoch_length`): with more chains each exchange has more to choose from.
    merge_rounds : int
        At the end of an epoch the chains' improvements are merged into the best partition
        (every improving difference that no better one overlaps), in at most this many rounds.
    part_epochs : int
        Epochs of restarts on parts (each cuts the best partition from another group).
    region_records : int
        About this many records in a region restart at k >= 4 (30 groups at k <= 3).
    long_region_groups, long_regions_after, long_part_regions_min_k : int, float, int
        After ``long_regions_after`` seconds the chains (k >= 4) and parts (k >=
        ``long_part_regions_min_k``) re-optimise regions of ``long_region_groups`` groups
        with Tour2Assignment: the small regions stall on long budgets.
    cg_min_limit, cg_max_n, cg_max_k, cg_switch_seconds, cg_min_left : float, int, int, float, float
        Chains on budgets of at least ``cg_min_limit`` seconds, ``n <= cg_max_n`` and ``k <=
        cg_max_k``: column generation takes a worker's chain over after
        ``min(cg_switch_seconds, limit / 4)`` seconds, if ``cg_min_left`` seconds are left.
    dive_round_seconds, dive_seconds, dive_min_seconds, dive_shares : float, float, float, tuple
        Dives after a converged column generation: rounds of at most
        ``dive_round_seconds`` (the best partition is exchanged between rounds), each dive's
        column generation + MIP given at most ``dive_seconds``, none started with less than
        ``dive_min_seconds`` left; the share of the fixable groups fixed cycles through
        ``dive_shares``.
    cut_max_k, cut_seconds, cut_share, cut_rounds : int, float, float, int
        Subset-row cuts after the column-generation worker's LP at ``k <= cut_max_k``: at
        most ``cut_rounds`` rounds in at most ``min(cut_seconds, cut_share * remaining)``.
    interrupt_wait : float
        After a Ctrl-C the workers' answers are awaited this long at most.
    epoch_restarts : int or None
        Count budget: region restarts per chain or part in each epoch (None: until the
        epoch ends by the clock).
    chain_epochs : int or None
        Count budget: epochs of the chains (None: the time left over ``epoch_seconds``).
    cg_switch_epoch : int or None
        Count budget: column generation takes a worker's chain over at the start of this
        epoch (None: after ``cg_switch_seconds``).
    max_dives : int or None
        Count budget: dives per round (None: until the round's deadline).
    cg_extra : dict
        Options added to every column-generation component's (e.g. ``max_iterations``).
    """

    icsm: bool | None = None
    restarts: int | None = None
    bound: bool | None = None
    icsm_max_n: int = 50_000
    restart_records: int = 250_000
    bound_max_n: int = 20_000
    work_base: float = 1.5e8
    work_per_record: float = 6.0e4
    two_swap_max_work: float = 2.5e7
    min_worker_limit: float = 5.0
    colgen_small_n: int = 400
    chains_max_n: int = 2500
    epoch_seconds: float = 15.0
    min_epoch_seconds: float = 5.0
    merge_rounds: int = 3
    part_epochs: int = 2
    region_records: int = 100
    long_region_groups: int = 30
    long_regions_after: float = 60.0
    long_part_regions_min_k: int = 3
    cg_min_limit: float = 240.0
    cg_max_n: int = 1500
    cg_max_k: int = 5
    cg_switch_seconds: float = 60.0
    cg_min_left: float = 30.0
    dive_round_seconds: float = 120.0
    dive_seconds: float = 90.0
    dive_min_seconds: float = 20.0
    dive_shares: tuple = (1.0, 0.8, 0.9)
    cut_max_k: int = 3
    cut_seconds: float = 90.0
    cut_share: float = 0.2
    cut_rounds: int = 50
    interrupt_wait: float = 1.5
    epoch_restarts: int | None = None
    chain_epochs: int | None = None
    cg_switch_epoch: int | None = None
    max_dives: int | None = None
    cg_extra: dict = field(default_factory=dict, hash=False)

    def fixed_work(self, n: int, d: int, k: int) -> dict:
        """The work without a time limit on ``n`` records in ``d`` columns at ``k``.

        >>> AutoPlan().fixed_work(1080, 13, 3)
        {'icsm': True, 'restarts': 231, 'bound': True, 'two_swap': True, 'icsm_work': 16523076}
        >>> [AutoPlan().fixed_work(834, 13, k)["restarts"] for k in (3, 4, 5, 10)]
        [299, 260, 208, 62]
        >>> AutoPlan().fixed_work(30_000, 10, 5)
        {'icsm': True, 'restarts': 100, 'bound': False, 'two_swap': False, 'icsm_work': 195000000}
        >>> AutoPlan(restarts=5, bound=False).fixed_work(1080, 13, 3)
        {'icsm': True, 'restarts': 5, 'bound': False, 'two_swap': True, 'icsm_work': 16523076}
        """
        icsm = self.icsm if self.icsm is not None else (n <= self.icsm_max_n and n >= 2 * k)
        icsm = bool(icsm) and n >= 2 * k
        restarts = 0
        if icsm:
            restarts = self.restarts if self.restarts is not None else self._restarts(n, k)
        bound = self.bound if self.bound is not None else n <= self.bound_max_n
        return {"icsm": icsm, "restarts": int(restarts), "bound": bool(bound) and n >= 2 * k,
                "two_swap": float(n) * n * d <= self.two_swap_max_work, "icsm_work": self.icsm_work(n, d)}

    def _restarts(self, n: int, k: int) -> int:
        """The default number of restarts without a time limit (see ``restarts``)."""
        most = max(100 if k <= 5 else 50, self.restart_records // max(n, 1) * 5 // max(k, 5))
        return min(most, max(5, (5 if k <= 5 else 3) * n // (4 * k)))

    def icsm_work(self, n: int, d: int) -> int:
        """ICSM's budget in work units without a time limit (see ``work_base``).

        >>> AutoPlan().icsm_work(5000, 10)
        45000000
        """
        return int((self.work_base + self.work_per_record * n) / max(int(d), 1))

    def epoch_length(self, chains: int) -> float:
        """Seconds between two exchanges of the best partition among ``chains`` chains.

        >>> [AutoPlan().epoch_length(c) for c in (1, 2, 4, 6, 14)]
        [15.0, 15.0, 7.5, 5.0, 5.0]
        """
        return max(self.min_epoch_seconds, self.epoch_seconds * 2 / max(2, int(chains)))

    def region_groups(self, k: int) -> int:
        """Groups in a region restart of the portfolio: 30 for k <= 3, else about
        ``region_records / k``.

        >>> [AutoPlan().region_groups(k) for k in (2, 3, 4, 5, 10)]
        [30, 30, 25, 20, 10]
        """
        return 30 if k <= 3 else max(10, int(round(self.region_records / k)))

    def chain_regions(self, k: int, elapsed: float, mode: str = "chains") -> dict:
        """Region options of the ICSM restarts in a chain (or, ``mode="parts"``, a part)
        after ``elapsed`` seconds of the run.

        >>> plan = AutoPlan()
        >>> plan.chain_regions(5, 10.0), plan.chain_regions(5, 61.0), plan.chain_regions(3, 300.0)
        ({'region_groups': 20}, {'region_groups': 30, 'region_tour': True}, {'region_groups': 30})
        >>> plan.chain_regions(3, 300.0, "parts"), plan.chain_regions(3, 30.0, "parts")
        ({'region_groups': 30, 'region_tour': True}, {'region_groups': 30})
        """
        min_k = self.long_part_regions_min_k if mode == "parts" else 4
        if k >= min_k and elapsed >= self.long_regions_after:
            return {"region_groups": self.long_region_groups, "region_tour": True}
        return {"region_groups": self.region_groups(k)}

    def cut_options(self, remaining: float, k: int) -> dict:
        """Subset-row cuts after a converged LP at ``k <= cut_max_k`` (column generation runs
        them by default only as the method itself).

        >>> AutoPlan().cut_options(540.0, 3)
        {'cut_rounds': 50, 'cut_time': 90.0}
        >>> AutoPlan().cut_options(10.0, 3)
        {'cut_rounds': 50, 'cut_time': 2.0}
        >>> AutoPlan().cut_options(540.0, 4)
        {}
        """
        if k > self.cut_max_k:
            return {}
        return {"cut_rounds": self.cut_rounds, "cut_time": min(self.cut_seconds, self.cut_share * remaining)}

    def cg_options(self, remaining: float, k: int) -> dict:
        """Column generation's options when it takes a chain over: its MIP over the generated
        groups may use a third of the time left (a fixed minute stops HiGHS at "feasible" on
        the CASC sets), the master LP stays GLOP (warm re-solves), no ascent switch (it pays
        at k = 10, beyond ``cg_max_k``), subset-row cuts at ``k <= cut_max_k``.

        >>> sorted(AutoPlan().cg_options(540.0, 4).items())
        [('ascent_switch', 1.0), ('integral_groups', True), ('mip_time', 180.0)]
        """
        return {"mip_time": max(60.0, remaining / 3.0), "ascent_switch": 1.0, "integral_groups": True,
                **self.cut_options(remaining, k), **self.cg_extra}

    def first_cg_options(self, remaining: float, k: int) -> dict:
        """Column generation's options as a worker from the start (small data, 3+ cores)."""
        return {**self.cut_options(remaining, k), **self.cg_extra}


#: The default plan: what ``auto`` runs unless ``plan`` is given.
DEFAULT_PLAN = AutoPlan()
#: Above this many records ``auto`` without a time limit stops after MDAV + two-swap.
ICSM_MAX_N = DEFAULT_PLAN.icsm_max_n
#: The nearest-neighbour lower bound costs O(n^2 d) time (O(n k) memory); skipped above.
BOUND_MAX_N = DEFAULT_PLAN.bound_max_n


def _check_plan(plan: Any) -> AutoPlan:
    """``plan`` as an :class:`AutoPlan`: None is the default plan, a dict gives its fields."""
    if plan is None:
        return DEFAULT_PLAN
    if isinstance(plan, AutoPlan):
        return plan
    if isinstance(plan, dict):
        names = {f.name for f in dataclasses.fields(AutoPlan)}
        unknown = sorted(set(plan) - names)
        if unknown:
            raise InvalidInputError(f"`plan` has no field {unknown[0]!r}; its fields are: {', '.join(sorted(names))}.")
        return AutoPlan(**plan)
    raise InvalidTypeError(f"`plan` must be None, an AutoPlan or a dict of its fields; got {plan!r}.")


def region_groups(k: int) -> int:
    """Groups in a region restart of the default plan (:meth:`AutoPlan.region_groups`).

    >>> [region_groups(k) for k in (2, 3, 4, 5, 10)]
    [30, 30, 25, 20, 10]
    """
    return DEFAULT_PLAN.region_groups(k)


def chain_regions(k: int, elapsed: float, mode: str = "chains") -> dict:
    """Region options of the default plan's restarts (:meth:`AutoPlan.chain_regions`).

    >>> chain_regions(5, 10.0), chain_regions(5, 61.0)
    ({'region_groups': 20}, {'region_groups': 30, 'region_tour': True})
    """
    return DEFAULT_PLAN.chain_regions(k, elapsed, mode)


def fixed_plan(n: int, d: int, k: int) -> dict:
    """The work of ``auto`` without a time limit in the default plan (:meth:`AutoPlan.fixed_work`).

    >>> fixed_plan(1080, 13, 3)
    {'icsm': True, 'restarts': 231, 'bound': True, 'two_swap': True, 'icsm_work': 16523076}
    """
    return DEFAULT_PLAN.fixed_work(n, d, k)


def neighbour_bound(Z: np.ndarray, k: int, knn: np.ndarray | None = None) -> float:
    """A lower bound on the SSE of every k-partition, from nearest neighbours alone.

    Column generation's dual-feasible point (``nn_dual``): every group ``C`` of ``s``
    records has ``SSE(C) >= sum_{i in C} a_i(s) / (2 s)``, ``a_i(s)`` the sum of the ``s-1``
    smallest squared distances from record ``i``; an optimal partition has groups of
    ``k..2k-1`` records. Up to 16 columns the nearest records come from a k-d tree (exact
    distances, taken coordinate by coordinate; O(n log n) time on low-dimensional data),
    above from a blocked scan (O(n^2 d)); O(n k) memory. ``knn``: each record's nearest other
    records, exact and nearest first (ICSM's lists, :func:`..local_search._icsm.search_index`);
    when it has at least ``2k-2`` columns the distances are taken from it in O(n k d).
    """
    from ._pricing import neighbours, nn_dual

    n, d = Z.shape
    if n < 2 * k:
        return 0.0
    L = min(n, 2 * k - 1)
    if knn is not None and knn.shape[1] >= L - 1:
        dist = np.zeros((n, L))
        for j in range(L - 1):
            diff = Z - Z[knn[:, j]]
            dist[:, j + 1] = np.einsum("ij,ij->i", diff, diff)
        dist.sort(axis=1)  # equal distances may come from the tree in either order
    elif d > 16:  # a k-d tree no longer prunes: blocked exact scan (O(n^2 d))
        _, dist = neighbours(Z, L)
    else:
        from scipy.spatial import cKDTree

        dist, _ = cKDTree(Z).query(Z, k=L, workers=-1)
        dist = np.asarray(dist, dtype=np.float64).reshape(n, -1) ** 2
        dist[:, 0] = 0.0  # the record itself (or an exact duplicate, also at 0)
    return float(np.sum(nn_dual(dist, k)))


def _icsm(Z, labels, k, ctx, lookup=None, **options) -> Solution:
    """ICSM's improvement core (imported when used: the registration order stays the same);
    ``lookup``: its neighbour lookup of ``Z``, when the caller computed it."""
    from ..local_search._icsm import improve_with

    return improve_with(Z, labels, k, ctx, lookup, **options)


def _two_swap(Z, labels, k, ctx) -> Solution:
    from ..local_search._two_swap import _two_swap_improver

    return _two_swap_improver(Z, labels, k, ctx)


def _baseline(Z, k, ctx, two_swap: bool = True) -> tuple[np.ndarray, np.ndarray, float]:
    """MDAV and MDAV + two-swap (MDAV alone with ``two_swap=False``): (mdav labels, baseline
    labels, baseline SSE)."""
    m = mdav_labels(Z, k)
    ctx.offer(m, sse(Z, m))
    ctx.report(stage="mdav", sse=sse(Z, m))
    if not two_swap:
        return m, m, sse(Z, m)
    sol = _two_swap(Z, m, k, ctx.child(stage="two-swap"))
    base = np.asarray(sol.labels)
    base_sse = sse(Z, base)
    if base_sse > sse(Z, m):  # two-swap never raises the SSE; keep the guarantee anyway
        base, base_sse = m, sse(Z, m)
    ctx.offer(base, base_sse)
    ctx.report(stage="two-swap", sse=base_sse)
    return m, base, base_sse


class _Best:
    """The incumbent and who found it."""

    def __init__(self, labels, value, who):
        self.labels, self.sse, self.who = labels, float(value), who

    def offer(self, labels, value, who) -> bool:
        if value < self.sse - 1e-9 * max(1.0, abs(self.sse)):
            self.labels, self.sse, self.who = np.asarray(labels), float(value), who
            return True
        return False


def _fixed(Z, k, ctx, info, plan: AutoPlan) -> Solution:
    n, d = Z.shape
    work = plan.fixed_work(n, d, k)
    info["plan"] = work
    timing = info["seconds"] = {}
    t = time.monotonic()
    m, base, base_sse = _baseline(Z, k, ctx, two_swap=work["two_swap"])
    first = "mdav+two-swap" if work["two_swap"] else "mdav"
    timing[first] = time.monotonic() - t
    info["baseline_sse"] = base_sse
    best = _Best(base, base_sse, first)
    lookup = None
    if work["icsm"]:
        t = time.monotonic()
        if n >= 2 * k:  # one neighbour lookup for ICSM's first search, its final pass and the bound
            from ..local_search._icsm import search_index

            lookup = search_index(Z)
        sol = _icsm(Z, m, k, ctx.child(stage="icsm"), lookup=lookup, max_restarts=work["restarts"],
                    max_work=work["icsm_work"])
        info["icsm"] = {key: sol.info.get(key) for key in ("rounds", "work", "restarts", "improving_restarts",
                                                            "polish_rounds")}
        best.offer(sol.labels, sse(Z, sol.labels), f"icsm with {work['restarts']} restarts")
        timing["icsm"] = time.monotonic() - t
        ctx.offer(best.labels, best.sse)
    lower = None
    if work["bound"]:
        t = time.monotonic()
        lower = neighbour_bound(Z, k, None if lookup is None else lookup[1])
        timing["bound"] = time.monotonic() - t
        info["bound_from"] = "nearest-neighbour bound"
    info["winner"] = best.who
    if work["icsm"]:
        steps = f"{first}, ICSM with {work['restarts']} restarts"
    elif n < 2 * k or n <= plan.icsm_max_n:
        steps = f"{first} only"
    else:
        steps = f"{first} only (n > {plan.icsm_max_n})"
    message = f"auto (no time limit: fixed work for n={n}, d={d}, k={k}): {steps}; best: {best.who}"
    return Solution(labels=best.labels, status="done", message=message, lower_bound=lower, info=info)


# ---------------------------------------------------------------------------
# The portfolio (time limit)
# ---------------------------------------------------------------------------
class _StopFile:
    """A file whose existence tells the workers to stop now (Ctrl-C in this process).

    The workers ignore SIGINT (this process decides what happens), so they are told through
    the file system: each worker component polls the path from a daemon thread and expires
    its own deadline, so its search returns the best partition it holds at once."""

    def __init__(self):
        import tempfile

        self.dir = tempfile.mkdtemp(prefix="pysdcmicro-auto-")
        self.path = os.path.join(self.dir, "stop")
        self.raised = False

    def raise_(self) -> None:
        if not self.raised:
            self.raised = True
            self.at = time.monotonic()
            try:
                with open(self.path, "w"):
                    pass
            except OSError:  # pragma: no cover - the workers then stop at their deadline
                pass

    def remove(self) -> None:
        import shutil

        shutil.rmtree(self.dir, ignore_errors=True)


def _watch(path: str, deadline) -> None:
    """In a worker: expire ``deadline`` as soon as ``path`` exists (a daemon thread)."""
    import threading

    def poll():
        while not deadline.expired():
            if os.path.exists(path):
                deadline.stop()
                return
            time.sleep(0.05)

    threading.Thread(target=poll, name="pysdcmicro-auto-stop", daemon=True).start()


def _dives(Z: np.ndarray, k: int, labels: np.ndarray, integral: list, ctx: Context,
           plan: AutoPlan = DEFAULT_PLAN) -> tuple[np.ndarray, dict]:
    """LP-guided dives from ``labels`` until ``ctx``'s deadline (or ``plan.max_dives``).

    ``integral``: the groups at value 1 in column generation's converged master LP. A dive
    fixes a share (``plan.dive_shares``) of the incumbent's groups that are among them, chosen
    at random, and solves the records left, a microaggregation problem of their own, by column
    generation + MIP seeded with the incumbent's other groups (its LP, unlike the whole
    problem's, has only those records to cover, so it prices new groups for them); the union
    replaces the incumbent when it is better. O(n) memory besides column generation's."""
    from .._partition import canonical_labels, groups_from_labels
    from ._column_generation import solve_column_generation

    keys = {np.sort(np.asarray(g, dtype=np.int64)).tobytes() for g in integral}
    best = np.asarray(canonical_labels(labels), dtype=np.int64)
    best_sse = sse(Z, best)
    n = Z.shape[0]
    stats = {"dives": 0, "improving_dives": 0, "dive_residual_sizes": []}
    while not ctx.expired() and ctx.remaining() >= plan.dive_min_seconds:
        if plan.max_dives is not None and stats["dives"] >= plan.max_dives:
            break
        groups = groups_from_labels(best)
        fixable = [g for g in groups if np.sort(g).tobytes() in keys]
        share = plan.dive_shares[stats["dives"] % len(plan.dive_shares)]
        count = min(int(share * len(fixable)), len(groups) - 2)  # two groups at least stay free
        if count < 1:
            break
        fixed = np.zeros(n, dtype=bool)
        for i in ctx.rng.permutation(len(fixable))[:count]:
            fixed[fixable[i]] = True
        rest = np.flatnonzero(~fixed)
        seconds = min(plan.dive_seconds, ctx.remaining())
        sub = solve_column_generation(np.ascontiguousarray(Z[rest]), k, ctx.child(seconds=seconds),
                                      seeds=[np.asarray(canonical_labels(best[rest]))], mip_time=seconds / 2)
        new = best.copy()
        new[rest] = np.asarray(sub.labels, dtype=np.int64) + int(best.max()) + 1
        value = sse(Z, new)
        stats["dives"] += 1
        stats["dive_residual_sizes"].append(int(rest.size))
        if value < best_sse - 1e-12 * max(1.0, best_sse):
            best, best_sse = np.asarray(canonical_labels(new), dtype=np.int64), value
            stats["improving_dives"] += 1
            ctx.offer(best, best_sse)
    return best, stats


_CG_KEYS = ("iterations", "converged", "columns", "cg_seconds", "bound_source", "lp_value", "mip_status",
            "found_by", "integral_groups")


def _column_generation_component(Z, k, labels, ctx, options: dict) -> tuple[Solution, dict]:
    """The column-generation worker: its answer, and what the report shows of it."""
    from ._column_generation import solve_column_generation

    seeds = [labels] if labels is not None else None
    if options.get("cut_rounds"):
        _warm_cut_kernel(ctx.deadline)
    sol = solve_column_generation(Z, k, ctx, seeds=seeds, **options)
    extra = {key: sol.info.get(key) for key in _CG_KEYS if key in sol.info}
    cuts = sol.info.get("subset_row_cuts")
    if cuts is not None:  # the cut phase ran: its bound and what it cost (the report's summary)
        phase = [row for row in sol.info.get("phases", []) if row[0] == "subset-row cuts"]
        extra["subset_row_cuts"] = {
            "bound_before": cuts.get("bound_before"), "bound_after": cuts.get("bound_after"),
            "lp_value_with_cuts": cuts.get("lp_value"), "rounds": len(cuts.get("rounds") or []),
            "cuts": cuts.get("cuts"), "columns": cuts.get("columns"),
            "seconds": round(phase[-1][2] - phase[-1][1], 3) if phase else None, "stopped": cuts.get("stopped")}
    return sol, extra


def _component(name: str, Z: np.ndarray, k: int, labels: np.ndarray | None, seed: int, end_wall: float,
               stop_path: str | None = None, options: dict | None = None) -> dict:
    """One portfolio component, run in a worker process until ``end_wall`` (``time.time()``),
    or until ``stop_path`` exists (Ctrl-C in the calling process)."""
    started = time.monotonic()
    ctx = Context(seed, max(0.01, end_wall - time.time()))
    if stop_path is not None:
        _watch(stop_path, ctx.deadline)
    options = options or {}
    lower = None
    extra: dict = {}
    if name == "icsm-restarts":
        regions = options.get("regions") or {"region_groups": region_groups(k)}
        sol = _icsm(Z, labels, k, ctx, max_restarts=options.get("max_restarts"), **regions)
        extra = {key: sol.info.get(key) for key in ("restarts", "improving_restarts")}
    elif name == "column-generation":
        sol, extra = _column_generation_component(Z, k, labels, ctx, options)
        lower = sol.lower_bound
    elif name == "dives":
        best, extra = _dives(Z, k, labels, options.get("integral", []), ctx, options.get("plan", DEFAULT_PLAN))
        sol = Solution(labels=best, status="limit")
    elif name == "decomposition":
        from ._decomposition import _decomposition_solver

        sol = _decomposition_solver(Z, k, ctx, local_search="icsm-restarts", n_jobs=1)
    else:  # pragma: no cover - names come from this module
        raise ValueError(name)
    out = np.asarray(sol.labels, dtype=np.int64)
    return {"name": name, "labels": out, "sse": sse(Z, out), "lower_bound": lower, "status": sol.status,
            "seconds": time.monotonic() - started, **extra}


def _pool(workers: int):
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from ..large._executors import _worker_init

    # the workers ignore SIGINT (Ctrl-C reaches the whole process group): this process stops
    # them and keeps the incumbent, and no worker prints a KeyboardInterrupt traceback
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_worker_init)


def _stop_pool(pool, hard: bool) -> None:
    from ..large._executors import stop_pool

    stop_pool(pool, terminate=hard)


def _warm() -> int:
    return os.getpid()


@dataclass
class _ColumnGeneration:
    """Column generation in a chains run on a long budget, a small state machine:
    ``off``; ``planned`` -> ``running`` (it took a worker's chain over) -> ``done`` ->
    ``diving`` (rounds of dives from its converged LP) -> ``done`` -> ...; a worker that
    cannot take it turns ``planned`` into ``off``."""

    state: str = "off"
    at: float = 0.0  # planned: the run's second from which it takes a chain over
    future: Any = None
    integral: list | None = None  # the LP-integral groups of a converged run (for the dives)

    @property
    def busy(self) -> bool:
        """Whether it holds a worker now."""
        return self.state in ("running", "diving")

    @property
    def name(self) -> str:
        return "column-generation" if self.state == "running" else "dives"


class _Portfolio:
    """One time-limited run of ``auto``: :meth:`run` calls one method per phase.

    Worker processes start first (while this process computes the baseline), then the
    long-running components, the bound, one ICSM run when alone, and the restarts in epochs
    (:meth:`_epoch`); parts get a final pass over their borders, and the long-running
    components' answers are taken at the deadline."""

    def __init__(self, Z: np.ndarray, k: int, ctx: Context, info: dict, cores: int, plan: AutoPlan):
        self.Z, self.k, self.ctx, self.info, self.plan = Z, k, ctx, info, plan
        self.n, self.d = Z.shape
        self.cores = cores  # processes in all, this one included
        self.limit = ctx.remaining()
        self.end_wall = time.time() + self.limit  # the workers' common deadline (wall clock: shared by processes)
        self.margin = min(1.0, 0.02 * self.limit)  # for handing the answers back
        self.timing = info["seconds"] = {}
        self.components: list[dict] = []
        info["components"] = self.components
        self.futures: list = []  # (future, name) of the long-running components
        self.chain_futures: list = []  # the chains of the epoch running (all the data: usable after a Ctrl-C)
        self.lower: float | None = None
        self.answered = 0  # worker answers taken
        self.failure: str | None = None  # why the last worker that failed did
        self.cg = _ColumnGeneration()
        self.mode, self.parts_n = "alone", 1
        self.pool = self.stopper = self.blas = None

    # -- phases ---------------------------------------------------------------
    def run(self) -> Solution:
        self._started = time.monotonic()
        self._plan_workers()
        try:
            self._start_workers()
            self._baseline()
            self._start_long_components()
            self._bound()
            self._choose_mode()
            self._first_icsm()
            self._plan_column_generation()
            self._restarts()
            self._polish()
            self._collect_long_components()
        except (KeyboardInterrupt, SystemError) as exc:
            if not is_ctrl_c(exc):
                raise
            self._interrupted()
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise KeyboardInterrupt from exc
        finally:
            self._close()
        self.info["winner"] = self.best.who
        return self._solution()

    def _plan_workers(self) -> None:
        """The worker processes and their components: column generation on small problems (or
        from 3 cores), the decomposition heuristic from 4 cores; the others share the restarts."""
        from ..large._executors import blas_threads

        plan, n = self.plan, self.n
        self.workers = max(0, self.cores - 1) if self.limit >= plan.min_worker_limit else 0
        self.pool = _pool(self.workers) if self.workers else None
        self.long_plan: list[str] = []
        if self.workers >= 1 and (n <= plan.colgen_small_n or self.workers >= 2):
            self.long_plan.append("column-generation")
        if self.workers >= 3:
            self.long_plan.append("decomposition")
        self.split_workers = self.workers - len(self.long_plan)
        self.info["plan"] = {"cores": self.cores,
                             "workers": self.long_plan + ["icsm-restarts on a part"] * self.split_workers}
        self.stopper = _StopFile() if self.pool is not None else None
        self.stop_path = self.stopper.path if self.stopper is not None else None
        # with workers on the other cores this process's BLAS runs on one thread (OpenBLAS's
        # idle threads busy-wait and would take a worker's core)
        self.blas = blas_threads(1) if self.pool is not None else None
        if self.blas is not None:
            self.blas.__enter__()

    def _workers_failed(self, exc: BaseException) -> None:
        self.info["workers_failed"] = f"{type(exc).__name__}: {exc}"

    def _start_workers(self) -> None:
        """Start the workers (a fresh interpreter each) while this process works."""
        from ..large._executors import _worker_environment, start_workers

        if self.pool is None:
            return
        try:  # they start now, with one BLAS thread each, and never import the calling script
            with _worker_environment():
                start_workers(self.pool, self.workers, _warm)
        except Exception as exc:  # workers cannot start: go on alone
            self._workers_failed(exc)
            _stop_pool(self.pool, hard=True)
            self.pool, self.split_workers, self.long_plan = None, 0, []

    def _baseline(self) -> None:
        self.m, self.base, base_sse = _baseline(self.Z, self.k, self.ctx)
        self.timing["mdav+two-swap"] = time.monotonic() - self._started
        self.info["baseline_sse"] = base_sse
        self.best = _Best(self.base, base_sse, "mdav+two-swap")

    def _submit(self, name: str, labels, end_wall: float, options: dict | None):
        return self.pool.submit(_component, name, self.Z, self.k, labels, self.ctx.seed(), end_wall,
                                self.stop_path, options)

    def _start_long_components(self) -> None:
        """They start from the shared incumbent and run to the deadline."""
        if self.pool is None:
            return
        for name in self.long_plan:
            options = self.plan.first_cg_options(self.ctx.remaining(), self.k) if name == "column-generation" else None
            try:
                self.futures.append((self._submit(name, self.best.labels, self.end_wall - self.margin, options), name))
            except Exception as exc:  # the workers are gone: the restarts go on in this process
                self._workers_failed(exc)
                break

    def _bound(self) -> None:
        """The neighbour bound costs at most O(n^2 d) (its k-d tree prunes little on
        unstructured data): at once when that is small, or takes about a tenth of the limit
        or less at 10^9 such steps a second (EIA's 4092 x 11 at 10 s: 0.04 s measured;
        20 000 x 10 Gaussian: 3.6 s, so from a 30-s limit)."""
        n, d = self.n, self.d
        work = float(n) * n * d
        if n <= self.plan.bound_max_n and not self.ctx.expired() and (work <= 2e7 or work <= 1.5e8 * self.limit):
            t = time.monotonic()
            self.lower = neighbour_bound(self.Z, self.k)
            self.timing["bound"] = time.monotonic() - t
            self.info["bound_from"] = "nearest-neighbour bound"

    def _choose_mode(self) -> None:
        """How the restarts use the cores: "chains" (every process runs its own chain of
        restarts on all the data and the best partition of all becomes every chain's start at
        the end of each epoch), "parts" (the best partition is cut into parts of whole groups,
        one per process, the union replaces it when better) or "alone". Either way every core
        starts at once (the first ICSM run is each chain's or part's own)."""
        plan, n, k, split = self.plan, self.n, self.k, self.split_workers
        if split and n <= plan.chains_max_n:
            self.mode, self.parts_n = "chains", 1
        elif split and n >= 4 * k * (1 + split) * 10:
            self.mode, self.parts_n = "parts", 1 + split
        else:
            self.mode, self.parts_n = "alone", 1
        info_plan = self.info["plan"]
        info_plan["restarts"] = self.mode
        if self.mode == "chains":
            info_plan["workers"] = self.long_plan + ["icsm-restarts chain on all the data"] * split
        if self.mode in ("chains", "parts") and \
                plan.chain_regions(k, self.limit, self.mode) != plan.chain_regions(k, 0.0, self.mode):
            info_plan["regions"] = (f"{plan.region_groups(k)} groups, then ICSM's {plan.long_region_groups} with "
                                    f"Tour2Assignment from the first epoch that starts after "
                                    f"{plan.long_regions_after:g} s" +
                                    (f" (epochs of {plan.epoch_length(1 + split):.3g} s)" if self.mode == "chains"
                                     else f" ({plan.part_epochs} epochs in all)"))

    def _offer(self, labels, value, who) -> None:
        if self.best.offer(labels, value, who):
            self.ctx.offer(self.best.labels, self.best.sse)

    def _first_icsm(self) -> None:
        """Alone: one ICSM run from MDAV (a local optimum for the restarts to start from)."""
        if self.mode != "alone" or self.ctx.expired():
            return
        t = time.monotonic()
        ctx = self.ctx
        sol = _icsm(self.Z, self.m, self.k, ctx.child(seconds=max(0.01, ctx.remaining() - self.margin), stage="icsm"))
        value = sse(self.Z, sol.labels)
        self.components.append({"name": "icsm", "where": "this process", "from": "mdav", "sse": value,
                                "seconds": time.monotonic() - t, "status": sol.status})
        self._offer(sol.labels, value, "icsm")
        self.timing["icsm"] = time.monotonic() - t

    def _plan_column_generation(self) -> None:
        """Long budgets with chains: column generation takes a worker's chain over."""
        plan, k = self.plan, self.k
        if not (self.mode == "chains" and not self.long_plan and self.limit >= plan.cg_min_limit
                and self.n <= plan.cg_max_n and k <= plan.cg_max_k):
            return
        self.cg = _ColumnGeneration("planned", at=min(plan.cg_switch_seconds, 0.25 * self.limit))
        when = (f"at epoch {plan.cg_switch_epoch + 1}" if plan.cg_switch_epoch is not None
                else f"after {self.cg.at:g} s")
        self.info["plan"]["column_generation"] = (
            f"takes a worker's chain over {when}, seeded with the best partition; when it is done that "
            "worker dives from its converged LP (or runs a chain again)" +
            (f"; at k <= {plan.cut_max_k} subset-row cuts after its LP for at most {plan.cut_seconds:g} s, "
             "for the bound" if k <= plan.cut_max_k else ""))

    def _epochs(self) -> int:
        if self.mode == "chains":
            if self.plan.chain_epochs is not None:
                return self.plan.chain_epochs
            return max(1, int((self.ctx.remaining() - self.margin) // self.plan.epoch_length(1 + self.split_workers)))
        if self.mode == "parts":
            return self.plan.part_epochs if self.ctx.remaining() >= 20 else 1
        return 1

    def _restarts(self) -> None:
        """Restarts until the deadline, in epochs."""
        epochs = self._epochs()
        self._restarts_started = time.monotonic()
        for epoch in range(epochs):
            if self.ctx.expired():
                break
            self._epoch(epoch, epochs)
        self.timing["icsm-restarts"] = time.monotonic() - self._restarts_started

    # -- one epoch --------------------------------------------------------------
    def _epoch(self, epoch: int, epochs: int) -> None:
        """Restarts of one epoch: this process's task, the workers' tasks, their answers."""
        ctx, n = self.ctx, self.n
        rem = ctx.remaining() - self.margin
        span = rem / (epochs - epoch) if epoch < epochs - 1 else rem
        epoch_end = time.time() + span
        # the first epoch starts from MDAV's groups (each chain or part runs ICSM first)
        source = self.m if (epoch == 0 and self.mode != "alone") else self.best.labels
        if self.mode == "parts":
            tasks = self._part_tasks(epoch, source)
        elif self.mode == "chains":
            tasks = self._chain_tasks(epoch, source, epoch_end)
        else:
            tasks = [(np.arange(n), source)]
        if self.mode in ("chains", "parts"):
            regions = self.plan.chain_regions(self.k, ctx.elapsed(), self.mode)
        else:
            regions = {"region_groups": self.plan.region_groups(self.k)}
        tasks, part_futures = self._submit_restarts(epoch, tasks, source, regions, epoch_end)
        sol = self._own_restarts(tasks[0], span, regions)
        entry = {"name": "icsm-restarts", "mode": self.mode, "epoch": epoch + 1, "processes": len(tasks),
                 "regions": dict(regions), "restarts": [sol.info.get("restarts")],
                 "seconds": time.monotonic() - self._restarts_started}
        self._epoch_answers(entry, tasks, sol, part_futures, epoch_end)
        self.components.append(entry)
        ctx.report(stage=f"restarts, epoch {epoch + 1}", sse=self.best.sse, lower_bound=self.lower)

    def _part_tasks(self, epoch: int, source: np.ndarray) -> list:
        """The best partition cut into parts along a path over the group centroids, from
        another group in each epoch."""
        from .._partition import canonical_labels
        from ._decomposition import split_along_groups

        start = None if epoch == 0 else int(self.ctx.rng.integers(1 << 30))
        parts = split_along_groups(self.Z, source, self.parts_n, "path", start=start)
        return [(rows, canonical_labels(source[rows])) for rows in parts]

    def _chain_tasks(self, epoch: int, source: np.ndarray, epoch_end: float) -> list:
        """One chain per free process on all the data; the workers' chains start from MDAV +
        two-swap in the first epoch. Column generation may take a worker's chain first."""
        everything = np.arange(self.n)
        self._advance_column_generation(epoch, epoch_end)
        free = self.split_workers - (1 if self.cg.busy else 0)
        return [(everything, source)] + [(everything, self.base if epoch == 0 else self.best.labels)] * free

    def _advance_column_generation(self, epoch: int, epoch_end: float) -> None:
        """The column-generation state machine at the start of an epoch of the chains."""
        cg, ctx, plan = self.cg, self.ctx, self.plan
        if cg.busy and cg.future.done():  # the worker is free again
            self._column_generation_done()
            # a converged LP: the worker dives from the best partition, in rounds of
            # dive_round_seconds (the best is exchanged between them), instead of its chain
            if cg.integral and self.end_wall - self.margin - time.time() >= plan.dive_min_seconds + 5.0:
                dive_end = min(self.end_wall - self.margin, epoch_end + plan.epoch_seconds *
                               max(0, round(plan.dive_round_seconds / plan.epoch_seconds) - 1))
                try:
                    cg.future = self._submit("dives", self.best.labels, dive_end,
                                             {"integral": cg.integral, "plan": plan})
                    cg.state = "diving"
                    self.futures.append((cg.future, "dives"))
                    self.timing.setdefault("dives started at", round(ctx.elapsed(), 3))
                except Exception as exc:  # the workers are gone: the loop goes on alone
                    self._workers_failed(exc)
        due = epoch >= plan.cg_switch_epoch if plan.cg_switch_epoch is not None else ctx.elapsed() >= cg.at
        if cg.state == "planned" and due and ctx.remaining() >= plan.cg_min_left:
            try:
                cg.future = self._submit("column-generation", self.best.labels, self.end_wall - self.margin,
                                         plan.cg_options(ctx.remaining(), self.k))
                cg.state = "running"
                self.timing["column-generation started at"] = round(ctx.elapsed(), 3)
                self.futures.append((cg.future, "column-generation"))
            except Exception as exc:  # the workers are gone: the loop goes on alone
                self._workers_failed(exc)
                cg.state = "off"

    def _column_generation_done(self) -> None:
        """Take the answer of column generation (or of a round of dives) that has finished."""
        cg = self.cg
        name = cg.name
        cg.state = "done"
        self.futures.remove((cg.future, name))
        res = self._collect(cg.future, name, time.monotonic() + 1.0)
        if res is not None and name == "column-generation":
            cg.integral = res.pop("integral_groups", None)
        self._take_bound(res)

    def _take_bound(self, res: dict | None) -> None:
        if res is not None and res.get("lower_bound") is not None:
            lb = float(res["lower_bound"])
            if self.lower is None or lb > self.lower:
                self.lower = lb
                self.info["bound_from"] = _bound_argument(res)

    def _collect(self, future, name: str, until: float, keep: bool = True) -> dict | None:
        """A worker's answer (:func:`_collect`); ``keep``: a component on all the data."""
        best, components = (self.best, self.components) if keep else (None, [])
        res = _collect(future, name, best, components, self.ctx, until, self.stopper, self.plan.interrupt_wait)
        if res is not None:
            self.answered += 1
        elif components and components[-1]["status"].startswith("failed"):
            self.failure = components[-1]["status"]
        return res

    def _submit_restarts(self, epoch: int, tasks: list, source, regions: dict, epoch_end: float) -> tuple:
        """The workers' tasks (all but the first). If the workers are gone, this process
        takes all the data from now on."""
        part_futures: list = []
        self.chain_futures = part_futures if self.mode == "chains" else []
        options = {"regions": regions, "max_restarts": self.plan.epoch_restarts}
        try:
            for rows, start_labels in tasks[1:]:
                Zp = self.Z if rows.size == self.n else np.ascontiguousarray(self.Z[rows])
                f = self.pool.submit(_component, "icsm-restarts", Zp, self.k, start_labels, self.ctx.seed(),
                                     epoch_end, self.stop_path, options)
                part_futures.append((f, rows, start_labels))
        except Exception as exc:  # the workers are gone: this process takes all the data
            self._workers_failed(exc)
            self.mode, self.parts_n, part_futures = "alone", 1, []
            tasks = [(np.arange(self.n), self.best.labels if epoch else source)]
        return tasks, part_futures

    def _own_restarts(self, task: tuple, span: float, regions: dict) -> Solution:
        """This process's chain or part (the first task)."""
        rows0, labels0 = task
        Z0 = self.Z if rows0.size == self.n else np.ascontiguousarray(self.Z[rows0])
        ctx, mode = self.ctx, self.mode
        if mode != "parts":  # all the data: its improvements are the run's incumbent at once
            sub = ctx.child(seconds=max(0.01, span),
                            stage="icsm-restarts" if mode == "alone" else "icsm-restarts (chain 1)")
        else:  # its own incumbent (a part's labels must never become the whole data's)
            sub = Context(ctx.rng, _deadline=ctx.deadline.child(seconds=max(0.01, span)),
                          stage=f"icsm-restarts ({'chain' if mode == 'chains' else 'part'} 1)")
        return _icsm(Z0, labels0, self.k, sub, max_restarts=self.plan.epoch_restarts, **regions)

    def _epoch_answers(self, entry: dict, tasks: list, sol: Solution, part_futures: list, epoch_end: float) -> None:
        """Offer this epoch's chains (or the union of its parts) to the incumbent."""
        from .._partition import canonical_labels

        Z, n, mode = self.Z, self.n, self.mode
        if mode == "chains":
            value = sse(Z, sol.labels)
            entry["sse"] = [value]
            self._offer(sol.labels, value, "icsm-restarts (chain in this process)")
        union = np.empty(n, dtype=np.int64)
        union[tasks[0][0]] = sol.labels
        offset = int(np.max(sol.labels)) + 1
        missing = 0
        until = time.monotonic() + max(0.0, epoch_end - time.time()) + min(2.0, 0.04 * self.limit)
        chains = [sol.labels] if mode == "chains" else []
        for f, rows, start_labels in part_futures:
            res = self._collect(f, "icsm-restarts", until, keep=False)
            if res is None:  # no answer in time: the part keeps its starting groups
                missing += 1
                part_labels = np.asarray(canonical_labels(start_labels))
            else:
                part_labels = res["labels"]
                entry["restarts"].append(res.get("restarts"))
            if mode == "chains":
                if res is not None:
                    entry["sse"].append(res["sse"])
                    self._offer(part_labels, res["sse"], "icsm-restarts (chain in a worker)")
                    chains.append(part_labels)
                continue
            union[rows] = part_labels + offset
            offset += int(part_labels.max()) + 1
        if len(chains) > 1:
            self._merge_chains(entry, chains)
        if mode == "parts":
            value = sse(Z, union)
            entry["sse"] = value
            entry["sizes"] = [int(r.size) for r, _ in tasks]
            self._offer(union, value, f"icsm-restarts on {len(tasks)} parts")
        elif mode == "alone":
            value = sse(Z, sol.labels)
            entry["sse"] = value
            self._offer(sol.labels, value, "icsm-restarts")
        if missing:
            entry["status"] = f"{missing} worker{'s' if missing > 1 else ''} gave no answer"

    def _merge_chains(self, entry: dict, chains: list) -> None:
        """The chains' improvements together (:func:`~._merge.merge_improvements`): each chain
        improved some regions of the same start, mostly not the same ones, so the best
        partition takes every improving difference that no better one overlaps, in rounds
        until a round gains nothing."""
        from ._merge import merge_improvements

        t = time.monotonic()
        labels, value = self.best.labels, self.best.sse
        applied = 0
        for _ in range(self.plan.merge_rounds):
            merged, merged_sse, merge_info = merge_improvements(self.Z, labels, chains, value)
            if not merged_sse < value - 1e-9 * max(1.0, value):
                break
            labels, value = merged, merged_sse
            applied += merge_info["applied"]
        entry["merge"] = {"applied": applied, "sse": value, "seconds": round(time.monotonic() - t, 4)}
        if applied:
            self._offer(labels, value, "icsm-restarts (chains merged)")

    # -- the end ----------------------------------------------------------------
    def _polish(self) -> None:
        """Parts: one ICSM pass on all the data with what is left repairs their borders."""
        if self.mode != "parts" or self.ctx.expired():
            return
        t = time.monotonic()
        ctx = self.ctx
        sol = _icsm(self.Z, self.best.labels, self.k,
                    ctx.child(seconds=max(0.01, ctx.remaining() - self.margin), stage="polish"))
        self._offer(sol.labels, sse(self.Z, sol.labels), self.best.who + " + polish")
        self.timing["polish"] = time.monotonic() - t

    def _collect_long_components(self) -> None:
        """The long-running workers' answers, due at the deadline."""
        until = time.monotonic() + max(0.0, self.ctx.remaining()) + min(2.0, 0.04 * self.limit)
        for f, name in self.futures:
            res = self._collect(f, name, until)
            if res is not None:
                res.pop("integral_groups", None)  # for the dives only, not for the report
            self._take_bound(res)

    def _interrupted(self) -> None:
        """Ctrl-C: this process's best is the context's incumbent; the workers are told to
        stop and the partitions they hold (all the data: chains and long components) are
        taken when they come within ``interrupt_wait`` seconds. The caller returns the
        incumbent."""
        self.ctx.deadline.stop()
        if self.stopper is not None:
            self.stopper.raise_()
            _gather(self.chain_futures + [f for f, _ in self.futures], self.ctx,
                    self.stopper.at + self.plan.interrupt_wait, self.n)
            self.info["interrupted"] = "Ctrl-C: the workers were asked for their best partitions"

    def _close(self) -> None:
        if self.blas is not None:
            self.blas.__exit__()
        _stop_pool(self.pool, hard=True)
        if self.stopper is not None:
            if self.stopper.raised:
                self.info["interrupted"] = "Ctrl-C: the workers were asked for their best partitions"
            self.stopper.remove()

    def _workers_text(self) -> str:
        """The workers' part of the message: what they ran, or why none answered."""
        text = ", ".join(self.info["plan"]["workers"]) or "none"
        if self.workers and not self.answered:
            why = self.info.get("workers_failed") or self.failure or "no answer in time"
            return f"none answered ({why})"
        timing = self.timing
        if "column-generation started at" in timing:
            text += f"; column generation in a worker from {timing['column-generation started at']:.0f} s"
        cuts = next((c["subset_row_cuts"] for c in self.components if c.get("subset_row_cuts")), None)
        if cuts is not None:  # column generation's cut phase: its time and bound
            timing["subset-row cuts (column generation)"] = cuts["seconds"]
            text += (f", subset-row cuts {cuts['seconds'] or 0:.0f} s ({cuts['cuts']} cuts, "
                     f"{cuts['rounds']} rounds proven)")
        if "dives started at" in timing:
            text += f", dives from its LP from {timing['dives started at']:.0f} s"
        return text

    def _solution(self) -> Solution:
        best, lower, info = self.best, self.lower, self.info
        status, note = "limit", ""
        if lower is not None and best.sse <= lower + 1e-9 * max(1.0, best.sse):
            status, note = "done", "; optimal: the lower bound equals the IL found"
        elif self.plan.epoch_restarts is not None and not self.ctx.expired():
            status, note = "done", "; the plan's count budget was spent before the time limit"
        shown = self.ctx._shared.limit if self.ctx._shared.limit is not None else self.limit  # the caller's limit
        cores = self.cores
        bound_text = f"; bound: {info['bound_from']}" if lower is not None and info.get("bound_from") else ""
        message = (f"auto ({shown:g} s on {cores} core{'s' if cores != 1 else ''}: ICSM restarts; "
                   f"workers: {self._workers_text()}): best: {best.who}{bound_text}{note}")
        return Solution(labels=best.labels, status=status, message=message, lower_bound=lower, info=info)


def _gather(futures, ctx, until, n) -> None:
    """After a Ctrl-C: offer each worker's answer (a partition of all ``n`` records) that comes
    before ``until`` (monotonic) to the run's incumbent. A second Ctrl-C stops the wait."""
    from concurrent.futures import wait

    pending = [f[0] if isinstance(f, tuple) else f for f in futures]
    while pending:
        left = until - time.monotonic()
        if left <= 0:
            return
        done, _ = wait(pending, timeout=left, return_when="FIRST_COMPLETED")
        for f in done:
            pending.remove(f)
            try:
                res = f.result()
            except Exception:  # a failed worker: the others still count
                continue
            labels = np.asarray(res["labels"])
            if labels.shape == (n,):
                ctx.offer(labels, res["sse"])


def _warm_cut_kernel(deadline) -> None:
    """Compile (or load from numba's disk cache) the pricing with cut penalties before column
    generation starts, while the whole budget is ahead: the cut phase's capped time would
    refuse to compile it, and the cuts would never run on a machine whose cache lacks it.
    Skipped (None kernel) on deadlines too short for it."""
    from ._pricing import CutRows, _bb_kernel, anchored_pricing, neighbours

    kernel = _bb_kernel(points=True, deadline=deadline, cuts=True)
    if kernel is None or kernel.signatures:
        return
    Z = np.random.default_rng(0).normal(size=(8, 2))
    _, nbr_dist = neighbours(Z, 8)
    anchored_pricing(Z, nbr_dist, np.ones(8), 3, 3, deadline=deadline,
                     cuts=CutRows(8, np.array([[0, 1, 2]]), np.array([0.5])))


def _bound_argument(res: dict) -> str:
    """``info["bound_from"]`` for a bound from the column-generation worker: the argument
    behind it (column generation's ``bound_source``: "LP value with subset-row cuts", ...)."""
    source = res.get("bound_source")
    return f"column generation: {source}" if source else "column generation"


def _collect(future, name, best, components, ctx, until, stopper=None, interrupt_wait: float = 1.5) -> dict | None:
    """Wait for a worker's answer until ``until`` (monotonic), showing progress meanwhile.

    After a Ctrl-C (the deadline's stop flag) the workers are told to stop (``stopper``) and
    their answers, the best partitions they hold, are awaited ``interrupt_wait`` seconds at most."""
    from concurrent.futures import TimeoutError as FutureTimeout

    while True:
        left = until - time.monotonic()
        if ctx.deadline._stop[0]:  # interrupted (Ctrl-C): the workers hand back what they hold
            if stopper is None:
                left = 0
            else:
                stopper.raise_()
                left = min(left, stopper.at + interrupt_wait - time.monotonic())
        if left <= 0:
            if components is not None:
                components.append({"name": name, "where": "worker", "status": "no answer in time"})
            return None
        try:
            res = future.result(timeout=min(1.0, left))
            break
        except FutureTimeout:
            ctx.report(stage=f"waiting for {name}", sse=None if best is None else best.sse)
        except Exception as exc:  # a worker that failed: the others' answers still count
            if components is not None:
                components.append({"name": name, "where": "worker",
                                   "status": f"failed: {type(exc).__name__}: {exc}"})
            return None
    if best is None:  # a part of the data: the caller puts the parts together
        return res
    labels = res.pop("labels")
    res.update(where="worker")
    components.append(res)
    if best.offer(labels, res["sse"], f"{name} (worker)"):
        ctx.offer(best.labels, best.sse)
    return res


@register_method("auto", randomized=True, block_defaults={"effort": "light"},  # blocks: MDAV + two-swap each
                 renamed={"processes": "n_jobs"},
                 summary="the best partition the time allows: without time_limit a fixed, reproducible amount of "
                         "work (MDAV + two-swap, ICSM, ICSM restarts; never worse than MDAV + two-swap); with "
                         "time_limit a portfolio on every core (ICSM restarts, column generation for the bound, ...)")
def _auto_solver(Z: np.ndarray, k: int, ctx: Context, *, effort: str = "full", n_jobs: int | None = None,
                 plan: AutoPlan | dict | None = None) -> Solution:
    check_choice(effort, "effort", ("full", "light"))
    cores = check_n_jobs(n_jobs, default=available_cores())  # processes of the portfolio, this one included
    plan = _check_plan(plan)
    n, d = Z.shape
    info: dict = {"effort": effort}
    if n < 2 * k:
        labels = np.zeros(n, dtype=np.int64)
        return Solution(labels=labels, status="done", lower_bound=sse(Z, labels),
                        message="auto: fewer than 2k records: one group, optimal", info=info)
    if effort == "light":  # inside the blocks of the large-data path
        return _light(Z, k, ctx, info)
    if not ctx.deadline.limited:
        return _fixed(Z, k, ctx, info, plan)
    _not_in_a_starting_worker()
    return _Portfolio(Z, k, ctx, info, cores, plan).run()


def _light(Z, k, ctx, info) -> Solution:
    """MDAV, then the compiled sweeps (lower IL than two-swap in a small part of its time) or,
    without numba, two-swap."""
    from ..large._local import batch_local_search, compiled_available

    t = time.monotonic()
    if compiled_available():
        m = mdav_labels(Z, k)
        ctx.offer(m, sse(Z, m))
        sol = batch_local_search(Z, m, k, ctx.child(stage="local search"))
        base = sol.labels if sse(Z, sol.labels) <= sse(Z, m) else m
        info.update(winner="mdav+local-search", seconds={"mdav+local-search": time.monotonic() - t},
                    local_search=sol.info)
        return Solution(labels=base, status="limit" if ctx.expired() else "done",
                        message="auto (light): MDAV + compiled local search", info=info)
    _, base, base_sse = _baseline(Z, k, ctx)
    info.update(winner="mdav+two-swap", seconds={"mdav+two-swap": time.monotonic() - t})
    return Solution(labels=base, status="limit" if ctx.expired() else "done",
                    message="auto (light): MDAV + two-swap", info=info)


def _not_in_a_starting_worker() -> None:
    """Refuse to run the portfolio inside a worker process that is still starting.

    The portfolio's own workers never import the calling script (``main_hidden``), but other
    code's spawned workers may: in a script without an ``if __name__ == "__main__":`` guard
    that would call ``auto`` once more in every such worker, a second copy of the whole run
    whose answer is never used. Raising stops such a worker at once."""
    import multiprocessing

    if getattr(multiprocessing.current_process(), "_inheriting", False):
        raise RuntimeError("method 'auto' with a time limit starts worker processes, which import the calling "
                           "script again; this is such a worker: put the script's call under "
                           "`if __name__ == \"__main__\":`")
