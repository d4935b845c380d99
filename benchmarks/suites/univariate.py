"""Optimal univariate grouping along orderings (issue 3): C-MHM (`tsp-mhm`) and
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


if __name__ == "__main__":  # append the trade-off table to results/univariate.md
    import json
    from pathlib import Path

    here = Path(__file__).resolve().parents[1] / "results"
    records = json.loads((here / "univariate.json").read_text())
    md = (here / "univariate.md").read_text()
    head = "\n## IL versus seconds, compression c = 1..5\n"
    md = md.split(head)[0].rstrip("\n") + "\n" + head + "\n" + tradeoff_table(records)
    (here / "univariate.md").write_text(md)
    print(tradeoff_table(records))
