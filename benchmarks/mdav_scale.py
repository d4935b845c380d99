"""Exact whole-data MDAV and V-MDAV at scale, and MDAV on the CASC cells against sdcMicro.

Writes ``benchmarks/results/mdav_scale.md`` (and ``.json``), with the commit id, the system
load (1/5/15 min) before and after each part, and the machine:

1. ``--part scale``: Gaussian data (``numpy.random.default_rng(0).normal(size=(n, 10))``),
   k = 5, ``microaggregate(X, 5, method=..., blocks=None)`` end to end (validation,
   standardization, the method, the release and its check), each (method, n) in a fresh
   process: wall and CPU seconds of the call, the method's own seconds (``res.seconds``), peak
   resident memory of the process (``ru_maxrss``), IL; the fitted growth exponent (least
   squares of log seconds on log n). The compiled kernels are compiled (or loaded from
   numba's cache) by a small warm-up call before the clock starts.
2. ``--part casc``: each CASC cell (Tarragona, Census, EIA; k = 3, 4, 5, 10), MDAV on every
   published column: sdcMicro 5.8.1's ``microaggregation(df, variables = names(df), aggr = k,
   method = "mdav")`` timed inside R (``system.time`` of each of ``--reps`` calls after one
   warm-up, median), against ``pysdcmicro.microaggregate(df, k, method="mdav")`` in one
   Python process (median of ``--reps`` calls after one warm-up) and the bare core
   (``mdav_labels`` on the standardized data); same IL checked.

Usage: ``python -m benchmarks.mdav_scale --part scale --sizes 10000,100000 --methods mdav``;
``python -m benchmarks.mdav_scale --part casc --data-dir /path/to/casc``. Run timings on an
otherwise idle machine and keep each call under ~12 minutes; results of several calls are merged into the same files (a row is replaced by a newer one of the same key).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


def _commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=HERE,
                               capture_output=True, text=True).stdout.strip()
        return out.stdout.strip() + ("+dirty" if dirty else "")
    except OSError:  # pragma: no cover
        return "unknown"


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def one_size(method: str, n: int, d: int = 10, k: int = 5) -> dict:
    """One whole-data run in this process (call it in a fresh process)."""
    import pysdcmicro

    X = np.random.default_rng(0).normal(size=(n, d))
    pysdcmicro.microaggregate(X[:12000], k, method=method, blocks=None)  # compile / load the kernels
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    c0 = time.process_time()
    t0 = time.perf_counter()
    res = pysdcmicro.microaggregate(X, k, method=method, blocks=None)
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"method": method, "n": n, "d": d, "k": k, "wall_s": wall, "cpu_s": cpu, "method_s": res.seconds,
            "peak_rss_mib": peak / 1024.0, "rss_before_mib": base / 1024.0, "il": res.information_loss,
            "groups": int(res.n_groups), "status": res.status,
            "labels_crc": int(np.bitwise_xor.reduce(res.labels * np.arange(1, n + 1, dtype=np.int64) % 1000003))}


def scale_part(sizes: list[int], methods: list[str]) -> list[dict]:
    rows = []
    for method in methods:
        for n in sizes:
            load0 = _load()
            proc = subprocess.run([sys.executable, "-m", "benchmarks.mdav_scale", "--one", method, str(n)],
                                  cwd=HERE.parent, capture_output=True, text=True)
            if proc.returncode != 0:
                row = {"method": method, "n": n, "error": (proc.stderr.strip().splitlines() or ["failed"])[-1]}
            else:
                row = json.loads(proc.stdout.strip().splitlines()[-1])
            row["load_before"], row["load_after"] = load0, _load()
            print(json.dumps(row), flush=True)
            rows.append(row)
    return rows


_R_SCRIPT = r"""
suppressMessages(library(sdcMicro))
args <- commandArgs(trailingOnly = TRUE)
dir <- args[1]; reps <- as.integer(args[2])
for (name in c("tarragona", "census", "eia")) {
  df <- read.csv(file.path(dir, paste0(name, ".csv")))
  for (k in c(3, 4, 5, 10)) {
    invisible(microaggregation(df, variables = names(df), aggr = k, method = "mdav"))
    t <- sapply(seq_len(reps), function(i) system.time(
      microaggregation(df, variables = names(df), aggr = k, method = "mdav"))[["elapsed"]])
    cat(sprintf("%s %d %.6f %.6f\n", name, k, median(t), min(t)))
  }
}
"""


def casc_part(data_dir: str, reps: int) -> list[dict]:
    import pysdcmicro
    from pysdcmicro._standardize import standardization
    from pysdcmicro.constructive import mdav_labels
    from pysdcmicro.datasets import load_casc

    frames = {name: load_casc(name, data_dir=data_dir) for name in ("tarragona", "census", "eia")}
    sdc = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, df in frames.items():
            df.to_csv(Path(tmp) / f"{name}.csv", index=False)
        script = Path(tmp) / "time.R"
        script.write_text(_R_SCRIPT)
        env = dict(os.environ)
        load0 = _load()
        proc = subprocess.run(["Rscript", str(script), tmp, str(reps)], capture_output=True, text=True, env=env)
        load_r = (load0, _load())
        if proc.returncode != 0:
            print("sdcMicro timing failed:", proc.stderr.strip().splitlines()[-1:], flush=True)
        for line in proc.stdout.split("\n"):
            parts = line.split()
            if len(parts) == 4:
                sdc[(parts[0], int(parts[1]))] = (float(parts[2]), float(parts[3]))
    rows = []
    load0 = _load()
    pysdcmicro.microaggregate(frames["tarragona"].iloc[:60], 3, method="mdav")  # kernels loaded
    for name, df in frames.items():
        cols = list(df.columns)
        Z = standardization(df.to_numpy(dtype=np.float64)).Z
        for k in (3, 4, 5, 10):
            res = pysdcmicro.microaggregate(df, k, method="mdav", variables=cols)
            calls, cores = [], []
            for _ in range(reps):
                t0 = time.perf_counter()
                pysdcmicro.microaggregate(df, k, method="mdav", variables=cols)
                calls.append(time.perf_counter() - t0)
            for _ in range(reps):
                t0 = time.perf_counter()
                mdav_labels(Z, k)
                cores.append(time.perf_counter() - t0)
            s_med, s_min = sdc.get((name, k), (math.nan, math.nan))
            row = {"data": name, "n": len(df), "p": len(cols), "k": k, "il": res.information_loss,
                   "ours_call_s": statistics.median(calls), "ours_call_min_s": min(calls),
                   "ours_core_s": statistics.median(cores), "sdcmicro_s": s_med, "sdcmicro_min_s": s_min,
                   "ratio": statistics.median(calls) / s_med if s_med == s_med else math.nan}
            print(json.dumps(row), flush=True)
            rows.append(row)
    for row in rows:
        row["load_r"] = f"{load_r[0]} -> {load_r[1]}"
        row["load_py"] = f"{load0} -> {_load()}"
    return rows


def _fit_exponent(rows: list[dict], method: str, key: str = "wall_s") -> float | None:
    pts = [(r["n"], r[key]) for r in rows if r.get("method") == method and key in r and r[key] > 0]
    if len(pts) < 2:
        return None
    x = np.log([p[0] for p in pts])
    y = np.log([p[1] for p in pts])
    return float(np.polyfit(x, y, 1)[0])


def _merge(old: list[dict], new: list[dict], key) -> list[dict]:
    keep = {key(r): r for r in old}
    for r in new:
        keep[key(r)] = r
    return list(keep.values())


def write(scale_rows: list[dict] | None, casc_rows: list[dict] | None) -> None:
    path = RESULTS / "mdav_scale.json"
    data = json.loads(path.read_text()) if path.exists() else {"scale": [], "casc": []}
    stamp = {"commit": _commit(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
             "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"}
    if scale_rows:
        for r in scale_rows:
            r.update(stamp)
        data["scale"] = sorted(_merge(data["scale"], scale_rows, lambda r: (r["method"], r["n"])),
                               key=lambda r: (r["method"], r["n"]))
    if casc_rows:
        for r in casc_rows:
            r.update(stamp)
        data["casc"] = _merge(data["casc"], casc_rows, lambda r: (r["data"], r["k"]))
    path.write_text(json.dumps(data, indent=1) + "\n")

    out = ["# Exact whole-data MDAV / V-MDAV at scale; MDAV on the CASC cells against sdcMicro", "",
           "Written by `python -m benchmarks.mdav_scale` (see its docstring), each timing alone on the",
           "machine; system load (1/5/15 min) before and after each row. Commit and date on each row.", "",
           "## Gaussian d = 10, k = 5, `microaggregate(X, 5, method=..., blocks=None)`", "",
           "| method | n | wall s | CPU s | method s | peak RSS MiB | IL % | groups | load before | load after | commit | date |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in data["scale"]:
        if "error" in r:
            out.append(f"| {r['method']} | {r['n']} | error: {r['error']} | | | | | | | | {r.get('commit', '')} | |")
            continue
        out.append(f"| {r['method']} | {r['n']:,} | {r['wall_s']:.2f} | {r['cpu_s']:.2f} | {r['method_s']:.2f} | "
                   f"{r['peak_rss_mib']:.0f} | {r['il']:.4f} | {r['groups']:,} | {r['load_before']} | "
                   f"{r['load_after']} | {r['commit']} | {r['date']} |")
    out.append("")
    for method in sorted({r["method"] for r in data["scale"]}):
        e = _fit_exponent(data["scale"], method)
        if e is not None:
            ns = sorted(r["n"] for r in data["scale"] if r.get("method") == method and "wall_s" in r)
            out.append(f"Growth exponent of {method} (least squares of log wall seconds on log n, "
                       f"n = {', '.join(f'{n:,}' for n in ns)}): **{e:.2f}**.  ")
    out += ["", "## CASC cells: MDAV, every published column, against sdcMicro 5.8.1", "",
            "sdcMicro: `microaggregation(df, variables = names(df), aggr = k, method = \"mdav\")`, median of "
            "`system.time` over repeated calls inside R after a warm-up. Ours: `microaggregate(df, k, "
            "method=\"mdav\")` end to end (validation, standardization, MDAV, release, final release check), "
            "median of repeated calls after a warm-up; core = `mdav_labels` on the standardized data.", "",
            "| data | n x p | k | IL % | sdcMicro s | ours s (call) | ours / sdcMicro | ours s (core) | load (R part) | load (Python part) | commit |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in data["casc"]:
        out.append(f"| {r['data']} | {r['n']}x{r['p']} | {r['k']} | {r['il']:.4f} | {r['sdcmicro_s']:.4f} | "
                   f"{r['ours_call_s']:.4f} | {r['ratio']:.2f} | {r['ours_core_s']:.4f} | {r['load_r']} | "
                   f"{r['load_py']} | {r['commit']} |")
    (RESULTS / "mdav_scale.md").write_text("\n".join(out) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.mdav_scale")
    parser.add_argument("--part", choices=["scale", "casc"], default="scale")
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--methods", default="mdav,vmdav")
    parser.add_argument("--data-dir", default=os.environ.get("PYSDCMICRO_CASC_DIR"))
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--one", nargs=2, metavar=("METHOD", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(one_size(args.one[0], int(args.one[1]))))
        return 0
    print(f"commit {_commit()}, load {_load()}", flush=True)
    if args.part == "scale":
        rows = scale_part([int(float(s)) for s in args.sizes.split(",")], args.methods.split(","))
        if not args.no_write:
            write(rows, None)
    else:
        if not args.data_dir:
            parser.error("--data-dir (or PYSDCMICRO_CASC_DIR) is needed for --part casc")
        rows = casc_part(args.data_dir, args.reps)
        if not args.no_write:
            write(None, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
