"""Merging the improvements of several partitions of the same records into one.

Two partitions A (the base) and B of the same records differ on the connected components of
the graph whose nodes are the groups of A and of B, with an edge wherever a group of A and a
group of B share a record. The records of a component are a union of whole groups of A and
also a union of whole groups of B, so B's groups can replace A's on them: every group of the
result is a group of A or of B, and the result is a k-partition when both are. The SSE is a
sum over groups, so such a replacement changes it by exactly B's SSE on the component minus
A's. Components of different candidates that share no record can be replaced together.

This is what turns several independent searches from one start (the restart chains of
``auto``, one per process) into more than the best of them: each chain improves a few
regions of the partition, mostly different ones, and the improvements of all chains add up.
The merge is greedy (the most improving component first, then every one that shares no
record with those taken); it is never worse than the base, and the caller keeps the best
single candidate too.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from .._partition import canonical_labels, sse

__all__ = ["group_sse", "difference_components", "merge_improvements"]


def group_sse(Z: np.ndarray, labels: np.ndarray, n_groups: int | None = None) -> np.ndarray:
    """The SSE of every group of ``labels`` (group numbers 0..g-1), in O(n d)."""
    g = int(labels.max()) + 1 if n_groups is None else n_groups
    counts = np.bincount(labels, minlength=g).astype(np.float64)
    out = np.bincount(labels, weights=np.einsum("ij,ij->i", Z, Z), minlength=g)
    for j in range(Z.shape[1]):
        s = np.bincount(labels, weights=Z[:, j], minlength=g)
        out -= s * s / np.maximum(counts, 1.0)
    return np.maximum(out, 0.0)


def difference_components(base: np.ndarray, other: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The components where two partitions differ (module docstring).

    ``base`` and ``other`` are group numbers 0..ga-1 and 0..gb-1 of the same records.
    Returns ``(of_record, of_base_group, of_other_group)``: each record's component, and each
    group's. A component holding one group of each, with the same records, is where the two
    partitions agree."""
    n = base.size
    ga, gb = int(base.max()) + 1, int(other.max()) + 1
    graph = coo_matrix((np.ones(n, dtype=np.int8), (base, ga + other)), shape=(ga + gb, ga + gb))
    _, comp = connected_components(graph, directed=False)
    return comp[base], comp[:ga], comp[ga:]


def merge_improvements(Z: np.ndarray, base: np.ndarray, candidates: list[np.ndarray],
                       base_sse: float | None = None) -> tuple[np.ndarray, float, dict]:
    """``base`` with the improving components of ``candidates`` replaced (greedy, disjoint).

    Parameters
    ----------
    Z : ndarray of shape (n, d)
        The standardized records.
    base : ndarray of shape (n,)
        The partition to improve (group numbers).
    candidates : list of ndarray of shape (n,)
        Other partitions of the same records.
    base_sse : float, optional
        ``sse(Z, base)``, if known.

    Returns
    -------
    labels : ndarray of shape (n,)
        The merged partition (canonical group numbers). Every group is a group of ``base`` or
        of a candidate.
    value : float
        Its SSE, computed from the merged labels.
    info : dict
        ``components`` (the improving components found), ``applied`` (those taken),
        ``from_candidates`` (how many candidates gave at least one).
    """
    base = canonical_labels(np.asarray(base))
    base_groups = np.ascontiguousarray(base, dtype=np.int64)
    sse_base = group_sse(Z, base_groups)
    total = float(sse_base.sum()) if base_sse is None else float(base_sse)
    tol = 1e-9 * max(1.0, total)
    offers = []  # (delta, candidate, component)
    prepared = []
    for c, cand in enumerate(candidates):
        other = np.ascontiguousarray(canonical_labels(np.asarray(cand)), dtype=np.int64)
        of_record, of_base, of_other = difference_components(base_groups, other)
        n_comp = int(of_record.max()) + 1
        delta = (np.bincount(of_other, weights=group_sse(Z, other), minlength=n_comp)
                 - np.bincount(of_base, weights=sse_base, minlength=n_comp))
        improving = np.flatnonzero(delta < -tol)
        prepared.append((other, of_record))
        offers.extend((float(delta[i]), c, int(i)) for i in improving)
    offers.sort()
    labels = base_groups.copy()
    used = np.zeros(base.size, dtype=bool)
    order: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    next_group = int(base_groups.max()) + 1
    applied, sources = 0, set()
    for _, c, comp in offers:
        if c not in order:  # each candidate's records sorted by component once: O(n log n)
            of_record = prepared[c][1]
            idx = np.argsort(of_record, kind="stable")
            order[c] = (idx, np.searchsorted(of_record[idx], np.arange(of_record.max() + 2)))
        idx, starts = order[c]
        rows = idx[starts[comp]:starts[comp + 1]]
        if used[rows].any():
            continue
        used[rows] = True
        new = prepared[c][0][rows]
        labels[rows] = new + next_group
        next_group += int(new.max()) + 1
        applied += 1
        sources.add(c)
    merged = canonical_labels(labels)
    info = {"components": len(offers), "applied": applied, "from_candidates": len(sources)}
    return merged, sse(Z, merged), info
