"""Console-script entry of ``pysdcmicro`` (a top-level module, so that importing it imports
nothing heavy): Ctrl-C while the package and numpy/pandas are still importing (the first
second or two) exits with one line and status 130 instead of a Python traceback."""

import sys


def main() -> int:
    try:
        from pysdcmicro.cli import main as cli_main
    except KeyboardInterrupt:
        try:
            sys.stderr.write("pysdcmicro: interrupted while starting; no output file was written or changed\n")
            sys.stderr.flush()
        except (KeyboardInterrupt, OSError):
            pass
        return 130
    return cli_main()
