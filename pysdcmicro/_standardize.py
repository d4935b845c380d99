"""Standardization of the chosen variables (z-scores), the first step of every method.

All four papers standardize each column before partitioning, and the information loss
IL = 100 * SSE / SST is defined on the standardized columns. We divide by the sample
standard deviation (``ddof=1``, as R's ``scale()`` does); IL does not depend on that choice
because it rescales every column by the same factor.

Numerics (no finite float64 input can overflow or silently lose a column):

* Each column is first divided by a power of two, ``2**e`` with ``e = floor(log2(max|x|))``,
  so that every scaled value lies in ``(-2, 2)``. Division by a power of two is exact (up
  to underflow of values ~1e-300 times smaller than the column's largest, which cannot
  change any distance), so sums of squares never overflow, even for values near
  ``±1.7e308``; means and spreads are computed on the scaled values (two-pass).
* A column is *constant* when all its values are equal (exact comparison of the original
  values). It is mapped to a column of zeros: it contributes nothing to distances, SSE or
  SST, nothing is ever divided by zero, and its released values equal the input.
* A column with a tiny spread relative to its size (``1e12 + N(0, 1)``, ``1 + 1e-15 i``)
  is standardized like any other: the centring happens after the power-of-two scaling,
  where subtraction of nearby values is exact.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["standardize", "Standardization", "standardization", "power_of_two_factors", "refined_mean", "identical_columns", "SCALINGS"]

#: Accepted values of the ``scaling`` parameter: how records are compared while the
#: partition is built. IL is always computed on z-scores.
SCALINGS = ("standardize", "none")


def power_of_two_factors(X: np.ndarray) -> np.ndarray:
    """Per-column power of two ``2**floor(log2(max|x|))`` (1 for an all-zero or all-missing
    column), so that ``X / factor`` lies in ``(-2, 2)``; missing values (NaN) are ignored.

    Examples
    --------
    >>> power_of_two_factors(np.array([[3.0, -1e300, 0.0], [1.0, 5.0, 0.0]])).tolist()[0::2]
    [2.0, 1.0]
    """
    X = np.asarray(X, dtype=np.float64)
    if X.shape[0] == 0:
        return np.ones(X.shape[1])
    with np.errstate(all="ignore"):
        # all columns at once (axis 0: no n x p temporary; twice as fast as column by column
        # on a C-ordered array); NaN where a column has a missing value, redone for those
        hi, lo = X.max(axis=0), X.min(axis=0)
        for j in np.flatnonzero(np.isnan(hi) | np.isnan(lo)):
            col = X[:, j]
            hi[j], lo[j] = np.fmax.reduce(col), np.fmin.reduce(col)  # NaN only when every value is missing
        maxabs = np.where(np.isnan(hi), 0.0, np.maximum(np.abs(hi), np.abs(lo)))
    _, exponent = np.frexp(maxabs)  # maxabs = m * 2**exponent, 0.5 <= m < 1
    return np.where(maxabs > 0, np.ldexp(1.0, exponent - 1), 1.0)


def identical_columns(X: np.ndarray) -> np.ndarray:
    """Per column: are all values bit-for-bit identical (NaNs of any payload count as one)?

    Examples
    --------
    >>> identical_columns(np.array([[0.0, 1.0], [-0.0, 1.0]])).tolist()
    [False, True]
    """
    X = np.asarray(X, dtype=np.float64)
    if X.shape[0] == 0:
        return np.ones(X.shape[1], dtype=bool)
    B = X.view(np.int64)  # the bit patterns (a view, any strides)
    first = X[0]
    first_nan = np.isnan(first)
    out = np.ones(X.shape[1], dtype=bool)
    step = max(1, (1 << 16) // max(1, X.shape[1]))  # rows at a time: O(p) blocks, not an n x p copy
    for start in range(0, X.shape[0], step):
        chunk = X[start:start + step]
        same = B[start:start + step] == first.view(np.int64)
        if first_nan.any():  # a NaN of any payload matches a NaN
            same |= np.isnan(chunk) & first_nan
        out &= same.all(axis=0)
        if not out.any():
            break
    return out


def refined_mean(Xs: np.ndarray) -> np.ndarray:
    """Column means with one refinement step (the mean of the residuals added back), so a
    column with a tiny spread relative to its size gets its centre to the last bit: the
    centre's error would otherwise enter SST as ``n * error**2``."""
    if Xs.shape[0] == 0:
        return np.zeros(Xs.shape[1])
    m = Xs.mean(axis=0)
    return m + (Xs - m).mean(axis=0)


@dataclass
class Standardization:
    """The z-scores of the chosen columns and how they were made.

    ``Z = (X / factor - center) / scale`` column by column: ``factor`` is the exact
    power-of-two pre-scaling, ``center`` and ``scale`` the mean and sample standard
    deviation of ``X / factor`` (so none of them can overflow). Constant columns have
    ``scale = 1`` and ``Z = 0``.
    """

    Z: np.ndarray
    factor: np.ndarray
    center: np.ndarray
    scale: np.ndarray
    constant: np.ndarray

    def raw_centered(self, X: np.ndarray) -> np.ndarray:
        """The raw values, centred, divided by ONE power of two common to all columns (so
        relative scales between columns are kept): the data for ``scaling="none"``."""
        common = float(np.max(self.factor)) if self.factor.size else 1.0
        Xs = np.asarray(X, dtype=np.float64) / common
        return np.ascontiguousarray(Xs - Xs.mean(axis=0))


def standardization(X: np.ndarray, *, ddof: int = 1) -> Standardization:
    """Standardize without overflow; see the module docstring.

    Examples
    --------
    >>> st = standardization(np.array([[1e308, 1.0], [-1e308, 1.0], [0.0, 1.0]]))
    >>> st.Z[:, 0].round(6).tolist(), st.constant.tolist()
    ([1.0, -1.0, 0.0], [False, True])
    """
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    factor = power_of_two_factors(X)
    Xs = X / factor
    center = refined_mean(Xs)
    spread = Xs.std(axis=0, ddof=ddof) if n > ddof else np.zeros(X.shape[1])
    # A column is constant when all values are identical to its first value, bit for bit
    # (exact test on the original values; a tiny float spread from rounding must not be
    # mistaken for variation). Bit for bit: 0.0 and -0.0 compare equal but are written
    # "0.0" and "-0.0", so releasing such a column unchanged would tell records apart; it
    # has no spread (Z = 0) and is released as group values instead.
    constant = identical_columns(X)
    scale = np.where(constant | (spread == 0) | ~np.isfinite(spread), 1.0, spread)
    Z = Xs  # in place (Xs is this function's own copy): one n x p array, not three
    Z -= center
    Z /= scale
    Z[:, constant] = 0.0
    return Standardization(Z=Z, factor=factor, center=center, scale=scale, constant=constant)


def standardize(X: np.ndarray, *, ddof: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Return ``(Z, center, scale, constant)`` with ``Z = (X - center) / scale``.

    ``constant`` flags the columns with zero spread; their ``scale`` is set to 1 and their
    ``Z`` column is exactly 0. ``Z`` is computed without overflow for any finite input
    (see :func:`standardization`); ``center`` and ``scale`` are given in the original
    units and may be infinite for values beyond ~1e308 (use :func:`standardization` for
    the overflow-free form).

    Examples
    --------
    >>> import numpy as np
    >>> Z, c, s, const = standardize(np.array([[1.0, 5.0], [3.0, 5.0]]))
    >>> Z.tolist(), const.tolist()
    ([[-0.7071067811865475, 0.0], [0.7071067811865475, 0.0]], [False, True])
    """
    st = standardization(X, ddof=ddof)
    with np.errstate(over="ignore"):
        center = st.center * st.factor
        scale = np.where(st.constant, 1.0, st.scale * st.factor)
    return st.Z, center, scale, st.constant
