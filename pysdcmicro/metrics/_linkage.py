"""Disclosure risk of masked continuous variables: distance-based record linkage."""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._errors import InvalidInputError, InvalidTypeError
from .._validation import _col_name, _fmt
from ._pairs import paired_values
from ._utility import _mean_sd

__all__ = ["record_linkage_risk", "RecordLinkageRisk"]

_BLOCK_ROWS = 8192
_QUERY_ROWS = 32768  # records per k-d tree query (each on every core)
# squared distances within this relative (absolute, near 0) difference are ties: distances
# that are equal in exact arithmetic (integer data, symmetric points) may differ in the last bits
_TIE_RTOL = 1e-9
_TIE_ATOL = 1e-15


@dataclass(frozen=True)
class RecordLinkageRisk:
    """Result of :func:`record_linkage_risk`.

    Attributes
    ----------
    linked : float
        Share of the original records whose nearest released record is their own (ties
        counted fractionally), in [0, 1]: the expected share of correct links of an intruder
        who links every record to its nearest released record.
    within_top : float
        Share of the original records whose own released record is among the ``top``
        nearest released records (ties counted fractionally), in [0, 1].
    top : int
        The ``top`` used for ``within_top``.
    n_records : int
        Number of records linked.
    n_released_points : int
        Number of distinct released records (after microaggregation, about n / k).
    variables : list
        The columns compared (constant columns of the original are left out).
    per_record : numpy.ndarray or None
        With ``per_record=True``: each record's probability of being linked correctly
        (1 / number of released records at the minimal distance when its own is among them,
        else 0).
    """

    linked: float
    within_top: float
    top: int
    n_records: int
    n_released_points: int
    variables: list
    per_record: np.ndarray | None = None

    def to_dict(self) -> dict:
        """The fields as plain Python values (no ``per_record``), for JSON."""
        return {"linked": self.linked, "within_top": self.within_top, "top": self.top,
                "n_records": self.n_records, "n_released_points": self.n_released_points,
                "variables": [v if isinstance(v, str) else int(v) if isinstance(v, numbers.Integral) else str(v)
                              for v in self.variables],
                "standardization": "both files on the original's mean and standard deviation (ddof=1)"}


def record_linkage_risk(original: Any, masked: Any, *, variables: Any = None, top: int = 5,
                        per_record: bool = False) -> RecordLinkageRisk:
    """Distance-based record linkage: how often the nearest released record is one's own.

    An intruder who knows the original values of a record links it to the released record
    nearest to it in Euclidean distance. Both files are standardized with the **original's**
    column means and sample standard deviations (``ddof=1``), so that the released file is
    measured in the units the intruder knows; constant columns of the original are left out.

    With ``z_i`` the standardized original record ``i``, ``z'_j`` the standardized released
    record ``j``, ``d_ij = ||z_i - z'_j||``, ``a_i = #{j : d_ij < d_ii}`` (released records
    strictly nearer than one's own) and ``b_i = #{j : d_ij = d_ii}`` (at the same distance,
    one's own included), the record is linked correctly with probability

    ``p_i = 1 / b_i  if a_i = 0,  else 0``

    (ties broken at random, i.e. counted fractionally), and its own record is among the
    ``t = top`` nearest with probability ``q_i = min(b_i, max(t - a_i, 0)) / b_i``. The risk
    is ``linked = mean(p_i)`` and ``within_top = mean(q_i)``. After microaggregation every
    group's records are released as one point, so ``b_i`` is at least the group size and
    ``linked`` is at most about ``1 / k``.

    Parameters
    ----------
    original, masked : DataFrame or 2-D array
        Row-aligned data sets (the masked file keeps the original's row order).
    variables : list, optional
        Columns compared (default: every numeric column of ``original`` in ``masked``).
    top : int, default 5
        How many nearest released records count for ``within_top``.
    per_record : bool, default False
        Also return each record's ``p_i`` in ``per_record``.

    Returns
    -------
    RecordLinkageRisk
        ``linked``, ``within_top``, ``top``, ``n_records``, ``n_released_points``,
        ``variables`` (and ``per_record``).

    Notes
    -----
    Distance-based record linkage of Pagliuca & Seri, "Some results of individual ranking
    method on the European Community Household Panel", Statistics Canada 1999, as used for
    the disclosure-risk part of the CASC score by Domingo-Ferrer & Torra, "A quantitative
    comparison of disclosure control methods for microdata", in *Confidentiality,
    Disclosure and Data Access*, North-Holland 2001, pp. 111-133 (DLD: the share of correct
    links, and the share within the nearest few). Written from the papers. sdcMicro's
    ``recordLinkage()`` (in sdcMicro 5.8.1 as installed from CRAN in 2026) is the *global*
    one-to-one linkage of Herranz et al. (2015), a different measure; from its Euclidean
    distance matrix and its ``n_best`` (released records at the minimal distance) the
    per-record ``p_i`` here is recomputed exactly (``tests/metrics/test_linkage_vs_sdcmicro.py``).

    Exact ties matter after microaggregation, where many released records coincide: the
    released records are first reduced to their distinct points with multiplicities, a
    KD-tree (:class:`scipy.spatial.cKDTree`) over the distinct points answers the nearest
    queries, and the distances that decide ties are recomputed exactly for each candidate
    (two released points tie when their squared distances agree to a relative 1e-9: distances
    equal in exact arithmetic may differ in their last bits). O(n log n) time
    for data in general position, O(n p) memory in blocks; no n x n matrix is built.
    Missing values are refused (a distance needs every coordinate).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0], [2.0], [3.0], [10.0], [11.0], [12.0]])
    >>> M = np.array([[2.0], [2.0], [2.0], [11.0], [11.0], [11.0]])   # groups of 3
    >>> r = record_linkage_risk(X, M, top=3)
    >>> round(r.linked, 4), r.within_top, r.n_released_points
    (0.3333, 1.0, 2)
    >>> record_linkage_risk(X, X).linked                              # nothing masked
    1.0
    """
    if isinstance(top, bool) or not isinstance(top, numbers.Integral):
        raise InvalidTypeError(f"`top` must be an integer >= 1; got {_fmt(top)}.")
    if top < 1:
        raise InvalidInputError(f"`top` must be an integer >= 1; got {int(top)}.")
    top = int(top)
    X, Xm, chosen = paired_values(original, masked, variables)
    for name, A in (("original", X), ("masked", Xm)):
        bad = np.isnan(A)
        if bad.any():
            row, col = np.argwhere(bad)[0]
            raise InvalidInputError(
                f"column {_col_name(chosen[col])} of `{name}` has a missing value (NaN) at row {int(row)}; "
                "record linkage needs complete data: impute or drop those rows first."
            )
    return _record_linkage(X, Xm, chosen, top, per_record=per_record)


def _record_linkage(X: np.ndarray, Xm: np.ndarray, chosen: list, top: int, *,
                    per_record: bool = False) -> RecordLinkageRisk:
    """:func:`record_linkage_risk` on extracted, complete float arrays."""
    mean, sd = _mean_sd(X)
    keep = np.flatnonzero(np.isfinite(sd) & (sd > 0))
    if keep.size == 0:
        raise InvalidInputError("every chosen column of `original` is constant; record linkage is undefined.")
    Z = (X[:, keep] - mean[keep]) / sd[keep]
    Zm = (Xm[:, keep] - mean[keep]) / sd[keep]
    p, q, m = _link(np.ascontiguousarray(Z), np.ascontiguousarray(Zm), top)
    return RecordLinkageRisk(linked=float(p.mean()), within_top=float(q.mean()), top=top,
                             n_records=int(Z.shape[0]), n_released_points=int(m),
                             variables=[chosen[j] for j in keep], per_record=p if per_record else None)


def _link(Z: np.ndarray, Zm: np.ndarray, top: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Per-record ``p_i`` and ``q_i`` (see :func:`record_linkage_risk`) and the number of
    distinct released points.

    The released rows are reduced to their distinct points (a hash of the rows, O(n p)).
    Only released points within ``radius_i`` of record ``i`` can be nearer than its own
    point or tie with it, where ``radius_i`` exceeds one's own distance by more than the tie
    tolerance; so each record's candidates are its ``K`` nearest points *within that
    radius* (a k-d tree query bounded by the radius: the tree prunes everything farther,
    which is what makes it fast), and ``K`` doubles for the few records with ``K`` points
    inside it and fewer than ``top`` nearer. Records are queried in order of their radius,
    block by block, with the block's largest radius as the tree's bound, on every core.
    The counts are over all released points within the radius, independent of ``K``, the
    blocks and the order of the points."""
    from scipy.spatial import cKDTree

    from .._release import row_classes

    n = Z.shape[0]
    Zm = Zm + 0.0  # -0.0 -> 0.0: equal values are one point (the rows are grouped bit for bit)
    own, m = row_classes(Zm)
    counts = np.bincount(own, minlength=m)
    first = np.empty(m, dtype=np.intp)
    first[own[::-1]] = np.arange(n - 1, -1, -1)  # each point's first row
    U = np.ascontiguousarray(Zm[first])
    tree = cKDTree(U)
    a = np.zeros(n, dtype=np.int64)
    b = np.ones(n, dtype=np.int64)
    own_d2 = np.empty(n)
    for s in range(0, n, _BLOCK_ROWS):
        diff = Z[s:s + _BLOCK_ROWS] - U[own[s:s + _BLOCK_ROWS]]
        own_d2[s:s + _BLOCK_ROWS] = np.einsum("ij,ij->i", diff, diff)
    # every point whose squared distance can be within the tie tolerance of one's own (or
    # nearer) is within this radius, with a margin for the tree's own rounding
    radius = np.maximum(np.sqrt(own_d2) * (1 + 1e-9), np.sqrt(own_d2 * (1 + 2 * _TIE_RTOL) + 2 * _TIE_ATOL)) + 1e-12
    pending = np.argsort(radius, kind="stable")
    K = min(m, top + 2)
    while pending.size:
        still = []
        for s in range(0, pending.size, _QUERY_ROWS):
            rows = pending[s:s + _QUERY_ROWS]
            r = radius[rows]
            bound = float(r.max()) * (1 + 1e-9) + 1e-300
            dist, idx = tree.query(Z[rows], k=K, distance_upper_bound=bound, workers=-1)
            dist = dist.reshape(len(rows), K)
            idx = idx.reshape(len(rows), K)
            inside = dist <= r[:, None]  # the tree's "missing" (inf, index m) is outside
            idx = np.where(inside, idx, 0)
            diff = Z[rows][:, None, :] - U[idx]
            d2 = np.einsum("ijk,ijk->ij", diff, diff)          # recomputed as own_d2 is
            # one's own distance as computed among the candidates, so that ties compare
            # numbers computed the same way
            is_own = inside & (idx == own[rows][:, None])
            o = np.where(is_own.any(axis=1), np.where(is_own, d2, -np.inf).max(axis=1), own_d2[rows])[:, None]
            c = np.where(inside, counts[idx], 0)
            tol = _TIE_RTOL * o + _TIE_ATOL
            closer = np.where(d2 < o - tol, c, 0).sum(axis=1)
            ties = np.where(np.abs(d2 - o) <= tol, c, 0).sum(axis=1)
            # every released point within the radius is among the K returned?
            covered = np.full(len(rows), K >= m) | ~inside[:, -1]
            done = covered | (closer >= top)
            a[rows[done]] = closer[done]
            b[rows[done]] = np.where(covered[done], ties[done], 1)  # b unused when a >= top
            still.append(rows[~done])
        pending = np.concatenate(still) if still else pending[:0]
        K = min(m, 2 * K)
    b = np.maximum(b, 1)
    p = np.where(a == 0, 1.0 / b, 0.0)
    q = np.minimum(b, np.maximum(top - a, 0)) / b
    return p, q, m
