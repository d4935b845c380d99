"""``python -m benchmarks.bridge``: sdcMicro's methods and ours side by side, through the
sdcMicro bridge (needs R, rpy2 and the CRAN package sdcMicro; see the README).

For each CASC set and k, :func:`pysdcmicro.bridges.sdcmicro.compare` runs the methods on
the same data; the table has our IL (on the groups each method made), the best of
``--repeats`` timings (sdcMicro's measured in R, without data transfer), group sizes and
which methods made identical groups. Writes ``benchmarks/results/bridge.md``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import platform
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
METHODS = ["sdcMicro:mdav", "mdav", "sdcMicro:rmd", "sdcMicro:pca", "sdcMicro:onedims"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bridge")
    parser.add_argument("--datasets", default="tarragona,census,eia")
    parser.add_argument("--k", default="3,5,10")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--overhead", action="store_true",
                        help="instead: time the R package's microaggregation() against sdcMicro's own (first call "
                             "in fresh R sessions, then warm calls), and replace that section of bridge.md")
    parser.add_argument("--sessions", type=int, default=5, help="--overhead: fresh R sessions timed")
    args = parser.parse_args(argv)
    if args.overhead:
        return overhead(args)

    from pysdcmicro.bridges import sdcmicro as sb
    from pysdcmicro.datasets import load_casc

    versions = sb.check_r()
    folder = os.environ.get("PYSDCMICRO_CASC_DIR") or str(HERE.parents[1] / "shared" / "data")
    methods = args.methods.split(",")
    header = ("| data set | k | method | IL | seconds | groups | sizes | identical groups to | note |")
    lines = [header, "|" + "---|" * 9]
    print(header, flush=True)
    for name in args.datasets.split(","):
        data = load_casc(name, data_dir=folder)
        for k in (int(x) for x in args.k.split(",")):
            tables = [sb.compare(data, list(data.columns), k, methods=methods) for _ in range(args.repeats)]
            table = tables[0]
            for method in table.index:
                row = table.loc[method]
                seconds = min(t.loc[method, "seconds"] for t in tables)
                if row["message"].startswith("R error"):
                    note = row["message"][:90] + ("..." if len(row["message"]) > 90 else "")
                    line = f"| {name} | {k} | {method} |  |  |  |  |  | {note} |"
                else:
                    note = "IL of the masked values (not a partition)" if row["il_basis"] != "groups" else ""
                    line = (f"| {name} | {k} | {method} | {row['IL']:.6f} | {seconds:.3f} | {row['n_groups']} | "
                            f"{row['min_group_size']}..{row['max_group_size']} | {row['identical_groups_to']} | "
                            f"{note} |")
                lines.append(line)
                print(line, flush=True)
    if args.no_write:
        return 0
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    text = [
        "# sdcMicro and pysdcmicro side by side",
        "",
        f"Run: `python -m benchmarks.bridge` on {now} ({platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, {versions['R']}, sdcMicro {versions['sdcMicro']}, "
        f"rpy2 {versions['rpy2']}).",
        "",
        "IL = 100 * SSE / SST on z-scores (pysdcmicro's measure) of the groups each method made, "
        "recovered from its masked values (rows with identical masked vectors; groups of duplicate "
        "records with equal means merge, which leaves SSE unchanged). seconds: best of "
        f"{args.repeats} runs; sdcMicro's timed in R (`proc.time`, ms resolution) without data "
        "transfer, ours the whole `microaggregate` call. sizes: smallest..largest recovered group.",
        "",
        *lines,
        "",
    ]
    (HERE / "results" / "bridge.md").write_text("\n".join(text))
    return 0


# --------------------------------------------------------------------------------------
# Per-call cost from R (the R package, in process)
# --------------------------------------------------------------------------------------


def overhead(args) -> int:
    """The R package's ``microaggregation()`` against sdcMicro's own, by the package's
    ``inst/sdcmicro-suite/overhead.R``: the first call in ``--sessions`` fresh R sessions
    (Python started and pysdcmicro imported in it), then warm mdav calls side by side.
    Installs the R package into a temporary library; needs R, reticulate and sdcMicro."""
    import re
    import statistics
    import subprocess
    import tempfile

    repo = HERE.parent
    first, cpu, warm = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["R", "CMD", "INSTALL", "--no-test-load", "-l", tmp, str(repo / "bridges" / "R" / "pysdcmicro")],
                       check=True, capture_output=True)
        env = {**os.environ, "RETICULATE_PYTHON": os.environ.get("RETICULATE_PYTHON", sys.executable),
               "R_LIBS": os.pathsep.join([tmp] + [p for p in os.environ.get("R_LIBS", "").split(os.pathsep) if p])}
        script = Path(tmp) / "pysdcmicro" / "sdcmicro-suite" / "overhead.R"
        for i in range(args.sessions):
            out = subprocess.run(["Rscript", str(script), str(args.repeats if i == args.sessions - 1 else 1)],
                                 capture_output=True, text=True, env=env)
            if out.returncode != 0 or "skipped" in out.stdout:
                print(out.stdout + out.stderr, file=sys.stderr)
                return 1
            m = re.search(r"Python start included\): ([0-9.]+) s elapsed, ([0-9.]+) s CPU", out.stdout)
            first.append(float(m.group(1)))
            cpu.append(float(m.group(2)))
            print(f"session {i + 1}: first call {first[-1]:.3f} s", flush=True)
            if i == args.sessions - 1:
                for line in out.stdout.splitlines():
                    row = re.match(r"(.+?) \((\d+)\)\s+([0-9.]+)s\s+([0-9.]+)s\s+([0-9.]+)s\s+([0-9.]+)s\s+([0-9.]+)\s+([0-9.]+)s",
                                   line)
                    if row:
                        warm.append(row.groups())
    load = os.getloadavg()
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "## Per-call cost from R (the R package, in process)",
        "",
        f"Run: `python -m benchmarks.bridge --overhead --sessions {args.sessions} --repeats {args.repeats}` on {now} "
        f"({platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; system load at the end "
        f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}). Script: `bridges/R/pysdcmicro/inst/sdcmicro-suite/overhead.R`.",
        "",
        "`pysdcmicro::microaggregation()` (the R package, calling Python in process through reticulate) "
        "next to `sdcMicro::microaggregation()`, method `mdav`, k = 3, in one R session. The first call "
        "includes loading the package and reticulate, starting Python and importing pysdcmicro (sdcMicro "
        "already loaded, as in a user's session); it is timed in each of the fresh R sessions. Warm calls: "
        "median of the repeats, the two functions in alternation, on sdcMicro's bundled Tarragona and "
        "testdata (expend, income, savings), as `sdcMicroObj` (risk and utility refreshed) and as data "
        "frame (a `micro` object). Target: first call at most 3 s; warm at most 1.5 x sdcMicro's time + 50 ms.",
        "",
        "| first call, fresh R session | median (s) | max (s) | CPU, median (s) | target (s) |",
        "|---|---|---|---|---|",
        f"| Tarragona `sdcMicroObj`, {len(first)} sessions | {statistics.median(first):.2f} | {max(first):.2f} | "
        f"{statistics.median(cpu):.2f} | 3 |",
        "",
        "| warm mdav | repeats | sdcMicro (s) | pysdcmicro (s) | sdcMicro CPU (s) | pysdcmicro CPU (s) | ratio | target (s) |",
        "|---|---|---|---|---|---|---|---|",
        *(f"| {name} | {reps} | {a} | {b} | {c} | {d} | {ratio} | {target} |"
          for name, reps, a, b, c, d, ratio, target in warm),
        "",
    ]
    print("\n".join(lines))
    if args.no_write:
        return 0
    path = HERE / "results" / "bridge.md"
    text = path.read_text() if path.exists() else ""
    head = re.split(r"\n## (?:Round trip from R|Per-call cost from R)", text)[0].rstrip("\n")
    path.write_text(head + "\n\n" + "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
