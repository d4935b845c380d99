"""The ``pysdcmicro`` command: ``python -m pysdcmicro`` and the console script's entry.

Ctrl-C (or SIGTERM, SIGHUP) while the command line and numpy/pandas are still importing
(the first second or two) exits with one line and status 130 instead of a Python traceback. ``import pysdcmicro``
imports nothing heavy, so :func:`main` installs its guard before the command line's import
starts: while that import runs, those signals are only recorded (an import interrupted half-way can
surface as any exception, e.g. pandas' "Unable to import required dependency numpy"); once
it is done, a recorded Ctrl-C ends the run before anything is read, and Python's usual
handler is back for the command itself, which turns Ctrl-C into its own one-line exits.
"""

import sys

try:
    import signal
except KeyboardInterrupt:  # pragma: no cover - a SIGINT in the first microseconds of our code
    sys.stderr.write("pysdcmicro: interrupted while starting; no output file was written or changed\n")
    raise SystemExit(130) from None

__all__ = ["main"]


def _start_guard() -> tuple[list, dict | None]:
    """Record SIGINT, SIGTERM and SIGHUP (they mean what Ctrl-C means) instead of acting on
    them; returns the list it records into and the handlers it replaced (None where signals
    cannot be set: not the main thread)."""
    received: list = []
    previous: dict | None = {}
    try:
        for name in ("SIGINT", "SIGTERM", "SIGHUP"):
            signum = getattr(signal, name, None)
            if signum is not None and signal.getsignal(signum) is not signal.SIG_IGN:  # (nohup: stays ignored)
                previous[signum] = signal.signal(signum, lambda signum, frame: received.append(signum))
    except (ValueError, OSError):  # pragma: no cover - not the main thread
        _restore(previous)
        previous = None
    return received, previous


def _restore(previous: dict | None) -> None:
    for signum, handler in (previous or {}).items():
        signal.signal(signum, handler if handler is not None else signal.SIG_DFL)


def main(argv: list[str] | None = None) -> int:
    """Run the command with ``argv`` (default ``sys.argv[1:]``); returns the exit status.

    Without ``argv`` (the program itself: the console script, ``python -m pysdcmicro``) the
    process ends here once the command is done (:func:`pysdcmicro.cli.leave`): a stop signal
    while Python would tear down its modules is then said in one line, not lost."""
    received, previous = _start_guard()
    cli_main = leave = None
    try:
        from .cli import leave, main as cli_main
    except KeyboardInterrupt:  # pragma: no cover - a SIGINT before the guard was on
        received.append(signal.SIGINT)
    # The program that stops here keeps recording the signals and ends without Python's
    # shutdown (which sets them back to their default action): a further one must not end
    # the process by the signal, silently.
    if not received or argv is not None:
        _restore(previous)
    if received:
        try:
            sys.stderr.write("pysdcmicro: interrupted while starting; no output file was written or changed\n")
            sys.stderr.flush()
        except (KeyboardInterrupt, OSError):
            pass
        if argv is None:
            import os

            os._exit(130)
        return 130
    if argv is not None:
        return cli_main(argv)
    return leave(cli_main)


if __name__ == "__main__":
    sys.exit(main())
