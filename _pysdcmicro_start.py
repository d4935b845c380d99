"""Console-script entry of ``pysdcmicro`` (a top-level module, so that importing it imports
nothing heavy): Ctrl-C while the package and numpy/pandas are still importing (the first
second or two) exits with one line and status 130 instead of a Python traceback.

While they import, SIGINT is only recorded (an import interrupted half-way can surface as
any exception, e.g. pandas' "Unable to import required dependency numpy"); once the import
is done, a recorded Ctrl-C ends the run before it reads anything, and Python's usual
handler is back for the command itself (which turns Ctrl-C into its own one-line exits).
"""

import signal
import sys


def main() -> int:
    received = []
    try:
        previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    except (ValueError, OSError):  # pragma: no cover - not the main thread, no signals
        previous = None
    try:
        from pysdcmicro.cli import main as cli_main
    except KeyboardInterrupt:  # pragma: no cover - a handler installed too late
        received.append(signal.SIGINT)
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    if received:
        try:
            sys.stderr.write("pysdcmicro: interrupted while starting; no output file was written or changed\n")
            sys.stderr.flush()
        except (KeyboardInterrupt, OSError):
            pass
        return 130
    return cli_main()
