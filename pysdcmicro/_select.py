"""Order statistics and a stable argsort for the compiled kernels.

numba compiles its own versions of ``np.partition``, ``np.sort`` and ``np.argsort`` for each
kernel that calls them, and those cost several seconds each to compile (``np.partition``
alone about 8 s, through its argument checks). A first run on a fresh install pays that
once per kernel. The few lines here compile in a fraction of a second and give the same
answers: :func:`kth_smallest` returns the same order statistic as a partition, and
:func:`stable_argsort` the same permutation as ``np.argsort(kind="mergesort")`` (a stable
sort has only one answer). Values are compared with ``<``; NaN is not expected.

Without numba (or with ``PYSDCMICRO_NO_NUMBA``) the same source runs as plain Python.
"""

from __future__ import annotations

import numpy as np

from ._compile import njit

__all__ = ["kth_smallest", "stable_argsort"]


@njit(cache=True, nogil=True)
def kth_smallest(vals, n, kth):
    """The ``kth`` smallest (1-based) of ``vals[:n]``, as ``np.partition(vals[:n], kth - 1)[kth - 1]``.

    Quickselect on a copy with a median-of-three pivot and a three-way split, so that runs
    of equal values (tie-heavy data) cost one pass, not quadratic time."""
    a = vals[:n].copy()
    lo = 0
    hi = n - 1
    t = kth - 1
    while lo < hi:
        mid = lo + (hi - lo) // 2
        x, y, z = a[lo], a[mid], a[hi]
        if x < y:
            p = y if y < z else (z if x < z else x)
        else:
            p = x if x < z else (z if y < z else y)
        # a[lo:lt] < p, a[lt:i] == p, a[gt+1:hi+1] > p
        lt = lo
        i = lo
        gt = hi
        while i <= gt:
            v = a[i]
            if v < p:
                a[i] = a[lt]
                a[lt] = v
                lt += 1
                i += 1
            elif p < v:
                a[i] = a[gt]
                a[gt] = v
                gt -= 1
            else:
                i += 1
        if t < lt:
            hi = lt - 1
        elif t > gt:
            lo = gt + 1
        else:
            return p
    return a[t]


@njit(cache=True, nogil=True)
def stable_argsort(keys, n):
    """The permutation that sorts ``keys[:n]`` ascending, equal keys in their order
    (``np.argsort(keys[:n], kind="mergesort")``): bottom-up merge sort, insertion sort on
    runs of 16."""
    idx = np.empty(n, dtype=np.int64)
    for i in range(n):
        idx[i] = i
    run = 16
    for s in range(0, n, run):
        e = min(s + run, n)
        for i in range(s + 1, e):
            j = idx[i]
            v = keys[j]
            q = i - 1
            while q >= s and v < keys[idx[q]]:
                idx[q + 1] = idx[q]
                q -= 1
            idx[q + 1] = j
    if n <= run:
        return idx
    buf = np.empty(n, dtype=np.int64)
    width = run
    src = idx
    dst = buf
    while width < n:
        for s in range(0, n, 2 * width):
            m = min(s + width, n)
            e = min(s + 2 * width, n)
            i = s
            j = m
            o = s
            while i < m and j < e:
                if keys[src[j]] < keys[src[i]]:
                    dst[o] = src[j]
                    j += 1
                else:
                    dst[o] = src[i]
                    i += 1
                o += 1
            while i < m:
                dst[o] = src[i]
                i += 1
                o += 1
            while j < e:
                dst[o] = src[j]
                j += 1
                o += 1
        src, dst = dst, src
        width *= 2
    return src
