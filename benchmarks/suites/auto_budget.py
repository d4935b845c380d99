"""Method `auto` against its time budget, one process per row.

(a) The budget table: Tarragona k=3, Census k=5, EIA k=3 with 1 s, 10 s and 60 s (three
seeds each: the median is the IL column, min..max next to it) and 600 s (one seed: two
hours of a 2-core machine already for the 12 cells below).
(b) `auto` with 600 s in every CASC cell (k = 3, 4, 5, 10), against the best published IL
(the reference column), with the proven lower bound (LB) next to it.

Run the rows one at a time on an otherwise idle machine: `auto` with a time limit uses
every core (worker processes)."""

CASES = []
_TIMED = [("tarragona", 3), ("census", 5), ("eia", 3)]
for limit in (1, 10, 60):
    for dataset, k in _TIMED:
        CASES.append({"dataset": dataset, "k": k, "method": "auto", "time_limit": limit, "seeds": [0, 1, 2],
                      "reference": "best", "label": f"auto ({limit} s)"})
for dataset, k in _TIMED + [(d, k) for d in ("tarragona", "census", "eia") for k in (3, 4, 5, 10)
                            if (d, k) not in _TIMED]:
    CASES.append({"dataset": dataset, "k": k, "method": "auto", "time_limit": 600, "seed": 0,
                  "reference": "best", "label": "auto (600 s)"})
