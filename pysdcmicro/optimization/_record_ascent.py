"""The per-record Lagrangian bound from truncated pricing, and the dual ascent on it.

:func:`record_lagrangian` proves ``optimum >= sum(pi) + sum_i m_i`` at ANY duals ``pi``, with
``m_i`` a lower bound on the least ``rc(C)/|C|`` over the groups containing record ``i``,
from branch and bounds stopped at a node budget; :func:`record_ascent` climbs through the
dual-feasible points ``pi + m`` it yields. Column generation runs it when the LP is not
solved in time."""

from __future__ import annotations

import math

import numpy as np

from ._branch_and_bound import _RATE, _bb_kernel, _bb_points, branch_and_bound_anchor
from ._lagrangian import _sqdist

__all__ = ["record_lagrangian", "record_supergradient", "record_ascent"]


def record_lagrangian(Z: np.ndarray, nbr_dist: np.ndarray, pi: np.ndarray, k: int, *,
                      node_limit: int = 2000, deadline=None, upper: np.ndarray | None = None,
                      hints: list | None = None, probes: int = 6, floor: float | None = None,
                      compiled: bool = True, starts: np.ndarray | None = None,
                      threads: int | None = None) -> dict:
    """The per-record Lagrangian bound at ANY duals ``pi``, from truncated pricing:

        optimum >= sum_i pi_i + sum_i m_i,   m_i <= min over groups C containing i of rc(C)/|C|,

    groups of ``k..2k-1`` records, ``rc(C) = SSE(C) - pi(C)``. Proof: an optimal partition
    has groups of ``k..2k-1`` records and ``SSE = sum(pi) + sum_C rc(C) = sum(pi) + sum_i
    rc(C(i))/|C(i)|`` (each group's reduced cost shared equally by its members), and each
    term is at least ``m_i``. ``m_i`` may be positive (no clipping at 0).

    ``m_i`` comes from a branch and bound per record and size (the compiled search of
    :mod:`._bb_numba`, record ``i`` at position 0, candidates all the other records left by
    the sorted-distance test) stopped after ``node_limit`` nodes: a stopped search gives the
    least bound of its open nodes, never more than its minimum, so the bound is valid
    whatever the budget (the budget only decides how tight it is). Sizes are searched with
    the best ratio found so far as cut-off; when a search stops at its budget, up to
    ``probes`` searches with lower cut-offs (bisection between the relaxation and the best
    ratio found) prove the largest ratio they can: a finished search with cut-off ``T``
    proves that no group is below ``T``, and low cut-offs prune most of the tree.

    Returns ``bound`` (float, with a float-safety margin), ``m`` (the per-record lower
    bounds), ``groups`` (for each record the best group found containing it, or None:
    the supergradient of the bound is ``1 - sum_i [j in groups_i] / |groups_i|``), ``ratio``
    (the best group's rc/|C| per record: upper bounds of the true minima), ``complete`` (every
    search finished: ``m`` is exact), ``nodes``. ``upper``: optional known upper bounds on the
    per-record minima (cut-offs); ``hints``: a group per record (or None), e.g. the groups of
    an earlier call, whose reduced cost at ``pi`` is a first cut-off. ``floor``: a value known
    to bound every ``m_i`` from below (0 when ``pi`` is dual feasible, i.e. no group has a
    negative reduced cost), used where the searches prove less. ``node_limit`` may be one
    budget per record (an array); ``starts``: optional ratios, one per record, probed second
    (a warm start of the bisection: any value is valid, since only a finished search
    counts). ``threads``: worker threads over the records (default: the CPUs this process
    may use; the compiled search releases the GIL); the result does not depend on it. Time
    O(n^2 d k) for the tests plus the searches, memory O(n k) per thread.
    """
    n = Z.shape[0]
    cums = np.cumsum(nbr_dist, axis=1)
    norms = np.einsum("ij,ij->i", Z, Z)
    kernel = _bb_kernel(points=True, deadline=deadline) if compiled else None
    m = np.empty(n)
    ratio = np.full(n, np.inf)
    groups: list = [None] * n
    done = np.zeros(n, dtype=bool)
    exact = np.zeros(n, dtype=bool)
    counted = np.zeros(n, dtype=np.int64)
    budgets = node_limit if np.ndim(node_limit) else None

    def one(i: int) -> None:
        budget = int(budgets[i]) if budgets is not None else int(node_limit)
        start = None if starts is None else float(starts[i])
        mi, ri, rows, nodes_i, full = _record_value(Z, norms, cums, pi, k, i, kernel, budget, deadline,
                                                    None if upper is None else float(upper[i]),
                                                    None if hints is None else hints[i], probes, floor,
                                                    start)
        m[i], ratio[i], groups[i], counted[i], exact[i] = mi, ri, rows, nodes_i, full
        done[i] = True

    workers = _threads(threads, n, kernel)
    if workers <= 1:
        for i in range(n):
            if deadline is not None and deadline.expired():
                break
            one(i)
    else:
        # Records in parallel threads (the compiled search releases the GIL; so do numpy's
        # large operations): each record's value depends on ``pi``, ``upper`` and ``hints``
        # only, so the result is the serial one whatever the order (tested).
        import threading

        lock = threading.Lock()
        nxt = [0]
        stop = threading.Event()  # set on an error or an interrupt: the workers quit
        errors: list = []

        def run() -> None:
            try:
                while not stop.is_set():
                    with lock:
                        i = nxt[0]
                        nxt[0] += 1
                    if i >= n or (deadline is not None and deadline.expired()):
                        return
                    one(i)
            except BaseException as exc:  # pragma: no cover - re-raised below
                errors.append(exc)
                stop.set()

        pool = [threading.Thread(target=run, daemon=True) for _ in range(workers)]
        try:
            for t in pool:
                t.start()
            for t in pool:
                t.join()
        except BaseException:  # Ctrl-C in the main thread: the workers stop after their record
            stop.set()
            raise
        if errors:
            raise errors[0]
    if not done.all():
        # Records not reached: the neighbour bound of every one at once (O(n k) in all, where
        # the per-record relaxation costs O(n (d + k log n)) each, past the deadline).
        rest = np.flatnonzero(~done)
        m[rest] = _neighbour_ratio(cums, pi, k, rest)
        if floor is not None:
            m[rest] = np.maximum(m[rest], floor)
    bound = float(pi.sum() + m.sum())
    bound -= 1e-9 * (float(np.abs(pi).sum()) + float(np.abs(m).sum()) + 1.0)
    return {"bound": bound, "m": m, "groups": groups, "ratio": ratio, "complete": bool(exact.all()),
            "nodes": int(counted.sum())}


def _threads(threads: int | None, n: int, kernel) -> int:
    """Worker threads for :func:`record_lagrangian`: ``threads`` when given, else the CPUs this
    process may use (at most 2 without the compiled search, whose numpy stand-in holds the
    GIL most of the time), 1 for tiny inputs."""
    if threads is not None:
        return max(1, int(threads))
    if n < 64:
        return 1
    import os

    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 8 if kernel is not None else 1))


def _record_value(Z, norms, cums, pi, k, i, kernel, node_limit, deadline, upper, hint, probes, floor,
                  start):
    """``m_i`` for one record (see :func:`record_lagrangian`): returns ``(m_i, best ratio,
    best group, nodes, exact)``. ``start``: a ratio to probe first after the best one (a warm start of the
    bisection, e.g. what the previous ascent step proved, shifted to these duals)."""
    n = Z.shape[0]
    sizes = list(range(k, min(2 * k - 1, n) + 1))
    nodes = 0
    Di = np.maximum(norms[i] - 2.0 * (Z @ Z[i]) + norms, 0.0)
    Di[i] = np.inf
    # The 2k-2 nearest other records, nearest first (an O(n) selection, not a full sort).
    near = min(2 * k - 2, n - 1)
    ordD = np.argpartition(Di, near - 1)[:near] if near < n else np.argsort(Di)
    ordD = ordD[np.lexsort((ordD, Di[ordD]))]
    best_ratio = math.inf if upper is None else upper
    best_rows = None
    if hint is not None and k <= hint.size <= 2 * k - 1:
        rows = hint
        G = Z[rows]
        rc = float(((G - G.mean(axis=0)) ** 2).sum() - pi[rows].sum())
        if rc / rows.size < best_ratio:
            best_ratio, best_rows = rc / rows.size, rows
    relax = {}
    es = {}
    for s in sizes:
        a2 = cums[:, s - 2] if s >= 2 else np.zeros(n)
        e = (2.0 * Di + a2) / (2.0 * s) - pi
        e[i] = np.inf
        part = np.partition(e, s - 2)[: s - 1] if s >= 2 else np.zeros(0)
        relax[s] = -pi[i] + float(part.sum())
        es[s] = e
        # A real group: i and its s-1 nearest records (cut-off for the searches).
        rows = np.concatenate([[i], ordD[: s - 1]])
        G = Z[rows]
        rc = float(((G - G.mean(axis=0)) ** 2).sum() - pi[rows].sum())
        if rc / s < best_ratio:
            best_ratio, best_rows = rc / s, np.sort(rows)
    # Bisection on the ratio r: a probe runs, for every size whose relaxation is below r, a
    # search with cut-off s r and the node budget; when every search finishes, no group
    # containing i has a ratio below min(r, best found), so m_i >= that. The first probe is
    # at the best ratio known (the exact minimum when it finishes), the second at ``start``
    # when given (inside the bracket), then halves.
    lo = min(relax[s] / s for s in sizes)
    if floor is not None:
        lo = max(lo, min(floor, best_ratio))
    hi_try = best_ratio
    for probe in range(probes):
        if lo >= best_ratio - 1e-12 * (abs(best_ratio) + 1.0):
            break
        if deadline is not None and deadline.expired():
            break
        top = min(hi_try, best_ratio)
        if probe == 0:
            r = best_ratio
        elif probe == 1 and start is not None and lo < start < top:
            r = start
        else:
            r = lo + 0.5 * (top - lo)
        finished = True
        for s in sorted(sizes, key=lambda t: relax[t]):
            if relax[s] / s >= r:
                continue
            if deadline is not None and deadline.expired():
                finished = False  # one search per check (the numpy search on all the
                break  # records costs O(n^2 d))
            e = es[s]
            thr = s * r
            if s >= 3:
                low = np.argpartition(e, s - 3)[: s - 2]
                keep = e + float(e[low].sum()) - pi[i] < thr
                keep[low] = True
            else:
                keep = e - pi[i] < thr
            cand = np.flatnonzero(keep)
            cand = cand[np.isfinite(e[cand])]
            cand = cand[np.argsort(e[cand], kind="stable")]
            members = np.concatenate([[i], cand])
            if kernel is not None:
                res = _bb_points(kernel, Z[members], pi[members], cums[cand, :s], s,
                                 node_limit=node_limit, deadline=None, keep=1, rate=[_RATE[0]], best=thr)
            else:
                Dsub = _sqdist(Z[members], Z[members])
                res = branch_and_bound_anchor(Dsub, pi[members], s, best=thr, node_limit=node_limit,
                                              keep=1)
            nodes += res["nodes"]
            for pos, _v in res["columns"]:
                rows = np.sort(members[pos])
                G = Z[rows]
                rc = float(((G - G.mean(axis=0)) ** 2).sum() - pi[rows].sum())
                if rc / s < best_ratio:
                    best_ratio, best_rows = rc / s, rows
            if not res["complete"]:
                finished = False
                break
        if finished:
            lo = max(lo, min(r, best_ratio))
        else:
            hi_try = r
    exact = not (lo < best_ratio - 1e-12 * (abs(best_ratio) + 1.0))
    return min(lo, best_ratio), best_ratio, best_rows, nodes, exact


def _neighbour_ratio(cums: np.ndarray, pi: np.ndarray, k: int, rows: np.ndarray) -> np.ndarray:
    """A lower bound on ``rc(C)/|C|`` over the groups ``C`` containing each record of
    ``rows``: ``min_s (b_i(s) + B_{s-1}(s)) / s`` with ``b_j(s) = a_j(s)/(2s) - pi_j`` (each
    member's share of ``rc(C)`` is at least its ``b_j(s)``, see :func:`record_bounds`) and
    ``B_{s-1}(s)`` the sum of the ``s-1`` smallest ``b_j(s)`` over all records (at most the
    other members' sum). O(n k) for all rows at once."""
    n = cums.shape[0]
    out = np.full(rows.size, np.inf)
    for s in range(k, min(2 * k - 1, n) + 1):
        b = cums[:, s - 1] / (2.0 * s) - pi
        others = float(np.partition(b, s - 2)[: s - 1].sum()) if s >= 2 else 0.0
        out = np.minimum(out, (b[rows] + others) / s)
    return out


def record_supergradient(groups: list, n: int) -> np.ndarray:
    """``1 - sum_i [j in groups_i] / |groups_i|``: a supergradient of the per-record
    Lagrangian at the duals where ``groups`` are the minimising groups (with truncated
    pricing, an approximation)."""
    g = np.ones(n)
    for rows in groups:
        if rows is not None:
            g[rows] -= 1.0 / rows.size
    return g


def record_ascent(Z: np.ndarray, nbr_dist: np.ndarray, pi: np.ndarray, k: int, *, deadline=None,
                  node_limit: int = 200, probes: int = 6, max_steps: int = 50,
                  min_gain: float = 1e-4, feasible: bool = False, compiled: bool = True,
                  node_max: int | None = None, grow_below: float = 0.02, warm: bool = True,
                  threads: int | None = None) -> dict:
    """Monotone dual ascent on the per-record Lagrangian (:func:`record_lagrangian`).

    With ``m_i`` proven lower bounds on ``min_{C containing i} rc(C)/|C|`` at ``pi``, the duals
    ``pi' = pi + m`` price no group negative: ``rc'(C) = rc(C) - m(C) >= |C| min_i ratio -
    m(C) >= 0``. So ``pi'`` is dual feasible, ``sum(pi') = sum(pi) + sum(m)`` is the bound
    proven at ``pi``, and at ``pi'`` every ``m'_i >= 0`` (``floor=0``): the next bound is never
    lower. Each step is one call of :func:`record_lagrangian`; the ascent stops when a step
    gains less than ``min_gain`` (relative), after ``max_steps`` or at the deadline (a step
    cut short still proves its bound). ``feasible``: ``pi`` itself is dual feasible.

    Returns ``bound`` (the best proven), ``duals`` (a dual-feasible point whose sum is
    ``bound``, before the float margin), ``steps`` (one ``(bound, nodes, complete)`` per
    step) and ``columns`` (the best group found per record at the last step, for the pool).
    """
    pi = np.asarray(pi, dtype=np.float64).copy()
    n = pi.size
    best = -math.inf
    steps: list = []
    hints = None
    groups: list = []
    node_max = 32 * node_limit if node_max is None else max(int(node_max), node_limit)
    budgets = np.full(n, int(node_limit), dtype=np.int64)
    starts = None
    gains: list = []
    while len(steps) < max_steps:
        if deadline is not None and deadline.expired() and steps:
            break
        res = record_lagrangian(Z, nbr_dist, pi, k, node_limit=budgets, deadline=deadline,
                                hints=hints, probes=probes, floor=0.0 if feasible else None,
                                compiled=compiled, starts=starts, threads=threads)
        steps.append((float(res["bound"]), int(res["nodes"]), bool(res["complete"])))
        gain = res["bound"] - best
        best = max(best, res["bound"])
        hints = groups = res["groups"]
        m = res["m"]
        pi = pi + m
        feasible = True
        if gain < min_gain * max(abs(best), 1e-300) and len(steps) > 1:
            break
        if len(steps) > 1:
            gains.append(gain)
            if gain < grow_below * max(abs(best), 1e-300):
                # The steps flatten: the searches stop at their budget far below the best
                # groups found, so records not proven exact get twice the nodes (up to
                # ``node_max``); exact ones keep theirs.
                rat = res["ratio"]
                seen = np.isfinite(rat)  # inf: a record the deadline left unsearched
                inexact = seen & (m < np.where(seen, rat, 0.0) - 1e-12 * (np.abs(np.where(seen, rat, 0.0)) + 1.0))
                budgets = np.where(inexact, np.minimum(2 * budgets, node_max), budgets)
        if warm:
            # Warm-started bisection: the next step's m_i is probed first (after the best
            # group's ratio) at this step's m_i scaled by the last ratio of gains, the usual
            # decay of the ascent (a probe anywhere is valid: only a finished search counts).
            decay = min(1.0, max(0.2, gains[-1] / gains[-2])) if len(gains) >= 2 and gains[-2] > 0 else 0.5
            starts = np.maximum(m, 0.0) * decay
    return {"bound": best, "duals": pi, "steps": steps,
            "columns": [g for g in groups if g is not None]}
