"""``python -m pysdcmicro``: the command, with the console script's start-up Ctrl-C guard
(begun by the package's ``__init__``, see ``_pysdcmicro_start``)."""

import signal
import sys

import _pysdcmicro_start

_pysdcmicro_start.begin()  # already on when __init__ saw ``-m pysdcmicro``; on here otherwise
cli_main = None
try:
    from .cli import main as cli_main
except KeyboardInterrupt:  # pragma: no cover - a handler installed too late
    _pysdcmicro_start._received.append(signal.SIGINT)
sys.exit(_pysdcmicro_start.finish(cli_main))
