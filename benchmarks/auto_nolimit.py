"""`auto` without a time limit against MDAV + two-swap on the CASC cells (issue 14: "never
worse than MDAV followed by two-swap; seconds, not minutes; deterministic for a seed").

    python -m benchmarks.auto_nolimit DATASET [K,K,...] [--all-columns]

One row per k: MDAV + two-swap (IL, seconds), then `auto` with no limit twice with the same
seed (IL, seconds of each call; "same" = the two label vectors are equal), the 1-min load
average before / after, and the commit. Data: `benchmarks._run_cell.load_dataset` (set
PYSDCMICRO_CASC_DIR); by default the default variable selection (EIA: UTILITYID left out),
with --all-columns every published column. Time it through the machine's timing lock.
"""

from __future__ import annotations

import subprocess
import sys
import time
import warnings

import numpy as np

import pysdcmicro
from benchmarks._run_cell import load_dataset


def _timed(df, k, **kw):
    started = time.perf_counter()
    res = pysdcmicro.microaggregate(df, k, rng=0, **kw)
    return res, time.perf_counter() - started


def main(argv: list[str]) -> None:
    name = argv[0]
    ks = [int(x) for x in argv[1].split(",")] if len(argv) > 1 and not argv[1].startswith("--") else [3, 4, 5, 10]
    df = load_dataset(name)
    variables = list(df.columns) if "--all-columns" in argv else None
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    cols = f"{len(variables)} (all)" if variables else "default"
    for k in ks:
        load0 = open("/proc/loadavg").read().split()[0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            base, tb = _timed(df, k, method="mdav", improve="two-swap", variables=variables)
            a, ta = _timed(df, k, method="auto", variables=variables)
            a2, ta2 = _timed(df, k, method="auto", variables=variables)
        load1 = open("/proc/loadavg").read().split()[0]
        print(f"| {name} | {df.shape[0]} | {cols} | {k} | {base.information_loss:.4f} | {tb:.2f} | "
              f"{a.information_loss:.4f} | {ta:.1f} / {ta2:.1f} | "
              f"{'yes' if a.information_loss <= base.information_loss else 'NO'} | "
              f"{'yes' if np.array_equal(a.labels, a2.labels) else 'NO'} | {load0} / {load1} | {commit} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
