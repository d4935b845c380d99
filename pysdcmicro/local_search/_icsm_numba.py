"""Compiled inner loops of ICSM (numba): the neighbour-restricted move pool of
SimpleHeuristic and the nearest-point-next tour of Tour2Assignment.

Both work on the partition in CSR form: ``order`` lists the records group by group and
group ``h`` holds ``order[starts[h]:starts[h + 1]]``.

* :func:`pool_moves` evaluates every exchange of a record ``x`` of group ``A`` with a record
  ``y`` of group ``B`` and every migration between ``A`` and ``B``, for the pairs of groups
  ``(A, B)`` where ``B`` is among ``A``'s nearest groups (``nb``, by centroid) or ``A`` among
  ``B``'s; each such pair of groups once. The SSE changes are the closed forms of
  :mod:`pysdcmicro.local_search._state` from unexpanded differences (R1 + R1, R2 + R3).
  Time O(g L s^2 d) for g groups of s records and L neighbours: linear in n.
* :func:`npn_tour` is :func:`pysdcmicro.local_search._icsm.partition_tour` with the nearest
  unvisited record looked up first among each record's ``m`` nearest records (``knn``,
  fixed since the records never move) and only when all of those are visited among all
  unvisited records.

Without numba (or with ``PYSDCMICRO_NO_NUMBA``) the same source runs as plain Python: the
same results, only slower.
"""

from __future__ import annotations

import numpy as np

from .._compile import njit
from .._select import stable_argsort

__all__ = ["pool_moves", "npn_tour"]


@njit(cache=True, nogil=True)
def _d2(U, i, V, j, d):
    s = 0.0
    for t in range(d):
        q = U[i, t] - V[j, t]
        s += q * q
    return s


@njit(cache=True, nogil=True)
def _compress(vals, a, b, kinds, m, keep):
    """Keep the ``keep`` smallest of the first ``m`` entries (in place); returns the count."""
    idx = stable_argsort(vals, m)
    c = min(keep, m)
    v2 = np.empty(c, dtype=vals.dtype)
    a2 = np.empty(c, dtype=a.dtype)
    b2 = np.empty(c, dtype=b.dtype)
    k2 = np.empty(c, dtype=kinds.dtype)
    for q in range(c):  # explicit loops: numba's fancy indexing costs seconds to compile
        j = idx[q]
        v2[q] = vals[j]
        a2[q] = a[j]
        b2[q] = b[j]
        k2[q] = kinds[j]
    for q in range(c):
        vals[q] = v2[q]
        a[q] = a2[q]
        b[q] = b2[q]
        kinds[q] = k2[q]
    return c


@njit(cache=True, nogil=True)
def pool_moves(Z, labels, sizes, cent, own, order, starts, nb, k, max_size, tol, pool_size, counters):
    """The ``pool_size`` most improving exchanges and migrations between neighbour groups.

    Returns ``(vals, a, b, kinds)``: kind 0 is the exchange of records ``a < b``, kind 1 the
    migration of record ``a`` to group ``b``; only moves with ``vals < -tol``. Sizes stay
    within ``k..max_size``. ``counters[0]`` is increased by the moves evaluated.
    """
    d = Z.shape[1]
    g = sizes.size
    L = nb.shape[1]
    cap = 4 * pool_size + 16
    vals = np.empty(cap)
    ra = np.empty(cap, dtype=np.int64)
    rb = np.empty(cap, dtype=np.int64)
    kinds = np.empty(cap, dtype=np.int8)
    width = 1
    for h in range(g):
        if sizes[h] > width:
            width = sizes[h]
    eyA = np.empty(width)
    m = 0
    evaluated = 0
    for A in range(g):
        sa = sizes[A]
        for l in range(L):
            B = nb[A, l]
            if B < 0 or B == A:
                continue
            if B < A:  # the pair (B, A) is handled from B's side when A is B's neighbour
                mutual = False
                for l2 in range(L):
                    if nb[B, l2] == A:
                        mutual = True
                        break
                if mutual:
                    continue
            sb = sizes[B]
            f = 1.0 / sa + 1.0 / sb
            # e(y, A) for the records y of B
            for u in range(starts[B], starts[B + 1]):
                eyA[u - starts[B]] = _d2(Z, order[u], cent, A, d)
            # migrations y -> A
            if sb > k and sa < max_size:
                for u in range(starts[B], starts[B + 1]):
                    y = order[u]
                    delta = sa / (sa + 1.0) * eyA[u - starts[B]] - sb / (sb - 1.0) * own[y]
                    evaluated += 1
                    if delta < -tol:
                        if m == cap:
                            m = _compress(vals, ra, rb, kinds, np.int64(m), pool_size)
                        vals[m] = delta
                        ra[m] = y
                        rb[m] = A
                        kinds[m] = 1
                        m += 1
            for t in range(starts[A], starts[A + 1]):
                x = order[t]
                dxB = _d2(Z, x, cent, B, d)
                if sa > k and sb < max_size:  # migration x -> B
                    delta = sb / (sb + 1.0) * dxB - sa / (sa - 1.0) * own[x]
                    evaluated += 1
                    if delta < -tol:
                        if m == cap:
                            m = _compress(vals, ra, rb, kinds, np.int64(m), pool_size)
                        vals[m] = delta
                        ra[m] = x
                        rb[m] = B
                        kinds[m] = 1
                        m += 1
                base = dxB - own[x]
                for u in range(starts[B], starts[B + 1]):
                    y = order[u]
                    delta = base + eyA[u - starts[B]] - own[y] - f * _d2(Z, x, Z, y, d)
                    evaluated += 1
                    if delta < -tol:
                        if m == cap:
                            m = _compress(vals, ra, rb, kinds, np.int64(m), pool_size)
                        vals[m] = delta
                        ra[m] = min(x, y)
                        rb[m] = max(x, y)
                        kinds[m] = 0
                        m += 1
    if m > pool_size:
        m = _compress(vals, ra, rb, kinds, np.int64(m), pool_size)
    counters[0] += evaluated
    return vals[:m].copy(), ra[:m].copy(), rb[:m].copy(), kinds[:m].copy()


@njit(cache=True, nogil=True)
def npn_tour(Z, labels, order, starts, pt, pstarts, porder, knn, entry, counters):
    """A tour through all records that keeps every group contiguous: enter the group of
    ``entry`` at ``entry``, visit its records by distance from the entry (nearest first, ties
    in ``order``), then enter the group of the unvisited record nearest to the last record
    visited, at that record.

    Records are looked up through their distinct points: record ``x`` lies at point
    ``pt[x]``, point ``p`` holds the records ``porder[pstarts[p]:pstarts[p + 1]]`` (by index)
    and ``knn[p]`` lists its nearest other points. The nearest unvisited record is an
    unvisited duplicate of the last record if one is left (the one of lowest index), else
    one at the first point of ``knn`` with an unvisited record, else one at the nearest such
    point of all (a scan over the points still holding unvisited records; ties to the lower
    point). So duplicates cost O(1) each however many there are. ``counters[0]`` is
    increased by the points scanned."""
    n, d = Z.shape
    g = starts.size - 1
    npt = pstarts.size - 1
    visited = np.zeros(n, dtype=np.bool_)
    left_at = np.empty(npt, dtype=np.int64)  # unvisited records per point
    cursor = pstarts[:-1].copy()            # first possibly unvisited record of a point
    live = np.arange(npt)                    # points with unvisited records (compact)
    where = np.arange(npt)
    nlive = npt
    for p in range(npt):
        left_at[p] = pstarts[p + 1] - pstarts[p]
    path = np.empty(n, dtype=np.int64)
    width = 1
    for h in range(g):
        if starts[h + 1] - starts[h] > width:
            width = starts[h + 1] - starts[h]
    rows = np.empty(width, dtype=np.int64)
    dist = np.empty(width)
    pos = 0
    M = knn.shape[1]
    scanned = 0
    for step in range(g):
        G = labels[entry]
        s = starts[G + 1] - starts[G]
        for t in range(s):  # insertion sort by distance from the entry (stable)
            r = order[starts[G] + t]
            q = _d2(Z, r, Z, entry, d)
            p = t
            while p > 0 and dist[p - 1] > q:
                dist[p] = dist[p - 1]
                rows[p] = rows[p - 1]
                p -= 1
            dist[p] = q
            rows[p] = r
        for t in range(s):
            r = rows[t]
            path[pos] = r
            pos += 1
            visited[r] = True
            p = pt[r]
            left_at[p] -= 1
            if left_at[p] == 0:  # drop point p from the live list
                w = where[p]
                last_p = live[nlive - 1]
                live[w] = last_p
                where[last_p] = w
                nlive -= 1
        if step == g - 1:
            break
        last = path[pos - 1]
        target = -1
        if left_at[pt[last]] > 0:
            target = pt[last]
        else:
            for t in range(M):
                j = knn[pt[last], t]
                if j >= 0 and left_at[j] > 0:
                    target = j
                    break
        if target < 0:
            best = np.inf
            for t in range(nlive):
                j = live[t]
                q = _d2(Z, porder[pstarts[j]], Z, last, d)
                if q < best or (q == best and j < target):
                    best = q
                    target = j
            scanned += nlive
        c = cursor[target]
        while visited[porder[c]]:
            c += 1
        cursor[target] = c
        entry = porder[c]
    counters[0] += scanned
    return path


@njit(cache=True, nogil=True)
def best_cycle(Z, sizes, cent, own, order, starts, nb, ranked, s, k, max_size, counters):
    """Shortest valid cycles through group ``s`` in ComplexHeuristic's ranked DAG, with the
    edges into group ``q`` restricted to the records (and group nodes) of ``q``'s neighbour
    groups ``nb[q]``; group nodes reach any later record (R3) through a running minimum.

    ``ranked`` lists the groups in rank order (``s`` first). Sources: the records of ``s``
    (rows ``0..|s|-1``) and the group node of ``s`` (row ``|s|``). Returns
    ``(cost, row, end, pred_rec, pred_grp)``: the cheapest cycle closes at node ``end``
    (a record, or ``n + h`` for a group node) into the source of ``row``; ``cost`` is 0 and
    ``row`` -1 when no cycle is negative. ``counters[0]`` is increased by the edges relaxed.
    """
    n, d = Z.shape
    g = sizes.size
    L = nb.shape[1]
    inf = np.inf
    ns = starts[s + 1] - starts[s]
    S = ns + 1
    rank = np.full(g, -1, dtype=np.int64)
    for p in range(ranked.size):
        rank[ranked[p]] = p
    dist_rec = np.full((S, n), inf)
    pred_rec = np.full((S, n), -1, dtype=np.int64)
    dist_grp = np.full((S, g), inf)
    pred_grp = np.full((S, g), -1, dtype=np.int64)
    for r in range(ns):
        dist_rec[r, order[starts[s] + r]] = 0.0
    dist_grp[S - 1, s] = 0.0
    pm = np.full(S, inf)
    parg = np.full(S, -1, dtype=np.int64)
    pm[S - 1] = 0.0
    parg[S - 1] = s
    edges = 0
    for li in range(1, ranked.size):
        q = ranked[li]
        sq = sizes[q]
        t0 = starts[q]
        t1 = starts[q + 1]
        for u in range(t0, t1):  # group node -> record: R3 (t leaves q)
            t = order[u]
            for r in range(S):
                if sq > k and pm[r] < inf:
                    dist_rec[r, t] = pm[r] - sq / (sq - 1.0) * own[t]
                    pred_rec[r, t] = n + parg[r]
        for l in range(L + 1):
            p = s if l == L else nb[q, l]  # the start group's records are always predecessors
            if p < 0 or rank[p] < 0 or rank[p] >= li or (l < L and p == s):
                continue
            for v in range(starts[p], starts[p + 1]):
                u = order[v]
                eu = _d2(Z, u, cent, q, d)
                for r in range(S):
                    du = dist_rec[r, u]
                    if du == inf:
                        continue
                    if sq < max_size:  # record -> group node: R2 (u joins q)
                        c2 = du + sq / (sq + 1.0) * eu
                        if c2 < dist_grp[r, q]:
                            dist_grp[r, q] = c2
                            pred_grp[r, q] = u
                    for w in range(t0, t1):  # record -> record: R1 (u takes t's place)
                        t = order[w]
                        c = du + eu - _d2(Z, u, Z, t, d) / sq - own[t]
                        edges += 1
                        if c < dist_rec[r, t]:
                            dist_rec[r, t] = c
                            pred_rec[r, t] = u
        for r in range(S):
            if dist_grp[r, q] < pm[r]:
                pm[r] = dist_grp[r, q]
                parg[r] = q
    # closing edges back into s
    ss = sizes[s]
    best = 0.0
    row = -1
    end = -1
    for l in range(L):
        p = nb[s, l]
        if p < 0 or rank[p] < 0:
            continue
        for v in range(starts[p], starts[p + 1]):
            ve = order[v]
            es = _d2(Z, ve, cent, s, d)
            for r in range(ns):  # R1: ve takes the place of source record vs
                dv = dist_rec[r, ve]
                if dv == inf:
                    continue
                vs = order[starts[s] + r]
                c = dv + es - own[vs] - _d2(Z, ve, Z, vs, d) / ss
                edges += 1
                if c < best:
                    best = c
                    row = r
                    end = ve
            if ss < max_size:  # R2: ve joins s (the group-node source)
                dv = dist_rec[S - 1, ve]
                if dv < inf:
                    c = dv + ss / (ss + 1.0) * es
                    if c < best:
                        best = c
                        row = S - 1
                        end = ve
    if ss > k:  # group node -> source record vs: R3 (vs leaves s)
        for r in range(ns):
            vs = order[starts[s] + r]
            c = pm[r] - ss / (ss - 1.0) * own[vs]
            if parg[r] != s and c < best:
                best = c
                row = r
                end = n + parg[r]
    counters[0] += edges
    return best, row, end, pred_rec, pred_grp


@njit(cache=True, nogil=True)
def near_groups(Z, labels, order, starts, cent, knn, L):
    """Each group's ``L`` nearest groups by centroid among the groups that hold one of the
    ``knn`` nearest records of its members (nearest first, ties to the lower group; -1 pads
    when there are fewer). Time O(g s m d) for groups of s records and m = ``knn.shape[1]``."""
    d = Z.shape[1]
    g = starts.size - 1
    M = knn.shape[1]
    nb = np.full((g, L), -1, dtype=np.int64)
    mark = np.full(g, -1, dtype=np.int64)
    D = np.empty(L)
    for a in range(g):
        mark[a] = a
        for l in range(L):
            D[l] = np.inf
        for u in range(starts[a], starts[a + 1]):
            x = order[u]
            for t in range(M):
                y = knn[x, t]
                if y < 0:
                    continue
                b = labels[y]
                if mark[b] == a:
                    continue
                mark[b] = a
                s = _d2(cent, a, cent, b, d)
                if s < D[L - 1] or (s == D[L - 1] and (nb[a, L - 1] < 0 or b < nb[a, L - 1])):
                    p = L - 1
                    while p > 0 and (D[p - 1] > s or (D[p - 1] == s and nb[a, p - 1] > b)):
                        D[p] = D[p - 1]
                        nb[a, p] = nb[a, p - 1]
                        p -= 1
                    D[p] = s
                    nb[a, p] = b
    return nb


@njit(cache=True, nogil=True)
def refine_groups(cent, nb):
    """Each group's ``L`` nearest groups by centroid among its neighbours in ``nb`` and
    their neighbours (two hops), nearest first, ties to the lower group. Time O(g L^2 d)."""
    g, L = nb.shape
    d = cent.shape[1]
    out = np.full((g, L), -1, dtype=np.int64)
    mark = np.full(g, -1, dtype=np.int64)
    D = np.empty(L)
    for a in range(g):
        mark[a] = a
        for l in range(L):
            D[l] = np.inf
        for l1 in range(L + 1):
            for l2 in range(L + 1):
                if l1 == L:
                    break
                c = nb[a, l1]
                if c < 0:
                    break
                b = c if l2 == L else nb[c, l2]
                if b < 0 or mark[b] == a:
                    continue
                mark[b] = a
                s = _d2(cent, a, cent, b, d)
                if s < D[L - 1] or (s == D[L - 1] and (out[a, L - 1] < 0 or b < out[a, L - 1])):
                    p = L - 1
                    while p > 0 and (D[p - 1] > s or (D[p - 1] == s and out[a, p - 1] > b)):
                        D[p] = D[p - 1]
                        out[a, p] = out[a, p - 1]
                        p -= 1
                    D[p] = s
                    out[a, p] = b
    return out
