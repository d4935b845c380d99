"""Column generation with certified lower bounds, and the decomposition heuristic.

(a) certified gaps: column generation run to convergence with exact (anchored) pricing on
random subsets of 60-150 records of each CASC set (``NAME@sub:N:SEED``), k = 3 and 5; the
LB column is the proven lower bound (IL %), the gap is (IL - LB) / IL in percent.
(b) decomposition (Castro, Gentile, Spagnolo-Arrizabalaga, PSD 2022, Sect. 2) against their
Table 5 (reference), with the number of subsets s of their best run (Tables 1 and 3).
(c) global lower bounds on the full sets, k = 3, 5, 10, within 30 minutes per cell.
(d) branch-and-bound pricing with and without dual smoothing (30 minutes per cell).
(g) the record ascent at k = 10 (30 minutes per cell).
"""

CASES = []
# (a) certified gaps on subsets.
for dataset in ("tarragona", "census", "eia"):
    for size in (60, 100, 150):
        for k in (3, 5):
            CASES.append({"dataset": f"{dataset}@sub:{size}:1", "k": k, "method": "column-generation",
                          "options": {"mip_time": 60.0}, "time_limit": 240, "seed": 0,
                          "label": "column-generation (a)"})
# (b) decomposition vs Castro et al. 2022 Table 5 (s of their best run).
BEST_S = {("tarragona", 3): 2, ("tarragona", 5): 5, ("tarragona", 10): 10,
          ("census", 3): 2, ("census", 5): 5, ("census", 10): 20}
for (dataset, k), s in BEST_S.items():
    CASES.append({"dataset": dataset, "k": k, "method": "decomposition", "options": {"s": s},
                  "time_limit": 1800, "seed": 0, "reference": "Castro 2022 decomposition",
                  "label": "decomposition (b)"})
# (c) global lower bounds on the full sets, 30 minutes per cell.
for dataset in ("tarragona", "census", "eia"):
    for k in (3, 5, 10):
        CASES.append({"dataset": dataset, "k": k, "method": "column-generation",
                      "options": {"mip_time": 300.0}, "time_limit": 1800, "seed": 0,
                      "label": "column-generation (c)"})
# (d) branch-and-bound pricing, with and without Wentges smoothing, 30 minutes per cell
# (shorter ad-hoc runs: --time-limit, which never writes results/).
for dataset, k in (("census", 5), ("tarragona", 5), ("tarragona", 10)):
    for smoothing in (0.0, 0.5):
        CASES.append({"dataset": dataset, "k": k, "method": "column-generation",
                      "options": {"mip_time": 300.0, "smoothing": smoothing}, "time_limit": 1800,
                      "seed": 0, "label": "column-generation (d)"})
# (g) the record ascent (per-record Lagrangian from truncated pricing) at k = 10,
# 30 minutes per cell, most of the reserve to the ascent (the loop proves nothing at k = 10).
for dataset in ("tarragona", "census", "eia"):
    CASES.append({"dataset": dataset, "k": 10, "method": "column-generation",
                  "options": {"mip_time": 300.0, "ascent_share": 0.6}, "time_limit": 1800,
                  "seed": 0, "label": "column-generation (g)"})
