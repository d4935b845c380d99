"""Fast CSV writing and reading for the command line's release files.

:func:`write_csv` writes exactly the bytes ``frame.to_csv(path, index=False)`` writes
(pandas' defaults: ``,`` separator, ``"`` quotes only where needed, ``\\n`` line ends,
missing cells empty, floats as Python's ``repr``, integers as digits), but 10-20 times
faster when pyarrow is installed: the cells are formatted column by column in C++ (Arrow's
shortest round-trip float formatting, re-laid out the way ``repr`` lays it out) and the rows
joined there, in chunks of rows. Anything it does not handle exactly the way pandas does
(other dtypes, a carriage return inside a text cell, no pyarrow) is written by pandas.

:func:`read_float_columns` reads chosen columns of such a file back as float64 with
pyarrow's CSV reader (multi-threaded, correctly rounded) or, without it, pandas' C parser.

The byte-for-byte equality with pandas is what ``tests/cli/test_cli_files.py`` checks, on text
columns with quotes, commas, newlines, empty cells, leading zeros, ``NA`` spellings and on
floats over the whole range of float64.
"""

from __future__ import annotations

import csv
import io
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["write_csv", "read_float_columns", "fast_writer_available", "CsvFormat", "check_shape", "check_header_length",
           "open_binary"]

_CHUNK_ROWS = 1 << 17
_DEDUP_MIN = 1 << 12  # columns shorter than this are formatted cell by cell
_THREADS = max(1, min(2, os.cpu_count() or 1))  # Arrow's kernels release the GIL: two threads share the work

try:  # optional: without it pandas writes (slowly, the same bytes)
    import pyarrow as _pa
    import pyarrow.compute as _pc
except ImportError:  # pragma: no cover - pyarrow is in the test extra
    _pa = _pc = None

_FLOAT_PROBES = [0.0, -0.0, 1.0, -1.0, 12.5, 100.0, 1e5, 123456.0, 0.1, 1e-4, 0.00012, 9.9e-5, 1e-5, 1.5e-5,
                 1e-6, 1e-7, 1.5e-7, 9.9e-8, 1e-8, 1.234e-9, 1e-10, 1e-300, 5e-324, 2.2250738585072014e-308,
                 1e15, 5e15, 9999999999999998.0, 1e16, 1.2345e16, 1e21, 1e22, 1.7976931348623157e308,
                 123456789.12345678, 12345678901234.566, 999999999999999.9, 0.30000000000000004,
                 1.0000000000000002, 2.0 ** 53, 2.0 ** 53 + 2, -123.456, -1e-7, -1e16, 11.900608761710494,
                 float("inf"), float("-inf")]


def _arrow_floats_ok() -> bool:
    """Whether :func:`_float_cells` gives ``repr`` on the probes (guards against another
    Arrow version formatting differently: then pandas writes)."""
    try:
        x = np.array(_FLOAT_PROBES)
        rng = np.random.default_rng(0)
        x = np.concatenate([x, rng.normal(size=200) * 10.0 ** rng.uniform(-12, 20, 200)])
        got = _float_cells(x).to_pylist()
        return got == [repr(v) for v in x.tolist()]
    except Exception:  # pragma: no cover - an Arrow without these kernels
        return False


_ARROW_OK: bool | None = None


def fast_writer_available() -> bool:
    """pyarrow is installed and formats floats as ``repr`` does (checked once)."""
    global _ARROW_OK
    if _ARROW_OK is None:
        _ARROW_OK = _pa is not None and _arrow_floats_ok()
    return _ARROW_OK


def _float_cells(x: np.ndarray, dedup: bool = True) -> Any:
    """float64 values as ``repr`` strings (an Arrow string array); NaN as null.

    A released column holds one value per group (about n / k distinct values): each
    distinct value (bit pattern: 0.0 and -0.0 stay apart) is formatted once and the cells
    are taken from those, the same strings at a fraction of the cost."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    if dedup and x.size >= _DEDUP_MIN:
        codes, uniques = pd.factorize(x.view(np.uint64))
        if 2 * len(uniques) <= x.size:
            cells = _format_floats(np.ascontiguousarray(uniques).view(np.float64))
            return cells.take(_pa.array(codes.astype(np.int32 if len(uniques) < 2**31 else np.int64, copy=False)))
    return _format_floats(x)


def _format_floats(x: np.ndarray) -> Any:
    s = _pc.cast(_pa.array(x, type=_pa.float64()), _pa.string())
    sci = _pc.match_substring(s, "e").to_numpy(zero_copy_only=False)
    ax = np.abs(x)
    with np.errstate(invalid="ignore"):
        python_sci = (ax < 1e-4) & (x != 0) | (ax >= 1e16)  # repr's rule (inf: "inf" either way)
    if sci.any():  # Arrow writes 1e-7 where repr writes 1e-07: pad one-digit exponents
        s = _pc.replace_substring_regex(s, r"e([+-])(\d)$", r"e\10\2")
    # positional without a point: repr adds ".0" (1 -> 1.0, -0 -> -0.0)
    plain = ~sci & ~python_sci & np.isfinite(x)
    dot = _pc.match_substring(s, ".").to_numpy(zero_copy_only=False)
    add = plain & ~dot
    if add.any():
        s = _pc.if_else(_pa.array(add), _pc.binary_join_element_wise(s, ".0", ""), s)
    # where the two choose different layouts (Arrow: 1.2e+13, 0.00005), repr itself
    other = np.flatnonzero(sci != python_sci)
    if other.size:
        mask = np.zeros(x.size, dtype=bool)
        mask[other] = True
        s = _pc.replace_with_mask(s, _pa.array(mask), _pa.array([repr(v) for v in x[other].tolist()],
                                                                  type=_pa.string()))
    missing = np.isnan(x)
    if missing.any():
        s = _pc.if_else(_pa.array(missing), _pa.scalar(None, _pa.string()), s)
    return s


_NEEDS_QUOTES = r'[,"\n]'


def _text_cells(values: Any) -> Any:
    """Text cells quoted as Python's csv module quotes them (QUOTE_MINIMAL); None if a cell
    holds a carriage return (pandas then writes, whatever this Python's rule for it is)."""
    arr = _pa.array(values, type=_pa.string(), from_pandas=True)
    if _pc.any(_pc.match_substring(arr, "\r")).as_py():
        return None
    quote = _pc.match_substring_regex(arr, _NEEDS_QUOTES)
    if _pc.any(quote).as_py():
        quoted = _pc.binary_join_element_wise('"', _pc.replace_substring(arr, '"', '""'), '"', "")
        arr = _pc.if_else(quote, quoted, arr)
    return arr


def _column_cells(series: pd.Series, dedup: bool = True) -> Any:
    """A column's cells as pandas writes them (Arrow strings, missing = null), or None
    when this dtype is left to pandas."""
    dtype = series.dtype
    if dtype == np.float64:
        return _float_cells(series.to_numpy(), dedup)
    if dtype.kind in "iu" and isinstance(dtype, np.dtype):
        return _pc.cast(_pa.array(series.to_numpy()), _pa.string())
    if isinstance(dtype, pd.Int64Dtype | pd.Int32Dtype | pd.UInt64Dtype | pd.UInt32Dtype | pd.Int16Dtype |
                  pd.Int8Dtype | pd.UInt16Dtype | pd.UInt8Dtype):
        return _pc.cast(_pa.array(series.array, from_pandas=True), _pa.string())
    if isinstance(dtype, pd.StringDtype) or (dtype == object and pd.api.types.infer_dtype(series, skipna=True)
                                             in ("string", "empty")):
        return _text_cells(series.to_numpy(dtype=object, na_value=None))
    return None


def _header(frame: pd.DataFrame) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_MINIMAL).writerow([str(c) for c in frame.columns])
    return buf.getvalue()


def _plan(frame: pd.DataFrame, dedup: bool = True) -> list | None:
    """Per column the cell strings, or None if pandas must write the frame. ``dedup=False``:
    the rows are already distinct (each float formatted as it comes, not looked up)."""
    if not fast_writer_available() or frame.shape[1] == 0 or frame.columns.has_duplicates \
            or isinstance(frame.columns, pd.MultiIndex):
        return None
    def cells_of(j: int) -> Any:
        cells = _column_cells(frame.iloc[:, j], dedup)
        if cells is None:
            return None
        cells = _pc.fill_null(cells, "")
        if frame.shape[1] == 1:  # csv quotes a record's only field when it is empty
            cells = _pc.if_else(_pc.equal(cells, ""), _pa.scalar('""'), cells)
        return cells

    if _THREADS > 1 and frame.shape[1] > 1 and frame.shape[0] >= _DEDUP_MIN:
        with ThreadPoolExecutor(_THREADS) as pool:  # columns formatted in parallel
            cols = list(pool.map(cells_of, range(frame.shape[1])))
    else:
        cols = [cells_of(j) for j in range(frame.shape[1])]
    return None if any(c is None for c in cols) else cols


def _line_array(cols: list, start: int, length: int) -> Any:
    """The CSV lines (with their ``\\n``) of rows ``start`` to ``start + length`` as an Arrow
    string array."""
    part = [c.slice(start, length) for c in cols]
    rows = _pc.binary_join_element_wise(*part, ",") if len(part) > 1 else part[0]
    lines = _pc.binary_join_element_wise(rows, "\n", "")
    if not isinstance(lines, _pa.Array):  # pragma: no cover - a chunked result
        lines = lines.combine_chunks()
    if lines.type != _pa.string():  # pragma: no cover - large_string offsets
        lines = lines.cast(_pa.string())
    return lines


def _bytes_of(lines: Any) -> memoryview:
    """The characters of an Arrow string array, one after the other (no copy)."""
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int32)
    lo, hi = int(offsets[lines.offset]), int(offsets[lines.offset + len(lines)])
    return memoryview(lines.buffers()[2])[lo:hi]


def _lines(cols: list, start: int) -> memoryview:
    """The CSV lines of rows ``start`` to ``start + _CHUNK_ROWS`` as bytes."""
    return _bytes_of(_line_array(cols, start, _CHUNK_ROWS))


def _write_chunks(make: Any, n: int, handle: Any) -> None:
    """Write ``make(start)`` (bytes of rows ``start`` to ``start + _CHUNK_ROWS``) for every
    chunk of ``n`` rows, in order; chunks made in parallel threads (Arrow releases the GIL)."""
    starts = range(0, n, _CHUNK_ROWS)
    if _THREADS > 1 and len(starts) > 1:  # chunks made in parallel, written in order
        with ThreadPoolExecutor(_THREADS) as pool:
            for i in range(0, len(starts), 2 * _THREADS):  # a few chunks in memory at a time
                for buf in pool.map(make, starts[i:i + 2 * _THREADS]):
                    handle.write(buf)
        return
    for start in starts:
        handle.write(make(start))


def _write_rows(cols: list, handle: Any) -> None:
    _write_chunks(lambda start: _lines(cols, start), len(cols[0]), handle)


def _row_classes(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray] | None:
    """For a frame of float64 columns whose rows repeat (a release: one row of values per
    group, about n / k distinct rows): ``(codes, first)``, the class of each row (rows equal
    bit for bit, so written the same) and a row of each class; None otherwise."""
    n = frame.shape[0]
    if n < _DEDUP_MIN or not all(dt == np.float64 for dt in frame.dtypes):
        return None
    from ._release import row_classes

    codes, u = row_classes(frame.to_numpy(dtype=np.float64))
    if 2 * u > n:
        return None
    first = np.empty(u, dtype=np.intp)
    first[codes] = np.arange(n)  # a row of each class (which one does not matter: they are equal)
    return codes, first


def _write_repeated_rows(frame: pd.DataFrame, handle: Any) -> bool:
    """Write the rows of ``frame`` by formatting each distinct row once (then taking the
    lines by row class); False (nothing written) if the rows do not repeat or pandas must
    write. The same bytes as :func:`_write_rows`: a row's line depends on its values only."""
    classes = _row_classes(frame)
    if classes is None:
        return False
    codes, first = classes
    cols = _plan(frame.iloc[first], dedup=False)
    if cols is None:
        return False
    lines = _line_array(cols, 0, len(first))
    index = _pa.array(codes.astype(np.int32 if len(first) < 2**31 else np.int64, copy=False))
    handle.write(_header(frame).encode("utf-8"))
    _write_chunks(lambda start: _bytes_of(lines.take(index.slice(start, _CHUNK_ROWS))), len(codes), handle)
    return True


def write_csv(frame: pd.DataFrame, path: Any = None) -> str | None:
    """Write ``frame`` as ``frame.to_csv(path, index=False)`` would, byte for byte (UTF-8).
    With ``path=None`` return the text instead, as pandas does.

    A frame of float columns whose rows repeat (a release) has each distinct row formatted
    once, so that a large release is written within seconds, also right after a Ctrl-C."""
    if fast_writer_available():
        buf = io.BytesIO() if path is None else open(path, "wb")
        try:
            if _write_repeated_rows(frame, buf):
                return buf.getvalue().decode("utf-8") if path is None else None
        finally:
            if path is not None:
                buf.close()
    cols = _plan(frame)
    if cols is None:
        return frame.to_csv(path, index=False)
    if path is None:
        buf = io.BytesIO()
        buf.write(_header(frame).encode("utf-8"))
        _write_rows(cols, buf)
        return buf.getvalue().decode("utf-8")
    with open(path, "wb") as handle:
        handle.write(_header(frame).encode("utf-8"))
        _write_rows(cols, handle)
    return None


def read_float_columns(source: Any, columns: list, na_values: list, n_rows: int | None = None) -> pd.DataFrame | None:
    """Columns of a CSV file (a path or a text buffer) as float64, read by pyarrow's CSV
    reader; None if it cannot (no pyarrow, a cell that is not a number, a row count other
    than ``n_rows``): the caller then reads another way."""
    if _pa is None or not all(isinstance(c, str) for c in columns):
        return None
    import pyarrow.csv as pacsv

    if isinstance(source, io.StringIO):
        source = _pa.BufferReader(source.getvalue().encode("utf-8"))
    try:
        table = pacsv.read_csv(
            source,
            read_options=pacsv.ReadOptions(use_threads=True),
            parse_options=pacsv.ParseOptions(newlines_in_values=True),
            convert_options=pacsv.ConvertOptions(column_types={c: _pa.float64() for c in columns},
                                                 include_columns=list(columns), null_values=list(na_values),
                                                 strings_can_be_null=False, quoted_strings_can_be_null=True))
    except (_pa.ArrowInvalid, _pa.ArrowKeyError, _pa.ArrowTypeError, KeyError, ValueError):
        return None
    except _pa.ArrowCancelled:  # pyarrow's reader turns a Ctrl-C into its own error: the user's interrupt
        raise KeyboardInterrupt from None
    if n_rows is not None and table.num_rows != n_rows:
        return None
    # one C-ordered n x p block: the caller's to_numpy() is then a view, not a copy
    out = np.empty((table.num_rows, len(columns)), dtype=np.float64)
    for j, c in enumerate(columns):
        out[:, j] = table.column(c).to_numpy()
    return pd.DataFrame(out, columns=list(columns), copy=False)


# ----------------------------------------------------------------------------------------
# The shape of an input CSV file: every row has as many fields as the header, checked
# before the file is parsed (pandas would silently take a surplus first field as the row
# index, or fill a short row with missing cells).
# ----------------------------------------------------------------------------------------

#: Separators suggested when a file does not fit the one given.
_OTHER_SEPARATORS = (";", "\t", "|", ",")


@dataclass(frozen=True)
class CsvFormat:
    """How an input CSV file is written: the field separator, the decimal mark of its
    numbers and extra cells that mean "missing" (``--sep``, ``--decimal``, ``--na-values``).
    The release is written in the same format."""

    sep: str = ","
    decimal: str = "."
    na_values: tuple = ()

    @property
    def default(self) -> bool:
        return self.sep == "," and self.decimal == "."

    def describe(self, sep: str) -> str:
        return "a tab" if sep == "\t" else repr(sep)


def open_binary(path: Any) -> Any:
    """The file's bytes, decompressed as pandas decompresses it (by the file name's ending:
    .gz, .bz2, .zip, .xz, .zst, .tar); a context manager yielding a binary file object."""
    from pandas.io.common import get_handle

    return get_handle(str(path), "rb", compression="infer", is_text=False)


def _first_bad_row_arrow(path: Any, n_fields: int, sep: str) -> tuple[int, int] | None:
    """(row number, fields) of the first row whose field count differs from the header's,
    read by pyarrow's CSV parser (quotes and newlines in quoted cells as pandas reads them);
    raises ``ValueError`` when pyarrow cannot tell."""
    import pyarrow.csv as pacsv

    bad: list[tuple[int, int]] = []

    def handler(row: Any) -> str:
        bad.append((row.number, row.actual_columns))
        return "error"

    names = [f"c{i}" for i in range(n_fields)]
    with open_binary(path) as handles:
        try:
            pacsv.read_csv(handles.handle,
                           read_options=pacsv.ReadOptions(use_threads=False, column_names=names, skip_rows=1,
                                                          block_size=1 << 24),
                           parse_options=pacsv.ParseOptions(delimiter=sep, newlines_in_values=True,
                                                            invalid_row_handler=handler),
                           convert_options=pacsv.ConvertOptions(include_columns=names[:1],
                                                                column_types={names[0]: _pa.binary()}))
        except _pa.ArrowInvalid:
            if not bad:
                raise ValueError("unparsed") from None
    return bad[0] if bad else None


def _first_bad_row_python(path: Any, n_fields: int, sep: str) -> tuple[int, int] | None:
    """As :func:`_first_bad_row_arrow`, with Python's csv module (no pyarrow)."""
    limit = csv.field_size_limit()
    csv.field_size_limit(2 ** 31 - 1)  # long text cells are data, not errors
    try:
        with open_binary(path) as handles:
            text = io.TextIOWrapper(handles.handle, encoding="utf-8", errors="replace", newline="")
            reader = csv.reader(text, delimiter=sep, quotechar='"', doublequote=True, strict=False)
            for i, row in enumerate(reader):
                if i == 0 or not row:
                    continue
                if len(row) != n_fields:
                    return reader.line_num, len(row)
    finally:
        csv.field_size_limit(limit)
    return None


#: The longest header row read (a file without a line break in its first bytes is not a
#: CSV file with a header row; reading it whole would take memory for nothing).
HEADER_BYTES = 64 << 20


def check_header_length(path: Any, name: str) -> None:
    """Refuse (one line) a file whose first line is longer than :data:`HEADER_BYTES`."""
    from ._errors import InvalidInputError

    with open_binary(path) as handles:
        seen = 0
        while seen < HEADER_BYTES:
            chunk = handles.handle.read(1 << 20)
            if not chunk or b"\n" in chunk or b"\r" in chunk:
                return
            seen += len(chunk)
    raise InvalidInputError(f"input file {name!r} has no line break in its first {HEADER_BYTES >> 20} MiB: it is not "
                            "a CSV file with a header row (one line per record).")


def check_shape(path: Any, name: str, header: list, fmt: CsvFormat) -> None:
    """Refuse (``InvalidInputError``, one line naming the row and the fix) a CSV file whose
    rows do not all have as many fields as its header, or whose header looks written with
    another separator than ``fmt.sep``."""
    from ._errors import InvalidInputError

    if len(header) == 1:
        other = next((s for s in _OTHER_SEPARATORS if s != fmt.sep and s in str(header[0])), None)
        if other is not None:
            raise InvalidInputError(
                f"input file {name!r} has one column named {str(header[0])!r}: it looks separated by "
                f"{fmt.describe(other)}, not {fmt.describe(fmt.sep)}; pass --sep {other!r}"
                + (" (and --decimal ',' if its numbers have decimal commas)." if other == ";" else "."))
    bad = None
    if _pa is not None:
        try:
            bad = _first_bad_row_arrow(path, len(header), fmt.sep)
        except (ValueError, OSError, _pa.ArrowException):
            bad = _first_bad_row_python(path, len(header), fmt.sep)
    else:  # pragma: no cover - pyarrow is in the test extra
        bad = _first_bad_row_python(path, len(header), fmt.sep)
    if bad is None:
        return
    row, fields = bad
    hint = ""
    other = next((s for s in _OTHER_SEPARATORS if s != fmt.sep and any(s in str(h) for h in header)), None)
    if other is not None:
        hint = f" or pass --sep {other!r} if the file is separated by {fmt.describe(other)}"
    elif fmt.sep == "," and fmt.decimal == ".":
        hint = " or pass --sep if the fields are separated by another character"
    raise InvalidInputError(
        f"input file {name!r}: row {row} has {fields} field{'s' if fields != 1 else ''}, the header has "
        f"{len(header)} ({', '.join(map(repr, map(str, header[:8])))}{', ...' if len(header) > 8 else ''}); "
        f"every row needs one field per column: fix that row (a trailing {fmt.describe(fmt.sep)}, a missing or "
        f"unquoted field){hint}.")
