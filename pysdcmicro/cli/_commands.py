"""The commands: ``microaggregate``, ``report``, ``methods`` and ``demo``.

Each reads through the file layer (:mod:`._files`), runs the library, and writes its outputs
as one transaction; the release is verified on the written file before anything is put in
place. Exit status 0 done, 2 bad input or a file that cannot be read or written, 3 a release
check that failed (``report``: the masked file is not k-anonymous).
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

from .. import __version__, _interrupt
from .._csvio import CsvFormat
from .._errors import InvalidInputError, ReleaseCheckError
from .._phases import phase
from . import _files, _parser, _signals

__all__ = ["cmd_microaggregate", "cmd_report", "cmd_methods", "cmd_demo", "write_release"]


def _unmasked_warning(unmasked: list[dict], columns: Any = None) -> str:
    listed = "; ".join(f"{_files.column_name(u['column'], columns)} ({u['reason']})" for u in unmasked[:20])
    more = f"; and {len(unmasked) - 20} more" if len(unmasked) > 20 else ""
    advice = []
    if any(u.get("option") for u in unmasked):
        advice.append("name the numeric ones in --variables to microaggregate them")
    if not all(u.get("option") for u in unmasked):
        advice.append("remove identifiers, and recode or suppress categorical columns, before release")
    return (f"released unmasked, although they look like quasi-identifiers: {listed}{more}; "
            + " and ".join(advice) + ".")


def cmd_methods(args: argparse.Namespace) -> int:
    from .._methods import all_improvements, all_methods

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


def _check_arguments(args: argparse.Namespace) -> None:
    """Every option of ``microaggregate`` checked on its own, before the input is read (the
    API's rules and messages): a wrong option is the first and only line printed."""
    from .._api import _check_release, _check_scaling
    from .._validation import check_k, check_n_jobs, check_rng, check_time_limit, check_variable_groups

    check_k(args.k)
    check_time_limit(args.time_limit)
    check_rng(args.seed, "--seed")
    _check_release(args.missing, args.measure, args.trim, args.weights, args.decimals)
    _check_scaling(args.scaling, args.strata_scaling)
    check_n_jobs(args.n_jobs, default=1)
    _parser.parse_blocks(args.blocks)
    _parser.csv_format(args)
    requested = _parser.parse_variable_groups(args.variables)
    check_variable_groups(requested)
    strata = _parser.split_list(args.strata, "strata") or []
    flat = [v for group in requested for v in group] if requested and isinstance(requested[0], list) \
        else requested or []
    both = [c for c in flat if c in strata]
    if both:
        raise InvalidInputError(f"column {both[0]!r} is both in `variables` and in `strata`; a column can be only one "
                                "of them.")
    if args.weights is not None and (args.weights in flat or args.weights in strata):
        where = "`variables`" if args.weights in flat else "`strata`"
        raise InvalidInputError(f"column {args.weights!r} is both in {where} and the `weights` column; the weight "
                                "column passes through untouched and cannot be microaggregated or a stratum.")


def cmd_microaggregate(args: argparse.Namespace) -> int:
    from .._methods import get_improvement, get_method

    _check_arguments(args)
    _files.check_output_paths({"INPUT": args.input},
                              {"--output": args.output, "--report": args.report, "--html": args.html})
    spec = get_method(args.method)
    options = _parser.parse_options(args.option, spec, f"method {spec.name!r}")
    if "n_jobs" in options:  # the method's workers and the blocks' are one setting: --n-jobs
        if args.n_jobs is not None and args.n_jobs != options["n_jobs"]:
            raise InvalidInputError(f"--n-jobs {args.n_jobs} and --option n_jobs={options['n_jobs']} disagree; "
                                    "give the number of workers once, as --n-jobs.")
        args.n_jobs = options.pop("n_jobs")
    improve = None
    improve_options = None
    if args.improve:
        improve = [get_improvement(name).name for name in args.improve]
        if args.improve_option:
            if len(improve) != 1:
                raise InvalidInputError("--improve-option needs exactly one --improve step.")
            step = get_improvement(improve[0])
            improve_options = _parser.parse_options(args.improve_option, step, f"improvement {step.name!r}")
    elif args.improve_option:
        raise InvalidInputError("--improve-option was given without --improve.")
    strata = _parser.split_list(args.strata)
    from . import _stream  # Parquet in and out with --dask: read in batches

    if _stream.applies(args):
        return _stream.run(args, method=spec.name, options=options, improve=improve, improve_options=improve_options,
                           blocks=_parser.parse_blocks(args.blocks))
    with _signals.managed():  # first Ctrl-C: stop and write what there is; second: abort (exit 130)
        return _run_microaggregate(args, spec, options, improve, improve_options, strata)


def _run_microaggregate(args: argparse.Namespace, spec: Any, options: dict, improve: Any, improve_options: Any,
                        strata: list[str] | None) -> int:
    from .._api import _progress_callback, microaggregate
    from .._validation import default_variables

    requested = _parser.parse_variable_groups(args.variables)
    groups = requested if requested and isinstance(requested[0], list) else None
    flat = [v for group in groups for v in group] if groups else requested
    exclude = (strata or []) + ([args.weights] if args.weights else [])
    fmt = _parser.csv_format(args)
    parquet = _files.is_parquet(args.input)
    given = {"--variables": flat, "--strata": strata, "--weights": [args.weights] if args.weights else None}
    with phase("read"):
        frame, variables = _files.read_table(args.input, flat, exclude=exclude or None, fmt=fmt, named=given)
    read_columns = _files.header_names(args.input, fmt)
    if len(frame) == 0:
        raise InvalidInputError(f"input file {args.input!r} has no records (only a header row); there is nothing "
                                "to microaggregate.")
    if not parquet:
        _files.check_almost_numeric(frame, variables, flat, exclude, fmt)
    _files.check_strata_cells(frame, strata, parquet=parquet)
    weights = None
    if args.weights:
        values = frame[args.weights]
        if not pd.api.types.is_numeric_dtype(values.dtype):  # read as text (it is not microaggregated)
            parsed = _files.numeric_values(values, fmt)
            if parsed is None:
                bad = next(v for v in values if _files.parse_number(v) is None)
                raise InvalidInputError(f"weight column {args.weights!r} must be numeric; got value {bad!r}.")
            _files.check_weight_cells(values, parsed, args.weights, parquet=parquet)
            values = pd.Series(parsed, index=values.index, name=args.weights)
        else:
            _files.check_weight_cells(values, values.to_numpy(dtype=np.float64, na_value=np.nan), args.weights,
                                      parquet=parquet)
        weights = values
    if not variables:
        raise InvalidInputError(f"input file {args.input!r} has no numeric column to microaggregate; "
                                "pass --variables or check the file.")
    from .._validation import check_k

    check_k(args.k, len(frame))
    left_out: dict = {}
    if args.variables is None:  # the API's rule: identifier-like and constant columns left out, with a warning
        from .._validation import identifier_reason

        nameless = {c: _files.column_name(c, frame.columns) for c in frame.columns if isinstance(c, str) and c == ""}
        chosen = default_variables(frame.rename(columns=nameless) if nameless else frame, variables,
                                   exclude=exclude)
        left = [c for c in variables if c not in chosen]
        for c in left:
            left_out[c] = identifier_reason(pd.to_numeric(frame[c], errors="coerce").to_numpy(
                dtype=np.float64, na_value=np.nan), c) or "left out by default"
        if left and not args.input.lower().endswith((".parquet", ".pq")):
            # they pass through untouched: their text as written ("007", "1"), not the parsed numbers
            text = _files.read_csv(Path(args.input), args.input, fmt, dtype=str, usecols=left)
            for c in left:
                frame[c] = text[c].to_numpy()
        variables = chosen
        for label in _files.nameless_numeric(frame, fmt):
            warnings.warn(f"{label} holds numbers and is released unmasked: a column with no name in the header "
                          "cannot be chosen for microaggregation; give it a name in the header row to "
                          "microaggregate it.", UserWarning, stacklevel=2)
    _files.check_cells(frame, flat if flat is not None else variables, args.missing, args.input, fmt)
    show = not args.quiet and sys.stderr.isatty()

    with phase("microaggregate"):
        result = microaggregate(
            frame, args.k, method=spec.name, variables=groups if groups else variables, strata=strata,
            missing=args.missing, measure=args.measure, trim=args.trim, weights=weights, decimals=args.decimals,
            improve=improve, improve_options=improve_options, scaling=args.scaling,
            strata_scaling=args.strata_scaling, rng=args.seed,
            time_limit=args.time_limit, progress=_progress_callback(True) if show else None,
            blocks=_parser.parse_blocks(args.blocks), n_jobs=args.n_jobs, client=args.dask, **options,
        )
    if args.weights and "weight_column" in result.info:  # given to the library as values
        result.info["weight_column"] = str(args.weights)
    if [str(c) for c in result.data.columns] != read_columns:
        written = ", ".join(map(str, result.data.columns))
        raise ReleaseCheckError(f"release check failed: the columns to write ({written}) "
                                f"are not the columns of the input file ({', '.join(read_columns)}), in order")
    unmasked = _files.unmasked_columns(frame, list(result.variables), exclude, left_out, args.variables is not None,
                                       fmt)
    rep = write_release(result, frame, output=args.output, stdout=not args.output, report_path=args.report,
                        html=args.html, extra={"input": str(args.input), "output": args.output}, fmt=fmt,
                        unmasked=unmasked)
    named = [u for u in unmasked if u["reason"].endswith("not in --variables")]
    if named:  # (left out by default: the default selection's warning names them already)
        warnings.warn(_unmasked_warning(named, frame.columns), UserWarning, stacklevel=2)
    if not args.quiet:
        stream = sys.stdout if args.output else sys.stderr
        with phase("text report"):
            print(rep.to_text(), file=stream)
    return 0


def write_release(result: Any, original: pd.DataFrame, *, output: str | None, stdout: bool,
                  report_path: str | None, html: str | None, extra: dict,
                  before: Sequence[tuple[str, str, Any]] = (), fmt: CsvFormat | None = None,
                  unmasked: list | None = None) -> Any:
    """Write a release as one transaction and return its report.

    The masked data go to ``output`` (CSV or Parquet) or, with ``stdout``, are built as CSV
    text in memory; either way they are read back and verified (:func:`_files.verify`) before any
    file is renamed into place or any byte is printed. Then the JSON (``report_path``) and
    HTML (``html``) reports are written from the released values, and every output (also
    ``before``: ``(path, what, writer)`` triples such as the demo's original data) is
    renamed into place at once. Any failure: nothing written, no file changed.
    """
    from ..reporting import report

    text = None
    variables = list(result.variables)
    with _files.Outputs() as out:
        for path, what, writer in before:
            out.write(path, what, writer)
        what = f"the release for {output or 'standard output'}" if (output or stdout) else "the release"
        if output:
            parquet = _files.is_parquet(output)
            with phase("write"):
                tmp = out.write(output, "the masked file (--output)",
                                lambda p: _files.write_table(result.data, p, parquet=parquet, fmt=fmt,
                                                               name=output))
            with phase("read back and verify"):
                released, sizes = _files.read_back_and_verify(lambda: tmp, variables, parquet, original, result, what,
                                                              fmt)
            checked_on = f"the written file {output}"
        elif stdout:
            text = _files.csv_text(result.data, fmt)
            released, sizes = _files.read_back_and_verify(lambda: io.StringIO(text), variables, False, original, result,
                                                          what, fmt)
            checked_on = "the CSV written to standard output"
        else:
            released, checked_on = None, None
            sizes = _files.verify(original, result.data[variables], result, what=what)
        skipped = None
        if _interrupt.received() or (result.status == "limit" and "interrupted (Ctrl-C)" in (result.message or "")):
            skipped = _MEASURES_SKIPPED  # the release was checked above (k-anonymous, IL as reported)
        try:
            with _interrupt.stoppable():  # a Ctrl-C now stops the measures (record linkage: 13 s at 10^6)
                rep = report(result, original, released=released, checked_on=checked_on, measures_skipped=skipped,
                             class_sizes=sizes)
        except KeyboardInterrupt:
            if not _interrupt.first_only():
                raise
            skipped = _MEASURES_SKIPPED
            rep = report(result, original, released=released, checked_on=checked_on, measures_skipped=skipped,
                         class_sizes=sizes)
        if not rep.k_anonymous:  # pragma: no cover - _files.verify refuses it first
            raise ReleaseCheckError("release check failed: the report finds the release not k-anonymous")
        if unmasked is not None:  # the command's own list (read with the file's format); else report()'s
            rep.unmasked = list(unmasked)
        if report_path:
            with phase("json"):
                out.write(report_path, "the JSON report (--report)", lambda p: _write_json(p, result, rep, **extra))
        if html:
            with phase("html"):
                out.write(html, "the HTML report (--html)",
                          lambda p: _write_html(p, rep, plots=False if skipped else None, stoppable=True))
        if text is not None:
            out.text(text, sys.stdout)
        with phase("commit"):
            out.commit()
    return rep


def _write_json(path: str, result: Any, rep: Any, **extra: Any) -> None:
    data = result.to_dict() if result is not None else {}
    data.update(rep.to_dict())
    data.update(extra)
    Path(path).write_text(json.dumps(data, indent=2) + "\n")


_MEASURES_SKIPPED = ("utility and risk measures (and plots) not computed: the run was interrupted (Ctrl-C) and the "
                     "outputs are written at once; `pysdcmicro report ORIGINAL MASKED` computes them")


def _write_html(path: str, rep: Any, plots: bool | None = None, stoppable: bool = False) -> None:
    if stoppable and plots is not False:  # a first Ctrl-C while plotting: the page without plots
        try:
            with _interrupt.stoppable():
                return _write_html(path, rep, plots)
        except KeyboardInterrupt:
            if not _interrupt.first_only():
                raise
            print("pysdcmicro: note: interrupted (Ctrl-C): the HTML report is written without its plots.",
                  file=sys.stderr)
            plots = False
    if plots is not False:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            print("pysdcmicro: note: the HTML report has no plots: matplotlib is not installed "
                  "(pip install \"pysdcmicro[plot]\").", file=sys.stderr)
    rep.to_html(path, plots=plots)


def cmd_report(args: argparse.Namespace) -> int:
    from ..metrics._pairs import check_fraction
    from ..reporting import compare
    from .._validation import check_k

    if args.k is not None:
        check_k(args.k)
    check_fraction(args.sd_fraction, "sd_fraction")
    variables = _parser.split_list(args.variables, "variables")
    fmt = _parser.csv_format(args)
    _files.check_output_paths({"ORIGINAL": args.original, "MASKED": args.masked},
                              {"--json": args.json, "--html": args.html})
    original, numeric = _files.read_table(args.original, variables, fmt=fmt, named={"--variables": variables})
    masked, _ = _files.read_table(args.masked, numeric, fmt=fmt, named={"--variables": variables})
    for path, frame in ((args.original, original), (args.masked, masked)):
        if len(frame) == 0:
            raise InvalidInputError(f"input file {path!r} has no records (only a header row); there is nothing to "
                                    "report on.")
        if variables is not None and not _files.is_parquet(path):
            _files.check_almost_numeric(frame, variables, variables, [], fmt)
    rep = compare(original, masked, variables=variables, k=args.k, sd_fraction=args.sd_fraction,
                  checked_on=f"the file {args.masked}")
    rep.unmasked = _files.unmasked_columns(masked, list(rep.variables), [], {}, variables is not None, fmt)
    # The reports are this command's product, also when they say "not k-anonymous" (exit 3).
    with _files.Outputs() as out:
        if args.json:
            out.write(args.json, "the JSON report (--json)",
                      lambda p: _write_json(p, None, rep, original=str(args.original), masked=str(args.masked)))
        if args.html:
            out.write(args.html, "the HTML report (--html)", lambda p: _write_html(p, rep))
        out.commit()
    if not args.quiet:
        print(rep.to_text())
    if rep.k_anonymous is False:  # the verdict, also under --quiet (which silences the report)
        reading = next(item["reading"] for item in rep.headline() if item["key"] == "k_anonymous")
        print(f"pysdcmicro: error: {args.masked!r} is not {rep.k}-anonymous: {reading}", file=sys.stderr)
        return 3
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from .._api import microaggregate
    from .._methods import get_method
    from ..datasets import make_demo_data

    from .._validation import check_rng

    check_rng(args.seed, "--seed")
    _files.check_output_paths({}, {"--original": args.original, "--output": args.output, "--report": args.report,
                             "--html": args.html})
    spec = get_method(args.method)
    options = _parser.parse_options(args.option, spec, f"method {spec.name!r}")
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
    passed = [c for c in frame.columns if c not in variables]
    print(f"Left unmasked, as a real release must not leave them: {', '.join(passed)} (an identifier to remove, "
          "categories to recode or suppress; the report names each with its reason).")
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
    if args.original or args.output or args.report or args.html:
        before = [(args.original, "the original data (--original)",
                   lambda p: _files.write_table(frame, p, parquet=False))] \
            if args.original else []
        write_release(result, frame, output=args.output, stdout=False, report_path=args.report, html=args.html,
                      extra={"output": args.output}, before=before)
        print()
        for path, what in ((args.original, "Original data"), (args.output, "Masked data"),
                           (args.report, "JSON report"), (args.html, "HTML report")):
            if path:
                print(f"{what} written to {path}")
    return 0
