"""Sorting-based microaggregation: records put in one order, then cut into runs of k.

The classic fixed-size methods of Defays and Nanopoulos (1993) and Domingo-Ferrer and
Mateo-Sanz (2002), under the names sdcMicro's ``microaggregation()`` gives them:

* ``simple``: the records in their row order (no sorting; a benchmark for what sorting buys);
* ``single``: sorted by one variable (``varsort``, its 1-based position among the chosen
  variables), the "single-axis sorting" method;
* ``pca``: sorted by their score on the first principal component of the scaled data (with
  the default z-scores, the first eigenvector of the correlation matrix), the
  "principal-component sorting" method;
* ``onedims``: individual ranking, each variable sorted and cut into runs of ``k`` on its
  own (sdcMicro's fourth sorting method). It is registered with ``per_variable=True``: the
  facade runs it once per chosen column, each column a variable group of its own, so
  ``microaggregate(X, k, method="onedims")`` equals ``variables=[[c] for c in columns],
  method="single"``. Each released column is k-anonymous on its own; the combination of
  columns is not. :func:`onedims_labels` gives the per-column partitions.

Cutting rule (the one sdcMicro uses): along the order, ``floor(n / k)`` runs of ``k``
records, the last run taking the ``n mod k`` records left over, so every group has ``k``
records and the last one ``k..2k-1``. Fewer than ``2k`` records make one group.

Order conventions, which fix the groups exactly:

* sorting is stable and ascending: records with equal keys keep their row order;
* the principal axis is the unit eigenvector of ``Z'Z`` for its largest eigenvalue, signed
  so that its first non-zero coordinate is positive; records are sorted by ascending score.
  The sign decides which end of the order receives the last (larger) group.

Time O(n log n + n p^2) (``pca``: the p x p cross-product), memory O(n p).
"""

from __future__ import annotations

import numpy as np

from .._context import Context
from .._errors import InvalidInputError, InvalidTypeError
from .._registry import register_method
from .._result import Solution

__all__ = ["sorted_runs", "simple_labels", "single_labels", "pca_scores", "pca_labels", "onedims_labels"]


def sorted_runs(order: np.ndarray, k: int) -> np.ndarray:
    """Labels of runs of ``k`` along ``order`` (record positions, first to last); the last
    run takes the records left over (``k..2k-1`` records); fewer than ``2k`` records make
    one group.

    Examples
    --------
    >>> sorted_runs(np.array([4, 0, 3, 1, 2, 5, 6]), 3).tolist()
    [0, 1, 1, 0, 0, 1, 1]
    """
    order = np.asarray(order, dtype=np.int64)
    n = order.size
    runs = max(1, n // k)
    labels = np.empty(n, dtype=np.int64)
    labels[order] = np.minimum(np.arange(n) // k, runs - 1)
    return labels


def simple_labels(n: int, k: int) -> np.ndarray:
    """Runs of ``k`` records in row order (see :func:`sorted_runs`)."""
    return sorted_runs(np.arange(n), k)


def single_labels(x: np.ndarray, k: int) -> np.ndarray:
    """Runs of ``k`` records along ``x`` sorted ascending (stable: ties keep row order)."""
    return sorted_runs(np.argsort(np.asarray(x, dtype=np.float64), kind="stable"), k)


def pca_scores(Z: np.ndarray) -> np.ndarray:
    """Scores of the records on the first principal axis of ``Z`` (columns centred first),
    the axis signed so that its first non-zero coordinate is positive.

    Examples
    --------
    >>> Z = np.array([[1.0, -1.0], [-1.0, 1.0], [2.0, -2.0], [0.0, 0.0]])
    >>> pca_scores(Z).round(4).tolist()
    [0.7071, -2.1213, 2.1213, -0.7071]
    """
    Z = np.asarray(Z, dtype=np.float64)
    C = Z - Z.mean(axis=0)
    if C.shape[1] == 1:
        axis = np.ones(1)
    else:
        _, vectors = np.linalg.eigh(C.T @ C)
        axis = vectors[:, -1]
    nonzero = np.flatnonzero(np.abs(axis) > 1e-12 * np.abs(axis).max()) if np.any(axis) else np.array([0])
    if axis[nonzero[0]] < 0:
        axis = -axis
    return C @ axis


def pca_labels(Z: np.ndarray, k: int) -> np.ndarray:
    """Runs of ``k`` records along their first-principal-axis scores (see :func:`pca_scores`)."""
    return sorted_runs(np.argsort(pca_scores(Z), kind="stable"), k)


def onedims_labels(X: np.ndarray, k: int) -> np.ndarray:
    """Individual ranking: the partition of each column on its own, shape ``(n, p)``;
    column ``j`` holds :func:`single_labels` of ``X[:, j]``."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise InvalidInputError(f"`X` must be 2-dimensional; got {X.ndim} dimension(s).")
    return np.column_stack([single_labels(X[:, j], k) for j in range(X.shape[1])]) if X.shape[1] else \
        np.empty((X.shape[0], 0), dtype=np.int64)


@register_method("simple", summary="runs of k records in row order, without sorting (sdcMicro's benchmark)")
def _simple_solver(Z: np.ndarray, k: int, ctx: Context) -> Solution:
    return Solution(labels=simple_labels(Z.shape[0], k), status="done")


@register_method("single", summary="runs of k records sorted by one variable (single-axis sorting, as sdcMicro)")
def _single_solver(Z: np.ndarray, k: int, ctx: Context, *, varsort: int = 1) -> Solution:
    """``varsort``: 1-based position, among the chosen variables, of the variable sorted on."""
    if isinstance(varsort, bool) or not isinstance(varsort, (int, np.integer)):
        raise InvalidTypeError(f"option `varsort` of 'single' must be an integer position (1-based); got {varsort!r}.")
    p = Z.shape[1]
    if not 1 <= varsort <= p:
        raise InvalidInputError(
            f"option `varsort` of 'single' must be between 1 and {p} (the number of variables); got {varsort}.")
    return Solution(labels=single_labels(Z[:, varsort - 1], k), status="done", info={"varsort": int(varsort)})


@register_method("pca", summary="runs of k records sorted by their first principal component score (as sdcMicro)")
def _pca_solver(Z: np.ndarray, k: int, ctx: Context) -> Solution:
    return Solution(labels=pca_labels(Z, k), status="done")


@register_method("onedims", per_variable=True,
                 summary="each variable on its own: runs of k records along that variable's order (individual "
                         "ranking, as sdcMicro's onedims); k-anonymous per variable, not jointly")
def _onedims_solver(Z: np.ndarray, k: int, ctx: Context) -> Solution:
    """One variable's partition (the facade gives the core one column at a time)."""
    if Z.shape[1] != 1:
        raise InvalidInputError(f"method 'onedims' partitions one variable at a time; its core got {Z.shape[1]} "
                                "columns (microaggregate() runs it once per chosen column).")
    return Solution(labels=single_labels(Z[:, 0], k), status="done")
