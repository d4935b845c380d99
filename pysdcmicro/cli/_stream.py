"""``pysdcmicro microaggregate IN.parquet --dask ADDRESS -o OUT.parquet``: Parquet files too
large for pandas, read in batches, the blocks run on a Dask cluster, the output written batch
by batch and checked on disk (:mod:`pysdcmicro.large._parquet`), through the same
all-or-nothing outputs as every other command (:class:`._files.Outputs`).

The only whole-data arrays in this process are the ``n x d`` float matrix of the columns
microaggregated, its standardized copy and the released values inside the library, and the
labels.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import numpy as np

from .._errors import InvalidInputError
from ..large._parquet import check_written, numeric_columns, read_matrix, write_release
from . import _files, _parser

__all__ = ["applies", "run"]


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


def applies(args: Any) -> bool:
    """The CLI's large-data Parquet path: ``--dask``, Parquet in and out, and none of the
    options that need the whole table in pandas."""
    def parquet(p):
        return p is not None and str(p).lower().endswith((".parquet", ".pq"))

    return bool(args.dask) and parquet(args.input) and parquet(args.output) and not (
        args.strata or args.weights or args.report or args.html or args.decimals is not None
        or args.measure != "mean" or (args.variables and ";" in args.variables))


def run(args: Any, *, method: str, options: dict, improve: Any, improve_options: Any, blocks: Any) -> int:
    """``pysdcmicro microaggregate IN.parquet --dask ADDRESS -o OUT.parquet``: read the
    columns in batches, run the blocks on the cluster, write and check the file. Returns the
    exit status."""
    from .._api import _TerminalProgress, microaggregate
    from .._validation import identifier_reason

    started = time.monotonic()
    requested = _parser.split_list(args.variables)
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
    with _files.Outputs() as out:
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
