"""Large data (issue 9): blocked MDAV with border repair (`pysdcmicro.large`) against
whole-data MDAV on synthetic data (`pysdcmicro.datasets.make_synthetic`, seed 0), 10
variables, k = 5. Whole-data MDAV is O(n^2 d / k): it runs at 10^4 and 10^5 records, not at
10^6. The blocked path: principal-axis blocks (default 10 000 records; 2 500 at n = 10^4 so
that there is more than one block), MDAV per block in 2 worker processes, then 2
border-repair passes of batched local search over windows of whole groups.

Targets (issue 9): 10^6 x 10 within 10 minutes and 4 GiB peak memory (this process plus the
workers) on the 2-core machine; at 10^5 the blocked IL no worse than whole-data MDAV's."""

CASES = []
for _kind in ("clustered", "uniform"):
    for _n in (10_000, 100_000, 1_000_000):
        _ds = f"synthetic:{_kind}:{_n}:10"
        if _n <= 100_000:
            CASES.append({"dataset": _ds, "k": 5, "method": "mdav", "kwargs": {"blocks": None},
                          "label": "mdav (whole data)"})
        _blocks = 2_500 if _n == 10_000 else "auto"
        CASES.append({"dataset": _ds, "k": 5, "method": "mdav",
                      "kwargs": {"blocks": {"size": _blocks}, "n_jobs": 2},
                      "label": "mdav blocked + repair"})


# --------------------------------------------------------------------------- issue 20: scale rows
#: ``python -m benchmarks.suites.large --scale N KIND BLOCKS``: one run in a fresh process
#: (so peak memory is its own), printed as one JSON line; ``--table`` turns the JSON lines of
#: results/large.scale.json into the Markdown section of results/large.md. The data are
#: ``make_synthetic(N, 10, kind=KIND, rng=0)`` (clustered: 200 clusters, the issue's
#: setting), k = 5, MDAV, rng = 0; BLOCKS = "none" (whole data) or "auto" (2 workers).
SCALE_HEAD = "\n## Scale rows (issue 20)\n"


def run_scale(n: int, kind: str, blocks: str) -> dict:
    import os
    import resource
    import time

    import numpy as np

    from pysdcmicro import microaggregate
    from pysdcmicro.datasets import make_synthetic

    X = make_synthetic(n, 10, kind=kind, rng=0, **({"n_clusters": 200} if kind == "clustered" else {}))
    extra = {"blocks": None} if blocks == "none" else {"blocks": "auto", "n_jobs": 2}
    load0 = os.getloadavg()[0]
    t0, c0 = time.perf_counter(), time.process_time()
    res = microaggregate(X, 5, method="mdav", rng=0, **extra)
    wall, cpu_main = time.perf_counter() - t0, time.process_time() - c0
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_children = ch.ru_utime + ch.ru_stime
    sizes = np.bincount(res.labels)
    mem = res.info.get("memory") or {}
    main_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    rep = res.info.get("repair") or {}
    return {"n": n, "kind": kind, "blocks": blocks, "wall": wall, "IL": res.information_loss,
            "IL_blocks": rep.get("information_loss_before"), "status": res.status, "min_size": int(sizes.min()),
            "cpu_main": cpu_main, "cpu_children": cpu_children,
            "utilisation": (cpu_main + cpu_children) / wall / 2, "load": [load0, os.getloadavg()[0]],
            "main_peak_mib": main_peak, "worker_peak_mib_total": mem.get("worker_peak_mib_total", 0.0)}


def scale_table(rows: list) -> str:
    lines = ["| n x d | data | path | wall s | CPU s (main + workers) | 2-core utilisation | load (start, end) | "
             "IL blocks -> final | min group | peak MiB (main + workers) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        il = f"{r['IL_blocks']:.4f} -> {r['IL']:.4f}" if r.get("IL_blocks") is not None else f"{r['IL']:.4f}"
        lines.append(
            f"| {r['n']:.0e} x 10 | {r['kind']} | {'whole-data MDAV' if r['blocks'] == 'none' else 'blocked, 2 workers'} | "
            f"{r['wall']:.1f} | {r['cpu_main']:.1f} + {r['cpu_children']:.1f} | {r['utilisation']:.2f} | "
            f"{r['load'][0]:.1f}, {r['load'][1]:.1f} | {il} | {r['min_size']} | "
            f"{r['main_peak_mib']:.0f} + {r['worker_peak_mib_total']:.0f} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    import json
    import sys
    from pathlib import Path

    here = Path(__file__).resolve().parents[1] / "results"
    if "--scale" in sys.argv:
        i = sys.argv.index("--scale")
        print(json.dumps(run_scale(int(float(sys.argv[i + 1])), sys.argv[i + 2], sys.argv[i + 3])), flush=True)
    elif "--table" in sys.argv:
        rows = json.loads((here / "large.scale.json").read_text())
        md = (here / "large.md").read_text().split(SCALE_HEAD)[0].rstrip("\n") + "\n"
        note = (Path(__file__).resolve().parents[1] / "results" / "large.scale.note.md")
        md += SCALE_HEAD + "\n" + (note.read_text() if note.exists() else "") + "\n" + scale_table(rows)
        (here / "large.md").write_text(md)
        print(scale_table(rows))
