"""Optimal grouping of records along a fixed order (Hansen and Mukherjee 2003).

Given an order of the records, the best partition into *runs* of consecutive records of
sizes k..2k-1 is a shortest path in the DAG whose nodes are the positions 0..n and whose
edge (i, j), k <= j - i <= 2k-1, is the run i..j-1 weighted by its SSE in the full
multivariate space. For 1-D data sorted by value this is the optimal univariate
microaggregation.

The run costs come from prefix sums of x and |x|^2:
``SSE(i, j) = (Q[j] - Q[i]) - |P[j] - P[i]|^2 / (j - i)``, so the whole DP takes
O(n k d) time and O(n (d + k)) memory; the O(n^2) graph is never built. Positions are
processed k at a time: the k nodes j..j+k-1 depend only on nodes before j, which
vectorises the DP.

The circular variant (Tour2Assignment, Mortazavi and Jalili 2015) reads the order as a
tour, so the last records may join the first ones: some run boundary lies among the first
2k-1 positions, hence the best of the linear solutions over the 2k-1 rotations is optimal.
"""

from __future__ import annotations

import numpy as np

__all__ = ["optimal_runs", "run_costs", "circular_runs"]


def run_costs(Zo: np.ndarray, k: int, max_size: int | None = None) -> np.ndarray:
    """Cost matrix ``C[s - k, j]`` = SSE of the run of ``s`` records ending before position
    ``j`` (records ``j - s .. j - 1``), +inf where ``j < s``. Shape (max_size-k+1, n+1)."""
    n, d = Zo.shape
    max_size = 2 * k - 1 if max_size is None else max_size
    center = Zo.mean(axis=0) if n else np.zeros(d)
    Zc = Zo - center  # centring keeps the prefix sums small (better cancellation)
    P = np.zeros((n + 1, d))
    np.cumsum(Zc, axis=0, out=P[1:])
    Q = np.zeros(n + 1)
    np.cumsum(np.einsum("ij,ij->i", Zc, Zc), out=Q[1:])
    sizes = range(k, max_size + 1)
    C = np.full((len(sizes), n + 1), np.inf)
    for row, s in enumerate(sizes):
        if s > n:
            continue
        diff = P[s:] - P[:-s]
        cost = (Q[s:] - Q[:-s]) - np.einsum("ij,ij->i", diff, diff) / s
        C[row, s:] = np.maximum(cost, 0.0)
    return C


def _linear(C: np.ndarray, n: int, k: int) -> tuple[float, np.ndarray]:
    """Shortest path over positions 0..n with run sizes k..k+C.shape[0]-1; returns
    (cost, run sizes in order)."""
    n_sizes = C.shape[0]
    best = np.full(n + 1, np.inf)
    choice = np.zeros(n + 1, dtype=np.int64)
    best[0] = 0.0
    sizes = np.arange(k, k + n_sizes)
    j = k
    while j <= n:
        stop = min(j + k, n + 1)
        cols = np.arange(j, stop)
        # candidates[s, c] = best[cols[c] - size_s] + C[s, cols[c]]
        prev = cols[None, :] - sizes[:, None]
        valid = prev >= 0
        cand = np.where(valid, best[np.clip(prev, 0, None)] + C[:, cols], np.inf)
        arg = np.argmin(cand, axis=0)
        best[cols] = cand[arg, np.arange(cols.size)]
        choice[cols] = sizes[arg]
        j = stop
    if not np.isfinite(best[n]):
        return np.inf, np.empty(0, dtype=np.int64)
    runs = []
    pos = n
    while pos > 0:
        s = int(choice[pos])
        runs.append(s)
        pos -= s
    return float(best[n]), np.array(runs[::-1], dtype=np.int64)


def circular_runs(Zo: np.ndarray, k: int, max_size: int | None = None) -> tuple[np.ndarray, float]:
    """Best partition of the cyclic sequence ``Zo`` into runs of k..max_size consecutive
    rows (Tour2Assignment, Algorithm 5). Returns (run sizes starting at row ``shift``,
    cost) packed as ``(labels in sequence order, cost)``.

    Some run starts among the first ``max_size`` rows, so the best over those rotations is
    optimal. The rotations are solved together: one DP over the doubled sequence with the
    rotation as a vector dimension, so the Python loop has n/k steps (not (2k-1) n/k).
    Time O(n k^2 d), memory O(n k). :func:`optimal_runs` with ``circular=True`` uses it;
    tested against brute force and against the rotation-by-rotation DP.
    """
    n, d = Zo.shape
    m = 2 * k - 1 if max_size is None else max_size
    if n < 2 * k:
        G = Zo - Zo.mean(axis=0)
        return np.zeros(n, dtype=np.int64), float(np.einsum("ij,ij->", G, G))
    R = min(m, n)
    Zc = Zo - Zo.mean(axis=0)
    Zd = np.concatenate([Zc, Zc[:R - 1]])
    N = Zd.shape[0]
    Pf = np.zeros((N + 1, d))
    np.cumsum(Zd, axis=0, out=Pf[1:])
    Qf = np.zeros(N + 1)
    np.cumsum(np.einsum("ij,ij->i", Zd, Zd), out=Qf[1:])
    sizes = np.arange(k, m + 1)
    K = sizes.size
    cost = np.full((K, N + 1), np.inf)
    for row, sz in enumerate(sizes):
        diff = Pf[sz:] - Pf[:-sz]
        cost[row, sz:] = np.maximum((Qf[sz:] - Qf[:-sz]) - np.einsum("ij,ij->i", diff, diff) / sz, 0.0)
    best = np.full((R, n + 1), np.inf)
    best[:, 0] = 0.0
    choice = np.zeros((R, n + 1), dtype=np.int64)
    rot = np.arange(R)
    j = k
    while j <= n:
        stop = min(j + k, n + 1)
        cols = np.arange(j, stop)
        prev = cols[None, :] - sizes[:, None]                       # (K, c)
        valid = prev >= 0
        prevc = np.where(valid, prev, 0)
        cand = best[:, prevc]                                          # (R, K, c)
        cand = np.where(valid[None], cand, np.inf)
        cand += cost[np.arange(K)[None, :, None], rot[:, None, None] + cols[None, None, :]]
        arg = cand.argmin(axis=1)                                      # (R, c)
        best[:, cols] = np.take_along_axis(cand, arg[:, None, :], axis=1)[:, 0, :]
        choice[:, cols] = sizes[arg]
        j = stop
    finals = best[:, n]
    r = int(np.argmin(finals))
    runs = []
    pos = n
    while pos > 0:
        sz = int(choice[r, pos])
        runs.append(sz)
        pos -= sz
    runs.reverse()
    run_of = np.repeat(np.arange(len(runs), dtype=np.int64), runs)
    labels = np.empty(n, dtype=np.int64)
    labels[(np.arange(n) + r) % n] = run_of
    return labels, float(finals[r])


def optimal_runs(Z: np.ndarray, order: np.ndarray, k: int, *, circular: bool = False,
                 max_size: int | None = None) -> tuple[np.ndarray, float]:
    """Best partition of the records into runs of consecutive records of ``order``.

    Parameters
    ----------
    Z : ndarray of shape (n, d)
        Records (already scaled).
    order : ndarray of int, shape (n,)
        A permutation of ``range(n)``.
    k : int
        Minimum run size; runs have k..``max_size`` records (default 2k-1, enough for an
        optimum: a longer run can always be split without raising its SSE).
    circular : bool, default False
        Read ``order`` as a cycle (Tour2Assignment): the best of the 2k-1 rotations.

    Returns
    -------
    labels : ndarray of int64, shape (n,)
        Run index of each record (runs numbered along the order).
    sse : float
        SSE of that partition (from the prefix sums).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[1.0], [2.0], [3.0], [10.0], [11.0], [30.0], [31.0], [32.0]])
    >>> labels, cost = optimal_runs(x, np.arange(8), 2)
    >>> labels.tolist(), round(cost, 6)
    ([0, 0, 0, 1, 1, 2, 2, 2], 4.5)
    """
    order = np.asarray(order, dtype=np.int64)
    n = order.size
    max_size = 2 * k - 1 if max_size is None else max_size
    if n < k:
        raise ValueError(f"need at least k={k} records; got {n}")
    if n < 2 * k:  # a single run is the only k-partition
        labels = np.zeros(n, dtype=np.int64)
        G = Z[order]
        return labels, float(((G - G.mean(axis=0)) ** 2).sum())
    Zo = np.ascontiguousarray(Z[order])
    if circular:
        seq_labels, cost = circular_runs(Zo, k, max_size)
        labels = np.empty(n, dtype=np.int64)
        labels[order] = seq_labels
        return labels, cost
    best_cost, best_runs = _linear(run_costs(Zo, k, max_size), n, k)
    if best_runs.size == 0 or not np.isfinite(best_cost):
        raise ValueError(f"no partition of {n} records into runs of {k}..{max_size}")
    labels = np.empty(n, dtype=np.int64)
    labels[order] = np.repeat(np.arange(best_runs.size, dtype=np.int64), best_runs)
    return labels, best_cost
