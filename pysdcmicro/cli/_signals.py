"""Signals on the command line: the one place that installs handlers for Ctrl-C (SIGINT).

:func:`managed` installs the handler for a command's run; each signal is counted in
:mod:`pysdcmicro._interrupt`, which tells the core what it means in the current phase
(first Ctrl-C: stop the search and write what there is; second: abort, exit status 130).
:func:`sigint_held` holds Ctrl-C during a short critical section (the final renames, the
removal of temporary files) and delivers it afterwards.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading

from .. import _interrupt

__all__ = ["managed", "sigint_held", "deferred"]

#: Python code that C calls back (numba's compiler loading or saving its cache through
#: llvmlite): a ``KeyboardInterrupt`` raised there is swallowed by ctypes ("Exception
#: ignored on calling ctypes callback function", with a traceback on stderr) and the
#: Ctrl-C is lost.
_CALLBACK_PARTS = (f"{os.sep}llvmlite{os.sep}",)
#: Functions (file, name) that Python itself calls where an exception is only printed
#: ("Exception ignored in: ...") and dropped: importlib's weakref callback on a module
#: lock, run when the lock is freed during an import.
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
    if _interrupt.note():
        raise KeyboardInterrupt


@contextlib.contextmanager
def managed():
    """Handle SIGINT by phase (see :mod:`pysdcmicro._interrupt`) for the duration of the
    block; a no-op outside the main thread or where signals cannot be set."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    try:
        previous = signal.signal(signal.SIGINT, _handler)
    except (ValueError, OSError):  # pragma: no cover - no signal support here
        yield
        return
    _interrupt.begin()
    try:
        yield
    finally:
        _interrupt.end()
        signal.signal(signal.SIGINT, signal.default_int_handler if previous is None else previous)


def deferred(count: int) -> None:
    """``count`` SIGINTs were held during a critical section (:func:`sigint_held`): count
    them now, raising ``KeyboardInterrupt`` if that makes a second one."""
    for _ in range(count):
        _handler(signal.SIGINT, None)


@contextlib.contextmanager
def sigint_held():
    """Hold Ctrl-C (SIGINT) during a short critical section (the renames, the clean-up) and
    raise it afterwards, so that a second Ctrl-C never leaves half a set of outputs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    try:
        previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    except (ValueError, OSError):  # pragma: no cover - no signal support here
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler if previous is None else previous)
        if received and _interrupt.is_managed():
            deferred(len(received))  # counted: a second Ctrl-C of the run aborts
        elif received and previous is not signal.SIG_IGN:
            raise KeyboardInterrupt
