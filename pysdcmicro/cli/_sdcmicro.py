"""``pysdcmicro sdcmicro IN.rds OUT.rds``: a pysdcmicro method on a saved sdcMicroObj.

The back end of the R package ``pysdcmicro`` (``bridges/R/pysdcmicro``), usable on its own
from a shell. It reads the object with R's ``readRDS`` through the rpy2 bridge, runs
:func:`pysdcmicro.bridges.sdcmicro.microaggregation` on it (so ``manipNumVars``, the
numeric risk and the utility are refreshed by sdcMicro itself and the previous state is
kept for ``undolast()``), and writes the new object with ``saveRDS``.

The command line's parser (:mod:`pysdcmicro.cli`) adds this subcommand; this module imports
the bridge (and so rpy2) only inside :func:`run`, and writes OUT.rds through the command
line's file layer (:mod:`pysdcmicro.cli._files`: a temporary file renamed into place).
It is part of the command line, which sits above the bridge.

``pysdcmicro sdcmicro --list-methods`` prints one method a line, ``NAME<TAB>SUMMARY``,
for the R function ``pysdcmicro_methods()``; it needs neither R nor rpy2.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from .._errors import InvalidInputError, InvalidTypeError, PysdcmicroError

__all__ = ["add_arguments", "run", "RCommandError"]


class RCommandError(PysdcmicroError, RuntimeError):
    """R failed while reading or writing the .rds file (the message carries R's own)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``sdcmicro`` subcommand's arguments (kept here so the CLI's parser holds one line for them)."""
    p.add_argument("input", metavar="IN.rds", nargs="?", help="an sdcMicroObj saved with saveRDS()")
    p.add_argument("output", metavar="OUT.rds", nargs="?",
                   help="where to save the microaggregated sdcMicroObj (may be IN.rds itself)")
    p.add_argument("--k", type=int, default=None, help="minimum group size (sdcMicro's aggr, >= 2)")
    p.add_argument("--method", default="mdav", help="method name (see `pysdcmicro methods`); default mdav, sdcMicro's "
                   "own method (the library and `pysdcmicro microaggregate` default to auto)")
    p.add_argument("--variables", help="comma-separated numeric key variables (default: all numVars)")
    p.add_argument("--strata", help="comma-separated columns of the original data: microaggregate within each "
                                    "combination (default: the object's strataVar)")
    p.add_argument("--time-limit", type=float, default=None,
                   help="seconds for the method; the best partition found is kept")
    p.add_argument("--seed", type=int, default=None, help="random seed (randomized methods)")
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE", help="a method option (repeatable)")
    p.add_argument("--list-methods", action="store_true",
                   help="print NAME<TAB>SUMMARY per method and exit (used by R's pysdcmicro_methods())")
    p.add_argument("--quiet", "-q", action="store_true", help="no summary line")
    p.epilog = ("Exit status: 0 done, 2 bad input (not an sdcMicroObj, unknown column or method, R / rpy2 / "
                "sdcMicro missing, ...). Errors are one line: 'pysdcmicro: error: ...'.")


def _list_methods() -> int:
    from .._methods import all_methods

    for name, spec in all_methods().items():
        print(f"{name}\t{' '.join(str(spec.summary).split())}")
    return 0


def _r_message(exc: BaseException) -> str:
    return " ".join(str(exc).split()).strip(" :")


def run(args: argparse.Namespace) -> int:
    """Handler of ``pysdcmicro sdcmicro`` (see the module docstring)."""
    if args.list_methods:
        return _list_methods()
    if args.input is None or args.output is None:
        raise InvalidInputError("`sdcmicro` needs IN.rds and OUT.rds; got "
                                + ("neither." if args.input is None else "only IN.rds."))
    if args.k is None:
        raise InvalidInputError("`--k` is required (the minimum group size, sdcMicro's aggr); got none.")
    if not os.path.isfile(args.input):
        raise InvalidInputError(f"IN.rds {args.input!r} does not exist or is not a file.")
    out_dir = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(out_dir):
        raise InvalidInputError(f"OUT.rds {args.output!r}: folder {out_dir!r} does not exist.")

    from .._methods import get_method
    from . import _args, _files

    spec = get_method(args.method)  # unknown names fail here, before R starts
    options = _args.parse_options(args.option, spec, f"method {args.method!r}")
    variables = _args.split_list(args.variables)
    strata = _args.split_list(args.strata)

    from ..bridges import sdcmicro as bridge

    s = bridge._session(sdcmicro=False)
    # In R: errors caught there (rpy2 would echo them on stderr), the object kept in an R
    # environment until we know what it is (converting an S4 sdcMicroObj to Python needs
    # its class definition, so sdcMicro must be loaded first).
    read = s.ro.r("""function(path, env) tryCatch({
            o <- suppressWarnings(suppressMessages(readRDS(path)))
            assign("obj", o, envir = env)
            list(error = "", sdc = isS4(o) && inherits(o, "sdcMicroObj"), s4 = isS4(o),
                 class = paste(class(o), collapse = "/"))
        }, error = function(e) list(error = conditionMessage(e)))""")
    holder = s.ro.r("new.env")()
    from rpy2.rinterface_lib import callbacks

    # readRDS of an S4 object loads its package and R reports that on its console, past
    # tryCatch and suppressMessages; our error line says it better: keep stderr to that line.
    saved = callbacks.consolewrite_print, callbacks.consolewrite_warnerror
    callbacks.consolewrite_print = callbacks.consolewrite_warnerror = lambda text: None
    try:
        got = read(os.path.abspath(args.input), holder)
    finally:
        callbacks.consolewrite_print, callbacks.consolewrite_warnerror = saved
    error = " ".join(str(got.rx2("error")[0]).split())
    if error:
        if "sdcMicro" in error:  # reading an S4 sdcMicroObj loads sdcMicro: say how to install it
            s.require_sdcmicro()
        raise RCommandError(f"IN.rds {args.input!r} could not be read by R's readRDS(): {error}")
    if not bool(got.rx2("sdc")[0]):
        kind = ("an S4 object" if bool(got.rx2("s4")[0]) else "an object") + f" of class {got.rx2('class')[0]}"
        raise InvalidTypeError(f"IN.rds {args.input!r} must hold an sdcMicroObj (an S4 object from "
                               f"sdcMicro::createSdcObj(), saved with saveRDS()); it holds {kind}.")
    s.require_sdcmicro()  # before the object reaches Python (see above)
    obj = s.ro.r("get")("obj", envir=holder)
    started = time.perf_counter()
    new, result = bridge.microaggregation(obj, variables=variables, aggr=args.k, method=args.method,
                                         strata_variables=strata, return_result=True, rng=args.seed,
                                         time_limit=args.time_limit, **options)
    seconds = time.perf_counter() - started
    def save(path: str) -> None:
        try:
            s.ro.r("saveRDS")(new, path)
        except Exception as exc:
            raise RCommandError(f"OUT.rds {args.output!r} could not be written: {_r_message(exc)}") from exc

    # Written beside OUT.rds, then renamed: a failure never leaves a half-written OUT.rds.
    with _files.Outputs() as out:
        out.write(args.output, "OUT.rds", save)
        out.commit()
    if result.status != "done":
        print(f"pysdcmicro: warning: status {result.status}" + (f": {result.message}" if result.message else ""),
              file=sys.stderr)
    if not args.quiet:
        print(f"{result.method}: k={args.k}, {len(result.labels)} records, {len(result.groups)} groups, "
              f"IL={result.information_loss:.6f}, status {result.status}, method {result.seconds:.3f} s, "
              f"with the bridge (conversions, sdcMicro's risk and utility) {seconds:.3f} s")
    return 0
