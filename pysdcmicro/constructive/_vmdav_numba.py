"""Compiled V-MDAV rounds (numba; imported only when numba is installed).

The whole group loop of :func:`._vmdav._screened_labels` in one compiled function, so that a
group costs no Python calls. Every decision is the one of the numpy rounds
(:func:`._vmdav._numpy_labels`), made on the same double-precision numbers:

* exact squared distances are direct differences summed in the order of numpy's
  ``einsum("ij,ij->i", diff, diff)`` on this platform's baseline build (two SSE2 lanes, even
  and odd coordinates, unrolled by eight from the back, lanes added last; see
  :func:`_sqd`); ``tests/constructive/test_vmdav.py`` checks the equality bit for bit on every d up to 24;
* the float32 screening and its bound E are those of :mod:`._mdav_numba` (the passes, the
  k-th smallest, the removal by swapping); only the records the screening cannot rule out
  are measured exactly, and the tie rules read record indices, never slots.

Per group: one screened pass from the seed; the k nearest are taken from the records up to
the (k+8)-th smallest screened value (a superset of those the k nearest need, so the same k
by (exact value, record)), and the records of that set not taken are the "few" that bound
the extension:

* U, the least exact distance from the group to a few, is >= d_in; e_min lies within
  ``U + rad`` of the seed (rad: the group's radius around the seed), so only those records
  are candidates. Their screened distance to the seed is the seed pass itself; to the other
  members, one vectorized pass over the gathered candidates. The candidates within 2E of
  the best screened value are measured exactly: e_min and d_in.
* The least exact distance from e_min to a few other than itself bounds d_out from above:
  when even that bound fails ``d_in < gamma d_out``, the group stops (the exact test would
  fail too). Otherwise d_out decides only through the test, so it is sought among the
  records within ``d(e_min, seed) + min(bound, d_in / gamma)`` of the seed (a record farther
  from e_min cannot make the test fail), with no screened pass, and the first block holding
  a record that fails the test ends the search (the least distance fails it too).

Measured at 10^5 x 10 (Gaussian, k = 5): 6.8 s against 11.1 s for the Python-driven rounds
(``benchmarks/results/mdav_scale.md``); at 3 x 10^4, 0.85 s of CPU of which the seed passes
alone (gamma = 0) take 0.39 s.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .._select import kth_smallest as _kth_smallest
from .._select import stable_argsort
from ._mdav_numba import _B, _group_block, _screen, kth_smallest, remove_records_tracked

__all__ = ["vmdav_rounds"]


@njit(cache=True, nogil=True)
def _sqd(X, i, Y, j):
    """``einsum``'s squared distance between X[i] and Y[j] (direct differences), bit for bit:
    two lanes (even / odd coordinates), blocks of eight added from the back, then the lanes."""
    d = X.shape[1]
    l0 = 0.0
    l1 = 0.0
    t = 0
    while d - t >= 8:
        u0 = X[i, t] - Y[j, t]
        u1 = X[i, t + 1] - Y[j, t + 1]
        u2 = X[i, t + 2] - Y[j, t + 2]
        u3 = X[i, t + 3] - Y[j, t + 3]
        u4 = X[i, t + 4] - Y[j, t + 4]
        u5 = X[i, t + 5] - Y[j, t + 5]
        u6 = X[i, t + 6] - Y[j, t + 6]
        u7 = X[i, t + 7] - Y[j, t + 7]
        a0 = u6 * u6 + l0
        a1 = u7 * u7 + l1
        a0 = u4 * u4 + a0
        a1 = u5 * u5 + a1
        a0 = u2 * u2 + a0
        a1 = u3 * u3 + a1
        l0 = u0 * u0 + a0
        l1 = u1 * u1 + a1
        t += 8
    while t < d:
        u0 = X[i, t] - Y[j, t]
        l0 = u0 * u0 + l0
        if t + 1 < d:
            u1 = X[i, t + 1] - Y[j, t + 1]
            l1 = u1 * u1 + l1
        t += 2
    return l0 + l1


@njit(cache=True, nogil=True)
def _to_set(X, i, members, nm):
    """Least exact squared distance from X[i] to the rows ``members[:nm]``."""
    best = np.inf
    for q in range(nm):
        v = _sqd(X, i, X, members[q])
        if v < best:
            best = v
    return best


@njit(cache=True, nogil=True)
def _at_most(vals, bmin, nb, m, lim, act, out):
    """Records (not slots) with ``vals <= lim`` into ``out``, ascending; returns the count."""
    c = 0
    for b in range(nb):
        if bmin[b] > lim:
            continue
        for a in range(b * _B, min(b * _B + _B, m)):
            if vals[a] <= lim:
                out[c] = act[a]
                c += 1
    if c > 1:
        o = stable_argsort(out, np.int64(c))  # np.int64: no second compilation for a literal 0
        tmp = np.empty(c, dtype=out.dtype)
        for q in range(c):
            tmp[q] = out[o[q]]
        out[:c] = tmp
    return c


@njit(cache=True, nogil=True, fastmath=True)
def _screen_one(XT32, n32, a, y32, yy):
    """Screened value of slot a against the float32 point y32 (|y|^2 = yy)."""
    acc = np.float32(0.0)
    for t in range(XT32.shape[0]):
        acc += XT32[t, a] * y32[t]
    return n32[a] - np.float32(2.0) * acc + yy


@njit(cache=True, nogil=True)
def vmdav_rounds(X, sqn, XT32, n32, scale2, E, k, g2, extend, seeds, labels, act, slot, state,
                 vals, bmin, bmax, vals2, bmin2, bmax2, max_groups, nt=1, par_min=1 << 62):
    """Build up to ``max_groups`` more groups (fewer when fewer than k records remain).

    ``state`` = [m, g, ptr, extended] is read and updated (remaining records, groups built,
    position in ``seeds``, groups grown beyond k). ``sqn``: float64 squared row norms (for
    the screening offsets only). ``XT32``, ``n32``, ``act``, ``slot`` are the screening state
    of :mod:`._mdav_numba` (updated). ``nt`` threads scan the remaining records while at
    least ``par_min`` remain (the same groups). Returns the number of groups built in this
    call."""
    n, d = X.shape
    m = state[0]
    g = state[1]
    ptr = state[2]
    extended = state[3]
    E2 = 2.0 * E
    sc = np.sqrt(scale2)
    slack = 1.0 + 1e-6
    y32 = np.empty(d, dtype=np.float32)
    Y32 = np.empty((2 * k, d), dtype=np.float32)
    yy32 = np.empty(2 * k, dtype=np.float32)
    members = np.empty(2 * k, dtype=np.int64)
    buf = np.empty(n, dtype=np.int64)
    few = np.empty(n, dtype=np.int64)
    cs = np.empty(n, dtype=np.int64)
    cd = np.empty(n, dtype=np.float32)
    G = np.empty((d, n), dtype=np.float32)
    gn = np.empty(n, dtype=np.float32)
    o = np.empty(n, dtype=np.float32)
    one = np.empty(1, dtype=np.int64)
    tops = np.empty((nt, k + 8), dtype=np.float32)
    tcnt = np.zeros(nt, dtype=np.int64)
    tbest = np.empty(nt)
    tmin = np.empty(nt)
    built = 0
    while m >= k and built < max_groups:
        while labels[seeds[ptr]] >= 0:
            ptr += 1
        e = seeds[ptr]
        se = slot[e]
        for t in range(d):
            y32[t] = XT32[t, se]
        # The k nearest need the records within E2 of the k-th smallest screened value; with
        # extension, the records up to the (k+8)-th come along (a superset: the same k first
        # by (exact value, record)), and those not taken are the "few" that bound d_in and d_out.
        kk = min(m, k + 8) if extend else k
        if nt > 1 and m >= par_min:
            nbk = (m + _B - 1) // _B
            kth = _seed_pass_par(XT32, n32, m, y32, np.float32(sqn[e] * scale2), vals, bmin, bmax, kk, E2,
                                 nt, tops, tcnt)
        else:
            nbk = _screen(XT32, n32, m, y32, np.float32(sqn[e] * scale2), vals, bmin, bmax)
            kth = kth_smallest(vals, bmin, nbk, m, kk, E2)
        nc = _at_most(vals, bmin, nbk, m, kth + E2, act, buf)
        ex = np.empty(nc)
        for q in range(nc):
            i = buf[q]
            ex[q] = -1.0 if i == e else _sqd(X, i, X, e)
        order = stable_argsort(ex, np.int64(nc))  # buf ascending: ties by lowest record
        rad2 = 0.0
        for q in range(k):
            i = buf[order[q]]
            members[q] = i
            labels[i] = g
            if ex[order[q]] > rad2:
                rad2 = ex[order[q]]
        nf = 0
        for q in range(k, nc):
            few[nf] = buf[order[q]]
            nf += 1
        m = remove_records_tracked(members[:k], act, slot, XT32, n32, m, vals, bmin)
        nm = k
        if extend and m > 0:
            rad = np.sqrt(rad2)
            for q in range(nm):
                i = members[q]
                yy32[q] = np.float32(sqn[i] * scale2)
                for t in range(d):
                    Y32[q, t] = np.float32(X[i, t] * sc)
            while nm < 2 * k - 1 and m > 0:
                nbm = (m + _B - 1) // _B
                if nf == 0:  # no bound from the few left: the 8 nearest the seed
                    f8 = kth_smallest(vals, bmin, nbm, m, min(m, 8), E2)
                    nf = _at_most(vals, bmin, nbm, m, f8, act, few)
                # U >= d_in: the least distance from the group to an unassigned record of few
                u2 = np.inf
                for q in range(nf):
                    v = _to_set(X, few[q], members, nm)
                    if v < u2:
                        u2 = v
                U = np.sqrt(u2) * slack
                lim = ((U + rad) * slack) ** 2 * scale2 + E
                # candidates for e_min: slots with a seed value <= lim (the seed's screened
                # distance is vals itself; the other members' from one vectorized pass)
                par = nt > 1 and m >= par_min
                if par:
                    _candidates_par(XT32, n32, vals, bmin, m, lim, Y32, yy32, nm, cs, cd, G, gn, o, nt, tcnt,
                                    tbest)
                    best = np.inf
                    for t in range(nt):
                        if tbest[t] < best:
                            best = tbest[t]
                else:
                    c = 0
                    for b in range(nbm):
                        if bmin[b] > lim:
                            continue
                        for a in range(b * _B, min(b * _B + _B, m)):
                            if vals[a] <= lim:
                                cs[c] = a
                                c += 1
                    for q in range(c):
                        a = cs[q]
                        gn[q] = n32[a]
                        for t in range(d):
                            G[t, q] = XT32[t, a]
                    _group_block(G, gn, 0, c, Y32[1:nm], yy32[1:nm], cd, o)
                    best = np.inf
                    for q in range(c):
                        v = min(cd[q], vals[cs[q]])
                        cd[q] = v
                        if v < best:
                            best = np.float64(v)
                    tcnt[0] = c
                # e_min exactly: the candidates within E2 of the best screened value (each
                # thread's candidates start at its first slot; serially, one range from 0)
                jbest = -1
                d_in2 = np.inf
                per = (nbm + nt - 1) // nt
                for t in range(nt if par else 1):
                    s0 = min(nbm, t * per) * _B
                    for q in range(s0, s0 + tcnt[t]):
                        if cd[q] <= best + E2:
                            i = act[cs[q]]
                            v = _to_set(X, i, members, nm)
                            if v < d_in2 or (v == d_in2 and i < jbest):
                                d_in2 = v
                                jbest = i
                j = jbest
                if m > 1:
                    # an upper bound of d_out from the few (other than e_min): when even it
                    # fails the test, the group stops
                    ub = np.inf
                    for q in range(nf):
                        if few[q] != j:
                            v = _sqd(X, few[q], X, j)
                            if v < ub:
                                ub = v
                    if ub < np.inf and not d_in2 < g2 * ub:
                        break
                    # d_out decides only through the test: a record farther from e_min than
                    # d_in / gamma cannot make it fail, so e_min's nearest other record need
                    # only be sought within min(sqrt(ub), d_in / gamma) of e_min, hence within
                    # d(e_min, seed) + that of the seed; the first block that holds a record
                    # failing the test ends the search (the least one fails it too)
                    d_out2 = np.inf
                    if ub < np.inf:
                        rr = min(np.sqrt(ub), np.sqrt(d_in2 / g2) * slack)
                        r = (np.sqrt(_sqd(X, j, X, e)) + rr) * slack
                        lim2 = (r * slack) ** 2 * scale2 + E
                        if par:
                            d_out2 = _d_out_par(X, act, vals, bmin, m, lim2, j, d_in2, g2, nt, tmin)
                        else:
                            for b in range(nbm):
                                if bmin[b] > lim2:
                                    continue
                                for a in range(b * _B, min(b * _B + _B, m)):
                                    if vals[a] <= lim2:
                                        i = act[a]
                                        if i != j:
                                            v = _sqd(X, i, X, j)
                                            if v < d_out2:
                                                d_out2 = v
                                if not d_in2 < g2 * d_out2:
                                    break
                    else:
                        for a in range(m):
                            i = act[a]
                            if i != j:
                                v = _sqd(X, i, X, j)
                                if v < d_out2:
                                    d_out2 = v
                else:
                    d_out2 = np.inf
                if not d_in2 < g2 * d_out2:
                    break
                labels[j] = g
                members[nm] = j
                yy32[nm] = np.float32(sqn[j] * scale2)
                for t in range(d):
                    Y32[nm, t] = np.float32(X[j, t] * sc)
                nm += 1
                rj = np.sqrt(_sqd(X, j, X, e))
                if rj > rad:
                    rad = rj
                w = 0
                for q in range(nf):
                    if few[q] != j:
                        few[w] = few[q]
                        w += 1
                nf = w
                one[0] = j
                m = remove_records_tracked(one, act, slot, XT32, n32, m, vals, bmin)
            if nm > k:
                extended += 1
        g += 1
        built += 1
    state[0] = m
    state[1] = g
    state[2] = ptr
    state[3] = extended
    return built


# --------------------------------------------------------------------------- both cores
# The three scans of a round over all remaining records (the seed pass with its k-th
# smallest, the e_min candidate scan, the d_out search) split into ``nt`` contiguous ranges
# of blocks, one per thread (numba ``prange``), each thread writing only its own range of
# the shared buffers; the merge reads the ranges afterwards. The screened values are per
# record (a record's float32 value does not depend on the split), the k-th smallest of the
# union is the k-th smallest of the per-range lists, the candidates within 2E of the least
# screened value are measured exactly with the serial tie rule (lowest record), and the
# d_out search only decides whether some record fails the test: the labels are those of
# the serial rounds, bit for bit (tested with 1 and 2 threads).


@njit(cache=True, nogil=True, fastmath=True)
def _screen_range(XT32, n32, m, y32, a32, vals, bmin, bmax, b0, b1):
    """:func:`._mdav_numba._screen` on blocks b0..b1-1 only."""
    d = XT32.shape[0]
    two = np.float32(2.0)
    for b in range(b0, b1):
        s0 = b * _B
        L = min(_B, m - s0)
        o = vals[s0:s0 + L]
        r0 = XT32[0, s0:s0 + L]
        y0 = y32[0]
        for a in range(L):
            o[a] = r0[a] * y0
        for t in range(1, d):
            rt = XT32[t, s0:s0 + L]
            yt = y32[t]
            for a in range(L):
                o[a] += rt[a] * yt
        nn = n32[s0:s0 + L]
        lo = np.float32(np.inf)
        hi = np.float32(-np.inf)
        for a in range(L):
            v = nn[a] - two * o[a] + a32
            o[a] = v
            lo = min(lo, v)
            hi = max(hi, v)
        bmin[b] = lo
        bmax[b] = hi


@njit(cache=True, nogil=True)
def _smallest_range(vals, bmin, b0, b1, m, k, E2, b32):
    """The (up to) k smallest of the slots in blocks b0..b1-1, ascending, into b32; returns
    how many (k, or fewer when the range holds fewer slots)."""
    cnt = 0
    for b in range(b0, b1):
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
    return cnt


@njit(cache=True, nogil=True, parallel=True)
def _seed_pass_par(XT32, n32, m, y32, a32, vals, bmin, bmax, kk, E2, nt, tops, tcnt):
    """The seed pass on nt threads, each also keeping the kk smallest values of its range.
    Returns the kk-th smallest of ``vals[:m]`` (kk <= m): that of the serial scan."""
    nb = (m + _B - 1) // _B
    per = (nb + nt - 1) // nt
    for t in prange(nt):
        b0 = min(nb, t * per)
        b1 = min(nb, b0 + per)
        _screen_range(XT32, n32, m, y32, a32, vals, bmin, bmax, b0, b1)
        tcnt[t] = _smallest_range(vals, bmin, b0, b1, m, kk, E2, tops[t])
    tot = 0
    for t in range(nt):
        tot += tcnt[t]
    allv = np.empty(tot, dtype=np.float32)
    c = 0
    for t in range(nt):
        for q in range(tcnt[t]):
            allv[c] = tops[t, q]
            c += 1
    return np.float64(_kth_smallest(allv, tot, kk))


@njit(cache=True, nogil=True, parallel=True)
def _candidates_par(XT32, n32, vals, bmin, m, lim, Y32, yy32, nm, cs, cd, G, gn, o, nt, tc, tbest):
    """The e_min candidate scan on nt threads: thread t gathers the slots of its range with
    a seed value <= lim into ``cs[s0:s0 + tc[t]]`` (s0: its first slot) and their least
    screened value to the group into ``cd`` (same positions); tbest[t]: the least of them."""
    nb = (m + _B - 1) // _B
    per = (nb + nt - 1) // nt
    d = XT32.shape[0]
    for t in prange(nt):
        b0 = min(nb, t * per)
        b1 = min(nb, b0 + per)
        s0 = b0 * _B
        c = 0
        for b in range(b0, b1):
            if bmin[b] > lim:
                continue
            for a in range(b * _B, min(b * _B + _B, m)):
                if vals[a] <= lim:
                    cs[s0 + c] = a
                    c += 1
        for q in range(c):
            a = cs[s0 + q]
            gn[s0 + q] = n32[a]
            for u in range(d):
                G[u, s0 + q] = XT32[u, a]
        _group_block(G, gn, s0, c, Y32[1:nm], yy32[1:nm], cd[s0:s0 + c], o[s0:s0 + c])
        best = np.inf
        for q in range(c):
            v = min(cd[s0 + q], vals[cs[s0 + q]])
            cd[s0 + q] = v
            if v < best:
                best = np.float64(v)
        tc[t] = c
        tbest[t] = best


@njit(cache=True, nogil=True, parallel=True)
def _d_out_par(X, act, vals, bmin, m, lim2, j, d_in2, g2, nt, tmin):
    """The d_out search on nt threads: the least exact squared distance from record j to the
    other records of slots with a seed value <= lim2, each thread stopping after the first
    block holding a record that fails the test (so the result is only good for the test:
    it fails iff the serial search's does)."""
    nb = (m + _B - 1) // _B
    per = (nb + nt - 1) // nt
    for t in prange(nt):
        b0 = min(nb, t * per)
        b1 = min(nb, b0 + per)
        dmin = np.inf
        for b in range(b0, b1):
            if bmin[b] > lim2:
                continue
            for a in range(b * _B, min(b * _B + _B, m)):
                if vals[a] <= lim2:
                    i = act[a]
                    if i != j:
                        v = _sqd(X, i, X, j)
                        if v < dmin:
                            dmin = v
            if not d_in2 < g2 * dmin:
                break
        tmin[t] = dmin
    best = np.inf
    for t in range(nt):
        if tmin[t] < best:
            best = tmin[t]
    return best
