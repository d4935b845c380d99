"""Scaling over cores: the same call with 2 and with more worker processes, one machine, one run.

Two kinds of cell, each a fresh process (``python -m benchmarks.suites.scaling --cell ...``),
so that every call pays its own worker start:

* ``blocked N J``: the default call on ``N x 10`` clustered data (``make_synthetic(N, 10,
  kind="clustered", n_clusters=200, rng=0)``, k = 5, ``rng=0``), which takes the blocked
  large-data path above 50 000 records, with ``n_jobs=J``. The phase profile comes from
  ``info``: the split (a thread of the calling process), the wait for the workers, the blocks
  after it, the repair windows (all in the workers) and the serial rest (everything else, in
  the calling process).
* ``auto DATA K LIMIT J``: method ``auto`` on a CASC set with ``time_limit=LIMIT`` and
  ``n_jobs=J`` processes (the calling one included), ``rng=0``: IL, the proven lower bound,
  the component that found the answer.

The targets: at 10^6 x 10 the blocked path at least 6x faster with 16 processes than with 2;
``auto`` on Census k = 5 with 60 s on 16 processes at IL at most 7.31.

``python -m benchmarks.suites.scaling [--jobs 2,16] [--n 1e6] [--auto census:5:60]
[--out DIR] [--no-write]`` runs the cells in turn and writes ``results/scaling.md`` and
``.json`` (or into ``DIR``). Every result is checked to be a k-partition. Run it on an
otherwise idle machine with at least as many cores as the largest ``J``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]

#: The generic runner's case list is not used: this suite writes its own table (``main``).
CASES: list = []


def _machine() -> dict:
    model = ""
    try:
        with open("/proc/cpuinfo") as fh:
            model = next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), "")
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"cores": cores, "cpu": model, "python": platform.python_version()}


def _commit() -> str:
    if os.environ.get("PYSDCMICRO_COMMIT"):  # a copy of the tree without .git (another machine)
        return os.environ["PYSDCMICRO_COMMIT"]
    from benchmarks.suites.large import _commit as commit

    return commit()


def _check_partition(labels, k: int) -> tuple[int, int]:
    import numpy as np

    sizes = np.bincount(np.unique(labels, return_inverse=True)[1])
    if sizes.min() < k:
        raise SystemExit(f"not a {k}-partition: a group of {sizes.min()} records")
    return int(sizes.min()), int(sizes.max())


def run_blocked(n: int, jobs: int) -> dict:
    from benchmarks.suites.large import _frame
    from pysdcmicro import microaggregate

    df = _frame(n, "clustered")
    load0 = os.getloadavg()
    t0 = time.perf_counter()
    res = microaggregate(df, 5, variables=list(df.columns), rng=0, n_jobs=jobs)
    wall = time.perf_counter() - t0
    smin, smax = _check_partition(res.labels, 5)
    blocks = res.info.get("blocks") or {}
    rep = res.info.get("repair") or {}
    start = blocks.get("seconds_workers_start") or 0.0
    after = max(0.0, (blocks.get("seconds") or 0.0) - start)
    windows = sum(p.get("seconds_windows", 0.0) for p in rep.get("passes", []))
    return {"cell": "blocked", "n": n, "jobs": jobs, "workers": blocks.get("workers"), "wall": wall,
            "IL": res.information_loss, "status": res.status, "sizes": [smin, smax],
            "split": blocks.get("seconds_split"), "workers_start": start, "blocks_after_start": after,
            "repair_windows": windows, "serial_rest": max(0.0, wall - after - windows),
            "load_before": list(load0), "commit": _commit(), **_machine()}


def run_auto(data: str, k: int, limit: float, jobs: int) -> dict:
    from pysdcmicro import microaggregate
    from pysdcmicro.datasets import load_casc

    df = load_casc(data)
    load0 = os.getloadavg()
    t0 = time.perf_counter()
    res = microaggregate(df, k, method="auto", time_limit=limit, rng=0, n_jobs=jobs)
    wall = time.perf_counter() - t0
    smin, smax = _check_partition(res.labels, k)
    comps = [{key: c.get(key) for key in ("name", "where", "mode", "epoch", "processes", "restarts", "sse", "merge",
                                         "seconds") if key in c}
             for c in res.info.get("components") or []]
    return {"cell": "auto", "data": data, "k": k, "limit": limit, "jobs": jobs, "wall": wall,
            "IL": res.information_loss, "lower_bound_IL": res.lower_bound,
            "status": res.status, "sizes": [smin, smax], "winner": res.info.get("winner"),
            "plan": res.info.get("plan"), "components": comps,
            "load_before": list(load0), "commit": _commit(), **_machine()}


def _cell(argv: list[str]) -> dict:
    if argv[0] == "blocked":
        return run_blocked(int(float(argv[1])), int(argv[2]))
    if argv[0] == "auto":
        return run_auto(argv[1], int(argv[2]), float(argv[3]), int(argv[4]))
    raise SystemExit(f"unknown cell {argv[0]!r}: blocked N J or auto DATA K LIMIT J")


def _run_in_process(argv: list[str], timeout: float) -> dict:
    cmd = [sys.executable, "-m", "benchmarks.suites.scaling", "--cell", *argv]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=HERE.parent)
    if proc.returncode != 0:
        return {"cell": argv[0], "argv": argv, "error": proc.stderr.strip()[-600:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _commit_run(r: dict) -> str:
    return f"{r['commit']} (run {r['run']})" if r.get("run") else r["commit"]


def table(rows: list[dict]) -> list[str]:
    out = []
    blocked = [r for r in rows if r.get("cell") == "blocked" and "error" not in r]
    if blocked:
        out += ["## Blocked path (default call, k = 5, clustered data)", "",
                "Parallel: the blocks once the workers are ready, and the repair windows. Serial rest: the "
                "calling process alone (standardizing, waiting for the workers, planning the windows, the release "
                "and its check). Speed-up: against the row of the same run and commit with the fewest processes.", "",
                "| n x d | processes | wall s | speed-up | split (thread) | workers start | blocks after start | "
                "repair windows | serial rest | IL | group sizes | cores | commit |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in blocked:
            base = min((b for b in blocked if b["n"] == r["n"] and b["commit"] == r["commit"]
                        and b.get("run") == r.get("run")), key=lambda b: b["jobs"])
            out.append(f"| {r['n']:.0e} x 10 | {r['jobs']} | {r['wall']:.1f} | {base['wall'] / r['wall']:.2f}x | "
                       f"{r['split'] or 0:.1f} | {r['workers_start']:.1f} | {r['blocks_after_start']:.1f} | "
                       f"{r['repair_windows']:.1f} | {r['serial_rest']:.1f} | {r['IL']:.6f} | "
                       f"{r['sizes'][0]}..{r['sizes'][1]} | {r['cores']} | {_commit_run(r)} |")
        out.append("")
    autos = [r for r in rows if r.get("cell") == "auto" and "error" not in r]
    if autos:
        out += ["## Method auto with a time limit", "",
                "| data | k | limit s | processes | wall s | IL | proven bound (IL) | winner | cores | commit |",
                "|---|---|---|---|---|---|---|---|---|---|"]
        for r in autos:
            lb = "" if r.get("lower_bound_IL") is None else f"{r['lower_bound_IL']:.4f}"
            out.append(f"| {r['data']} | {r['k']} | {r['limit']:g} | {r['jobs']} | {r['wall']:.1f} | {r['IL']:.4f} | "
                       f"{lb} | {r.get('winner') or ''} | {r['cores']} | {_commit_run(r)} |")
        out.append("")
    errors = [r for r in rows if "error" in r]
    for r in errors:
        out.append(f"- cell {' '.join(r['argv'])} failed: {r['error'].splitlines()[-1] if r['error'] else '?'}")
    if rows:
        m = rows[0]
        out.append(f"\nMachine: {m.get('cores')} cores ({m.get('cpu') or 'unknown CPU'}), Python {m.get('python')}.")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.suites.scaling", description=__doc__.splitlines()[0])
    ap.add_argument("--cell", nargs="+", help="run one cell in this process and print it as JSON")
    ap.add_argument("--jobs", default="2,16", help="process counts, comma-separated (default 2,16)")
    ap.add_argument("--n", default="1e6", help="records of the blocked cells, comma-separated (default 1e6)")
    ap.add_argument("--auto", default="census:5:60",
                    help="DATA:K:LIMIT of the auto cells, comma-separated; empty for none (default census:5:60)")
    ap.add_argument("--out", help="write scaling.md and scaling.json into this folder instead of results/")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--table", nargs="+", metavar="ROWS",
                    help="write the page from files of JSON rows (one per line, or a JSON list: rows run "
                         "elsewhere, cell by cell); each file is one run")
    ap.add_argument("--note", default="", help="with --table: how the rows were run (the page's Run line)")
    args = ap.parse_args(argv)
    if args.cell:
        print(json.dumps(_cell(args.cell)), flush=True)
        return 0
    if args.table:
        rows = []
        for i, name in enumerate(args.table):
            text = Path(name).read_text().strip()
            found = json.loads(text) if text.startswith("[") else [json.loads(x) for x in text.splitlines() if x]
            rows += [{**r, "run": i + 1} for r in found]
        _write(Path(args.out) if args.out else HERE / "results", rows, args.note)
        return 0
    jobs = [int(j) for j in args.jobs.split(",") if j]
    cells = [["blocked", n, str(j)] for n in args.n.split(",") if n for j in jobs]
    cells += [["auto", *spec.split(":"), str(j)] for spec in args.auto.split(",") if spec for j in jobs]
    rows = []
    for cell in cells:
        t0 = time.perf_counter()
        timeout = 600.0 if cell[0] == "blocked" else float(cell[3]) * 2 + 120.0
        row = _run_in_process(cell, timeout)
        rows.append(row)
        print(json.dumps(row), f"({time.perf_counter() - t0:.1f} s)", flush=True)
    lines = table(rows)
    print("\n".join(lines))
    if not args.no_write:
        stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        _write(Path(args.out) if args.out else HERE / "results", rows,
               f"`python -m benchmarks.suites.scaling --jobs {args.jobs} --n {args.n} --auto {args.auto}` on {stamp}")
    return 0 if not any("error" in r for r in rows) else 1


def _write(folder: Path, rows: list[dict], note: str) -> None:
    doc = __doc__.split("\n\n``python -m")[0].strip()
    (folder / "scaling.md").write_text(f"# Benchmark suite `scaling`\n\n{doc}\n\nRun: {note}.\n\n"
                                       + "\n".join(table(rows)) + "\n")
    (folder / "scaling.json").write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())
