"""Wall seconds per phase of a command-line run, for the benchmarks (off by default).

With the environment variable ``PYSDCMICRO_PHASES`` set to a file name, the command line
appends one JSON line to that file when it ends: ``{"main_entry_unix": ..., "phases":
{name: seconds, ...}}`` (phases in the order they first ran; a phase run twice adds up).
Without it, :func:`phase` costs one global lookup. ``benchmarks/suites/large.py --par-cli``
reads the line and puts the phase seconds next to its row.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from typing import Iterator

_PATH = os.environ.get("PYSDCMICRO_PHASES") or None
_SECONDS: dict[str, float] = {}
_ENTRY: list[float] = []


@contextlib.contextmanager
def phase(name: str) -> Iterator[None]:
    """Add the wall seconds of the ``with`` body to phase ``name`` (when enabled)."""
    if _PATH is None:
        yield
        return
    start = time.perf_counter()
    try:
        yield
    finally:
        _SECONDS[name] = _SECONDS.get(name, 0.0) + time.perf_counter() - start


def entered() -> None:
    """Record when the command line's ``main`` started (after Python started and imported it)."""
    if _PATH is not None:
        _SECONDS.clear()
        _ENTRY[:] = [time.time()]


def dump() -> None:
    """Append the phases to the file named by ``PYSDCMICRO_PHASES`` (when enabled)."""
    if _PATH is None:
        return
    line = {"main_entry_unix": _ENTRY[0] if _ENTRY else None, "phases": {k: round(v, 4) for k, v in _SECONDS.items()}}
    with open(_PATH, "a") as fh:
        fh.write(json.dumps(line) + "\n")
