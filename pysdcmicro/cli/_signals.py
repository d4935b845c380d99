"""Signals on the command line: the one place that installs handlers for Ctrl-C (SIGINT),
SIGTERM and SIGHUP. The three mean the same: stop.

:func:`terminating` makes SIGTERM and SIGHUP raise ``KeyboardInterrupt`` as Ctrl-C does, for
the whole command, so that every way of stopping it removes the temporary files and exits
with one line (status 130) instead of leaving them behind. :func:`managed` installs the
handler for a microaggregation run; each signal is counted in :mod:`pysdcmicro._interrupt`,
which tells the core what it means in the current phase (first: stop the search and write
what there is; second: abort, exit status 130). `stop_signals_held` holds them during a
short critical section (the final renames, the removal of temporary files) and delivers
them afterwards.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from typing import Any

from .. import _interrupt

__all__ = ["terminating", "managed", "stop_signals_held", "deferred", "abort_if_second", "hold_until_exit"]

#: The signals that stop a command (those this platform has).
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))

#: Python code that C calls back (numba's compiler loading or saving its cache through
#: llvmlite): a ``KeyboardInterrupt`` raised there is swallowed by ctypes ("Exception
#: ignored on calling ctypes callback function", with a traceback on stderr) and the
#: Ctrl-C is lost.
_CALLBACK_PARTS = (f"{os.sep}llvmlite{os.sep}",)
#: Functions (file, name) that Python itself calls where an exception is only printed
#: ("Exception ignored in: ...") and dropped: importlib's weakref callback on a module
#: lock, run when the lock is freed during an import.
_SWALLOWING_FUNCTIONS = (("<frozen importlib._bootstrap>", "cb"),)
#: Names of such functions wherever they are: finalizers, and weakref callbacks such as the
#: one a process pool's manager thread registers (``concurrent.futures.process``).
_SWALLOWING_NAMES = ("__del__", "weakref_cb")


def _in_callback(frame) -> bool:
    while frame is not None:
        code = frame.f_code
        if any(part in code.co_filename for part in _CALLBACK_PARTS) or code.co_name in _SWALLOWING_NAMES or \
                (code.co_filename, code.co_name) in _SWALLOWING_FUNCTIONS:
            return True
        frame = frame.f_back
    return False


#: The read end of the pipe that Python's C-level signal handler writes one byte to for
#: every signal it receives (``signal.set_wakeup_fd``), while :func:`managed` is active.
_wakeup_read: int | None = None


def _drained() -> int:
    """How many stop signals arrived since the last call, as the C-level handler counted
    them. Python runs a signal's handler once for several of the same signal that come while
    the main thread is inside one long C call (a compiled kernel, a numpy operation); this
    count does not merge them, so a second Ctrl-C is never lost in the first."""
    count = 0
    while _wakeup_read is not None:
        try:
            data = os.read(_wakeup_read, 512)
        except OSError:  # (BlockingIOError: the pipe is empty)
            break
        if not data:
            break
        count += sum(1 for byte in data if byte in STOP_SIGNALS)
    return count


def _handler(signum, frame) -> None:
    count = max(1, _drained())
    if _in_callback(frame):
        # Deliver them again in 50 ms, out of the callback; they are not counted now.
        for _ in range(count):
            timer = threading.Timer(0.05, os.kill, (os.getpid(), signum))
            timer.daemon = True
            timer.start()
        return
    stop = False
    for _ in range(count):
        stop = _interrupt.note() or stop
    if stop:
        raise KeyboardInterrupt


def _install(handler: Any, signals: tuple) -> dict | None:
    """Set ``handler`` for ``signals``; the previous handlers, or None where signals cannot be
    set (not the main thread, no signal support): then nothing is changed. A signal that the
    process was started ignoring stays ignored, as Python leaves an ignored SIGINT: under
    ``nohup`` a closed terminal (SIGHUP) does not stop the run, nor a Ctrl-C a job that its
    shell started in the background."""
    if threading.current_thread() is not threading.main_thread():
        return None
    previous: dict = {}
    try:
        for signum in signals:
            if signal.getsignal(signum) is signal.SIG_IGN:
                continue
            previous[signum] = signal.signal(signum, handler)
    except (ValueError, OSError):  # pragma: no cover - no signal support here
        _restore(previous)
        return None
    return previous


def _restore(previous: dict) -> None:
    for signum, handler in previous.items():
        if handler is None:  # set from C: Python's own defaults
            handler = signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL
        signal.signal(signum, handler)


def _raise_interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def terminating():
    """SIGTERM and SIGHUP raise ``KeyboardInterrupt`` during the block, as Ctrl-C does."""
    previous = _install(_raise_interrupt, tuple(s for s in STOP_SIGNALS if s != signal.SIGINT))
    try:
        yield
    finally:
        if previous:
            _restore(previous)


@contextlib.contextmanager
def managed():
    """Handle the stop signals by phase (see :mod:`pysdcmicro._interrupt`) for the duration
    of the block; a no-op outside the main thread or where signals cannot be set."""
    previous = _install(_handler, STOP_SIGNALS)
    if previous is None:
        yield
        return
    wakeup = _count_signals()
    _interrupt.begin()
    try:
        yield
    finally:
        _interrupt.end()
        _restore(previous)
        _stop_counting(wakeup)


def _count_signals() -> tuple | None:
    """Have the C-level handler write a byte per signal to a pipe (:func:`_drained`);
    returns what :func:`_stop_counting` restores (None where it cannot be set)."""
    global _wakeup_read
    try:
        read, write = os.pipe()
    except OSError:  # pragma: no cover - out of file descriptors
        return None
    for fd in (read, write):
        os.set_blocking(fd, False)
    try:
        old = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    except (ValueError, OSError):  # pragma: no cover - not the main thread
        os.close(read)
        os.close(write)
        return None
    _wakeup_read = read
    return read, write, old


def _stop_counting(wakeup: tuple | None) -> None:
    global _wakeup_read
    if wakeup is None:
        return
    read, write, old = wakeup
    signal.set_wakeup_fd(old)
    _wakeup_read = None
    os.close(read)
    os.close(write)


def hold_until_exit(received: list) -> None:
    """From now until the process ends, record the stop signals in ``received`` instead of
    acting on them (the command is done; :func:`pysdcmicro.cli.leave`)."""
    _install(lambda signum, frame: received.append(signum), STOP_SIGNALS)


def abort_if_second() -> None:
    """Raise ``KeyboardInterrupt`` if a second stop signal has come in this run, also one
    that a method caught as a first Ctrl-C (it returned its incumbent): called before any
    output is put in place, so that a second Ctrl-C never ends with the outputs written."""
    if _interrupt.received() and not _interrupt.first_only():
        raise KeyboardInterrupt


def deferred(count: int) -> None:
    """``count`` SIGINTs were held during a critical section (:func:`stop_signals_held`): count
    them now, raising ``KeyboardInterrupt`` if that makes a second one."""
    for _ in range(count):
        _handler(signal.SIGINT, None)


@contextlib.contextmanager
def stop_signals_held():
    """Hold Ctrl-C, SIGTERM and SIGHUP during a short critical section (the renames, the
    clean-up) and deliver them afterwards, so that a second signal never leaves half a set
    of outputs."""
    received: list[int] = []
    previous = _install(lambda signum, frame: received.extend([signum] * max(1, _drained())), STOP_SIGNALS)
    if previous is None:
        yield
        return
    try:
        yield
    finally:
        _restore(previous)
        if received and _interrupt.is_managed():
            deferred(len(received))  # counted: a second signal of the run aborts
        else:
            for signum in dict.fromkeys(received):
                handler = previous.get(signum)
                if handler is signal.SIG_IGN:
                    continue
                if handler is signal.SIG_DFL and signum != signal.SIGINT:
                    os.kill(os.getpid(), signum)  # its default action, now that the section is over
                    continue
                raise KeyboardInterrupt
