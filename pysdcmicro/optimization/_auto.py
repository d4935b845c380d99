"""Method ``auto``: the best partition the time allows, without choosing a method by hand.

Two regimes (issue 14):

* **No time limit: a fixed amount of work** chosen from ``n``, ``d`` and ``k`` alone (no
  clock is read), so the same seed gives the same partition on any machine:

  1. MDAV, then two-swap local search: the *baseline*;
  2. (``n <= ICSM_MAX_N``) one ICSM run from MDAV (Mortazavi and Jalili 2015);
  3. (``n <= ICSM_MAX_N``) ``restarts`` region restarts of ICSM from the better of 1 and 2;
  4. a lower bound from nearest neighbours (``n <= BOUND_MAX_N``; column generation's
     dual-feasible point ``u_i = min_s a_i(s)/(2s)``), so ``gap`` is known.

  Every step starts from the best partition so far and only an improvement replaces it, so
  the answer is never worse than MDAV followed by two-swap (the baseline is a candidate).

* **With a time limit: a portfolio on every core** until the deadline. This process runs
  MDAV + two-swap (the shared incumbent), then every core starts ICSM region restarts at
  once. Alone: one ICSM run from MDAV, then restarts. With worker processes and n <=
  ``CHAINS_MAX_N``: one restart chain per process on all the data (each with its own first
  ICSM run and seed), the best partition of all handed to every chain every
  ``EPOCH_SECONDS``. Larger n: the best partition is cut into parts of whole groups (along
  a path over the group centroids, from another group in each of two epochs), each part
  gets its own restarts in its own process, and the union (a k-partition whose SSE is the
  sum of the parts') replaces the incumbent when better; a final ICSM pass on all the data
  repairs the parts' borders. Column generation (for its proven lower bound
  and its integer answer) takes a worker on a small problem (n <= 400) or from 3 cores, the
  decomposition heuristic from 4 cores; they start from the shared incumbent. On long
  budgets with chains (``CG_*``), column generation takes a worker's chain over after a
  minute, seeded with the best partition; when it is done with a converged LP the worker
  dives (``_dives``: fix part of the incumbent's LP-integral groups, column generation + MIP
  on the records left) in rounds until the deadline, else it runs a chain again. At k <= 3
  column generation adds subset-row cuts after its LP (``CUT_*``), for the bound.
  A Ctrl-C asks the workers for their best partitions (``INTERRUPT_WAIT``).
  ``info["components"]`` says what each component found and in how many seconds,
  ``info["winner"]`` which one found the answer. Such runs stop by the clock, so they are
  not reproducible even with a seed.

The large-data path (``blocks``, more than 50 000 records) runs ``auto`` inside each block
with ``effort="light"``: MDAV then, with numba installed, the compiled move/swap/dissolve
sweeps of :func:`pysdcmicro.large.batch_local_search` (without numba: two-swap) on the
block; the border repair follows.
"""

from __future__ import annotations

import os
import time

import numpy as np

from .._context import Context
from .._partition import sse
from .._registry import register_method
from .._result import Solution
from .._validation import check_choice, check_positive_int
from ..constructive._mdav import mdav_labels

__all__ = ["ICSM_MAX_N", "BOUND_MAX_N", "fixed_plan", "neighbour_bound", "region_groups"]

#: Above this many records ``auto`` without a time limit stops after MDAV + two-swap
#: (one ICSM run grows faster than n log n; blocks of the large-data path are 10 000).
ICSM_MAX_N = 20_000
#: The nearest-neighbour lower bound costs O(n^2 d) time (O(n k) memory); skipped above.
BOUND_MAX_N = 20_000
#: Column generation is in the portfolio on 2 cores only below this many records (its
#: exact pricing converges within minutes there; above, its bound needs the whole budget
#: of a core that ICSM uses better). From 3 cores it always has a worker.
COLGEN_SMALL_N = 400
#: Worker processes are started only for a limit of at least this many seconds: starting
#: one (a fresh interpreter importing numpy and pysdcmicro) takes 1-2 s, 5-10 s under load.
MIN_WORKER_LIMIT = 5.0
#: Epochs of restarts shared over parts (each epoch cuts the best partition along a path
#: from another group, so the parts' borders move).
EPOCHS = 2
#: Up to this many records the 2+-core portfolio runs one restart chain per process on all the
#: data, exchanging the best partition every EPOCH_SECONDS (measured on Tarragona, n = 834:
#: restart chains on parts of the data missed the improvements that cross a part's border).
CHAINS_MAX_N = 2500
EPOCH_SECONDS = 15.0
#: Long budgets on 2+ cores (chains): column generation takes one worker's chain over after
#: CG_SWITCH_SECONDS, seeded with the best partition then, for its proven bound (its LP
#: converges at k = 3 on the 1 000-record CASC sets in about a minute) and its MIP over the
#: generated groups; when it is done the worker dives (converged LP, DIVE_*) or runs a chain
#: again. Census k = 3 (600 s on 2
#: cores): ICSM chains alone stopped at IL 4.6945 with the neighbour bound (gap 27 %).
CG_MIN_LIMIT = 240.0
CG_MAX_N = 1500
CG_MAX_K = 5
CG_SWITCH_SECONDS = 60.0
CG_MIN_LEFT = 30.0  # column generation starts only with this many seconds left
#: Dives after a converged column generation (``_dives``), in the worker column generation
#: ran in, instead of its chain: rounds of at most DIVE_ROUND_SECONDS (the best partition is
#: exchanged between rounds), each dive's column generation + MIP on the records left given at
#: most DIVE_SECONDS; the share of the fixable groups fixed cycles through DIVE_SHARES.
#: 600 s on 2 cores (benchmarks/results/auto_budget.md): Census k = 3 4.6729 (column
#: generation's MIP) -> 4.6689 by the dives (chains alone, stop 24: 4.6708); Tarragona k = 3
#: 14.4684 -> 14.4677. The chains they replace had found nothing in those cells' last 420-480 s.
DIVE_ROUND_SECONDS = 120.0
DIVE_SECONDS = 90.0
DIVE_MIN_SECONDS = 20.0
DIVE_SHARES = (1.0, 0.8, 0.9)
#: Subset-row cuts in the column-generation worker (issue 14 / 16): at k <= CUT_MAX_K, after its
#: LP converges, rounds of subset-row cuts on triples raise the proven bound above the LP value
#: (part (j) of benchmarks/results/colgen.md: Tarragona k = 3 13.8574 -> 14.4588 in 51 s, gap
#: 4.22 % -> 0.06 %); they get at most CUT_SECONDS and CUT_SHARE of the time left when column
#: generation starts, before its MIP and the dives (which keep the rest).
CUT_MAX_K = 3
CUT_SECONDS = 90.0
CUT_SHARE = 0.2
CUT_ROUNDS = 50
#: Records in a region restart of the portfolio: ICSM's default region of 30 groups is 90
#: records at k = 3 but 150 at k = 5, where one restart cost 5-10 times more (its n-opt cycle
#: search grows with the region) and the chains made 100-300 restarts per 15-s epoch on
#: Census k = 5. Regions of about 100 records (20 groups at k = 5) made 1 300-1 900 per epoch,
#: and the 60-s median went from 7.3928 to 7.3617 (3 seeds each, every seed lower; 15 groups:
#: 7.3474, the same within the seeds' spread). k = 3 keeps 30 groups (measured).
REGION_RECORDS = 100


#: Long budgets, chains at k >= 4: once column generation has taken the worker's chain over
#: (CG_SWITCH_SECONDS), the chains re-optimise ICSM's own regions of 30 groups with
#: Tour2Assignment (``chain_regions``). The small regions without it are the better choice on
#: the 60-s budgets they were chosen for, but stall on long ones: one core, 120 s, seed 0
#: (benchmarks/results/auto_budget.md, "Region restarts on long budgets"): Census k = 5 7.3418
#: against 7.3987, Tarragona k = 5 20.1777 against 20.2110, Census k = 10 11.6136 against 11.6157.
LONG_REGION_GROUPS = 30
LONG_REGIONS_AFTER = 60.0


#: Long budgets, parts (n > CHAINS_MAX_N, e.g. EIA): the same switch at every k. EIA k = 3 at
#: 600 s gave 0.3521 without Tour2Assignment in the region restarts (stop 27) and 0.3490 with
#: it (stop 23). One core, 120 s, seed 0, ICSM restarts on all of EIA, 30-group regions with
#: Tour2Assignment against region_groups(k) without (auto_budget.md, "Region restarts on long
#: budgets"): k = 3 0.3489 / 0.3516, k = 4 0.4831 / 0.4901, k = 5 0.7301 / 0.7318,
#: k = 10 1.9329 / 1.9423.
LONG_PART_REGIONS_MIN_K = 3


def chain_regions(k: int, elapsed: float, mode: str = "chains") -> dict:
    """Region options of the ICSM restarts in a chain (or, ``mode="parts"``, a part) after
    ``elapsed`` seconds of the run.

    >>> chain_regions(5, 10.0), chain_regions(5, 61.0), chain_regions(3, 300.0)
    ({'region_groups': 20}, {'region_groups': 30, 'region_tour': True}, {'region_groups': 30})
    >>> chain_regions(3, 300.0, "parts"), chain_regions(3, 30.0, "parts")
    ({'region_groups': 30, 'region_tour': True}, {'region_groups': 30})
    """
    min_k = LONG_PART_REGIONS_MIN_K if mode == "parts" else 4
    if k >= min_k and elapsed >= LONG_REGIONS_AFTER:
        return {"region_groups": LONG_REGION_GROUPS, "region_tour": True}
    return {"region_groups": region_groups(k)}


def region_groups(k: int) -> int:
    """Groups in a region restart of the portfolio: 30 for k <= 3, else about REGION_RECORDS / k.

    >>> [region_groups(k) for k in (2, 3, 4, 5, 10)]
    [30, 30, 25, 20, 10]
    """
    return 30 if k <= 3 else max(10, int(round(REGION_RECORDS / k)))


def fixed_plan(n: int, d: int, k: int) -> dict:
    """The work of ``auto`` without a time limit, from the problem's size only.

    ICSM region restarts cost about the same whatever ``n`` is (a region is 30 groups), so
    their number is fixed (100, or 50 for k > 5: a region holds 30 k records); on small
    data, where a region is most of the data, there are fewer (about 3 n / (8 k), at least 5).

    >>> fixed_plan(1080, 13, 3)
    {'icsm': True, 'restarts': 100, 'bound': True}
    >>> fixed_plan(30_000, 10, 5)
    {'icsm': False, 'restarts': 0, 'bound': False}
    """
    icsm = n <= ICSM_MAX_N and n >= 2 * k
    restarts = 0
    if icsm:  # a restart re-solves about 30 groups: on small data that is all of it
        restarts = min(100 if k <= 5 else 50, max(5, n // (8 * k) * 3))
    return {"icsm": icsm, "restarts": restarts, "bound": n <= BOUND_MAX_N and n >= 2 * k}


def neighbour_bound(Z: np.ndarray, k: int) -> float:
    """A lower bound on the SSE of every k-partition, from nearest neighbours alone.

    Column generation's dual-feasible point (``nn_dual``): every group ``C`` of ``s``
    records has ``SSE(C) >= sum_{i in C} a_i(s) / (2 s)``, ``a_i(s)`` the sum of the ``s-1``
    smallest squared distances from record ``i``; an optimal partition has groups of
    ``k..2k-1`` records. O(n^2 d) time, O(n k) memory.
    """
    from ._pricing import neighbours, nn_dual

    n = Z.shape[0]
    if n < 2 * k:
        return 0.0
    _, dist = neighbours(Z, min(n, 2 * k - 1))
    return float(np.sum(nn_dual(dist, k)))


def _improver(name: str):
    from .. import _registry

    return _registry.get_improvement(name).core


def _baseline(Z, k, ctx) -> tuple[np.ndarray, np.ndarray, float]:
    """MDAV and MDAV + two-swap: (mdav labels, baseline labels, baseline SSE)."""
    m = mdav_labels(Z, k)
    ctx.offer(m, sse(Z, m))
    ctx.report(stage="mdav", sse=sse(Z, m))
    sol = _improver("two-swap")(Z, m, k, ctx.child(stage="two-swap"))
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


def _fixed(Z, k, ctx, info) -> Solution:
    n, d = Z.shape
    plan = fixed_plan(n, d, k)
    info["plan"] = plan
    timing = info["seconds"] = {}
    t = time.monotonic()
    m, base, base_sse = _baseline(Z, k, ctx)
    timing["mdav+two-swap"] = time.monotonic() - t
    info["baseline_sse"] = base_sse
    best = _Best(base, base_sse, "mdav+two-swap")
    if plan["icsm"]:
        t = time.monotonic()
        icsm = _improver("icsm")
        sol = icsm(Z, m, k, ctx.child(stage="icsm"))
        best.offer(sol.labels, sse(Z, sol.labels), "icsm")
        timing["icsm"] = time.monotonic() - t
        if plan["restarts"]:
            t = time.monotonic()
            sol = icsm(Z, best.labels, k, ctx.child(stage="icsm-restarts"), max_restarts=plan["restarts"])
            best.offer(sol.labels, sse(Z, sol.labels), f"icsm-restarts ({plan['restarts']})")
            timing["icsm-restarts"] = time.monotonic() - t
        ctx.offer(best.labels, best.sse)
    lower = None
    if plan["bound"]:
        t = time.monotonic()
        lower = neighbour_bound(Z, k)
        timing["bound"] = time.monotonic() - t
        info["bound_from"] = "nearest-neighbour bound"
    info["winner"] = best.who
    steps = "MDAV+two-swap" + (f", ICSM, {plan['restarts']} restarts" if plan["icsm"] else f" only (n > {ICSM_MAX_N})")
    message = f"auto (no time limit: fixed work for n={n}, d={d}, k={k}): {steps}; best: {best.who}"
    return Solution(labels=best.labels, status="done", message=message, lower_bound=lower, info=info)


# ---------------------------------------------------------------------------
# The portfolio (time limit)
# ---------------------------------------------------------------------------
#: After a Ctrl-C the workers' answers are awaited this long at most (issue 19: the whole
#: run must end within 5 s of the signal).
INTERRUPT_WAIT = 1.5


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


def _dives(Z: np.ndarray, k: int, labels: np.ndarray, integral: list, ctx: Context) -> tuple[np.ndarray, dict]:
    """LP-guided dives from ``labels`` until ``ctx``'s deadline.

    ``integral``: the groups at value 1 in column generation's converged master LP. A dive
    fixes a share (``DIVE_SHARES``) of the incumbent's groups that are among them, chosen at
    random, and solves the records left, a microaggregation problem of their own, by column
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
    while not ctx.expired() and ctx.remaining() >= DIVE_MIN_SECONDS:
        groups = groups_from_labels(best)
        fixable = [g for g in groups if np.sort(g).tobytes() in keys]
        share = DIVE_SHARES[stats["dives"] % len(DIVE_SHARES)]
        count = min(int(share * len(fixable)), len(groups) - 2)  # two groups at least stay free
        if count < 1:
            break
        fixed = np.zeros(n, dtype=bool)
        for i in ctx.rng.permutation(len(fixable))[:count]:
            fixed[fixable[i]] = True
        rest = np.flatnonzero(~fixed)
        seconds = min(DIVE_SECONDS, ctx.remaining())
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


def _component(name: str, Z: np.ndarray, k: int, labels: np.ndarray | None, seed: int, end_wall: float,
               stop_path: str | None = None, options: dict | None = None) -> dict:
    """One portfolio component, run in a worker process until ``end_wall`` (``time.time()``),
    or until ``stop_path`` exists (Ctrl-C in the calling process)."""
    started = time.monotonic()
    ctx = Context(seed, max(0.01, end_wall - time.time()))
    if stop_path is not None:
        _watch(stop_path, ctx.deadline)
    lower = None
    extra: dict = {}
    if name == "icsm-restarts":
        regions = (options or {}).get("regions") or {"region_groups": region_groups(k)}
        sol = _improver("icsm")(Z, labels, k, ctx, max_restarts=None, **regions)
        extra = {key: sol.info.get(key) for key in ("restarts", "improving_restarts")}
    elif name == "column-generation":
        from ._column_generation import solve_column_generation

        seeds = [labels] if labels is not None else None
        if (options or {}).get("cut_rounds"):
            _warm_cut_kernel(ctx.deadline)
        sol = solve_column_generation(Z, k, ctx, seeds=seeds, **(options or {}))
        lower = sol.lower_bound
        extra = {key: sol.info.get(key) for key in ("iterations", "converged", "columns", "cg_seconds", "bound_source",
                                                    "lp_value", "mip_status", "found_by", "integral_groups")
                 if key in sol.info}
        cuts = sol.info.get("subset_row_cuts")
        if cuts is not None:  # the cut phase ran: its bound and what it cost (the report's summary)
            phase = [row for row in sol.info.get("phases", []) if row[0] == "subset-row cuts"]
            extra["subset_row_cuts"] = {
                "bound_before": cuts.get("bound_before"), "bound_after": cuts.get("bound_after"),
                "lp_value_with_cuts": cuts.get("lp_value"), "rounds": len(cuts.get("rounds") or []),
                "cuts": cuts.get("cuts"), "columns": cuts.get("columns"),
                "seconds": round(phase[-1][2] - phase[-1][1], 3) if phase else None, "stopped": cuts.get("stopped")}
    elif name == "dives":
        best, extra = _dives(Z, k, labels, (options or {}).get("integral", []), ctx)
        sol = Solution(labels=best, status="limit")
    elif name == "decomposition":
        from .. import _registry

        sol = _registry.get_method("decomposition").core(Z, k, ctx, local_search="icsm-restarts", processes=1)
    else:  # pragma: no cover - names come from this module
        raise ValueError(name)
    out = np.asarray(sol.labels, dtype=np.int64)
    return {"name": name, "labels": out, "sse": sse(Z, out), "lower_bound": lower, "status": sol.status,
            "seconds": time.monotonic() - started, **extra}


def _pool(workers: int):
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from ..large._executors import _worker_environment, _worker_init

    # the workers ignore SIGINT (Ctrl-C reaches the whole process group): this process stops
    # them and keeps the incumbent, and no worker prints a KeyboardInterrupt traceback
    with _worker_environment():
        return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_worker_init)


def _stop_pool(pool, hard: bool) -> None:
    if pool is None:
        return
    procs = list(getattr(pool, "_processes", {}).values()) if hard else []
    pool.shutdown(wait=not hard, cancel_futures=True)
    for p in procs:  # only the workers this call started
        if p.is_alive():
            p.terminate()


def _warm() -> int:
    return os.getpid()


class _sigint_blocked:
    """Block SIGINT in this thread while the worker processes are spawned (the pool starts
    them at these submits): a spawned process inherits the signal mask, so a Ctrl-C, which
    reaches the whole process group, never interrupts a worker still importing numpy (its
    initializer, which ignores SIGINT, runs only after the imports: the traceback of each
    such worker was printed). In this process a Ctrl-C sent meanwhile is delivered when the
    mask is restored (or at once by another thread); nothing is lost."""

    def __enter__(self):
        import signal

        self.old = None
        try:
            self.old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        except (AttributeError, ValueError, OSError):  # pragma: no cover  (no POSIX signal masks)
            pass

    def __exit__(self, *exc):
        import signal

        if self.old is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, self.old)


def _portfolio(Z, k, ctx, info, processes: int) -> Solution:
    from ..large._executors import available_cores, blas_threads
    from .._partition import canonical_labels
    from ._decomposition import split_along_groups

    n, d = Z.shape
    cores = processes or available_cores()
    limit = ctx.remaining()
    end_wall = time.time() + limit  # the workers' common deadline (wall clock: shared by processes)
    margin = min(1.0, 0.02 * limit)  # for handing the answers back
    timing = info["seconds"] = {}
    components: list[dict] = []
    info["components"] = components
    t = time.monotonic()
    workers = max(0, cores - 1) if limit >= MIN_WORKER_LIMIT else 0
    pool = _pool(workers) if workers else None
    # The workers' components: column generation on small problems (or from 3 cores), the
    # decomposition heuristic from 4 cores; every other worker shares ICSM's restarts.
    long_plan: list[str] = []
    if workers >= 1 and (n <= COLGEN_SMALL_N or workers >= 2):
        long_plan.append("column-generation")
    if workers >= 3:
        long_plan.append("decomposition")
    split_workers = workers - len(long_plan)
    info["plan"] = {"cores": cores, "workers": long_plan + ["icsm-restarts on a part"] * split_workers}
    futures: list = []
    chain_futures: list = []
    stopper = _StopFile() if pool is not None else None
    stop_path = stopper.path if stopper is not None else None
    # With workers on the other cores, this process's BLAS runs on one thread: OpenBLAS's
    # idle threads busy-wait, and the chain's Tour2Assignment restarts took the column-
    # generation worker's core (blas_threads).
    blas = blas_threads(1) if pool is not None else None
    if blas is not None:
        blas.__enter__()
    try:
        if pool is not None:  # start the workers (a fresh interpreter each) while this one works
            try:
                with _sigint_blocked():
                    for _ in range(workers):
                        pool.submit(_warm)
            except Exception as exc:  # workers cannot start (e.g. no __main__ guard): go on alone
                info["workers_failed"] = f"{type(exc).__name__}: {exc}"
                _stop_pool(pool, hard=True)
                pool, split_workers, long_plan = None, 0, []
        m, base, base_sse = _baseline(Z, k, ctx)
        timing["mdav+two-swap"] = time.monotonic() - t
        info["baseline_sse"] = base_sse
        best = _Best(base, base_sse, "mdav+two-swap")
        if pool is not None:
            for name in long_plan:  # they start from the shared incumbent and run to the deadline
                options = _cut_options(ctx.remaining(), k) if name == "column-generation" else None
                futures.append((pool.submit(_component, name, Z, k, best.labels, ctx.seed(), end_wall - margin,
                                            stop_path, options), name))
        lower = None
        # the neighbour bound costs O(n^2 d): at once on small data, else only with time to spare
        if n <= BOUND_MAX_N and not ctx.expired() and (n * n * d <= 2e7 or limit >= 30):
            t = time.monotonic()
            lower = neighbour_bound(Z, k)
            timing["bound"] = time.monotonic() - t
            info["bound_from"] = "nearest-neighbour bound"
        icsm = _improver("icsm")
        # How the restarts use the cores. "chains" (n <= CHAINS_MAX_N): every process runs its
        # own chain of restarts on all the data (this one from MDAV, the workers from MDAV +
        # two-swap, each with its own seed); at the end of each epoch (EPOCH_SECONDS) the best
        # partition of all becomes every chain's start. "parts" (larger n): the best partition
        # is cut into parts of whole groups (along a path over the group centroids, from
        # another group each epoch), each part gets restarts in its own process, and the union
        # (a k-partition whose SSE is the sum of the parts') replaces the incumbent when better;
        # a last ICSM pass repairs the borders. Either way every core starts at once (the
        # first ICSM run is each chain's or part's own), so no core waits for a serial step.
        # Alone: one ICSM run from MDAV, then restarts on all the data.
        if split_workers and n <= CHAINS_MAX_N:
            mode, parts_n = "chains", 1
        elif split_workers and n >= 4 * k * (1 + split_workers) * 10:
            mode, parts_n = "parts", 1 + split_workers
        else:
            mode, parts_n = "alone", 1
        info["plan"]["restarts"] = mode
        if mode == "chains":
            info["plan"]["workers"] = long_plan + ["icsm-restarts chain on all the data"] * split_workers
        if mode in ("chains", "parts") and chain_regions(k, limit, mode) != chain_regions(k, 0.0, mode):
            info["plan"]["regions"] = (f"{region_groups(k)} groups, then ICSM's {LONG_REGION_GROUPS} with "
                                       f"Tour2Assignment from the first epoch that starts after "
                                       f"{LONG_REGIONS_AFTER:g} s" + (f" (epochs of {EPOCH_SECONDS:g} s)" if mode == "chains"
                                                                   else f" ({EPOCHS} epochs in all)"))
        # 1. (alone) one ICSM run from MDAV (a local optimum for the restarts to start from)
        t = time.monotonic()
        if mode == "alone" and not ctx.expired():
            sol = icsm(Z, m, k, ctx.child(seconds=max(0.01, ctx.remaining() - margin), stage="icsm"))
            value = sse(Z, sol.labels)
            components.append({"name": "icsm", "where": "this process", "from": "mdav", "sse": value,
                               "seconds": time.monotonic() - t, "status": sol.status})
            if best.offer(sol.labels, value, "icsm"):
                ctx.offer(best.labels, best.sse)
            timing["icsm"] = time.monotonic() - t
        # column generation takes a worker's chain over on long budgets (CG_* above)
        cg = {"state": "off"}
        if mode == "chains" and not long_plan and limit >= CG_MIN_LIMIT and n <= CG_MAX_N and k <= CG_MAX_K:
            cg = {"state": "planned", "at": min(CG_SWITCH_SECONDS, 0.25 * limit)}
            info["plan"]["column_generation"] = (f"takes a worker's chain over after {cg['at']:g} s, seeded with the "
                                                 "best partition; when it is done that worker dives from its "
                                                 "converged LP (or runs a chain again)" +
                                                 (f"; at k <= {CUT_MAX_K} subset-row cuts after its LP for at "
                                                  f"most {CUT_SECONDS:g} s, for the bound" if k <= CUT_MAX_K else ""))
        # 2. restarts until the deadline, in epochs
        if mode == "chains":
            epochs = max(1, int((ctx.remaining() - margin) // EPOCH_SECONDS))
        elif mode == "parts":
            epochs = EPOCHS if ctx.remaining() >= 20 else 1
        else:
            epochs = 1
        t = time.monotonic()
        for epoch in range(epochs):
            if ctx.expired():
                break
            rem = ctx.remaining() - margin
            span = rem / (epochs - epoch) if epoch < epochs - 1 else rem
            epoch_end = time.time() + span
            # the first epoch starts from MDAV's groups (each chain or part runs ICSM first)
            source = m if (epoch == 0 and mode != "alone") else best.labels
            if mode == "parts":
                start = None if epoch == 0 else int(ctx.rng.integers(1 << 30))
                parts = split_along_groups(Z, source, parts_n, "path", start=start)
                tasks = [(rows, canonical_labels(source[rows])) for rows in parts]
            elif mode == "chains":  # the workers' chains start from MDAV + two-swap in the first epoch
                everything = np.arange(n)
                free = split_workers
                if cg["state"] in ("running", "diving") and cg["future"].done():  # the worker is free again
                    done_name = "column-generation" if cg["state"] == "running" else "dives"
                    cg["state"] = "done"
                    futures.remove((cg["future"], done_name))
                    res = _collect(cg["future"], done_name, best, components, ctx, time.monotonic() + 1.0, stopper)
                    if res is not None and done_name == "column-generation":
                        cg["integral"] = res.pop("integral_groups", None)
                    if res is not None and res.get("lower_bound") is not None and \
                            (lower is None or float(res["lower_bound"]) > lower):
                        lower = float(res["lower_bound"])
                        info["bound_from"] = _bound_argument(res)
                    # a converged LP: the worker dives from the best partition, in rounds
                    # (DIVE_ROUND_SECONDS) so that the best is exchanged, instead of its chain
                    if cg.get("integral") and end_wall - margin - time.time() >= DIVE_MIN_SECONDS + 5.0:
                        dive_end = min(end_wall - margin, epoch_end + EPOCH_SECONDS *
                                       max(0, round(DIVE_ROUND_SECONDS / EPOCH_SECONDS) - 1))
                        try:
                            cg["future"] = pool.submit(_component, "dives", Z, k, best.labels, ctx.seed(), dive_end,
                                                       stop_path, {"integral": cg["integral"]})
                            cg["state"] = "diving"
                            futures.append((cg["future"], "dives"))
                            info["seconds"].setdefault("dives started at", round(ctx.elapsed(), 3))
                        except Exception as exc:  # the workers are gone: the loop below goes on alone
                            info["workers_failed"] = f"{type(exc).__name__}: {exc}"
                if cg["state"] == "planned" and ctx.elapsed() >= cg["at"] and ctx.remaining() >= CG_MIN_LEFT:
                    try:
                        cg["future"] = pool.submit(_component, "column-generation", Z, k, best.labels, ctx.seed(),
                                                   end_wall - margin, stop_path, _cg_options(ctx.remaining(), k))
                        cg["state"] = "running"
                        cg["started"] = ctx.elapsed()
                        info["seconds"]["column-generation started at"] = round(cg["started"], 3)
                        futures.append((cg["future"], "column-generation"))
                    except Exception as exc:  # the workers are gone: the loop below goes on alone
                        info["workers_failed"] = f"{type(exc).__name__}: {exc}"
                        cg["state"] = "off"
                if cg["state"] in ("running", "diving"):
                    free -= 1
                tasks = [(everything, source)] + [(everything, base if epoch == 0 else best.labels)] * free
            else:
                tasks = [(np.arange(n), source)]
            part_futures = []
            regions = (chain_regions(k, ctx.elapsed(), mode) if mode in ("chains", "parts")
                       else {"region_groups": region_groups(k)})
            chain_futures = part_futures if mode == "chains" else []  # all the data: usable after a Ctrl-C
            try:
                for rows, start_labels in tasks[1:]:
                    Zp = Z if rows.size == n else np.ascontiguousarray(Z[rows])
                    f = pool.submit(_component, "icsm-restarts", Zp, k, start_labels, ctx.seed(), epoch_end,
                                    stop_path, {"regions": regions})
                    part_futures.append((f, rows, start_labels))
            except Exception as exc:  # the workers are gone: this process takes all the data
                info["workers_failed"] = f"{type(exc).__name__}: {exc}"
                mode, parts_n, part_futures = "alone", 1, []
                tasks = [(np.arange(n), best.labels if epoch else source)]
            rows0, labels0 = tasks[0]
            Z0 = Z if rows0.size == n else np.ascontiguousarray(Z[rows0])
            if mode != "parts":  # all the data: its improvements are the run's incumbent at once
                sub = ctx.child(seconds=max(0.01, span),
                                stage="icsm-restarts" if mode == "alone" else "icsm-restarts (chain 1)")
            else:  # its own incumbent (a part's labels must never become the whole data's)
                sub = Context(ctx.rng, _deadline=ctx.deadline.child(seconds=max(0.01, span)),
                              stage=f"icsm-restarts ({'chain' if mode == 'chains' else 'part'} 1)")
            sol = icsm(Z0, labels0, k, sub, max_restarts=None, **regions)
            entry = {"name": "icsm-restarts", "mode": mode, "epoch": epoch + 1, "processes": len(tasks),
                     "regions": dict(regions),
                     "restarts": [sol.info.get("restarts")], "seconds": time.monotonic() - t}
            if mode == "chains":
                value = sse(Z, sol.labels)
                entry["sse"] = [value]
                if best.offer(sol.labels, value, "icsm-restarts (chain in this process)"):
                    ctx.offer(best.labels, best.sse)
            union = np.empty(n, dtype=np.int64)
            union[rows0] = sol.labels
            offset = int(np.max(sol.labels)) + 1
            missing = 0
            until = time.monotonic() + max(0.0, epoch_end - time.time()) + min(2.0, 0.04 * limit)
            for f, rows, start_labels in part_futures:
                res = _collect(f, "icsm-restarts", None, None, ctx, until, stopper)
                if res is None:  # no answer in time: the part keeps its starting groups
                    missing += 1
                    part_labels = np.asarray(canonical_labels(start_labels))
                else:
                    part_labels = res["labels"]
                    entry["restarts"].append(res.get("restarts"))
                if mode == "chains":
                    if res is not None:
                        entry["sse"].append(res["sse"])
                        if best.offer(part_labels, res["sse"], "icsm-restarts (chain in a worker)"):
                            ctx.offer(best.labels, best.sse)
                    continue
                union[rows] = part_labels + offset
                offset += int(part_labels.max()) + 1
            if mode == "parts":
                value = sse(Z, union)
                entry["sse"] = value
                entry["sizes"] = [int(r.size) for r, _ in tasks]
                if best.offer(union, value, f"icsm-restarts on {len(tasks)} parts"):
                    ctx.offer(best.labels, best.sse)
            elif mode == "alone":
                value = sse(Z, sol.labels)
                entry["sse"] = value
                if best.offer(sol.labels, value, "icsm-restarts"):
                    ctx.offer(best.labels, best.sse)
            if missing:
                entry["status"] = f"{missing} worker{'s' if missing > 1 else ''} had no answer in time"
            components.append(entry)
            ctx.report(stage=f"restarts, epoch {epoch + 1}", sse=best.sse, lower_bound=lower)
        timing["icsm-restarts"] = time.monotonic() - t
        # 3. the parts' borders: one ICSM pass on all the data with what is left
        if mode == "parts" and not ctx.expired():
            t = time.monotonic()
            sol = icsm(Z, best.labels, k, ctx.child(seconds=max(0.01, ctx.remaining() - margin), stage="polish"))
            value = sse(Z, sol.labels)
            if best.offer(sol.labels, value, best.who + " + polish"):
                ctx.offer(best.labels, best.sse)
            timing["polish"] = time.monotonic() - t
        # the long-running workers' answers, due at the deadline
        until = time.monotonic() + max(0.0, ctx.remaining()) + min(2.0, 0.04 * limit)
        for f, name in futures:
            res = _collect(f, name, best, components, ctx, until, stopper)
            if res is not None:
                res.pop("integral_groups", None)  # for the dives only, not for the report
            if res is not None and res.get("lower_bound") is not None:
                lb = float(res["lower_bound"])
                if lower is None or lb > lower:
                    lower = lb
                    info["bound_from"] = _bound_argument(res)
    except KeyboardInterrupt:
        # Ctrl-C: this process's best is the context's incumbent; the workers are told to stop
        # and the partitions they hold (all the data: chains and long components) are taken
        # when they come within INTERRUPT_WAIT seconds. The caller returns the incumbent.
        ctx.deadline.stop()
        if stopper is not None:
            stopper.raise_()
            _gather(chain_futures + [f for f, _ in futures], ctx, stopper.at + INTERRUPT_WAIT, n)
            info["interrupted"] = "Ctrl-C: the workers were asked for their best partitions"
        raise
    finally:
        if blas is not None:
            blas.__exit__()
        _stop_pool(pool, hard=True)
        if stopper is not None:
            if stopper.raised:
                info["interrupted"] = "Ctrl-C: the workers were asked for their best partitions"
            stopper.remove()
    info["winner"] = best.who
    status = "limit"
    note = ""
    if lower is not None and best.sse <= lower + 1e-9 * max(1.0, best.sse):
        status, note = "done", "; optimal: the lower bound equals the IL found"
    shown = ctx._shared.limit if ctx._shared.limit is not None else limit  # the caller's limit
    plan_text = ", ".join(info["plan"]["workers"]) or "none"
    if "column-generation started at" in timing:
        plan_text += f"; column generation in a worker from {timing['column-generation started at']:.0f} s"
    cuts = next((c["subset_row_cuts"] for c in components if c.get("subset_row_cuts")), None)
    if cuts is not None:  # column generation's cut phase (k <= CUT_MAX_K): its time and bound
        timing["subset-row cuts (column generation)"] = cuts["seconds"]
        plan_text += (f", subset-row cuts {cuts['seconds'] or 0:.0f} s ({cuts['cuts']} cuts, "
                      f"{cuts['rounds']} rounds proven)")
    if "dives started at" in timing:
        plan_text += f", dives from its LP from {timing['dives started at']:.0f} s"
    bound_text = f"; bound: {info['bound_from']}" if lower is not None and info.get("bound_from") else ""
    message = (f"auto ({shown:g} s on {cores} core{'s' if cores != 1 else ''}: ICSM restarts; workers: {plan_text}): "
               f"best: {best.who}{bound_text}{note}")
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


def _cg_options(remaining: float, k: int) -> dict:
    """Column generation's options in the portfolio: the MIP over the generated groups may use
    a third of the time left (its default, 60 s, stopped HiGHS at "feasible" on Census k = 3).
    60 s at k >= 4 (so that the dives get the time) was measured worse (stop 28, 600 s):
    Census k = 5 7.3010, its MIP found nothing in 60 s, against 7.2534 at stop 27, where the
    MIP's 185 s found SSE 1017.96 at about 504 s while the chain was stuck at 1033.5.

    The master LP stays GLOP (warm re-solves). Measured on Tarragona k = 5 (stop 28, this
    option set without the MIP, seeded with an ICSM partition, one core each, side by side
    through the timing lock): GLOP converged the LP in 154.6 s (64 iterations, 31 527
    columns; master 127.8 s, pricing 25.6 s); ``lp_solver="highs", smoothing=0.5`` had not
    proven it after 251 s (61 iterations; master 132.2 s, exact pricing 91.7 s in 152 rounds;
    bound 20.12010 against the LP's 20.12012). The stop-27 cell's 430 s without convergence
    (stop 26: 229 s) was this process's chain taking the worker's core (``blas_threads``).

    The ascent switch (``ascent_switch``: a loop with no finished exact pricing round after a
    quarter of its time hands its time to the record ascent) was measured at k = 10 only; the
    portfolio runs column generation at k <= 5, where its 600-s cells converged the LP
    without it, so it stays off here until measured there. At k <= 3 the subset-row cuts
    (:func:`_cut_options`)."""
    return {"mip_time": max(60.0, remaining / 3.0), "ascent_switch": 1.0, "integral_groups": True,
            **_cut_options(remaining, k)}


def _cut_options(remaining: float, k: int) -> dict:
    """Subset-row cuts after a converged LP at ``k <= CUT_MAX_K`` (column generation runs them
    by default only as the method itself): at most CUT_ROUNDS separations in at most
    ``min(CUT_SECONDS, CUT_SHARE * remaining)`` seconds.

    >>> _cut_options(540.0, 3)
    {'cut_rounds': 50, 'cut_time': 90.0}
    >>> _cut_options(10.0, 3)
    {'cut_rounds': 50, 'cut_time': 2.0}
    >>> _cut_options(540.0, 4)
    {}
    """
    if k > CUT_MAX_K:
        return {}
    return {"cut_rounds": CUT_ROUNDS, "cut_time": min(CUT_SECONDS, CUT_SHARE * remaining)}


def _warm_cut_kernel(deadline) -> None:
    """Compile (or load from numba's disk cache) the pricing with cut penalties before column
    generation starts, where the whole budget is ahead: the cut phase's capped time
    (``cut_time`` < the pricing's ``COMPILE_MIN_SECONDS``) would refuse to compile it, and on
    a machine whose cache does not hold it yet the cuts would never run. Compiling took about
    half a minute of CPU, once per installation; skipped (None) on deadlines too short for it."""
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


def _collect(future, name, best, components, ctx, until, stopper=None) -> dict | None:
    """Wait for a worker's answer until ``until`` (monotonic), showing progress meanwhile.

    After a Ctrl-C (the deadline's stop flag) the workers are told to stop (``stopper``) and
    their answers, the best partitions they hold, are awaited ``INTERRUPT_WAIT`` seconds at most."""
    from concurrent.futures import TimeoutError as FutureTimeout

    while True:
        left = until - time.monotonic()
        if ctx.deadline._stop[0]:  # interrupted (Ctrl-C): the workers hand back what they hold
            if stopper is None:
                left = 0
            else:
                stopper.raise_()
                left = min(left, stopper.at + INTERRUPT_WAIT - time.monotonic())
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
                 summary="the best partition the time allows: without time_limit a fixed, reproducible amount of "
                         "work (MDAV + two-swap, ICSM, ICSM restarts; never worse than MDAV + two-swap); with "
                         "time_limit a portfolio on every core (ICSM restarts, column generation for the bound, ...)")
def _auto_solver(Z: np.ndarray, k: int, ctx: Context, *, effort: str = "full", processes: int = 0) -> Solution:
    check_choice(effort, "effort", ("full", "light"))
    check_positive_int(processes, "processes", minimum=0)
    n, d = Z.shape
    info: dict = {"effort": effort}
    if n < 2 * k:
        labels = np.zeros(n, dtype=np.int64)
        return Solution(labels=labels, status="done", lower_bound=sse(Z, labels),
                        message="auto: fewer than 2k records: one group, optimal", info=info)
    if effort == "light":  # inside the blocks of the large-data path
        t = time.monotonic()
        from ..large._local import batch_local_search, compiled_available

        if compiled_available():  # compiled sweeps: lower IL than two-swap in a small part of its time
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
    if not ctx.deadline.limited:
        return _fixed(Z, k, ctx, info)
    _not_in_a_starting_worker()
    return _portfolio(Z, k, ctx, info, processes)


def _not_in_a_starting_worker() -> None:
    """Refuse to run the portfolio inside a worker process that is still starting.

    The portfolio's workers are spawned: each imports the calling script again, and a script
    without an ``if __name__ == "__main__":`` guard then calls ``auto`` once more in every
    worker. That call could not start workers of its own and ran the whole budget alone, so
    every worker spent its core on a second copy of the user's run (its answer never used)
    while the caller ran without help. Raising here stops that worker at once (the caller
    goes on with the cores it has) and says how to fix the script."""
    import multiprocessing

    if getattr(multiprocessing.current_process(), "_inheriting", False):
        raise RuntimeError("method 'auto' with a time limit starts worker processes, which import the calling "
                           "script again; this is such a worker: put the script's call under "
                           "`if __name__ == \"__main__\":`")
