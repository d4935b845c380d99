"""The command line's one file layer, shared by every front end (the commands, the Parquet
streaming path, ``pysdcmicro sdcmicro``).

Reading: CSV files strictly (every row one field per column of the header; the separator,
decimal mark and missing markers given by :class:`~pysdcmicro._csvio.CsvFormat`, never
guessed), compressed by their name's ending as pandas reads them, and Parquet files; so
that the columns not microaggregated round-trip exactly (:func:`read_table`). Columns that
hold numbers but are read as text are refused (:func:`check_almost_numeric`) or named
(:func:`unmasked_columns`); integers beyond 2**53 are refused as the API refuses them.

Writing: the outputs of one command are written as one transaction (:class:`Outputs`):
temporary files in the target folders, the masked file read back and verified
(:func:`read_back_and_verify`: k-anonymous, IL as reported) before anything is put in
place; outputs that cannot be undone (special files, standard output) first, then the
renames; any failure leaves no output created or changed.
"""

from __future__ import annotations

import contextlib
import errno
import lzma
import os
import re
import shutil
import stat
import tarfile
import tempfile
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._csvio import CsvFormat, check_header_length, check_shape, read_float_columns, write_csv
from .._errors import InvalidInputError, PysdcmicroError, ReleaseCheckError
from .._validation import check_integer_text
from . import _signals

__all__ = ["FileError", "Outputs", "read_table", "read_released", "read_back_and_verify", "write_table",
           "check_output_paths", "input_file", "os_reason"]


MISSING_TOKENS = {"", "na", "nan", "null", "none", "n/a", "#n/a", "-nan"}


def parse_number(text: str) -> float | None:
    """Float value of a CSV cell; None if it is not a number; NaN for a missing marker."""
    t = text.strip()
    if t.lower() in MISSING_TOKENS:
        return float("nan")
    try:
        return float(t)
    except ValueError:
        return None


SNIFF_ROWS = 1000


def _tokens(fmt: CsvFormat | None) -> set:
    """The cells that mean "missing" in a numeric column (``--na-values`` added)."""
    if fmt is None or not fmt.na_values:
        return MISSING_TOKENS
    return MISSING_TOKENS | {str(t).strip().lower() for t in fmt.na_values}


def numeric_values(text: pd.Series, fmt: CsvFormat | None = None) -> np.ndarray | None:
    """Float values of a text column if every cell is a number or a missing marker (NaN)
    and at least one is a number; else None. Vectorized; cells pandas cannot parse are
    retried with Python's ``float`` so the rule is exactly :func:`parse_number`'s."""
    text = text.astype(object)
    stripped = text.str.strip()
    missing = stripped.str.lower().isin(_tokens(fmt)).to_numpy()
    if fmt is not None and fmt.decimal != ".":
        point = stripped.str.contains(".", regex=False).fillna(False)  # not a number with --decimal ','
        stripped = stripped.str.replace(fmt.decimal, ".", regex=False).where(~point, "?")
        text = stripped
    values = np.array(pd.to_numeric(stripped.where(~missing), errors="coerce").to_numpy(dtype=np.float64,
                                                                                        na_value=np.nan))
    for i in np.flatnonzero(np.isnan(values) & ~missing):
        v = parse_number(text.iat[i])
        if v is None or np.isnan(v):
            return None
        values[i] = v
    if missing.all():
        return None
    values[missing] = np.nan
    return values


class FileError(PysdcmicroError, OSError):
    """A file cannot be read or written (exit status 2, one line). Also an ``OSError``."""


def os_reason(exc: OSError) -> str:
    """The short reason of an ``OSError`` ("No space left on device"), without the path."""
    if isinstance(exc, PysdcmicroError):
        return str(exc)
    return exc.strerror or (os.strerror(exc.errno) if exc.errno else str(exc)) or type(exc).__name__


def input_file(path: str) -> Path:
    p = Path(path)
    if p.is_dir():
        raise FileError(f"input file {path!r} is a folder; give a CSV or Parquet file.")
    if not p.exists():
        raise InvalidInputError(f"input file {path!r} does not exist.")
    if not p.is_file():
        raise FileError(f"input file {path!r} is not a regular file (it is read twice); "
                        "save the data to a file first.")
    return p


def read_parquet(p: Path, path: str) -> pd.DataFrame:
    try:
        return pd.read_parquet(p)
    except ImportError:
        raise InvalidInputError(
            f"reading {path!r} needs a Parquet engine; install it with `pip install 'pysdcmicro[parquet]'`."
        ) from None
    except OSError as exc:
        raise FileError(f"cannot read input file {path!r}: {os_reason(exc)}.") from None
    except Exception as exc:  # pyarrow raises its own error types
        if type(exc).__name__ == "ArrowCancelled":  # pyarrow's form of a Ctrl-C during the read
            raise KeyboardInterrupt from None
        raise InvalidInputError(f"input file {path!r} is not a readable Parquet file: {exc}") from None


def _archive_error(exc: BaseException, path: str) -> PysdcmicroError | None:
    """One line for a compressed input that cannot be read (a corrupt archive, a .zip with
    several members, a compression whose package is not installed); None for other errors."""
    if isinstance(exc, ImportError):
        return InvalidInputError(f"input file {path!r} is compressed with a format whose package is not installed "
                                 f"({' '.join(str(exc).split())}); decompress it first or install the package.")
    if isinstance(exc, ValueError) and ("ZIP" in str(exc) or "TAR" in str(exc).upper()):
        return InvalidInputError(f"input file {path!r}: {exc}; give an archive holding one CSV file.")
    if isinstance(exc, (EOFError, zlib.error, lzma.LZMAError, zipfile.BadZipFile, tarfile.TarError)):
        reason = " ".join(str(exc).split()) or type(exc).__name__
        return InvalidInputError(f"input file {path!r} is not a readable compressed file: {reason}.")
    return None


def read_csv(p: Path, path: str, fmt: CsvFormat | None = None, **kwargs) -> pd.DataFrame:
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
    except (ImportError, ValueError, EOFError, zlib.error, lzma.LZMAError, zipfile.BadZipFile,
            tarfile.TarError) as exc:
        error = _archive_error(exc, path)
        if error is None:
            raise  # a value that is not a number: the caller reads the column another way
        raise error from None
    except OSError as exc:
        raise FileError(f"cannot read input file {path!r}: {os_reason(exc)}.") from None


def check_header(p: Path, path: str, fmt: CsvFormat | None = None) -> list:
    """Refuse duplicate column names, as the API does (pandas would rename `a` to `a.1`),
    and rows that do not have one field per column (:func:`~pysdcmicro._csvio.check_shape`).
    One column may have no name (the empty name of a trailing separator, ``a,b,``); two
    would be two columns of one name. Returns the header's names, as written."""
    fmt = fmt or CsvFormat()
    try:
        check_header_length(p, path)
    except OSError:
        pass  # read_csv names the reason
    except (ImportError, ValueError, EOFError, zlib.error, lzma.LZMAError, zipfile.BadZipFile,
            tarfile.TarError) as exc:
        error = _archive_error(exc, path)
        if error is None:
            raise
        raise error from None
    header = read_csv(p, path, fmt, header=None, nrows=1, dtype=str)
    names = header.iloc[0].tolist() if len(header) else []
    nameless = [i + 1 for i, name in enumerate(names) if name == ""]
    if len(nameless) > 1:
        raise InvalidInputError(f"input file {path!r} has {len(nameless)} columns with no name in its header row "
                                f"(columns {', '.join(map(str, nameless))}); column names must be unique: name "
                                "those columns, or remove them if they are empty.")
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise InvalidInputError(f"input file {path!r} has two columns named {name!r}; "
                                    "column names must be unique.")
        seen.add(name)
    try:
        check_shape(p, path, names, fmt)
    except OSError as exc:
        raise FileError(f"cannot read input file {path!r}: {os_reason(exc)}.") from None
    except (ImportError, ValueError, EOFError, zlib.error, lzma.LZMAError, zipfile.BadZipFile,
            tarfile.TarError) as exc:
        error = _archive_error(exc, path)
        if error is None:
            raise
        raise error from None
    return names


# Numbers written with formatting that neither pandas nor float() reads: thousands
# separators (1,234.5  1.234,5  1 234  1'234), a decimal comma (3,5); currency signs and
# percent signs are stripped before matching.
_FORMATTED = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d{1,3}(?:\.\d{3})+(?:,\d+)?"
                        r"|\d{1,3}(?:[' \u00a0\u202f]\d{3})+(?:[.,]\d+)?|\d*,\d+)")
_SIGNS = r"[$€£¥%()\s\u00a0\u202f]"


def formatted_number_example(cells: pd.Series, fmt: CsvFormat | None = None) -> str | None:
    """A cell of a text column that holds numbers written with formatting (thousands
    separators, a currency sign, a decimal comma), when *every* non-missing cell is a number
    once the formatting is removed; else None."""
    text = cells.astype(object).astype(str).str.strip()
    text = text[~text.str.lower().isin(MISSING_TOKENS)]
    if text.empty:
        return None
    plain, formatted, bare = _number_masks(text, fmt or CsvFormat())
    if not (plain | formatted).all():
        return None
    needs_work = ~(plain & bare)
    if not needs_work.any():
        return None
    return str(text.iloc[int(np.flatnonzero(needs_work)[0])])


def read_table(path: str, variables: list[str] | None = None,
               exclude: list[str] | None = None, fmt: CsvFormat | None = None,
               named: dict[str, list] | None = None) -> tuple[pd.DataFrame, list[str]]:
    """Read a CSV or Parquet file so that the columns not microaggregated round-trip exactly.

    Parquet (``.parquet``, ``.pq``; needs ``pyarrow``) keeps its column types. In a CSV file
    the columns to microaggregate are ``variables`` or, by default, every *numeric* column
    not in ``exclude`` (a column is numeric when each cell is a number or a missing marker
    such as an empty cell, NA or NaN, and at least one is a number). Only those are read as
    numbers; all other columns are read as text, so leading zeros, number formatting and
    text pass through unchanged.

    Refused (one-line error): a CSV header naming a column twice (the API refuses duplicate
    names too; pandas would rename the second one); a name in ``named`` (option -> column
    names, e.g. ``{"--variables": [...]}``) that is not a column of the file, checked
    before the records are read. A column with no name in the header (``a,b,`` with a
    trailing separator) keeps its empty name and is never microaggregated: it cannot be
    named in ``variables``, and a release must name what it masked. Numeric-looking text
    columns are left as text here; :func:`check_almost_numeric` refuses them.

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
    p = input_file(path)
    if p.suffix.lower() in (".parquet", ".pq"):
        from .._validation import _check_integer_series, _is_numeric_series

        frame = read_parquet(p, path)
        check_named_columns(named, list(frame.columns))
        excluded = set(exclude or [])
        numeric = [c for c in frame.columns if c not in excluded and _is_numeric_series(frame[c])]
        for c in numeric:  # the API's integer rule, whatever the selection
            _check_integer_series(frame[c], c, frame.index)
        return frame, (numeric if variables is None else list(variables))
    names = check_header(p, path, fmt)
    check_named_columns(named, names)
    if "" in names:  # pandas would call it 'Unnamed: 3'; the release keeps the header as written
        header_kw = dict(names=names, header=0)
    else:
        header_kw = {}
    excluded = set(exclude or []) | {""}
    head = read_csv(p, path, fmt, dtype=str, nrows=SNIFF_ROWS, **header_kw)
    tokens = _tokens(fmt)
    if variables is None:
        candidates = [c for c in head.columns if c not in excluded and numeric_values(head[c], fmt) is not None]
        unsure = [c for c in head.columns if c not in excluded and c not in candidates
                  and head[c].str.strip().str.lower().isin(tokens).all()]
    else:
        candidates = [c for c in variables if c in head.columns and numeric_values(head[c], fmt) is not None]
        unsure = [c for c in variables if c in head.columns and c not in candidates]
    dtypes = {c: (np.float64 if c in candidates else str) for c in head.columns}
    na_cells = sorted(set(NA_CELLS) | {str(t) for t in fmt.na_values} | {str(t).strip() for t in fmt.na_values})
    na = {c: na_cells for c in candidates}
    try:
        frame = read_csv(p, path, fmt, dtype=dtypes, na_values=na, **header_kw)
    except (ValueError, TypeError):  # a candidate column holds text further down
        frame = read_csv(p, path, fmt, dtype=str, **header_kw)
        unsure = unsure + candidates
        candidates = []
    chosen = list(candidates)
    parsed = {}
    for col in unsure:
        values = numeric_values(frame[col], fmt)
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
        return frame, [c for c in frame.columns if c in chosen]
    return frame, list(variables)


def _check_exact_integers(p: Path, path: str, frame: pd.DataFrame, numeric: list, fmt: CsvFormat) -> None:
    """Integers beyond 2**53 in a numeric CSV column are refused, as the API refuses them
    (float64 would round them, so distinct values could collapse; the rule of
    :func:`pysdcmicro._validation.check_integer_text`, here naming the file's row). A value
    that reads as 2**53 or more may be such an integer (2**53 + 1 reads as 2**53), so those
    columns are checked on their text."""
    limit = 2 ** 53
    big = [c for c in numeric if c in frame.columns and np.nanmax(np.abs(frame[c].to_numpy(dtype=np.float64)),
                                                                  initial=0.0) >= limit]
    if big:
        text = read_csv(p, path, fmt, dtype=str, usecols=big)
        for c in big:
            check_integer_text(text[c], frame[c].to_numpy(dtype=np.float64), c, row=file_row,
                               name=column_name(c, frame.columns))


def file_row(pos: int, parquet: bool = False) -> str:
    """The row of a CSV file that holds record ``pos`` (0-based), as the command line names
    rows: the header is row 1, so the first record is row 2. Blank lines are not rows, and a
    quoted cell spanning lines is one row (pandas' reading). Parquet files have no header."""
    if parquet:
        return f"row {int(pos) + 1} of the file (the first record is row 1)"
    return f"row {int(pos) + 2} of the file (the header is row 1)"


def column_name(label: Any, columns: Any = None) -> str:
    """A column as messages name it: its name quoted, or ``column 3 (no name)`` for a
    column whose header cell is empty."""
    if isinstance(label, str) and label == "":
        where = [i for i, c in enumerate(columns if columns is not None else []) if isinstance(c, str) and c == ""]
        return f"column {where[0] + 1} (no name)" if where else "the column with no name"
    return f"'{label}'" if isinstance(label, str) else repr(label)


def _close_name(name: str, candidates: list) -> str | None:
    """The column a mistyped name most likely meant: the same name in another case, else a
    near spelling (difflib ratio >= 0.75); never a name already given."""
    import difflib

    names = [str(c) for c in candidates if str(c) != ""]
    same = [c for c in names if c.lower() == name.lower()]
    if same:
        return same[0]
    lowered = {c.lower(): c for c in names}
    close = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.75)
    return lowered[close[0]] if close else None


def check_named_columns(named: dict[str, list] | None, columns: list) -> None:
    """Refuse a column named in an option (``{"--variables": ["income", "age"]}``) that is
    not in the file, before its records are read; the suggestion is a column not named
    already in that option."""
    names = [str(c) for c in columns]
    for option, given in (named or {}).items():
        given = [str(g) for g in given or []]
        for name in given:
            if name not in names:
                what = option.lstrip("-")
                close = _close_name(name, [c for c in names if c not in given])
                hint = f" Did you mean {close!r}?" if close else ""
                shown = ", ".join(column_name(c, names) if c == "" else c for c in names[:20])
                raise InvalidInputError(
                    f"unknown column {name!r} in `{what}` ({option}); the input file has columns: {shown}"
                    f"{', ...' if len(names) > 20 else ''}.{hint}")


def cell_text(path: str, fmt: CsvFormat | None, column: Any, pos: int) -> str | None:
    """The text of one cell as written in a CSV file (None for Parquet): for messages that
    name a cell the frame holds as a number."""
    if is_parquet(path):
        return None
    text = read_csv(Path(path), path, fmt, dtype=str, usecols=[column])
    return str(text[column].iat[int(pos)])


def _cell_words(text: str | None, value: float) -> str:
    if text is None:
        return repr(value) if not np.isnan(value) else "NaN"
    return "an empty cell" if text.strip() == "" else repr(text)


def check_cells(frame: pd.DataFrame, columns: list, missing: str, path: str, fmt: CsvFormat | None) -> None:
    """Refuse an infinite value in a column to microaggregate, and a missing one with
    ``--missing error`` (the API's rules), naming the cell as written and the file's row."""
    parquet = is_parquet(path)
    for col in columns:
        if col not in frame.columns or not pd.api.types.is_numeric_dtype(frame[col].dtype) \
                or pd.api.types.is_bool_dtype(frame[col].dtype):
            continue  # a text column: validation says it must be numeric
        values = frame[col].to_numpy(dtype=np.float64, na_value=np.nan)
        for bad, kind in ((np.isinf(values), "an infinite value"),
                          (np.isnan(values) if missing == "error" else None, "a missing value")):
            if bad is None or not bad.any():
                continue
            pos = int(np.flatnonzero(bad)[0])
            count = int(bad.sum())
            more = f" (and {count - 1} more)" if count > 1 else ""
            cell = _cell_words(cell_text(path, fmt, col, pos), values[pos])
            rule = ("microaggregation needs finite values: impute or drop those rows first (missing values are kept "
                    "with --missing keep, infinite ones never)" if kind == "an infinite value" else
                    "--missing error refuses missing values: pass --missing keep to keep them missing in the "
                    "release, or impute or drop those rows first")
            raise InvalidInputError(f"column {column_name(col, frame.columns)} has {kind} ({cell}) at "
                                    f"{file_row(pos, parquet)}{more}; {rule}.")


def check_weight_cells(text: pd.Series, values: np.ndarray, column: Any, parquet: bool = False) -> None:
    """Sampling weights must be finite numbers > 0 (the API's rule: a zero weight could make
    a group release one record's own values), named here by the file's row."""
    for bad, rule in ((np.isnan(values), "a missing weight"), (np.isinf(values), "an infinite weight"),
                      (values < 0, "a negative weight"), (values == 0, "a zero weight")):
        if bad.any():
            pos = int(np.flatnonzero(bad)[0])
            count = int(bad.sum())
            more = f" (and {count - 1} more)" if count > 1 else ""
            cell = _cell_words(None if parquet else str(text.iat[pos]), values[pos])
            why = ("; a group whose other records weigh 0 would release this record's own values as its weighted "
                   "mean: drop the records of weight 0 (out of scope) or microaggregate without weights"
                   if rule == "a zero weight" else "")
            raise InvalidInputError(f"weight column {column_name(column)} has {rule} ({cell}) at "
                                    f"{file_row(pos, parquet)}{more}; every sampling weight must be a finite "
                                    f"number > 0{why}.")


def check_strata_cells(frame: pd.DataFrame, strata: list[str] | None, parquet: bool = False) -> None:
    """Missing markers (empty, NA, NaN, ...) in a CSV stratum column are refused as the API
    refuses NaN strata, instead of becoming a stratum of their own."""
    for col in strata or []:
        if col not in frame.columns or pd.api.types.is_numeric_dtype(frame[col].dtype):
            continue  # unknown columns: validation names them; numbers: NaN is checked there
        cells = frame[col].astype(object)
        text = cells.where(cells.isna(), cells.astype(str).str.strip().str.lower())
        missing = (text.isna() | text.isin(MISSING_TOKENS)).to_numpy()
        if missing.any():
            r = int(np.flatnonzero(missing)[0])
            raise InvalidInputError(
                f"stratum column {column_name(col, frame.columns)} has a missing value ({cells.iat[r]!r}) at "
                f"{file_row(r, parquet)}; every record needs a stratum.")


def nameless_numeric(frame: pd.DataFrame, fmt: CsvFormat | None) -> list[str]:
    """The columns with no name in the header (never microaggregated) whose cells are
    mostly numbers, as messages name them (``column 4 (no name)``)."""
    found = []
    for col in frame.columns:
        if not (isinstance(col, str) and col == ""):
            continue
        if pd.api.types.is_numeric_dtype(frame[col].dtype):
            found.append(column_name(col, frame.columns))
            continue
        number, odd = _cell_classes(frame[col], fmt)
        if number.any() and number.sum() >= odd.sum():
            found.append(column_name(col, frame.columns))
    return found


def header_names(path: str, fmt: CsvFormat | None = None) -> list[str]:
    """The input file's column names, in order, read on their own: the header row of a CSV
    file, the schema of a Parquet file (what the release must have, in the same order)."""
    if is_parquet(path):
        try:
            import pyarrow.parquet as pq

            return [str(name) for name in pq.read_schema(path).names if not str(name).startswith("__index_level_")]
        except ImportError:  # pragma: no cover - pandas then needs another engine anyway
            return [str(c) for c in read_parquet(Path(path), path).columns]
    header = read_csv(Path(path), path, fmt, header=None, nrows=1, dtype=str)
    return [str(c) for c in header.iloc[0].tolist()] if len(header) else []


def is_parquet(path: str) -> bool:
    return str(path).lower().endswith((".parquet", ".pq"))


_INTEGER_TEXT = r"\s*-?(?:0|[1-9][0-9]*)\s*"


def _integer_text(text: pd.Series) -> bool:
    """Whether the (first rows of a) text column hold only canonical integers (``96``, ``-3``;
    not ``96.0``, ``007`` or ``1e3``) and missing markers, with at least one integer."""
    text = text.astype(object).fillna("")
    missing = text.str.strip().str.lower().isin(MISSING_TOKENS)
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


def _cell_classes(text: pd.Series, fmt: CsvFormat | None) -> tuple[np.ndarray, np.ndarray]:
    """(numbers, other cells) of a text column, as masks; missing markers are neither."""
    cells = text.astype(object).fillna("").astype(str).str.strip()
    missing = cells.str.lower().isin(_tokens(fmt)).to_numpy()
    if fmt is not None and fmt.decimal != ".":
        point = cells.str.contains(".", regex=False).to_numpy()
        cells = cells.str.replace(fmt.decimal, ".", regex=False).where(~point, "?")
    number = pd.to_numeric(cells.where(~missing, "0"), errors="coerce").notna().to_numpy() & ~missing
    return number, ~number & ~missing


def _odd_cells(text: pd.Series, fmt: CsvFormat | None) -> tuple[int, int, int | None]:
    """(numbers, other cells, position of the first other cell) of a text column; missing
    markers count as neither."""
    number, odd = _cell_classes(text, fmt)
    first = int(np.flatnonzero(odd)[0]) if odd.any() else None
    return int(number.sum()), int(odd.sum()), first


def _plain_number(text: str, fmt: CsvFormat) -> bool:
    """Whether ``text`` is a number as the file's format writes numbers (no formatting)."""
    if fmt.decimal != ".":
        if "." in text:
            return False
        text = text.replace(fmt.decimal, ".")
    return re.fullmatch(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?", text) is not None


_CURRENCIES = "$€£¥"
#: What a number written with formatting can look like at most: signs, currency, digits and
#: separators, a percent sign, parentheses (dates, codes and words do not).
_NUMBER_SHAPE = re.compile(r"[\s(]*[-+]?[\s$€£¥]*[\d.,' \u00a0\u202f]*\d[\d.,' \u00a0\u202f]*[\s$€£¥%)]*")


def _formatting(cell: str, fmt: CsvFormat) -> list[str] | None:
    """What makes ``cell`` a number written with formatting, in words (``["a percent
    sign"]``); None when it is not a number so written (a word, ``-``, ``?``, ``#DIV/0!``)."""
    t = cell.strip().replace("\u00a0", " ").replace("\u202f", " ")
    words = []
    if len(t) > 2 and t[0] == "(" and t[-1] == ")":
        words.append("parentheses (an accounting negative)")
        t = t[1:-1].strip()
    if t.endswith("%"):
        words.append("a percent sign")
        t = t[:-1].strip()
    signs = [c for c in _CURRENCIES if c in t]
    if signs:
        words.append(f"a currency sign ({signs[0]!r})")
        t = re.sub(rf"\s*[{re.escape(_CURRENCIES)}]\s*", "", t)
    if not t:
        return None
    if _plain_number(t, fmt):
        return words or None
    if fmt.decimal == "." and re.fullmatch(r"[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?", t):
        words.append("',' as a thousands separator or a decimal comma" if "." not in t and t.count(",") == 1
                     else "',' as a thousands separator")
    elif re.fullmatch(r"[-+]?\d{1,3}(?:\.\d{3})+(?:,\d+)?", t):
        words.append("'.' as a thousands separator" + (" and a decimal comma" if "," in t else ""))
    elif fmt.decimal == "." and re.fullmatch(r"[-+]?\d*,\d+", t):
        words.append("a decimal comma")
    elif fmt.decimal != "." and _plain_number(t.replace(",", ""), CsvFormat()):
        words.append("a decimal point (the file is read with --decimal ',')")
    elif re.fullmatch(r"[-+]?\d{1,3}(?:[' ]\d{3})+(?:[.,]\d+)?", t):
        words.append("spaces as thousands separators" if " " in t else "\"'\" as a thousands separator")
    else:
        return None
    return words


def _number_masks(cells: pd.Series, fmt: CsvFormat) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per cell, vectorized: (a plain number once signs, currency, percent and parentheses are
    stripped; a number written with separators or a decimal mark of another format; nothing
    was stripped)."""
    text = cells.astype(object).fillna("").astype(str).str.strip()
    core = text.str.replace(rf"^{_SIGNS}+|{_SIGNS}+$", "", regex=True).str.replace(r"^([-+])[$€£¥]\s*", r"\1",
                                                                                   regex=True)
    number = core
    if fmt.decimal != ".":
        number = core.str.replace(fmt.decimal, ".", regex=False).where(~core.str.contains(".", regex=False), "?")
    plain = pd.to_numeric(number.where(core != "", "?"), errors="coerce").notna().to_numpy()
    formatted = core.str.fullmatch(_FORMATTED).fillna(False).to_numpy(dtype=bool)
    if fmt.decimal != ".":  # a decimal point in a file read with --decimal ','
        formatted |= pd.to_numeric(core.where(core != "", "?"), errors="coerce").notna().to_numpy()
    return plain, formatted, (core == text).to_numpy()


def _formatted_cells(cells: pd.Series, fmt: CsvFormat) -> np.ndarray:
    """Which cells are numbers written with formatting (thousands separators, a decimal
    comma, a currency or percent sign, parentheses); the cells :func:`_formatting`
    describes."""
    plain, formatted, _ = _number_masks(cells, fmt)
    return plain | formatted


def check_almost_numeric(frame: pd.DataFrame, chosen: list, requested: list | None, exclude: list,
                         fmt: CsvFormat) -> None:
    """Refuse a text column that holds numbers, since read as text it would pass through
    unmasked: in the default selection, a column whose cells are mostly numbers (plain or
    written with formatting) and not all plain numbers; a column named in ``--variables``
    for any cell that is not a plain number. One line names the column, the first such
    cell, its row in the file and the way out: ``--na-values`` for a missing marker
    (``:``, ``-``, ``?``), ``--decimal ','`` for decimal commas, plain numbers in the file
    for other formatting (``1,234``, ``12.5%``, ``(123)``, ``€12``), or ``--variables``.
    Every column named in ``requested`` is checked, ``chosen`` or not (it holds the
    requested names); columns read as numbers pass."""
    names = requested if requested is not None else [c for c in frame.columns if c not in exclude]
    for col in names:
        if col not in frame.columns or pd.api.types.is_numeric_dtype(frame[col].dtype):
            continue
        if requested is None and isinstance(col, str) and col == "":
            continue  # never microaggregated (no name to give in --variables); named when it holds numbers
        number, odd = _cell_classes(frame[col], fmt)
        if not odd.any():
            continue
        shaped = np.zeros_like(odd)  # the cells shaped like a formatted number (a quick first pass)
        shaped[odd] = frame[col][odd].astype(str).str.fullmatch(_NUMBER_SHAPE).to_numpy(dtype=bool)
        if requested is None and number.sum() + shaped.sum() < odd.sum() - shaped.sum():
            continue  # mostly text
        formatted = np.zeros_like(odd)
        formatted[shaped] = _formatted_cells(frame[col][shaped], fmt)
        other = int(odd.sum() - formatted.sum())
        numberlike = int(number.sum() + formatted.sum())
        if numberlike == 0 or (requested is None and numberlike < other):
            continue
        first = int(np.flatnonzero(odd)[0])
        raise InvalidInputError(_almost_numeric_message(frame, col, first, formatted, other, requested is not None,
                                                        fmt))


def _almost_numeric_message(frame: pd.DataFrame, col: Any, first: int, formatted: np.ndarray, other: int,
                            named: bool, fmt: CsvFormat) -> str:
    name = column_name(col, frame.columns)
    value = str(frame[col].iat[first])
    row = file_row(first)
    out = ("or leave the column out of --variables" if named else
           "or name the columns to microaggregate with --variables")
    words = _formatting(value, fmt) if formatted[first] else None
    if words is None:
        return (f"column {name} holds numbers but the cell {value!r} at {row} is not a number: read as text, the "
                f"column would pass through unmasked; pass --na-values {value.strip() or repr(value)} if that cell "
                f"means 'missing', {out}.")
    seen: list[str] = []
    for pos in np.flatnonzero(formatted)[:50]:
        for word in _formatting(str(frame[col].iat[pos]), fmt) or []:
            if word not in seen:
                seen.append(word)
    said = " and ".join([", ".join(seen[:-1]), seen[-1]] if len(seen) > 1 else seen)
    if other == 0 and int(formatted.sum()) > 1:
        lead = f"column {name} holds numbers written with {said}, such as {value!r} at {row}"
    else:
        lead = f"column {name} holds numbers but the cell {value!r} at {row} is a number written with {said}"
    comma = any("decimal comma" in w for w in seen)
    plain = "write plain numbers in the file (such as -1234.5)"
    if any(w.startswith("a decimal point") for w in seen):
        fix = "pass --decimal '.' (the default) if the file's decimal mark is '.', else " + plain
    elif comma and fmt.decimal == "." and fmt.sep != ",":
        fix = "pass --decimal ',' if ',' is the file's decimal mark"
        if any(w.startswith("',' as a thousands") for w in seen) or len(seen) > 1:
            fix += ", else " + plain
    else:
        fix = plain
    return (f"{lead}: read as text, the column would pass through unmasked; {fix}, {out}.")


def _looks_numeric(values: pd.Series, fmt: CsvFormat | None) -> tuple[np.ndarray | None, str | None]:
    """The numbers of a column read as text, as ``fmt`` reads them, and how they are held:
    ``(values, "numeric")``, ``(None, "mostly numbers, read as text")``, ``(None, "numbers
    written with formatting, read as text")``; ``(None, None)`` for text. The reader that
    :func:`pysdcmicro._columns.column_entry` asks."""
    if pd.api.types.is_bool_dtype(values.dtype) or pd.api.types.is_numeric_dtype(values.dtype):
        return None, None  # (judged by their dtype)
    numbers, odd, _ = _odd_cells(values, fmt)
    if numbers and numbers >= odd:
        return (numeric_values(values, fmt), "numeric") if odd == 0 else (None, "mostly numbers, read as text")
    if formatted_number_example(values, fmt) is not None:
        return None, "numbers written with formatting, read as text"
    return None, None


def unmasked_columns(frame: pd.DataFrame, masked: list, exclude: list, left_out: dict, named: bool,
                     fmt: CsvFormat | None) -> list[dict]:
    """The columns released unmasked that could identify or single out records, most
    dangerous first, each with the reason and the option that includes it (for the warning
    and the report's headline): :func:`pysdcmicro._columns.unmasked_columns`, with numbers
    held as text read as ``fmt`` says. With ``named`` (``--variables`` given) every reason
    ends in "not in --variables": the command's warning names those columns."""
    from .._columns import unmasked_columns as passed_through

    found = passed_through(frame, masked, exclude=exclude, left_out=left_out,
                           numbers=lambda values: _looks_numeric(values, fmt), option="--variables",
                           suffix="not in --variables" if named else "not chosen by default")
    for entry in found:
        if named and entry["option"] is None:  # text: no option includes it, the warning still names it
            entry["reason"] += "; not in --variables"
    return found


def csv_text(data: pd.DataFrame, fmt: CsvFormat | None = None) -> str:
    if fmt is None or fmt.default:
        return write_csv(data)
    return data.to_csv(index=False, sep=fmt.sep, decimal=fmt.decimal)


#: CSV outputs compressed by their name's ending, as pandas reads them back.
_COMPRESSIONS = {".gz": "gzip", ".bz2": "bz2", ".zip": "zip", ".xz": "xz", ".zst": "zstd"}


def _write_compressed(text: str, path: str, name: str, method: str) -> None:
    from pandas.io.common import get_handle

    compression: dict = {"method": method}
    if method == "zip":  # the member is the file's own name, not the temporary one
        compression["archive_name"] = os.path.basename(name)[:-len(".zip")]
    try:
        with get_handle(path, "w", compression=compression, encoding="utf-8") as handles:
            handles.handle.write(text)
    except ImportError:
        raise InvalidInputError(f"writing {name!r} needs the {method} package; install it, or write an "
                                "uncompressed file.") from None


def write_table(data: pd.DataFrame, path: str, *, parquet: bool | None = None,
                fmt: CsvFormat | None = None, name: str | None = None) -> None:
    """Write the masked data to ``path``: Parquet, or CSV in the input's format (compressed
    when ``name``, the output's name, ends with .gz, .bz2, .zip, .xz or .zst)."""
    method = _COMPRESSIONS.get(os.path.splitext(str(name or path))[1].lower())
    if method is not None and not (is_parquet(path) if parquet is None else parquet):
        _write_compressed(csv_text(data, fmt), path, str(name or path), method)
        return
    if is_parquet(path) if parquet is None else parquet:
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

TEMP_PREFIX = ".pysdcmicro-"


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


def _read_only(path: str) -> bool:
    """A regular file without any write permission bit (0o444): protected also from root,
    for whom ``os.access`` always says yes."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and not st.st_mode & 0o222


def check_output_paths(inputs: dict[str, str | None], outputs: dict[str, str | None]) -> None:
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
            raise FileError(f"{opt} {path!r} is a folder; give a file name.")
        folder = os.path.dirname(os.path.realpath(path))
        if not os.path.isdir(folder):
            raise FileError(f"{opt} {path!r}: the folder {os.path.dirname(path) or '.'!r} does not exist.")
        if os.path.exists(path) and (not os.access(path, os.W_OK) or _read_only(path)):  # stays protected
            raise FileError(f"{opt} {path!r}: Permission denied (the file is read-only).")
        if not _is_special(path) and not os.access(folder, os.W_OK | os.X_OK):
            raise FileError(f"{opt} {path!r}: Permission denied (cannot create files in {folder!r}).")


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


class Outputs:
    """The output files of one command, written as a transaction (see above)::

        with Outputs() as out:
            tmp = out.write("out.csv", "--output", lambda p: frame.to_csv(p))
            check(tmp)                     # read back, verify: raises -> nothing written
            out.commit()                   # every output renamed into place
    """

    def __init__(self) -> None:
        self._pending: list[tuple[str, str, bool]] = []  # (temporary file, target, target is special)
        self._text: list[tuple[str, Any]] = []  # (text, stream): written at commit, before the renames

    def __enter__(self) -> "Outputs":
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
            # the name's ending kept (the format and compression), the whole within NAME_MAX
            fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix="-" + os.path.basename(real)[-200:], dir=folder)
        except OSError as exc:
            raise FileError(f"cannot write {what} {target!r}: {os_reason(exc)}.") from None
        os.close(fd)
        self._pending.append((tmp, target if special else real, special))
        try:
            writer(tmp)
            _fsync(tmp)
            if not special:
                os.chmod(tmp, _new_file_mode(real))
        except OSError as exc:
            raise FileError(f"cannot write {what} {target!r}: {os_reason(exc)}.") from None
        return tmp

    def text(self, text: str, stream: Any) -> None:
        """Write ``text`` to ``stream`` (standard output) at :meth:`commit`."""
        self._text.append((text, stream))

    def commit(self) -> None:
        """Put every output in place: first the outputs that cannot be undone (special files
        such as /dev/full, a FIFO or a pipe, and standard output), so that a failure there
        leaves every regular file as it was; then the renames (Ctrl-C held until all are done).
        A second Ctrl-C before the first rename aborts (nothing replaced); one during the
        renames is held until they are all done, then aborts, naming what was written."""
        _signals.abort_if_second()
        for tmp, target, special in [entry for entry in self._pending if entry[2]]:
            _copy_to_special(tmp, target)
            self._pending.remove((tmp, target, special))
            COMMITTED.append(target)
        for text, stream in self._text:
            try:
                stream.write(text)
                stream.flush()
            except BrokenPipeError:
                raise
            except (OSError, ValueError) as exc:
                raise FileError(f"cannot write standard output: {os_reason(exc) if isinstance(exc, OSError) else exc}"
                                ".") from None
        self._text.clear()
        with _signals.stop_signals_held():
            _signals.abort_if_second()  # (one that came during the special files' copies)
            for tmp, target, _ in self._pending:
                try:
                    os.replace(tmp, target)
                except OSError as exc:
                    raise FileError(f"cannot write {target!r}: {os_reason(exc)}.") from None
                COMMITTED.append(target)
            self._pending.clear()

    def discard(self) -> None:
        """Remove the temporary files not renamed into place."""
        with _signals.stop_signals_held():
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
                raise FileError(f"cannot write {target!r}: it is a FIFO (named pipe) with no reader; start the "
                                "reader first, or write to a regular file.") from None
            raise
        try:
            os.set_blocking(fd, True)
            with open(tmp, "rb") as src, os.fdopen(fd, "wb", closefd=False) as dst:
                shutil.copyfileobj(src, dst)
        finally:
            os.close(fd)
        os.unlink(tmp)
    except FileError:
        raise
    except OSError as exc:
        raise FileError(f"cannot write {target!r}: {os_reason(exc)}.") from None


def verify(original: pd.DataFrame, released: pd.DataFrame, result: Any, *,
           what: str = "the release") -> np.ndarray | None:
    """The release check run before anything is renamed into place or printed (exit
    status 3): the released values (the masked file read back, or the CSV text parsed back)
    must be k-anonymous and lose exactly the information the result reports
    (:func:`pysdcmicro.verify_release`). Returns the sizes of the released equivalence
    classes it found (None with missing cells), for the report."""
    from .._release import _check_release

    return _check_release(original, released, result, what=what)


def read_back_and_verify(source: Any, variables: list, parquet: bool, original: pd.DataFrame, result: Any,
                         what: str, fmt: CsvFormat | None = None) -> tuple[pd.DataFrame, np.ndarray | None]:
    """Read the written release back (``source()`` gives the path or a fresh text buffer)
    and verify it. CSV is first read by a fast parser (pyarrow's multi-threaded one, else
    pandas' C parser); if that does not verify, it is read again with every
    cell parsed by Python's ``float`` (correctly rounded, the rule of :func:`read_table`), so
    a parser rounding in the last place can never refuse a correct release."""
    released = read_released(source(), variables, parquet=parquet, fast=True, n_rows=len(original), fmt=fmt)
    try:
        sizes = verify(original, released, result, what=what)
    except ReleaseCheckError:
        if parquet:
            raise
        released = read_released(source(), variables, parquet=False, fmt=fmt)
        sizes = verify(original, released, result, what=what)
    return released, sizes


NA_CELLS = sorted(MISSING_TOKENS | {t.upper() for t in MISSING_TOKENS} | {"NaN", "Null", "None", "N/A", "-NaN"})


def read_released(source: Any, variables: list, *, parquet: bool | None = None,
                  fast: bool = False, n_rows: int | None = None, fmt: CsvFormat | None = None) -> pd.DataFrame:
    """The released values of ``variables`` as written: the CSV read back, cells parsed as
    numbers exactly as :func:`read_table` parses them (vectorized), or the Parquet file.
    With ``fast``, pandas' C parser reads the CSV numbers (correctly rounded in pandas 3;
    see :func:`read_back_and_verify` for the exact second reading)."""
    if parquet is None:
        parquet = isinstance(source, (str, Path)) and is_parquet(str(source))
    if parquet:
        return read_parquet(Path(source), str(source))[list(variables)].astype(np.float64)
    sep, decimal = (",", ".") if fmt is None else (fmt.sep, fmt.decimal)
    if fast and sep == "," and decimal == ".":
        frame = read_float_columns(source, list(variables), NA_CELLS, n_rows)  # pyarrow, multi-threaded
        if frame is not None:
            return frame
        if hasattr(source, "seek"):
            source.seek(0)
        wanted = set(map(str, variables))
        try:
            frame = pd.read_csv(source, dtype=np.float64, keep_default_na=False, na_values=NA_CELLS,
                                usecols=lambda c: c in wanted, sep=sep, decimal=decimal)
            return frame[list(variables)]
        except (ValueError, TypeError):  # a cell that is not a number: the exact reading says which
            if hasattr(source, "seek"):
                source.seek(0)
    raw = pd.read_csv(source, dtype=str, keep_default_na=False, usecols=lambda c: c in set(map(str, variables)),
                      sep=sep)
    columns = {}
    for col in variables:
        values = numeric_values(raw[col], None if fmt is None else CsvFormat(sep, decimal))
        if values is None:  # pragma: no cover - a bug, not a user error
            raise ReleaseCheckError(f"release check failed: the written column {col!r} holds a value that is "
                                    "not a number")
        columns[col] = values
    return pd.DataFrame(columns, index=raw.index)  # one frame, not one column at a time


COMMITTED: list[str] = []  # outputs renamed into place during this run (for the Ctrl-C message)
