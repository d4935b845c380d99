"""Time limits: the wall time of a call with ``time_limit=T`` against the target
``1.05 T + 0.5`` s, for every registered method at T = 1, 5 and 20 s on Gaussian data
(8000 x 6, ``numpy.random.default_rng(0).standard_normal``, k = 3, ``rng=0``), and for the
blocked large-data path (MDAV in blocks, the default at this size) on 2 x 10^5 x 6 Gaussian
data with 5 s.

Each cell is a fresh process (``python -m benchmarks.suites.time_limits --cell ...``), so
what a user's call pays on its first use in a process (imports inside the call, loading
kernels) is in the wall time. The kernels are those the running Python's environment has:
the ones compiled when the package was built (:mod:`pysdcmicro._aot`; MDAV's rounds, the
repair sweeps, ICSM, the circular DP, two-swap) where that environment has them, and the
others from numba's on-disk cache (``cache=True``), as on every run after a package's first.
The ``cold`` column, where present, is the same cell with an empty numba cache
(``NUMBA_CACHE_DIR`` a new folder): the very first call after installing, numba's compiling
included. The page's header says whether the built kernels were there. Wall = seconds of the
``microaggregate`` call; overshoot = wall - T; "within" = wall <= 1.05 T + 0.5. Every
result is checked to be a k-partition (every group at least k records).

``python -m benchmarks --suite time_limits`` or ``python -m benchmarks.suites.time_limits``
[``--methods a,b``] [``--limits 1,5``] [``--cold``] [``--no-write``] runs the table and
writes ``results/time_limits.md`` and ``.json`` (not with a filter or ``--no-write``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.suites._results import write_results

HERE = Path(__file__).resolve().parents[1]
LIMITS = (1.0, 5.0, 20.0)
N, D, K, SEED = 8000, 6, 3, 0
LARGE_N, LARGE_LIMIT = 200_000, 5.0

#: The generic runner's case list is not used: this suite writes its own table (``main``).
CASES: list = []


def target(limit: float) -> float:
    """The wall time a call with ``time_limit=limit`` must stay within."""
    return 1.05 * limit + 0.5


def methods() -> list[str]:
    from pysdcmicro._methods import all_methods  # imports (so registers) every method

    return list(all_methods())


def cells(method_filter=None, limit_filter=None) -> list[dict]:
    out = []
    for name in methods():
        if method_filter and name not in method_filter:
            continue
        for limit in LIMITS:
            if limit_filter and limit not in limit_filter:
                continue
            out.append({"method": name, "n": N, "d": D, "k": K, "time_limit": limit, "path": "whole data"})
    if (not method_filter or "mdav" in method_filter) and (not limit_filter or LARGE_LIMIT in limit_filter):
        out.append({"method": "mdav", "n": LARGE_N, "d": D, "k": K, "time_limit": LARGE_LIMIT,
                    "path": "blocked (default at this n)"})
    return out


def run_cell(cell: dict) -> dict:
    """One call, in this process: wall time, IL, status, and the k-partition check."""
    import time

    import numpy as np

    from pysdcmicro import microaggregate  # the import is the user's, before the call

    X = np.random.default_rng(SEED).standard_normal((cell["n"], cell["d"]))
    t0 = time.perf_counter()
    res = microaggregate(X, cell["k"], method=cell["method"], rng=SEED, time_limit=cell["time_limit"])
    wall = time.perf_counter() - t0
    sizes = np.bincount(np.unique(res.labels, return_inverse=True)[1])
    return {"wall": wall, "information_loss": res.information_loss, "status": res.status,
            "valid": bool(len(res.labels) == cell["n"] and sizes.min() >= cell["k"]),
            "message": res.message[:200], "blocks": res.info.get("blocks", {}).get("count")}


def _spawn(cell: dict, cold: bool) -> dict:
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "1")
    with tempfile.TemporaryDirectory(prefix="pysdcmicro-numba-") as cache:
        if cold:
            env["NUMBA_CACHE_DIR"] = cache
        budget = 3 * cell["time_limit"] + (600 if cold else 120)
        try:
            proc = subprocess.run([sys.executable, "-m", "benchmarks.suites.time_limits", "--cell", json.dumps(cell)],
                                  cwd=HERE.parent, capture_output=True, text=True, timeout=budget, env=env)
        except subprocess.TimeoutExpired:
            return {"error": f"no answer in {budget:g} s"}
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["failed"])[-1][:160]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _row(cell: dict, out: dict, cold: dict | None) -> str:
    limit = cell["time_limit"]
    size = f"{cell['n']}x{cell['d']}"
    if "error" in out:
        return f"| {cell['method']} | {cell['path']} | {size} | {limit:g} | | | | ERROR: {out['error']} | | |"
    within = "yes" if out["wall"] <= target(limit) else "no"
    cold_text = ""
    if cold is not None:
        cold_text = ("error" if "error" in cold else
                     f"{cold['wall']:.2f}" + ("" if cold["wall"] <= target(limit) else " (over: compile)"))
    valid = "yes" if out["valid"] else "NO"
    return (f"| {cell['method']} | {cell['path']} | {size} | {limit:g} | {out['wall']:.2f} | "
            f"{out['wall'] - limit:+.2f} | {within} | {out['information_loss']:.4f} | {out['status']}, "
            f"k-partition {valid} | {cold_text} |")


HEADER = ("| method | path | n x d | limit s | wall s | overshoot s | within 1.05 T + 0.5 | IL | status | "
          "cold cache wall s |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.suites.time_limits")
    parser.add_argument("--cell", help=argparse.SUPPRESS)
    parser.add_argument("--methods", help="comma-separated filter")
    parser.add_argument("--limits", help="comma-separated filter (seconds)")
    parser.add_argument("--cold", action="store_true", help="also run each 1-s cell with an empty numba cache")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    if args.cell:
        print(json.dumps(run_cell(json.loads(args.cell))), flush=True)
        return 0
    methods_f = set(args.methods.split(",")) if args.methods else None
    limits_f = {float(v) for v in args.limits.split(",")} if args.limits else None
    from pysdcmicro import _aot

    built = [f for f in _aot.EXPORTS if _aot.family(f) is not None]
    kernels = (f"Kernels compiled when the package was built: {', '.join(built)}." if built else
               "No kernels compiled when the package was built: numba compiles every kernel (cold column).")
    lines = [kernels, "", HEADER, "|" + "---|" * 10]
    print(kernels, HEADER, sep="\n", flush=True)
    records = []
    for cell in cells(methods_f, limits_f):
        out = _spawn(cell, cold=False)
        cold = _spawn(cell, cold=True) if args.cold and cell["time_limit"] == LIMITS[0] else None
        row = _row(cell, out, cold)
        print(row, flush=True)
        lines.append(row)
        records.append({"cell": cell, "result": out, "cold": cold,
                        "loadavg_after": [round(v, 2) for v in os.getloadavg()]})
    if not (args.no_write or methods_f or limits_f):
        write_results("time_limits", __doc__, f"python -m benchmarks.suites.time_limits{' --cold' if args.cold else ''}",
                      lines, records)
    return 0


if __name__ == "__main__":
    sys.exit(main())
