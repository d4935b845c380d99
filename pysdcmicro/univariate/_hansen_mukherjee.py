"""Optimal grouping of records along a fixed order (Hansen and Mukherjee 2003).

Given an order of the records, the best partition into *runs* of consecutive records of
sizes k..2k-1 is a shortest path in the DAG whose nodes are the positions 0..n and whose
edge (i, j), k <= j - i <= 2k-1, is the run i..j-1 weighted by its SSE in the full
multivariate space. For 1-D data sorted by value this is the optimal univariate
microaggregation.

Numerics. A run's cost is computed from its own records only, by Welford's update
(the run ending before position ``j`` grows backwards one record at a time:
``delta = x - mean; mean += delta / s; M2 += delta . (x - mean)``), so its rounding error
is relative to the run's own spread, never to the size of the data set. Running sums
(``Q[j] - Q[i] - |P[j] - P[i]|^2 / s``) carry errors proportional to the prefix sums: at
n = 10^6 they exceed a typical run's cost and the DP picked a partition 5.4e-7 (relative
SSE) above the optimum. The path costs are accumulated as double-double sums (an error-free
TwoSum keeps the rounding of every addition) and candidates are compared by their exact
difference, so the DP's choices are exact up to the runs' own rounding.

Speed. With numba installed (optional, ``pip install numba``) one compiled loop computes
the costs on the fly and runs the DP: O(n k d) time, O(n) memory. Without it the same
arithmetic runs in numpy, k positions at a time (the k nodes j..j+k-1 depend only on nodes
before j), on chunks of positions so memory stays O(n + k chunk). Both give bitwise the
same partition and cost (same operations in the same order; tested).

The circular variant (Tour2Assignment, Mortazavi and Jalili 2015) reads the order as a
tour, so the last records may join the first ones: some run boundary lies among the first
2k-1 positions, hence the best of the linear solutions over the 2k-1 rotations is optimal.
"""

from __future__ import annotations

import os

import numpy as np

__all__ = ["optimal_runs", "run_costs", "circular_runs", "have_compiled_kernel"]

#: Positions per numpy chunk (memory K x _CHUNK floats).
_CHUNK = 1 << 15
#: Below this many cost evaluations (n x sizes) the numpy path is used even with numba
#: (compiling the kernel the first time costs about a second; cached afterwards).
_COMPILED_MIN_WORK = 1_000

_NB = None  # compiled kernels, or False when numba is unavailable / disabled


def _kernels():
    """The numba kernels (compiled on first use, cached on disk), or None."""
    global _NB
    if _NB is None:
        if os.environ.get("PYSDCMICRO_NO_NUMBA"):
            _NB = False
        else:
            try:
                from . import _hm_numba
                _NB = _hm_numba
            except Exception:  # numba missing or unusable: the numpy path serves
                _NB = False
    return _NB or None


def _tour_kernels():
    """The compiled circular DP and backtrack: compiled when the package was built
    (:mod:`pysdcmicro._aot`), else numba's (:func:`_kernels`), or None."""
    from .. import _aot

    return _aot.family("tour") or _kernels()


def have_compiled_kernel() -> bool:
    """True when the numba kernel of the DP is available (``pip install numba``)."""
    return _kernels() is not None


# ----------------------------------------------------------------------------- costs
def _window_costs(Zo: np.ndarray, a: int, b: int, k: int, m: int, fill: float = np.inf) -> np.ndarray:
    """``C[s - k, j - a]`` = SSE of records ``j - s .. j - 1`` for end positions ``a <= j < b``
    (Welford, backwards from record j - 1), +inf where ``j < s``. Shape (m - k + 1, b - a)."""
    n, d = Zo.shape
    J = np.arange(a, b)
    C = np.full((m - k + 1, J.size), fill)
    if J.size == 0:
        return C
    mean = Zo[np.maximum(J - 1, 0)].copy()
    M2 = np.zeros(J.size)
    if k <= 1:
        C[1 - k] = np.where(J >= 1, 0.0, fill)
    for s in range(2, m + 1):
        i = J - s
        x = Zo[np.maximum(i, 0)]
        delta = x - mean
        mean += delta / s
        dev = x - mean
        inc = delta[:, 0] * dev[:, 0]
        for t in range(1, d):
            inc += delta[:, t] * dev[:, t]
        M2 += inc
        if s >= k:
            C[s - k] = np.where(i >= 0, np.maximum(M2, 0.0), fill)
    return C


def run_costs(Zo: np.ndarray, k: int, max_size: int | None = None) -> np.ndarray:
    """Cost matrix ``C[s - k, j]`` = SSE of the run of ``s`` records ending before position
    ``j`` (records ``j - s .. j - 1``), +inf where ``j < s``. Shape (max_size-k+1, n+1).

    Each cost comes from the run's own records (Welford's update), so its error is relative
    to the run's spread, not to the data set's.
    """
    Zo = np.ascontiguousarray(Zo, dtype=np.float64)
    n = Zo.shape[0]
    max_size = 2 * k - 1 if max_size is None else max_size
    return _window_costs(Zo, 0, n + 1, k, max_size)


# ----------------------------------------------------------------------------- DP (numpy)
def _extend(ph, pl, cost):
    """Double-double ``(ph, pl) + cost`` (TwoSum, then renormalised); +inf stays +inf."""
    with np.errstate(invalid="ignore"):
        sh = ph + cost
        bb = sh - ph
        err = (ph - (sh - bb)) + (cost - bb)
        sl = pl + err
        h = sh + sl
        lo = sl - (h - sh)
    fin = np.isfinite(h)
    return np.where(fin, h, np.inf), np.where(fin, lo, 0.0)


def _pick(H, L):
    """Per column, the first row whose double-double value ``H + L`` is least (compared by
    exact differences against the row of least ``H``). Returns (row, H, L)."""
    cols = np.arange(H.shape[1])
    ref = np.argmin(H, axis=0)
    hr, lr = H[ref, cols], L[ref, cols]
    with np.errstate(invalid="ignore"):
        D = (H - hr) + (L - lr)
    D = np.where(np.isfinite(H), D, np.inf)
    arg = np.argmin(D, axis=0)
    arg = np.where(np.isfinite(hr), arg, 0)
    return arg, H[arg, cols], L[arg, cols]


_BIG = 1e300  # stands for +inf inside the numpy DP (keeps TwoSum free of inf - inf)


def _step_numpy(hp, lp, idx, cost):
    """One block of k positions: candidates ``(hp, lp)[idx] + cost`` (K x c), the first least
    by exact difference (as :func:`_pick`, with _BIG for +inf). Returns (arg, hi, lo)."""
    ph = hp[idx]
    sh = ph + cost
    bb = sh - ph
    sl = lp[idx] + ((ph - (sh - bb)) + (cost - bb))
    H = sh + sl
    L = sl - (H - sh)
    cols = np.arange(H.shape[1])
    ref = H.argmin(axis=0)
    D = (H - H[ref, cols]) + (L - L[ref, cols])
    arg = D.argmin(axis=0)
    return arg, H[arg, cols], L[arg, cols]


def _dp_numpy(Zo: np.ndarray, k: int, m: int):
    """The DP in numpy, k positions at a time, costs computed chunk by chunk. Positions are
    shifted by ``m`` in the working arrays so that ``j - s`` never goes negative."""
    n = Zo.shape[0]
    hp = np.full(n + 1 + m, _BIG)
    lp = np.zeros(n + 1 + m)
    choice = np.zeros(n + 1, dtype=np.int64)
    hp[m] = 0.0
    sizes = np.arange(k, m + 1)
    off = np.arange(k)[None, :] - sizes[:, None] + m        # (K, k)
    a = k
    while a <= n:
        b = min(a + _CHUNK, n + 1)
        C = _window_costs(Zo, a, b, k, m, fill=_BIG)
        j = a
        while j < b:
            stop = min(j + k, b)
            c = stop - j
            arg, hb, lb = _step_numpy(hp, lp, j + off[:, :c], C[:, j - a:stop - a])
            hp[j + m:stop + m] = hb
            lp[j + m:stop + m] = lb
            choice[j:stop] = np.where(hb < _BIG / 2, sizes[arg], 0)
            j = stop
        a = b
    hi = hp[m:].copy()
    lo = lp[m:].copy()
    bad = hi >= _BIG / 2
    hi[bad], lo[bad] = np.inf, 0.0
    return hi, lo, choice


def _dp(Zo: np.ndarray, k: int, m: int, compiled: bool = True):
    nb = _kernels() if compiled and Zo.shape[0] * (m - k + 1) >= _COMPILED_MIN_WORK else None
    if nb is not None:
        return nb.dp_linear(Zo, k, m)
    return _dp_numpy(Zo, k, m)


def _backtrack(choice: np.ndarray, n: int, compiled: bool = True) -> np.ndarray:
    nb = _tour_kernels() if compiled and n >= _COMPILED_MIN_WORK else None
    if nb is not None:
        return nb.backtrack(choice, n)
    runs = []
    pos = n
    while pos > 0:
        s = int(choice[pos])
        runs.append(s)
        pos -= s
    return np.array(runs[::-1], dtype=np.int64)


def _linear(C: np.ndarray, n: int, k: int) -> tuple[float, np.ndarray]:
    """Shortest path over positions 0..n with run sizes k..k+C.shape[0]-1 and the given
    cost matrix (as from :func:`run_costs`); returns (cost, run sizes in order)."""
    sizes = np.arange(k, k + C.shape[0])
    hi = np.full(n + 1, np.inf)
    lo = np.zeros(n + 1)
    choice = np.zeros(n + 1, dtype=np.int64)
    hi[0] = 0.0
    j = k
    while j <= n:
        stop = min(j + k, n + 1)
        cols = np.arange(j, stop)
        prev = cols[None, :] - sizes[:, None]
        ok = prev >= 0
        p = np.where(ok, prev, 0)
        H, L = _extend(np.where(ok, hi[p], np.inf), lo[p], C[:, cols])
        arg, hbest, lbest = _pick(H, L)
        hi[cols], lo[cols] = hbest, lbest
        choice[cols] = np.where(np.isfinite(hbest), sizes[arg], 0)
        j = stop
    if not np.isfinite(hi[n]):
        return np.inf, np.empty(0, dtype=np.int64)
    return float(hi[n]) + float(lo[n]), _backtrack(choice, n)


# ----------------------------------------------------------------------------- circular
def _circular_numpy(C: np.ndarray, n: int, k: int, R: int):
    K = C.shape[0]
    sizes = np.arange(k, k + K)
    hi = np.full((R, n + 1), np.inf)
    lo = np.zeros((R, n + 1))
    hi[:, 0] = 0.0
    choice = np.zeros((R, n + 1), dtype=np.int64)
    rot = np.arange(R)
    j = k
    while j <= n:
        stop = min(j + k, n + 1)
        cols = np.arange(j, stop)
        c = cols.size
        prev = cols[None, :] - sizes[:, None]                       # (K, c)
        ok = prev >= 0
        p = np.where(ok, prev, 0)
        ph = np.where(ok[None], hi[:, p], np.inf)                   # (R, K, c)
        cost = C[np.arange(K)[None, :, None], rot[:, None, None] + cols[None, None, :]]
        H, L = _extend(ph, lo[:, p], cost)
        # pick over the size axis, rotation by rotation (columns = (rotation, position))
        Hm = H.transpose(1, 0, 2).reshape(K, R * c)
        Lm = L.transpose(1, 0, 2).reshape(K, R * c)
        arg, hb, lb = _pick(Hm, Lm)
        hi[:, cols] = hb.reshape(R, c)
        lo[:, cols] = lb.reshape(R, c)
        choice[:, cols] = np.where(np.isfinite(hb), sizes[arg], 0).reshape(R, c)
        j = stop
    return hi[:, n], lo[:, n], choice


def circular_runs(Zo: np.ndarray, k: int, max_size: int | None = None) -> tuple[np.ndarray, float]:
    """Best partition of the cyclic sequence ``Zo`` into runs of k..max_size consecutive
    rows (Tour2Assignment, Algorithm 5). Returns (labels in sequence order, cost).

    Some run starts among the first ``max_size`` rows, so the best over those rotations is
    optimal. The rotations are solved together (numpy: one DP with the rotation as a vector
    dimension; numba: one compiled DP per rotation over the same cost matrix). Time
    O(n k^2 d), memory O(n k). :func:`optimal_runs` with ``circular=True`` uses it;
    tested against brute force and against the rotation-by-rotation DP.
    """
    Zo = np.ascontiguousarray(Zo, dtype=np.float64)
    n, d = Zo.shape
    m = 2 * k - 1 if max_size is None else max_size
    if n < 2 * k:
        G = Zo - Zo.mean(axis=0)
        return np.zeros(n, dtype=np.int64), float(np.einsum("ij,ij->", G, G))
    R = min(m, n)
    Zd = np.concatenate([Zo, Zo[:R - 1]])
    C = _window_costs(Zd, 0, Zd.shape[0] + 1, k, m)
    nb = _tour_kernels() if n * R * (m - k + 1) >= _COMPILED_MIN_WORK else None
    if nb is not None:
        fh, fl, choice = nb.dp_circular(C, n, k, R)
    else:
        fh, fl, choice = _circular_numpy(C, n, k, R)
    r, _, _ = _pick(fh[:, None], fl[:, None])
    r = int(r[0])
    runs = _backtrack(choice[r], n)
    run_of = np.repeat(np.arange(runs.size, dtype=np.int64), runs)
    labels = np.empty(n, dtype=np.int64)
    labels[(np.arange(n) + r) % n] = run_of
    return labels, float(fh[r]) + float(fl[r])


def optimal_runs(Z: np.ndarray, order: np.ndarray, k: int, *, circular: bool = False,
                 max_size: int | None = None, compiled: bool = True) -> tuple[np.ndarray, float]:
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
    compiled : bool, default True
        False: the numpy DP even where the compiled one would run (the same partition),
        for a caller that has no time to load the compiled one (linear runs only).

    Returns
    -------
    labels : ndarray of int64, shape (n,)
        Run index of each record (runs numbered along the order).
    sse : float
        SSE of that partition (sum of the runs' costs, accumulated in double-double).

    Notes
    -----
    Time O(n k d) (O(n k^2 d) circular), memory O(n d). Among partitions of equal cost the
    one whose runs are shortest from the end backwards wins (the DP takes the smallest run
    size on exact ties). With numba installed the DP runs compiled (about 10x faster at
    n = 10^6); same partition either way.

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
    Zo = np.ascontiguousarray(Z[order], dtype=np.float64)
    if circular:
        seq_labels, cost = circular_runs(Zo, k, max_size)
        labels = np.empty(n, dtype=np.int64)
        labels[order] = seq_labels
        return labels, cost
    hi, lo, choice = _dp(Zo, k, max_size, compiled)
    if not np.isfinite(hi[n]):
        raise ValueError(f"no partition of {n} records into runs of {k}..{max_size}")
    best_runs = _backtrack(choice, n, compiled)
    labels = np.empty(n, dtype=np.int64)
    labels[order] = np.repeat(np.arange(best_runs.size, dtype=np.int64), best_runs)
    return labels, float(hi[n]) + float(lo[n])
