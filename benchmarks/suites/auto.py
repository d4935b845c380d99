"""Method `auto` with and without a time limit.

(a) `auto` with 1 s, 10 s and 60 s on Tarragona k=3, Census k=5, EIA k=3, against the
ICSM restart values of Mortazavi and Jalili (2015), Table 4.
(b) `auto` without a time limit (a fixed amount of work, deterministic for a seed) against
MDAV followed by two-swap, in the 12 CASC cells (k = 3, 4, 5, 10).

Every row is one process started by the runner (`benchmarks/_run_cell.py`); seconds are the
wall time of the `microaggregate` call."""

CASES = []
_TIMED = [("tarragona", 3), ("census", 5), ("eia", 3)]
for limit in (60, 10, 1):
    for dataset, k in _TIMED:
        CASES.append({"dataset": dataset, "k": k, "method": "auto", "time_limit": limit, "seed": 0,
                      "reference": "ICSM table 4", "label": f"auto ({limit} s)"})
for dataset in ("tarragona", "census", "eia"):
    for k in (3, 4, 5, 10):
        CASES.append({"dataset": dataset, "k": k, "method": "mdav", "improve": "two-swap", "seed": 0,
                      "label": "mdav + two-swap"})
        CASES.append({"dataset": dataset, "k": k, "method": "auto", "seed": 0, "reference": "ICSM table 4",
                      "label": "auto (no limit)"})
