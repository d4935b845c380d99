"""What missing values cost: IL and seconds of MDAV and ICSM (one run from
MDAV, seed 0, at most 60 s) at k = 3 on the three CASC sets with 0 %, 5 % and 20 % of the
cells missing (every cell of every column independently, ``NAME@missing:SHARE:0``),
microaggregated with ``missing="keep"``: the partition is built on z-scores where a
missing cell is imputed by iterated least-squares predictions from the other columns
(never released); each group releases the mean over its members
observed in the column; IL = 100 SSE / SST on the observed cells only (z-scores from the
observed values), so rows at different shares are not losses of the same cells. No
published reference exists for these cells."""

CASES = []
for _dataset in ("tarragona", "census", "eia"):
    for _share in (0.0, 0.05, 0.20):
        _name = _dataset if _share == 0 else f"{_dataset}@missing:{_share}:0"
        CASES.append({"dataset": _name, "k": 3, "method": "mdav"})
        CASES.append({"dataset": _name, "k": 3, "method": "icsm", "seed": 0, "time_limit": 60.0})
