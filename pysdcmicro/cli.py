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


_SNIFF_ROWS = 1000


def _numeric_values(text: pd.Series) -> np.ndarray | None:
    """Float values of a text column if every cell is a number or a missing marker (NaN)
    and at least one is a number; else None. Vectorized; cells pandas cannot parse are
    retried with Python's ``float`` so the rule is exactly :func:`_parse_number`'s."""
    text = text.astype(object)
    stripped = text.str.strip()
    missing = stripped.str.lower().isin(_MISSING_TOKENS).to_numpy()
    values = np.array(pd.to_numeric(stripped.where(~missing), errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan))
    for i in np.flatnonzero(np.isnan(values) & ~missing):
        v = _parse_number(text.iat[i])
        if v is None or np.isnan(v):
            return None
        values[i] = v
    if missing.all():
        return None
    values[missing] = np.nan
    return values


def _read_parquet(p: Path, path: str) -> pd.DataFrame:
    try:
        return pd.read_parquet(p)
    except ImportError:
        raise InvalidInputError(
            f"reading {path!r} needs a Parquet engine; install it with `pip install 'pysdcmicro[parquet]'`."
        ) from None
    except Exception as exc:  # pyarrow raises its own error types
        raise InvalidInputError(f"input file {path!r} is not a readable Parquet file: {exc}") from None


def _read_csv(p: Path, path: str, **kwargs) -> pd.DataFrame:
    try:
        return pd.read_csv(p, keep_default_na=False, **kwargs)
    except pd.errors.EmptyDataError:
        raise InvalidInputError(f"input file {path!r} is empty; it needs a header row and records.") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"input file {path!r} is not a readable CSV file: {exc}") from None


def read_table(path: str, variables: list[str] | None = None,
               exclude: list[str] | None = None) -> tuple[pd.DataFrame, list[str]]:
    """Read a CSV or Parquet file so that the columns not microaggregated round-trip exactly.

    Parquet (``.parquet``, ``.pq``; needs ``pyarrow``) keeps its column types. In a CSV file
    the columns to microaggregate are ``variables`` or, by default, every *numeric* column
    not in ``exclude`` (a column is numeric when each cell is a number or a missing marker
    such as an empty cell, NA or NaN, and at least one is a number). Only those are read as
    numbers; all other columns are read as text, so leading zeros, number formatting and
    text pass through unchanged.

    Large CSV files: the first rows are read as text to find the numeric columns, then the
    file is read once with those columns parsed as numbers by pandas' C reader (no Python
    code per cell) and the others as text. If a column turns out not to be numeric further
    down, the file is read again all as text and checked column by column (vectorized).

    Returns the frame and the list of columns to microaggregate.
    """
    p = Path(path)
    if not p.is_file():
        raise InvalidInputError(f"input file {path!r} does not exist.")
    if p.suffix.lower() in (".parquet", ".pq"):
        frame = _read_parquet(p, path)
        if variables is None:
            from ._validation import _is_numeric_series

            excluded = set(exclude or [])
            return frame, [c for c in frame.columns if c not in excluded and _is_numeric_series(frame[c])]
        return frame, list(variables)
    excluded = set(exclude or [])
    head = _read_csv(p, path, dtype=str, nrows=_SNIFF_ROWS)
    if variables is None:
        candidates = [c for c in head.columns if c not in excluded and _numeric_values(head[c]) is not None]
        unsure = [c for c in head.columns if c not in excluded and c not in candidates
                  and head[c].str.strip().str.lower().isin(_MISSING_TOKENS).all()]
    else:
        candidates = [c for c in variables if c in head.columns and _numeric_values(head[c]) is not None]
        unsure = [c for c in variables if c in head.columns and c not in candidates]
    dtypes = {c: (np.float64 if c in candidates else str) for c in head.columns}
    na = {c: sorted(_MISSING_TOKENS | {t.upper() for t in _MISSING_TOKENS} | {"NaN", "Null", "None", "N/A", "-NaN"})
          for c in candidates}
    try:
        frame = _read_csv(p, path, dtype=dtypes, na_values=na)
    except (ValueError, TypeError):  # a candidate column holds text further down
        frame = _read_csv(p, path, dtype=str)
        unsure = unsure + candidates
        candidates = []
    chosen = list(candidates)
    for col in unsure:
        values = _numeric_values(frame[col])
        if values is not None:
            frame[col] = values
            chosen.append(col)
        # else: left as text; validation then names the column and a non-numeric value
    _check_exact_integers(p, path, frame, chosen)
    if variables is None:
        return frame, [c for c in frame.columns if c in chosen]
    return frame, list(variables)


def _check_exact_integers(p: Path, path: str, frame: pd.DataFrame, numeric: list) -> None:
    """Integers beyond 2**53 in a numeric CSV column are refused (float64 would round them,
    so distinct values could collapse); see :func:`pysdcmicro._validation.check_integer_text`."""
    from ._validation import check_integer_text

    big = [c for c in numeric if c in frame.columns and np.nanmax(np.abs(frame[c].to_numpy(dtype=np.float64)),
                                                                  initial=0.0) > 2 ** 53]
    if big:
        text = _read_csv(p, path, dtype=str, usecols=big)
        for c in big:
            check_integer_text(text[c], frame[c].to_numpy(dtype=np.float64), c)


def _write_table(data: pd.DataFrame, path: str) -> None:
    if path.lower().endswith((".parquet", ".pq")):
        try:
            data.to_parquet(path, index=False)
        except ImportError:
            raise InvalidInputError(
                f"writing {path!r} needs a Parquet engine; install it with `pip install 'pysdcmicro[parquet]'`."
            ) from None
    else:
        data.to_csv(path, index=False)


def _parse_blocks(text: str) -> Any:
    t = text.strip().lower()
    if t == "auto":
        return "auto"
    if t in ("none", "off", "0"):
        return None
    try:
        return int(t)
    except ValueError:
        raise InvalidInputError(f"--blocks must be auto, none or a block size (integer); got {text!r}.") from None


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

    m = sub.add_parser("microaggregate", help="microaggregate a CSV or Parquet file",
                       description="Microaggregate the chosen columns of a CSV or Parquet file; other columns pass "
                                   "through untouched.")
    m.add_argument("input", metavar="INPUT", help="input CSV file with a header row, or a .parquet file")
    m.add_argument("--k", type=int, required=True, help="minimum group size (>= 2)")
    m.add_argument("--method", default="mdav", help="method name (see `pysdcmicro methods`); default mdav")
    m.add_argument("--variables", help="comma-separated columns to microaggregate (default: all numeric columns)")
    m.add_argument("--strata", help="comma-separated columns: microaggregate within each combination of their values")
    m.add_argument("--strata-scaling", default="global", choices=["global", "stratum"],
                   help="with --strata: z-scores over the whole data (default) or within each stratum (as sdcMicro)")
    m.add_argument("--output", "-o", help="masked file to write: CSV, or Parquet if the name ends with .parquet "
                                          "(default: CSV on standard output)")
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
    m.add_argument("--blocks", default="auto", metavar="auto|none|SIZE",
                   help="large-data path: blocks of near records solved in parallel, borders repaired; "
                        "'auto' (default) above 50000 records, 'none' never, or a block size")
    m.add_argument("--n-jobs", type=int, default=None, help="worker processes for the blocks (default: all cores)")
    m.add_argument("--dask", metavar="ADDRESS", default=None,
                   help="run the blocks on the Dask scheduler at ADDRESS (needs pysdcmicro[dask])")
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

    # `pysdcmicro sdcmicro IN.rds OUT.rds`: the R package's back end (bridges/_command.py, imported
    # only here and when the command runs; it loads rpy2 only then).
    from .bridges import _command as _sdcmicro_command
    _sdcmicro_command.add_arguments(sub.add_parser(
        "sdcmicro", help="microaggregate an sdcMicroObj saved as .rds (needs R, rpy2 and sdcMicro)",
        description="Run a pysdcmicro method on an sdcMicroObj saved with saveRDS(), as "
                    "pysdcmicro.bridges.sdcmicro.microaggregation does (risk and utility refreshed by sdcMicro, "
                    "undolast() works), and save the new object."))
    parser.set_defaults(_sdcmicro_handler=_sdcmicro_command.run)
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
        time_limit=args.time_limit, progress=_progress_callback(True) if show else None,
        blocks=_parse_blocks(args.blocks), n_jobs=args.n_jobs, client=args.dask, **options,
    )
    if args.output:
        _write_table(result.data, args.output)
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
    numbers exactly as :func:`read_table` parses them (vectorized), or the Parquet file."""
    if isinstance(source, (str, Path)) and str(source).lower().endswith((".parquet", ".pq")):
        return _read_parquet(Path(source), str(source))[list(variables)].astype(np.float64)
    raw = pd.read_csv(source, dtype=str, keep_default_na=False, usecols=lambda c: c in set(map(str, variables)))
    out = pd.DataFrame(index=raw.index)
    for col in variables:
        values = _numeric_values(raw[col])
        if values is None:  # pragma: no cover - a bug, not a user error
            raise RuntimeError(f"the written column {col!r} holds a value that is not a number")
        out[col] = values
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
                "demo": _cmd_demo, "sdcmicro": getattr(args, "_sdcmicro_handler", None)}
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
