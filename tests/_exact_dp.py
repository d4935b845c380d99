"""Exact minimum SSE by dynamic programming over subsets (n <= 16), for the tests of
mu-Approx against the small simulated sets of Domingo-Ferrer, Sebe, Solanas 2008 (paper 002,
Tables 6-8, n = 16, d = 13), where enumerating partitions (tests/_helpers.py) is too slow.

f(S) = min over groups G of S holding the lowest record of S, k <= |G| <= 2k-1, of
SSE(G) + f(S - G); f(empty) = 0. Group costs of all 2^n subsets come from running sums,
SSE(G) = sum |z|^2 - |sum z|^2 / |G|. Time O(n 2^n d + sum_S C(|S|-1, k-1..2k-2)), about a
second at n = 16 and memory O(2^n d). Checked against ``brute_force_optimum`` for n <= 12.
"""

from __future__ import annotations

import numpy as np


def exact_optimum_dp(Z: np.ndarray, k: int) -> float:
    Z = np.asarray(Z, dtype=float)
    n, d = Z.shape
    assert n <= 18, "2^n states"
    N = 1 << n
    S1 = np.zeros((N, d))
    S2 = np.zeros(N)
    cnt = np.zeros(N, dtype=np.int64)
    q = (Z * Z).sum(axis=1)
    for i in range(n):
        b = 1 << i
        S1[b:2 * b] = S1[:b] + Z[i]
        S2[b:2 * b] = S2[:b] + q[i]
        cnt[b:2 * b] = cnt[:b] + 1
    with np.errstate(invalid="ignore", divide="ignore"):
        cost = S2 - (S1 * S1).sum(axis=1) / cnt
    cost[(cnt < k) | (cnt > 2 * k - 1)] = np.inf
    # For m other records: the 0/1 patterns choosing k-1..2k-2 of them.
    patterns = {}
    for m in range(n):
        r = np.arange(1 << m)
        ones = np.zeros(r.size, dtype=np.int64)
        for j in range(m):
            ones += (r >> j) & 1
        keep = r[(ones >= k - 1) & (ones <= 2 * k - 2)]
        patterns[m] = (keep[:, None] >> np.arange(m)) & 1
    f = np.full(N, np.inf)
    f[0] = 0.0
    for S in np.argsort(cnt, kind="stable")[1:].tolist():
        low = S & -S
        bits = [j for j in range(n) if (S ^ low) >> j & 1]
        B = patterns[len(bits)]
        if not B.shape[0]:
            continue
        T = (B @ (1 << np.array(bits, dtype=np.int64)) if bits else np.zeros(B.shape[0], np.int64)) + low
        f[S] = (cost[T] + f[S ^ T]).min()
    return float(max(f[N - 1], 0.0))
