"""One column-generation cell with subset-row cuts (issue 16, k = 3: beyond the LP value).

    python -m benchmarks.colgen_cuts DATASET K TIME_LIMIT ['{"option": value}']

Runs ``microaggregate(data, K, method="column-generation", rng=0, time_limit=TIME_LIMIT)``
on the data as ``benchmarks._run_cell.load_dataset`` loads it and prints one table row (IL,
the bound before the cuts (the LP value) and after, its source, the gap, wall and CPU seconds,
peak RSS, load) and the cut rounds from ``info["subset_row_cuts"]``: per round the cuts in
the master, its LP value (proven by exact pricing with the penalties), the best bound so far,
the columns added and the seconds (values in IL percent).
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time

from ._run_cell import load_dataset


def main(argv: list[str]) -> None:
    import pysdcmicro

    name, k, limit = argv[0], int(argv[1]), float(argv[2])
    options = json.loads(argv[3]) if len(argv) > 3 else {}
    data = load_dataset(name)
    load0 = os.getloadavg()[0]
    t0, c0 = time.monotonic(), time.process_time()
    res = pysdcmicro.microaggregate(data, k, method="column-generation", rng=0, time_limit=limit,
                                    variables=list(data.columns), **options)
    wall, cpu = time.monotonic() - t0, time.process_time() - c0
    info = res.info
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    pct = 100.0 / res.sst
    cut = info.get("subset_row_cuts") or {}
    before = cut.get("bound_before")
    lp = info.get("lp_value")
    print("| data set | k | limit s | IL | LP value | bound before cuts | bound | bound source | gap | cut rounds | cuts | "
          "columns added | wall s | CPU s | peak MiB | load 1-min start/end |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    print(f"| {name} | {k} | {limit:g} | {res.information_loss:.4f} | "
          f"{'-' if lp is None else f'{lp * pct:.4f}'} | {'-' if before is None else f'{before * pct:.4f}'} | "
          f"{res.lower_bound:.4f} | {info.get('bound_source')} | {res.gap:.2%} | "
          f"{len(cut.get('rounds', [])) - 1 if cut else '-'} | {cut.get('cuts', '-')} | {cut.get('columns', '-')} | "
          f"{wall:.1f} | {cpu:.1f} | {peak:.0f} | {load0:.1f} / {os.getloadavg()[0]:.1f} |")
    if cut:
        print()
        print("| round | cuts in the master | its LP value (proven) | best bound so far | columns added | seconds |")
        print("|---|---|---|---|---|---|")
        for q, (ncuts, value, bound, _proven, added, secs) in enumerate(cut["rounds"]):
            print(f"| {q} | {ncuts} | {value * pct:.4f} | {bound * pct:.4f} | {added} | {secs:.1f} |")
        print()
        print("LP solves", cut.get("lp_solves"), f"({cut.get('lp_seconds')} s);", "pricing rounds",
              cut.get("pricing_rounds"), f"({cut.get('pricing_seconds')} s);", "separation",
              f"{cut.get('separation_seconds')} s;", "B&B nodes", cut.get("bb_nodes"))
    print()
    for phase, a, b, end in info.get("phases", []):
        print(f"phase {phase}: {a:.1f} -> {b:.1f} (deadline {end})")
    print("message:", res.message)


if __name__ == "__main__":
    main(sys.argv[1:])
