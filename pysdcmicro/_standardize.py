"""Standardization of the chosen variables (z-scores), the first step of every method.

All four papers standardize each column before partitioning, and the information loss
IL = 100 * SSE / SST is defined on the standardized columns. We divide by the sample
standard deviation (``ddof=1``, as R's ``scale()`` does); IL does not depend on that choice
because it rescales every column by the same factor.

A constant column has standard deviation 0. It is mapped to a column of zeros: it then
contributes nothing to distances, SSE or SST, and nothing is ever divided by zero. Its
released values equal the input (every group mean of a constant is the constant).
"""

from __future__ import annotations

import numpy as np

__all__ = ["standardize", "SCALINGS"]

#: Accepted values of the ``scaling`` parameter: how records are compared while the
#: partition is built. IL is always computed on z-scores.
SCALINGS = ("standardize", "none")


def standardize(X: np.ndarray, *, ddof: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Return ``(Z, center, scale, constant)`` with ``Z = (X - center) / scale``.

    ``constant`` flags the columns with zero spread; their ``scale`` is set to 1 and their
    ``Z`` column is exactly 0.

    Examples
    --------
    >>> import numpy as np
    >>> Z, c, s, const = standardize(np.array([[1.0, 5.0], [3.0, 5.0]]))
    >>> Z.tolist(), const.tolist()
    ([[-0.7071067811865475, 0.0], [0.7071067811865475, 0.0]], [False, True])
    """
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    center = X.mean(axis=0)
    if n > ddof:
        spread = X.std(axis=0, ddof=ddof)
    else:
        spread = np.zeros(X.shape[1])
    # A column is constant when all values equal its first value (exact test; a tiny
    # float spread from rounding of the mean must not be mistaken for variation).
    constant = np.all(X == X[:1], axis=0) if n else np.ones(X.shape[1], dtype=bool)
    scale = np.where(constant | (spread == 0), 1.0, spread)
    Z = np.ascontiguousarray((X - center) / scale)
    Z[:, constant] = 0.0
    return Z, center, scale, constant
