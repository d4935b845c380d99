"""One column-generation cell with its phase timestamps (issue 16: time limits honoured).

    python -m benchmarks.colgen_phases DATASET K TIME_LIMIT ['{"option": value}']

Runs ``microaggregate(data, K, method="column-generation", rng=0, time_limit=TIME_LIMIT)``
on the data as ``benchmarks._run_cell.load_dataset`` loads it and prints a table row (IL,
bound, source, wall and CPU seconds of the call, overrun past the limit, peak RSS, the
record ascent's steps) and the phase table from ``info["phases"]`` / ``info["steps"]``.
To reproduce CPU starvation without a CPU hog, run it under ``benchmarks/starve.sh``.
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
    t0, c0 = time.monotonic(), time.process_time()
    res = pysdcmicro.microaggregate(data, k, method="column-generation", rng=0, time_limit=limit,
                                    variables=list(data.columns), **options)
    wall, cpu = time.monotonic() - t0, time.process_time() - c0
    info = res.info
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    steps = info.get("record_ascent") or []
    print("| data set | k | limit s | IL | LB | bound source | wall s | over s | CPU s | peak MiB | ascent steps (bound SSE, nodes, complete) | load 1-min |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    print(f"| {name} | {k} | {limit:g} | {res.information_loss:.4f} | {res.lower_bound:.4f} | "
          f"{info.get('bound_source')} | {wall:.1f} | {wall - limit:+.1f} | {cpu:.1f} | {peak:.0f} | "
          f"{'; '.join(f'{b:.1f}, {n}, {c}' for b, n, c in steps) or '-'} | {os.getloadavg()[0]:.1f} |")
    print()
    print("| phase | start s | end s | deadline s | past it s |")
    print("|---|---|---|---|---|")
    for phase, a, b, end in info.get("phases", []):
        past = "-" if end is None else f"{max(0.0, b - end):.1f}"
        print(f"| {phase} | {a:.1f} | {b:.1f} | {'-' if end is None else f'{end:.1f}'} | {past} |")
    for step, (count, seconds, worst) in info.get("steps", {}).items():
        print(f"| {step} (x{count}) | | {seconds:.1f} in all | | {worst:.1f} (worst) |")
    print()
    print("message:", res.message)


if __name__ == "__main__":
    main(sys.argv[1:])
