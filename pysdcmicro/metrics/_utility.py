"""Utility (information loss) measures comparing an original and a masked data set.

* :func:`il_sse`: IL = 100 * SSE / SST on z-scores, the microaggregation literature's measure.
* :func:`il1s`, :func:`il1`, :func:`eigen_utility`: the measures of sdcMicro's
  ``dUtility()`` (sdcMicro 5.8.1), defined here from their published definitions and
  following sdcMicro's conventions (which standard deviation, sum or mean, how missing
  values are treated) so that the numbers can be cross-checked against sdcMicro.
* :func:`variable_changes`, :func:`correlation_changes`: what happened to each variable's
  mean and variance and to the correlations.

Every function takes ``(original, masked, *, variables=None)``: two row-aligned DataFrames
(columns by label) or 2-D arrays (columns by position); ``variables`` defaults to every
numeric column of ``original`` that ``masked`` also has. All are O(n p) time and memory
(the correlation-based ones O(n p^2 + p^3)).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pandas as pd

from ._pairs import paired_values

__all__ = ["il_sse", "il1s", "il1", "eigen_utility", "variable_changes", "correlation_changes"]


def _mean_sd(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column means and sample standard deviations (ddof=1) over the non-missing values,
    as R's ``mean(x, na.rm=TRUE)`` and ``sd(x, na.rm=TRUE)``."""
    if not np.isnan(X).any():
        if X.shape[0] < 2:
            return X.mean(axis=0) if X.shape[0] else np.full(X.shape[1], np.nan), np.full(X.shape[1], np.nan)
        return X.mean(axis=0), X.std(axis=0, ddof=1)
    count = np.sum(~np.isnan(X), axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.nansum(X, axis=0) / count
        dev = np.where(np.isnan(X), 0.0, X - mean)
        sd = np.sqrt(np.sum(dev * dev, axis=0) / (count - 1))
    sd = np.where(count > 1, sd, np.nan)
    return mean, sd


def sse_sst(original: Any, masked: Any, *, variables: Any = None) -> tuple[float, float]:
    """``(SSE, SST)`` of :func:`il_sse` (see there)."""
    X, Xm, _ = paired_values(original, masked, variables)
    return _sse_sst(X, Xm)


def _sse_sst(X: np.ndarray, Xm: np.ndarray) -> tuple[float, float]:
    # One implementation with the library's own IL (overflow-free, exact power-of-two
    # pre-scaling; constant columns and missing cells skipped): pysdcmicro._release.
    from .._release import release_sse_sst

    return release_sse_sst(X, Xm)


def il_sse(original: Any, masked: Any, *, variables: Any = None) -> float:
    """Information loss IL = 100 * SSE / SST (percent) of ``masked`` against ``original``.

    With ``z_ij = (x_ij - mean_j) / s_j`` the z-scores of the original (``s_j`` the sample
    standard deviation, ``ddof=1``) and ``z'_ij = (x'_ij - mean_j) / s_j`` the masked values
    on the *same* scale,

    ``SSE = sum_ij (z_ij - z'_ij)^2``,  ``SST = sum_ij z_ij^2``,  ``IL = 100 SSE / SST``.

    For microaggregation (each record replaced by its group mean) this is exactly the
    within-group SSE of :attr:`MicroaggregationResult.information_loss`
    (Domingo-Ferrer & Mateo-Sanz 2002); for any other masking it is the standardized
    squared error. Constant columns of ``original`` contribute nothing (as in
    :func:`~pysdcmicro.microaggregate`); cells missing in either data set are skipped.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0], [2.0], [3.0], [10.0], [11.0], [12.0]])
    >>> M = np.array([[2.0], [2.0], [2.0], [11.0], [11.0], [11.0]])
    >>> round(il_sse(X, M), 4)   # 100 * 4 / 125.5: within-group over total sum of squares
    3.1873
    """
    sse, sst = sse_sst(original, masked, variables=variables)
    return 100.0 * sse / sst if sst > 0 else math.nan


def il1s(original: Any, masked: Any, *, variables: Any = None, per_cell: bool = False) -> float:
    """IL1s: absolute deviations scaled by the standard deviation (sdcMicro ``dUtility``).

    ``IL1s = sum_j sum_i |x_ij - x'_ij| / (sqrt(2) * S_j)``

    where ``S_j`` is the sample standard deviation (``ddof=1``) of the *original* column
    ``j``. The measure comes from Mateo-Sanz, Sebe & Domingo-Ferrer, "Outlier protection in
    continuous microdata masking", PSD 2004, LNCS 3050, pp. 201-215, where it is the mean
    over the ``n p`` cells.

    Parameters
    ----------
    original, masked : DataFrame or 2-D array
        Row-aligned data sets.
    variables : list, optional
        Columns compared (default: every numeric column of ``original`` in ``masked``).
    per_cell : bool, default False
        ``False`` gives sdcMicro's value (``dUtility(x, xm, method = "IL1s")``, sdcMicro
        5.8.1), which is the **sum** over all cells and so grows with ``n``; ``True``
        divides by ``n p``, the per-cell mean of Mateo-Sanz et al. (sdcMicro's older
        ``"IL1old"``), comparable across data sets.

    Notes
    -----
    As in sdcMicro, cells missing (NaN) in either data set are skipped, and a cell of a
    constant original column (``S_j = 0``) adds nothing when it is unchanged (``0/0`` is
    dropped) and ``inf`` when it changed. O(n p).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0], [2.0], [3.0], [10.0], [11.0], [12.0]])
    >>> M = np.array([[2.0], [2.0], [2.0], [11.0], [11.0], [11.0]])
    >>> round(il1s(X, M), 6)      # 4 / (sqrt(2) * sd(X))
    0.564557
    >>> round(il1s(X, M, per_cell=True), 6)
    0.094093
    """
    X, Xm, _ = paired_values(original, masked, variables)
    return _il1s(X, Xm, per_cell)


def _il1s(X: np.ndarray, Xm: np.ndarray, per_cell: bool = False) -> float:
    _, sd = _mean_sd(X)
    total = 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        for j in range(X.shape[1]):
            total += float(np.nansum(np.abs(X[:, j] - Xm[:, j]) / (sd[j] * math.sqrt(2.0))))
    if per_cell:
        total /= X.size
    return total


def il1(original: Any, masked: Any, *, variables: Any = None) -> float:
    """IL1 of sdcMicro's ``dUtility(x, xm, method = "IL1")``: relative absolute deviations.

    ``IL1 = sum_ij 100 * |x_ij - x'_ij| / |x_ij|``, summed over every cell with
    ``x_ij != 0`` (sdcMicro drops the infinite and undefined cells, ``x_ij = 0``) and
    without missing values. This is the "IL1" that sdcMicro prints for an ``sdcMicroObj``
    (``print(sdc, "numrisk")``). Being relative to each value it is not scale-free across
    variables and it is undefined for values at 0; :func:`il1s` is usually preferable.

    Examples
    --------
    >>> import numpy as np
    >>> round(il1(np.array([[1.0], [3.0]]), np.array([[2.0], [2.0]])), 4)   # 100 (1/1 + 1/3)
    133.3333
    """
    X, Xm, _ = paired_values(original, masked, variables)
    return _il1(X, Xm)


def _il1(X: np.ndarray, Xm: np.ndarray) -> float:
    total = 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        for j in range(X.shape[1]):
            cells = 100.0 * np.abs(X[:, j] - Xm[:, j]) / np.abs(X[:, j])
            total += float(np.sum(cells[np.isfinite(cells)]))
    return total


def _scaled_covariance(X: np.ndarray) -> np.ndarray | None:
    """``var(scale(X), use = "pairwise.complete.obs")``: the covariance matrix of the
    column-standardized data (the correlation matrix when nothing is missing); None when a
    column cannot be standardized (constant or fewer than 2 values). A column whose observed
    values are all equal is constant even where its computed sd is a rounding residue
    (``7/3`` repeated: about 1e-15)."""
    mean, sd = _mean_sd(X)
    if not np.all(np.isfinite(sd) & (sd > 0)):
        return None
    with np.errstate(invalid="ignore"):
        if np.any(np.nanmax(X, axis=0) == np.nanmin(X, axis=0)):
            return None
    if not np.isnan(X).any():
        centred = X - mean  # one n x p copy
        cov = (centred.T @ centred) / (X.shape[0] - 1)
        return np.atleast_2d(cov / np.outer(sd, sd))
    Z = (X - mean) / sd
    cov = pd.DataFrame(Z).cov().to_numpy()  # pairwise complete observations, ddof=1
    return None if np.isnan(cov).any() else cov


def eigen_utility(original: Any, masked: Any, *, variables: Any = None) -> float:
    """Relative change of the eigenvalues of the correlation matrix (sdcMicro ``dUtility``).

    ``eigen = sum_j |lambda_j - lambda'_j| / lambda_j``

    where ``lambda_1 >= ... >= lambda_p`` are the eigenvalues of the covariance matrix of the
    standardized original variables (the correlation matrix) and ``lambda'_j`` those of the
    masked variables, each data set standardized by its *own* mean and standard deviation,
    as sdcMicro's ``dUtility(x, xm, method = "eigen")`` computes it (``eigen(var(scale(x)))``,
    sdcMicro 5.8.1; see Templ, Kowarik & Meindl, "Statistical disclosure control for
    micro-data using the R package sdcMicro", J. Stat. Softw. 67(4), 2015). 0 means the
    correlation structure is unchanged. sdcMicro prints it multiplied by 100 as
    "Difference of Eigenvalues: ... %".

    Notes
    -----
    Missing values are handled as sdcMicro does (pairwise complete observations). The
    result is NaN when a column of either data set is constant (sdcMicro returns ``NA``).
    It is also NaN, with a ``RuntimeWarning``, when the original variables are linearly
    dependent (smallest eigenvalue <= 1e-10 times the largest, e.g. the CASC Census set,
    whose 13 columns have rank 12): a rounding-level ``lambda_j`` would divide, and sdcMicro
    then returns a number that is rounding noise (on Census it can even be negative).
    O(n p^2 + p^3).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 2.0], [2.0, 1.0], [3.0, 4.0], [4.0, 3.0]])
    >>> round(eigen_utility(X, X), 6)
    0.0
    >>> M = np.array([[1.5, 1.5], [1.5, 1.5], [3.5, 3.5], [3.5, 3.5]])
    >>> round(eigen_utility(X, M), 6)   # correlation 0.6 -> 1: eigenvalues (1.6, 0.4) -> (2, 0)
    1.25
    """
    X, Xm, _ = paired_values(original, masked, variables)
    return _eigen(X, Xm)


_RANK_TOL = 1e-10


def _eigen(X: np.ndarray, Xm: np.ndarray) -> float:
    c1 = _scaled_covariance(X)
    c2 = _scaled_covariance(Xm)
    if c1 is None or c2 is None:
        return math.nan
    e1 = np.linalg.eigvalsh(c1)[::-1]
    e2 = np.linalg.eigvalsh(c2)[::-1]
    if e1[-1] <= _RANK_TOL * e1[0]:
        warnings.warn(
            "eigen utility is undefined: the original variables are linearly dependent (smallest "
            f"correlation eigenvalue {e1[-1]:.3g}), so a rounding-level eigenvalue would divide; "
            "returning NaN (sdcMicro returns a number dominated by rounding here).",
            RuntimeWarning, stacklevel=3)
        return math.nan
    with np.errstate(invalid="ignore", divide="ignore"):
        return float(np.sum(np.abs(e1 - e2) / e1))


def variable_changes(original: Any, masked: Any, *, variables: Any = None) -> pd.DataFrame:
    """Per-variable change of mean and spread, one row per variable.

    Columns: ``variable``, ``mean_original``, ``mean_masked``, ``mean_change``
    (``mean_masked - mean_original``), ``sd_original``, ``sd_masked`` (sample standard
    deviations, ``ddof=1``) and ``variance_ratio`` (``var_masked / var_original``; below 1
    when masking shrank the spread, as microaggregation always does). Missing values are
    skipped.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0], [2.0], [3.0], [10.0], [11.0], [12.0]])
    >>> M = np.array([[2.0], [2.0], [2.0], [11.0], [11.0], [11.0]])
    >>> variable_changes(X, M)[["mean_change", "variance_ratio"]].round(4).to_dict("records")
    [{'mean_change': 0.0, 'variance_ratio': 0.9681}]
    """
    X, Xm, names = paired_values(original, masked, variables)
    return _variable_changes(X, Xm, names)


def _variable_changes(X: np.ndarray, Xm: np.ndarray, names: list) -> pd.DataFrame:
    m1, s1 = _mean_sd(X)
    m2, s2 = _mean_sd(Xm)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = (s2 * s2) / (s1 * s1)
    return pd.DataFrame({
        "variable": names,
        "mean_original": m1,
        "mean_masked": m2,
        "mean_change": m2 - m1,
        "sd_original": s1,
        "sd_masked": s2,
        "variance_ratio": ratio,
    })


def correlation_changes(original: Any, masked: Any, *, variables: Any = None) -> dict:
    """Pearson correlation matrices before and after masking, and the largest change.

    Returns a dict with ``original`` and ``masked`` (DataFrames indexed by variable),
    ``max_abs_change`` (the largest ``|r'_ab - r_ab|``, 0 for a single variable) and
    ``pair`` (the two variables where it occurs, or None). Pairwise complete observations;
    a constant column gives NaN correlations.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 2.0], [2.0, 1.0], [3.0, 4.0], [4.0, 3.0]])
    >>> M = np.array([[1.5, 1.5], [1.5, 1.5], [3.5, 3.5], [3.5, 3.5]])
    >>> c = correlation_changes(X, M)
    >>> round(c["max_abs_change"], 6), c["pair"]
    (0.4, (0, 1))
    """
    X, Xm, names = paired_values(original, masked, variables)
    return _correlation_changes(X, Xm, names)


def _correlation(X: np.ndarray) -> np.ndarray:
    """Pearson correlations; pairwise complete observations when values are missing."""
    if np.isnan(X).any():
        return pd.DataFrame(X).corr().to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.atleast_2d(np.corrcoef(X, rowvar=False))


def _correlation_changes(X: np.ndarray, Xm: np.ndarray, names: list) -> dict:
    with np.errstate(invalid="ignore", divide="ignore"):
        r1 = _correlation(X)
        r2 = _correlation(Xm)
    delta = np.abs(r2 - r1)
    upper_a, upper_b = np.triu_indices(len(names), k=1)
    values = delta[upper_a, upper_b]
    if values.size == 0:
        best, pair = 0.0, None
    else:
        nan = np.flatnonzero(np.isnan(values))
        at = int(nan[0]) if nan.size else int(np.argmax(values))
        best = float(values[at])
        pair = (names[upper_a[at]], names[upper_b[at]])
    return {
        "original": pd.DataFrame(r1, index=names, columns=names),
        "masked": pd.DataFrame(r2, index=names, columns=names),
        "max_abs_change": best,
        "pair": pair,
    }
