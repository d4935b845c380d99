"""The decomposition heuristic of Castro, Gentile and Spagnolo-Arrizabalaga (PSD 2022, Sect. 2).

1. standardize (done by the facade); 2. best of MDAV and V-MDAV; 3. local search (ICSM
with restarts by default; two-swap in the paper);
4. split the records into ``s' <= s`` subsets of about ``round(n/s)`` records along the groups
of step 3; 5. column generation on each subset (in parallel worker processes when there are
several cores); 6. union of the subset partitions; 7. local search again. With a time
limit, further rounds of 4-7 (new splits) until the deadline.
"""

from __future__ import annotations

import math
import os

import numpy as np

from .._context import Context
from .._partition import canonical_labels, groups_from_labels, sse
from .._registry import register_method
from .._result import Solution
from .._validation import check_choice, check_n_jobs, check_number, check_positive_int
from ..constructive._mdav import mdav_labels
from ._column_generation import solve_column_generation

__all__ = ["split_along_groups"]


def _icsm(Z, labels, k, ctx, **options) -> Solution:
    """ICSM's improvement core (imported when used: the registration order stays the same)."""
    from ..local_search._icsm import _icsm_improver

    return _icsm_improver(Z, labels, k, ctx, **options)


def _two_swap(Z, labels, k, ctx) -> Solution:
    from ..local_search._two_swap import _two_swap_improver

    return _two_swap_improver(Z, labels, k, ctx)


def _vmdav(Z, k, ctx) -> Solution:
    from ..constructive._vmdav import _vmdav_solver

    return _vmdav_solver(Z, k, ctx)


_LOCAL_SEARCH = {
    # name: (improvement core, its options)
    "two-swap": (_two_swap, {}),
    "icsm": (_icsm, {}),
    "icsm-restarts": (_icsm, {"max_restarts": None}),
}


def _local_search(Z, labels, k, ctx, notes, stage, kind):
    """Steps 3 and 7: the chosen local search from ``labels``; never raises the SSE."""
    if kind == "none":
        return labels, None
    core, options = _LOCAL_SEARCH[kind]
    sub = ctx.child(stage=stage)
    if options.get("max_restarts", 0) is None and not sub.deadline.limited:
        options = {**options, "max_restarts": 0}
        notes.append(f"{stage}: no time limit, ICSM ran without restarts")
    sol = core(Z, labels, k, sub, **options)
    new = np.asarray(sol.labels)
    if sse(Z, new) <= sse(Z, labels) + 1e-12:
        return new, sol.status
    return labels, sol.status


def split_along_groups(Z: np.ndarray, labels: np.ndarray, s: int, order: str = "path",
                       start: int | None = None) -> list[np.ndarray]:
    """Step 4: cut the groups of ``labels`` into ``s' <= s`` subsets of at least
    ``round(n/s)`` records (the last takes what is left), adding whole groups in turn.

    ``order="sequential"`` adds the groups in label order (the paper); ``order="path"``
    first orders the groups along a nearest-neighbour path over their centroids (from the
    centroid farthest from the overall mean, or from group ``start``), so that each subset
    is spatially compact.
    """
    groups = groups_from_labels(canonical_labels(labels))
    n = Z.shape[0]
    target = max(1, int(round(n / s)))
    if order == "path" and len(groups) > 2:
        C = np.array([Z[g].mean(axis=0) for g in groups])
        left = np.ones(len(groups), dtype=bool)
        cur = int(np.argmax(((C - C.mean(axis=0)) ** 2).sum(axis=1))) if start is None else int(start) % len(groups)
        seq = []
        for _ in range(len(groups)):
            seq.append(cur)
            left[cur] = False
            if not left.any():
                break
            d = ((C - C[cur]) ** 2).sum(axis=1)
            d[~left] = np.inf
            cur = int(np.argmin(d))
        groups = [groups[i] for i in seq]
    subsets, current, size = [], [], 0
    for g in groups:
        current.append(g)
        size += g.size
        if size >= target:
            subsets.append(np.sort(np.concatenate(current)))
            current, size = [], 0
    if current:
        if subsets and size < target // 2:
            subsets[-1] = np.sort(np.concatenate([subsets[-1]] + current))
        else:
            subsets.append(np.sort(np.concatenate(current)))
    return subsets


#: Seconds a subset's worker may be late past the subsets' common end before its subset
#: keeps the input partition's labels.
_LATE = 0.2


def _stop_pool(pool) -> None:
    """Shut ``pool`` down without waiting for its tasks: its worker processes are terminated."""
    from ..large._executors import stop_pool

    stop_pool(pool, terminate=True)


def _solve_subset(args):
    """Column generation on one subset (runs in a worker process or in-process): ``per``
    seconds from its start, and no later than ``end`` (absolute monotonic time) if given."""
    import time

    Zs, k, seed, per, end, seed_labels, options = args
    time_limit = per
    if end is not None:
        time_limit = max(0.0, min(per, end - time.monotonic()))
    ctx = Context(seed, time_limit)
    limited = ctx.deadline.limited
    seeds = [seed_labels, mdav_labels(Zs, k, deadline=ctx.deadline if limited else None)]
    # The subsets' lower bounds are not used: no time for the bound search.
    sol = solve_column_generation(Zs, k, ctx, seeds=seeds, **{"bound_steps": 0, **options})
    return (np.asarray(sol.labels), sol.lower_bound, sol.status,
            {key: sol.info.get(key) for key in ("iterations", "converged", "columns", "mip_status")})


def _s_for(k: int) -> int:
    """Default number of subsets: on 1 000 records, subsets of about 400, 170 and 85 records
    at k = 3, 5 and 10, small enough for column generation to converge on each."""
    return 2 if k <= 3 else 5 if k <= 5 else 10


@register_method("decomposition", randomized=True, renamed={"processes": "n_jobs"},
                 summary="decomposition heuristic: MDAV/V-MDAV, local search (ICSM restarts by default), column "
                         "generation per subset, local search; with a time limit, new splits until the deadline")
def _decomposition_solver(Z: np.ndarray, k: int, ctx: Context, *, s: int | None = None, step3: bool = True,
                          local_search: str = "icsm-restarts", split: str = "path", n_jobs: int | None = None,
                          subset_time_limit: float | None = None, max_iterations: int | None = None,
                          pricing_deterministic_time: float | None = None,
                          mip_time: float = 60.0, mip_deterministic_time: float | None = None,
                          max_rounds: int | None = None) -> Solution:
    if s is None:
        s = _s_for(k)
    check_positive_int(s, "s")
    check_choice(local_search, "local_search", ("two-swap", "icsm", "icsm-restarts", "none"))
    check_choice(split, "split", ("path", "sequential"))
    jobs = check_n_jobs(n_jobs, default=os.cpu_count() or 1)  # worker processes for the subsets
    check_number(subset_time_limit, "subset_time_limit", low=0, low_open=True, allow_none=True)
    check_positive_int(max_iterations, "max_iterations", allow_none=True)
    check_number(pricing_deterministic_time, "pricing_deterministic_time", low=0, low_open=True, allow_none=True)
    check_number(mip_time, "mip_time", low=0, low_open=True)
    check_number(mip_deterministic_time, "mip_deterministic_time", low=0, low_open=True, allow_none=True)
    check_positive_int(max_rounds, "max_rounds", allow_none=True)
    n = Z.shape[0]
    notes: list[str] = []
    info: dict = {"s": s, "split": split, "local_search": local_search}
    # Step 2: best of MDAV and V-MDAV (under a time limit MDAV is cut short by the deadline,
    # the rest in principal-axis runs, and V-MDAV runs only if time is left).
    limited = ctx.deadline.limited
    candidates = [("mdav", mdav_labels(Z, k, deadline=ctx.deadline if limited else None))]
    if not (limited and ctx.expired()):
        candidates.append(("vmdav", np.asarray(_vmdav(Z, k, ctx.child(stage="vmdav")).labels)))
    scored = [(sse(Z, lab), name, lab) for name, lab in candidates]
    best_sse, step2_name, labels = min(scored, key=lambda t: t[0])
    info.update(step2=step2_name, step2_sse=best_sse)
    ctx.offer(labels, best_sse)
    ctx.report(stage="step 2", sse=best_sse)
    if n < 2 * k:
        return Solution(labels=labels, status="done", info=info,
                        message="decomposition: fewer than 2k records: one group")
    if ctx.expired():
        return Solution(labels=labels, status="limit", info=info,
                        message=f"decomposition: the time limit came after step 2 ({step2_name})")
    # Step 3: 20 % of the time (the paper's two-swap needs little); half with ICSM restarts,
    # which give most of the gain.
    step3_share = 0.5 if local_search == "icsm-restarts" else 0.2
    if step3:
        labels, _ = _local_search(Z, labels, k, ctx.child(fraction=step3_share), notes, "step 3", local_search)
        info["step3_sse"] = sse(Z, labels)
        ctx.offer(labels, info["step3_sse"])
        ctx.report(stage="step 3", sse=info["step3_sse"])
    options = {"max_iterations": max_iterations, "pricing_deterministic_time": pricing_deterministic_time,
               "mip_time": mip_time, "mip_deterministic_time": mip_deterministic_time,
               # a deterministic MIP budget needs CP-SAT (HiGHS only takes wall-clock limits)
               "mip_solver": "cpsat" if mip_deterministic_time is not None else "highs"}
    # Steps 4-7, then (with a time limit) again with new splits until the deadline: each
    # round splits the best partition along a path from another group, re-solves the subsets
    # and keeps the union only if it is better. Two rounds in a row without a gain hand the
    # rest of the time to ICSM with restarts.
    rounds = max_rounds if max_rounds is not None else (None if limited else 1)
    best, best_value = labels, sse(Z, labels)
    statuses: list[str] = []
    history: list[dict] = []
    stale = 0
    r = 0
    while rounds is None or r < rounds:
        if r > 0 and (ctx.expired() or ctx.remaining() < 1.0):  # no time for another round
            break
        start = None if r == 0 else int(ctx.rng.integers(1 << 30))
        union, sub_info, st, seconds = _one_round(Z, k, ctx, best, s, split, start, jobs, subset_time_limit,
                                                  options, info)
        statuses.extend(st)
        union_sse = sse(Z, union)
        if r == 0:
            info["subset_results"] = sub_info
            info["step5_sse"] = union_sse
        ctx.offer(union, union_sse) if union_sse < best_value else None
        ctx.report(stage=f"round {r + 1}: subsets", sse=min(best_value, union_sse))
        # Step 7 (the chosen local search); with restarts it takes what is left of the time.
        final, _ = _local_search(Z, union, k, ctx, notes, "step 7", local_search)
        value = sse(Z, final)
        if r == 0:
            info["step7_sse"] = value
        history.append({"round": r + 1, "start": start, "union_sse": union_sse, "sse": value,
                        "seconds": seconds})
        if value < best_value - 1e-9 * max(1.0, best_value):
            best, best_value, stale = final, value, 0
            ctx.offer(best, best_value)
        else:
            stale += 1
        ctx.report(stage=f"round {r + 1}", sse=best_value)
        r += 1
        if limited and stale >= 2 and local_search != "icsm-restarts" and not ctx.expired():
            notes.append("two rounds without a gain: ICSM with restarts for the rest of the time")
            sol = _icsm(Z, best, k, ctx.child(stage="icsm-restarts"), max_restarts=None)
            value = sse(Z, sol.labels)
            info["icsm_restarts_sse"] = value
            if value < best_value:
                best, best_value = np.asarray(sol.labels), value
                ctx.offer(best, best_value)
            break
    info["rounds"] = history
    status = "limit" if ("limit" in statuses or ctx.expired()) else "done"
    summary = (f"decomposition: {r} round{'s' if r != 1 else ''} of {info['subsets']} subsets "
               f"(column generation each), local search {local_search}")
    if ctx.expired():
        summary += "; stopped at the time limit"
    elif status == "limit":
        summary += "; a subset's column generation stopped at its budget"
    return Solution(labels=best, status=status, message="; ".join([summary] + notes), info=info)


def _one_round(Z, k, ctx, labels, s, split, start, jobs, subset_time_limit, options, info):
    """Steps 4-6 from ``labels``: split, column generation per subset, union."""
    import time

    started = time.monotonic()
    n = Z.shape[0]
    subsets = split_along_groups(Z, labels, s, split, start=start)
    info["subsets"] = len(subsets)
    jobs = max(1, min(jobs, len(subsets)))
    info["processes"] = jobs
    rem = ctx.remaining()
    per = subset_time_limit
    if math.isfinite(rem):
        # with ICSM restarts in step 7, half of what is left goes to the subsets
        share = (0.5 if info.get("local_search") == "icsm-restarts" else 0.85) * rem * jobs / len(subsets)
        per = share if per is None else min(per, share)
    seeds = [ctx.seed() for _ in subsets]
    # In worker processes the subsets run side by side: their common end, an absolute
    # monotonic time (the same clock in every process), so a worker's start counts too.
    end = None if (per is None or jobs == 1 or not ctx.deadline.limited) else time.monotonic() + per
    tasks = []
    for rows, seed in zip(subsets, seeds):
        seed_labels = canonical_labels(labels[rows])
        tasks.append((np.ascontiguousarray(Z[rows]), k, seed, per, end, seed_labels, options))
    if jobs > 1:
        from concurrent.futures import ProcessPoolExecutor

        from ..large._executors import _worker_init, main_hidden

        # workers ignore SIGINT and never import the calling script; on Ctrl-C (or an error)
        # this process terminates them at once
        from concurrent.futures import wait

        pool = ProcessPoolExecutor(max_workers=jobs, initializer=_worker_init)
        try:
            with main_hidden():
                futures = [pool.submit(_solve_subset, t) for t in tasks]
            # A subset not back shortly after the common end (a worker late to start or
            # to stop) keeps its labels from the input partition.
            timeout = None if end is None else max(0.0, end - time.monotonic()) + _LATE
            finished, _ = wait(futures, timeout=timeout)
            results = [f.result() if f in finished else None for f in futures]
        except BaseException:
            _stop_pool(pool)
            raise
        if len(finished) < len(futures):
            _stop_pool(pool)
            results = [r if r is not None else (t[5], None, "limit", {"timed_out": True})
                       for r, t in zip(results, tasks)]
        else:
            pool.shutdown()
    else:
        results = [_solve_subset(t) for t in tasks]
    union = np.empty(n, dtype=np.int64)
    offset = 0
    sub_info = []
    statuses = []
    for rows, (lab, lb, st, inf) in zip(subsets, results):
        union[rows] = lab + offset
        offset += int(lab.max()) + 1
        statuses.append(st)
        sub_info.append({"n": int(rows.size), "sse": sse(Z[rows], lab), "lower_bound": lb, "status": st, **inf})
    return union, sub_info, statuses, time.monotonic() - started
