"""Work units of the large-data path, run in worker processes (or Dask workers).

Module-level functions with plain, picklable arguments: a worker receives only its own
block or window of records (never the whole data set), the method core and the improvement
steps resolved by the caller (so a worker needs no registry lookup), a seed drawn up front from the caller's
``rng`` and a time budget in seconds. What comes back is the block's labels and a few facts,
among them the worker's process id and peak resident memory, so the caller can report the
memory of its workers.
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

__all__ = ["solve_block_task", "improve_window_task", "peak_rss_kib"]


def peak_rss_kib() -> int:
    """Peak resident memory of this process in KiB (0 where the platform tells nothing).

    Linux: ``VmHWM`` of ``/proc/self/status``, the peak of this process image (a spawned
    worker's ``ru_maxrss`` would include its parent's peak at the fork before exec).
    """
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    try:
        import resource
    except ImportError:  # pragma: no cover  (Windows)
        return 0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak // 1024) if os.uname().sysname == "Darwin" else int(peak)


def _improver_core(improver: Any):
    from ._local import batch_local_search

    if isinstance(improver, str) and improver == "batch":
        return batch_local_search
    return improver


def solve_block_task(Z: np.ndarray, k: int, method: Any, options: dict, improve: Any,
                     improve_options: dict | None, seed: int, seconds: float | None) -> dict:
    """Run the method (then the improvement steps) on one block; labels 0..g-1 of the block,
    and their SSE (computed here, in parallel, so that the caller need not recompute it).

    ``method`` is the method core and ``improve`` the improvement steps, both resolved by the
    caller (:func:`pysdcmicro._solve.resolve_improve`); ``improve_options`` is unused."""
    from .._context import Context
    from .._solve import solve_block

    started = time.perf_counter()
    from .._partition import sse

    ctx = Context(seed, seconds)
    Z = np.ascontiguousarray(Z)
    sol, _ = solve_block(method, options, list(improve or ()), Z, k, ctx)
    labels = np.asarray(sol.labels, dtype=np.int64)
    return {"labels": labels, "sse": sse(Z, labels) if labels.shape == (Z.shape[0],) else None,
            "status": sol.status, "message": sol.message, "info": sol.info,
            "seconds": time.perf_counter() - started, "pid": os.getpid(), "peak_kib": peak_rss_kib()}


def improve_window_task(Z: np.ndarray, labels: np.ndarray, k: int, improver: Any, options: dict,
                        seed: int, seconds: float | None, regions: np.ndarray | None = None) -> dict:
    """Run an improvement core on one repair window; its labels, or None if it did not help.

    ``regions`` (the built-in search only): where each record was last improved, so the
    search starts at the borders between them (see :func:`~pysdcmicro.large.batch_local_search`)."""
    from .._context import Context
    from .._partition import check_partition, sse

    started = time.perf_counter()
    Z = np.ascontiguousarray(Z)
    ctx = Context(seed, seconds)
    before = sse(Z, labels)
    if regions is not None and improver == "batch":
        options = {**options, "regions": regions}
    out = _improver_core(improver)(Z, labels, k, ctx, **options)
    new = np.asarray(getattr(out, "labels", out), dtype=np.int64)
    status = getattr(out, "status", "done")
    message = getattr(out, "message", "")
    try:
        check_partition(new, Z.shape[0], k)
        after = sse(Z, new)
    except Exception as exc:  # an improver bug must not break the partition: keep the input
        return {"labels": None, "status": "done", "message": f"invalid partition discarded: {exc}",
                "before": before, "after": before, "seconds": time.perf_counter() - started,
                "pid": os.getpid(), "peak_kib": peak_rss_kib()}
    improved = after < before - 1e-12 * max(1.0, abs(before))
    return {"labels": new if improved else None, "status": status, "message": message,
            "before": before, "after": after if improved else before,
            "seconds": time.perf_counter() - started, "pid": os.getpid(), "peak_kib": peak_rss_kib()}
