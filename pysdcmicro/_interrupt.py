"""Ctrl-C (SIGINT) as the ``pysdcmicro`` command handles it (issue 19).

The first Ctrl-C means "stop searching and write what you have"; a second one means
"abort": nothing is written, exit status 130.

While :func:`managed` is active (the command's run, main thread only), what the first
SIGINT does depends on the phase of the run:

* while the data are read, checked and standardised: it is recorded and the run goes on to
  the point where a partition can be made; the method is then not started
  (:func:`start_solving` raises :class:`InterruptedBeforeSolve`, a ``KeyboardInterrupt``)
  and the records are grouped in runs of k along their first principal axis;
* while a method searches (between :func:`start_solving` and :func:`stop_solving`): it
  raises ``KeyboardInterrupt`` there, as Python's default handler does, and the method
  returns its best partition so far (status ``limit``);
* after the search (the release is built, checked, written, the report made): it is
  recorded, the outputs are finished (the report leaves out its utility and risk measures,
  the HTML page its plots) and written; if it comes while those measures or plots are
  being computed (:func:`stoppable`), they are stopped and left out.

A second SIGINT, at any moment, raises ``KeyboardInterrupt`` at once. Without
:func:`managed` (the Python API) nothing here changes Python's behaviour: Ctrl-C raises
``KeyboardInterrupt`` wherever it lands and a running method returns its incumbent.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time

__all__ = ["managed", "start_solving", "stop_solving", "received", "InterruptedBeforeSolve"]


class InterruptedBeforeSolve(KeyboardInterrupt):
    """Ctrl-C came while the data were read and prepared: the method is not started."""


class _State:
    active = False
    solving = 0
    count = 0
    first_at: float | None = None


_state = _State()


#: Python code that C calls back (numba's compiler loading or saving its cache through
#: llvmlite): a ``KeyboardInterrupt`` raised there is swallowed by ctypes ("Exception
#: ignored on calling ctypes callback function", with a traceback on stderr) and the Ctrl-C
#: is lost. Seen in the start-up test with a cold numba cache.
_CALLBACK_PARTS = (f"{os.sep}llvmlite{os.sep}",)
#: Functions (file, name) that Python itself calls where an exception is only printed
#: ("Exception ignored in: ...") and dropped: importlib's weakref callback on a module lock,
#: run when the lock is freed during an import. Seen once in the start-up test (a fresh
#: venv, SIGINT at 1 s).
_SWALLOWING_FUNCTIONS = (("<frozen importlib._bootstrap>", "cb"),)


def _in_callback(frame) -> bool:
    while frame is not None:
        code = frame.f_code
        if any(part in code.co_filename for part in _CALLBACK_PARTS) or \
                (code.co_filename, code.co_name) in _SWALLOWING_FUNCTIONS:
            return True
        frame = frame.f_back
    return False


def _handler(signum, frame) -> None:
    if _in_callback(frame):
        # Deliver it again in 50 ms, out of the callback; it is not counted now.
        timer = threading.Timer(0.05, os.kill, (os.getpid(), signum))
        timer.daemon = True
        timer.start()
        return
    _state.count += 1
    if _state.first_at is None:
        _state.first_at = time.monotonic()
    if _state.count >= 2 or _state.solving:
        raise KeyboardInterrupt


@contextlib.contextmanager
def managed():
    """Handle SIGINT by phase (see the module docstring) for the duration of the block;
    a no-op outside the main thread or where signals cannot be set."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    try:
        previous = signal.signal(signal.SIGINT, _handler)
    except (ValueError, OSError):  # pragma: no cover - no signal support here
        yield
        return
    _state.active, _state.solving, _state.count, _state.first_at = True, 0, 0, None
    try:
        yield
    finally:
        _state.active, _state.solving = False, 0
        signal.signal(signal.SIGINT, signal.default_int_handler if previous is None else previous)


def start_solving() -> None:
    """A method starts searching: a first Ctrl-C now raises ``KeyboardInterrupt``. If one
    came before (while reading and preparing), raise :class:`InterruptedBeforeSolve`."""
    if not _state.active:
        return
    if _state.count:
        raise InterruptedBeforeSolve
    _state.solving += 1


def stop_solving() -> None:
    """The search is over: a first Ctrl-C is only recorded again."""
    if _state.active and _state.solving:
        _state.solving -= 1


@contextlib.contextmanager
def stoppable():
    """A slow optional step after the search (the report's measures, the HTML plots): a
    first Ctrl-C during it raises ``KeyboardInterrupt`` there, as during a search, so that
    the caller can leave the step out (see :func:`first_only`) and write the outputs at once."""
    if not _state.active:
        yield
        return
    _state.solving += 1
    try:
        yield
    finally:
        if _state.solving:
            _state.solving -= 1


def first_only() -> bool:
    """After a ``KeyboardInterrupt`` in a managed run: whether it was the first Ctrl-C (go
    on and write the outputs) rather than the second (abort)."""
    return _state.active and _state.count == 1


def received() -> bool:
    """Whether a Ctrl-C came during the managed run."""
    return _state.active and _state.count > 0


def deferred(count: int) -> None:
    """``count`` SIGINTs were held during a critical section (see ``cli._sigint_held``):
    count them now, raising ``KeyboardInterrupt`` if that makes a second one."""
    for _ in range(count):
        _handler(signal.SIGINT, None)


def is_managed() -> bool:
    return _state.active
