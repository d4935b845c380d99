"""Run context handed to every algorithm core: randomness, time budget, progress, incumbent.

* ``rng``: one :class:`numpy.random.Generator` made once at the public entry
  (``np.random.default_rng(rng)``); solver seeds are drawn from it.
* ``deadline``: one ``time_limit`` in seconds, split across nested steps with
  :meth:`Context.child`. Cores poll :meth:`Context.expired` and return
  their incumbent with status ``"limit"`` when it is; they never raise on time-out.
* progress: cores call :meth:`Context.report`; the event (stage, iteration, best IL,
  lower bound, elapsed seconds) goes to the user's callback.
* incumbent: cores call :meth:`Context.offer` with each improved partition, so that an
  interruption (Ctrl-C) can still return the best partition found so far.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

__all__ = ["Deadline", "Context", "ProgressEvent", "TerminalProgress"]


class Deadline:
    """A point in time after which work must stop; ``None`` seconds means never.

    Examples
    --------
    >>> d = Deadline(None)
    >>> d.expired(), d.remaining()
    (False, inf)
    >>> Deadline(3600).child(fraction=0.5).remaining() <= 1800
    True
    """

    __slots__ = ("_end", "_clock", "_stop")

    def __init__(self, seconds: float | None = None, *, clock: Callable[[], float] = time.monotonic,
                 _end: float | None = None, _stop: list | None = None):
        self._clock = clock
        if _end is not None:
            self._end = _end
        else:
            self._end = math.inf if seconds is None else clock() + float(seconds)
        # Shared, mutable stop flag: stop() on any deadline of a family stops them all.
        self._stop = _stop if _stop is not None else [False]

    def remaining(self) -> float:
        if self._stop[0]:
            return 0.0
        return max(0.0, self._end - self._clock())

    def expired(self) -> bool:
        return self._stop[0] or self._clock() >= self._end

    @property
    def limited(self) -> bool:
        """Whether a finite limit applies."""
        return self._stop[0] or math.isfinite(self._end)

    def stop(self) -> None:
        """Expire this deadline and all its parents and children now (used on Ctrl-C)."""
        self._stop[0] = True

    def child(self, seconds: float | None = None, *, fraction: float | None = None) -> "Deadline":
        """A deadline no later than this one: ``seconds`` from now and/or a ``fraction``
        of the time remaining."""
        end = self._end
        now = self._clock()
        if seconds is not None:
            end = min(end, now + float(seconds))
        if fraction is not None and math.isfinite(self._end):
            end = min(end, now + fraction * max(0.0, self._end - now))
        return Deadline(clock=self._clock, _end=end, _stop=self._stop)


@dataclass
class ProgressEvent:
    """One progress report from a running method.

    ``information_loss`` and ``lower_bound`` are in IL percent when known, and so is
    :attr:`gap`.
    """

    method: str
    stage: str
    elapsed: float
    iteration: int | None = None
    information_loss: float | None = None
    lower_bound: float | None = None
    extra: dict = field(default_factory=dict)
    limit: float | None = None

    @property
    def gap(self) -> float | None:
        """(IL - lower bound) / IL in percent, when both are known (and IL > 0)."""
        if self.lower_bound is None or self.information_loss is None or self.information_loss <= 0:
            return None
        return 100.0 * (self.information_loss - self.lower_bound) / self.information_loss

    def fields(self) -> list[tuple[int, str]]:
        """The pieces of the progress line with their importance (0 = most important):
        elapsed/limit and phase 0, best IL 1, bound and gap 2, iteration 4, extras 5."""
        where = f"{self.method}/{self.stage}" if self.stage else self.method
        clock = f"{self.elapsed:7.1f}s" if self.limit is None else f"{self.elapsed:7.1f}s/{self.limit:g}s"
        parts = [(0, f"[{clock}]"), (0, where)]
        if self.iteration is not None:
            parts.append((4, f"it={self.iteration}"))
        if self.information_loss is not None:
            parts.append((1, f"IL={self.information_loss:.4f}"))
        if self.lower_bound is not None:
            parts.append((2, f"LB={self.lower_bound:.4f}"))
            if self.gap is not None:
                parts.append((2, f"gap={self.gap:.2f}%"))
        for key, value in self.extra.items():
            parts.append((5, f"{key}={value:.6g}" if isinstance(value, float) else f"{key}={value}"))
        return parts

    def fit(self, width: int) -> str:
        """The progress line in at most ``width`` characters: the least important fields are
        dropped whole (never cut mid-number); the phase name is shortened last. The clock
        is never dropped (a line narrower than it shows the clock alone)."""
        parts = self.fields()
        for level in (5, 4, 3, 2, 1):
            text = " ".join(t for _, t in parts)
            if len(text) <= width:
                return text
            parts = [(p, t) for p, t in parts if p < level]
        text = " ".join(t for _, t in parts)
        if len(text) > width:  # only the clock and the phase are left: shorten the phase
            clock = parts[0][1]
            room = width - len(clock) - 1
            text = clock if room < 2 else clock + " " + parts[1][1][: room - 1] + "~"
        return text

    def __str__(self) -> str:
        return " ".join(t for _, t in self.fields())


class _Shared:
    """State shared by a context and all its children."""

    __slots__ = ("callback", "sst", "method", "start", "best_sse", "best_labels", "history",
                 "keep_history", "limit", "threads")

    def __init__(self, callback, sst, method, keep_history):
        self.callback = callback
        self.sst = sst
        self.method = method
        self.start = time.monotonic()
        self.best_sse = math.inf
        self.best_labels = None
        self.history: list[ProgressEvent] = []
        self.keep_history = keep_history
        self.limit = None  # the call's time_limit, shown in progress lines
        self.threads = None  # threads a whole-data core may use (None: its own default)


class Context:
    """What an algorithm core receives besides the data: ``rng``, ``deadline``, progress.

    Cores take ``ctx`` as their third positional argument, e.g.
    ``solver(Z, k, ctx, **options)``. A context for a nested step comes from
    :meth:`child`; it shares the progress callback and the incumbent.
    """

    def __init__(self, rng: Any = None, time_limit: float | None = None, *,
                 callback: Callable[[ProgressEvent], Any] | None = None,
                 sst: float | None = None, method: str = "", stage: str = "",
                 keep_history: bool = False,
                 _deadline: Deadline | None = None, _shared: _Shared | None = None):
        self.rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        self.deadline = _deadline if _deadline is not None else Deadline(time_limit)
        if _shared is None:
            _shared = _Shared(callback, sst, method, keep_history)
            _shared.limit = time_limit
        self._shared = _shared
        self.stage = stage

    # -- time -----------------------------------------------------------------
    def expired(self) -> bool:
        return self.deadline.expired()

    def remaining(self) -> float:
        return self.deadline.remaining()

    def elapsed(self) -> float:
        return time.monotonic() - self._shared.start

    def child(self, seconds: float | None = None, *, fraction: float | None = None,
              stage: str | None = None, rng: np.random.Generator | None = None) -> "Context":
        """Context for a nested step with a deadline no later than this one."""
        return Context(rng if rng is not None else self.rng,
                       _deadline=self.deadline.child(seconds, fraction=fraction),
                       _shared=self._shared, stage=stage if stage is not None else self.stage)

    # -- randomness -----------------------------------------------------------
    def seed(self) -> int:
        """A seed for an external solver, drawn from ``rng`` (0 <= seed < 2**31 - 1)."""
        return int(self.rng.integers(0, 2**31 - 1))

    # -- progress and incumbent -----------------------------------------------
    def _il(self, sse_value: float | None) -> float | None:
        sst = self._shared.sst
        if sse_value is None or not sst:
            return None
        return 100.0 * sse_value / sst

    def report(self, *, iteration: int | None = None, sse: float | None = None,
               lower_bound: float | None = None, stage: str | None = None, **extra: Any) -> None:
        """Send a progress event; ``sse`` and ``lower_bound`` are SSE values of the
        partition space and are shown as IL percent."""
        sh = self._shared
        if sh.callback is None and not sh.keep_history:
            return
        event = ProgressEvent(
            method=sh.method, stage=stage if stage is not None else self.stage,
            elapsed=self.elapsed(), iteration=iteration,
            information_loss=self._il(sse), lower_bound=self._il(lower_bound), extra=extra,
            limit=sh.limit,
        )
        if sh.keep_history:
            sh.history.append(event)
        if sh.callback is not None:
            sh.callback(event)

    def offer(self, labels: np.ndarray, sse_value: float) -> bool:
        """Record ``labels`` as incumbent if its SSE is the lowest seen; returns whether it was."""
        sh = self._shared
        if sse_value < sh.best_sse:
            sh.best_sse = float(sse_value)
            sh.best_labels = np.array(labels, copy=True)
            return True
        return False

    def reset_incumbent(self) -> None:
        self._shared.best_sse = math.inf
        self._shared.best_labels = None

    @property
    def incumbent(self) -> tuple[np.ndarray | None, float]:
        return self._shared.best_labels, self._shared.best_sse

    @property
    def history(self) -> list[ProgressEvent]:
        return self._shared.history

    def set_sst(self, sst: float | None) -> None:
        self._shared.sst = sst


class TerminalProgress:
    """Show progress events on a terminal (stderr by default).

    On a terminal (``live``): one line, rewritten in place with a carriage return at most
    every ``interval`` seconds (0.1 s by default), fitted to the terminal's width by
    dropping the least important fields whole (never cut mid-number), ended with a newline
    by :meth:`close`. Elsewhere (a log file, a notebook): one line per event, at most every
    ``interval`` seconds (2 s by default). The last event is always shown by :meth:`close`,
    so the final state (best IL, bound) is on screen when the run ends.

    A *heartbeat* (a daemon thread) shows the last state again, its clock moved on, when no
    line was shown for ``heartbeat`` seconds (2 s by default; ``None``: off), so a long step
    that reports nothing (a solver call, a worker process) still updates the display.
    """

    def __init__(self, interval: float | None = None, stream=None, *, live: bool | None = None,
                 heartbeat: float | None = 2.0):
        import threading

        self.stream = stream if stream is not None else sys.stderr
        if live is None:
            isatty = getattr(self.stream, "isatty", None)
            live = bool(isatty()) if callable(isatty) else False
        self.live = live
        self.interval = interval if interval is not None else (0.1 if live else 2.0)
        self.heartbeat = heartbeat
        self._last = -math.inf
        self._pending: ProgressEvent | None = None
        self._latest: tuple[ProgressEvent, float] | None = None
        self._width = 0
        self._shown = False
        self._lock = threading.RLock()
        self._thread = None
        self._closed = threading.Event()

    def __call__(self, event: ProgressEvent) -> None:
        now = time.monotonic()
        with self._lock:
            self._latest = (event, now)
            if now - self._last >= self.interval:
                self._last = now
                self._show(event)
            else:
                self._pending = event
        if self.heartbeat is not None and self._thread is None:
            import threading

            self._thread = threading.Thread(target=self._beat, name="pysdcmicro-progress", daemon=True)
            self._thread.start()

    def _beat(self) -> None:
        period = max(0.05, self.heartbeat / 4)
        while not self._closed.wait(period):
            with self._lock:
                now = time.monotonic()
                if self._latest is None or now - self._last < self.heartbeat:
                    continue
                event, when = self._latest
                import dataclasses

                moved = dataclasses.replace(event, elapsed=event.elapsed + (now - when))
                self._last = now
                self._show(moved)

    def _show(self, event: ProgressEvent) -> None:
        self._pending = None
        self._shown = True
        try:
            if self.live:
                import shutil

                columns = shutil.get_terminal_size((100, 24)).columns - 1
                text = event.fit(columns)
                self.stream.write("\r" + text.ljust(self._width))
                self._width = len(text)
            else:
                self.stream.write(str(event) + "\n")
            self.stream.flush()
        except (OSError, ValueError):  # a closed stream must never stop the computation
            pass

    def close(self) -> None:
        """Show the last event if it was held back, and end the live line."""
        self._closed.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
            self._thread = None
        with self._lock:
            if self._pending is not None:
                self._show(self._pending)
            if self.live and self._shown:
                try:
                    self.stream.write("\n")
                    self.stream.flush()
                except (OSError, ValueError):
                    pass
                self._shown = False
