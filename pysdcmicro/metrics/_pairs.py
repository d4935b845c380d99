"""Input handling shared by the measures: an original and a masked data set, row-aligned.

Both may be DataFrames (columns chosen by label) or 2-D numeric arrays (columns chosen by
position). Missing values (NaN) are allowed here, unlike in :func:`pysdcmicro.microaggregate`,
because the measures are also used on data masked by other tools; each measure documents
how it treats them (as sdcMicro does, with ``na.rm = TRUE``).
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import pandas as pd

from .._errors import InvalidInputError, InvalidTypeError
from .._validation import _col_name, _fmt, _is_numeric_series, _resolve_columns

__all__ = ["paired_values", "column_values", "default_variables"]


def _as_table(data: Any, what: str) -> pd.DataFrame | np.ndarray:
    if isinstance(data, pd.DataFrame):
        return data
    if isinstance(data, (pd.Series, str, bytes)) or data is None or np.isscalar(data):
        raise InvalidTypeError(
            f"`{what}` must be a pandas DataFrame or a 2-D numeric array; got {type(data).__name__}."
        )
    arr = np.asarray(data)
    if arr.ndim != 2:
        raise InvalidInputError(f"`{what}` must be 2-D (records x variables); got an array of shape {arr.shape}.")
    return arr


def _numeric_column(table, label, what: str) -> np.ndarray:
    if isinstance(table, pd.DataFrame):
        s = table[label]
        if not _is_numeric_series(s):
            raise InvalidTypeError(f"column {_col_name(label)} of `{what}` must be numeric; got dtype {s.dtype}.")
        values = s.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        if table.dtype.kind not in "iuf":
            raise InvalidTypeError(f"`{what}` must hold real numbers; got an array of dtype {table.dtype}.")
        values = np.asarray(table[:, label], dtype=np.float64)
    if np.isinf(values).any():
        pos = int(np.flatnonzero(np.isinf(values))[0])
        raise InvalidInputError(
            f"column {_col_name(label)} of `{what}` has an infinite value ({values[pos]}) at row {pos}; "
            "the measures need finite values (NaN marks a missing one)."
        )
    return values


def _columns(table) -> list:
    return list(table.columns) if isinstance(table, pd.DataFrame) else list(range(table.shape[1]))


def default_variables(original, masked) -> list:
    """Every numeric column of ``original`` that ``masked`` also has (same position for arrays)."""
    if isinstance(original, pd.DataFrame):
        cols = set(_columns(masked))
        return [c for c in original.columns if c in cols and _is_numeric_series(original[c])]
    return list(range(min(original.shape[1], masked.shape[1])))


def _resolve(variables: Any, table, what: str) -> list:
    if variables is None:
        return None
    chosen = _resolve_columns(variables, _columns(table), "variables")
    if not chosen:
        raise InvalidInputError("`variables` must name at least one column; got an empty list.")
    return chosen


def column_values(data: Any, variables: Any = None, *, what: str = "masked") -> tuple[np.ndarray, list]:
    """Float64 values (n x p) of the chosen numeric columns of one data set, and their labels."""
    table = _as_table(data, what)
    chosen = _resolve(variables, table, what)
    if chosen is None:
        if isinstance(table, pd.DataFrame):
            chosen = [c for c in table.columns if _is_numeric_series(table[c])]
            if not chosen:
                raise InvalidInputError(f"`{what}` has no numeric column; pass `variables`.")
        else:
            chosen = list(range(table.shape[1]))
    X = np.empty((table.shape[0], len(chosen)), dtype=np.float64)
    for j, label in enumerate(chosen):
        X[:, j] = _numeric_column(table, label, what)
    return X, chosen


def paired_values(original: Any, masked: Any, variables: Any = None) -> tuple[np.ndarray, np.ndarray, list]:
    """Values of the chosen variables in the original and the masked data, row-aligned.

    Rows are matched by position (the masked file written by pysdcmicro keeps the input's
    row order). ``variables`` defaults to every numeric column of ``original`` that
    ``masked`` also has.

    Returns ``(X, Xm, variables)`` with ``X`` and ``Xm`` float64 arrays of shape (n, p).
    """
    orig = _as_table(original, "original")
    mask = _as_table(masked, "masked")
    if orig.shape[0] != mask.shape[0]:
        raise InvalidInputError(
            f"`masked` must have as many records as `original` ({orig.shape[0]}); got {mask.shape[0]}."
        )
    if orig.shape[0] < 2:
        raise InvalidInputError(f"`original` must have at least 2 records; got {orig.shape[0]}.")
    if isinstance(orig, pd.DataFrame) != isinstance(mask, pd.DataFrame):
        raise InvalidTypeError(
            "`original` and `masked` must both be DataFrames or both be arrays; got "
            f"{type(original).__name__} and {type(masked).__name__}."
        )
    chosen = _resolve(variables, orig, "variables")
    if chosen is None:
        chosen = default_variables(orig, mask)
        if not chosen:
            raise InvalidInputError("`original` and `masked` share no numeric column; pass `variables`.")
    missing = [c for c in chosen if c not in _columns(mask)]
    if missing:
        raise InvalidInputError(f"unknown column {_col_name(missing[0])} in `masked`; it is in `original` only.")
    return _matrix(orig, chosen, "original"), _matrix(mask, chosen, "masked"), chosen


def _matrix(table, chosen: list, what: str) -> np.ndarray:
    """Float64 values of the chosen columns, columns contiguous (O(n p) memory, one copy)."""
    X = np.empty((len(chosen), table.shape[0]), dtype=np.float64)
    for j, label in enumerate(chosen):
        X[j] = _numeric_column(table, label, what)
    return X.T


def check_fraction(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
        raise InvalidTypeError(f"`{name}` must be a finite number >= 0; got {_fmt(value)}.")
    if value < 0:
        raise InvalidInputError(f"`{name}` must be a finite number >= 0; got {value:g}.")
    return float(value)
