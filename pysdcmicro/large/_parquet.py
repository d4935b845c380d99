"""Parquet files too large for pandas: read in batches, written batch by batch, checked on disk.

Array-level I/O only (the command that uses it is :mod:`pysdcmicro.cli._stream`): the
columns microaggregated are read into one ``n x d`` float matrix (:func:`read_matrix`); the
other columns are never held whole: the output is written row group by row group from the
input, each batch's microaggregated columns replaced by their released values
(:func:`write_release`).

The written file is then checked on its own (:func:`check_written`): its microaggregated
columns are read back in batches, the records sorted on their values, and every run of
identical records must have at least ``k`` of them (k-anonymity of what was written, not of
the labels); the information loss is recomputed from the original and the written values
with plain z-scores and must equal the result's.
"""

from __future__ import annotations

import numpy as np

from .._errors import InvalidInputError, ReleaseCheckError

__all__ = ["numeric_columns", "read_matrix", "write_release", "check_written"]

#: Records per batch read or written (a batch of 10 float columns: 80 MB at most).
BATCH_ROWS = 1 << 20


def _pq():
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise InvalidInputError(
            "Parquet files need the optional dependency pyarrow; install it with `pip install 'pysdcmicro[parquet]'`."
        ) from None
    return pa, pq


def _open(path: str):
    pa, pq = _pq()
    try:
        return pq.ParquetFile(path)
    except (OSError, pa.ArrowException) as exc:
        raise InvalidInputError(f"input file {path!r} is not a readable Parquet file: {exc}") from None


def numeric_columns(path: str) -> list[str]:
    """Names of the integer and floating-point columns of a Parquet file (its schema only)."""
    pa, _ = _pq()
    schema = _open(path).schema_arrow
    return [f.name for f in schema if pa.types.is_integer(f.type) or pa.types.is_floating(f.type)]


def read_matrix(path: str, columns: list[str]) -> np.ndarray:
    """The ``columns`` of a Parquet file as one ``(n, len(columns))`` float64 matrix (a null
    is NaN), filled batch by batch: no other copy of the data is made."""
    pa, _ = _pq()
    f = _open(path)
    names = [field.name for field in f.schema_arrow]
    for c in columns:
        if c not in names:
            raise InvalidInputError(f"unknown column {c!r} in --variables; the data has columns: "
                                    f"{', '.join(names[:20])}.")
        typ = f.schema_arrow.field(c).type
        if not (pa.types.is_integer(typ) or pa.types.is_floating(typ)):
            raise InvalidInputError(f"column {c!r} must be numeric to be microaggregated; its Parquet type is {typ}.")
    from .._validation import _check_exact_integers

    integer = [pa.types.is_integer(f.schema_arrow.field(c).type) for c in columns]
    n = f.metadata.num_rows
    X = np.empty((n, len(columns)), dtype=np.float64)  # filled in place: no second copy
    at = 0
    for batch in f.iter_batches(batch_size=BATCH_ROWS, columns=columns):
        m = batch.num_rows
        for j in range(len(columns)):
            col = batch.column(j)
            if integer[j]:  # the API's rule: integers beyond 2**53 are refused, not rounded
                import pandas as pd

                _check_exact_integers(col.fill_null(0).to_numpy(zero_copy_only=False), columns[j],
                                      pd.RangeIndex(at, at + m))
            X[at:at + m, j] = col.to_numpy(zero_copy_only=False)
        at += m
    if at != n:  # pragma: no cover  (a broken file)
        raise InvalidInputError(f"input file {path!r} has {at} records in its row groups, {n} in its footer.")
    return X


def write_release(source: str, target: str, columns: list[str], released: np.ndarray) -> None:
    """Copy ``source`` to ``target`` batch by batch, ``columns`` replaced by ``released``
    (float64); every other column keeps its values and type."""
    pa, pq = _pq()
    f = _open(source)
    schema = f.schema_arrow
    for c in columns:
        schema = schema.set(schema.get_field_index(c), pa.field(c, pa.float64(), nullable=True))
    position = {c: j for j, c in enumerate(columns)}
    at = 0
    with pq.ParquetWriter(target, schema) as writer:
        for batch in f.iter_batches(batch_size=BATCH_ROWS):
            m = batch.num_rows
            arrays = []
            for name, col in zip(batch.schema.names, batch.columns):
                if name in position:
                    values = released[at:at + m, position[name]]
                    arrays.append(pa.array(values, type=pa.float64(), from_pandas=True))
                else:
                    arrays.append(col)
            writer.write_batch(pa.RecordBatch.from_arrays(arrays, schema=schema))
            at += m


def check_written(path: str, columns: list[str], X: np.ndarray, k: int, information_loss: float) -> dict:
    """Check the written file itself: k-anonymous on ``columns`` and the information loss as
    reported. Raises :class:`~pysdcmicro.ReleaseCheckError` otherwise; returns what it found.

    The records are sorted on their written values (``np.lexsort``) and runs of identical
    records counted; with missing cells (a missing cell matches any value) the wildcard
    frequencies of :func:`pysdcmicro._release.wildcard_frequencies` are used instead."""
    R = read_matrix(path, columns)
    n = R.shape[0]
    if R.shape != X.shape:
        raise ReleaseCheckError(f"release check failed: the written file has {n} records, the input {X.shape[0]}")
    if np.isnan(R).any() or np.isnan(X).any():
        from .._release import wildcard_frequencies

        smallest = int(wildcard_frequencies(R).min())
        classes = None
    else:
        order = np.lexsort(R.T[::-1])
        change = np.zeros(n - 1, dtype=bool)
        for j in range(R.shape[1]):
            col = R[order, j]
            change |= col[1:] != col[:-1]
        starts = np.concatenate([[0], np.flatnonzero(change) + 1, [n]])
        sizes = np.diff(starts)
        del order, change
        smallest = int(sizes.min())
        classes = int(sizes.size)
    if smallest < k:
        raise ReleaseCheckError(f"release check failed: a record of the written file is matched by only {smallest} "
                                f"record(s), fewer than k={k}")
    sse = sst = 0.0
    for j in range(X.shape[1]):
        x = X[:, j]
        seen = ~np.isnan(x) & ~np.isnan(R[:, j])
        x = x[seen]
        sd = float(np.std(x, ddof=1)) if x.size > 1 else 0.0
        if not sd > 0:
            continue  # a constant column: nothing to lose
        z = (x - x.mean()) / sd
        sst += float(z @ z)
        e = (x - R[seen, j]) / sd
        sse += float(e @ e)
    il = 100.0 * sse / sst
    if not abs(il - information_loss) <= 1e-6 * max(1.0, abs(information_loss)):
        raise ReleaseCheckError(f"release check failed: the written file's information loss is {il:.9g}, the "
                                f"result reports {information_loss:.9g}")
    return {"records": n, "equivalence_classes": classes, "smallest_class": smallest, "information_loss": il}
