"""Cold start: the first call after installing (numba's on-disk cache empty, so its kernels
are compiled) against the same call once the cache is filled, on 2 cores.

Cells: the default call ``microaggregate(X, 5)`` (no time limit) on Gaussian data
(``numpy.random.default_rng(0).standard_normal``): 10^5 x 10 (the blocked path: MDAV per
block and the repair sweeps, in worker processes), 5000 x 10 (``auto``: ICSM), and MDAV on
Tarragona (834 x 13), all with ``rng=0``. Each run is a fresh process
(``python -m benchmarks.suites.cold_start --cell ...``) that times the ``microaggregate``
call (importing pysdcmicro before it is not counted). For each cell a new empty ``NUMBA_CACHE_DIR``:
the first run is the cold one, then ``--warm`` runs with that cache (the table gives their
median). Target (10^5 x 10): cold at most 2x warm.

``python -m benchmarks --suite cold_start`` or ``python -m benchmarks.suites.cold_start``
[``--warm N``] [``--no-write``] writes ``results/cold_start.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.suites._results import write_results

HERE = Path(__file__).resolve().parents[1]

#: The generic runner's case list is not used: this suite writes its own table (``main``).
CASES: list = []

CELLS = [
    {"data": "gaussian", "n": 100_000, "d": 10, "k": 5, "method": "auto", "target": 2.0},
    {"data": "gaussian", "n": 5000, "d": 10, "k": 5, "method": "auto", "target": None},
    {"data": "tarragona", "n": 834, "d": 13, "k": 3, "method": "mdav", "target": None},
]


def run_cell(cell: dict) -> dict:
    import time

    import numpy as np

    if cell["data"] == "tarragona":
        from pysdcmicro.datasets import load_casc

        folder = os.environ.get("PYSDCMICRO_CASC_DIR") or str(HERE.parents[1] / "shared" / "data")
        X = load_casc("tarragona", data_dir=folder)
    else:
        X = np.random.default_rng(0).standard_normal((cell["n"], cell["d"]))
    import pysdcmicro
    from pysdcmicro import _api  # noqa: F401  (the package's lazy import, not counted)

    t0 = time.perf_counter()
    res = pysdcmicro.microaggregate(X, cell["k"], method=cell["method"], rng=0)
    wall = time.perf_counter() - t0
    sizes = np.bincount(np.unique(res.labels, return_inverse=True)[1])
    return {"wall": wall, "information_loss": res.information_loss, "valid": bool(sizes.min() >= cell["k"])}


def _spawn(cell: dict, cache: str) -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    proc = subprocess.run([sys.executable, "-m", "benchmarks.suites.cold_start", "--cell", json.dumps(cell)],
                          cwd=HERE.parent, capture_output=True, text=True, timeout=900, env=env)
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["failed"])[-1][:160]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


HEADER = "| data | n x d | k | method | cold s | warm s (median) | cold / warm | target | IL cold = warm | k-partition |"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.suites.cold_start")
    parser.add_argument("--cell", help=argparse.SUPPRESS)
    parser.add_argument("--warm", type=int, default=3, help="warm runs per cell (default 3)")
    parser.add_argument("--methods", help="comma-separated filter")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    if args.cell:
        print(json.dumps(run_cell(json.loads(args.cell))), flush=True)
        return 0
    keep = set(args.methods.split(",")) if args.methods else None
    lines = [HEADER, "|" + "---|" * 10]
    print(HEADER, flush=True)
    records = []
    for cell in CELLS:
        if keep and cell["method"] not in keep:
            continue
        with tempfile.TemporaryDirectory(prefix="pysdcmicro-numba-") as cache:
            cold = _spawn(cell, cache)
            warm = [_spawn(cell, cache) for _ in range(args.warm)]
        runs = [cold, *warm]
        if any("error" in r for r in runs):
            row = (f"| {cell['data']} | {cell['n']}x{cell['d']} | {cell['k']} | {cell['method']} | "
                   f"ERROR: {next(r['error'] for r in runs if 'error' in r)} | | | | | |")
        else:
            w = statistics.median(r["wall"] for r in warm)
            ratio = cold["wall"] / w
            target = "" if cell["target"] is None else (
                f"<= {cell['target']:g}x: {'yes' if ratio <= cell['target'] else 'no'}")
            same = all(r["information_loss"] == cold["information_loss"] for r in warm)
            row = (f"| {cell['data']} | {cell['n']}x{cell['d']} | {cell['k']} | {cell['method']} | {cold['wall']:.2f} | "
                   f"{w:.2f} | {ratio:.2f} | {target} | {'yes' if same else 'NO'} ({cold['information_loss']:.6f}) | "
                   f"{'yes' if all(r['valid'] for r in runs) else 'NO'} |")
        print(row, flush=True)
        lines.append(row)
        records.append({"cell": cell, "cold": cold, "warm": warm,
                        "loadavg_after": [round(v, 2) for v in os.getloadavg()]})
    if not (args.no_write or keep):
        write_results("cold_start", __doc__, f"python -m benchmarks.suites.cold_start --warm {args.warm}", lines, records)
    return 0


if __name__ == "__main__":
    sys.exit(main())
