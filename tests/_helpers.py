"""Independent reference computations for the tests (deliberately naive and slow)."""

from __future__ import annotations

import itertools
import math

import numpy as np


def naive_sse(Z: np.ndarray, labels) -> float:
    """SSE by the pairwise formula SSE_C = 1/(2|C|) sum_{i,j in C} |z_i - z_j|^2
    (Castro et al. 2022, eq. 4): no centroid is computed, so it checks the centroid code."""
    Z = np.asarray(Z, dtype=float)
    labels = np.asarray(labels)
    total = 0.0
    for g in np.unique(labels):
        G = Z[labels == g]
        diff = G[:, None, :] - G[None, :, :]
        total += float((diff ** 2).sum()) / (2 * len(G))
    return total


def naive_sst(Z: np.ndarray) -> float:
    Z = np.asarray(Z, dtype=float)
    return float(sum(((row - Z.mean(axis=0)) ** 2).sum() for row in Z))


def zscore(X: np.ndarray) -> np.ndarray:
    """z-scores with ddof=1, written out without the library; constant columns -> 0."""
    X = np.asarray(X, dtype=float)
    out = np.zeros_like(X)
    for j in range(X.shape[1]):
        col = X[:, j]
        sd = math.sqrt(sum((v - col.mean()) ** 2 for v in col) / (len(col) - 1))
        if sd > 0 and not np.all(col == col[0]):
            out[:, j] = (col - col.mean()) / sd
    return out


def k_partitions(n: int, k: int, max_size: int | None = None):
    """Every partition of range(n) into blocks of size k..max_size (default 2k-1).

    Blocks of 2k or more are never needed for an optimum: splitting one never raises SSE.
    """
    max_size = 2 * k - 1 if max_size is None else max_size

    def rec(rest):
        if not rest:
            yield []
            return
        first, others = rest[0], rest[1:]
        for size in range(k, min(max_size, len(rest)) + 1):
            for mates in itertools.combinations(others, size - 1):
                block = (first,) + mates
                remaining = [x for x in others if x not in mates]
                if remaining and len(remaining) < k:
                    continue
                for tail in rec(remaining):
                    yield [block] + tail

    yield from rec(list(range(n)))


def brute_force_optimum(Z: np.ndarray, k: int) -> tuple[float, list]:
    """Exact minimum SSE over all k-partitions (n <= 12)."""
    Z = np.asarray(Z, dtype=float)
    n = Z.shape[0]
    assert n <= 13, "brute force is for tiny inputs only"
    cache: dict = {}

    def cost(block):
        if block not in cache:
            G = Z[list(block)]
            cache[block] = float(((G - G.mean(axis=0)) ** 2).sum())
        return cache[block]

    best, best_p = math.inf, None
    for part in k_partitions(n, k):
        s = sum(cost(b) for b in part)
        if s < best:
            best, best_p = s, part
    return best, best_p


def assert_k_partition(labels, n: int, k: int, max_size: int | None = None) -> None:
    """Every record in exactly one group; every group has k..max_size records."""
    labels = np.asarray(labels)
    assert labels.shape == (n,), f"labels shape {labels.shape} != ({n},)"
    assert np.issubdtype(labels.dtype, np.integer)
    _, counts = np.unique(labels, return_counts=True)
    assert counts.min() >= k, f"a group has {counts.min()} < k={k} records"
    if max_size is not None:
        assert counts.max() <= max_size, f"a group has {counts.max()} > {max_size} records"


def partitions_of(res) -> list:
    """``(column positions among res.variables, labels)`` of each partition of a result:
    one over every variable, or, for a method that runs once per variable (``onedims``),
    one per microaggregated column (its release is k-anonymous per column, not jointly)."""
    import pysdcmicro

    groups = res.info.get("variable_groups")
    if not groups or not pysdcmicro.methods()[res.settings["method"]].per_variable:
        return [(list(range(len(res.variables))), np.asarray(res.labels))]
    index = {str(v): j for j, v in enumerate(res.variables)}
    return [([index[v] for v in g["variables"]], np.asarray(g["labels"])) for g in groups]
