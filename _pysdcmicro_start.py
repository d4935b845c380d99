"""Console-script entry of ``pysdcmicro`` (a top-level module, so that importing it imports
nothing heavy): Ctrl-C while the package and numpy/pandas are still importing (the first
second or two) exits with one line and status 130 instead of a Python traceback.

While they import, SIGINT is only recorded (an import interrupted half-way can surface as
any exception, e.g. pandas' "Unable to import required dependency numpy"); once the import
is done, a recorded Ctrl-C ends the run before it reads anything, and Python's usual
handler is back for the command itself (which turns Ctrl-C into its own one-line exits).

``python -m pysdcmicro`` gets the same guard: the package's ``__init__`` calls
:func:`begin` first thing when the interpreter was started as ``python -m pysdcmicro``
(``sys.orig_argv``), and ``pysdcmicro.__main__`` calls :func:`end` and :func:`finish`.
"""

import signal
import sys

_received: list = []
_previous: list = []  # the handler replaced by begin(), while the guard is on


def begin() -> None:
    """Record SIGINT instead of raising it (main thread only; a no-op if already on)."""
    if _previous:
        return
    try:
        _previous.append(signal.signal(signal.SIGINT, lambda signum, frame: _received.append(signum)))
    except (ValueError, OSError):  # pragma: no cover - not the main thread, no signals
        pass


def end() -> None:
    """Put the previous SIGINT handler back."""
    if _previous:
        signal.signal(signal.SIGINT, _previous.pop())


def started_as_module() -> bool:
    """Whether this interpreter runs ``python -m pysdcmicro`` (not another module that
    imports the package)."""
    argv = list(getattr(sys, "orig_argv", ()))
    return any(a == "-m" and b == "pysdcmicro" for a, b in zip(argv, argv[1:])) or \
        any(a == "-mpysdcmicro" for a in argv)


def finish(cli_main) -> int:
    """End the guard; one line and status 130 if Ctrl-C came while starting, else run
    ``cli_main()``."""
    end()
    if _received:
        try:
            sys.stderr.write("pysdcmicro: interrupted while starting; no output file was written or changed\n")
            sys.stderr.flush()
        except (KeyboardInterrupt, OSError):
            pass
        return 130
    return cli_main()


def main() -> int:
    begin()
    cli_main = None
    try:
        from pysdcmicro.cli import main as cli_main
    except KeyboardInterrupt:  # pragma: no cover - a handler installed too late
        _received.append(signal.SIGINT)
    return finish(cli_main)
