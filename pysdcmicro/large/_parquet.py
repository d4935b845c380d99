"""Parquet files too large for pandas: read in batches, written batch by batch, checked on disk.

The CLI takes this path with ``--dask`` when both the input and ``--output`` are Parquet
files (:func:`run_cli`). The only whole-data arrays in this process are the ``n x d`` float
matrix of the columns microaggregated, its standardized copy and the released values inside
:func:`pysdcmicro.microaggregate`, and the labels; the other columns are never held whole:
the output is written row group by row group from the input, each batch's microaggregated
columns replaced by their released values.

The written file is then checked on its own (:func:`check_written`): its microaggregated
columns are read back in batches, the records sorted on their values, and every run of
identical records must have at least ``k`` of them (k-anonymity of what was written, not of
the labels); the information loss is recomputed from the original and the written values
with plain z-scores and must equal the result's.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import numpy as np

from .._errors import InvalidInputError, ReleaseCheckError

__all__ = ["read_matrix", "write_release", "check_written", "run_cli"]

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


class _BlockLines:
    """Progress on a stream that is not a terminal: a line per block solved or repair window
    done (at most one a second; always the last one and every new information loss)."""

    def __init__(self, stream=None):
        self.stream = stream if stream is not None else sys.stderr
        self.last = -1e9

    def __call__(self, event) -> None:
        now = time.monotonic()
        extra = event.extra or {}
        count = str(extra.get("blocks", extra.get("windows", "")))
        done, _, total = count.partition("/")
        if now - self.last >= 1.0 or (total and done == total) or event.information_loss is not None:
            self.last = now
            try:
                print(str(event), file=self.stream, flush=True)
            except (OSError, ValueError):
                pass

    def close(self) -> None:
        pass


def streaming_applies(args: Any) -> bool:
    """The CLI's large-data Parquet path: ``--dask``, Parquet in and out, and none of the
    options that need the whole table in pandas."""
    def parquet(p):
        return p is not None and str(p).lower().endswith((".parquet", ".pq"))

    return bool(args.dask) and parquet(args.input) and parquet(args.output) and not (
        args.strata or args.weights or args.report or args.html or args.decimals is not None
        or args.measure != "mean" or (args.variables and ";" in args.variables))


def run_cli(args: Any, *, method: str, options: dict, improve: Any, improve_options: Any, blocks: Any) -> int:
    """``pysdcmicro microaggregate IN.parquet --dask ADDRESS -o OUT.parquet``: read the
    columns in batches, run the blocks on the cluster, write and check the file. Returns the
    exit status."""
    from .. import microaggregate
    from .._api import _TerminalProgress
    from .._validation import identifier_reason
    from ..cli import _Outputs, _split_list

    started = time.monotonic()
    requested = _split_list(args.variables)
    if requested is None:
        candidates = numeric_columns(args.input)
        X = read_matrix(args.input, candidates)
        keep = [j for j, c in enumerate(candidates) if not identifier_reason(X[:, j], c)]
        left = [c for j, c in enumerate(candidates) if j not in keep]
        if not keep:
            raise InvalidInputError(f"input file {args.input!r} has no numeric column to microaggregate by default; "
                                    "name the columns in --variables.")
        variables = [candidates[j] for j in keep]
        if left:
            X = np.ascontiguousarray(X[:, keep])
            print(f"pysdcmicro: warning: default variables: microaggregating {', '.join(variables)}; left out "
                  f"{', '.join(left)} (identifier-like or constant); name them in --variables to include them.",
                  file=sys.stderr)
    else:
        variables = requested
        X = read_matrix(args.input, variables)
    seconds_read = time.monotonic() - started
    show = not args.quiet
    progress = None
    if show:
        progress = _TerminalProgress() if sys.stderr.isatty() else _BlockLines()
    result = microaggregate(
        X, args.k, method=method, missing=args.missing, improve=improve, improve_options=improve_options,
        scaling=args.scaling, rng=args.seed, time_limit=args.time_limit, progress=progress, blocks=blocks,
        n_jobs=args.n_jobs, client=args.dask, **options)
    if show and isinstance(progress, _BlockLines):
        progress.close()
    released = result.data
    t_write = time.monotonic()
    with _Outputs() as out:
        tmp = out.write(args.output, "the masked file (--output)",
                        lambda p: write_release(args.input, p, variables, released))
        seconds_write = time.monotonic() - t_write
        released = result.data = None  # on disk now: free it before the check reads the file back
        check = check_written(tmp, variables, X, result.k, result.information_loss)
        out.commit()
    seconds_check = time.monotonic() - t_write - seconds_write
    if not args.quiet:
        blocks_info = result.info.get("blocks", {})
        memory = result.info.get("memory", {})
        lines = [
            f"pysdcmicro: {args.input} -> {args.output}: {X.shape[0]} records, "
            f"{len(variables)} variables ({', '.join(map(str, variables))}), k={result.k}",
            f"  method {result.method}, status {result.status}" + (f" ({result.message})" if result.message else ""),
            f"  groups {result.n_groups}, information loss {result.information_loss:.6f} %",
            f"  checked on the written file: smallest class {check['smallest_class']} >= k={result.k}"
            + (f", {check['equivalence_classes']} classes" if check["equivalence_classes"] is not None else "")
            + f", information loss recomputed {check['information_loss']:.6f} %",
            f"  blocks {blocks_info.get('count', 1)} on {blocks_info.get('executor', '?')} "
            f"({blocks_info.get('workers', '?')} workers); seconds: read {seconds_read:.1f}, "
            f"microaggregate {result.seconds:.1f}, write {seconds_write:.1f}, check {seconds_check:.1f}, "
            f"total {time.monotonic() - started:.1f}",
            f"  peak memory: this process {memory.get('main_peak_mib', 0.0):.0f} MiB, largest worker "
            f"{memory.get('worker_peak_mib', 0.0):.0f} MiB",
        ]
        print("\n".join(lines), file=sys.stdout)
    return 0
