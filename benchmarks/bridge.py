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
                        help="instead: time the R package's round trip (R -> `pysdcmicro sdcmicro` -> R) against "
                             "sdcMicro's own microaggregation(), and replace that section of bridge.md")
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
# Round trip from R (the R package)
# --------------------------------------------------------------------------------------

_OVERHEAD_R = r"""
args <- commandArgs(trailingOnly = TRUE)
csv <- args[1]; name <- args[2]; repeats <- as.integer(args[3]); k <- as.integer(args[4])
suppressPackageStartupMessages({library(sdcMicro); library(pysdcmicro)})
d <- read.csv(csv)
nums <- names(d)
d$key <- factor(rep("all", nrow(d)))
obj <- createSdcObj(d, keyVars = "key", numVars = nums)
el <- function(expr) { t0 <- proc.time()[["elapsed"]]; force(expr); proc.time()[["elapsed"]] - t0 }
options(pysdcmicro.verbose = TRUE)
rows <- list()
for (i in seq_len(repeats)) {
  native <- NULL; ours <- NULL; summary <- ""
  t_native <- el(native <- sdcMicro::microaggregation(obj, aggr = k, method = "mdav"))
  t_ours <- el(withCallingHandlers(ours <- pysdcmicro::microaggregate(obj, aggr = k, method = "mdav"),
                                   message = function(m) { summary <<- conditionMessage(m); invokeRestart("muffleMessage") }))
  p0 <- proc.time()
  invisible(pysdcmicro::microaggregate(obj, aggr = k, method = "mdav"))
  p1 <- proc.time() - p0
  cpu <- sum(p1[c("user.self", "sys.self", "user.child", "sys.child")], na.rm = TRUE)
  t_list <- el(pysdcmicro::pysdcmicro_methods())
  f <- tempfile(fileext = ".rds")
  t_rds <- el({saveRDS(obj, f, compress = FALSE); invisible(readRDS(f))})
  unlink(f)
  num <- function(pattern) as.numeric(sub(pattern, "\\1", regmatches(summary, regexpr(pattern, summary))))
  rows[[i]] <- data.frame(native = t_native, ours = t_ours,
                          method = num("method ([0-9.]+) s"), bridge = num("utility\\) ([0-9.]+) s"),
                          start = t_list, rds = t_rds, cpu = cpu,
                          equal = isTRUE(all.equal(ours, native, tolerance = 1e-12)))
}
r <- do.call(rbind, rows)
write.csv(r, stdout(), row.names = FALSE)
"""


def overhead(args) -> int:
    """R -> command -> R against sdcMicro's own mdav, on the CASC files (needs R, sdcMicro,
    testthat-free; installs the R package into a temporary library)."""
    import io
    import shutil
    import subprocess
    import tempfile

    import pandas as pd

    from pysdcmicro.datasets import load_casc

    repo = HERE.parent
    folder = os.environ.get("PYSDCMICRO_CASC_DIR") or str(HERE.parents[1] / "shared" / "data")
    command = shutil.which("pysdcmicro", path=str(Path(sys.executable).parent)) or shutil.which("pysdcmicro")
    if command is None:
        print("the pysdcmicro command is not installed", file=sys.stderr)
        return 2
    datasets = [d for d in args.datasets.split(",") if d] if args.datasets != "tarragona,census,eia" \
        else ["tarragona", "eia"]
    k = int(args.k.split(",")[0]) if args.k != "3,5,10" else 3
    lines = ["| data set | n x p | sdcMicro mdav (s) | R -> command -> R (s) | in it: method (s) | "
             "in it: bridge incl. method (s) | command start alone (s) | saveRDS + readRDS in R (s) | "
             "overhead = round trip - method (s) | round trip CPU, R + command (s) | equal to sdcMicro |", "|" + "---|" * 11]
    with tempfile.TemporaryDirectory() as tmp:
        lib = Path(tmp) / "lib"
        lib.mkdir()
        subprocess.run(["R", "CMD", "INSTALL", "--no-test-load", "-l", str(lib), str(repo / "bridges" / "R" / "pysdcmicro")],
                       check=True, capture_output=True)
        script = Path(tmp) / "overhead.R"
        script.write_text(_OVERHEAD_R)
        env = {**os.environ, "PYSDCMICRO_COMMAND": command,
               "R_LIBS": os.pathsep.join([str(lib)] + [p for p in os.environ.get("R_LIBS", "").split(os.pathsep) if p])}
        for name in datasets:
            data = load_casc(name, data_dir=folder)
            csv = Path(tmp) / f"{name}.csv"
            data.to_csv(csv, index=False)
            out = subprocess.run(["Rscript", str(script), str(csv), name, str(args.repeats), str(k)],
                                 capture_output=True, text=True, env=env)
            if out.returncode != 0:
                print(out.stderr, file=sys.stderr)
                return 1
            t = pd.read_csv(io.StringIO(out.stdout))
            med = t.median(numeric_only=True)
            line = (f"| {name} | {data.shape[0]} x {data.shape[1]} | {med['native']:.3f} | {med['ours']:.2f} | "
                    f"{med['method']:.3f} | {med['bridge']:.3f} | {med['start']:.2f} | {med['rds']:.3f} | "
                    f"{med['ours'] - med['method']:.2f} | {med['cpu']:.2f} | {bool(t['equal'].all())} |")
            lines.append(line)
            print(line, flush=True)
    load = os.getloadavg()
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    section = [
        "## Round trip from R (the R package)",
        "",
        f"Run: `python -m benchmarks.bridge --overhead --repeats {args.repeats}` on {now} ({platform.machine()}, "
        f"{os.cpu_count()} cores; system load at the end {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}).",
        "",
        f"`pysdcmicro::microaggregate(obj, aggr = {k}, method = \"mdav\")` timed in R (wall clock, median of "
        f"{args.repeats}) next to `sdcMicro::microaggregation(obj, aggr = {k}, method = \"mdav\")` on the same "
        "`sdcMicroObj` (all CASC columns as numVars, one constant key variable). The round trip starts a "
        "Python process, which imports pysdcmicro, starts R through rpy2, loads sdcMicro, reads and writes "
        "the object as .rds, converts it to pandas and back and lets sdcMicro recompute risk and utility. "
        "\"command start alone\" is `pysdcmicro_methods()` (Python start and imports, no R); \"equal\" is "
        "`all.equal(ours, native, tolerance = 1e-12)` on every repeat. \"round trip CPU\" is user + system "
        "seconds of R and the command's processes (`proc.time()` with children) for one more call: "
        "less sensitive to the load than wall clock.",
        "",
        *lines,
        "",
    ]
    if args.no_write:
        return 0
    path = HERE / "results" / "bridge.md"
    text = path.read_text() if path.exists() else ""
    head = text.split("## Round trip from R")[0].rstrip("\n")
    path.write_text(head + "\n\n" + "\n".join(section))
    return 0


if __name__ == "__main__":
    sys.exit(main())
