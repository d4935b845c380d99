"""Compiled (numba) kernels of the Hansen-Mukherjee DP; imported only when numba is
installed. Same arithmetic, in the same order, as the numpy path of
:mod:`._hansen_mukherjee` (Welford run costs, double-double path costs, exact-difference
comparison, smallest run size on ties), so both return bitwise the same partition."""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["dp_linear", "dp_circular", "backtrack"]


@njit(cache=True, nogil=True)
def _choose(H, L, K):
    """First index of the least double-double H + L (exact differences to the first
    argmin of H); -1 when none is finite."""
    ref = 0
    for t in range(1, K):
        if H[t] < H[ref]:
            ref = t
    hr = H[ref]
    if not np.isfinite(hr):
        return -1
    lr = L[ref]
    arg = 0
    best = np.inf
    for t in range(K):
        if np.isfinite(H[t]):
            D = (H[t] - hr) + (L[t] - lr)
        else:
            D = np.inf
        if D < best:
            best = D
            arg = t
    return arg


@njit(cache=True, nogil=True)
def _add(ph, pl, cost):
    sh = ph + cost
    bb = sh - ph
    err = (ph - (sh - bb)) + (cost - bb)
    sl = pl + err
    h = sh + sl
    lo = sl - (h - sh)
    if not np.isfinite(h):
        return np.inf, 0.0
    return h, lo


@njit(cache=True, nogil=True)
def dp_linear(Zo, k, m):
    n, d = Zo.shape
    K = m - k + 1
    hi = np.full(n + 1, np.inf)
    lo = np.zeros(n + 1)
    choice = np.zeros(n + 1, dtype=np.int64)
    hi[0] = 0.0
    mean = np.empty(d)
    H = np.empty(K)
    L = np.empty(K)
    for j in range(k, n + 1):
        for t in range(K):
            H[t] = np.inf
            L[t] = 0.0
        for t in range(d):
            mean[t] = Zo[j - 1, t]
        M2 = 0.0
        if k <= 1:
            H[1 - k], L[1 - k] = _add(hi[j - 1], lo[j - 1], 0.0)
        for s in range(2, m + 1):
            i = j - s
            if i < 0:
                break
            inc = 0.0
            for t in range(d):
                x = Zo[i, t]
                delta = x - mean[t]
                mean[t] += delta / s
                if t == 0:
                    inc = delta * (x - mean[t])
                else:
                    inc += delta * (x - mean[t])
            M2 += inc
            if s >= k:
                cost = M2 if M2 > 0.0 else 0.0
                if np.isfinite(hi[i]):
                    H[s - k], L[s - k] = _add(hi[i], lo[i], cost)
        arg = _choose(H, L, K)
        if arg >= 0:
            hi[j] = H[arg]
            lo[j] = L[arg]
            choice[j] = k + arg
    return hi, lo, choice


@njit(cache=True, nogil=True)
def dp_circular(C, n, k, R):
    K = C.shape[0]
    fh = np.full(R, np.inf)
    fl = np.zeros(R)
    choice = np.zeros((R, n + 1), dtype=np.int64)
    hi = np.empty(n + 1)
    lo = np.empty(n + 1)
    H = np.empty(K)
    L = np.empty(K)
    for r in range(R):
        hi[:] = np.inf
        lo[:] = 0.0
        hi[0] = 0.0
        for j in range(k, n + 1):
            for t in range(K):
                H[t] = np.inf
                L[t] = 0.0
                i = j - (k + t)
                if i >= 0 and np.isfinite(hi[i]):
                    H[t], L[t] = _add(hi[i], lo[i], C[t, r + j])
            arg = _choose(H, L, K)
            if arg >= 0:
                hi[j] = H[arg]
                lo[j] = L[arg]
                choice[r, j] = k + arg
        fh[r] = hi[n]
        fl[r] = lo[n]
    return fh, fl, choice


@njit(cache=True, nogil=True)
def backtrack(choice, n):
    """Run sizes in order, from the DP's choices (the pointer chase, compiled)."""
    runs = np.empty(n, dtype=np.int64)
    cnt = 0
    pos = n
    while pos > 0:
        s = choice[pos]
        runs[cnt] = s
        cnt += 1
        pos -= s
    return runs[:cnt][::-1].copy()
