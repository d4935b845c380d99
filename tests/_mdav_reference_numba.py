"""Reference for the tests: the compiled MDAV rounds as they were before the float32 screening
(commit ea44d5d), kept verbatim so the new rounds can be compared with them group for
group. Not used by the package.

The rounds of :func:`._mdav._dense_labels` fused into passes over the remaining records:
one pass for the record farthest from r together with r's k nearest, one for s's k
nearest; no temporaries, no partial sorts. The record farthest from the centroid usually
needs no pass: the records are kept sorted by distance to a pivot ``c0`` (an earlier
centroid) and, by the triangle inequality ``|x - c| <= |x - c0| + |c - c0|``, only the few
near the top of that list can win (with a margin far above the rounding of the distances,
so exact ties are never cut off); a full pass and a new pivot when the list does not decide
or gets loose. Distances are ``|x|^2 - 2 x.y + |y|^2`` with the dot product accumulated coordinate
by coordinate, so a record's value never depends on its position (a BLAS gemv's rounding
does). Ties as in the dense code: the farthest record with the lowest index; among nearest
records at equal distance the highest indices first.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["mdav_rounds"]


@njit(cache=True, nogil=True)
def _insert(bv, bi, cnt, k, v, i):
    """Keep the k smallest (value, -index) pairs, sorted by value ascending then index
    descending; (v, i) arrives with an index above every one held."""
    if cnt == k:
        if v > bv[k - 1]:
            return cnt
        pos = k - 1
    else:
        pos = cnt
        cnt += 1
    while pos > 0 and bv[pos - 1] >= v:  # equal values: the newcomer (higher index) first
        bv[pos] = bv[pos - 1]
        bi[pos] = bi[pos - 1]
        pos -= 1
    bv[pos] = v
    bi[pos] = i
    return cnt


@njit(cache=True, nogil=True)
def _group_sum(X, members, cnt, out):
    d = X.shape[1]
    for t in range(d):
        out[t] = 0.0
    for q in range(cnt):
        i = members[q]
        for t in range(d):
            out[t] += X[i, t]


_BLOCK = 2048


@njit(cache=True, nogil=True)
def _values(XT, normsc, na, vec, add, vals, acc):
    """vals[i] = normsc[i] - 2 * (x_i . vec) + add for the first na (compacted) records,
    the dot accumulated coordinate by coordinate (SIMD across records, the same rounding
    per record as a scalar loop)."""
    d = XT.shape[0]
    for b0 in range(0, na, _BLOCK):
        b1 = min(b0 + _BLOCK, na)
        v0 = vec[0]
        for i in range(b0, b1):
            acc[i - b0] = XT[0, i] * v0
        for t in range(1, d):
            vt = vec[t]
            for i in range(b0, b1):
                acc[i - b0] += XT[t, i] * vt
        for i in range(b0, b1):
            vals[i] = normsc[i] - 2.0 * acc[i - b0] + add


_TOP = 1024     # records kept in the pivot list
_REPIVOT = 96   # evaluations in one round that make the next round re-pivot


@njit(cache=True, nogil=True)
def _pivot(X, XT, act, deadc, na, c, top_i, top_d):
    """Distances of the remaining records to ``c``; the _TOP largest (record index and
    distance, descending) into top_i / top_d. Returns (count, largest distance not kept)."""
    d = XT.shape[0]
    D = np.empty(na)
    m = 0
    for a in range(na):
        if deadc[a]:
            continue
        acc = 0.0
        for t in range(d):
            u = XT[t, a] - c[t]
            acc += u * u
        D[m] = np.sqrt(acc)
        m += 1
    T = min(_TOP, m)
    if T == m:
        thr = -np.inf
    else:
        thr = -np.partition(-D[:m], T - 1)[T - 1]
    cnt = 0
    rest = 0.0
    j = 0
    for a in range(na):
        if deadc[a]:
            continue
        v = D[j]
        j += 1
        if v >= thr and cnt < top_i.size:
            top_i[cnt] = act[a]
            top_d[cnt] = v
            cnt += 1
        elif v > rest:
            rest = v
    o = np.argsort(-top_d[:cnt], kind="mergesort")
    ti = top_i[:cnt][o].copy()
    td = top_d[:cnt][o].copy()
    top_i[:cnt] = ti
    top_d[:cnt] = td
    return cnt, rest


@njit(cache=True, nogil=True)
def mdav_rounds(X, norms, k, labels, stop_flag):
    """Fill ``labels`` (groups numbered in order of creation); returns the number of
    groups. ``stop_flag[0] != 0`` (set by another thread) stops early: the records not yet
    grouped are then labelled -1."""
    n, d = X.shape
    act = np.arange(n)           # compacted position -> record
    XT = np.ascontiguousarray(X.T).copy()
    normsc = norms.copy()
    deadc = np.zeros(n, dtype=np.bool_)
    dead = np.zeros(n, dtype=np.bool_)
    na = n
    total = np.zeros(d)
    for i in range(n):
        for t in range(d):
            total[t] += X[i, t]
    m = n
    g = 0
    c = np.empty(d)
    gs = np.empty(d)
    bv = np.empty(k)
    bi = np.empty(k, dtype=np.int64)
    vals = np.empty(n)
    acc = np.empty(_BLOCK)
    for i in range(n):
        labels[i] = -1
    dead_rec = dead
    top_i = np.empty(4 * _TOP, dtype=np.int64)
    top_d = np.empty(4 * _TOP)
    n_top = 0
    rest = np.inf
    head = 0
    c0 = np.zeros(d)
    need_pivot = True
    big = 0.0
    for i in range(n):
        if norms[i] > big:
            big = norms[i]
    tol = 4e-9 * (big + 1.0)
    while m >= 2 * k:
        if stop_flag[0] != 0:
            return g
        three = m >= 3 * k
        for t in range(d):
            c[t] = total[t] / m
        # r: farthest from the centroid (lowest index on ties). Pruned: the records sorted by
        # distance to a pivot c0; |x - c| <= |x - c0| + |c - c0| bounds the rest.
        if need_pivot:
            for t in range(d):
                c0[t] = c[t]
            n_top, rest = _pivot(X, XT, act, deadc, na, c, top_i, top_d)
            head = 0
            need_pivot = False
        delta = 0.0
        cc = 0.0
        for t in range(d):
            delta += (c[t] - c0[t]) ** 2
            cc += c[t] * c[t]
        delta = np.sqrt(delta)
        best = -np.inf
        r = -1
        evals = 0
        concluded = False
        q = head
        while q < n_top and dead_rec[top_i[q]]:
            q += 1
        head = q
        while q < n_top:
            i = top_i[q]
            if not dead_rec[i]:
                bound = top_d[q] + delta
                if bound * bound - cc + tol < best:
                    concluded = True
                    break
                acc0 = X[i, 0] * c[0]
                for t in range(1, d):
                    acc0 += X[i, t] * c[t]
                v = norms[i] - 2.0 * acc0 + 0.0
                evals += 1
                if v > best or (v == best and i < r):
                    best = v
                    r = i
            q += 1
        if not concluded:
            bound = rest + delta
            concluded = r >= 0 and bound * bound - cc + tol < best
        if not concluded:  # the list did not decide: a full pass, and a new pivot next round
            _values(XT, normsc, na, c, 0.0, vals, acc)
            best = -np.inf
            r = -1
            for a in range(na):
                if not deadc[a] and vals[a] > best:
                    best = vals[a]
                    r = act[a]
            need_pivot = True
        elif evals > _REPIVOT:
            need_pivot = True
        # s: farthest from r (lowest index on ties); r's k nearest
        xx = 0.0
        for t in range(d):
            xx += X[r, t] * X[r, t]
        _values(XT, normsc, na, X[r], xx, vals, acc)
        best = -np.inf
        s = -1
        cnt = 0
        for a in range(na):
            if deadc[a]:
                continue
            v = vals[a]
            if v > best:
                best = v
                s = act[a]
            if cnt < k or v <= bv[k - 1]:
                cnt = _insert(bv, bi, cnt, k, v, a)
        m -= _take_sorted(X, act, deadc, bi, bv, cnt, labels, dead, g, total, gs)
        g += 1
        if three:
            yy = 0.0
            for t in range(d):
                yy += X[s, t] * X[s, t]
            _values(XT, normsc, na, X[s], yy, vals, acc)
            cnt = 0
            for a in range(na):
                if deadc[a]:
                    continue
                v = vals[a]
                if cnt < k or v <= bv[k - 1]:
                    cnt = _insert(bv, bi, cnt, k, v, a)
            m -= _take_sorted(X, act, deadc, bi, bv, cnt, labels, dead, g, total, gs)
            g += 1
        if m and 4 * (na - m) > na:
            w = 0
            for a in range(na):
                if not deadc[a]:
                    act[w] = act[a]
                    normsc[w] = normsc[a]
                    for t in range(d):
                        XT[t, w] = XT[t, a]
                    deadc[w] = False
                    w += 1
            na = w
            for t in range(d):
                total[t] = 0.0
            for a in range(na):
                for t in range(d):
                    total[t] += XT[t, a]
    if m:
        for a in range(na):
            if not deadc[a]:
                labels[act[a]] = g
        g += 1
    return g


@njit(cache=True, nogil=True)
def _take_sorted(X, act, deadc, bi, bv, cnt, labels, dead, g, total, gs):
    """Group the selected records (compacted positions ``bi``); their sum is taken in
    ascending distance, lowest index first on ties (the dense code's order). Returns cnt."""
    members = np.empty(cnt, dtype=np.int64)
    vals = np.empty(cnt)
    for q in range(cnt):
        deadc[bi[q]] = True
        members[q] = act[bi[q]]
        vals[q] = bv[q]
    for a in range(1, cnt):  # insertion sort by (value, index)
        mv = members[a]
        vv = vals[a]
        b = a
        while b > 0 and (vals[b - 1] > vv or (vals[b - 1] == vv and members[b - 1] > mv)):
            members[b] = members[b - 1]
            vals[b] = vals[b - 1]
            b -= 1
        members[b] = mv
        vals[b] = vv
    _group_sum(X, members, cnt, gs)
    for t in range(total.size):
        total[t] -= gs[t]
    for q in range(cnt):
        labels[members[q]] = g
        dead[members[q]] = True
    return cnt
