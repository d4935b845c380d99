"""Cold start: the first call after installing against the same call once everything it
loads is in place, on 2 cores.

Two kinds of install:

* **built**: the kernels the blocked path uses (MDAV's rounds, the repair sweeps) compiled
  when the package was built (``pip install .``; :mod:`pysdcmicro._aot`). Kernels outside
  them (``auto``'s ICSM) are compiled by numba at first use.
* **JIT**: every kernel compiled by numba at first use (``PYSDCMICRO_NO_AOT=1``: as an
  install where the build could not compile them).

Cells: the default call ``microaggregate(X, 5)`` (no time limit) on Gaussian data
(``numpy.random.default_rng(0).standard_normal``): 10^5 x 10 (the blocked path: MDAV per
block and the repair sweeps, in worker processes), 5000 x 10 (``auto``: ICSM), and MDAV on
Tarragona (834 x 13), all with ``rng=0``. Each run is a fresh process
(``python -m benchmarks.suites.cold_start --cell ...``) that times the ``microaggregate``
call (importing pysdcmicro before it is not counted). For each cell and install a new empty
``NUMBA_CACHE_DIR``: the first run is the cold one, then ``--warm`` runs with that cache (the
table gives their median). "kernels" says what served the call: the built kernels (and
whether the calling process imported numba all the same), numba's, or numpy alone (MDAV's
first small call in a process without the built kernels). Target (10^5 x 10, built): cold at most 2x
warm. The built rows need the extension in the running Python's environment, built from
this source tree (``pip install .`` there); otherwise they say so.

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
    from pysdcmicro import _aot

    return {"wall": wall, "information_loss": res.information_loss, "valid": bool(sizes.min() >= cell["k"]),
            "built": _aot.family("mdav") is not None, "numba_imported": "numba" in sys.modules}


def _spawn(cell: dict, cache: str, install: str) -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYSDCMICRO_NO_AOT": "1" if install == "JIT" else ""}
    proc = subprocess.run([sys.executable, "-m", "benchmarks.suites.cold_start", "--cell", json.dumps(cell)],
                          cwd=HERE.parent, capture_output=True, text=True, timeout=900, env=env)
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["failed"])[-1][:160]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


HEADER = ("| data | n x d | k | method | install | kernels | cold s | warm s (median) | cold / warm | target "
          "| IL cold = warm | k-partition |")
INSTALLS = ("built", "JIT")


def _kernels(run: dict) -> str:
    if run["built"]:
        return "built" + (", numba imported" if run["numba_imported"] else "")
    return "numba JIT" if run["numba_imported"] else "numpy (numba not imported)"


def _row(cell: dict, install: str, cold: dict, warm: list) -> str:
    head = f"| {cell['data']} | {cell['n']}x{cell['d']} | {cell['k']} | {cell['method']} | {install} |"
    runs = [cold, *warm]
    if any("error" in r for r in runs):
        return head + f" | ERROR: {next(r['error'] for r in runs if 'error' in r)} | | | | | |"
    if install == "built" and not cold["built"]:
        return head + " not available (build the package here: pip install .) | | | | | | |"
    w = statistics.median(r["wall"] for r in warm)
    ratio = cold["wall"] / w
    target = "" if cell["target"] is None or install != "built" else (
        f"<= {cell['target']:g}x: {'yes' if ratio <= cell['target'] else 'no'}")
    same = all(r["information_loss"] == cold["information_loss"] for r in warm)
    return (head + f" {_kernels(cold)} | {cold['wall']:.2f} | {w:.2f} | {ratio:.2f} | {target} | "
            f"{'yes' if same else 'NO'} ({cold['information_loss']:.6f}) | "
            f"{'yes' if all(r['valid'] for r in runs) else 'NO'} |")


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
    lines = [HEADER, "|" + "---|" * 12]
    print(HEADER, flush=True)
    records = []
    for cell in CELLS:
        if keep and cell["method"] not in keep:
            continue
        for install in INSTALLS:
            with tempfile.TemporaryDirectory(prefix="pysdcmicro-numba-") as cache:
                cold = _spawn(cell, cache, install)
                warm = [_spawn(cell, cache, install) for _ in range(args.warm)]
            row = _row(cell, install, cold, warm)
            print(row, flush=True)
            lines.append(row)
            records.append({"cell": cell, "install": install, "cold": cold, "warm": warm,
                            "loadavg_after": [round(v, 2) for v in os.getloadavg()]})
    if not (args.no_write or keep):
        write_results("cold_start", __doc__, f"python -m benchmarks.suites.cold_start --warm {args.warm}", lines, records)
    return 0


if __name__ == "__main__":
    sys.exit(main())
