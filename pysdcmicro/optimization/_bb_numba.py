"""Compiled per-anchor branch and bound of exact pricing (numba; imported only when numba is
installed).

The same problem and bound as :func:`._pricing.branch_and_bound_anchor`: the least reduced
cost ``pairs(C)/s - pi(C)`` of a group ``C = {0} + (s-1)`` candidates of a distance block
whose row/column 0 is the anchor, candidates in a fixed order, a node being a partial group
whose completions use candidates after its last one. With ``t`` members still to add and
``acc_l`` the distances from candidate ``l`` to the partial group,

    g_l = (acc_l + A_l(t-1)/2) / s - pi_l        (A_l(r): the r smallest distances from l
                                                   to the other candidates)

bounds what ``l`` adds (its own terms and half of its pairs with the other new members), so
a child ``P + l`` costs at least ``cost(P) + g_l + (sum of the t-1 smallest g after l)``.
The search is depth first, children in increasing order of that bound; one node costs
``O(c t)`` for ``c`` candidates, with no temporaries.

With subset-row cuts (:func:`bb_anchor_points_cuts`) the reduced cost gains the penalty
``sum_T w_T floor(|C cap T| / 2)`` (``w_T = -sigma_T >= 0``). It never decreases as members
are added, so a node's bound adds the penalty of its partial group, and a child's the step
its own member adds (``w_T`` for each cut ``T`` of that member already holding an odd number
of the group); the penalty of the other new members is left out of the bound (it could
only raise it). Per member, the cuts it is in come as a CSR list (``cptr``, ``cidx``).

One search (:func:`_bb_search`) serves both entry points: distances read from a block
(:func:`bb_anchor`) or computed from the points as they are needed
(:func:`bb_anchor_points`); the choice is made outside the inner loops.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["bb_anchor", "bb_anchor_points", "bb_anchor_points_cuts"]


_NO_PTR = np.zeros(1, dtype=np.int64)
_NO_IDX = np.zeros(0, dtype=np.int64)
_NO_W = np.zeros(0)


@njit(cache=True, nogil=True, inline="always")
def _d2(P, a, b, dim):  # pragma: no cover - compiled
    t = 0.0
    for j in range(dim):
        x = P[a, j] - P[b, j]
        t += x * x
    return t


@njit(cache=True, nogil=True)
def _keep_found(v, d, l, s, chosen, found_val, found_pos, nfound, keep):  # pragma: no cover - compiled
    """Insert the group (chosen[1..d], l) of value ``v`` into the kept list (ascending, at
    most ``keep``); returns the new count."""
    if nfound < keep or v < found_val[nfound - 1]:
        pos = nfound if nfound < keep else keep - 1
        while pos > 0 and found_val[pos - 1] > v:
            if pos < keep:
                found_val[pos] = found_val[pos - 1]
                for q in range(s - 1):
                    found_pos[pos, q] = found_pos[pos - 1, q]
            pos -= 1
        found_val[pos] = v
        for q in range(d):
            found_pos[pos, q] = chosen[q + 1]
        found_pos[pos, s - 2] = l
        if nfound < keep:
            nfound += 1
    return nfound


@njit(cache=True, nogil=True)
def _suffix_smallest(g, lo, c, r, suf, buf):  # pragma: no cover - compiled
    """suf[l] = the sum of the r smallest g[l+1..c-1] (inf when fewer than r remain)."""
    cnt = 0
    tot = 0.0
    for l in range(c - 1, lo - 1, -1):
        suf[l] = tot if cnt == r else np.inf
        v = g[l]
        if cnt < r:
            q = cnt
            while q > 0 and buf[q - 1] > v:
                buf[q] = buf[q - 1]
                q -= 1
            buf[q] = v
            cnt += 1
            tot += v
        elif v < buf[r - 1]:
            tot += v - buf[r - 1]
            q = r - 1
            while q > 0 and buf[q - 1] > v:
                buf[q] = buf[q - 1]
                q -= 1
            buf[q] = v


@njit(cache=True, nogil=True)
def _step_penalty(p, cptr, cidx, cw, cnt):  # pragma: no cover - compiled
    """The penalty that member ``p`` adds to a group whose cut counts are ``cnt``."""
    v = 0.0
    for q in range(cptr[p], cptr[p + 1]):
        if cnt[cidx[q]] % 2 == 1:
            v += cw[cidx[q]]
    return v


@njit(cache=True, nogil=True)
def _bb_search(D, P, points, pis, s, A, best, node_limit, keep, cptr, cidx, cw):  # pragma: no cover - compiled
    """The search; distances from ``P`` (m x d) when ``points``, else from ``D`` (m x m);
    cut penalties when ``cw`` is not empty (``cptr`` then has m + 1 entries)."""
    m = P.shape[0] if points else D.shape[0]
    has_cuts = cw.shape[0] > 0
    cnt = np.zeros(cw.shape[0], dtype=np.int64)
    pen = np.zeros(s)
    if has_cuts:
        for q in range(cptr[0], cptr[1]):
            cnt[cidx[q]] += 1
    dim = P.shape[1]
    c = m - 1
    inf = np.inf
    found_val = np.full(keep, inf)
    found_pos = np.zeros((keep, max(s - 1, 1)), dtype=np.int64)
    nfound = 0
    if c < s - 1:
        return best, True, 0, found_val, found_pos, 0
    depth_max = s - 1
    acc = np.zeros((depth_max + 1, c))
    for l in range(c):
        acc[0, l] = _d2(P, 0, l + 1, dim) if points else D[0, l + 1]
    cost = np.zeros(depth_max + 1)
    cost[0] = -pis[0]
    chosen = np.zeros(depth_max + 1, dtype=np.int64)  # chosen[d]: candidate added at depth d
    kids = np.zeros((depth_max + 1, c), dtype=np.int64)
    kbound = np.zeros((depth_max + 1, c))
    nk = np.zeros(depth_max + 1, dtype=np.int64)
    ptr = np.zeros(depth_max + 1, dtype=np.int64)
    g = np.empty(c)
    h = np.zeros(c)  # cut penalties (0 without cuts)
    suf = np.empty(c)
    buf = np.empty(s)
    order_tmp = np.empty(c, dtype=np.int64)
    cb_tmp = np.empty(c)
    nodes = 0
    complete = True
    d = 0
    last = -1
    expand = True  # the node at depth d has not been expanded yet
    while True:
        if expand:
            expand = False
            if nodes >= node_limit:
                complete = False
                break
            nodes += 1
            t = s - 1 - d
            lo = last + 1
            for l in range(lo, c):
                g[l] = (acc[d, l] + 0.5 * A[l, t - 1]) / s - pis[l + 1]
            if has_cuts:
                # h[l]: the partial group's penalty plus the step l's member adds to it
                for l in range(lo, c):
                    h[l] = pen[d] + _step_penalty(l + 1, cptr, cidx, cw, cnt)
            if t == 1:
                for l in range(lo, c):
                    v = cost[d] + g[l] + h[l]
                    if v < best:
                        nfound = _keep_found(v, d, l, s, chosen, found_val, found_pos, nfound, keep)
                for l in range(lo, c):
                    v = cost[d] + g[l] + h[l]
                    if v < best:
                        best = v
                nk[d] = 0
                ptr[d] = 0
            else:
                _suffix_smallest(g, lo, c, t - 1, suf, buf)
                n_kids = 0
                for l in range(lo, c):
                    b = cost[d] + g[l] + h[l] + suf[l]
                    if b < best:
                        order_tmp[n_kids] = l
                        cb_tmp[n_kids] = b
                        n_kids += 1
                # children by increasing bound
                idx = np.argsort(cb_tmp[:n_kids])
                for q in range(n_kids):
                    kids[d, q] = order_tmp[idx[q]]
                    kbound[d, q] = cb_tmp[idx[q]]
                nk[d] = n_kids
                ptr[d] = 0
        # next child at depth d, or back up
        while d >= 0 and (ptr[d] >= nk[d] or kbound[d, ptr[d]] >= best):
            if has_cuts and d > 0:  # leave the member added at depth d
                p = chosen[d] + 1
                for q in range(cptr[p], cptr[p + 1]):
                    cnt[cidx[q]] -= 1
            d -= 1
        if d < 0:
            break
        l = kids[d, ptr[d]]
        ptr[d] += 1
        cost[d + 1] = cost[d] + acc[d, l] / s - pis[l + 1]
        if has_cuts:
            pen[d + 1] = pen[d] + _step_penalty(l + 1, cptr, cidx, cw, cnt)
            for q in range(cptr[l + 1], cptr[l + 2]):
                cnt[cidx[q]] += 1
        if points:
            for u in range(c):
                acc[d + 1, u] = acc[d, u] + _d2(P, l + 1, u + 1, dim)
        else:
            for u in range(c):
                acc[d + 1, u] = acc[d, u] + D[l + 1, u + 1]
        chosen[d + 1] = l
        d += 1
        last = l
        expand = True
    value = best
    if not complete:
        # Open: the node about to be expanded (pushed with the bound kbound[d-1, ptr[d-1]-1];
        # the root has none) and every child not yet visited at the depths above it.
        if d == 0:
            value = -inf
        else:
            b = kbound[d - 1, ptr[d - 1] - 1]
            if b < value:
                value = b
        for e in range(d):
            if ptr[e] < nk[e] and kbound[e, ptr[e]] < value:
                value = kbound[e, ptr[e]]
    return value, complete, nodes, found_val, found_pos, nfound


@njit(cache=True, nogil=True)
def bb_anchor(D, pis, s, A, best, node_limit, keep):  # pragma: no cover - compiled
    """``D`` (m x m, anchor at 0), ``pis`` (m), ``A`` (c x s) cumulated smallest distances
    among the candidates (``A[l, 0] = 0``). Returns ``(value, complete, nodes, found_val,
    found_pos, nfound)``: ``value`` the least reduced cost below ``best`` (``best`` when there
    is none), a valid lower bound when not ``complete`` (the least bound of the open nodes);
    up to ``keep`` groups below the initial ``best`` (candidate positions 0..c-1)."""
    return _bb_search(D, np.zeros((1, 1)), False, pis, s, A, best, node_limit, keep, _NO_PTR, _NO_IDX,
                      _NO_W)


@njit(cache=True, nogil=True)
def bb_anchor_points(P, pis, s, A, best, node_limit, keep):  # pragma: no cover - compiled
    """As :func:`bb_anchor`, the distances computed from the points ``P`` (m x d, anchor
    first) as they are needed (no m x m block); ``A`` may hold any lower bounds on the
    cumulated smallest distances from each candidate to the others (for instance to all
    records)."""
    return _bb_search(np.zeros((1, 1)), P, True, pis, s, A, best, node_limit, keep, _NO_PTR, _NO_IDX,
                      _NO_W)


@njit(cache=True, nogil=True)
def bb_anchor_points_cuts(P, pis, s, A, best, node_limit, keep, cptr, cidx, cw):  # pragma: no cover - compiled
    """As :func:`bb_anchor_points`, the reduced cost with subset-row cut penalties: member
    ``p`` (0 = the anchor) is in the cuts ``cidx[cptr[p]:cptr[p+1]]``, cut ``T`` weighs
    ``cw[T] >= 0`` (minus its dual), and a group pays ``sum_T cw[T] floor(|C cap T| / 2)``."""
    return _bb_search(np.zeros((1, 1)), P, True, pis, s, A, best, node_limit, keep, cptr, cidx, cw)
