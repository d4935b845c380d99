"""Input validation at the public boundary: checked once, then arrays for the pipeline.

Public entry points call :func:`as_dataset` and the ``check_*`` helpers once; private
algorithm cores receive float64 C-contiguous arrays and never re-check.
"""

from __future__ import annotations

import difflib
import math
import numbers
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ._columns import (CATEGORICAL, CATEGORY_REMEDY, category_codes, doubtful_identifier, identifier_reason,
                       text_columns)
from ._errors import InvalidInputError, InvalidTypeError

if TYPE_CHECKING:  # pandas is imported where a data frame is read: the worker processes never do
    import pandas as pd

__all__ = ["Dataset", "as_dataset", "check_k", "check_time_limit", "check_positive_int", "check_rng",
           "default_variables", "identifier_reason", "IdentifierColumnWarning"]


def _fmt(value: Any) -> str:
    """Short printable form of a received value for error messages."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_k(k: Any, n: int | None = None, *, name: str = "k") -> int:
    """Return ``k`` as int after checking it is an integer >= 2 (and <= n when given)."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise InvalidTypeError(f"`{name}` must be an integer >= 2; got {_fmt(k)}.")
    k = int(k)
    if k < 2:
        raise InvalidInputError(f"`{name}` must be an integer >= 2; got {k}.")
    if n is not None and k > n:
        raise InvalidInputError(
            f"`{name}` must be <= the number of records ({n}); got {k}."
        )
    return k


def check_positive_int(value: Any, name: str, *, minimum: int = 1, allow_none: bool = False) -> int | None:
    """Check an integer option such as ``max_iterations``."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InvalidTypeError(f"`{name}` must be an integer >= {minimum}; got {_fmt(value)}.")
    if value < minimum:
        raise InvalidInputError(f"`{name}` must be an integer >= {minimum}; got {int(value)}.")
    return int(value)


def cores_available() -> int:
    """CPU cores this process may use (its affinity where the system has one)."""
    import os

    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def check_n_jobs(n_jobs: Any, *, default: int, name: str = "n_jobs") -> int:
    """The number of worker processes or threads that ``n_jobs`` asks for (scikit-learn's
    convention): None or 0 = ``default`` (the method's own), -1 = every available core, an
    integer >= 1 = that many."""
    if n_jobs is None:
        return default
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral):
        raise InvalidTypeError(f"`{name}` must be None, -1 or an integer >= 0; got {_fmt(n_jobs)}.")
    if n_jobs == 0:
        return default
    if n_jobs == -1:
        return cores_available()
    if n_jobs < -1:
        raise InvalidInputError(f"`{name}` must be None, -1 or an integer >= 0; got {int(n_jobs)}.")
    return int(n_jobs)


def check_number(value: Any, name: str, *, low: float | None = None, high: float | None = None,
                 low_open: bool = False, allow_none: bool = False) -> float | None:
    """Check a real-valued option against an interval."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise InvalidTypeError(f"`{name}` must be a finite number; got {_fmt(value)}.")
    value = float(value)
    if low is not None and (value < low or (low_open and value == low)):
        rule = f"> {low:g}" if low_open else f">= {low:g}"
        raise InvalidInputError(f"`{name}` must be {rule}; got {value:g}.")
    if high is not None and value > high:
        raise InvalidInputError(f"`{name}` must be <= {high:g}; got {value:g}.")
    return value


def check_time_limit(time_limit: Any) -> float | None:
    """``None`` (no limit) or a positive number of seconds."""
    if time_limit is None:
        return None
    if isinstance(time_limit, bool) or not isinstance(time_limit, numbers.Real) or math.isnan(time_limit):
        raise InvalidTypeError(
            f"`time_limit` must be None or a number of seconds > 0; got {_fmt(time_limit)}."
        )
    if time_limit <= 0:
        raise InvalidInputError(
            f"`time_limit` must be None or a number of seconds > 0; got {time_limit:g}."
        )
    return float(time_limit)


def check_choice(value: Any, name: str, choices: list[str] | tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        hint = ""
        if isinstance(value, str):
            close = difflib.get_close_matches(value, list(choices), n=1)
            if close:
                hint = f" Did you mean {close[0]!r}?"
        raise InvalidInputError(
            f"`{name}` must be one of {', '.join(map(repr, choices))}; got {_fmt(value)}.{hint}"
        )
    return value


@dataclass
class Dataset:
    """Validated input: raw values of the chosen variables plus what is needed to rebuild
    the output in the caller's own shape.

    Attributes
    ----------
    source : DataFrame or ndarray
        The caller's object, never modified.
    is_frame : bool
        Whether the caller gave a DataFrame (the result's ``data`` is then a DataFrame).
    variables : list
        Labels of the chosen columns (positions for an ndarray).
    positions : ndarray of int
        Positions of the chosen columns in ``source``.
    X : ndarray of shape (n, p), float64, C-contiguous
        Raw values of the chosen columns.
    strata : ndarray of int or None
        Stratum code of each row (0..n_strata-1), or None without strata.
    strata_names : list
        A printable name per stratum code, such as ``"REGION=north"``.
    """

    source: Any
    is_frame: bool
    variables: list
    positions: np.ndarray
    X: np.ndarray
    strata_columns: list = field(default_factory=list)
    strata: np.ndarray | None = None
    strata_names: list = field(default_factory=list)

    @property
    def n(self) -> int:
        return self.X.shape[0]


def _is_numeric_series(s: pd.Series) -> bool:
    return _is_numeric_dtype(s.dtype)


def _is_numeric_dtype(dtype) -> bool:
    import pandas as pd
    return pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype) \
        and not pd.api.types.is_complex_dtype(dtype)


def _col_name(label: Any) -> str:
    return repr(label) if not isinstance(label, str) else f"'{label}'"


def _row_label(index: pd.Index | None, pos: int) -> str:
    import pandas as pd
    if index is None or isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1:
        return f"row {pos}"
    return f"row {pos} (index {index[pos]!r})"


def _check_finite(values: np.ndarray, label: Any, index: pd.Index | None, allow_missing: bool = False) -> None:
    bad = np.isinf(values) if allow_missing else ~np.isfinite(values)
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        v = values[pos]
        kind = "a missing value (NaN)" if np.isnan(v) else f"an infinite value ({v})"
        count = int(bad.sum())
        more = f" and {count - 1} more" if count > 1 else ""
        rule = ("microaggregation needs finite values: impute or drop those rows first (missing values are "
                "kept with missing=\"keep\", infinite ones never)" if allow_missing or not np.isnan(v) else
                "missing=\"error\" refuses missing values: pass missing=\"keep\" (CLI --missing keep) to keep "
                "them missing in the release, or impute or drop those rows first")
        raise InvalidInputError(f"column {_col_name(label)} has {kind} at {_row_label(index, pos)}{more}; {rule}.")


_EXACT_INT = 2 ** 53  # float64 holds every integer of magnitude <= 2**53 exactly


def _check_exact_integers(values: Any, label: Any, index: pd.Index | None) -> None:
    """Refuse an integer column holding values that float64 cannot represent exactly.

    Microaggregation computes in float64; an integer beyond 2**53 would be rounded on the
    way in, so distinct values could collapse (a column ``2**60 + arange(30)`` would look
    constant and be released unchanged: a non-k-anonymous release)."""
    arr = np.asarray(values)
    if arr.dtype.kind not in "iu" or arr.size == 0:
        return
    big = (arr > _EXACT_INT) | (arr < -_EXACT_INT) if arr.dtype.kind == "i" else arr > _EXACT_INT
    if big.any():
        pos = int(np.flatnonzero(big)[0])
        count = int(big.sum())
        more = f" and {count - 1} more" if count > 1 else ""
        raise InvalidInputError(
            f"column {_col_name(label)} has the integer {int(arr[pos])} at {_row_label(index, pos)}{more}, beyond "
            f"2**53 = {_EXACT_INT} in magnitude; float64 arithmetic would round it (distinct values could "
            "collapse): subtract an offset, rescale, or pass it as float if rounding is acceptable."
        )


def _check_integer_series(s: pd.Series, label: Any, index: pd.Index) -> None:
    """:func:`_check_exact_integers` on an integer column (numpy, nullable or Arrow dtype);
    missing cells read as 0 so positions (and the row named) stay those of the frame."""
    import pandas as pd
    if not pd.api.types.is_integer_dtype(s.dtype):
        return
    if isinstance(s.dtype, np.dtype):  # numpy integers: never missing, no copy
        _check_exact_integers(s.to_numpy(), label, index)
    elif getattr(s.dtype, "numpy_dtype", None) is not None:
        _check_exact_integers(s.to_numpy(dtype=s.dtype.numpy_dtype, na_value=0), label, index)
    else:  # pragma: no cover  (an integer extension dtype without numpy_dtype)
        _check_exact_integers(s.dropna().to_numpy(), label, index if not s.hasnans else None)


def check_integer_text(text: pd.Series, values: np.ndarray, label: Any, *,
                       row: Callable[[int], str] | None = None, name: str | None = None) -> None:
    """Refuse a column read from text holding an integer literal beyond 2**53 in magnitude,
    the rule :func:`_check_exact_integers` applies to integer columns: ``2**53 + 1`` and
    ``2**53`` would read as one value, so distinct records could look identical (or the
    column constant) and be released unmasked. ``values`` are the cells as read (float64);
    only cells reading as 2**53 or more in magnitude can hold such a literal. ``row`` names
    the row of a position (default ``"row <pos>"``; the command line names the file's row)
    and ``name`` the column (default its label)."""
    big = np.flatnonzero(np.abs(np.nan_to_num(values)) >= _EXACT_INT)
    for pos in big:
        cell = str(text.iat[pos]).strip()
        digits = cell[1:] if cell[:1] in "+-" else cell
        if digits.isdigit() and abs(int(cell)) > _EXACT_INT:
            where = row(int(pos)) if row is not None else f"row {int(pos)}"
            raise InvalidInputError(
                f"column {name if name is not None else _col_name(label)} has the integer {cell} at {where}, "
                f"beyond 2**53 = {_EXACT_INT} in magnitude; float64 arithmetic would round such integers "
                "(distinct values could collapse): subtract an offset, rescale, or write it as a float if "
                "rounding is acceptable."
            )


def is_column_label(value: Any, columns: Any) -> bool:
    """Whether ``value`` is one of ``columns``' labels (a tuple names a column of a
    MultiIndex, or a tuple-labelled column, rather than a list of columns)."""
    if columns is None:
        return False
    try:
        return value in columns
    except (TypeError, ValueError):  # unhashable, or a comparison that is not a bool
        return False


def _is_missing_label(label: Any) -> bool:
    import pandas as pd
    parts = label if isinstance(label, tuple) else (label,)
    for part in parts:
        if part is None or part is pd.NaT or part is pd.NA:
            return True
        if isinstance(part, float) and math.isnan(part):
            return True
    return False


def check_column_labels(columns: Any) -> None:
    """Column labels the package can name, look up and write: hashable, none missing
    (None, NaN, NaT; nor a missing level of a MultiIndex), no two equal (``1`` and ``1.0``
    are one label to pandas and to Python)."""
    labels = list(columns)
    for j, label in enumerate(labels):
        try:
            hash(label)
        except TypeError:
            raise InvalidTypeError(
                f"column {j} of `frame` has the unhashable label {_fmt(label)}; column labels must be hashable "
                "(strings, numbers or tuples): rename the columns.") from None
        if _is_missing_label(label):
            raise InvalidInputError(
                f"column {j} of `frame` has a missing label, {_fmt(label)}; every column needs a label that "
                "can be named and written: rename it (frame.columns = [...]).")
    if len(set(labels)) != len(labels):
        seen: dict = {}
        for j, label in enumerate(labels):
            if label in seen:
                first = labels[seen[label]]
                same = "" if repr(first) == repr(label) else f" ({_fmt(first)} and {_fmt(label)} are equal labels)"
                raise InvalidInputError(
                    f"`frame` has two columns named {_col_name(label)}{same}, columns {seen[label]} and {j}; "
                    "column names must be unique.")
            seen[label] = j


def _resolve_columns(requested: Any, columns: list, what: str) -> list:
    """Turn a column selection (label or list of labels) into a list of existing labels."""
    if requested is None:
        return []
    if is_column_label(requested, columns) and not isinstance(requested, list):
        requested = [requested]  # one label: a string, a number, a tuple (a MultiIndex column)
    elif isinstance(requested, (str, numbers.Integral)) and not isinstance(requested, bool):
        requested = [requested]
    try:
        requested = list(requested)
    except TypeError:
        raise InvalidTypeError(
            f"`{what}` must be a column name or a list of column names; got {_fmt(requested)}."
        ) from None
    seen = set()
    for label in requested:
        if label not in columns:
            names = [str(c) for c in columns]
            close = difflib.get_close_matches(str(label), names, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            shown = ", ".join(names[:20]) + (", ..." if len(names) > 20 else "")
            raise InvalidInputError(
                f"unknown column {_col_name(label)} in `{what}`; the data has columns: {shown}.{hint}"
            )
        if label in seen:
            raise InvalidInputError(f"`{what}` lists column {_col_name(label)} more than once.")
        seen.add(label)
    return requested


def as_dataset(frame: Any, variables: Any = None, strata: Any = None, *, missing: str = "error",
               exclude: Any = None) -> Dataset:
    """Validate the data argument of every public entry point.

    Parameters
    ----------
    frame : pandas.DataFrame or array_like of shape (n, p)
        The records. Never modified.
    variables : column label, list of labels, or None
        Columns to microaggregate jointly. Default: every numeric (non-boolean) column that
        is not a stratum column. For an array, column positions.
    strata : column label, list of labels, or None
        Columns whose value combinations define strata (DataFrame input only).
    missing : {"error", "keep"}
        Whether missing values (NaN) in the chosen columns are refused or accepted.
    exclude : list of labels, optional
        Columns never chosen by default (the weight column).
    """
    import pandas as pd
    allow = missing == "keep"
    if isinstance(frame, pd.DataFrame):
        return _dataset_from_frame(frame, variables, strata, allow, list(exclude or []))
    if isinstance(frame, (pd.Series, str, bytes)) or frame is None or np.isscalar(frame):
        raise InvalidTypeError(
            f"`frame` must be a pandas DataFrame or a 2-D numeric array; got {type(frame).__name__}."
        )
    arr = np.asarray(frame)
    if arr.ndim != 2:
        raise InvalidInputError(
            f"`frame` must be 2-D (records x variables); got an array of shape {arr.shape}."
        )
    if arr.dtype.kind not in "iuf":
        raise InvalidTypeError(
            f"`frame` must hold real numbers; got an array of dtype {arr.dtype}. "
            "Use a DataFrame for mixed data."
        )
    if strata is not None:
        raise InvalidInputError("`strata` needs a DataFrame with named columns; got an array.")
    n, p = arr.shape
    if n == 0:
        raise InvalidInputError("`frame` must have at least one record; got 0 rows.")
    if p == 0:
        raise InvalidInputError("`frame` must have at least one column; got 0 columns.")
    columns = list(range(p))
    chosen = _resolve_columns(variables, columns, "variables") if variables is not None else \
        [c for c in columns if c not in set(exclude or [])]
    if not chosen:
        raise InvalidInputError("`variables` must name at least one column; got an empty list.")
    positions = np.asarray(chosen, dtype=np.intp)
    for j, label in enumerate(chosen):
        _check_exact_integers(arr[:, positions[j]], label, None)
    if arr.dtype == np.float64 and arr.flags.c_contiguous and np.array_equal(positions, np.arange(p)):
        X = arr.view()  # every column, already float64: no copy (10^7 x 10 is 0.8 GB); read-only
        X.flags.writeable = False
    else:
        X = np.ascontiguousarray(arr[:, positions], dtype=np.float64)
    for j, label in enumerate(chosen):
        _check_finite(X[:, j], label, None, allow)
    return Dataset(source=frame, is_frame=False, variables=chosen, positions=positions, X=X)


def _dataset_from_frame(frame: pd.DataFrame, variables: Any, strata: Any, allow_missing: bool = False,
                        exclude: list | None = None) -> Dataset:
    import pandas as pd
    n, p = frame.shape
    if p == 0:
        raise InvalidInputError("`frame` must have at least one column; got 0 columns.")
    if n == 0:
        raise InvalidInputError("`frame` must have at least one record; got 0 rows.")
    columns = list(frame.columns)
    check_column_labels(columns)
    strata_cols = _resolve_columns(strata, columns, "strata")
    if variables is None and exclude:  # the weight column is never chosen by default
        columns = [c for c in columns if c not in exclude]
    if variables is None:
        numeric = [c for c in columns if c not in strata_cols and _is_numeric_series(frame[c])]
        if not numeric:
            raise InvalidInputError(
                "`frame` has no numeric column to microaggregate; pass `variables` or convert columns to numbers."
            )
        for c in numeric:  # integers beyond 2**53 are refused whatever the selection
            _check_integer_series(frame[c], c, frame.index)
        chosen = default_variables(frame, numeric, stacklevel=5, exclude=[*strata_cols, *(exclude or [])])
    else:
        chosen = _resolve_columns(variables, columns, "variables")
        if not chosen:
            raise InvalidInputError("`variables` must name at least one column; got an empty list.")
        both = [c for c in chosen if c in strata_cols]
        if both:
            raise InvalidInputError(
                f"column {_col_name(both[0])} is both in `variables` and in `strata`; a column can be only one of them."
            )
    dtypes = frame.dtypes
    for label in chosen:
        if not _is_numeric_dtype(dtypes[label]):
            s = frame[label]
            example = next((v for v in s if not isinstance(v, numbers.Real) or isinstance(v, bool)), None)
            shown = f" (e.g. value {_fmt(example)})" if example is not None else ""
            raise InvalidTypeError(
                f"column {_col_name(label)} must be numeric to be microaggregated; got dtype {s.dtype}{shown}."
            )
    # One conversion of all chosen columns (per-column Series cost as much as the method on
    # CASC-sized data). Integers: only a column with a value of magnitude >= 2**53 after
    # conversion can hold one beyond 2**53 (conversion is monotone), so only such a column
    # gets the exact integer check.
    sub = frame if chosen == list(frame.columns) else frame[chosen]
    X = np.ascontiguousarray(sub.to_numpy(dtype=np.float64, na_value=np.nan))
    ints = [j for j, label in enumerate(chosen) if pd.api.types.is_integer_dtype(dtypes[label])]
    if ints:
        wide = ~(np.abs(X[:, ints]) < _EXACT_INT).all(axis=0)  # (a missing cell also sends it to the check)
        for j in np.asarray(ints)[wide]:
            _check_integer_series(frame[chosen[j]], chosen[j], frame.index)
    bad = np.isinf(X) if allow_missing else ~np.isfinite(X)
    if bad.any():
        j = int(np.flatnonzero(bad.any(axis=0))[0])
        _check_finite(X[:, j], chosen[j], frame.index, allow_missing)
    all_columns = list(frame.columns)
    positions = np.asarray([all_columns.index(c) for c in chosen], dtype=np.intp)
    ds = Dataset(source=frame, is_frame=True, variables=chosen, positions=positions, X=X)
    if strata_cols:
        ds.strata_columns = strata_cols
        sub = frame[strata_cols]
        missing = sub.isna().to_numpy()
        if missing.any():
            r, c = map(int, np.argwhere(missing)[0])
            raise InvalidInputError(
                f"stratum column {_col_name(strata_cols[c])} has a missing value at {_row_label(frame.index, r)}; "
                "every record needs a stratum."
            )
        codes, uniques = pd.MultiIndex.from_frame(sub).factorize(sort=True)
        ds.strata = np.asarray(codes, dtype=np.intp)
        ds.strata_names = [
            ", ".join(f"{col}={val!r}" if not isinstance(val, str) else f"{col}={val}"
                      for col, val in zip(strata_cols, key if isinstance(key, tuple) else (key,)))
            for key in uniques
        ]
    return ds


def check_weights(weights: Any, ds: Dataset) -> tuple[np.ndarray | None, Any]:
    """Sampling weights: a column label (DataFrame; or a position for an array) or an
    array of n values; each must be a finite number > 0 (a zero weight could make a
    group's weighted mean one record's own values), never missing, and the weight
    column cannot be microaggregated. Returns ``(w, label)``."""
    import pandas as pd
    if weights is None:
        return None, None
    label = None
    if is_weight_label(weights, ds.source.columns if ds.is_frame else None):
        columns = list(ds.source.columns) if ds.is_frame else list(range(np.asarray(ds.source).shape[1]))
        label = _resolve_columns(weights, columns, "weights")[0]
        if label in ds.variables:
            raise InvalidInputError(
                f"column {_col_name(label)} is both in `variables` and the `weights` column; "
                "the weight column passes through untouched and cannot be microaggregated."
            )
        values = ds.source[label] if ds.is_frame else np.asarray(ds.source)[:, label]
        if ds.is_frame and not _is_numeric_series(values):
            raise InvalidTypeError(f"weight column {_col_name(label)} must be numeric; got dtype {values.dtype}.")
        w = np.asarray(values.to_numpy(dtype=np.float64, na_value=np.nan) if ds.is_frame else values,
                       dtype=np.float64)
        what = f"weight column {_col_name(label)}"
    else:
        try:
            w = np.asarray(weights, dtype=np.float64)
        except (TypeError, ValueError):
            raise InvalidTypeError(
                f"`weights` must be a column name or an array of numbers; got {_fmt(weights)}.") from None
        if w.shape != (ds.n,):
            raise InvalidInputError(f"`weights` must hold one weight per record ({ds.n}); got shape {w.shape}.")
        name = getattr(weights, "name", None)
        what = f"weight column {_col_name(name)}" if isinstance(weights, pd.Series) and name is not None \
            else "`weights`"
    index = ds.source.index if ds.is_frame else None
    for bad, rule in ((np.isnan(w), "a missing weight"), (np.isinf(w), "an infinite weight"),
                      (w < 0, "a negative weight"), (w == 0, "a zero weight")):
        if bad.any():
            pos = int(np.flatnonzero(bad)[0])
            count = int(bad.sum())
            more = f" and {count - 1} more" if count > 1 else ""
            why = ("; a group whose other records weigh 0 would release this record's own values as its weighted "
                   "mean: drop the records of weight 0 (out of scope) or microaggregate without weights"
                   if rule == "a zero weight" else "")
            raise InvalidInputError(
                f"{what} has {rule} ({w[pos]:g}) at {_row_label(index, pos)}{more}; every sampling weight must be "
                f"a finite number > 0{why}."
            )
    return np.ascontiguousarray(w), label


def is_weight_label(weights: Any, columns: Any = None) -> bool:
    """Whether ``weights`` names a column (a label, a position, or a tuple label of
    ``columns``) rather than giving the weights themselves."""
    if isinstance(weights, (str, numbers.Integral)) and not isinstance(weights, bool):
        return True
    if isinstance(weights, tuple) or np.ndim(weights) == 0:  # a tuple or a float label, say
        return is_column_label(weights, columns)
    return False


def check_variable_groups(variables: Any, columns: Any = None) -> list | None:
    """``variables`` as a list of groups when it is a list of lists (groups of variables
    microaggregated separately, as mu-ARGUS does); None when it is an ordinary selection.
    A tuple that is one of ``columns``' labels (a MultiIndex column) is a column, not a group."""
    if variables is None or isinstance(variables, (str, bytes)) or not isinstance(variables, (list, tuple)):
        return None
    if is_column_label(variables, columns):
        return None

    def is_group(v: Any) -> bool:
        return isinstance(v, list) or (isinstance(v, tuple) and not is_column_label(v, columns))

    if not any(is_group(v) for v in variables):
        return None
    groups = []
    seen: dict = {}
    for g, group in enumerate(variables, start=1):
        if not is_group(group):
            raise InvalidTypeError(
                f"`variables` mixes groups and single columns; in a list of variable groups every item must be a "
                f"list of columns; got {_fmt(group)} as group {g}."
            )
        if not group:
            raise InvalidInputError(f"variable group {g} is empty; every group needs at least one column.")
        for label in group:
            if label in seen:
                where = f"groups {seen[label]} and {g}" if seen[label] != g else f"group {g} twice"
                raise InvalidInputError(
                    f"column {_col_name(label)} is in variable {where}; a column can be in only one variable group."
                )
            seen[label] = g
        groups.append(list(group))
    return groups


# ---------------------------------------------------------------------------
# Seeds and default variables
# ---------------------------------------------------------------------------
def check_rng(rng: Any, name: str = "rng") -> Any:
    """``rng`` must be None, a non-negative integer, or a numpy Generator / SeedSequence.

    The same rule serves the API (``rng=``) and the CLI (``--seed``), so a bad seed is one
    clear line instead of numpy's own error deep inside a method.
    """
    rule = "an integer >= 0" if name.startswith("--") else "None, an integer >= 0 or a numpy.random.Generator"
    if rng is None or isinstance(rng, (np.random.Generator, np.random.SeedSequence)):
        return rng
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        if int(rng) < 0:
            raise InvalidInputError(f"`{name}` must be {rule}; got {int(rng)}.")
        return int(rng)
    raise InvalidTypeError(f"`{name}` must be {rule}; got {_fmt(rng)}.")


class IdentifierColumnWarning(UserWarning):
    """The default variables need a look: columns were left out because they look like
    identifiers (or are constant), columns chosen look like calendar fields, category codes
    or numbering, or columns passed through unmasked could identify or single out records.
    Name the columns in ``variables`` to choose them yourself."""


#: How many columns a note of the default-variables warning names before "and N more".
_NOTE_NAMES = 8


def _names(columns: list, limit: int = _NOTE_NAMES) -> str:
    shown = ", ".join(columns[:limit])
    return shown + (f" and {len(columns) - limit} more" if len(columns) > limit else "")


def _plural(items: list, one: str, many: str) -> str:
    return one if len(items) == 1 else many


def _codes_note(codes: list) -> str:
    """Numeric columns chosen that hold category codes (binary, class labels)."""
    if not codes:
        return ""
    names = _names([f"{_col_name(c)} ({why})" for c, why in codes])
    it = _plural(codes, "it", "them")
    return (f" {names} look{_plural(codes, 's', '')} categorical, microaggregated anyway (released as group "
            f"means, so the release stays k-anonymous with {it}): a group mean of category codes is not a "
            f"category (0.33 is neither 0 nor 1). To keep {it} exact and the release k-anonymous, pass {it} as "
            f"`strata` (--strata); to leave {it} out, name the other columns in `variables` (--variables): "
            f"{_plural(codes, 'it is', 'they are')} then released unmasked, "
            f"{_plural(codes, 'a key variable', 'key variables')} to protect with categorical methods.")


def _doubtful_note(doubtful: list) -> str:
    """Numeric columns chosen that may be numbering rather than measurements."""
    if not doubtful:
        return ""
    names = _names([f"{_col_name(c)} ({why})" for c, why in doubtful])
    it = _plural(doubtful, "it", "them")
    return (f" {names} may be identification numbers rather than measurements, microaggregated anyway: if "
            f"{_plural(doubtful, 'it identifies', 'they identify')} records, name the other columns in `variables` "
            f"(--variables) and remove {it} before release.")


def _passed_note(entries: list) -> str:
    """Text, categorical and boolean columns released unmasked that could single out records."""
    if not entries:
        return ""
    ids = [(c, e.reason) for c, e in entries if e.kind != CATEGORICAL]
    cats = [(c, e.distinct) for c, e in entries if e.kind == CATEGORICAL]
    parts = []
    if ids:
        parts.append("; ".join(f"{_col_name(c)} ({reason})" for c, reason in ids[:_NOTE_NAMES])
                     + (f"; and {len(ids) - _NOTE_NAMES} more" if len(ids) > _NOTE_NAMES else ""))
    if cats:
        remedy = CATEGORY_REMEDY if len(cats) == 1 else \
            CATEGORY_REMEDY.replace("a possible key variable", "possible key variables").replace("suppress it",
                                                                                                "suppress them")
        parts.append(f"{_names([f'{_col_name(c)} ({d} values)' for c, d in cats])} "
                     f"{_plural(cats, 'is', 'are')} categorical: {remedy}")
    return f" Passed through unmasked: {'; '.join(parts)}."


def default_variables(frame: pd.DataFrame, numeric: list, *, stacklevel: int = 2, exclude: Any = None) -> list:
    """The default columns to microaggregate: ``numeric`` without identifier-like and
    constant columns (:func:`~pysdcmicro._columns.identifier_reason`). The API
    (``variables=None``) and the CLI (no ``--variables``) both use it.

    Warns (:class:`IdentifierColumnWarning`, one line) naming the columns chosen and those
    left out, with the reason, and, among the columns chosen, calendar fields, category
    codes (binary or class-label columns, kept: released as group means, the release stays
    k-anonymous with them) and integers that may be numbering (kept: they may be
    measurements); and the other columns of ``frame`` (text, categorical, boolean; not
    ``exclude``, the stratum and weight columns) that pass through unmasked and could
    identify or single out records, most dangerous first.

    If every column would be left out, the error names them and the way to include them.
    """
    import pandas as pd
    import warnings

    chosen, left, codes, doubtful = [], [], [], []
    for c in numeric:
        try:
            values = pd.to_numeric(frame[c], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError):
            chosen.append(c)
            continue
        why = identifier_reason(values, c)
        if why:
            left.append((c, why))
            continue
        chosen.append(c)
        code = category_codes(values, c)
        if code:
            codes.append((c, code))
        elif not _calendar_like(c):
            doubt = doubtful_identifier(values, c)
            if doubt:
                doubtful.append((c, doubt))
    calendar = [c for c in chosen if _calendar_like(c) and c not in {c for c, _ in codes}]
    skip = set(numeric) | set(exclude or ())
    passed = text_columns(frame, [c for c in frame.columns if c not in skip])
    note = ""
    if calendar:
        note = (f" {', '.join(_col_name(c) for c in calendar)} look{'s' if len(calendar) == 1 else ''} like a "
                "calendar field (averaging dates rarely protects anything): name the columns in `variables` "
                "(--variables) to leave it out.")
    note += _codes_note(codes) + _doubtful_note(doubtful) + _passed_note(passed)
    if not left and not note:
        return chosen
    if not left:
        warnings.warn(f"default variables: microaggregating {', '.join(_col_name(c) for c in chosen)}.{note}",
                      IdentifierColumnWarning, stacklevel=stacklevel)
        return chosen
    out = "; ".join(f"{_col_name(c)} ({why})" for c, why in left)
    if not chosen and all(why == "constant" for _, why in left):
        return list(numeric)  # every column constant: the caller's "nothing to microaggregate" error
    if not chosen:
        raise InvalidInputError(
            f"no column to microaggregate by default: every numeric column looks like an identifier or is constant: "
            f"{out}; name the columns in `variables` (--variables) to microaggregate them anyway."
        )
    warnings.warn(
        f"default variables: microaggregating {', '.join(_col_name(c) for c in chosen)}; left out {out}; "
        "name them in `variables` (--variables) to include them." + note,
        IdentifierColumnWarning, stacklevel=stacklevel)
    return chosen


_CALENDAR_WORDS = {"year", "month", "day", "date", "week", "quarter", "yr", "mon", "yyyy", "mm", "dd"}


def _calendar_like(column: Any) -> bool:
    """Whether a column's name is a calendar field's (``MONTH``, ``year``, ``survey_date``)."""
    words = re.split(r"[^a-z]+", str(column).lower())
    return any(w in _CALENDAR_WORDS for w in words if w)
