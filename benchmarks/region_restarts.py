"""One run of ICSM region restarts on one core, for the with/without Tour2Assignment pairs of
``benchmarks/results/auto_budget.md`` ("Region restarts on long budgets").

    python -m benchmarks.region_restarts DATASET K SECONDS TOUR GROUPS

TOUR is 1 (every region restart starts its rounds with Tour2Assignment) or 0; GROUPS is the
region size in groups. Starts from MDAV, seed 0, no restart limit; prints one JSON line (IL,
restarts, wall seconds). The pairs were run as two such processes side by side (one per
core) under the timing lock.
"""
import json
import sys
import time

import pysdcmicro
from pysdcmicro.local_search import _icsm

from benchmarks._run_cell import load_dataset


def main(argv: list[str]) -> None:
    ds, k, secs, tour, groups = argv[0], int(argv[1]), float(argv[2]), bool(int(argv[3])), int(argv[4])
    _icsm.REGION_TOUR = tour
    data = load_dataset(ds)
    t = time.time()
    res = pysdcmicro.microaggregate(data, k, method="icsm", rng=0, time_limit=secs, variables=list(data.columns),
                                   max_restarts=None, region_groups=groups)
    print(json.dumps({"ds": ds, "k": k, "tour": tour, "groups": groups, "il": round(res.information_loss, 4),
                      "restarts": res.info.get("restarts"), "wall": round(time.time() - t, 1)}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
