"""Optimal univariate grouping along orderings: C-MHM (`tsp-mhm`) and
Compress-TSP-MHM (`compress-tsp-mhm`, c = 2..5) on the CASC sets, against Maya-Lopez,
Martinez-Balleste and Casino (2022, shared/papers/001), Tables 1-4, whose paths come from
Concorde (optimal): lengths Census 1173.23, Tarragona 772.62, EIA 740.69 on the
standardized data. "path=" is the Euclidean length of the order grouped along (with
`select=sse`, the path among the search's checkpoints whose grouping has the least SSE;
`select=length` rows show the shortest path found). Rows with `seeds` report the median
IL and the min..max over seeds 0, 1, 2. Baselines: MHM along the MDAV, NPN and
first-principal-component orders; OR-Tools' guided local search (`solver=ortools`, its
default time budget max(1, n/100) s). Compress-TSP-MHM decompresses with our default
within-group order (`within=path`, along the path); rows marked "paper's within-group rule"
use the paper's (`within=centroid`: ascending distance to the data set's centroid).

The IL-versus-seconds trade-off table for c = 1..5 (c = 1 is C-MHM) follows the main
table; it is written by `python -m benchmarks.suites.univariate` from
`results/univariate.json`. The paper's seconds (Table 1) are for the TSP step alone, in R
with Concorde on a 4 x 2.2 GHz Core i7; ours are the whole call.
"""

from __future__ import annotations

DATASETS = ("census", "tarragona", "eia")
KS = (3, 5, 10)
SEEDS = [0, 1, 2]

#: Concorde path lengths (c = 1) and decompressed path lengths of Cc-C-MHM, Tables 2-4.
PAPER_PATH = {
    "census": {1: 1173.23, 2: 1308.05, 3: 1531.64, 4: 1607.55, 5: 1689.13},
    "tarragona": {1: 772.62, 2: 885.02, 3: 990.96, 4: 1020.69, 5: 1068.95},
    "eia": {1: 740.69, 2: 928.97, 3: 992.1, 4: 1049.04, 5: 1271.74},
}
#: Seconds of the TSP step, Table 1.
PAPER_SECONDS = {
    "census": {1: 6.58, 2: 1.81, 3: 0.9, 4: 0.56, 5: 0.39},
    "tarragona": {1: 4.75, 2: 1.71, 3: 0.89, 4: 0.6, 5: 0.44},
    "eia": {1: 75.26, 2: 18.28, 3: 8.05, 4: 4.97, 5: 3.19},
}

CASES = []
for _ds in DATASETS:
    for _k in KS:
        CASES.append({"dataset": _ds, "k": _k, "method": "tsp-mhm", "seeds": SEEDS, "reference": "C-MHM",
                      "label": "tsp-mhm (C-MHM)"})
        for _c in (2, 3, 4, 5):
            CASES.append({"dataset": _ds, "k": _k, "method": "compress-tsp-mhm", "options": {"compression": _c},
                          "seeds": SEEDS, "reference": f"C{_c}-C-MHM", "label": f"compress-tsp-mhm (C{_c}-C-MHM)"})
    for _k in KS:
        CASES.append({"dataset": _ds, "k": _k, "method": "tsp-mhm", "options": {"select": "length"},
                      "seeds": SEEDS, "reference": "C-MHM", "label": "tsp-mhm, shortest path"})
        CASES.append({"dataset": _ds, "k": _k, "method": "tsp-mhm", "options": {"circular": True},
                      "seeds": [0], "reference": "C-MHM", "label": "tsp-mhm circular"})
    for _k in KS:
        for _c in (2, 3, 4, 5):
            CASES.append({"dataset": _ds, "k": _k, "method": "compress-tsp-mhm",
                          "options": {"compression": _c, "within": "centroid"}, "seeds": [0],
                          "reference": f"C{_c}-C-MHM", "label": f"compress-tsp-mhm, paper's within-group rule"})
    CASES.append({"dataset": _ds, "k": 3, "method": "tsp-mhm", "options": {"solver": "ortools"},
                  "seeds": [0], "reference": "C-MHM", "label": "tsp-mhm, OR-Tools GLS"})
    for _k in KS:
        for _ordering in ("mdav", "npn", "pca"):
            CASES.append({"dataset": _ds, "k": _k, "method": "mhm", "options": {"ordering": _ordering},
                          "seeds": [0], "label": f"mhm ({_ordering} order)"})


def tradeoff_table(records: list) -> str:
    """Markdown table: per data set and c = 1..5, median path length, seconds and IL
    (k = 3, 5, 10) of ours next to the paper's."""
    import statistics

    rows = {}
    for rec in records:
        case = rec["case"]
        if case.get("options", {}).get("select") or case.get("options", {}).get("circular"):
            continue
        if case.get("options", {}).get("solver") or case.get("options", {}).get("within"):
            continue
        if case["method"] == "tsp-mhm":
            c = 1
        elif case["method"] == "compress-tsp-mhm":
            c = case["options"]["compression"]
        else:
            continue
        ok = [r for r in rec["runs"] if "error" not in r]
        if not ok:
            continue
        cell = rows.setdefault((case["dataset"], c), {"il": {}, "ref": {}, "sec": [], "path": []})
        cell["il"][case["k"]] = statistics.median(r["information_loss"] for r in ok)
        cell["ref"][case["k"]] = rec["reference"][0] if rec["reference"] else None
        cell["sec"].extend(r["seconds"] for r in ok)
        cell["path"].extend(r["info"].get("path_length") for r in ok if r.get("info"))
    lines = ["| data set | c | path (ours, median) | path (paper) | seconds (ours, median of k, seeds) | "
             "TSP seconds (paper) | IL k=3 ours / paper | IL k=5 ours / paper | IL k=10 ours / paper |",
             "|---|---|---|---|---|---|---|---|---|"]
    for ds in DATASETS:
        for c in range(1, 6):
            cell = rows.get((ds, c))
            if not cell:
                continue
            ils = " | ".join(
                f"{cell['il'][k]:.3f} / {cell['ref'][k]:.3f}" if k in cell["il"] and cell["ref"].get(k) is not None
                else "" for k in KS)
            path = statistics.median(p for p in cell["path"] if p is not None) if cell["path"] else float("nan")
            lines.append(f"| {ds} | {c} | {path:.2f} | {PAPER_PATH[ds][c]:.2f} | "
                         f"{statistics.median(cell['sec']):.2f} | {PAPER_SECONDS[ds][c]:.2f} | {ils} |")
    return "\n".join(lines) + "\n"


def _main_tradeoff():
    import json
    from pathlib import Path

    here = Path(__file__).resolve().parents[1] / "results"
    records = json.loads((here / "univariate.json").read_text())
    md = (here / "univariate.md").read_text()
    head = "\n## IL versus seconds, compression c = 1..5\n"
    tail = ""
    if head in md:  # keep the sections after this one (the kernel table)
        before, after = md.split(head, 1)
        nxt = after.find("\n## ")
        tail = after[nxt:] if nxt >= 0 else ""
        md = before
    md = md.rstrip("\n") + "\n" + head + "\n" + tradeoff_table(records) + tail
    (here / "univariate.md").write_text(md)
    print(tradeoff_table(records))


def _main_kernel(ns):
    """Run the 1-D kernel rows, keep them in results/univariate.kernel.json and put their
    table in results/univariate.md (section "Optimal univariate grouping kernel")."""
    import datetime
    import json
    import platform
    from pathlib import Path

    here = Path(__file__).resolve().parents[1] / "results"
    rows = run_kernel(ns)
    (here / "univariate.kernel.json").write_text(json.dumps(rows, indent=1) + "\n")
    head = "\n## Optimal univariate grouping kernel\n"
    note = (f"\n`python -m benchmarks.suites.univariate --kernel` on "
            f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC ({platform.machine()}, 2 cores, "
            "system load in the last column). Sorted N(0,1) data (seed 0), k = 5, "
            "1-D; each method in a fresh process, best of 3 calls (1 at 10^7), compile time excluded "
            "(numba caches it on disk); peak MiB = resident memory above the process after making the "
            "data and compiling. SSE recomputed from each partition in extended precision. `ours` = the compiled "
            "kernel (numba), `ours-numpy` = the same DP without numba; microagg1d 0.4.0 from PyPI.\n\n")
    md = (here / "univariate.md").read_text()
    tail = ""
    if head in md:
        before, after = md.split(head, 1)
        nxt = after.find("\n## ")
        tail = after[nxt:] if nxt >= 0 else ""
        md = before
    md = md.rstrip("\n") + "\n" + head + note + kernel_table(rows) + tail
    (here / "univariate.md").write_text(md)
    print(kernel_table(rows))


# --------------------------------------------------------------------------- 1-D kernel
#: The optimal univariate grouping kernel alone, 1-D sorted Gaussian data, k = 5, next to
#: microagg1d (PyPI, numba; benchmark-only, not a dependency) in the same run.
KERNEL_NS = (10**4, 10**5, 10**6, 10**7)


def _kernel_task(n: int, k: int, method: str, reps: int) -> dict:
    """Run in a fresh process: time one method on sorted N(0,1) data (seed 0), peak RSS above
    the baseline after making the data."""
    import resource
    import time

    import numpy as np

    x = np.sort(np.random.default_rng(0).normal(size=n))
    if method.startswith("microagg1d"):
        from microagg1d import univariate_microaggregation as ua

        algo = method.split(":")[1]
        fn = lambda: ua(x, k, method=algo)  # noqa: E731
        ua(x[:1000], k, method=algo)  # compile outside the timing
    else:
        import os

        if method == "ours-numpy":
            os.environ["PYSDCMICRO_NO_NUMBA"] = "1"
        from pysdcmicro.univariate import _hansen_mukherjee as hm

        Z = x[:, None]
        order = np.arange(n)
        if method == "ours":
            hm.optimal_runs(Z[:1000], order[:1000], k)
            hm._COMPILED_MIN_WORK = 0
            hm.optimal_runs(Z[:1000], order[:1000], k)  # compile / load the cache outside the timing
        fn = lambda: hm.optimal_runs(Z, order, k)[0]  # noqa: E731
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # after data, imports and compiling
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        labels = np.asarray(fn())
        times.append(time.perf_counter() - t0)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # group sizes along the sorted order (every method returns runs of the sorted data)
    _, first, counts = np.unique(labels, return_index=True, return_counts=True)
    runs = counts[np.argsort(first)]
    xl = x.astype(np.longdouble)
    starts = np.concatenate([[0], np.cumsum(runs)[:-1]])
    sums = np.add.reduceat(xl, starts)
    means = np.repeat(sums / runs, runs)
    sse = float(((xl - means) ** 2).sum())
    return {"n": n, "k": k, "method": method, "seconds": min(times), "reps": reps,
            "peak_mib": (peak - base) / 1024.0, "sse": sse, "min_size": int(runs.min()),
            "max_size": int(runs.max())}


def _reference_task(n: int, k: int) -> dict:
    """Exact-cost reference: every run's cost two-pass in extended precision, then the DP."""
    import numpy as np

    from pysdcmicro.univariate import _hansen_mukherjee as hm

    x = np.sort(np.random.default_rng(0).normal(size=n)).astype(np.longdouble)
    C = np.full((k, n + 1), np.inf)
    for s in range(k, 2 * k):
        for a in range(0, n - s + 1, 1 << 18):
            b = min(a + (1 << 18), n - s + 1)
            W = np.lib.stride_tricks.sliding_window_view(x[a:b + s - 1], s)
            C[s - k, a + s:b + s] = ((W - W.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    _, runs = hm._linear(C, n, k)
    starts = np.concatenate([[0], np.cumsum(runs)[:-1]])
    means = np.repeat(np.add.reduceat(x, starts) / runs, runs)
    return {"n": n, "k": k, "method": "exact-cost reference", "sse": float(((x - means) ** 2).sum())}


def run_kernel(ns=KERNEL_NS, k: int = 5) -> list:
    import multiprocessing as mp
    import os
    from concurrent.futures import ProcessPoolExecutor

    rows = []
    ctx = mp.get_context("spawn")
    for n in ns:
        methods = ["ours", "microagg1d:staggered", "microagg1d:simple"] + (["ours-numpy"] if n <= 10**5 else [])
        for method in methods:
            with ProcessPoolExecutor(1, mp_context=ctx) as ex:
                row = ex.submit(_kernel_task, n, k, method, 3 if n <= 10**6 else 1).result()
            row["load"] = os.getloadavg()[0]
            rows.append(row)
            print(row, flush=True)
        if n <= 10**6:
            with ProcessPoolExecutor(1, mp_context=ctx) as ex:
                rows.append(ex.submit(_reference_task, n, k).result())
            print(rows[-1], flush=True)
    return rows


def kernel_table(rows: list) -> str:
    import math

    by_n = {}
    for r in rows:
        by_n.setdefault(r["n"], {})[r["method"]] = r
    lines = ["| n | method | seconds | peak MiB | SSE | SSE / reference - 1 | reference | load (1 min) |",
             "|---|---|---|---|---|---|---|---|"]
    for n, cell in sorted(by_n.items()):
        ref = cell.get("exact-cost reference")
        refname = "exact-cost DP (extended precision)"
        if ref is None:
            ref, refname = cell.get("microagg1d:staggered"), "microagg1d staggered (exact)"
        for name in ("ours", "ours-numpy", "microagg1d:staggered", "microagg1d:simple"):
            r = cell.get(name)
            if r is None:
                continue
            rel = r["sse"] / ref["sse"] - 1 if ref else float("nan")
            lines.append(f"| {n:.0e} | {name} | {r['seconds']:.4f} | {r['peak_mib']:.1f} | {r['sse']:.10e} | "
                         f"{rel:+.1e} | {refname} | {r['load']:.1f} |")
    ours = [(n, c["ours"]["seconds"]) for n, c in sorted(by_n.items()) if "ours" in c]
    if len(ours) >= 2:
        import numpy as np

        slope = np.polyfit([math.log(n) for n, _ in ours], [math.log(t) for _, t in ours], 1)[0]
        lines.append(f"\nFitted growth of ours (seconds ~ n^a over n = {ours[0][0]:.0e}..{ours[-1][0]:.0e}): "
                     f"a = {slope:.2f}.")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    import sys

    if "--kernel" in sys.argv:
        ns = [int(float(a)) for a in sys.argv[sys.argv.index("--kernel") + 1:]] or list(KERNEL_NS)
        _main_kernel(ns)
    else:  # append the trade-off table to results/univariate.md
        _main_tradeoff()
