"""Blocks of near records: recursive principal-axis bisection, and repair windows.

Never a random split. A set of ``m`` records larger than the block size is cut by the
hyperplane orthogonal to its first principal axis (the top eigenvector of its covariance
matrix) at the position that gives the left side a multiple of ``k`` records, so every block
but at most one per root has a size divisible by ``k`` and fixed-size methods such as MDAV
fill it with groups of exactly ``k``. A set is only cut when both sides keep at least ``2k``
records, so no block is ever left too small to hold a valid group.

Time O(n d^2 log(n / B)) for n records of d variables and block size B; memory O(n) for the
index arrays plus one copy of the records, reordered at every cut so that each set's rows
are contiguous (reading a slice is several times faster than gathering scattered rows).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["principal_axis", "principal_blocks", "iter_principal_blocks", "block_sizes", "group_windows"]

_CHUNK = 1 << 16


def principal_axis(Z: np.ndarray, rows: np.ndarray | None = None,
                   weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Mean and first principal axis (unit vector) of the rows ``rows`` of ``Z``.

    ``weights`` (one per selected row) give a weighted mean and covariance. The axis is the
    eigenvector of the largest eigenvalue, signed so that its largest-magnitude component is
    positive (a deterministic choice). Rows are read in chunks: O(chunk d) extra memory.

    Examples
    --------
    >>> Z = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 3.1]])
    >>> mean, axis = principal_axis(Z)
    >>> np.round(axis, 2).tolist()
    [0.7, 0.72]
    """
    d = Z.shape[1]
    m = Z.shape[0] if rows is None else rows.size

    def chunk(start: int) -> np.ndarray:  # all rows: a view, no copy (the same numbers)
        return Z[start:start + _CHUNK] if rows is None else Z[rows[start:start + _CHUNK]]

    total_w = float(m) if weights is None else float(np.sum(weights))
    s = np.zeros(d)
    for start in range(0, m, _CHUNK):
        X = chunk(start)
        s += X.sum(axis=0) if weights is None else weights[start:start + _CHUNK] @ X
    mean = s / total_w
    cov = np.zeros((d, d))
    for start in range(0, m, _CHUNK):
        X = chunk(start) - mean
        if weights is None:
            cov += X.T @ X
        else:
            cov += (X * weights[start:start + _CHUNK, None]).T @ X
    _, vectors = np.linalg.eigh(cov)
    axis = vectors[:, -1]
    if axis[np.argmax(np.abs(axis))] < 0:
        axis = -axis
    return mean, axis


def _split_size(m: int, block_size: int, k: int) -> int:
    """Records on the lower side of a cut of ``m`` records.

    ``m`` records make ``L = ceil(m / B)`` blocks, B the largest multiple of k up to the
    block size, ``L // 2`` of them on the lower side: its size is the multiple of k nearest
    to ``m (L // 2) / L`` that still lets each side fit its blocks (so no extra block
    appears), else the nearest multiple of k; both sides keep at least 2k records.
    """
    block_size = k * max(1, block_size // k)
    leaves = math.ceil(m / block_size)
    lower = leaves // 2
    target = m * lower / leaves
    lo = max(2 * k, m - (leaves - lower) * block_size)
    hi = min(m - 2 * k, lower * block_size)
    best = k * int(round(target / k))
    if not lo <= best <= hi:
        inside = [x for x in (k * math.ceil(lo / k), k * (hi // k)) if lo <= x <= hi]
        if inside:
            best = min(inside, key=lambda x: abs(x - target))
    return min(max(best, 2 * k), m - 2 * k)


def principal_blocks(Z: np.ndarray, k: int, block_size: int,
                     roots: list[np.ndarray] | None = None) -> list[np.ndarray]:
    """Split the records into blocks of at most about ``block_size`` near records.

    Parameters
    ----------
    Z : ndarray of shape (n, d)
        Records (standardized).
    k : int
        Group size; a cut leaves at least ``2k`` records on each side.
    block_size : int
        Largest block wanted (values below ``2k`` act as ``2k``). A set of more records is
        cut in two; ``ceil(m / block_size)`` blocks come out of ``m`` records, of nearly
        equal sizes.
    roots : list of index arrays, optional
        Sets never mixed (strata); default one root holding every record.

    Returns
    -------
    list of ndarray
        Row positions of each block, ascending within a block; blocks of one root are
        contiguous in the list, in the order of the roots.

    Examples
    --------
    >>> Z = np.array([[float(i), 0.0] for i in range(12)])
    >>> [b.tolist() for b in principal_blocks(Z, 2, 6)]
    [[0, 1, 2, 3, 4, 5], [6, 7, 8, 9, 10, 11]]
    """
    return list(iter_principal_blocks(Z, k, block_size, roots))


def block_sizes(m: int, k: int, block_size: int) -> list[int]:
    """The sizes of the blocks :func:`principal_blocks` makes of ``m`` records, in order.

    Every cut's position depends on the number of records only (never on their values), so
    the blocks' count and sizes are known before the data are read.

    Examples
    --------
    >>> block_sizes(12, 2, 6)
    [6, 6]
    """
    block_size = max(int(block_size), 2 * k)
    out: list[int] = []
    stack = [int(m)]
    while stack:
        m = stack.pop()
        if m <= block_size or m < 4 * k:
            out.append(m)
            continue
        left = _split_size(m, block_size, k)
        stack.append(m - left)
        stack.append(left)
    return out


def iter_principal_blocks(Z: np.ndarray, k: int, block_size: int, roots: list[np.ndarray] | None = None):
    """:func:`principal_blocks` one block at a time (the same blocks in the same order), so
    that the first blocks can be solved while the rest are still being split."""
    block_size = max(int(block_size), 2 * k)
    if roots is None:
        roots = [np.arange(Z.shape[0])]
    for root in roots:
        root = np.asarray(root, dtype=np.intp)
        if root.size <= block_size or root.size < 4 * k:
            yield np.sort(root)
            continue
        # The rows of each set are kept contiguous in W (a copy of the root's records,
        # reordered at each cut in the same order as the set's row positions): the axis and
        # the projection read a slice instead of gathering the rows three times per level.
        # The same numbers in the same order as gathering them, so the same blocks.
        W = np.array(Z[root], dtype=np.float64, order="C")
        stack = [(0, root)]
        while stack:
            lo, rows = stack.pop()
            m = rows.size
            if m <= block_size or m < 4 * k:
                yield np.sort(rows)
                continue
            part_W = W[lo:lo + m]
            mean, axis = principal_axis(part_W)
            proj = np.empty(m)
            for start in range(0, m, _CHUNK):
                proj[start:start + _CHUNK] = part_W[start:start + _CHUNK] @ axis
            left = _split_size(m, block_size, k)
            part = np.argpartition(proj, left - 1)
            part_W[:] = part_W[part]
            rows = rows[part]
            # Depth first, lower side first: blocks come out in order along the axes.
            stack.append((lo + left, rows[left:]))
            stack.append((lo, rows[:left]))
            del proj, part, rows, part_W
        del W


def group_windows(centroids: np.ndarray, sizes: np.ndarray, window_size: int,
                  quantile: float = 0.5) -> list[np.ndarray]:
    """Tile groups into windows of at most about ``window_size`` records.

    Recursive weighted principal-axis bisection of the group centroids (weights = group
    sizes); each cut puts the fraction ``quantile`` of the records on its lower side. Cutting
    at other quantiles than the blocks' medians places the window borders away from the
    block borders, so each block border runs through the inside of windows.

    Returns a list of arrays of group indices (every group in exactly one window).

    Examples
    --------
    >>> C = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> [w.tolist() for w in group_windows(C, np.array([3, 3, 3, 3]), 6)]
    [[0, 1], [2, 3]]
    """
    g = centroids.shape[0]
    out: list[np.ndarray] = []
    # As in iter_principal_blocks: each set's centroids and weights kept contiguous (copies
    # reordered at every cut), so the axis and the projection read slices; the same numbers
    # in the same order as gathering them, so the same windows.
    W = np.array(centroids, dtype=np.float64, order="C")
    wt = np.asarray(sizes)[:g].astype(np.float64)
    stack = [(0, np.arange(g))]
    while stack:
        lo, ids = stack.pop()
        m = ids.size
        total = int(wt[lo:lo + m].sum())
        if total <= window_size or m < 2:
            out.append(ids)
            continue
        part_W, part_w = W[lo:lo + m], wt[lo:lo + m]
        _, axis = principal_axis(part_W, weights=part_w)
        proj = part_W @ axis
        order = np.argsort(proj, kind="stable")
        part_W[:] = part_W[order]
        part_w[:] = part_w[order]
        ids = ids[order]
        cum = np.cumsum(part_w)
        cut = int(np.searchsorted(cum, quantile * total)) + 1
        cut = min(max(cut, 1), m - 1)
        stack.append((lo + cut, ids[cut:]))
        stack.append((lo, ids[:cut]))
    return out
