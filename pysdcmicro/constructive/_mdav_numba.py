"""Compiled MDAV rounds (numba; imported only when numba is installed).

The same groups as the numpy rounds of :func:`._mdav._dense_labels`: every choice (r, the
record farthest from the centroid; s, the record farthest from r; the k nearest to r and
to s) is the exact arg-max / arg-min of one fixed number per record, the compared distance

    D(i) = sum over columns, in column order and in float32, of float32((x_it - y_t)^2)

(sdcMicro's; the difference and its square in float64), with sdcMicro's ties (equal
distances; farthest: lowest index; nearest: below the k-th distance, then those equal to
it, highest index first). The screening keeps every record whose D can reach the winner's.

How it is fast:

* **Single-precision screening, then D.** Each pass over the remaining records computes
  ``v = |x|^2 - 2 x.y (+ |y|^2)`` in float32 (8 records per AVX2 instruction, half the
  memory traffic), keeping the least and largest value of every block of 256 records. A
  bound E on ``|v32 - exact|`` (below, about 80 units of float32 rounding of the largest
  squared norm) holds, and D is within ``(d + 1) 2^-24`` of the exact distance, relative;
  so only the records whose ``v32`` lies within 2E plus that margin (the bound ``G``) of
  the single-precision best (and only in blocks whose min / max lets them in) get D
  computed and compared with the tie rules. Exact duplicates and equal distances all get
  D, so ties resolve as in the numpy rounds.
* **One pass per group.** The pass over r gives s and r's k nearest; a second gives s's.
* **r without a pass.** The records are kept sorted by distance to a pivot ``c0`` (an
  earlier centroid) and, by the triangle inequality ``|x - c| <= |x - c0| + |c - c0|``, only
  the few near the top of that list can win (margin above D's rounding); a full pass and a
  new pivot when the list does not decide or gets loose.
* **Removal by swapping** the last remaining record into the freed slot: the passes run over
  exactly the remaining records, with no masks (tie rules read record indices, not slots).

The running column total (whose quotient is the centroid) is updated exactly as in the
numpy rounds: group sums in the order (value, index) subtracted, and the total recomputed in
record order at the same moments (when a quarter of the records since the last recount are
gone), so the centroids, hence r, are the same numbers.

Scaling: the float32 copy is the data times a power of two that brings the largest squared
norm to <= 1 (no overflow, exact scaling); E is in those units. Error analysis (u = 2^-24,
|x|, |y| <= 1): representing x, y and the norms in float32 and the d-term dot product in any
order (FMA allowed) cost at most ``u(|x|^2 + |y|^2) + 2 (d + 4) u |x| |y|``, the last two
operations ``2 u (|x| + |y|)^2``: below ``(2 d + 18) u``; E is taken as ``(4 d + 40) u`` plus
the float64 value's own rounding.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._compile import cached
from .._select import kth_smallest as _kth_smallest
from .._select import stable_argsort
from ._mdav_arrays import prepare

__all__ = ["mdav_rounds", "prepare", "warm"]

_B = 256        # records per screening block
_TOP = 1024     # records kept in the pivot list
_REPIVOT = 96   # evaluations in one round that make the next round re-pivot


def warm() -> bool:
    """True when calling :func:`mdav_rounds` costs no compilation: compiled in this process
    already, or a current on-disk cache (numba's index for this source file) exists."""
    return cached(mdav_rounds)


@njit(cache=True, nogil=True, fastmath=True)
def _screen(XT32, n32, m, y32, a32, vals, bmin, bmax):
    """vals[a] = n32[a] - 2 x_a.y + a32 in float32 for the first m slots; per block of _B
    slots its least and largest value. Returns the number of blocks."""
    d = XT32.shape[0]
    two = np.float32(2.0)
    nb = (m + _B - 1) // _B
    for b in range(nb):
        b0 = b * _B
        L = min(_B, m - b0)
        o = vals[b0:b0 + L]          # 1-D slices: the loops vectorize (2-D indexing did not)
        r0 = XT32[0, b0:b0 + L]
        y0 = y32[0]
        for a in range(L):
            o[a] = r0[a] * y0
        for t in range(1, d):
            rt = XT32[t, b0:b0 + L]
            yt = y32[t]
            for a in range(L):
                o[a] += rt[a] * yt
        nn = n32[b0:b0 + L]
        lo = np.float32(np.inf)
        hi = np.float32(-np.inf)
        for a in range(L):
            v = nn[a] - two * o[a] + a32
            o[a] = v
            if v < lo:
                lo = v
            if v > hi:
                hi = v
        bmin[b] = lo
        bmax[b] = hi
    return nb


@njit(cache=True, nogil=True)
def _dist32(X, i, y):
    """The compared distance of record i to y (the numpy rounds' number): each coordinate's
    squared difference rounded to float32, summed in float32 in column order."""
    acc = np.float32(0.0)
    for t in range(X.shape[1]):
        u = X[i, t] - y[t]
        acc = np.float32(acc + np.float32(u * u))
    return np.float64(acc)


@njit(cache=True, nogil=True)
def _pick_farthest(fi, fv, cnt):
    """Of the ``cnt`` evaluated records ``fi`` with compared distances ``fv``: the lowest
    record index among those at the largest distance."""
    top = -np.inf
    for q in range(cnt):
        if fv[q] > top:
            top = fv[q]
    r = -1
    for q in range(cnt):
        if fv[q] >= top and (r < 0 or fi[q] < r):
            r = fi[q]
    return r


@njit(cache=True, nogil=True)
def _farthest(X, act, vals, bmax, nb, m, y, shift, scale2, E2, G, fi, fv):
    """Record with the largest compared distance among the screened slots (screened value
    + ``shift`` = distance); among equal ones, the lowest index. The compared distance is
    within ``G/2`` of the exact one, relative (float32 rounding), hence the margin."""
    hi = -np.inf
    for b in range(nb):
        if bmax[b] > hi:
            hi = np.float64(bmax[b])
    # every record whose compared distance can reach the largest one's, in scaled units
    band = G * (abs(hi) + E2 + abs(shift) * scale2)
    lim = hi - E2 - band
    cnt = 0
    for b in range(nb):
        if bmax[b] < lim:
            continue
        for a in range(b * _B, min(b * _B + _B, m)):
            if vals[a] >= lim:
                i = act[a]
                fi[cnt] = i
                fv[cnt] = _dist32(X, i, y)
                cnt += 1
    return _pick_farthest(fi, fv, np.int64(cnt))


@njit(cache=True, nogil=True)
def _nearest(X, act, vals, bmin, nb, m, k, y, scale2, E2, G, b32, ev, ei, ea, fi, fv):
    """The k records nearest (smallest compared distances) into ev / ei (distance, record):
    those below the k-th smallest distance, then those equal to it, highest record index
    first. Returns k."""
    # 1. the k-th smallest float32 value (blocks whose least value cannot enter are skipped)
    cnt = 0
    for b in range(nb):
        if cnt == k and bmin[b] > np.float64(b32[k - 1]) + E2:
            continue
        for a in range(b * _B, min(b * _B + _B, m)):
            v = vals[a]
            if cnt == k:
                if v >= b32[k - 1]:
                    continue
                pos = k - 1
            else:
                pos = cnt
                cnt += 1
            while pos > 0 and b32[pos - 1] > v:
                b32[pos] = b32[pos - 1]
                pos -= 1
            b32[pos] = v
    kth = np.float64(b32[k - 1])
    lim = kth + E2 + G * (abs(kth) + E2)
    # 2. compared distances of every record that can be among the k nearest or tie with
    #    the k-th; the k smallest (sorted) into ev
    cnt = 0
    nk = 0
    for b in range(nb):
        if bmin[b] > lim:
            continue
        for a in range(b * _B, min(b * _B + _B, m)):
            if vals[a] > lim:
                continue
            i = act[a]
            v = _dist32(X, i, y)
            fi[cnt] = i
            fv[cnt] = v
            cnt += 1
            if nk == k:
                if v >= ev[k - 1]:
                    continue
                pos = k - 1
            else:
                pos = nk
                nk += 1
            while pos > 0 and ev[pos - 1] > v:
                ev[pos] = ev[pos - 1]
                pos -= 1
            ev[pos] = v
    t = ev[k - 1]
    eps = 0.0
    # 3. below the k-th distance first, then those equal to it by record index, highest first
    nb_ = 0
    for q in range(cnt):
        if fv[q] < t - eps:
            ei[nb_] = fi[q]
            ev[nb_] = fv[q]
            nb_ += 1
    need = k - nb_
    got = 0
    for q in range(cnt):
        v = fv[q]
        if v < t - eps or v - t > eps:
            continue
        i = fi[q]
        if got == need:
            if i < ei[k - 1]:
                continue
            pos = k - 1
        else:
            pos = nb_ + got
            got += 1
        while pos > nb_ and ei[pos - 1] < i:
            ei[pos] = ei[pos - 1]
            ev[pos] = ev[pos - 1]
            pos -= 1
        ei[pos] = i
        ev[pos] = v
    return k


@njit(cache=True, nogil=True)
def _take(X, act, slot, XT32, n32, m, ev, ei, cnt, labels, dead, g, total, gs):
    """Group the records ``ei[:cnt]``: labels, their sum (in ascending value, lowest index
    first on ties: the numpy rounds' order) off the total, their slots freed by moving the
    last remaining record in. Returns the new number of remaining records."""
    d = X.shape[1]
    members = ei[:cnt].copy()
    vv = ev[:cnt].copy()
    for a in range(1, cnt):  # insertion sort by (value, index)
        mv = members[a]
        v = vv[a]
        b = a
        while b > 0 and (vv[b - 1] > v or (vv[b - 1] == v and members[b - 1] > mv)):
            members[b] = members[b - 1]
            vv[b] = vv[b - 1]
            b -= 1
        members[b] = mv
        vv[b] = v
    for t in range(d):
        gs[t] = 0.0
    for q in range(cnt):
        i = members[q]
        for t in range(d):
            gs[t] += X[i, t]
    for t in range(d):
        total[t] -= gs[t]
    for q in range(cnt):
        i = members[q]
        labels[i] = g
        dead[i] = True
        a = slot[i]
        last = m - 1
        j = act[last]
        act[a] = j
        slot[j] = a
        n32[a] = n32[last]
        for t in range(XT32.shape[0]):
            XT32[t, a] = XT32[t, last]
        slot[i] = -1
        m -= 1
    return m


@njit(cache=True, nogil=True)
def _pivot(X, act, m, c, top_i, top_d):
    """Distances of the remaining records to ``c``; the _TOP largest (record index and
    distance, descending) into top_i / top_d. Returns (count, largest distance not kept)."""
    d = X.shape[1]
    D = np.empty(m)
    for a in range(m):
        i = act[a]
        acc = 0.0
        for t in range(d):
            u = X[i, t] - c[t]
            acc += u * u
        D[a] = np.sqrt(acc)
    T = min(_TOP, m)
    if T == m:
        thr = -np.inf
    else:
        thr = -_kth_smallest(-D, m, T)
    cnt = 0
    rest = 0.0
    for a in range(m):
        v = D[a]
        if v >= thr and cnt < top_i.size:
            top_i[cnt] = act[a]
            top_d[cnt] = v
            cnt += 1
        elif v > rest:
            rest = v
    o = stable_argsort(-top_d[:cnt], np.int64(cnt))  # np.int64: no second compilation for a literal 0
    ti = np.empty(cnt, dtype=np.int64)
    td = np.empty(cnt)
    for q in range(cnt):  # explicit loops: numba's fancy indexing costs seconds to compile
        ti[q] = top_i[o[q]]
        td[q] = top_d[o[q]]
    for q in range(cnt):
        top_i[q] = ti[q]
        top_d[q] = td[q]
    return cnt, rest


@njit(cache=True, nogil=True)
def mdav_rounds(X, norms, XT32, n32, scale2, E, k, labels, stop_flag):
    """Fill ``labels`` (groups numbered in order of creation); returns the number of
    groups. Arguments from :func:`prepare` (``XT32`` and ``n32`` are overwritten).
    ``stop_flag[0] != 0`` (set by another thread) stops early: the records not yet grouped
    are then labelled -1."""
    n, d = X.shape
    # allocations are np.empty and loops: each other numpy constructor (and each dtype
    # spelling) is one more implementation for numba to compile on a fresh install
    act = np.empty(n, dtype=np.int64)   # slot -> record
    slot = np.empty(n, dtype=np.int64)  # record -> slot (-1 once grouped)
    dead = np.empty(n, dtype=np.bool_)
    for i in range(n):
        act[i] = i
        slot[i] = i
        dead[i] = False
    total = np.empty(d)
    for t in range(d):
        total[t] = 0.0
    for i in range(n):
        for t in range(d):
            total[t] += X[i, t]
    m = n
    na = n                        # records at the last recount of the total (numpy rounds' rule)
    g = 0
    c = np.empty(d)
    gs = np.empty(d)
    y32 = np.empty(d, dtype=np.float32)
    vals = np.empty(n, dtype=np.float32)
    nbl = (n + _B - 1) // _B
    bmin = np.empty(max(nbl, 1), dtype=np.float32)
    bmax = np.empty(max(nbl, 1), dtype=np.float32)
    b32 = np.empty(k, dtype=np.float32)
    ev = np.empty(k)
    ei = np.empty(k, dtype=np.int64)
    ea = np.empty(k, dtype=np.int64)
    fi = np.empty(max(n, 4 * _TOP), dtype=np.int64)   # evaluated records and their exact values
    fv = np.empty(max(n, 4 * _TOP))
    for i in range(n):
        labels[i] = -1
    top_i = np.empty(4 * _TOP, dtype=np.int64)
    top_d = np.empty(4 * _TOP)
    n_top = 0
    rest = np.inf
    head = 0
    c0 = np.empty(d)
    for t in range(d):
        c0[t] = 0.0
    need_pivot = True
    big = 0.0
    for i in range(n):
        if norms[i] > big:
            big = norms[i]
    tol = 4e-9 * (big + 1.0)
    E2 = 2.0 * E                  # twice the screening bound, in scaled units
    G = 3.0 * (d + 2) * 2.0 ** -24  # float32 rounding of a compared distance, relative, with room
    scale = np.sqrt(scale2)
    while m >= 2 * k:
        if stop_flag[0] != 0:
            return g
        three = m >= 3 * k
        for t in range(d):
            c[t] = total[t] / m
        # r: farthest from the centroid (lowest index on ties), pruned by the pivot list
        if need_pivot:
            for t in range(d):
                c0[t] = c[t]
            n_top, rest = _pivot(X, act, m, c, top_i, top_d)
            head = 0
            need_pivot = False
        delta = 0.0
        cc = 0.0
        for t in range(d):
            delta += (c[t] - c0[t]) ** 2
            cc += c[t] * c[t]
        delta = np.sqrt(delta)
        best = -np.inf
        evals = 0
        concluded = False
        q = head
        while q < n_top and dead[top_i[q]]:
            q += 1
        head = q
        while q < n_top:
            i = top_i[q]
            if not dead[i]:
                bound = top_d[q] + delta
                if (bound * bound + tol) * (1.0 + G) < best:
                    concluded = True
                    break
                v = _dist32(X, i, c)
                fi[evals] = i
                fv[evals] = v
                evals += 1
                if v > best:
                    best = v
            q += 1
        if not concluded:
            bound = rest + delta
            concluded = evals > 0 and (bound * bound + tol) * (1.0 + G) < best
        if concluded:
            r = _pick_farthest(fi, fv, np.int64(evals))
            if evals > _REPIVOT:
                need_pivot = True
        else:  # the list did not decide: a screened pass, and a new pivot next round
            for t in range(d):
                y32[t] = np.float32(c[t] * scale)
            nb = _screen(XT32, n32, m, y32, np.float32(0.0), vals, bmin, bmax)
            r = _farthest(X, act, vals, bmax, nb, m, c, cc, scale2, E2, G, fi, fv)
            need_pivot = True
        # s: farthest from r (lowest index on ties); r's k nearest -- one pass
        xx = 0.0
        for t in range(d):
            xx += X[r, t] * X[r, t]
        for t in range(d):
            y32[t] = XT32[t, slot[r]]
        nb = _screen(XT32, n32, m, y32, np.float32(xx * scale2), vals, bmin, bmax)
        s = _farthest(X, act, vals, bmax, nb, m, X[r], 0.0, scale2, E2, G, fi, fv) if three else -1
        cnt = _nearest(X, act, vals, bmin, nb, m, k, X[r], scale2, E2, G, b32, ev, ei, ea, fi, fv)
        m = _take(X, act, slot, XT32, n32, m, ev, ei, cnt, labels, dead, np.int64(g), total, gs)
        g += 1
        if three:
            yy = 0.0
            for t in range(d):
                yy += X[s, t] * X[s, t]
            for t in range(d):
                y32[t] = XT32[t, slot[s]]
            nb = _screen(XT32, n32, m, y32, np.float32(yy * scale2), vals, bmin, bmax)
            cnt = _nearest(X, act, vals, bmin, nb, m, k, X[s], scale2, E2, G, b32, ev, ei, ea, fi, fv)
            m = _take(X, act, slot, XT32, n32, m, ev, ei, cnt, labels, dead, np.int64(g), total, gs)
            g += 1
        if m and 4 * (na - m) > na:  # recount the total in record order
            na = m
            for t in range(d):
                total[t] = 0.0
            for i in range(n):
                if not dead[i]:
                    for t in range(d):
                        total[t] += X[i, t]
    if m:
        for a in range(m):
            labels[act[a]] = g
        g += 1
    return g


# --------------------------------------------------------------------------- V-MDAV helpers
# Used by the compiled V-MDAV rounds (:mod:`._vmdav_numba`).


@njit(cache=True, nogil=True)
def kth_smallest(vals, bmin, nb, m, k, E2):
    """The k-th smallest of ``vals[:m]`` (k <= m), skipping blocks that cannot hold it."""
    b32 = np.empty(k, dtype=np.float32)
    cnt = 0
    for b in range(nb):
        if cnt == k and bmin[b] > np.float64(b32[k - 1]) + E2:
            continue
        for a in range(b * _B, min(b * _B + _B, m)):
            v = vals[a]
            if cnt == k:
                if v >= b32[k - 1]:
                    continue
                pos = k - 1
            else:
                pos = cnt
                cnt += 1
            while pos > 0 and b32[pos - 1] > v:
                b32[pos] = b32[pos - 1]
                pos -= 1
            b32[pos] = v
    return np.float64(b32[k - 1])


@njit(cache=True, nogil=True)
def remove_records_tracked(recs, act, slot, XT32, n32, m, vals, bmin):
    """Free the slots of records ``recs`` (the last remaining record moves in), the screened
    values ``vals`` moving with their records (each block's least value ``bmin`` stays a lower
    bound). Returns the new number of remaining records."""
    for q in range(recs.size):
        i = recs[q]
        a = slot[i]
        last = m - 1
        j = act[last]
        act[a] = j
        slot[j] = a
        n32[a] = n32[last]
        v = vals[last]
        vals[a] = v
        b = a // _B
        if v < bmin[b]:
            bmin[b] = v
        for t in range(XT32.shape[0]):
            XT32[t, a] = XT32[t, last]
        slot[i] = -1
        m -= 1
    return m


@njit(cache=True, nogil=True, fastmath=True)
def _group_block(XT32, n32, b0, L, Y32, yy32, out, o):
    """out[:L] = least screened value of slots b0..b0+L-1 against the rows of Y32
    (vectorized across the slots, one member at a time)."""
    d = XT32.shape[0]
    two = np.float32(2.0)
    for a in range(L):
        out[a] = np.float32(np.inf)
    nn = n32[b0:b0 + L]
    for j in range(Y32.shape[0]):
        r0 = XT32[0, b0:b0 + L]
        y0 = Y32[j, 0]
        for a in range(L):
            o[a] = r0[a] * y0
        for t in range(1, d):
            rt = XT32[t, b0:b0 + L]
            yt = Y32[j, t]
            for a in range(L):
                o[a] += rt[a] * yt
        yj = yy32[j]
        for a in range(L):
            v = nn[a] - two * o[a] + yj
            if v < out[a]:
                out[a] = v
