"""Command-line interface: ``pysdcmicro microaggregate | report | methods | demo | sdcmicro``.

Bad input, and a file that cannot be read or written, exit with status 2 and one line
``pysdcmicro: error: <message>`` on stderr (the same text the Python API raises). Outputs
are written as one transaction (:class:`._files.Outputs`): temporary files in the target
folders, the masked file read back and verified (k-anonymous, IL as reported) before
anything is put in place; any failure leaves no output created or changed.
``microaggregate`` exits with status 3 when that release check fails (never expected: it
would be a bug, so it is loud), ``report`` when the masked file it is given is not
k-anonymous. Progress is shown only when stderr is a terminal and ``--quiet`` is not given;
Ctrl-C during a search writes the best partition found so far, with status ``limit`` in the
report; Ctrl-C at any other moment exits with status 130 and one line, leaving no partial
file (:mod:`._signals`).

Modules: :mod:`._parser` (the options), :mod:`._commands` (the commands), :mod:`._files`
(the one file layer: strict reading, all-or-nothing outputs, read-back verification),
:mod:`._stream` (Parquet in and out on Dask, in batches), :mod:`._signals` (Ctrl-C).
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from typing import NoReturn, Sequence

from .. import _phases
from .._errors import PysdcmicroError, ReleaseCheckError
from . import _commands, _files, _parser, _signals
from ._files import NA_CELLS as _NA_CELLS, read_table  # noqa: F401  (kept importable from here)
from ._parser import build_parser as _build_parser  # noqa: F401

__all__ = ["main", "leave", "read_table"]


def main(argv: Sequence[str] | None = None) -> int:
    _phases.entered()
    try:
        return _main(argv)
    finally:
        _phases.dump()


def _main(argv: Sequence[str] | None) -> int:
    _files.COMMITTED.clear()
    try:
        parser = _parser.build_parser()
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 2
        handlers = {"microaggregate": _commands.cmd_microaggregate, "report": _commands.cmd_report,
                    "methods": _commands.cmd_methods, "demo": _commands.cmd_demo,
                    "sdcmicro": getattr(args, "_sdcmicro_handler", None)}
        with warnings.catch_warnings(record=True) as caught, _signals.terminating():
            warnings.simplefilter("always")
            try:
                code = handlers[args.command](args)
            except ReleaseCheckError as exc:
                _flush_warnings(caught)
                message = str(exc).rstrip(". ")
                if "nothing" not in message:
                    message += "; nothing was written"
                print(f"pysdcmicro: error: {message}.", file=sys.stderr)
                return 3
            except PysdcmicroError as exc:
                _flush_warnings(caught)
                print(f"pysdcmicro: error: {exc}", file=sys.stderr)
                return 2
            except BrokenPipeError:  # output piped into `head` and the like: stop quietly
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno())
                return 1
            except OSError as exc:  # last resort: an I/O failure not turned into a message where it happened
                _flush_warnings(caught)
                print(f"pysdcmicro: error: {_os_error_line(exc)}", file=sys.stderr)
                return 2
        _flush_warnings(caught)
        return code
    except KeyboardInterrupt:
        return _interrupted()
    except Exception as exc:  # a Ctrl-C that an import wrapped (Python 3.11: RuntimeError from __set_name__)
        from .._interrupt import is_ctrl_c

        if is_ctrl_c(exc):
            return _interrupted()
        raise


def leave(command) -> NoReturn:
    """Run ``command()`` (:func:`main` on ``sys.argv``) as the program, then end the process.

    Once the command has returned, every output is in place (or none is). What is left is
    Python's own shutdown, about a second after a large run; a Ctrl-C, SIGTERM or SIGHUP
    then would end the process by the signal with no word. So the exit handlers run here
    with those signals recorded, one line says a signal came after the command finished
    (exit status 130), and the process ends without the module teardown (``os._exit``):
    nothing is left to write."""
    received: list = []
    code = 130
    try:
        code = command()
    except KeyboardInterrupt:  # (between the command's own handlers and this point)
        received.append(None)
    finally:
        _signals.hold_until_exit(received)
    import atexit

    try:
        atexit._run_exitfuncs()
    except BaseException:  # pragma: no cover - an exit handler's failure changes nothing written
        pass
    if received:
        done = (f"; every output was written before it: {', '.join(_files.COMMITTED)}" if _files.COMMITTED
                else "; no output file was written or changed")
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        with contextlib.suppress(Exception):
            print(f"pysdcmicro: interrupted after the command had finished{done}", file=sys.stderr)
        code = 130
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code if isinstance(code, int) else 1)


def _interrupted() -> int:
    """Ctrl-C (or SIGTERM, SIGHUP) outside a search: one line, exit status 130, no traceback
    (a further signal while printing it is held). Temporary files are already removed by then."""
    with contextlib.suppress(KeyboardInterrupt), _signals.stop_signals_held():
        done = (f"; written before it: {', '.join(_files.COMMITTED)}" if _files.COMMITTED
                else "; no output file was written or changed")
        print(f"pysdcmicro: interrupted{done}", file=sys.stderr)
    return 130


def _os_error_line(exc: OSError) -> str:
    reason = _files.os_reason(exc)
    if exc.filename is not None and not isinstance(exc, PysdcmicroError):
        return f"{reason}: {str(exc.filename)!r}."
    return reason if reason.endswith(".") else reason + "."


def _flush_warnings(caught) -> None:
    for w in caught:
        print(f"pysdcmicro: warning: {w.message}", file=sys.stderr)
