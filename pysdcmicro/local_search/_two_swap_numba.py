"""Compiled best-improvement two-swap (numba): the bookkeeping of
:func:`pysdcmicro.local_search._two_swap.two_swap_search` without matrix products.

Every record keeps its best swap partner (``best_v``, ``best_j``). A swap of ``x`` (group
A) and ``y`` (group B) changes only pairs with a record of A or B: the rows of A's and B's
records are recomputed, every other record compares its current best with its pairs
against them (ties keep the current partner), and the records whose best partner was in
A or B are re-scanned. The SSE change of a pair is the unexpanded closed form
``e(x, B) - own_x + e(y, A) - own_y - (1/a + 1/b) |x - y|^2`` (see
:mod:`pysdcmicro.local_search._state`), O(d) per pair, so a move costs O(k n d) plus
O(n d) per re-scanned record, in O(n + g k) memory.

Without numba (or with ``PYSDCMICRO_NO_NUMBA``) the same source runs as plain Python.
"""

from __future__ import annotations

import numpy as np

from ._icsm_numba import _d2, njit

__all__ = ["best_rows", "swap_moves"]


@njit(cache=True, nogil=True)
def _row(Z, labels, sizes, cent, own, x, ex, best_v, best_j):
    """Best partner of record ``x`` over all records (first of equal values);
    ``ex[h] = e(x, h)`` is filled here."""
    n, d = Z.shape
    g = sizes.size
    A = labels[x]
    for h in range(g):
        ex[h] = _d2(Z, x, cent, h, d)
    inv_a = 1.0 / sizes[A]
    bv = np.inf
    bj = 0
    for y in range(n):
        B = labels[y]
        if B == A:
            continue
        v = ex[B] - own[x] + _d2(Z, y, cent, A, d) - own[y] - (inv_a + 1.0 / sizes[B]) * _d2(Z, x, Z, y, d)
        if v < bv:
            bv = v
            bj = y
    best_v[x] = bv
    best_j[x] = bj


@njit(cache=True, nogil=True)
def best_rows(Z, labels, sizes, cent, own, rows, best_v, best_j):
    """Best partners of the records ``rows``."""
    ex = np.empty(sizes.size)
    for t in range(rows.size):
        _row(Z, labels, sizes, cent, own, rows[t], ex, best_v, best_j)


@njit(cache=True, nogil=True)
def swap_moves(Z, labels, sizes, sums, cent, own, members, count, where, best_v, best_j, tol, max_moves,
               gains):
    """Apply up to ``max_moves`` best swaps (each the best over all pairs, lowest record
    index among equal values); returns (moves, 1 when no swap lowers the SSE by more than
    ``tol``, else 0). ``gains[t]`` receives the SSE change of move t."""
    n, d = Z.shape
    g = sizes.size
    ex = np.empty(g)
    width = members.shape[1]
    ab = np.empty(2 * width, dtype=np.int64)
    in_ab = np.zeros(n, dtype=np.bool_)
    col_v = np.empty(n)
    col_j = np.empty(n, dtype=np.int64)
    moves = 0
    while moves < max_moves:
        i = 0
        for t in range(1, n):
            if best_v[t] < best_v[i]:
                i = t
        if not best_v[i] < -tol:
            return moves, 1
        j = best_j[i]
        gains[moves] = best_v[i]
        A = labels[i]
        B = labels[j]
        pi = where[i]
        pj = where[j]
        members[A, pi] = j
        members[B, pj] = i
        where[i] = pj
        where[j] = pi
        labels[i] = B
        labels[j] = A
        for t in range(d):
            q = Z[i, t] - Z[j, t]
            sums[A, t] -= q
            sums[B, t] += q
        for h in (A, B):
            for t in range(d):
                cent[h, t] = sums[h, t] / sizes[h]
            for u in range(count[h]):
                r = members[h, u]
                own[r] = _d2(Z, r, cent, h, d)
        moves += 1
        m = 0
        for h in (A, B):
            for u in range(count[h]):
                ab[m] = members[h, u]
                in_ab[ab[m]] = True
                m += 1
        # rows of A and B, and every other record's best against them (first row of ab wins ties)
        for x in range(n):
            col_v[x] = np.inf
            col_j[x] = -1
        for u in range(m):
            r = ab[u]
            Ar = labels[r]
            inv_r = 1.0 / sizes[Ar]
            for h in range(g):
                ex[h] = _d2(Z, r, cent, h, d)
            bv = np.inf
            bj = 0
            for y in range(n):
                By = labels[y]
                if By == Ar:
                    continue
                v = ex[By] - own[r] + _d2(Z, y, cent, Ar, d) - own[y] - (inv_r + 1.0 / sizes[By]) * _d2(Z, r, Z, y, d)
                if v < bv:
                    bv = v
                    bj = y
                if v < col_v[y]:
                    col_v[y] = v
                    col_j[y] = r
            best_v[r] = bv
            best_j[r] = bj
        for x in range(n):
            if in_ab[x]:
                continue
            if in_ab[best_j[x]]:  # its partner moved: re-scan
                _row(Z, labels, sizes, cent, own, x, ex, best_v, best_j)
            elif col_v[x] < best_v[x]:
                best_v[x] = col_v[x]
                best_j[x] = col_j[x]
        for u in range(m):
            in_ab[ab[u]] = False
    return moves, 0
