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
    args = parser.parse_args(argv)

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
        f"rpy2 {versions['rpy2']}); taken on a shared, loaded machine: timings are noisy.",
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


if __name__ == "__main__":
    sys.exit(main())
