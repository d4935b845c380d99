"""The default call, `microaggregate(X, k)` without a time limit, on data it was not tuned on.

`auto` without a time limit does a fixed amount of work, counted in operations (see
`pysdcmicro.optimization.AutoPlan`), so its cost is bounded on every input: the rows
give its seconds and IL on the CASC sets, on real data that ships with statsmodels (ANES
1996 944 x 11, Fair's affairs 6366 x 9, RAND HIE 20190 x 10, all numeric columns) and on
Gaussian data of 5000 to 20 000 records, with MDAV + two-swap (the published baseline)
next to it up to 5000 records. Targets on 2 cores: at most 5 s up to 5000 records and 30
columns, at most 2 s per 1000 records above.

Every row is one process started by the runner (`benchmarks/_run_cell.py`, numba's cache
already filled); seconds are the wall time of the `microaggregate` call."""

CASES = []
_SMALL = [("tarragona", 3), ("tarragona", 5), ("census", 3), ("census", 5), ("eia", 3), ("eia", 5),
          ("eia", 10), ("statsmodels:anes96", 3), ("synthetic:gaussian:5000:10", 5),
          ("synthetic:gaussian:5000:30", 3), ("synthetic:clustered:5000:10", 5)]
for dataset, k in _SMALL:
    CASES.append({"dataset": dataset, "k": k, "method": "mdav", "improve": "two-swap", "seed": 0,
                  "label": "mdav + two-swap"})
    CASES.append({"dataset": dataset, "k": k, "method": "auto", "seed": 0, "label": "auto (no limit)"})
for dataset, k in [("statsmodels:fair", 3), ("statsmodels:fair", 5), ("synthetic:gaussian:10000:10", 5),
                   ("statsmodels:randhie", 3), ("synthetic:gaussian:20000:10", 5)]:
    CASES.append({"dataset": dataset, "k": k, "method": "auto", "seed": 0, "label": "auto (no limit)"})
