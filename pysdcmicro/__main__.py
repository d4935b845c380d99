"""The ``pysdcmicro`` command: ``python -m pysdcmicro`` and the console script's entry.

Ctrl-C while the command line and numpy/pandas are still importing (the first second or
two) exits with one line and status 130 instead of a Python traceback. ``import pysdcmicro``
imports nothing heavy, so :func:`main` installs its guard before the command line's import
starts: while that import runs, SIGINT is only recorded (an import interrupted half-way can
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


def _start_guard() -> tuple[list, object]:
    """Record SIGINT instead of raising it; returns the list it records into and the
    handler it replaced (None where signals cannot be set: not the main thread)."""
    received: list = []
    try:
        previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    except (ValueError, OSError):  # pragma: no cover - not the main thread
        previous = None
    return received, previous


def main(argv: list[str] | None = None) -> int:
    """Run the command with ``argv`` (default ``sys.argv[1:]``); returns the exit status."""
    received, previous = _start_guard()
    cli_main = None
    try:
        from .cli import main as cli_main
    except KeyboardInterrupt:  # pragma: no cover - a SIGINT before the guard was on
        received.append(signal.SIGINT)
    if previous is not None:
        signal.signal(signal.SIGINT, previous)
    if received:
        try:
            sys.stderr.write("pysdcmicro: interrupted while starting; no output file was written or changed\n")
            sys.stderr.flush()
        except (KeyboardInterrupt, OSError):
            pass
        return 130
    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
