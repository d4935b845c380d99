"""Large data: blocked MDAV with border repair (`pysdcmicro.large`) against
whole-data MDAV on synthetic data (`pysdcmicro.datasets.make_synthetic`, seed 0), 10
variables, k = 5. Whole-data MDAV is O(n^2 d / k): it runs at 10^4 and 10^5 records, not at
10^6. The blocked path: principal-axis blocks (default 10 000 records; 2 500 at n = 10^4 so
that there is more than one block), MDAV per block in 2 worker processes, then 2
border-repair passes of batched local search over windows of whole groups.

Targets: 10^6 x 10 within 10 minutes and 4 GiB peak memory (this process plus the
workers) on the 2-core machine; at 10^5 the blocked IL no worse than whole-data MDAV's."""

CASES = []
for _kind in ("clustered", "uniform"):
    for _n in (10_000, 100_000, 1_000_000):
        _ds = f"synthetic:{_kind}:{_n}:10"
        if _n <= 100_000:
            CASES.append({"dataset": _ds, "k": 5, "method": "mdav", "kwargs": {"blocks": None},
                          "label": "mdav (whole data)"})
        _blocks = 2_500 if _n == 10_000 else "auto"
        CASES.append({"dataset": _ds, "k": 5, "method": "mdav",
                      "kwargs": {"blocks": {"size": _blocks}, "n_jobs": 2},
                      "label": "mdav blocked + repair"})


# --------------------------------------------------------------------------- scale rows
#: ``python -m benchmarks.suites.large --scale N KIND BLOCKS``: one run in a fresh process
#: (so peak memory is its own), printed as one JSON line; ``--table`` turns the JSON lines of
#: results/large.scale.json into the Markdown section of results/large.md. The data are
#: ``make_synthetic(N, 10, kind=KIND, rng=0)`` (clustered: 200 clusters), k = 5, MDAV, rng = 0; BLOCKS = "none" (whole data) or "auto" (2 workers).
SCALE_HEAD = "\n## Scale rows\n"
SCALE_INTRO = (
    "Rows of `python -m benchmarks.suites.large --scale N KIND none|auto`, table by `--table`. Data: "
    "`make_synthetic(n, 10, kind, rng=0)` (clustered: 200 clusters); k = 5, MDAV, rng = 0; the blocked "
    "rows use the default blocks and 2 border-repair passes in 2 worker processes. CPU = this process + "
    "its workers; peak MiB: the main process's peak resident memory + the workers' peaks.\n")



def run_scale(n: int, kind: str, blocks: str) -> dict:
    import os
    import resource
    import time

    import numpy as np

    from pysdcmicro import microaggregate
    from pysdcmicro.datasets import make_synthetic

    X = make_synthetic(n, 10, kind=kind, rng=0, **({"n_clusters": 200} if kind == "clustered" else {}))
    extra = {"blocks": None} if blocks == "none" else {"blocks": "auto", "n_jobs": 2}
    load0 = os.getloadavg()[0]
    t0, c0 = time.perf_counter(), time.process_time()
    res = microaggregate(X, 5, method="mdav", rng=0, **extra)
    wall, cpu_main = time.perf_counter() - t0, time.process_time() - c0
    import multiprocessing

    for proc in multiprocessing.active_children():  # the workers exit after the call: reap them
        proc.join()
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_children = ch.ru_utime + ch.ru_stime
    sizes = np.bincount(res.labels)
    mem = res.info.get("memory") or {}
    main_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    rep = res.info.get("repair") or {}
    return {"n": n, "kind": kind, "blocks": blocks, "wall": wall, "IL": res.information_loss,
            "IL_blocks": rep.get("information_loss_before"), "status": res.status, "min_size": int(sizes.min()),
            "cpu_main": cpu_main, "cpu_children": cpu_children,
            "utilisation": (cpu_main + cpu_children) / wall / 2, "load": [load0, os.getloadavg()[0]],
            "main_peak_mib": main_peak, "worker_peak_mib_total": mem.get("worker_peak_mib_total", 0.0)}


def scale_table(rows: list) -> str:
    lines = ["| n x d | data | path | wall s | CPU s (main + workers) | 2-core utilisation | load (start, end) | "
             "IL blocks -> final | min group | peak MiB (main + workers) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        il = f"{r['IL_blocks']:.4f} -> {r['IL']:.4f}" if r.get("IL_blocks") is not None else f"{r['IL']:.4f}"
        lines.append(
            f"| {r['n']:.0e} x 10 | {r['kind']} | {'whole-data MDAV' if r['blocks'] == 'none' else 'blocked, 2 workers'} | "
            f"{r['wall']:.1f} | {r['cpu_main']:.1f} + {r['cpu_children']:.1f} | {r['utilisation']:.2f} | "
            f"{r['load'][0]:.1f}, {r['load'][1]:.1f} | {il} | {r['min_size']} | "
            f"{r['main_peak_mib']:.0f} + {r['worker_peak_mib_total']:.0f} |")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- parallel rows
#: ``python -m benchmarks.suites.large --par N KIND``: the default call
#: ``microaggregate(df, 5, variables=<the 10 columns>, rng=0)`` (method ``auto``, which takes
#: the blocked path above 50 000 records, with every core) on ``make_synthetic(N, 10, kind=KIND,
#: rng=0)`` (clustered: 200 clusters) in a fresh process, one JSON line: wall seconds of the
#: call, CPU seconds of this process and of its worker processes (reaped children), core
#: utilisation = CPU / wall (2.0 = both cores busy the whole call), peak resident memory of
#: this process (VmHWM) and of each worker, IL (after the blocks and final), the system load (1/5/15 min).
#: ``--par-cli N KIND`` does the same through the CLI (CSV written first, outside the timing).
#: ``--par-table`` writes results/large.par.md from results/large.par.json (JSON lines appended
#: by the runs), with the fitted growth exponent of wall and CPU seconds against n.
PAR_HEAD = "\n## Parallel rows (both cores)\n"
PAR_INTRO = (
    "Rows of `python -m benchmarks.suites.large --par N KIND --save` (and `--par-cli`), each in a "
    "fresh process; table by `python -m benchmarks.suites.large --par-table`. The call is the default "
    "one, `microaggregate(df, 5, variables=<the 10 columns>, rng=0)` (method `auto`, blocked above "
    "50 000 records), on `make_synthetic(n, 10, kind, rng=0)` (clustered: 200 clusters). Wall = seconds "
    "of the call; CPU = this process + its worker processes; cores busy = CPU / wall; peak RSS: this "
    "process's VmHWM and the largest worker's.\n")



def _commit() -> str:
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "rev-parse", "--short=10", "HEAD"], cwd=root, capture_output=True,
                              text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", "pysdcmicro",
                                "benchmarks", ":!benchmarks/results"], cwd=root, capture_output=True, text=True).stdout.strip()
        return head + ("+dirty" if dirty else "")
    except OSError:
        return "unknown"


def _vm_hwm_mib() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def _frame(n: int, kind: str):
    import pandas as pd

    from pysdcmicro.datasets import make_synthetic

    X = make_synthetic(n, 10, kind=kind, rng=0, **({"n_clusters": 200} if kind == "clustered" else {}))
    return pd.DataFrame(X, columns=[f"x{j}" for j in range(10)])


def run_par(n: int, kind: str) -> dict:
    import os
    import resource
    import time

    import numpy as np

    from pysdcmicro import microaggregate

    df = _frame(n, kind)
    load0 = os.getloadavg()
    t0, c0 = time.perf_counter(), time.process_time()
    res = microaggregate(df, 5, variables=list(df.columns), rng=0)
    wall, cpu_main = time.perf_counter() - t0, time.process_time() - c0
    import multiprocessing

    for proc in multiprocessing.active_children():  # the workers exit after the call: reap them
        proc.join()
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_children = ch.ru_utime + ch.ru_stime
    sizes = np.bincount(res.labels)
    mem = res.info.get("memory") or {}
    rep = res.info.get("repair") or {}
    blocks = res.info.get("blocks") or {}
    return {"n": n, "kind": kind, "via": "api", "path": "blocked" if blocks else "whole data",
            "workers": blocks.get("workers", 0), "blocks": blocks.get("count"), "wall": wall,
            "IL": res.information_loss, "IL_blocks": rep.get("information_loss_before"), "status": res.status,
            "min_size": int(sizes.min()), "max_size": int(sizes.max()), "cpu_main": cpu_main,
            "cpu_children": cpu_children, "utilisation": (cpu_main + cpu_children) / wall,
            "seconds_split": blocks.get("seconds_split"), "seconds_blocks": blocks.get("seconds"),
            "seconds_repair": rep.get("seconds"), "seconds_workers_start": blocks.get("seconds_workers_start"),
            "seconds_windows": (sum(p.get("seconds_windows", 0.0) for p in rep.get("passes", []))
                                if rep.get("passes") else None),
            "load_before": list(load0), "load_after": list(os.getloadavg()),
            "main_peak_mib": _vm_hwm_mib(), "worker_peak_mib": mem.get("worker_peak_mib", 0.0),
            "worker_peak_mib_total": mem.get("worker_peak_mib_total", 0.0), "commit": _commit()}


def run_par_cli(n: int, kind: str) -> dict:
    import json as _json
    import os
    import resource
    import subprocess
    import sys
    import tempfile
    import time

    import numpy as np
    import pandas as pd

    with tempfile.TemporaryDirectory(prefix="pysdcmicro-bench-") as tmp:
        src, out, rep = (os.path.join(tmp, name) for name in ("in.csv", "out.csv", "report.json"))
        phases_file = os.path.join(tmp, "phases.jsonl")
        _frame(n, kind).to_csv(src, index=False)
        load0 = os.getloadavg()
        t0, t0_unix = time.perf_counter(), time.time()
        proc = subprocess.run([sys.executable, "-m", "pysdcmicro", "microaggregate", src, "--k", "5", "--seed", "0",
                               "-o", out, "--report", rep, "--quiet"], capture_output=True, text=True,
                              env={**os.environ, "PYSDCMICRO_PHASES": phases_file})
        wall = time.perf_counter() - t0
        phases = {}
        if os.path.exists(phases_file):  # wall seconds per CLI phase (pysdcmicro/_phases.py)
            line = _json.loads(open(phases_file).read().splitlines()[-1])
            if line.get("main_entry_unix"):
                phases["start and imports"] = round(line["main_entry_unix"] - t0_unix, 3)
            phases.update(line["phases"])
        ch = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            raise SystemExit(f"CLI failed ({proc.returncode}): {proc.stderr.strip()[-400:]}")
        report = _json.loads(open(rep).read())
        released = pd.read_csv(out)
        _, counts = np.unique(released.to_numpy(), axis=0, return_counts=True)
    il = report.get("information_loss")
    if il is None:
        il = (report.get("result") or {}).get("information_loss")
    return {"n": n, "kind": kind, "via": "cli", "path": "blocked", "wall": wall, "IL": il,
            "status": report.get("status") or (report.get("result") or {}).get("status"),
            "min_size": int(counts.min()), "cpu_main": None, "cpu_children": ch.ru_utime + ch.ru_stime,
            "utilisation": (ch.ru_utime + ch.ru_stime) / wall, "load_before": list(load0),
            "load_after": list(os.getloadavg()), "peak_any_process_mib": ch.ru_maxrss / 1024.0,
            "phases": phases, "commit": _commit()}


def _fit_exponent(rows: list, key: str) -> float | None:
    import math

    pts = [(math.log(r["n"]), math.log(r[key])) for r in rows if r.get(key)]
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    return sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)


def _phase_table(rows: list) -> str:
    """Where the wall time of the blocked rows goes. Parallel: the block phase once the
    workers are ready, and the repair windows (both run in the worker processes). Serial:
    the rest, in this process alone: standardizing, waiting for the workers to start
    (importing pysdcmicro, loading the kernels: the same seconds on any number of cores),
    planning the repair windows, the release and its check. The split runs in a thread of
    this process while the first blocks are solved. With the serial rest fixed and the
    parallel parts divided by the worker count, Amdahl's law gives the wall time 16
    processes could reach."""
    rows = [r for r in rows if r.get("seconds_windows") is not None and r.get("seconds_workers_start") is not None]
    if not rows:
        return ""
    lines = ["", "Phase profile of the blocked rows (seconds of wall time). Parallel: the blocks once the workers are "
             "ready, and the repair windows, in the worker processes. Serial rest: everything else, in this process "
             "alone (standardizing, waiting for the workers to start, planning the repair windows, the release and "
             "its check); the split runs in a thread alongside the first blocks. Serial share = rest / wall; the "
             "last column is Amdahl's bound for 16 processes against these 2, if the parallel parts divided "
             "perfectly over the processes.", "",
             "| n x d | data | commit | workers | wall | split (thread) | workers start | blocks after start | "
             "repair windows | serial rest | serial share | 16 vs 2 at most |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        start = r["seconds_workers_start"]
        blocks = max(0.0, r["seconds_blocks"] - start)
        par = blocks + r["seconds_windows"]
        rest = max(0.0, r["wall"] - par)
        w = max(1, int(r.get("workers") or 2))
        bound = r["wall"] / (rest + par * w / 16)
        lines.append(f"| {r['n']:.0e} x 10 | {r['kind']} | {r['commit']} | {w} | {r['wall']:.1f} | "
                     f"{r['seconds_split'] or 0:.1f} | {start:.1f} | {blocks:.1f} | {r['seconds_windows']:.1f} | "
                     f"{rest:.1f} | {rest / r['wall']:.0%} | {bound:.1f}x |")
    return "\n".join(lines) + "\n"


def par_table(rows: list) -> str:
    lines = ["| n x d | data | via | path | wall s | CPU s (main + workers) | cores busy (CPU / wall) | "
             "load 1/5/15 min (before) | IL blocks -> final | group sizes | peak RSS MiB: main / each worker | "
             "commit |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        il = (f"{r['IL_blocks']:.4f} -> {r['IL']:.4f}" if r.get("IL_blocks") is not None
              else ("" if r.get("IL") is None else f"{r['IL']:.4f}"))
        cpu = (f"{r['cpu_main']:.1f} + {r['cpu_children']:.1f}" if r.get("cpu_main") is not None
               else f"{r['cpu_children']:.1f} (CLI process + workers)")
        mem = (f"{r['main_peak_mib']:.0f} / {r['worker_peak_mib']:.0f}" if "main_peak_mib" in r
               else f"{r['peak_any_process_mib']:.0f} (largest process)")
        load = "/".join(f"{v:.1f}" for v in r["load_before"])
        sizes = f"{r['min_size']}..{r['max_size']}" if "max_size" in r else f">= {r['min_size']}"
        lines.append(f"| {r['n']:.0e} x 10 | {r['kind']} | {r['via']} | {r['path']} | {r['wall']:.1f} | {cpu} | "
                     f"{r['utilisation']:.2f} | {load} | {il} | {sizes} | {mem} | {r['commit']} |")
    blocked = [r for r in rows if r["via"] == "api" and r["path"] == "blocked"]
    out = "\n".join(lines) + "\n" + _phase_table(blocked)
    for kind in sorted({r["kind"] for r in blocked}):
        sel = [r for r in blocked if r["kind"] == kind]
        for r in sel:
            r["cpu_total"] = r["cpu_main"] + r["cpu_children"]
        ew, ec = _fit_exponent(sel, "wall"), _fit_exponent(sel, "cpu_total")
        if ew is not None:
            out += (f"\nGrowth, {kind}, blocked path, n = {min(r['n'] for r in sel):.0e} .. "
                    f"{max(r['n'] for r in sel):.0e}: wall ~ n^{ew:.2f}, CPU ~ n^{ec:.2f} (least squares on log-log).\n")
    return out


if __name__ == "__main__":
    import json
    import sys
    from pathlib import Path

    here = Path(__file__).resolve().parents[1] / "results"
    if "--scale" in sys.argv:
        i = sys.argv.index("--scale")
        print(json.dumps(run_scale(int(float(sys.argv[i + 1])), sys.argv[i + 2], sys.argv[i + 3])), flush=True)
    elif "--par" in sys.argv or "--par-cli" in sys.argv:
        flag = "--par" if "--par" in sys.argv else "--par-cli"
        i = sys.argv.index(flag)
        fn = run_par if flag == "--par" else run_par_cli
        row = fn(int(float(sys.argv[i + 1])), sys.argv[i + 2])
        print(json.dumps(row), flush=True)
        if "--save" in sys.argv:
            with open(here / "large.par.json", "a") as fh:
                fh.write(json.dumps(row) + "\n")
    elif "--par-table" in sys.argv:
        rows = [json.loads(line) for line in (here / "large.par.json").read_text().splitlines() if line.strip()]
        md = "# Benchmark `large`, parallel rows\n\n" + PAR_INTRO + "\n" + par_table(rows)
        (here / "large.par.md").write_text(md)
        print(par_table(rows))
    elif "--table" in sys.argv:
        rows = json.loads((here / "large.scale.json").read_text())
        md = (here / "large.md").read_text().split(SCALE_HEAD)[0].rstrip("\n") + "\n"
        md += SCALE_HEAD + "\n" + SCALE_INTRO + "\n" + scale_table(rows)
        (here / "large.md").write_text(md)
        print(scale_table(rows))
