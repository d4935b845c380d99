"""Aggregation step for agency data: the group value by ``measure`` (mean, median, trimmed
mean, one-step robust mean), weighted means and medians, rounding to ``decimals``, and the z-scores a partition is built on
when some cells are missing.

Every function works column by column on the observed cells only (NaN = missing): a
group's released value in a column is the measure over the members observed there, and a
missing cell stays missing in the release.
"""

from __future__ import annotations

import math

import numpy as np

from ._release import group_values
from ._standardize import Standardization, identical_columns, power_of_two_factors

__all__ = ["MEASURES", "MISSING", "group_statistic", "round_release", "standardization_with_missing"]

#: Accepted values of ``measure`` (sdcMicro ``microaggregation(measure=)``).
MEASURES = ("mean", "median", "trim", "onestep")
#: ``measure="onestep"``: each value is clipped to the group's median +- this many median
#: absolute deviations (the raw MAD, without the normal-consistency factor 1.4826; about
#: 2.0189 normalized MADs), and the clipped values are averaged: one step of Huber's
#: location iteration ``T + s * mean(psi((x - T) / s))`` from ``T`` = the median, with ``s``
#: the MAD and ``psi`` clipping at this bound; the bound of sdcMicro's ``measure = "onestep"``.
ONESTEP_BOUND = 2.9931359353970386
#: Accepted values of ``missing``.
MISSING = ("keep", "error")


def _ranks_within_groups(labels: np.ndarray, x: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """0-based rank of each value inside its group (ties broken by row order) and the
    group sizes, both per row. O(n log n)."""
    order = np.lexsort((np.arange(x.size), x, labels))
    counts = np.bincount(labels, minlength=n_groups)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    rank = np.empty(x.size, dtype=np.int64)
    rank[order] = np.arange(x.size) - starts[labels[order]]
    return rank, counts[labels]


def _kept_for_measure(labels: np.ndarray, x: np.ndarray, n_groups: int, measure: str, trim: float) -> np.ndarray:
    """Mask of the observed values whose mean is the group's measure: all (mean), the
    one or two middle values (median), or all but ``floor(m * trim)`` at each end (trimmed
    mean, as R's ``mean(x, trim=)``; ``trim >= 0.5`` is the median, as in R)."""
    rank, size = _ranks_within_groups(labels, x, n_groups)
    if measure == "median" or (measure == "trim" and trim >= 0.5):
        return (rank == (size - 1) // 2) | (rank == size // 2)
    if measure == "trim":
        drop = np.floor(size * trim).astype(np.int64)
        return (rank >= drop) & (rank < size - drop)
    return np.ones(x.size, dtype=bool)


def _onestep_means(x: np.ndarray, labels: np.ndarray, n_groups: int) -> np.ndarray:
    """Per group: the mean of ``x`` clipped to median +- ``ONESTEP_BOUND`` raw MADs (a
    group whose MAD is 0 gets its median)."""
    def medians(v):
        kept = _kept_for_measure(labels, v, n_groups, "median", 0.0)
        return group_values(v[kept][:, None], labels[kept], n_groups)[:, 0]

    med = medians(x)
    mad = medians(np.abs(x - med[labels]))
    bound = (ONESTEP_BOUND * mad)[labels]
    clipped = np.clip(x, med[labels] - bound, med[labels] + bound)
    return group_values(clipped[:, None], labels, n_groups)[:, 0]


def _weighted_means(x: np.ndarray, w: np.ndarray, labels: np.ndarray, n_groups: int) -> np.ndarray:
    """Weighted mean of ``x`` (scaled to (-2, 2)) per group, with one refinement step; a
    group whose weights sum to 0 gets its unweighted mean (its weighted total is 0 either
    way, so totals are still kept)."""
    W = np.bincount(labels, weights=w, minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        m = np.bincount(labels, weights=w * x, minlength=n_groups) / W
        m = m + np.bincount(labels, weights=w * (x - m[labels]), minlength=n_groups) / W
    zero = ~(W > 0)
    if zero.any():
        plain = group_values(x[:, None], labels, n_groups)[:, 0]
        m[zero] = plain[zero]
    return m


def _cumsum_within(w: np.ndarray, starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Running sum of ``w`` restarted at each group (rows sorted by group; a group is
    ``starts[g]:starts[g] + sizes[g]``), accumulated in order from each group's first row in
    numpy's long double and rounded to float64 at each position, as R's ``cumsum`` and
    ``sum`` do (so a cumulative share of exactly 0.5 is found where R finds it).

    Groups of up to :data:`_SHORT_GROUP` rows advance one rank per numpy step for all of them
    at once; longer groups (at most ``n / _SHORT_GROUP`` of them) take ``np.cumsum`` each.
    O(n) work in O(_SHORT_GROUP + n / _SHORT_GROUP) numpy calls."""
    acc = w.astype(np.longdouble)
    short = sizes <= _SHORT_GROUP
    s_starts, s_sizes = starts[short], sizes[short]
    for r in range(1, int(s_sizes.max(initial=0))):
        at = s_starts[s_sizes > r] + r
        acc[at] += acc[at - 1]
    for g in np.flatnonzero(~short):
        a, b = starts[g], starts[g] + sizes[g]
        acc[a:b] = np.cumsum(w[a:b], dtype=np.longdouble)
    return acc.astype(np.float64)


#: Groups up to this size are accumulated rank by rank, longer ones one at a time.
_SHORT_GROUP = 64


def _weighted_medians(x: np.ndarray, w: np.ndarray, labels: np.ndarray, n_groups: int) -> np.ndarray:
    """Weighted median of ``x`` per group (NaN for a group without values).

    The group's values sorted ascending (ties in row order) with their weights, and the
    cumulative weight shares ``r_j = cumsum(w)_j / sum(w)``: the median is ``x_j`` at the
    first ``j`` with ``r_j >= 0.5``, or the mean of ``x_j`` and ``x_{j+1}`` when ``r_j`` is
    0.5 exactly (the weighted median sdcMicro's ``microaggregation(measure = "median")``
    documents; with equal weights it is the ordinary median). A group whose weights sum to
    0 gets its unweighted median. One sort by (group, value): O(n log n)."""
    order = np.lexsort((x, labels))
    xs, ws, ls = x[order], w[order], labels[order]
    sizes = np.bincount(labels, minlength=n_groups)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    cum = _cumsum_within(ws, starts, sizes)
    total = np.zeros(n_groups)
    present = sizes > 0
    total[present] = cum[starts[present] + sizes[present] - 1]
    out = np.full(n_groups, np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = cum / total[ls]
    reached = np.flatnonzero(share >= 0.5)  # NaN shares (total 0) never reach
    groups, first = np.unique(ls[reached], return_index=True)
    j = reached[first]
    value = xs[j]
    tie = share[j] == 0.5  # the rest of the group weighs 0.5 too, so j + 1 is in the group
    value[tie] = (xs[j[tie]] + xs[j[tie] + 1]) / 2.0
    out[groups] = value
    zero = present & ~(total > 0)
    if zero.any():
        member = zero[labels]
        kept = _kept_for_measure(labels[member], x[member], n_groups, "median", 0.0)
        plain = group_values(x[member][kept][:, None], labels[member][kept], n_groups)[:, 0]
        out[zero] = plain[zero]
    return out


def group_statistic(X: np.ndarray, labels: np.ndarray, n_groups: int, *, measure: str = "mean",
                    trim: float = 0.0, weights: np.ndarray | None = None) -> np.ndarray:
    """Released value of each group and column, shape ``(g, p)``: the ``measure`` over the
    group's members observed in that column (NaN if none is observed). ``"onestep"``: the
    mean of the values clipped to the median +- :data:`ONESTEP_BOUND` raw MADs.

    ``weights`` (``measure="mean"`` or ``"median"``) give the weighted mean, so that the
    weighted total ``sum(w * x)`` of every column over its observed cells is kept, or the
    weighted median (see :func:`_weighted_medians`); a missing cell's weight is left out
    with it. A group whose weights sum to 0 gets its unweighted mean or median.

    Examples
    --------
    >>> X = np.array([[1.0], [2.0], [9.0], [np.nan], [4.0], [6.0], [5.0]])
    >>> labels = np.array([0, 0, 0, 0, 1, 1, 1])
    >>> group_statistic(X, labels, 2, measure="median")[:, 0].tolist()
    [2.0, 5.0]
    >>> group_statistic(np.array([[0.0], [1], [2], [3], [100]]), np.zeros(5, int), 1, measure="onestep").round(6).tolist()
    [[2.198627]]
    >>> group_statistic(X, labels, 2, weights=np.array([1.0, 1, 2, 5, 1, 1, 0]))[:, 0].tolist()
    [5.25, 5.0]
    >>> group_statistic(X, labels, 2, measure="median", weights=np.array([1.0, 1, 2, 5, 3, 1, 1]))[:, 0].tolist()
    [5.5, 4.0]
    """
    X = np.asarray(X, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.int64)
    if weights is not None and measure not in ("mean", "median"):
        raise ValueError(f'weights give weighted means or medians; got measure={measure!r}.')
    if measure == "mean" and weights is None:
        return group_values(X, labels, n_groups)
    factor = power_of_two_factors(X)
    out = np.full((n_groups, X.shape[1]), np.nan)
    for j in range(X.shape[1]):
        x = X[:, j] / factor[j]
        observed = ~np.isnan(x)
        lab, xo = labels[observed], x[observed]
        if xo.size == 0:
            continue
        if weights is not None:
            wo = np.asarray(weights, dtype=np.float64)[observed]
            m = (_weighted_medians if measure == "median" else _weighted_means)(xo, wo, lab, n_groups)
        elif measure == "onestep":
            m = _onestep_means(xo, lab, n_groups)
        else:
            kept = _kept_for_measure(lab, xo, n_groups, measure, trim)
            m = group_values(xo[kept][:, None], lab[kept], n_groups)[:, 0]
        out[:, j] = m * factor[j]
    return out


def round_release(R: np.ndarray, decimals: int | None) -> np.ndarray:
    """``R`` rounded to ``decimals`` decimal places (numpy's round half to even); NaN stays
    NaN. Rounding is a function of the group value, so members of a group stay equal."""
    if decimals is None:
        return R
    with np.errstate(invalid="ignore", over="ignore"):
        out = np.round(R, decimals)
    # Values too large for the rounding arithmetic (|x| > ~1e308 / 10**decimals) come back
    # infinite; they are integers in float64 already, so they are kept as they are.
    bad = ~np.isfinite(out) & np.isfinite(R)
    if bad.any():
        out[bad] = R[bad]
    return out


#: Rounds of the regression imputation (each refits every column with missing cells).
IMPUTATION_ROUNDS = 5


def standardization_with_missing(X: np.ndarray, *, ddof: int = 1,
                                 rounds: int = IMPUTATION_ROUNDS) -> Standardization:
    """z-scores of ``X`` on its observed cells (mean and sample sd of each column over the
    observed values, after the exact power-of-two pre-scaling), with every missing cell
    imputed: the copy the partition is built on (never released).

    Imputation: first the column mean (z = 0); then ``rounds`` rounds in which each column
    with missing cells is regressed (least squares with an intercept) on the other
    non-constant columns over the records observed in it, and its missing cells are set to
    the prediction, clipped to the column's observed range. So a record with a missing
    cell is grouped by what its observed values say about that cell, not placed at the
    centre (on EIA with 20 % of the cells missing, MDAV's IL drops from 3.59 % with mean
    imputation to 0.66 %). Cost O(rounds n p^3) time, O(n p) memory.

    A column is constant when its observed values are all equal (or fewer than two are
    observed); its z-scores are 0.

    Examples
    --------
    >>> st = standardization_with_missing(np.array([[1.0, 5.0], [np.nan, 5.0], [3.0, np.nan]]))
    >>> st.Z.round(4).tolist(), st.constant.tolist()
    ([[-0.7071, 0.0], [0.0, 0.0], [0.7071, 0.0]], [False, True])
    """
    X = np.asarray(X, dtype=np.float64)
    p = X.shape[1]
    factor = power_of_two_factors(X)
    Xs = X / factor
    center = np.zeros(p)
    scale = np.ones(p)
    constant = np.zeros(p, dtype=bool)
    flat = np.zeros(p, dtype=bool)  # not constant, but no spread (0.0 and -0.0): Z = 0
    for j in range(p):
        xo = X[:, j][~np.isnan(X[:, j])]
        # constant: observed values bit-identical (0.0 and -0.0 are not: written, they differ)
        if xo.size < 2 or identical_columns(xo[:, None])[0]:
            constant[j] = True
            continue
        so = Xs[:, j][~np.isnan(Xs[:, j])]
        center[j] = so.mean()
        sd = so.std(ddof=ddof)
        if sd > 0 and math.isfinite(sd):
            scale[j] = sd
        else:
            flat[j] = True
    Z = (Xs - center) / scale
    missing = np.isnan(Z)
    Z[missing] = 0.0
    Z[:, constant | flat] = 0.0
    _regression_impute(Z, missing, constant | flat, rounds)
    return Standardization(Z=np.ascontiguousarray(Z), factor=factor, center=center, scale=scale, constant=constant)


def _regression_impute(Z: np.ndarray, missing: np.ndarray, constant: np.ndarray, rounds: int) -> None:
    """Overwrite the missing cells of ``Z`` (in place) by iterated least-squares predictions
    from the other non-constant columns, clipped to each column's observed range."""
    live = [c for c in range(Z.shape[1]) if not constant[c]]
    targets = [j for j in live if missing[:, j].any() and (~missing[:, j]).sum() >= 2]
    if len(live) < 2 or not targets:
        return
    for _ in range(rounds):
        for j in targets:
            miss = missing[:, j]
            others = [c for c in live if c != j]
            A = np.column_stack([Z[~miss][:, others], np.ones(int((~miss).sum()))])
            gram = A.T @ A
            gram[np.diag_indices_from(gram)] += 1e-9 * max(1.0, float(np.trace(gram)) / gram.shape[0])
            try:
                coef = np.linalg.solve(gram, A.T @ Z[~miss, j])
            except np.linalg.LinAlgError:  # pragma: no cover - the ridge term prevents it
                continue
            pred = np.column_stack([Z[miss][:, others], np.ones(int(miss.sum()))]) @ coef
            observed = Z[~miss, j]
            Z[miss, j] = np.clip(pred, observed.min(), observed.max())
