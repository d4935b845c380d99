"""``python -m benchmarks --suite core [--datasets ...] [--k ...] [--methods ...]``."""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

from validation.references import lookup

HERE = Path(__file__).resolve().parent


def _suites() -> list[str]:
    return sorted(p.stem for p in (HERE / "suites").glob("*.py") if not p.stem.startswith("_"))


def _run_case(case: dict, timeout: float | None) -> dict:
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "1")
    # PYSDCMICRO_BENCH_PREFIX: a command put before each case's process (e.g. a lock that
    # gives the row the machine to itself, or `taskset`), split on spaces.
    prefix = os.environ.get("PYSDCMICRO_BENCH_PREFIX", "").split()
    proc = subprocess.run(
        prefix + [sys.executable, "-m", "benchmarks._run_cell", json.dumps(case)],
        cwd=HERE.parent, capture_output=True, text=True, timeout=timeout, env=env,
    )
    load_after = os.getloadavg()
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["failed"])[-1]}
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["loadavg_after"] = [round(v, 2) for v in load_after]  # 1, 5, 15 min, when the row ended
    out["utc_end"] = _dt.datetime.now(_dt.timezone.utc).strftime("%H:%M:%S")
    return out


def _fmt(v, digits=4):
    return "" if v is None else f"{v:.{digits}f}"


def _options_text(case: dict) -> str:
    parts = [f"{k}={v}" for k, v in case.get("kwargs", {}).items()]
    parts += [f"{k}={v}" for k, v in case.get("options", {}).items()]
    if case.get("improve"):
        parts.append(f"improve={case['improve']}")
    if case.get("time_limit"):
        parts.append(f"time_limit={case['time_limit']}")
    return ", ".join(parts)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    parser.add_argument("--suite", default="core", choices=_suites())
    parser.add_argument("--datasets", help="comma-separated filter")
    parser.add_argument("--k", help="comma-separated filter")
    parser.add_argument("--methods", help="comma-separated filter")
    parser.add_argument("--no-write", action="store_true", help="print only; do not update results/")
    parser.add_argument("--timeout", type=float, default=None, help="seconds per case process")
    parser.add_argument("--time-limit", type=float, default=None,
                        help="replace each case's time limit (an ad-hoc run: never writes results/)")
    args, rest = parser.parse_known_args(argv)

    suite = importlib.import_module(f"benchmarks.suites.{args.suite}")
    if hasattr(suite, "main"):  # a suite with its own table runs itself (with its own options)
        return suite.main(rest + (["--no-write"] if args.no_write else [])
                          + (["--methods", args.methods] if args.methods else []))
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    cases = list(suite.CASES)
    if args.datasets:
        keep = set(args.datasets.split(","))
        cases = [c for c in cases if c["dataset"] in keep]
    if args.k:
        keep_k = {int(x) for x in args.k.split(",")}
        cases = [c for c in cases if c["k"] in keep_k]
    if args.methods:
        keep_m = set(args.methods.split(","))
        cases = [c for c in cases if c["method"] in keep_m]
    if args.time_limit is not None:
        cases = [{**c, "time_limit": args.time_limit} for c in cases]

    header = ("| data set | n x d | k | method | options | IL | seeds (min..max) | reference | source | "
              "Δ IL | LB | seconds | peak MiB | status |")
    lines = [header, "|" + "---|" * 14]
    print(header, flush=True)
    records = []
    for case in cases:
        seeds = case.get("seeds", [case.get("seed")])
        runs = []
        for seed in seeds:
            c = dict(case)
            c.pop("seeds", None)
            c["seed"] = seed
            runs.append(_run_case(c, args.timeout))
        ok = [r for r in runs if "error" not in r]
        for seed, r in zip(seeds, runs):
            if "error" in r:
                continue
            print(f"  seed {seed}: IL {r['information_loss']:.4f}, {r['seconds']:.1f} s, load "
                  f"{r['loadavg_after']} at {r['utc_end']} UTC", file=sys.stderr, flush=True)
        ref = lookup(case["dataset"], case["k"], case.get("reference"))
        label = case.get("label", case["method"])
        if not ok:
            row = (f"| {case['dataset']} | | {case['k']} | {label} | {_options_text(case)} | ERROR | | | | | | | | "
                   f"{runs[0]['error'][:80]} |")
        else:
            ils = [r["information_loss"] for r in ok]
            il = statistics.median(ils)
            spread = f"{min(ils):.4f}..{max(ils):.4f} ({len(ils)})" if len(ils) > 1 else ""
            secs = statistics.median(r["seconds"] for r in ok)
            peak = max(r["peak_mib"] for r in ok)
            workers = max(r.get("workers_peak_mib_total", 0.0) for r in ok)
            peak_text = f"{peak:.1f}" + (f" (+{workers:.0f} in {max(r['workers'] for r in ok)} workers; "
                                         f"total {max(r['peak_abs_mib'] for r in ok) + workers:.0f})" if workers else "")
            lbs = [r["lower_bound"] for r in ok if r.get("lower_bound") is not None]
            delta = "" if ref is None else f"{il - ref[0]:+.4f}"
            statuses = ",".join(sorted({r["status"] for r in ok}))
            extra = ok[0].get("info", {})
            opts = _options_text(case)
            if "nn_bound_il" in extra:
                opts = (opts + ", " if opts else "") + f"neighbour LB={extra['nn_bound_il']:.4f}"
            if "path_length" in extra:
                opts = (opts + ", " if opts else "") + f"path={extra['path_length']:.2f}"
            if ok[0].get("blocks"):
                opts = (opts + ", " if opts else "") + f"{ok[0]['blocks']} blocks, repair gain {ok[0]['repair_gain']:.4f}"
            row = (f"| {case['dataset']} | {ok[0]['n']}x{ok[0]['d']} | {case['k']} | {label} | {opts} | "
                   f"{il:.4f} | {spread} | {'' if ref is None else f'{ref[0]:.4f}'} | "
                   f"{'' if ref is None else ref[1]} | {delta} | {_fmt(max(lbs) if lbs else None)} | "
                   f"{secs:.3f} | {peak_text} | {statuses} |")
        print(row, flush=True)
        lines.append(row)
        records.append({"case": case, "runs": runs, "reference": ref})

    if not args.no_write and not (args.datasets or args.k or args.methods or args.time_limit is not None):
        stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
        doc = getattr(suite, "__doc__", "") or ""
        text = (f"# Benchmark suite `{args.suite}`\n\n{doc.strip()}\n\nRun: `python -m benchmarks --suite {args.suite}` "
                f"on {stamp} ({machine}). IL in percent; seconds = wall time of the call (in a "
                "fresh process, after `import pysdcmicro` and its lazy import of the package); peak MiB = "
                "resident memory above the process baseline after loading the data (with worker processes: "
                "their peaks added up, and the total of this process's absolute peak and the workers').\n\n"
                + "\n".join(lines) + "\n")
        (HERE / "results" / f"{args.suite}.md").write_text(text)
        (HERE / "results" / f"{args.suite}.json").write_text(json.dumps(records, indent=1, default=str) + "\n")
        print(f"\nwrote benchmarks/results/{args.suite}.md", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
