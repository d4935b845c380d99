"""The command line's parser: the subcommands, their options, and the parsing of option values."""

from __future__ import annotations

import argparse
import sys
from typing import Any, NoReturn

from .. import __version__
from .._csvio import CsvFormat
from .._errors import InvalidInputError
from ._args import parse_blocks, parse_options, parse_variable_groups, split_list

__all__ = ["build_parser", "csv_format", "parse_blocks", "parse_options", "parse_variable_groups", "split_list"]


def _add_format_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sep", default=",", metavar="CHAR",
                        help="field separator of the CSV input, also used for the CSV output (default ','; "
                             "'\\t' or tab for tabs)")
    parser.add_argument("--decimal", default=".", choices=[".", ","],
                        help="decimal mark of the numbers in the CSV input and output (default '.')")
    parser.add_argument("--na-values", default=None, metavar="CELLS",
                        help="comma-separated cells that mean 'missing' in numeric columns, besides the empty "
                             "cell, NA, NaN, null, None, N/A (e.g. --na-values ':,-,?')")


def csv_format(args: argparse.Namespace) -> CsvFormat:
    """The input's CSV format from ``--sep``, ``--decimal``, ``--na-values``."""
    sep = {"\\t": "\t", "tab": "\t", "TAB": "\t"}.get(args.sep, args.sep)
    if len(sep) != 1 or sep in ('"', "\n", "\r"):
        raise InvalidInputError(f"--sep must be one character (e.g. ';' or '\\t'); got {args.sep!r}.")
    if sep == args.decimal:
        raise InvalidInputError(f"--sep and --decimal are both {sep!r}; a decimal comma needs another separator "
                                "(e.g. --sep ';').")
    na = tuple(t for t in (args.na_values or "").split(",") if t != "") if args.na_values is not None else ()
    if args.na_values is not None and not na:
        raise InvalidInputError(f"--na-values must list cells separated by commas; got {args.na_values!r}.")
    return CsvFormat(sep=sep, decimal=args.decimal, na_values=na)


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (``pysdcmicro: error: ...``, exit
    status 2), as every other error of the command, instead of the usage text."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"pysdcmicro: error: {message}; see `{self.prog} --help`.\n")
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="pysdcmicro",
        description="Microaggregation of numerical microdata (k-anonymity with least information loss).",
    )
    parser.add_argument("--version", action="version", version=f"pysdcmicro {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_microaggregate(sub)
    _add_report(sub)
    sub.add_parser("methods", help="list the registered methods and improvement steps")
    _add_demo(sub)
    _add_sdcmicro(parser, sub)
    return parser


def _add_microaggregate(sub: Any) -> None:
    m = sub.add_parser("microaggregate", help="microaggregate a CSV or Parquet file",
                       description="Microaggregate the chosen columns of a CSV or Parquet file; other columns pass "
                                   "through untouched.")
    m.add_argument("input", metavar="INPUT", help="input CSV file with a header row, or a .parquet file")
    m.add_argument("--k", type=int, required=True, help="minimum group size (>= 2)")
    m.add_argument("--method", default="auto",
                   help="method name (see `pysdcmicro methods`); default auto: without --time-limit a fixed, "
                        "reproducible amount of work (never worse than MDAV + two-swap), with it the best "
                        "partition the time allows, on every core")
    m.add_argument("--variables", help="comma-separated columns to microaggregate (default: the numeric columns "
                   "not in --strata or --weights, except identifier-like and constant ones, which a warning names); "
                   "groups of variables microaggregated separately are separated by ';' (\"a,b;c,d\")")
    m.add_argument("--missing", default="keep", choices=["keep", "error"],
                   help="missing cells in the chosen columns: keep them missing in the output (default; k-anonymity "
                        "with a missing cell matching any value, as sdcMicro) or refuse them")
    m.add_argument("--measure", default="mean", choices=["mean", "median", "trim", "onestep"],
                   help="released value of a group: mean (default), median, trimmed mean (see --trim) or "
                   "sdcMicro's one-step robust mean")
    m.add_argument("--trim", type=float, default=0.0, metavar="P",
                   help="with --measure trim: proportion dropped at each end of each group (0 to 0.5)")
    m.add_argument("--weights", metavar="COLUMN", default=None,
                   help="sampling weight column: groups release weighted means (weighted totals kept); the column "
                        "passes through untouched")
    m.add_argument("--decimals", type=int, default=None, metavar="N",
                   help="round released values to N decimals (0: integers, no decimal point)")
    m.add_argument("--strata", help="comma-separated columns: microaggregate within each combination of their values")
    m.add_argument("--strata-scaling", default="global", choices=["global", "stratum"],
                   help="with --strata: z-scores over the whole data (default) or within each stratum (as sdcMicro)")
    m.add_argument("--output", "-o", help="masked file to write: CSV, or Parquet if the name ends with .parquet "
                                          "(default: CSV on standard output)")
    m.add_argument("--report", help="JSON report to write (k-anonymity checked on the written output, "
                   "utility and risk measures)")
    m.add_argument("--html", help="HTML report to write, with plots when matplotlib is installed")
    m.add_argument("--seed", type=int, default=None,
                   help="random seed, an integer >= 0 (default 0, recorded in the report's settings.rng): "
                        "a run with the same seed and no --time-limit repeats exactly, so a release made "
                        "twice is the same release")
    m.add_argument("--time-limit", type=float, default=None,
                   help="seconds for the algorithm, counted from the start of the microaggregation (reading "
                        "the input and writing the outputs come on top); the best partition found is returned. "
                        "A run stopped by the clock depends on the machine: not reproducible even with --seed")
    m.add_argument("--option", action="append", default=[], metavar="NAME=VALUE", help="a method option (repeatable)")
    m.add_argument("--improve", action="append", default=None, metavar="NAME",
                   help="an improvement step run after the method (repeatable)")
    m.add_argument("--improve-option", action="append", default=[], metavar="NAME=VALUE",
                   help="an option of the improvement step (with one --improve)")
    m.add_argument("--scaling", default="standardize", choices=["standardize", "none"],
                   help="compare records on z-scores (default) or raw values; IL is always on z-scores")
    m.add_argument("--blocks", default="auto", metavar="auto|none|SIZE",
                   help="large-data path: blocks of near records solved in parallel, borders repaired; "
                        "'auto' (default) above 50000 records, 'none' never, or a block size")
    m.add_argument("--n-jobs", type=int, default=None, help="worker processes or threads: the blocks', and those of auto, decomposition and "
                   "column-generation (default: the method's own; -1: every core)")
    m.add_argument("--dask", metavar="ADDRESS", default=None,
                   help="run the blocks on the Dask scheduler at ADDRESS (needs pysdcmicro[dask])")
    _add_format_arguments(m)
    m.add_argument("--quiet", "-q", action="store_true", help="no progress or summary output")
    m.epilog = ("Exit status: 0 done (also after Ctrl-C during the search, with the best partition found so far), "
                "2 bad input or a file that cannot be read or written, 3 the release check failed (the output read "
                "back is not k-anonymous or not the reported IL), 130 interrupted while reading or writing. "
                "Outputs are written only when all of them are complete and the release is verified: after any "
                "failure no output file is created or changed. An output that is an input file is refused.")


def _add_report(sub: Any) -> None:
    r = sub.add_parser("report", help="report on a masked CSV file against its original",
                       description="Release report of MASKED.csv against ORIGINAL.csv (rows in the same order): "
                                   "k-anonymity, information loss, sdcMicro's IL1s and eigen utility measures, "
                                   "interval disclosure risk, per-variable changes.")
    r.add_argument("original", metavar="ORIGINAL.csv")
    r.add_argument("masked", metavar="MASKED.csv")
    r.add_argument("--k", type=int, default=None, help="the k to verify (default: report the smallest class only)")
    r.add_argument("--variables", help="comma-separated masked columns (default: the numeric columns that differ)")
    r.add_argument("--json", help="JSON report to write")
    r.add_argument("--html", help="HTML report to write, with plots when matplotlib is installed")
    r.add_argument("--sd-fraction", type=float, default=0.05,
                   help="interval disclosure risk: half-width in standard deviations of the masked data "
                        "(sdcMicro dRisk's k; default 0.05)")
    _add_format_arguments(r)
    r.add_argument("--quiet", "-q", action="store_true", help="no text report on standard output")
    r.epilog = ("Exit status: 0 k-anonymous (or no --k given), 2 bad input or a file that cannot be read or "
                "written, 3 not k-anonymous (the reports are still written: they say why), 130 interrupted.")


def _add_demo(sub: Any) -> None:
    d = sub.add_parser("demo", help="run on an embedded, generated data set and print a report")
    d.add_argument("--k", type=int, default=3)
    d.add_argument("--method", default="mdav",
                   help="method name (default mdav, quick and reproducible for a demonstration; "
                        "`microaggregate` and the library default to auto)")
    d.add_argument("--n", type=int, default=600, help="number of generated records")
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--option", action="append", default=[], metavar="NAME=VALUE")
    d.add_argument("--output", "-o", help="also write the masked data as CSV")
    d.add_argument("--original", help="also write the generated original data as CSV")
    d.add_argument("--report", help="also write the JSON report")
    d.add_argument("--html", help="also write the HTML report (with plots when matplotlib is installed)")


def _add_sdcmicro(parser: argparse.ArgumentParser, sub: Any) -> None:
    # `pysdcmicro sdcmicro IN.rds OUT.rds` (cli/_sdcmicro.py; it loads rpy2 only when the
    # command runs).
    from . import _sdcmicro as _sdcmicro_command
    _sdcmicro_command.add_arguments(sub.add_parser(
        "sdcmicro", help="microaggregate an sdcMicroObj saved as .rds (needs R, rpy2 and sdcMicro)",
        description="Run a pysdcmicro method on an sdcMicroObj saved with saveRDS(), as "
                    "pysdcmicro.bridges.sdcmicro.microaggregation does (risk and utility refreshed by sdcMicro, "
                    "undolast() works), and save the new object."))
    parser.set_defaults(_sdcmicro_handler=_sdcmicro_command.run)
