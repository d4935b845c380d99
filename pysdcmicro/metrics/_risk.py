"""Disclosure risk of masked continuous variables: interval disclosure (sdcMicro ``dRisk``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._pairs import check_fraction, paired_values
from ._utility import _mean_sd

__all__ = ["interval_disclosure_risk"]


def interval_disclosure_risk(original: Any, masked: Any, *, variables: Any = None, sd_fraction: float = 0.05,
                             per_record: bool = False) -> float | np.ndarray:
    """Share of records whose original values all lie close to their released values.

    Standard-deviation-based interval disclosure (SDID) as sdcMicro's ``dRisk`` defines it
    (sdcMicro 5.8.1, ``dRisk(x, xm, k = 0.05)``): around each masked value an interval

    ``[x'_ij - f * S'_j,  x'_ij + f * S'_j]``

    is built, where ``S'_j`` is the sample standard deviation (``ddof=1``) of the **masked**
    column ``j`` and ``f = sd_fraction``. Record ``i`` is *at risk* when every one of its
    original values ``x_ij`` lies in its interval (bounds included): an intruder who knows
    the original values would recognise it. The risk is the share of records at risk, in
    [0, 1]; sdcMicro prints it as the upper end of "Disclosure risk is currently between
    [0.00%; ...]".

    Parameters
    ----------
    original, masked : DataFrame or 2-D array
        Row-aligned data sets.
    variables : list, optional
        Columns compared (default: every numeric column of ``original`` in ``masked``).
    sd_fraction : float, default 0.05
        Half-width of the interval as a fraction of ``S'_j``. sdcMicro calls this
        parameter ``k`` and documents it as a "percentage of the standard deviation";
        its default 0.05 means 5 % of a standard deviation.
    per_record : bool, default False
        Return the boolean at-risk flag of each record instead of the share.

    Notes
    -----
    Method SDID of Mateo-Sanz, Sebe & Domingo-Ferrer, "Outlier protection in continuous
    microdata masking", PSD 2004, LNCS 3050, pp. 201-215; see also Templ, *Statistical
    Disclosure Control for Microdata*, Springer 2017. Following sdcMicro: the interval uses
    the standard deviation of the masked data (not of the original), and a comparison with
    a missing value counts as inside the interval. O(n p).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0], [2.0], [3.0], [10.0], [11.0], [12.0]])
    >>> M = np.array([[2.0], [2.0], [2.0], [11.0], [11.0], [11.0]])
    >>> interval_disclosure_risk(X, M)          # only records 2 and 5 equal their group mean
    0.3333333333333333
    >>> interval_disclosure_risk(X, M, sd_fraction=0.25, per_record=True).tolist()
    [True, True, True, True, True, True]
    """
    f = check_fraction(sd_fraction, "sd_fraction")
    X, Xm, _ = paired_values(original, masked, variables)
    at_risk = _at_risk(X, Xm, f)
    if per_record:
        return at_risk
    return float(at_risk.mean())


def _at_risk(X: np.ndarray, Xm: np.ndarray, f: float) -> np.ndarray:
    """Per-record flags of :func:`interval_disclosure_risk`, O(n p) time, O(n) extra memory."""
    _, sd = _mean_sd(Xm)
    half = f * sd
    at_risk = np.ones(X.shape[0], dtype=bool)
    for j in range(X.shape[1]):  # column by column: no n x p temporaries
        x, m = X[:, j], Xm[:, j]
        at_risk &= ~((x < m - half[j]) | (x > m + half[j]))  # NaN comparisons are False: inside
    return at_risk
