"""Command-line interface: ``pysdcmicro microaggregate | report | methods | demo``.

Bad input, and a file that cannot be read or written, exit with status 2 and one line
``pysdcmicro: error: <message>`` on stderr (the same text the Python API raises). Outputs
are written as one transaction (:class:`_Outputs`): temporary files in the target folders,
the masked file read back and verified (k-anonymous, IL as reported) before anything is
renamed into place; any failure leaves no output created or changed. ``microaggregate``
exits with status 3 when that release check fails (never expected: it would be a bug, so
it is loud), ``report`` when the masked file it is given is not k-anonymous. Progress is
shown only when stderr is a terminal and ``--quiet`` is not given; Ctrl-C during a search
writes the best partition found so far, with status ``limit`` in the report; Ctrl-C at any
other moment exits with status 130 and one line, leaving no partial file.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import io
import json
import os
import re
import shutil
import signal
import stat
import sys
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from . import __version__, _interrupt, _phases
from ._phases import phase
from ._csvio import CsvFormat, check_shape, read_float_columns, write_csv
from ._errors import InvalidInputError, PysdcmicroError, ReleaseCheckError

__all__ = ["main", "read_table"]

_MISSING_TOKENS = {"", "na", "nan", "null", "none", "n/a", "#n/a", "-nan"}


def _parse_number(text: str) -> float | None:
    """Float value of a CSV cell; None if it is not a number; NaN for a missing marker."""
    t = text.strip()
    if t.lower() in _MISSING_TOKENS:
        return float("nan")
    try:
        return float(t)
    except ValueError:
        return None


_SNIFF_ROWS = 1000


def _tokens(fmt: CsvFormat | None) -> set:
    """The cells that mean "missing" in a numeric column (``--na-values`` added)."""
    if fmt is None or not fmt.na_values:
        return _MISSING_TOKENS
    return _MISSING_TOKENS | {str(t).strip().lower() for t in fmt.na_values}


def _numeric_values(text: pd.Series, fmt: CsvFormat | None = None) -> np.ndarray | None:
    """Float values of a text column if every cell is a number or a missing marker (NaN)
    and at least one is a number; else None. Vectorized; cells pandas cannot parse are
    retried with Python's ``float`` so the rule is exactly :func:`_parse_number`'s."""
    text = text.astype(object)
    stripped = text.str.strip()
    missing = stripped.str.lower().isin(_tokens(fmt)).to_numpy()
    if fmt is not None and fmt.decimal != ".":
        point = stripped.str.contains(".", regex=False).fillna(False)  # not a number with --decimal ','
        stripped = stripped.str.replace(fmt.decimal, ".", regex=False).where(~point, "?")
        text = stripped
    values = np.array(pd.to_numeric(stripped.where(~missing), errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan))
    for i in np.flatnonzero(np.isnan(values) & ~missing):
        v = _parse_number(text.iat[i])
        if v is None or np.isnan(v):
            return None
        values[i] = v
    if missing.all():
        return None
    values[missing] = np.nan
    return values


class _FileError(PysdcmicroError, OSError):
    """A file cannot be read or written (exit status 2, one line). Also an ``OSError``."""


def _os_reason(exc: OSError) -> str:
    """The short reason of an ``OSError`` ("No space left on device"), without the path."""
    if isinstance(exc, PysdcmicroError):
        return str(exc)
    return exc.strerror or (os.strerror(exc.errno) if exc.errno else str(exc)) or type(exc).__name__


def _input_file(path: str) -> Path:
    p = Path(path)
    if p.is_dir():
        raise _FileError(f"input file {path!r} is a folder; give a CSV or Parquet file.")
    if not p.exists():
        raise InvalidInputError(f"input file {path!r} does not exist.")
    if not p.is_file():
        raise _FileError(f"input file {path!r} is not a regular file (it is read twice); "
                         "save the data to a file first.")
    return p


def _read_parquet(p: Path, path: str) -> pd.DataFrame:
    try:
        return pd.read_parquet(p)
    except ImportError:
        raise InvalidInputError(
            f"reading {path!r} needs a Parquet engine; install it with `pip install 'pysdcmicro[parquet]'`."
        ) from None
    except OSError as exc:
        raise _FileError(f"cannot read input file {path!r}: {_os_reason(exc)}.") from None
    except Exception as exc:  # pyarrow raises its own error types
        raise InvalidInputError(f"input file {path!r} is not a readable Parquet file: {exc}") from None


def _read_csv(p: Path, path: str, fmt: CsvFormat | None = None, **kwargs) -> pd.DataFrame:
    if fmt is not None:
        kwargs["sep"] = fmt.sep
        if kwargs.get("dtype") is not str:
            kwargs["decimal"] = fmt.decimal
    try:
        return pd.read_csv(p, keep_default_na=False, **kwargs)
    except pd.errors.EmptyDataError:
        raise InvalidInputError(f"input file {path!r} is empty; it needs a header row and records.") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"input file {path!r} is not a readable CSV file: {exc}") from None
    except OSError as exc:
        raise _FileError(f"cannot read input file {path!r}: {_os_reason(exc)}.") from None


def _check_header(p: Path, path: str, fmt: CsvFormat | None = None) -> list:
    """Refuse duplicate column names, as the API does (pandas would rename `a` to `a.1`),
    and rows that do not have one field per column (:func:`~pysdcmicro._csvio.check_shape`).
    Returns the header's names."""
    fmt = fmt or CsvFormat()
    header = _read_csv(p, path, fmt, header=None, nrows=1, dtype=str)
    names = header.iloc[0].tolist() if len(header) else []
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise InvalidInputError(f"input file {path!r} has two columns named {name!r}; "
                                    "column names must be unique.")
        seen.add(name)
    try:
        check_shape(p, path, names, fmt)
    except OSError as exc:
        raise _FileError(f"cannot read input file {path!r}: {_os_reason(exc)}.") from None
    return names


# Numbers written with formatting that neither pandas nor float() reads: thousands
# separators (1,234.5  1.234,5  1 234  1'234), a decimal comma (3,5); currency signs and
# percent signs are stripped before matching.
_FORMATTED = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d{1,3}(?:\.\d{3})+(?:,\d+)?"
                        r"|\d{1,3}(?:[' \u00a0\u202f]\d{3})+(?:[.,]\d+)?|\d*,\d+)")
_SIGNS = r"[$€£¥%()\s\u00a0\u202f]"


def _formatted_number_example(cells: pd.Series) -> str | None:
    """A cell of a text column that holds numbers written with formatting (thousands
    separators, a currency sign, a decimal comma), when *every* non-missing cell is a number
    once the formatting is removed; else None."""
    text = cells.astype(object).astype(str).str.strip()
    text = text[~text.str.lower().isin(_MISSING_TOKENS)]
    if text.empty:
        return None
    core = text.str.replace(rf"^{_SIGNS}+|{_SIGNS}+$", "", regex=True).str.replace(r"^([-+])[$€£¥]\s*", r"\1",
                                                                               regex=True)
    plain = pd.to_numeric(core.where(core != ""), errors="coerce").notna().to_numpy()
    formatted = core.str.fullmatch(_FORMATTED).fillna(False).to_numpy(dtype=bool)
    if not (plain | formatted).all():
        return None
    needs_work = ~(plain & (core == text).to_numpy())
    if not needs_work.any():
        return None
    return str(text.iloc[int(np.flatnonzero(needs_work)[0])])


def read_table(path: str, variables: list[str] | None = None,
               exclude: list[str] | None = None, fmt: CsvFormat | None = None) -> tuple[pd.DataFrame, list[str]]:
    """Read a CSV or Parquet file so that the columns not microaggregated round-trip exactly.

    Parquet (``.parquet``, ``.pq``; needs ``pyarrow``) keeps its column types. In a CSV file
    the columns to microaggregate are ``variables`` or, by default, every *numeric* column
    not in ``exclude`` (a column is numeric when each cell is a number or a missing marker
    such as an empty cell, NA or NaN, and at least one is a number). Only those are read as
    numbers; all other columns are read as text, so leading zeros, number formatting and
    text pass through unchanged.

    Refused (one-line error): a CSV header naming a column twice (the API refuses duplicate
    names too; pandas would rename the second one); a column named in ``variables`` that
    holds numbers written with formatting (``1,234``, ``$12``, ``3,5``). Such a column in
    the default selection is left as text with a warning naming it and an example value.

    Large CSV files: the first rows are read as text to find the numeric columns, then the
    file is read once with those columns parsed as numbers by pandas' C reader (no Python
    code per cell) and the others as text. If a column turns out not to be numeric further
    down, the file is read again all as text and checked column by column (vectorized).

    Rows must have one field per column of the header, and the file's separator must be
    ``fmt.sep`` (``--sep``; refused otherwise, naming the row). ``fmt.decimal`` is the
    decimal mark of the numbers, ``fmt.na_values`` more cells read as missing in numeric
    columns. Parquet integer columns beyond 2**53 are refused, as the API refuses them.

    Returns the frame and the list of columns to microaggregate.
    """
    fmt = fmt or CsvFormat()
    p = _input_file(path)
    if p.suffix.lower() in (".parquet", ".pq"):
        from ._validation import _check_integer_series, _is_numeric_series

        frame = _read_parquet(p, path)
        excluded = set(exclude or [])
        numeric = [c for c in frame.columns if c not in excluded and _is_numeric_series(frame[c])]
        for c in numeric:  # the API's integer rule, whatever the selection
            _check_integer_series(frame[c], c, frame.index)
        return frame, (numeric if variables is None else list(variables))
    _check_header(p, path, fmt)
    excluded = set(exclude or [])
    head = _read_csv(p, path, fmt, dtype=str, nrows=_SNIFF_ROWS)
    tokens = _tokens(fmt)
    if variables is None:
        candidates = [c for c in head.columns if c not in excluded and _numeric_values(head[c], fmt) is not None]
        unsure = [c for c in head.columns if c not in excluded and c not in candidates
                  and head[c].str.strip().str.lower().isin(tokens).all()]
    else:
        candidates = [c for c in variables if c in head.columns and _numeric_values(head[c], fmt) is not None]
        unsure = [c for c in variables if c in head.columns and c not in candidates]
    dtypes = {c: (np.float64 if c in candidates else str) for c in head.columns}
    na_cells = sorted(set(_NA_CELLS) | {str(t) for t in fmt.na_values} | {str(t).strip() for t in fmt.na_values})
    na = {c: na_cells for c in candidates}
    try:
        frame = _read_csv(p, path, fmt, dtype=dtypes, na_values=na)
    except (ValueError, TypeError):  # a candidate column holds text further down
        frame = _read_csv(p, path, fmt, dtype=str)
        unsure = unsure + candidates
        candidates = []
    chosen = list(candidates)
    parsed = {}
    for col in unsure:
        values = _numeric_values(frame[col], fmt)
        if values is not None:
            parsed[col] = values
            chosen.append(col)
        # else: left as text; validation then names the column and a non-numeric value
    if parsed:  # one new frame, not one column assignment per column (no fragmentation)
        frame = pd.DataFrame({c: parsed[c] if c in parsed else frame[c] for c in frame.columns}, index=frame.index)
    _check_exact_integers(p, path, frame, chosen, fmt)
    # integer columns stay integers, so unchanged ones are written as read (96, not 96.0)
    integers = {c: _as_integers(frame[c]) for c in chosen if _integer_text(head[c])}
    if integers:
        frame = pd.DataFrame({c: integers[c] if c in integers else frame[c] for c in frame.columns}, index=frame.index)
    if variables is None:
        for col in frame.columns:
            if col in excluded or col in chosen:
                continue
            example = _formatted_number_example(head[col])
            if example is not None:
                warnings.warn(f"column {col!r} is text and is released unchanged, not microaggregated: it holds "
                              f"numbers with formatting such as {example!r} (thousands separators, a currency "
                              "sign or a decimal comma); write plain numbers (e.g. 1234.5) to microaggregate it, "
                              "or choose the columns with --variables.", UserWarning, stacklevel=2)
        return frame, [c for c in frame.columns if c in chosen]
    for col in variables:
        if col in frame.columns and col not in chosen:
            example = _formatted_number_example(frame[col])
            if example is not None:
                raise InvalidInputError(
                    f"column {col!r} holds numbers written as text with formatting (e.g. value {example!r}: "
                    "thousands separators, a currency sign or a decimal comma), so it cannot be microaggregated; "
                    "write plain numbers such as 1234.5 in the file (no separators or signs, a decimal point).")
    return frame, list(variables)


def _check_exact_integers(p: Path, path: str, frame: pd.DataFrame, numeric: list, fmt: CsvFormat) -> None:
    """Integers beyond 2**53 in a numeric CSV column are refused, as the API refuses them
    (float64 would round them, so distinct values could collapse); see
    :func:`pysdcmicro._validation.check_integer_text`. A value that reads as 2**53 or more may
    be such an integer (2**53 + 1 reads as 2**53), so those columns are checked on their text."""
    from ._validation import check_integer_text

    big = [c for c in numeric if c in frame.columns and np.nanmax(np.abs(frame[c].to_numpy(dtype=np.float64)),
                                                                  initial=0.0) >= 2 ** 53]
    if big:
        text = _read_csv(p, path, fmt, dtype=str, usecols=big)
        for c in big:
            check_integer_text(text[c], frame[c].to_numpy(dtype=np.float64), c)


def _check_strata_cells(frame: pd.DataFrame, strata: list[str] | None) -> None:
    """Missing markers (empty, NA, NaN, ...) in a CSV stratum column are refused as the API
    refuses NaN strata, instead of becoming a stratum of their own."""
    from ._validation import _col_name, _row_label

    for col in strata or []:
        if col not in frame.columns or pd.api.types.is_numeric_dtype(frame[col].dtype):
            continue  # unknown columns: validation names them; numbers: NaN is checked there
        cells = frame[col].astype(object)
        text = cells.where(cells.isna(), cells.astype(str).str.strip().str.lower())
        missing = (text.isna() | text.isin(_MISSING_TOKENS)).to_numpy()
        if missing.any():
            r = int(np.flatnonzero(missing)[0])
            raise InvalidInputError(
                f"stratum column {_col_name(col)} has a missing value ({cells.iat[r]!r}) at "
                f"{_row_label(frame.index, r)}; every record needs a stratum.")


def _header_names(path: str, fmt: CsvFormat | None = None) -> list[str]:
    """The input file's column names, in order, read on their own: the header row of a CSV
    file, the schema of a Parquet file (what the release must have, in the same order)."""
    if _is_parquet(path):
        try:
            import pyarrow.parquet as pq

            return [str(name) for name in pq.read_schema(path).names if not str(name).startswith("__index_level_")]
        except ImportError:  # pragma: no cover - pandas then needs another engine anyway
            return [str(c) for c in _read_parquet(Path(path), path).columns]
    header = _read_csv(Path(path), path, fmt, header=None, nrows=1, dtype=str)
    return [str(c) for c in header.iloc[0].tolist()] if len(header) else []


def _is_parquet(path: str) -> bool:
    return str(path).lower().endswith((".parquet", ".pq"))


_INTEGER_TEXT = r"\s*-?(?:0|[1-9][0-9]*)\s*"


def _integer_text(text: pd.Series) -> bool:
    """Whether the (first rows of a) text column hold only canonical integers (``96``, ``-3``;
    not ``96.0``, ``007`` or ``1e3``) and missing markers, with at least one integer."""
    text = text.astype(object).fillna("")
    missing = text.str.strip().str.lower().isin(_MISSING_TOKENS)
    return bool((~missing).any() and text[~missing].str.fullmatch(_INTEGER_TEXT).all())


def _as_integers(values: pd.Series) -> pd.Series:
    """A float column of whole numbers (|x| <= 2**53) as int64, or Int64 with missing cells;
    unchanged if any value is not a whole number."""
    x = values.to_numpy(dtype=np.float64, na_value=np.nan)
    missing = np.isnan(x)
    xo = x[~missing]
    if xo.size == 0 or not (np.all(xo == np.round(xo)) and np.all(np.abs(xo) <= 2.0 ** 53)):
        return values
    ints = np.where(missing, 0.0, x).astype(np.int64)
    if not missing.any():
        return pd.Series(ints, index=values.index, name=values.name)
    return pd.Series(pd.arrays.IntegerArray(ints, missing), index=values.index, name=values.name)


def _odd_cells(text: pd.Series, fmt: CsvFormat | None) -> tuple[int, int, int | None]:
    """(numbers, other cells, position of the first other cell) of a text column; missing
    markers count as neither."""
    cells = text.astype(object).fillna("").astype(str).str.strip()
    missing = cells.str.lower().isin(_tokens(fmt)).to_numpy()
    if fmt is not None and fmt.decimal != ".":
        point = cells.str.contains(".", regex=False).to_numpy()
        cells = cells.str.replace(fmt.decimal, ".", regex=False).where(~point, "?")
    number = pd.to_numeric(cells.where(~missing, "0"), errors="coerce").notna().to_numpy() & ~missing
    odd = ~number & ~missing
    first = int(np.flatnonzero(odd)[0]) if odd.any() else None
    return int(number.sum()), int(odd.sum()), first


def _check_almost_numeric(frame: pd.DataFrame, chosen: list, requested: list | None, exclude: list,
                          fmt: CsvFormat) -> None:
    """Refuse a column that holds numbers but a few cells that are not (``:``, ``-``, ``?``, a
    NUL byte, text far down the file): read as text it would pass through unmasked. A
    column named in ``--variables`` is refused for any such cell; in the default selection,
    a text column whose cells are mostly numbers. Numbers written with formatting
    (``1,234``) are not refused here (a warning names them)."""
    names = requested if requested is not None else [c for c in frame.columns if c not in exclude]
    for col in names:
        if col not in frame.columns or col in chosen or pd.api.types.is_numeric_dtype(frame[col].dtype):
            continue
        numbers, odd, first = _odd_cells(frame[col], fmt)
        if first is None or numbers == 0 or (requested is None and numbers < odd):
            continue
        if requested is not None or _formatted_number_example(frame[col]) is None:
            value = frame[col].iat[first]
            if requested is not None and _formatted_number_example(frame[col]) is not None:
                continue  # read_table names the formatting
            hint = ""
            if fmt.decimal == "." and re.fullmatch(r"[-+]?\d*,\d+", str(value).strip()):
                hint = ", --decimal ',' if its numbers have decimal commas"
            raise InvalidInputError(
                f"column {col!r} holds numbers but the cell {value!r} at row {first + 2} of the file (the header "
                f"is row 1) is not a number: read as text, the column would pass through unmasked; pass "
                f"--na-values {str(value).strip() or value!r} if that cell means 'missing'{hint}, or name the "
                "columns to microaggregate with --variables.")


def _looks_numeric(values: pd.Series, fmt: CsvFormat | None) -> str | None:
    """Why a column not microaggregated looks like a quasi-identifier (numeric, or text
    that is mostly numbers), or None."""
    if pd.api.types.is_bool_dtype(values.dtype):
        return None
    if pd.api.types.is_numeric_dtype(values.dtype):
        return "numeric"
    numbers, odd, _ = _odd_cells(values, fmt)
    if numbers and numbers >= odd:
        return "numeric" if odd == 0 else "mostly numbers, read as text"
    if _formatted_number_example(values) is not None:
        return "numbers written with formatting, read as text"
    return None


def _unmasked_columns(frame: pd.DataFrame, masked: list, exclude: list, left_out: dict, named: bool,
                      fmt: CsvFormat | None) -> list[dict]:
    """The columns released unmasked that look like quasi-identifiers, each with the reason
    and the option that includes it (for the warning and the report's headline)."""
    found = []
    for col in frame.columns:
        if col in masked or col in exclude:
            continue
        if col in left_out:
            found.append({"column": _json_name(col), "reason": f"numeric, left out by default ({left_out[col]})",
                          "option": "--variables"})
            continue
        why = _looks_numeric(frame[col], fmt)
        if why is not None:
            reason = f"{why}, not in --variables" if named else f"{why}, not chosen by default"
            found.append({"column": _json_name(col), "reason": reason, "option": "--variables"})
    return found


def _json_name(label: Any) -> Any:
    return int(label) if isinstance(label, (int, np.integer)) else str(label)


def _unmasked_warning(unmasked: list[dict]) -> str:
    listed = "; ".join(f"{u['column']!r} ({u['reason']})" for u in unmasked[:20])
    more = f"; and {len(unmasked) - 20} more" if len(unmasked) > 20 else ""
    return (f"released unmasked, although they look like quasi-identifiers: {listed}{more}; name them in "
            "--variables to microaggregate them.")


def _parse_variable_groups(text: str | None) -> Any:
    """``"a,b;c,d"`` -> ``[["a", "b"], ["c", "d"]]`` (groups of variables); ``"a,b"`` -> ``["a", "b"]``."""
    if text is None or ";" not in text:
        return _split_list(text)
    groups = [_split_list(part) for part in text.split(";")]
    return groups


def _csv_text(data: pd.DataFrame, fmt: CsvFormat | None = None) -> str:
    if fmt is None or fmt.default:
        return write_csv(data)
    return data.to_csv(index=False, sep=fmt.sep, decimal=fmt.decimal)


def _write_table(data: pd.DataFrame, path: str, *, parquet: bool | None = None,
                 fmt: CsvFormat | None = None) -> None:
    if _is_parquet(path) if parquet is None else parquet:
        try:
            data.to_parquet(path, index=False)
        except ImportError:
            raise InvalidInputError(
                f"writing {path!r} needs a Parquet engine; install it with `pip install 'pysdcmicro[parquet]'`."
            ) from None
    elif fmt is None or fmt.default:
        write_csv(data, path)
    else:  # the input's separator and decimal mark
        data.to_csv(path, index=False, sep=fmt.sep, decimal=fmt.decimal)


# ----------------------------------------------------------------------------------------
# Output files: checked before any work, then written as one transaction.
#
# Every output is written to a temporary file in its target's folder (same filesystem, so
# the final rename is atomic), the masked file is read back and verified, and only when
# every output is complete are they renamed into place. On any failure (an error, a failed
# release check, Ctrl-C) the temporary files are removed: no output path is created or
# changed, a pre-existing file is left as it was.
# ----------------------------------------------------------------------------------------

_TEMP_PREFIX = ".pysdcmicro-"


def _same_file(a: str, b: str) -> bool:
    """Whether two paths name one file: equal once resolved (symlinks, ./, ..), or the same
    inode (hard links, case-insensitive file systems) when both exist."""
    try:
        if os.path.realpath(a) == os.path.realpath(b):
            return True
        return os.path.exists(a) and os.path.exists(b) and os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def _is_special(path: str) -> bool:
    """An existing path that is not a regular file or folder: /dev/null, /dev/stdout, a FIFO."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _check_output_paths(inputs: dict[str, str | None], outputs: dict[str, str | None]) -> None:
    """Refuse, before any work, an output that is an input file, two outputs that are one
    file, an output that is a folder, and an output whose folder does not exist."""
    given_in = {name: path for name, path in inputs.items() if path}
    given_out = {name: path for name, path in outputs.items() if path}
    for opt, path in given_out.items():
        for name, source in given_in.items():
            if _same_file(path, source):
                raise InvalidInputError(f"{opt} {path!r} is the input file {source!r} ({name}); "
                                        "write the output to another file.")
    names = list(given_out)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            pa, pb = given_out[a], given_out[b]
            if not (_is_special(pa) and _is_special(pb)) and _same_file(pa, pb):
                raise InvalidInputError(f"{a} and {b} name the same file {pb!r}; give each output its own file.")
    for opt, path in given_out.items():
        if os.path.isdir(path):
            raise _FileError(f"{opt} {path!r} is a folder; give a file name.")
        folder = os.path.dirname(os.path.realpath(path))
        if not os.path.isdir(folder):
            raise _FileError(f"{opt} {path!r}: the folder {os.path.dirname(path) or '.'!r} does not exist.")
        if os.path.exists(path) and not os.access(path, os.W_OK):  # a read-only file stays protected
            raise _FileError(f"{opt} {path!r}: Permission denied (the file is read-only).")
        if not _is_special(path) and not os.access(folder, os.W_OK | os.X_OK):
            raise _FileError(f"{opt} {path!r}: Permission denied (cannot create files in {folder!r}).")


@contextlib.contextmanager
def _sigint_held():
    """Hold Ctrl-C (SIGINT) during a short critical section (the renames, the clean-up) and
    raise it afterwards, so that a second Ctrl-C never leaves half a set of outputs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    try:
        previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    except (ValueError, OSError):  # pragma: no cover - no signal support here
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler if previous is None else previous)
        if received and _interrupt.is_managed():
            _interrupt.deferred(len(received))  # counted: a second Ctrl-C of the run aborts
        elif received and previous is not signal.SIG_IGN:
            raise KeyboardInterrupt


def _fsync(path: str) -> None:
    """Flush a written file to disk, so that the rename never makes a half-written file the
    output after a crash. File systems that cannot (EINVAL, ENOTSUP) are let be."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise
    finally:
        os.close(fd)


def _new_file_mode(target: str) -> int:
    """Permissions a plain ``open(target, "w")`` would give: the existing file's, or
    0o666 minus the umask (mkstemp makes 0o600 files)."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        return 0o666 & ~_umask()


def _umask() -> int:
    try:  # Linux: read it without changing it (other threads may be creating files)
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


class _Outputs:
    """The output files of one command, written as a transaction (see above)::

        with _Outputs() as out:
            tmp = out.write("out.csv", "--output", lambda p: frame.to_csv(p))
            check(tmp)                     # read back, verify: raises -> nothing written
            out.commit()                   # every output renamed into place
    """

    def __init__(self) -> None:
        self._pending: list[tuple[str, str, bool]] = []  # (temporary file, target, target is special)
        self._text: list[tuple[str, Any]] = []  # (text, stream): written at commit, before the renames

    def __enter__(self) -> "_Outputs":
        return self

    def __exit__(self, *exc: Any) -> bool:
        self.discard()
        return False

    def write(self, target: str, what: str, writer: Any) -> str:
        """Call ``writer(temporary_path)`` and return that path; ``what`` names the output
        in error messages. An ``OSError`` becomes one line (exit status 2)."""
        special = _is_special(target)
        real = os.path.realpath(target)  # through a symlink: the link is kept, its target replaced
        folder = tempfile.gettempdir() if special else (os.path.dirname(real) or ".")
        try:
            fd, tmp = tempfile.mkstemp(prefix=_TEMP_PREFIX, suffix="-" + os.path.basename(real), dir=folder)
        except OSError as exc:
            raise _FileError(f"cannot write {what} {target!r}: {_os_reason(exc)}.") from None
        os.close(fd)
        self._pending.append((tmp, target if special else real, special))
        try:
            writer(tmp)
            _fsync(tmp)
            if not special:
                os.chmod(tmp, _new_file_mode(real))
        except OSError as exc:
            raise _FileError(f"cannot write {what} {target!r}: {_os_reason(exc)}.") from None
        return tmp

    def text(self, text: str, stream: Any) -> None:
        """Write ``text`` to ``stream`` (standard output) at :meth:`commit`."""
        self._text.append((text, stream))

    def commit(self) -> None:
        """Put every output in place: first the outputs that cannot be undone (special files
        such as /dev/full, a FIFO or a pipe, and standard output), so that a failure there
        leaves every regular file as it was; then the renames (Ctrl-C held until all are done)."""
        for tmp, target, special in [entry for entry in self._pending if entry[2]]:
            _copy_to_special(tmp, target)
            self._pending.remove((tmp, target, special))
            _COMMITTED.append(target)
        for text, stream in self._text:
            try:
                stream.write(text)
                stream.flush()
            except BrokenPipeError:
                raise
            except (OSError, ValueError) as exc:
                raise _FileError(f"cannot write standard output: {_os_reason(exc) if isinstance(exc, OSError) else exc}"
                                 ".") from None
        self._text.clear()
        with _sigint_held():
            for tmp, target, _ in self._pending:
                try:
                    os.replace(tmp, target)
                except OSError as exc:
                    raise _FileError(f"cannot write {target!r}: {_os_reason(exc)}.") from None
                _COMMITTED.append(target)
            self._pending.clear()

    def discard(self) -> None:
        """Remove the temporary files not renamed into place."""
        with _sigint_held():
            for tmp, _, _ in self._pending:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            self._pending.clear()


def _copy_to_special(tmp: str, target: str) -> None:
    """Copy a finished temporary file to a special file (a device, a FIFO, a pipe). A FIFO
    with no reader is refused at once (a blocking open would wait for ever)."""
    try:
        try:
            fd = os.open(target, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno == errno.ENXIO:
                raise _FileError(f"cannot write {target!r}: it is a FIFO (named pipe) with no reader; start the "
                                 "reader first, or write to a regular file.") from None
            raise
        try:
            os.set_blocking(fd, True)
            with open(tmp, "rb") as src, os.fdopen(fd, "wb", closefd=False) as dst:
                shutil.copyfileobj(src, dst)
        finally:
            os.close(fd)
        os.unlink(tmp)
    except _FileError:
        raise
    except OSError as exc:
        raise _FileError(f"cannot write {target!r}: {_os_reason(exc)}.") from None


def _verify(original: pd.DataFrame, released: pd.DataFrame, result: Any, *,
            what: str = "the release") -> np.ndarray | None:
    """The release check run before anything is renamed into place or printed (exit
    status 3): the released values (the masked file read back, or the CSV text parsed back)
    must be k-anonymous and lose exactly the information the result reports
    (:func:`pysdcmicro.verify_release`). Returns the sizes of the released equivalence
    classes it found (None with missing cells), for the report."""
    from ._release import _check_release

    return _check_release(original, released, result, what=what)


def _parse_blocks(text: str) -> Any:
    t = text.strip().lower()
    if t == "auto":
        return "auto"
    if t in ("none", "off", "0"):
        return None
    try:
        return int(t)
    except ValueError:
        raise InvalidInputError(f"--blocks must be auto, none or a block size (integer); got {text!r}.") from None


def _split_list(text: str | None) -> list[str] | None:
    if text is None:
        return None
    items = [item.strip() for item in text.split(",")]
    if not all(items):
        raise InvalidInputError(f"a column list must be names separated by commas; got {text!r}.")
    return items


def _parse_options(pairs: Sequence[str], spec, owner: str) -> dict:
    options: dict[str, Any] = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise InvalidInputError(f"an option must be written NAME=VALUE; got {pair!r}.")
        name, value = pair.split("=", 1)
        name = name.strip().replace("-", "_")
        if spec is None:
            options[name] = value
            continue
        spec.check_options({name: None})
        options[name] = spec.options[name].coerce(value, owner)
    return options


def _add_format_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sep", default=",", metavar="CHAR",
                        help="field separator of the CSV input, also used for the CSV output (default ','; "
                             "'\\t' or tab for tabs)")
    parser.add_argument("--decimal", default=".", choices=[".", ","],
                        help="decimal mark of the numbers in the CSV input and output (default '.')")
    parser.add_argument("--na-values", default=None, metavar="CELLS",
                        help="comma-separated cells that mean 'missing' in numeric columns, besides the empty "
                             "cell, NA, NaN, null, None, N/A (e.g. --na-values ':,-,?')")


def _csv_format(args: argparse.Namespace) -> CsvFormat:
    """The input's CSV format from ``--sep``, ``--decimal``, ``--na-values``."""
    sep = {"\\t": "\t", "tab": "\t", "TAB": "\t"}.get(args.sep, args.sep)
    if len(sep) != 1 or sep in ('"', "\n", "\r"):
        raise InvalidInputError(f"--sep must be one character (e.g. ';' or '\\t'); got {args.sep!r}.")
    if sep == args.decimal:
        raise InvalidInputError(f"--sep and --decimal are both {sep!r}; a decimal comma needs another separator "
                                "(e.g. --sep ';').")
    na = tuple(t for t in (args.na_values or "").split(",") if t != "") if args.na_values is not None else ()
    if args.na_values is not None and not na:
        raise InvalidInputError(f"--na-values must list cells separated by commas; got {args.na_values!r}.")
    return CsvFormat(sep=sep, decimal=args.decimal, na_values=na)


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pysdcmicro",
        description="Microaggregation of numerical microdata (k-anonymity with least information loss).",
    )
    parser.add_argument("--version", action="version", version=f"pysdcmicro {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    m = sub.add_parser("microaggregate", help="microaggregate a CSV or Parquet file",
                       description="Microaggregate the chosen columns of a CSV or Parquet file; other columns pass "
                                   "through untouched.")
    m.add_argument("input", metavar="INPUT", help="input CSV file with a header row, or a .parquet file")
    m.add_argument("--k", type=int, required=True, help="minimum group size (>= 2)")
    m.add_argument("--method", default="auto",
                   help="method name (see `pysdcmicro methods`); default auto: without --time-limit a fixed, "
                        "reproducible amount of work (never worse than MDAV + two-swap), with it the best "
                        "partition the time allows, on every core")
    m.add_argument("--variables", help="comma-separated columns to microaggregate (default: the numeric columns, "
                   "except identifier-like and constant ones, which a warning names); "
                   "groups of variables microaggregated separately are separated by ';' (\"a,b;c,d\")")
    m.add_argument("--missing", default="keep", choices=["keep", "error"],
                   help="missing cells in the chosen columns: keep them missing in the output (default; k-anonymity "
                        "with a missing cell matching any value, as sdcMicro) or refuse them")
    m.add_argument("--measure", default="mean", choices=["mean", "median", "trim"],
                   help="released value of a group: mean (default), median or trimmed mean (see --trim)")
    m.add_argument("--trim", type=float, default=0.0, metavar="P",
                   help="with --measure trim: proportion dropped at each end of each group (0 to 0.5)")
    m.add_argument("--weights", metavar="COLUMN", default=None,
                   help="sampling weight column: groups release weighted means (weighted totals kept); the column "
                        "passes through untouched")
    m.add_argument("--decimals", type=int, default=None, metavar="N",
                   help="round released values to N decimals (0: integers, no decimal point)")
    m.add_argument("--strata", help="comma-separated columns: microaggregate within each combination of their values")
    m.add_argument("--strata-scaling", default="global", choices=["global", "stratum"],
                   help="with --strata: z-scores over the whole data (default) or within each stratum (as sdcMicro)")
    m.add_argument("--output", "-o", help="masked file to write: CSV, or Parquet if the name ends with .parquet "
                                          "(default: CSV on standard output)")
    m.add_argument("--report", help="JSON report to write (k-anonymity checked on the written output, "
                   "utility and risk measures)")
    m.add_argument("--html", help="HTML report to write, with plots when matplotlib is installed")
    m.add_argument("--seed", type=int, default=None,
                   help="random seed, an integer >= 0 (default: one is drawn and recorded in the report's "
                        "settings.rng); a run with the same seed and no --time-limit repeats exactly")
    m.add_argument("--time-limit", type=float, default=None,
                   help="seconds for the algorithm, counted from the start of the microaggregation (reading "
                        "the input and writing the outputs come on top); the best partition found is returned. "
                        "A run stopped by the clock depends on the machine: not reproducible even with --seed")
    m.add_argument("--option", action="append", default=[], metavar="NAME=VALUE", help="a method option (repeatable)")
    m.add_argument("--improve", action="append", default=None, metavar="NAME",
                   help="an improvement step run after the method (repeatable)")
    m.add_argument("--improve-option", action="append", default=[], metavar="NAME=VALUE",
                   help="an option of the improvement step (with one --improve)")
    m.add_argument("--scaling", default="standardize", choices=["standardize", "none"],
                   help="compare records on z-scores (default) or raw values; IL is always on z-scores")
    m.add_argument("--blocks", default="auto", metavar="auto|none|SIZE",
                   help="large-data path: blocks of near records solved in parallel, borders repaired; "
                        "'auto' (default) above 50000 records, 'none' never, or a block size")
    m.add_argument("--n-jobs", type=int, default=None, help="worker processes for the blocks (default: all cores)")
    m.add_argument("--dask", metavar="ADDRESS", default=None,
                   help="run the blocks on the Dask scheduler at ADDRESS (needs pysdcmicro[dask])")
    _add_format_arguments(m)
    m.add_argument("--quiet", "-q", action="store_true", help="no progress or summary output")
    m.epilog = ("Exit status: 0 done (also after Ctrl-C during the search, with the best partition found so far), "
                "2 bad input or a file that cannot be read or written, 3 the release check failed (the output read "
                "back is not k-anonymous or not the reported IL), 130 interrupted while reading or writing. "
                "Outputs are written only when all of them are complete and the release is verified: after any "
                "failure no output file is created or changed. An output that is an input file is refused.")

    r = sub.add_parser("report", help="report on a masked CSV file against its original",
                       description="Release report of MASKED.csv against ORIGINAL.csv (rows in the same order): "
                                   "k-anonymity, information loss, sdcMicro's IL1s and eigen utility measures, "
                                   "interval disclosure risk, per-variable changes.")
    r.add_argument("original", metavar="ORIGINAL.csv")
    r.add_argument("masked", metavar="MASKED.csv")
    r.add_argument("--k", type=int, default=None, help="the k to verify (default: report the smallest class only)")
    r.add_argument("--variables", help="comma-separated masked columns (default: the numeric columns that differ)")
    r.add_argument("--json", help="JSON report to write")
    r.add_argument("--html", help="HTML report to write, with plots when matplotlib is installed")
    r.add_argument("--sd-fraction", type=float, default=0.05,
                   help="interval disclosure risk: half-width in standard deviations of the masked data "
                        "(sdcMicro dRisk's k; default 0.05)")
    _add_format_arguments(r)
    r.add_argument("--quiet", "-q", action="store_true", help="no text report on standard output")
    r.epilog = ("Exit status: 0 k-anonymous (or no --k given), 2 bad input or a file that cannot be read or "
                "written, 3 not k-anonymous (the reports are still written: they say why), 130 interrupted.")

    sub.add_parser("methods", help="list the registered methods and improvement steps")

    d = sub.add_parser("demo", help="run on an embedded, generated data set and print a report")
    d.add_argument("--k", type=int, default=3)
    d.add_argument("--method", default="mdav",
                   help="method name (default mdav, quick and reproducible for a demonstration; "
                        "`microaggregate` and the library default to auto)")
    d.add_argument("--n", type=int, default=600, help="number of generated records")
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--option", action="append", default=[], metavar="NAME=VALUE")
    d.add_argument("--output", "-o", help="also write the masked data as CSV")
    d.add_argument("--original", help="also write the generated original data as CSV")
    d.add_argument("--report", help="also write the JSON report")
    d.add_argument("--html", help="also write the HTML report (with plots when matplotlib is installed)")

    # `pysdcmicro sdcmicro IN.rds OUT.rds`: the R package's back end (bridges/_command.py, imported
    # only here and when the command runs; it loads rpy2 only then).
    from .bridges import _command as _sdcmicro_command
    _sdcmicro_command.add_arguments(sub.add_parser(
        "sdcmicro", help="microaggregate an sdcMicroObj saved as .rds (needs R, rpy2 and sdcMicro)",
        description="Run a pysdcmicro method on an sdcMicroObj saved with saveRDS(), as "
                    "pysdcmicro.bridges.sdcmicro.microaggregation does (risk and utility refreshed by sdcMicro, "
                    "undolast() works), and save the new object."))
    parser.set_defaults(_sdcmicro_handler=_sdcmicro_command.run)
    return parser


def _cmd_methods(args: argparse.Namespace) -> int:
    from ._registry import all_improvements, all_methods

    print("Methods (--method NAME):")
    for name, spec in all_methods().items():
        print(f"  {name:<20} {spec.summary}")
        if spec.options:
            opts = ", ".join(f"{o.name}={o.default!r}" for o in spec.options.values())
            print(f"  {'':<20}   options: {opts}")
    improvements = all_improvements()
    print("\nImprovement steps (--improve NAME):")
    if not improvements:
        print("  (none registered)")
    for name, spec in improvements.items():
        print(f"  {name:<20} {spec.summary}")
        if spec.options:
            opts = ", ".join(f"{o.name}={o.default!r}" for o in spec.options.values())
            print(f"  {'':<20}   options: {opts}")
    return 0


def _cmd_microaggregate(args: argparse.Namespace) -> int:
    from ._api import _progress_callback, microaggregate
    from ._validation import check_rng
    from ._registry import get_improvement, get_method

    _check_output_paths({"INPUT": args.input},
                        {"--output": args.output, "--report": args.report, "--html": args.html})
    spec = get_method(args.method)
    options = _parse_options(args.option, spec, f"method {spec.name!r}")
    improve = None
    improve_options = None
    if args.improve:
        improve = [get_improvement(name).name for name in args.improve]
        if args.improve_option:
            if len(improve) != 1:
                raise InvalidInputError("--improve-option needs exactly one --improve step.")
            step = get_improvement(improve[0])
            improve_options = _parse_options(args.improve_option, step, f"improvement {step.name!r}")
    elif args.improve_option:
        raise InvalidInputError("--improve-option was given without --improve.")
    strata = _split_list(args.strata)
    check_rng(args.seed, "--seed")
    from .large._parquet import run_cli, streaming_applies  # Parquet in and out with --dask: read in batches

    if streaming_applies(args):
        return run_cli(args, method=spec.name, options=options, improve=improve, improve_options=improve_options,
                       blocks=_parse_blocks(args.blocks))
    with _interrupt.managed():  # first Ctrl-C: stop and write what there is; second: abort (exit 130)
        return _run_microaggregate(args, spec, options, improve, improve_options, strata)


def _run_microaggregate(args: argparse.Namespace, spec: Any, options: dict, improve: Any, improve_options: Any,
                        strata: list[str] | None) -> int:
    from ._api import _progress_callback, microaggregate
    from ._validation import default_variables

    requested = _parse_variable_groups(args.variables)
    groups = requested if requested and isinstance(requested[0], list) else None
    flat = [v for group in groups for v in group] if groups else requested
    exclude = (strata or []) + ([args.weights] if args.weights else [])
    fmt = _csv_format(args)
    with phase("read"):
        frame, variables = read_table(args.input, flat, exclude=exclude or None, fmt=fmt)
    read_columns = _header_names(args.input, fmt)
    if not _is_parquet(args.input):
        _check_almost_numeric(frame, variables, flat, exclude, fmt)
    _check_strata_cells(frame, strata)
    weights = None
    if args.weights:
        if args.weights not in frame.columns:
            raise InvalidInputError(f"unknown column {args.weights!r} in --weights; the data has columns: "
                                    f"{', '.join(map(str, frame.columns[:20]))}.")
        values = frame[args.weights]
        if not pd.api.types.is_numeric_dtype(values.dtype):  # read as text (it is not microaggregated)
            parsed = _numeric_values(values, fmt)
            if parsed is None:
                bad = next(v for v in values if _parse_number(v) is None)
                raise InvalidInputError(f"weight column {args.weights!r} must be numeric; got value {bad!r}.")
            values = pd.Series(parsed, index=values.index, name=args.weights)
        weights = values
    if not variables:
        raise InvalidInputError(f"input file {args.input!r} has no numeric column to microaggregate; "
                                "pass --variables or check the file.")
    left_out: dict = {}
    if args.variables is None:  # the API's rule: identifier-like and constant columns left out, with a warning
        from ._validation import identifier_reason

        chosen = default_variables(frame, variables)
        left = [c for c in variables if c not in chosen]
        for c in left:
            left_out[c] = identifier_reason(pd.to_numeric(frame[c], errors="coerce").to_numpy(
                dtype=np.float64, na_value=np.nan), c) or "left out by default"
        if left and not args.input.lower().endswith((".parquet", ".pq")):
            # they pass through untouched: their text as written ("007", "1"), not the parsed numbers
            text = _read_csv(Path(args.input), args.input, fmt, dtype=str, usecols=left)
            for c in left:
                frame[c] = text[c].to_numpy()
        variables = chosen
    show = not args.quiet and sys.stderr.isatty()

    with phase("microaggregate"):
        result = microaggregate(
            frame, args.k, method=spec.name, variables=groups if groups else variables, strata=strata,
            missing=args.missing, measure=args.measure, trim=args.trim, weights=weights, decimals=args.decimals,
            improve=improve, improve_options=improve_options, scaling=args.scaling,
            strata_scaling=args.strata_scaling, rng=args.seed,
            time_limit=args.time_limit, progress=_progress_callback(True) if show else None,
            blocks=_parse_blocks(args.blocks), n_jobs=args.n_jobs, client=args.dask, **options,
        )
    if [str(c) for c in result.data.columns] != read_columns:
        raise ReleaseCheckError(f"release check failed: the columns to write ({', '.join(map(str, result.data.columns))}) "
                                f"are not the columns of the input file ({', '.join(read_columns)}), in order")
    unmasked = _unmasked_columns(frame, list(result.variables), exclude, left_out, args.variables is not None, fmt)
    rep = _write_release(result, frame, output=args.output, stdout=not args.output, report_path=args.report,
                         html=args.html, extra={"input": str(args.input), "output": args.output}, fmt=fmt,
                         unmasked=unmasked)
    named = [u for u in unmasked if u["reason"].endswith("not in --variables")]
    if named:  # (left out by default: the default selection's warning names them already)
        warnings.warn(_unmasked_warning(named), UserWarning, stacklevel=2)
    if not args.quiet:
        stream = sys.stdout if args.output else sys.stderr
        with phase("text report"):
            print(rep.to_text(), file=stream)
    return 0


def _write_release(result: Any, original: pd.DataFrame, *, output: str | None, stdout: bool,
                   report_path: str | None, html: str | None, extra: dict,
                   before: Sequence[tuple[str, str, Any]] = (), fmt: CsvFormat | None = None,
                   unmasked: list | None = None) -> Any:
    """Write a release as one transaction and return its report.

    The masked data go to ``output`` (CSV or Parquet) or, with ``stdout``, are built as CSV
    text in memory; either way they are read back and verified (:func:`_verify`) before any
    file is renamed into place or any byte is printed. Then the JSON (``report_path``) and
    HTML (``html``) reports are written from the released values, and every output (also
    ``before``: ``(path, what, writer)`` triples such as the demo's original data) is
    renamed into place at once. Any failure: nothing written, no file changed.
    """
    from .reporting import report

    text = None
    variables = list(result.variables)
    with _Outputs() as out:
        for path, what, writer in before:
            out.write(path, what, writer)
        what = f"the release for {output or 'standard output'}" if (output or stdout) else "the release"
        if output:
            parquet = _is_parquet(output)
            with phase("write"):
                tmp = out.write(output, "the masked file (--output)",
                                lambda p: _write_table(result.data, p, parquet=parquet, fmt=fmt))
            with phase("read back and verify"):
                released, sizes = _read_back_and_verify(lambda: tmp, variables, parquet, original, result, what,
                                                        fmt)
            checked_on = f"the written file {output}"
        elif stdout:
            text = _csv_text(result.data, fmt)
            released, sizes = _read_back_and_verify(lambda: io.StringIO(text), variables, False, original, result,
                                                    what, fmt)
            checked_on = "the CSV written to standard output"
        else:
            released, checked_on = None, None
            sizes = _verify(original, result.data[variables], result, what=what)
        skipped = None
        if _interrupt.received() or (result.status == "limit" and "interrupted (Ctrl-C)" in (result.message or "")):
            skipped = _MEASURES_SKIPPED  # the release was checked above (k-anonymous, IL as reported)
        try:
            with _interrupt.stoppable():  # a Ctrl-C now stops the measures (record linkage: 13 s at 10^6)
                rep = report(result, original, released=released, checked_on=checked_on, measures_skipped=skipped,
                             class_sizes=sizes)
        except KeyboardInterrupt:
            if not _interrupt.first_only():
                raise
            skipped = _MEASURES_SKIPPED
            rep = report(result, original, released=released, checked_on=checked_on, measures_skipped=skipped,
                         class_sizes=sizes)
        if not rep.k_anonymous:  # pragma: no cover - _verify refuses it first
            raise ReleaseCheckError("release check failed: the report finds the release not k-anonymous")
        rep.unmasked = list(unmasked or [])
        if report_path:
            with phase("json"):
                out.write(report_path, "the JSON report (--report)", lambda p: _write_json(p, result, rep, **extra))
        if html:
            with phase("html"):
                out.write(html, "the HTML report (--html)",
                          lambda p: _write_html(p, rep, plots=False if skipped else None, stoppable=True))
        if text is not None:
            out.text(text, sys.stdout)
        with phase("commit"):
            out.commit()
    return rep


def _read_back_and_verify(source: Any, variables: list, parquet: bool, original: pd.DataFrame, result: Any,
                          what: str, fmt: CsvFormat | None = None) -> tuple[pd.DataFrame, np.ndarray | None]:
    """Read the written release back (``source()`` gives the path or a fresh text buffer)
    and verify it. CSV is first read by a fast parser (pyarrow's multi-threaded one, else
    pandas' C parser); if that does not verify, it is read again with every
    cell parsed by Python's ``float`` (correctly rounded, the rule of :func:`read_table`), so
    a parser rounding in the last place can never refuse a correct release."""
    released = _read_released(source(), variables, parquet=parquet, fast=True, n_rows=len(original), fmt=fmt)
    try:
        sizes = _verify(original, released, result, what=what)
    except ReleaseCheckError:
        if parquet:
            raise
        released = _read_released(source(), variables, parquet=False, fmt=fmt)
        sizes = _verify(original, released, result, what=what)
    return released, sizes


_NA_CELLS = sorted(_MISSING_TOKENS | {t.upper() for t in _MISSING_TOKENS} | {"NaN", "Null", "None", "N/A", "-NaN"})


def _read_released(source: Any, variables: list, *, parquet: bool | None = None,
                   fast: bool = False, n_rows: int | None = None, fmt: CsvFormat | None = None) -> pd.DataFrame:
    """The released values of ``variables`` as written: the CSV read back, cells parsed as
    numbers exactly as :func:`read_table` parses them (vectorized), or the Parquet file.
    With ``fast``, pandas' C parser reads the CSV numbers (correctly rounded in pandas 3;
    see :func:`_read_back_and_verify` for the exact second reading)."""
    if parquet is None:
        parquet = isinstance(source, (str, Path)) and _is_parquet(str(source))
    if parquet:
        return _read_parquet(Path(source), str(source))[list(variables)].astype(np.float64)
    sep, decimal = (",", ".") if fmt is None else (fmt.sep, fmt.decimal)
    if fast and sep == "," and decimal == ".":
        frame = read_float_columns(source, list(variables), _NA_CELLS, n_rows)  # pyarrow, multi-threaded
        if frame is not None:
            return frame
        if hasattr(source, "seek"):
            source.seek(0)
        wanted = set(map(str, variables))
        try:
            frame = pd.read_csv(source, dtype=np.float64, keep_default_na=False, na_values=_NA_CELLS,
                                usecols=lambda c: c in wanted, sep=sep, decimal=decimal)
            return frame[list(variables)]
        except (ValueError, TypeError):  # a cell that is not a number: the exact reading says which
            if hasattr(source, "seek"):
                source.seek(0)
    raw = pd.read_csv(source, dtype=str, keep_default_na=False, usecols=lambda c: c in set(map(str, variables)),
                      sep=sep)
    columns = {}
    for col in variables:
        values = _numeric_values(raw[col], None if fmt is None else CsvFormat(sep, decimal))
        if values is None:  # pragma: no cover - a bug, not a user error
            raise ReleaseCheckError(f"release check failed: the written column {col!r} holds a value that is "
                                    "not a number")
        columns[col] = values
    return pd.DataFrame(columns, index=raw.index)  # one frame, not one column at a time


def _write_json(path: str, result: Any, rep: Any, **extra: Any) -> None:
    data = result.to_dict() if result is not None else {}
    data.update(rep.to_dict())
    data.update(extra)
    Path(path).write_text(json.dumps(data, indent=2) + "\n")


_MEASURES_SKIPPED = ("utility and risk measures (and plots) not computed: the run was interrupted (Ctrl-C) and the "
                     "outputs are written at once; `pysdcmicro report ORIGINAL MASKED` computes them")


def _write_html(path: str, rep: Any, plots: bool | None = None, stoppable: bool = False) -> None:
    if stoppable and plots is not False:  # a first Ctrl-C while plotting: the page without plots
        try:
            with _interrupt.stoppable():
                return _write_html(path, rep, plots)
        except KeyboardInterrupt:
            if not _interrupt.first_only():
                raise
            print("pysdcmicro: note: interrupted (Ctrl-C): the HTML report is written without its plots.",
                  file=sys.stderr)
            plots = False
    if plots is not False:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            print("pysdcmicro: note: the HTML report has no plots: matplotlib is not installed "
                  "(pip install \"pysdcmicro[plot]\").", file=sys.stderr)
    rep.to_html(path, plots=plots)


def _cmd_report(args: argparse.Namespace) -> int:
    from .reporting import compare

    _check_output_paths({"ORIGINAL": args.original, "MASKED": args.masked}, {"--json": args.json, "--html": args.html})
    variables = _split_list(args.variables)
    fmt = _csv_format(args)
    original, numeric = read_table(args.original, variables, fmt=fmt)
    masked, _ = read_table(args.masked, numeric, fmt=fmt)
    rep = compare(original, masked, variables=variables, k=args.k, sd_fraction=args.sd_fraction,
                  checked_on=f"the file {args.masked}")
    rep.unmasked = _unmasked_columns(masked, list(rep.variables), [], {}, variables is not None, fmt)
    # The reports are this command's product, also when they say "not k-anonymous" (exit 3).
    with _Outputs() as out:
        if args.json:
            out.write(args.json, "the JSON report (--json)",
                      lambda p: _write_json(p, None, rep, original=str(args.original), masked=str(args.masked)))
        if args.html:
            out.write(args.html, "the HTML report (--html)", lambda p: _write_html(p, rep))
        out.commit()
    if not args.quiet:
        print(rep.to_text())
    return 0 if rep.k_anonymous is not False else 3


def _cmd_demo(args: argparse.Namespace) -> int:
    from ._api import microaggregate
    from ._registry import get_method
    from .datasets import make_demo_data

    _check_output_paths({}, {"--original": args.original, "--output": args.output, "--report": args.report,
                             "--html": args.html})
    spec = get_method(args.method)
    options = _parse_options(args.option, spec, f"method {spec.name!r}")
    frame = make_demo_data(args.n, rng=args.seed)
    variables = ["employees", "turnover", "wages", "assets", "profit"]
    print(f"pysdcmicro {__version__} demo: a generated business survey of {len(frame)} firms "
          f"(no download; pysdcmicro.datasets.make_demo_data(n={args.n}, rng={args.seed})).")
    print(f"Quasi-identifiers microaggregated: {', '.join(variables)}; k = {args.k}; method = {spec.name}.\n")
    result = microaggregate(frame, args.k, method=spec.name, variables=variables, rng=args.seed, **options)
    print(result.summary())
    masked = result.data[variables]
    counts = masked.groupby(variables, sort=False).size()
    print(f"\nk-anonymity check on the released values: smallest group of identical records = "
          f"{int(counts.min())} (k = {args.k}): {'OK' if counts.min() >= args.k else 'FAILED'}")
    print("\nFirst records, original then released:")
    with pd.option_context("display.width", 120, "display.max_columns", 20):
        print(frame.head(5).to_string(index=False))
        print()
        print(result.data.head(5).round(2).to_string(index=False))
    print("\nMeans are preserved exactly; spread shrinks:")
    rows = []
    for col in variables:
        rows.append((col, frame[col].mean(), result.data[col].mean(), frame[col].std(), result.data[col].std()))
    print(pd.DataFrame(rows, columns=["variable", "mean before", "mean after", "sd before", "sd after"])
          .round(3).to_string(index=False))
    if args.original or args.output or args.report or args.html:
        before = [(args.original, "the original data (--original)", lambda p: write_csv(frame, p))] \
            if args.original else []
        _write_release(result, frame, output=args.output, stdout=False, report_path=args.report, html=args.html,
                       extra={"output": args.output}, before=before)
        print()
        for path, what in ((args.original, "Original data"), (args.output, "Masked data"),
                           (args.report, "JSON report"), (args.html, "HTML report")):
            if path:
                print(f"{what} written to {path}")
    return 0


_COMMITTED: list[str] = []  # outputs renamed into place during this run (for the Ctrl-C message)


def main(argv: Sequence[str] | None = None) -> int:
    _phases.entered()
    try:
        return _main(argv)
    finally:
        _phases.dump()


def _main(argv: Sequence[str] | None) -> int:
    _COMMITTED.clear()
    try:
        parser = _build_parser()
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 2
        handlers = {"microaggregate": _cmd_microaggregate, "report": _cmd_report, "methods": _cmd_methods,
                    "demo": _cmd_demo, "sdcmicro": getattr(args, "_sdcmicro_handler", None)}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                code = handlers[args.command](args)
            except ReleaseCheckError as exc:
                _flush_warnings(caught)
                message = str(exc).rstrip(". ")
                if "nothing" not in message:
                    message += "; nothing was written"
                print(f"pysdcmicro: error: {message}.", file=sys.stderr)
                return 3
            except PysdcmicroError as exc:
                _flush_warnings(caught)
                print(f"pysdcmicro: error: {exc}", file=sys.stderr)
                return 2
            except BrokenPipeError:  # output piped into `head` and the like: stop quietly
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno())
                return 1
            except OSError as exc:  # last resort: an I/O failure not turned into a message where it happened
                _flush_warnings(caught)
                print(f"pysdcmicro: error: {_os_error_line(exc)}", file=sys.stderr)
                return 2
        _flush_warnings(caught)
        return code
    except KeyboardInterrupt:
        return _interrupted()


def _interrupted() -> int:
    """Ctrl-C outside a search: one line, exit status 130, no traceback (a further Ctrl-C
    while printing it is ignored). Temporary files are already removed by then."""
    with contextlib.suppress(KeyboardInterrupt), _sigint_held():
        done = (f"; written before it: {', '.join(_COMMITTED)}" if _COMMITTED
                else "; no output file was written or changed")
        print(f"pysdcmicro: interrupted{done}", file=sys.stderr)
    return 130


def _os_error_line(exc: OSError) -> str:
    reason = _os_reason(exc)
    if exc.filename is not None and not isinstance(exc, PysdcmicroError):
        return f"{reason}: {str(exc.filename)!r}."
    return reason if reason.endswith(".") else reason + "."


def _flush_warnings(caught) -> None:
    for w in caught:
        print(f"pysdcmicro: warning: {w.message}", file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
