"""One number format for every table of the reports (text and HTML).

Plain positional notation with thousands separators, never scientific notation: the number
of decimals follows the size of the number (about four significant digits below 1000, none
above), so that ``1,155,790`` stands next to ``546,958`` and ``0.4829`` next to ``12.35``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["format_number"]


def format_number(value: Any, *, digits: int = 4) -> str:
    """``value`` as text in the reports' format.

    Parameters
    ----------
    value : number or None
        None, NaN and infinities read ``"undefined"``; integers and booleans as they are.
    digits : int, default 4
        Significant digits kept below 1000 (at most 6 decimals; smaller magnitudes read
        ``"< 0.000001"``, with their sign).

    Examples
    --------
    >>> [format_number(v) for v in (1155790.3, 546958.0, 12.34567, 0.004829, -3.0, 0, None)]
    ['1,155,790', '546,958', '12.35', '0.004829', '-3.000', '0', 'undefined']
    """
    if value is None:
        return "undefined"
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    v = float(value)
    if not math.isfinite(v):
        return "undefined"
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a < 1e-6:
        return "< 0.000001" if v > 0 else "> -0.000001"
    decimals = min(6, max(0, digits - 1 - math.floor(math.log10(a))))
    return f"{v:,.{decimals}f}"


def cell(matrix: Any, a: Any, b: Any) -> float:
    """``matrix[a, b]`` of a labelled square matrix, found by position: ``.loc`` would read
    a tuple label (a MultiIndex column) as a row and a column."""
    return float(matrix.iat[list(matrix.index).index(a), list(matrix.columns).index(b)])
