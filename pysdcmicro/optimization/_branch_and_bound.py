"""The per-anchor branch and bound of exact pricing: the numpy search
(:func:`branch_and_bound_anchor`), the loader of its compiled twin (:mod:`._bb_numba`, only
when numba is installed and the deadline leaves time to load or compile it), and the
drivers that run the compiled kernel with the deadline turned into a node budget."""

from __future__ import annotations

import math
import sys

import numpy as np

from .._compile import cached

__all__ = ["branch_and_bound_anchor"]


_KERNEL: list = []
#: Nodes per wall second of the compiled search, shared by every call in the process (so that
#: no call starts again from the unloaded-machine guess); see :func:`_run_kernel`.
_RATE: list = [200_000.0, False]  # (nodes per second, measured yet)
#: A kernel that is not compiled yet (not in this process, no current numba disk cache) is
#: compiled only when the deadline leaves at least this many seconds: compiling takes tens of
#: seconds and cannot be interrupted, so a short time-limited run (decomposition's subsets,
#: auto's worker) would overrun its limit by that much; it uses the numpy search instead.
COMPILE_MIN_SECONDS = 120.0
IMPORT_MIN_SECONDS = 10.0


def _warm(fn) -> bool:
    """True when calling the compiled ``fn`` costs no compilation (unknown: treat as cold)."""
    return cached(fn)


def _bb_kernel(points: bool = False, deadline=None, cuts: bool = False):
    """The compiled branch and bound (:mod:`._bb_numba`; ``points``: the variant computing
    distances from the points; ``cuts``: that variant with subset-row cut penalties), or None without numba, or when it still needs compiling and
    ``deadline`` leaves less than :data:`COMPILE_MIN_SECONDS` (or numba is not imported yet
    and it leaves less than :data:`IMPORT_MIN_SECONDS`: the import costs about a second of
    CPU that no deadline can interrupt, far more wall time on a busy machine)."""
    if not _KERNEL:
        if deadline is not None and "numba" not in sys.modules and deadline.remaining() < IMPORT_MIN_SECONDS:
            return None
        try:
            from . import _bb_numba

            _KERNEL.extend([_bb_numba.bb_anchor, _bb_numba.bb_anchor_points, _bb_numba.bb_anchor_points_cuts])
        except Exception:  # numba missing or unusable: the numpy search serves
            _KERNEL.extend([None, None, None])
    kernel = _KERNEL[2 if cuts else (1 if points else 0)]
    if kernel is not None and deadline is not None and deadline.remaining() < COMPILE_MIN_SECONDS \
            and not _warm(kernel):
        return None
    if kernel is not None and deadline is not None and not kernel.signatures \
            and deadline.remaining() < IMPORT_MIN_SECONDS:
        # Cached on disk but not loaded in this process: loading costs about a second of CPU
        # that no deadline can interrupt.
        return None
    return kernel


def _run_kernel(kernel, X: np.ndarray, pis: np.ndarray, A: np.ndarray, s: int, *,
                node_limit: int | None, deadline, keep: int, rate: list, best: float, extra: tuple = ()) -> tuple:
    """One call of a compiled kernel; the deadline as a node budget at the measured node
    rate (``rate[0]``, nodes per second, updated here: the kernel cannot read a clock).
    Returns ``(value, complete, nodes, positions)``, positions (candidate indices, 0-based)
    of the kept groups, best first."""
    import time

    limit = node_limit if node_limit is not None else 1 << 62
    if deadline is not None:
        rem = deadline.remaining()
        if math.isfinite(rem):
            limit = min(limit, max(1000, int(rem * rate[0])))
            if len(rate) > 1 and not rate[1]:
                # Not measured yet in this process: a first budget of 20,000 nodes measures
                # the rate (the unloaded-machine guess, 200,000 per second, can overrun the
                # deadline on a busy core).
                limit = min(limit, 20_000)
    loaded = bool(getattr(kernel, "signatures", True))  # else this call compiles or loads it
    t0 = time.perf_counter()
    value, complete, nodes, fval, fpos, nf = kernel(np.ascontiguousarray(X, dtype=np.float64),
                                                    np.ascontiguousarray(pis, dtype=np.float64), s,
                                                    np.ascontiguousarray(A, dtype=np.float64),
                                                    float(best), int(limit), int(keep), *extra)
    dt = time.perf_counter() - t0
    if nodes >= 20_000 and dt > 0 and loaded:
        # Down at once, up slowly: on a busy core the wall rate falls many times over, and a
        # budget from the unloaded rate would run far past the deadline.
        measured = nodes / dt
        first = len(rate) > 1 and not rate[1]
        rate[0] = measured if (first or measured < rate[0]) else 0.8 * rate[0] + 0.2 * measured
        if len(rate) > 1:
            rate[1] = True
    return float(value), bool(complete), int(nodes), [(fpos[j, :s - 1], float(fval[j])) for j in range(nf)]


def _bb_points(kernel, P: np.ndarray, pis: np.ndarray, A: np.ndarray, s: int, *,
               node_limit: int | None, deadline, keep: int, rate: list, best: float = 0.0,
               extra: tuple = ()) -> dict:
    """The compiled search on points ``P`` (anchor first, candidates in their order) with
    pair bounds ``A`` (c x s, cumulated: ``A[l, r]`` <= the r smallest distances from
    candidate l to the others); the result dict of :func:`branch_and_bound_anchor`
    (positions into ``P``). Deadline as a node budget (see :func:`_run_kernel`)."""
    out = {"value": best, "complete": True, "columns": [], "nodes": 0}
    if P.shape[0] - 1 < s - 1:
        return out
    value, complete, nodes, found = _run_kernel(kernel, P, pis, A, s, node_limit=node_limit,
                                                deadline=deadline, keep=keep, rate=rate, best=best, extra=extra)
    out.update(value=value, complete=complete, nodes=nodes)
    out["columns"] = [(np.concatenate([[0], 1 + pos]), v) for pos, v in found]
    return out


def _bb_prepare(Dsub: np.ndarray, pis: np.ndarray, s: int):
    """Candidates in increasing order of their single-record bound, and ``A`` (c x s): the
    cumulated smallest distances from each candidate to the other candidates."""
    c = Dsub.shape[0] - 1
    rough = (2.0 * Dsub[0, 1:] + np.partition(Dsub[1:, 1:], min(s - 2, c - 1), axis=1)[:, :s - 1].sum(axis=1)) \
        / (2.0 * s) - pis[1:]
    perm = np.argsort(rough, kind="stable")
    full = np.concatenate([[0], 1 + perm])
    D = np.ascontiguousarray(Dsub[np.ix_(full, full)])
    p = np.ascontiguousarray(pis[full])
    A = np.zeros((c, s))
    if s >= 3 and c >= 2:
        Dn = D[1:, 1:].copy()
        np.fill_diagonal(Dn, np.inf)
        r = min(s - 2, c - 1)
        small = np.sort(np.partition(Dn, r - 1, axis=1)[:, :r], axis=1)
        A[:, 1:r + 1] = np.cumsum(small, axis=1)
    return D, p, A, perm


def _bb_compiled(kernel, Dsub: np.ndarray, pis: np.ndarray, s: int, *, node_limit: int | None,
                 deadline, keep: int, rate: list, best: float = 0.0) -> dict:
    """:func:`branch_and_bound_anchor` by the compiled kernel: same result dict; a search
    stopped by its budget (the deadline as a node budget, see :func:`_run_kernel`) returns
    its open nodes' least bound, as the numpy search does."""
    out = {"value": best, "complete": True, "columns": [], "nodes": 0}
    c = Dsub.shape[0] - 1
    if c < s - 1:
        return out
    D, p, A, perm = _bb_prepare(Dsub, pis, s)
    value, complete, nodes, found = _run_kernel(kernel, D, p, A, s, node_limit=node_limit,
                                                deadline=deadline, keep=keep, rate=rate, best=best)
    out.update(value=value, complete=complete, nodes=nodes)
    out["columns"] = [(np.concatenate([[0], 1 + perm[pos]]), v) for pos, v in found]
    return out


def branch_and_bound_anchor(Dsub: np.ndarray, pis: np.ndarray, s: int, *, best: float = 0.0,
                            node_limit: int | None = None, deadline=None, keep: int = 3,
                            batch_elems: int = 1 << 18) -> dict:
    """Minimum reduced cost of a group ``{0} + (s-1) of 1..m-1`` (position 0 is the anchor),
    by a branch and bound over the candidates; only values below ``best`` (default 0)
    matter.

    Members are added in the order of the candidates (sorted by their single-record bound,
    a reduced-cost order), so a node is a partial group ``P`` (the anchor and ``m-1``
    candidates, the last at position ``q``) whose completions use candidates after ``q``.
    With ``t = s - |P|`` members still to add and ``acc_l = sum_{u in P} D_ul``,

        rc(P + N) = rc_part(P) + sum_{l in N} (acc_l / s - pi_l) + pairs(N) / s
                  >= rc_part(P) + sum_{l in N} g_l,   g_l = (acc_l + A_l(t-1)/2) / s - pi_l,

    ``rc_part(P) = pairs(P)/s - pi(P)`` and ``A_l(r)`` the sum of the ``r`` smallest
    distances from ``l`` to the other candidates (each new member has ``t-1`` partners among
    the new ones: the sorted-distance bound of Aloise et al. 2014). A child ``P + l`` is
    bounded by ``rc_part(P) + max(S_t, g_l + S_{t-1})`` with ``S_r`` the sum of the ``r``
    smallest ``g`` after ``q`` (the other ``t-1`` new members are among them, ``l``
    excluded), and pruned when that is ``>= best``. Nodes are expanded in vectorised batches,
    depth first, most promising batch first.

    Returns ``value`` (a valid lower bound on the minimum, ``min(best, ...)``: exact when
    ``complete``), ``complete``, ``columns`` (up to ``keep`` groups below the initial
    ``best``, as (positions, rc), best first) and ``nodes`` (expanded).
    """
    m = Dsub.shape[0]
    c = m - 1
    out = {"value": best, "complete": True, "columns": [], "nodes": 0}
    if c < s - 1:
        return out
    # Candidates in increasing order of their single-record bound (a reduced-cost order).
    rough = (2.0 * Dsub[0, 1:] + np.partition(Dsub[1:, 1:], min(s - 2, c - 1), axis=1)[:, :s - 1].sum(axis=1)) \
        / (2.0 * s) - pis[1:]
    perm = np.argsort(rough, kind="stable")
    full = np.concatenate([[0], 1 + perm])
    Dsub = Dsub[np.ix_(full, full)]
    pis = pis[full]
    Dc = Dsub[1:, 1:]
    pc = pis[1:]
    # A_l(r): the r smallest distances from l to the other candidates, cumulated (A[:, 0] = 0).
    if s >= 3 and c >= 2:
        Dn = Dc.copy()
        np.fill_diagonal(Dn, np.inf)
        r = min(s - 2, c - 1)
        small = np.sort(np.partition(Dn, r - 1, axis=1)[:, :r], axis=1)
        A = np.zeros((c, s - 1))
        A[:, 1:r + 1] = np.cumsum(small, axis=1)
    else:
        A = np.zeros((c, max(s - 1, 1)))
    # Stack of batches: (bound, last, acc, cost, members), depth = members' width + 1.
    start_bound = -math.inf
    stack = [(np.array([start_bound]), np.array([-1]), Dsub[0:1, 1:].copy(), np.array([-pis[0]]),
              np.zeros((1, 0), dtype=np.int64))]
    found: list = []
    pos = np.arange(c)
    nodes = 0
    while stack:
        if (node_limit is not None and nodes >= node_limit) or (deadline is not None and deadline.expired()):
            out["complete"] = False
            break
        bnd, last, acc, cost, mem = stack.pop()
        live = bnd < best
        if not live.all():
            bnd, last, acc, cost, mem = bnd[live], last[live], acc[live], cost[live], mem[live]
        F = bnd.size
        if F == 0:
            continue
        nodes += F
        t = s - 1 - mem.shape[1]  # members still to add
        G = (acc + 0.5 * A[:, t - 1][None, :]) / s - pc[None, :]
        G[pos[None, :] <= last[:, None]] = np.inf
        if t == 1:
            vals = cost[:, None] + G
            flat = np.flatnonzero(vals.ravel() < best)
            if flat.size:
                f, l = np.divmod(flat, c)
                v = vals[f, l]
                order = np.argsort(v, kind="stable")[:keep]
                for o in order:
                    found.append((np.concatenate([mem[f[o]], [l[o]]]), float(v[o])))
                found.sort(key=lambda z: z[1])
                del found[keep:]
                best = min(best, float(v[order[0]]))
            continue
        part = np.sort(np.partition(G, t - 1, axis=1)[:, :t], axis=1)
        St = part.sum(axis=1)
        St1 = St - part[:, t - 1]
        child = cost[:, None] + np.maximum(St[:, None], G + St1[:, None])
        child[:, pos > c - t] = np.inf  # no room left after l for the other t-1 members
        flat = np.flatnonzero(child.ravel() < best)
        if flat.size == 0:
            continue
        f, l = np.divmod(flat, c)
        cb = child[f, l]
        order = np.argsort(cb, kind="stable")
        f, l, cb = f[order], l[order], cb[order]
        step = max(1, batch_elems // c)
        chunks = []
        for a in range(0, f.size, step):
            ff, ll = f[a:a + step], l[a:a + step]
            chunks.append((cb[a:a + step], ll, acc[ff] + Dc[ll], cost[ff] + acc[ff, ll] / s - pc[ll],
                           np.concatenate([mem[ff], ll[:, None]], axis=1)))
        stack.extend(reversed(chunks))
    if not out["complete"]:
        open_min = min((float(b.min()) for b, *_ in stack if b.size), default=math.inf)
        out["value"] = min(best, open_min)
    else:
        out["value"] = best
    out["nodes"] = nodes
    out["columns"] = [(np.concatenate([[0], 1 + perm[p]]), v) for p, v in found]
    return out
