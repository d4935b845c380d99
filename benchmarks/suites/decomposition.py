"""The decomposition heuristic against Castro, Gentile, Spagnolo-Arrizabalaga (PSD 2022),
Table 5, in short runs: 300 s per cell, one worker process (the machine has 2 cores), s of
the paper's best run (its Tables 1 and 3). Two variants of steps 3 and 7: two-swap, as in
the paper, and ICSM with restarts in the same steps. The paper needed 7 s to
86,000 s per run with CPLEX."""

from .colgen import BEST_S

CASES = []
for local_search in ("two-swap", "icsm-restarts"):
    for (dataset, k), s in BEST_S.items():
        CASES.append({"dataset": dataset, "k": k, "method": "decomposition",
                      "options": {"s": s, "local_search": local_search, "n_jobs": 1},
                      "time_limit": 300, "seed": 0, "reference": "Castro 2022 decomposition",
                      "label": f"decomposition ({local_search})"})
