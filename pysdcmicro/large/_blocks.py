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
from typing import Any

import numpy as np

__all__ = ["principal_axis", "principal_blocks", "iter_principal_blocks", "split_blocks", "block_sizes",
           "group_windows"]

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


def _thread_count(cells: int, threads: int | None) -> int:
    if threads is not None:
        return max(1, int(threads))
    from .._threads import MAX_THREADS, THREAD_CELLS, _cores

    return min(_cores(), MAX_THREADS) if cells >= THREAD_CELLS else 1


def _leaves(roots: list, cut) -> Any:
    """The leaves ``(key, node)`` of bisection trees, depth first, lower side first.
    ``cut(key, node)`` returns None for a leaf, else its two children ``(key, node)``."""
    stack = list(reversed(roots))
    while stack:
        key, node = stack.pop()
        children = cut(key, node)
        if children is None:
            yield key, node
        else:
            stack.append(children[1])
            stack.append(children[0])


def _leaves_threaded(roots: list, cut, threads: int, emit, stopped=None, first_alone: bool = False) -> None:
    """:func:`_leaves` on ``threads`` threads: ``emit(key, node)`` for each leaf, from the
    thread that found it. Sibling subtrees are cut at the same time (numpy releases the GIL
    in the large array operations of a cut); the node of smallest key is cut first. With
    ``first_alone``, one thread cuts until the first leaf is out, so that it comes as early
    as on one thread (the cuts are memory-bound: threads in parallel slow each other down).
    Returns when every leaf is emitted, or when ``stopped()`` is true; an exception of a cut
    is raised here."""
    import heapq
    import threading

    heap = [(key, i, node) for i, (key, node) in enumerate(roots)]
    heapq.heapify(heap)
    state = {"busy": 0, "seq": len(heap), "error": None, "first": not first_alone}
    cond = threading.Condition()

    def work(helper: bool = True) -> None:
        while True:
            with cond:
                while True:
                    if state["error"] is not None or (stopped is not None and stopped()) \
                            or (not heap and not state["busy"]):  # stopped, failed or done
                        cond.notify_all()
                        return
                    if heap and (state["first"] or not helper):
                        break
                    cond.wait()
                key, _, node = heapq.heappop(heap)
                state["busy"] += 1
            try:
                children = cut(key, node)
                if children is None:
                    emit(key, node)
                    state["first"] = True
            except BaseException as exc:  # re-raised in the calling thread
                children = None
                with cond:
                    state["error"] = state["error"] or exc
            with cond:
                state["busy"] -= 1
                for child_key, child in children or ():
                    heapq.heappush(heap, (child_key, state["seq"], child))
                    state["seq"] += 1
                cond.notify_all()

    from ._executors import blas_threads

    helpers = [threading.Thread(target=work, daemon=True, name="pysdcmicro-bisect") for _ in range(threads - 1)]
    with blas_threads(1):  # the threads are the parallelism: BLAS's own threads would oversubscribe
        for t in helpers:
            t.start()
        work(helper=False)
        for t in helpers:
            t.join()
    if state["error"] is not None:
        raise state["error"]


def _block_tree(Z: np.ndarray, k: int, block_size: int, roots: list[np.ndarray] | None):
    """The split's first nodes ``(first block index, (offset, rows))``, its ``cut``, and the
    root blocks that need no cut. The rows of each node are kept contiguous in one copy W of
    the records to cut (reordered at each cut in the same order as the node's row positions):
    the axis and the projection read a slice instead of gathering the rows three times per
    level. The same numbers in the same order as gathering them, so the same blocks."""
    block_size = max(int(block_size), 2 * k)
    if roots is None:
        roots = [np.arange(Z.shape[0])]
    roots = [np.asarray(root, dtype=np.intp) for root in roots]
    whole = [root.size <= block_size or root.size < 4 * k for root in roots]
    cut_rows = [root for root, w in zip(roots, whole) if not w]
    W = np.array(Z[np.concatenate(cut_rows)] if len(cut_rows) > 1 else Z[cut_rows[0]], dtype=np.float64,
                 order="C") if cut_rows else None
    nodes, offset, first = [], 0, 0
    for root, w in zip(roots, whole):
        nodes.append((first, (None if w else offset, root)))
        first += 1 if w else len(block_sizes(root.size, k, block_size))
        offset += 0 if w else root.size

    def cut(first: int, node: tuple):
        lo, rows = node
        m = rows.size
        if lo is None or m <= block_size or m < 4 * k:
            return None
        part_W = W[lo:lo + m]
        _, axis = principal_axis(part_W)
        proj = np.empty(m)
        for start in range(0, m, _CHUNK):
            proj[start:start + _CHUNK] = part_W[start:start + _CHUNK] @ axis
        left = _split_size(m, block_size, k)
        part = np.argpartition(proj, left - 1)
        part_W[:] = part_W[part]
        rows = rows[part]
        right_first = first + len(block_sizes(left, k, block_size))
        # lower side first: blocks come out in order along the axes
        return (first, (lo, rows[:left])), (right_first, (lo + left, rows[left:]))

    return nodes, cut


def iter_principal_blocks(Z: np.ndarray, k: int, block_size: int, roots: list[np.ndarray] | None = None):
    """:func:`principal_blocks` one block at a time (the same blocks in the same order), so
    that the first blocks can be solved while the rest are still being split."""
    nodes, cut = _block_tree(Z, k, block_size, roots)
    for _, (_, rows) in _leaves(nodes, cut):
        yield np.sort(rows)


def split_blocks(Z: np.ndarray, k: int, block_size: int, roots: list[np.ndarray] | None, emit,
                 threads: int | None = None, stopped=None) -> None:
    """The blocks of :func:`principal_blocks`, cut on ``threads`` threads (default: several
    for large data, :mod:`pysdcmicro._threads`): ``emit(i, rows)`` for block ``i`` as soon as
    it is cut, from any of the threads and in any order. Stops early when ``stopped()``."""
    nodes, cut = _block_tree(Z, k, block_size, roots)
    count = _thread_count(Z.shape[0] * Z.shape[1], threads)
    if count <= 1:
        for i, (_, (_, rows)) in enumerate(_leaves(nodes, cut)):
            if stopped is not None and stopped():
                return
            emit(i, np.sort(rows))
        return
    _leaves_threaded(nodes, cut, count, lambda i, node: emit(i, np.sort(node[1])), stopped, first_alone=True)


def group_windows(centroids: np.ndarray, sizes: np.ndarray, window_size: int,
                  quantile: float = 0.5, threads: int | None = None) -> list[np.ndarray]:
    """Tile groups into windows of at most about ``window_size`` records.

    Recursive weighted principal-axis bisection of the group centroids (weights = group
    sizes); each cut puts the fraction ``quantile`` of the records on its lower side. Cutting
    at other quantiles than the blocks' medians places the window borders away from the
    block borders, so each block border runs through the inside of windows.

    Returns a list of arrays of group indices (every group in exactly one window), in
    depth-first order. ``threads``: cut sibling sets at the same time on that many threads
    (default: several for many groups, :mod:`pysdcmicro._threads`); the same windows.

    Examples
    --------
    >>> C = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> [w.tolist() for w in group_windows(C, np.array([3, 3, 3, 3]), 6)]
    [[0, 1], [2, 3]]
    """
    g = centroids.shape[0]
    # As in the split: each set's centroids and weights kept contiguous (copies reordered at
    # every cut), so the axis and the projection read slices; the same numbers in the same
    # order as gathering them, so the same windows. A leaf's key is its path from the root
    # (0 = lower side), so sorted keys are the depth-first order, whatever the threads did.
    W = np.array(centroids, dtype=np.float64, order="C")
    wt = np.asarray(sizes)[:g].astype(np.float64)

    def cut(path: tuple, node: tuple):
        lo, ids = node
        m = ids.size
        total = int(wt[lo:lo + m].sum())
        if total <= window_size or m < 2:
            return None
        part_W, part_w = W[lo:lo + m], wt[lo:lo + m]
        _, axis = principal_axis(part_W, weights=part_w)
        proj = part_W @ axis
        order = np.argsort(proj, kind="stable")
        part_W[:] = part_W[order]
        part_w[:] = part_w[order]
        ids = ids[order]
        cum = np.cumsum(part_w)
        cut_at = int(np.searchsorted(cum, quantile * total)) + 1
        cut_at = min(max(cut_at, 1), m - 1)
        return (path + (0,), (lo, ids[:cut_at])), (path + (1,), (lo + cut_at, ids[cut_at:]))

    roots = [((), (0, np.arange(g)))]
    count = _thread_count(g * 2 * W.shape[1], threads)
    if count <= 1:
        return [ids for _, (_, ids) in _leaves(roots, cut)]
    found: list = []
    _leaves_threaded(roots, cut, count, lambda path, node: found.append((path, node[1])))
    return [ids for _, ids in sorted(found, key=lambda item: item[0])]
