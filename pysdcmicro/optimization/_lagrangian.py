"""Neighbour lists and the Lagrangian lower bounds of the set-partitioning model of
microaggregation (Castro, Gentile and Spagnolo-Arrizabalaga 2022, model (6)-(7)).

A column is a group ``C`` of ``s`` records, ``k <= s <= 2k-1``, with cost
``w_C = SSE(C) = 1/(2s) sum_{i,j in C} D_ij`` (``D`` squared Euclidean distances). With
duals ``pi`` of the covering constraints its reduced cost is ``rc(C) = w_C - pi(C)``, and
for ANY ``pi`` a lower bound ``r_s`` on the reduced cost of every size-``s`` group gives a
lower bound on the optimum (:func:`lagrangian_bound`). Here live the cheap bounds that every
pricing routine starts from:

* :func:`neighbours`: the ``L`` nearest records of every record (blocked, O(n L) memory);
* :func:`record_bounds`: ``min rc_s >= sum of the s smallest b_i(s)``, ``b_i(s) = a_i(s)/(2s)
  - pi_i`` with ``a_i(s)`` the sum of the ``s-1`` smallest distances from record ``i``;
* :func:`nn_dual`: a dual-feasible point from nearest neighbours alone;
* :func:`anchor_relaxation` / :func:`anchor_lagrangian_bound`: per-anchor bounds (a group's
  anchor is its lowest-index member) and the bound that charges each anchor once.
"""

from __future__ import annotations

import numpy as np

__all__ = ["neighbours", "record_bounds", "lagrangian_bound", "nn_dual", "anchor_relaxation",
           "anchor_lagrangian_bound"]

_BLOCK_ELEMS = 1 << 22  # entries of a distance block (32 MiB of float64)


def _sqdist(A: np.ndarray, B: np.ndarray, nA: np.ndarray | None = None, nB: np.ndarray | None = None) -> np.ndarray:
    nA = np.einsum("ij,ij->i", A, A) if nA is None else nA
    nB = np.einsum("ij,ij->i", B, B) if nB is None else nB
    D = nA[:, None] - 2.0 * (A @ B.T) + nB[None, :]
    np.maximum(D, 0.0, out=D)
    return D


def neighbours(Z: np.ndarray, L: int, deadline=None) -> tuple[np.ndarray, np.ndarray] | None:
    """The ``L`` nearest records of each record, itself first, and their squared distances.

    Returns ``(idx, dist)`` of shape (n, L), rows sorted by distance (ties by index), or None
    when ``deadline`` (checked between blocks of 2^22 distances, tens of milliseconds)
    expired first.
    Time O(n^2 d), memory O(n L + block): the n x n matrix is never stored.
    """
    n = Z.shape[0]
    L = min(L, n)
    norms = np.einsum("ij,ij->i", Z, Z)
    idx = np.empty((n, L), dtype=np.int64)
    dist = np.empty((n, L))
    step = max(1, _BLOCK_ELEMS // max(n, 1))
    for start in range(0, n, step):
        if deadline is not None and deadline.expired():
            return None
        stop = min(n, start + step)
        D = _sqdist(Z[start:stop], Z, norms[start:stop], norms)
        rows = np.arange(stop - start)
        D[rows, np.arange(start, stop)] = -1.0  # self first
        if L < n:
            part = np.argpartition(D, L - 1, axis=1)[:, :L]
        else:
            part = np.tile(np.arange(n), (stop - start, 1))
        vals = np.take_along_axis(D, part, axis=1)
        order = np.lexsort((part, vals), axis=1)
        idx[start:stop] = np.take_along_axis(part, order, axis=1)
        dist[start:stop] = np.take_along_axis(vals, order, axis=1)
        dist[start:stop, 0] = 0.0
    return idx, dist


def record_bounds(nbr_dist: np.ndarray, pi: np.ndarray, k: int) -> tuple[dict, dict]:
    """Per-size ``b_i(s)`` and the valid bound ``min_{|C|=s} rc(C) >= sum of the s smallest
    b_i(s)``.

    ``rc(C) = sum_{i in C} [1/(2s) sum_{j in C} D_ij - pi_i]`` and each bracket is at least
    ``b_i(s) = a_i(s)/(2s) - pi_i`` with ``a_i(s)`` the sum of the ``s-1`` smallest
    distances from ``i`` to other records. Needs ``nbr_dist`` with at least ``2k-1``
    columns (self first). Returns ``(b, bound)`` dicts keyed by size.
    """
    n = nbr_dist.shape[0]
    cums = np.cumsum(nbr_dist, axis=1)  # cums[:, t] = sum of the t smallest others (self is 0)
    b, bound = {}, {}
    for s in range(k, min(2 * k - 1, n) + 1):
        bs = cums[:, s - 1] / (2.0 * s) - pi
        b[s] = bs
        bound[s] = float(np.sum(np.partition(bs, s - 1)[:s])) if n > s else float(bs.sum())
    return b, bound


def lagrangian_bound(pi: np.ndarray, rc_bounds: dict, n: int) -> float:
    """``sum(pi) + min { sum_s r_s n_s : sum_s s n_s = n, n_s >= 0 integer }``.

    Valid for ANY ``pi`` when ``r_s`` is a lower bound on the reduced cost of every group of
    size ``s`` (every k-partition into groups of k..2k-1 records has ``n_s`` groups of size
    ``s`` with ``sum_s s n_s = n``). At least as strong as ``sum(pi) + floor(n/k) min_s r_s``.
    """
    f = np.full(n + 1, np.inf)
    f[0] = 0.0
    sizes = sorted(rc_bounds)
    for t in range(1, n + 1):
        best = np.inf
        for s in sizes:
            if s <= t and f[t - s] + rc_bounds[s] < best:
                best = f[t - s] + rc_bounds[s]
        f[t] = best
    return float(np.sum(pi) + f[n])


def nn_dual(nbr_dist: np.ndarray, k: int) -> np.ndarray:
    """A dual-feasible point of model (6)-(7) from nearest neighbours alone:
    ``u_i = min_{k <= s <= 2k-1} a_i(s) / (2s)``, ``a_i(s)`` the sum of the ``s-1``
    smallest squared distances from record ``i``.

    Every group ``C`` of size ``s`` has ``SSE(C) = sum_{i in C} (1/(2s)) sum_{j in C} D_ij
    >= sum_{i in C} a_i(s)/(2s) >= u(C)``, so ``u`` prices no column negative and
    ``sum(u)`` is a lower bound on the optimal SSE (on every k-partition: an optimal one
    has groups of k..2k-1 records). Needs ``nbr_dist`` with at least ``2k-1`` columns
    (self first). O(n k).
    """
    n = nbr_dist.shape[0]
    cums = np.cumsum(nbr_dist, axis=1)
    sizes = range(k, min(2 * k - 1, n) + 1)
    return np.min(np.stack([cums[:, s - 1] / (2.0 * s) for s in sizes]), axis=0)


def anchor_relaxation(Z: np.ndarray, nbr_dist: np.ndarray, pi: np.ndarray, s: int, *,
                      norms: np.ndarray | None = None, deadline=None) -> tuple[np.ndarray, np.ndarray] | None:
    """Per-anchor lower bounds ``LB_i`` on the reduced cost of every size-``s`` group whose
    lowest-index member is ``i`` (see :func:`anchored_pricing`), and the sum of the ``s-2``
    smallest ``e_l`` of each anchor. ``LB_i = inf`` where no such group exists.

    Time O(n^2 d) in row blocks, memory O(block n); None when ``deadline`` (checked
    between blocks) expired first.
    """
    n = Z.shape[0]
    cums = np.cumsum(nbr_dist, axis=1)
    a2 = cums[:, s - 2] if s >= 2 else np.zeros(n)
    norms = np.einsum("ij,ij->i", Z, Z) if norms is None else norms
    step = max(1, _BLOCK_ELEMS // max(n, 1))
    anchor_lb = np.full(n, np.inf)
    sum_small = np.zeros(n)  # sum of the s-2 smallest e per anchor
    cols = np.arange(n)
    if n - 1 < s - 1:
        return anchor_lb, sum_small
    for start in range(0, n, step):
        if deadline is not None and deadline.expired():
            return None
        stop = min(n, start + step)
        D = _sqdist(Z[start:stop], Z, norms[start:stop], norms)
        E = (2.0 * D + a2[None, :]) / (2.0 * s) - pi[None, :]
        E[cols[None, :] <= np.arange(start, stop)[:, None]] = np.inf
        part = np.partition(E, s - 2, axis=1)[:, : s - 1] if s >= 2 else np.zeros((stop - start, 0))
        part.sort(axis=1)
        tot = part.sum(axis=1)
        anchor_lb[start:stop] = -pi[start:stop] + tot
        sum_small[start:stop] = part[:, : s - 2].sum(axis=1) if s >= 3 else 0.0
    return anchor_lb, sum_small


def anchor_lagrangian_bound(pi: np.ndarray, anchor_values: dict, k: int, *, shift: bool = True) -> float:
    """``max_lam [sum(pi) + lam n + (sum of the floor(n/k) most negative r_i(lam))]``,
    ``r_i(lam) = min(0, min_s (v_s[i] - lam s))``.

    Valid for ANY ``pi`` and any ``lam`` when ``v_s[i]`` bounds from below the reduced cost
    of every size-``s`` group whose lowest-index member is ``i`` (``inf``: no such group).
    Proof: the groups of a partition cover the ``n`` records once, so ``sum_C rc(C) = lam n
    + sum_C (rc(C) - lam |C|)``; each term is at least ``r_anchor(lam)`` (<= 0); the groups
    have distinct lowest-index members and there are at most ``floor(n/k)`` of them, so the
    terms add up to at least the ``floor(n/k)`` most negative ``r_i(lam)``; and the optimum
    is ``sum(pi) + sum_C rc(C)`` for an optimal partition. (It is the bound at the uniformly
    shifted duals ``pi + lam``.) ``lam = 0`` charges each anchor once, not the worst one
    ``n/k`` times, as :func:`lagrangian_bound` does; the best ``lam`` is found by a ternary
    search (the expression is concave in ``lam``). ``shift=False``: ``lam = 0`` only.
    """
    n = pi.size
    g = n // k
    sizes = sorted(anchor_values)
    V = np.stack([np.where(np.isfinite(anchor_values[s]), anchor_values[s], np.inf) for s in sizes])
    S = np.asarray(sizes, dtype=np.float64)[:, None]

    def value(lam: float) -> float:
        r = np.minimum(0.0, np.min(V - lam * S, axis=0))
        part = np.partition(r, g - 1)[:g] if 0 < g < n else r
        return float(lam * n + np.sum(part))

    best = value(0.0)
    if not shift:
        return float(np.sum(pi) + best)
    finite = V[np.isfinite(V)]
    big = float(np.abs(finite).max()) if finite.size else 0.0
    if big > 0.0:
        lo, hi = -big / k - 1e-12, big + 1e-12
        for _ in range(60):
            a, b = lo + (hi - lo) / 3.0, hi - (hi - lo) / 3.0
            if value(a) < value(b):
                lo = a
            else:
                hi = b
        best = max(best, value(0.5 * (lo + hi)))
    return float(np.sum(pi) + best)
