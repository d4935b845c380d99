"""One `auto` cell with a time limit (issue 14's 600-s CASC table): one call, one table row.

    /work/wt/timed /usr/bin/time -v python -m benchmarks.auto_cell DATASET K [LIMIT] [--json PATH]

The call is `microaggregate(frame, k, method="auto", time_limit=LIMIT, rng=0,
variables=list(frame.columns))` (every published CASC column, as in `suites/auto_budget.py`).
Prints the row of `results/auto_budget.md`'s 12-cell table (IL, best published, met?, LB,
where the bound came from, gap, wall seconds, 1-min load before / after, end UTC, commit);
peak RSS comes from `/usr/bin/time -v` around it. With --json, `info` (components, winner,
timing) is written to PATH for the text under the table.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import warnings


def main(argv: list[str]) -> None:
    import pysdcmicro
    from benchmarks._run_cell import load_dataset
    from benchmarks.references import lookup

    name, k = argv[0], int(argv[1])
    limit = float(argv[2]) if len(argv) > 2 and not argv[2].startswith("--") else 600.0
    out = argv[argv.index("--json") + 1] if "--json" in argv else None
    df = load_dataset(name)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                           text=True).stdout.strip()
    load0 = open("/proc/loadavg").read().split()[0]
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = pysdcmicro.microaggregate(df, k, method="auto", time_limit=limit, rng=0, variables=list(df.columns))
    wall = time.perf_counter() - started
    load1 = open("/proc/loadavg").read().split()[0]
    il, lb = res.information_loss, res.lower_bound
    ref = (lookup(name, k, "best") or (None,))[0]
    met = "-" if ref is None else ("yes" if il <= ref else f"no (+{il - ref:.4f})")
    gap = "" if lb is None else f"{100 * (il - lb) / il:.2f} %"
    print(f"| {name} | {k} | {il:.4f} | {ref} | {met} | {'' if lb is None else f'{lb:.4f}'} | "
          f"{res.info.get('bound_from', '')} | {gap} | {wall:.1f} | {load0} / {load1} | "
          f"{time.strftime('%H:%M:%S', time.gmtime())} | {commit}{' (dirty)' if dirty else ''} |", flush=True)
    print(res.message, flush=True)
    if out:
        with open(out, "w") as fh:
            json.dump({"info": res.info, "message": res.message, "il": il, "lower_bound": lb}, fh, indent=1,
                      default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o))


if __name__ == "__main__":
    main(sys.argv[1:])
