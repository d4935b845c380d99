"""Command-line interface: ``pysdcmicro microaggregate | report | methods | demo``.

Bad input exits with status 2 and one line ``pysdcmicro: error: <message>`` on stderr,
the same text the Python API raises. ``microaggregate`` and ``report`` exit with status 3
when the released file, read back, is not k-anonymous (never expected from
``microaggregate``: it would be a bug, so it is loud). Progress is shown only when stderr is
a terminal and ``--quiet`` is not given; Ctrl-C during a search writes the best partition
found so far, with status ``limit`` in the report.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import warnings
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from . import __version__
from ._errors import InvalidInputError, PysdcmicroError

__all__ = ["main", "read_table"]

_MISSING_TOKENS = {"", "na", "nan", "null", "none", "n/a", "#n/a", "-nan"}


def _parse_number(text: str) -> float | None:
    """Float value of a CSV cell; None if it is not a number; NaN for a missing marker."""
    t = text.strip()
    if t.lower() in _MISSING_TOKENS:
        return float("nan")
    try:
        return float(t)
    except ValueError:
        return None


def read_table(path: str, variables: list[str] | None = None,
               exclude: list[str] | None = None) -> tuple[pd.DataFrame, list[str]]:
    """Read a CSV file so that the columns not microaggregated round-trip exactly.

    Every cell is read as text. The columns to microaggregate are ``variables`` or, by
    default, every *numeric* column not in ``exclude`` (a column is numeric when each cell is
    a number or a missing marker such as an empty cell, NA or NaN, and at least one is a
    number). Only those are converted to numbers; all other columns stay text, so leading
    zeros, number formatting and quoting-free text pass through unchanged.

    Returns the frame and the list of columns to microaggregate.
    """
    p = Path(path)
    if not p.is_file():
        raise InvalidInputError(f"input file {path!r} does not exist.")
    try:
        raw = pd.read_csv(p, dtype=str, keep_default_na=False)
    except pd.errors.EmptyDataError:
        raise InvalidInputError(f"input file {path!r} is empty; it needs a header row and records.") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"input file {path!r} is not a readable CSV file: {exc}") from None
    excluded = set(exclude or [])

    def parsed(col: str) -> np.ndarray | None:
        values = [_parse_number(v) for v in raw[col]]
        if len(values) and all(v is not None for v in values) and any(not np.isnan(v) for v in values):
            return np.array(values, dtype=np.float64)
        return None

    frame = raw.copy()
    if variables is None:
        chosen = []
        for col in raw.columns:
            if col in excluded:
                continue
            arr = parsed(col)
            if arr is not None:
                frame[col] = arr
                chosen.append(col)
        return frame, chosen
    for col in variables:
        if col in raw.columns:
            arr = parsed(col)
            if arr is not None:
                frame[col] = arr
            # else: left as text; validation then names the column and a non-numeric value
    return frame, list(variables)


def _split_list(text: str | None) -> list[str] | None:
    if text is None:
        return None
    items = [item.strip() for item in text.split(",")]
    if not all(items):
        raise InvalidInputError(f"a column list must be names separated by commas; got {text!r}.")
    return items


def _parse_options(pairs: Sequence[str], spec, owner: str) -> dict:
    options: dict[str, Any] = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise InvalidInputError(f"an option must be written NAME=VALUE; got {pair!r}.")
        name, value = pair.split("=", 1)
        name = name.strip().replace("-", "_")
        if spec is None:
            options[name] = value
            continue
        spec.check_options({name: None})
        options[name] = spec.options[name].coerce(value, owner)
    return options


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pysdcmicro",
        description="Microaggregation of numerical microdata (k-anonymity with least information loss).",
    )
    parser.add_argument("--version", action="version", version=f"pysdcmicro {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    m = sub.add_parser("microaggregate", help="microaggregate a CSV file",
                       description="Microaggregate the chosen columns of a CSV file; other columns pass through untouched.")
    m.add_argument("input", metavar="INPUT.csv", help="input CSV file with a header row")
    m.add_argument("--k", type=int, required=True, help="minimum group size (>= 2)")
    m.add_argument("--method", default="mdav", help="method name (see `pysdcmicro methods`); default mdav")
    m.add_argument("--variables", help="comma-separated columns to microaggregate (default: all numeric columns)")
    m.add_argument("--strata", help="comma-separated columns: microaggregate within each combination of their values")
    m.add_argument("--strata-scaling", default="global", choices=["global", "stratum"],
                   help="with --strata: z-scores over the whole data (default) or within each stratum (as sdcMicro)")
    m.add_argument("--output", "-o", help="masked CSV to write (default: standard output)")
    m.add_argument("--report", help="JSON report to write (k-anonymity checked on the written output, "
                   "utility and risk measures)")
    m.add_argument("--html", help="HTML report to write, with plots when matplotlib is installed")
    m.add_argument("--seed", type=int, default=None, help="random seed (randomized methods)")
    m.add_argument("--time-limit", type=float, default=None, help="seconds for the whole run; the best partition found is returned")
    m.add_argument("--option", action="append", default=[], metavar="NAME=VALUE", help="a method option (repeatable)")
    m.add_argument("--improve", action="append", default=None, metavar="NAME",
                   help="an improvement step run after the method (repeatable)")
    m.add_argument("--improve-option", action="append", default=[], metavar="NAME=VALUE",
                   help="an option of the improvement step (with one --improve)")
    m.add_argument("--scaling", default="standardize", choices=["standardize", "none"],
                   help="compare records on z-scores (default) or raw values; IL is always on z-scores")
    m.add_argument("--quiet", "-q", action="store_true", help="no progress or summary output")
    m.epilog = ("Exit status: 0 done (also after Ctrl-C, with the best partition found so far), 2 bad input, "
                "3 the written output is not k-anonymous.")

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
    r.add_argument("--quiet", "-q", action="store_true", help="no text report on standard output")
    r.epilog = "Exit status: 0 k-anonymous (or no --k given), 2 bad input, 3 not k-anonymous."

    sub.add_parser("methods", help="list the registered methods and improvement steps")

    d = sub.add_parser("demo", help="run on an embedded, generated data set and print a report")
    d.add_argument("--k", type=int, default=3)
    d.add_argument("--method", default="mdav")
    d.add_argument("--n", type=int, default=600, help="number of generated records")
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--option", action="append", default=[], metavar="NAME=VALUE")
    d.add_argument("--output", "-o", help="also write the masked data as CSV")
    d.add_argument("--original", help="also write the generated original data as CSV")
    d.add_argument("--report", help="also write the JSON report")
    d.add_argument("--html", help="also write the HTML report (with plots when matplotlib is installed)")
    return parser


def _cmd_methods(args: argparse.Namespace) -> int:
    from ._registry import all_improvements, all_methods

    print("Methods (--method NAME):")
    for name, spec in all_methods().items():
        print(f"  {name:<20} {spec.summary}")
        if spec.options:
            opts = ", ".join(f"{o.name}={o.default!r}" for o in spec.options.values())
            print(f"  {'':<20}   options: {opts}")
    improvements = all_improvements()
    print("\nImprovement steps (--improve NAME):")
    if not improvements:
        print("  (none registered)")
    for name, spec in improvements.items():
        print(f"  {name:<20} {spec.summary}")
        if spec.options:
            opts = ", ".join(f"{o.name}={o.default!r}" for o in spec.options.values())
            print(f"  {'':<20}   options: {opts}")
    return 0


def _cmd_microaggregate(args: argparse.Namespace) -> int:
    from ._api import _progress_callback, microaggregate
    from ._registry import get_improvement, get_method

    spec = get_method(args.method)
    options = _parse_options(args.option, spec, f"method {spec.name!r}")
    improve = None
    improve_options = None
    if args.improve:
        improve = [get_improvement(name).name for name in args.improve]
        if args.improve_option:
            if len(improve) != 1:
                raise InvalidInputError("--improve-option needs exactly one --improve step.")
            step = get_improvement(improve[0])
            improve_options = _parse_options(args.improve_option, step, f"improvement {step.name!r}")
    elif args.improve_option:
        raise InvalidInputError("--improve-option was given without --improve.")
    strata = _split_list(args.strata)
    frame, variables = read_table(args.input, _split_list(args.variables), exclude=strata)
    if not variables:
        raise InvalidInputError(f"input file {args.input!r} has no numeric column to microaggregate; "
                                "pass --variables or check the file.")
    show = not args.quiet and sys.stderr.isatty()
    from .reporting import report

    result = microaggregate(
        frame, args.k, method=spec.name, variables=variables, strata=strata,
        improve=improve, improve_options=improve_options, scaling=args.scaling,
        strata_scaling=args.strata_scaling, rng=args.seed,
        time_limit=args.time_limit, progress=_progress_callback(True) if show else None, **options,
    )
    if args.output:
        result.data.to_csv(args.output, index=False)
        released = _read_released(args.output, result.variables)
        checked_on = f"the written file {args.output}"
    else:
        text = result.data.to_csv(index=False)
        sys.stdout.write(text)
        sys.stdout.flush()
        released = _read_released(io.StringIO(text), result.variables)
        checked_on = "the CSV written to standard output"
    rep = report(result, frame, released=released, checked_on=checked_on)
    if args.report:
        _write_json(args.report, result, rep, input=str(args.input), output=args.output)
    if args.html:
        _write_html(args.html, rep)
    if not args.quiet:
        stream = sys.stdout if args.output else sys.stderr
        print(rep.to_text(), file=stream)
    return 0 if rep.k_anonymous else 3


def _read_released(source: Any, variables: list) -> pd.DataFrame:
    """The released values of ``variables`` as written: the CSV read back, cells parsed as
    numbers exactly as :func:`read_table` parses them."""
    raw = pd.read_csv(source, dtype=str, keep_default_na=False)
    out = pd.DataFrame(index=raw.index)
    for col in variables:
        values = [_parse_number(v) for v in raw[col]]
        if any(v is None for v in values):  # pragma: no cover - a bug, not a user error
            raise RuntimeError(f"the written column {col!r} holds a value that is not a number")
        out[col] = np.array(values, dtype=np.float64)
    return out


def _write_json(path: str, result: Any, rep: Any, **extra: Any) -> None:
    data = result.to_dict() if result is not None else {}
    data.update(rep.to_dict())
    data.update(extra)
    Path(path).write_text(json.dumps(data, indent=2) + "\n")


def _write_html(path: str, rep: Any) -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("pysdcmicro: note: the HTML report has no plots: matplotlib is not installed "
              "(pip install \"pysdcmicro[plot]\").", file=sys.stderr)
    rep.to_html(path)


def _cmd_report(args: argparse.Namespace) -> int:
    from .reporting import compare

    variables = _split_list(args.variables)
    original, numeric = read_table(args.original, variables)
    masked, _ = read_table(args.masked, numeric)
    rep = compare(original, masked, variables=variables, k=args.k, sd_fraction=args.sd_fraction,
                  checked_on=f"the file {args.masked}")
    if args.json:
        _write_json(args.json, None, rep, original=str(args.original), masked=str(args.masked))
    if args.html:
        _write_html(args.html, rep)
    if not args.quiet:
        print(rep.to_text())
    return 0 if rep.k_anonymous is not False else 3


def _cmd_demo(args: argparse.Namespace) -> int:
    from ._api import microaggregate
    from ._registry import get_method
    from .datasets import make_demo_data

    spec = get_method(args.method)
    options = _parse_options(args.option, spec, f"method {spec.name!r}")
    frame = make_demo_data(args.n, rng=args.seed)
    variables = ["employees", "turnover", "wages", "assets", "profit"]
    print(f"pysdcmicro {__version__} demo: a generated business survey of {len(frame)} firms "
          f"(no download; pysdcmicro.datasets.make_demo_data(n={args.n}, rng={args.seed})).")
    print(f"Quasi-identifiers microaggregated: {', '.join(variables)}; k = {args.k}; method = {spec.name}.\n")
    result = microaggregate(frame, args.k, method=spec.name, variables=variables, rng=args.seed, **options)
    print(result.summary())
    masked = result.data[variables]
    counts = masked.groupby(variables, sort=False).size()
    print(f"\nk-anonymity check on the released values: smallest group of identical records = "
          f"{int(counts.min())} (k = {args.k}): {'OK' if counts.min() >= args.k else 'FAILED'}")
    print("\nFirst records, original then released:")
    with pd.option_context("display.width", 120, "display.max_columns", 20):
        print(frame.head(5).to_string(index=False))
        print()
        print(result.data.head(5).round(2).to_string(index=False))
    print("\nMeans are preserved exactly; spread shrinks:")
    rows = []
    for col in variables:
        rows.append((col, frame[col].mean(), result.data[col].mean(), frame[col].std(), result.data[col].std()))
    print(pd.DataFrame(rows, columns=["variable", "mean before", "mean after", "sd before", "sd after"])
          .round(3).to_string(index=False))
    if args.original:
        frame.to_csv(args.original, index=False)
        print(f"\nOriginal data written to {args.original}")
    if args.output or args.report or args.html:
        from .reporting import report

        if args.output:
            result.data.to_csv(args.output, index=False)
            rep = report(result, frame, released=_read_released(args.output, variables),
                         checked_on=f"the written file {args.output}")
            print(f"Masked data written to {args.output}")
        else:
            rep = report(result, frame)
        if args.report:
            _write_json(args.report, result, rep, output=args.output)
            print(f"JSON report written to {args.report}")
        if args.html:
            _write_html(args.html, rep)
            print(f"HTML report written to {args.html}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = _build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    handlers = {"microaggregate": _cmd_microaggregate, "report": _cmd_report, "methods": _cmd_methods,
                "demo": _cmd_demo}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            code = handlers[args.command](args)
        except PysdcmicroError as exc:
            _flush_warnings(caught)
            print(f"pysdcmicro: error: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print("pysdcmicro: interrupted", file=sys.stderr)
            return 130
        except BrokenPipeError:  # output piped into `head` and the like: stop quietly
            import os

            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            return 1
    _flush_warnings(caught)
    return code


def _flush_warnings(caught) -> None:
    for w in caught:
        print(f"pysdcmicro: warning: {w.message}", file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
