"""Large numpy loops on a few threads, with the plain loop's results bit for bit.

numpy releases the GIL inside its per-column and per-chunk work (bincount, arithmetic,
reductions), so the columns of a million-record array, or its row chunks, go faster on
threads. The results come back in the order of the items, and callers combine them in that
order, so every sum is the one of the plain loop.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Iterable

__all__ = ["ordered_map", "THREAD_CELLS"]

#: Work (cells) above which the items are spread over threads.
THREAD_CELLS = 1 << 20

#: At most this many threads: the work is memory-bound beyond.
MAX_THREADS = 8


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover  (not Linux)
        return os.cpu_count() or 1


def ordered_map(fn: Callable[[Any], Any], items: Iterable, cells: int) -> list:
    """``[fn(item) for item in items]``, on up to :data:`MAX_THREADS` threads (no more than
    the cores or the items) when ``cells`` is at least :data:`THREAD_CELLS`."""
    items = list(items)
    threads = min(len(items), _cores(), MAX_THREADS)
    if threads < 2 or cells < THREAD_CELLS:
        return [fn(item) for item in items]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(fn, items))
