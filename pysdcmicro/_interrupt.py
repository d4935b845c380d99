"""The state of a run that the command line lets Ctrl-C stop, as the core reads it.

The first Ctrl-C means "stop searching and write what you have"; a second one means
"abort": nothing is written, exit status 130. The command line installs the signal
handlers (:mod:`pysdcmicro.cli._signals`) and reports each signal here (:func:`note`);
the core asks what a signal means at the point where it is (:func:`start_solving`,
:func:`stoppable`, :func:`received`).

While a run is active (:func:`begin` to :func:`end`), what the first signal does depends on
the phase of the run:

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

A second signal, at any moment, raises ``KeyboardInterrupt`` at once. Without an active run
(the Python API) nothing here changes Python's behaviour: Ctrl-C raises
``KeyboardInterrupt`` wherever it lands and a running method returns its incumbent.
"""

from __future__ import annotations

import contextlib
import time

__all__ = ["begin", "end", "note", "start_solving", "stop_solving", "stoppable", "first_only", "received",
           "is_managed", "is_ctrl_c", "InterruptedBeforeSolve"]


def is_ctrl_c(exc: BaseException) -> bool:
    """Whether ``exc`` is a Ctrl-C: a ``KeyboardInterrupt``, or the ``SystemError`` numba raises
    when one lands inside a compiled function's dispatcher or cache loader (the interrupt is
    then in the error's chain of causes)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


class InterruptedBeforeSolve(KeyboardInterrupt):
    """Ctrl-C came while the data were read and prepared: the method is not started."""


class _State:
    active = False
    solving = 0
    count = 0
    first_at: float | None = None


_state = _State()


def begin() -> None:
    """A run that signals may stop starts (no signal counted yet)."""
    _state.active, _state.solving, _state.count, _state.first_at = True, 0, 0, None


def end() -> None:
    _state.active, _state.solving = False, 0


def note() -> bool:
    """Count a signal; whether it must raise ``KeyboardInterrupt`` where it landed (a second
    signal, or a first one during a search or a :func:`stoppable` step)."""
    _state.count += 1
    if _state.first_at is None:
        _state.first_at = time.monotonic()
    return _state.count >= 2 or bool(_state.solving)


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
    """After a ``KeyboardInterrupt`` in an active run: whether it was the first Ctrl-C (go
    on and write the outputs) rather than the second (abort)."""
    return _state.active and _state.count == 1


def received() -> bool:
    """Whether a Ctrl-C came during the active run."""
    return _state.active and _state.count > 0


def is_managed() -> bool:
    return _state.active
