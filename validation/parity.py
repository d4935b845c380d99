"""Cell-for-cell parity of pysdcmicro with R's sdcMicro on random tie-heavy inputs.

Run it where R, rpy2 and the CRAN package sdcMicro are installed::

    python validation/parity.py --seeds 1000            # random inputs
    python validation/parity.py --seeds 200 --datasets  # plus Fair's affairs and RAND HIE
    python validation/parity.py --seeds 1000 --datasets --write-docs docs/guide/parity.md

Every function that pysdcmicro says equals an sdcMicro one is run on the same input by
both, and the results are compared:

``mdav``
    ``microaggregate(X, k, method="mdav")`` against ``sdcMicro::microaggregation(X,
    method = "mdav", aggr = k)``: released cells (relative 1e-9), IL = 100 * SSE / SST of
    both releases, and the partitions (records released identically form one group).
``mdav-missing``
    the same with missing cells and ``missing_distance="sdcmicro"``.
``il1``, ``il1s``, ``eigen``, ``dRisk``
    :func:`pysdcmicro.metrics.il1`, :func:`~pysdcmicro.metrics.il1s`,
    :func:`~pysdcmicro.metrics.eigen_utility`, and
    :func:`~pysdcmicro.metrics.interval_disclosure_risk` (``sd_fraction`` 0.05) against
    ``dUtility(x, xm, method = "IL1" / "IL1s" / "eigen")`` and ``dRisk(x, xm, k = 0.05)``,
    on sdcMicro's own MDAV release of inputs without missing cells (relative 1e-7; both
    undefined counts as equal).

The random inputs are small integer ranges (2 to 5 values per column), often with
duplicated records, constant columns, rescaled columns and, for ``mdav-missing``,
2-30 % missing cells: inputs full of exact ties. A difference that
:data:`DOCUMENTED` explains is counted apart; any other one is a failure (exit status 1).

Nothing here is imported by the package; the test suite runs :func:`run` on a few seeds
(``tests/bridges/test_parity_sdcmicro.py``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np
import pandas as pd

#: Differences with sdcMicro that are known and documented (docs/guide/parity.md), by
#: function: the check that recognises them is in :func:`_documented`.
DOCUMENTED = {
    "mdav-missing": "sdcMicro's last group releases, in a column where some members are missing, "
                    "the sum of the observed values divided by the group size",
    "eigen": "linearly dependent original columns: sdcMicro returns a rounding-level number, "
             "pysdcmicro returns NaN with a warning",
}

#: Single inputs on which a function is known to differ (function, input label); none.
KNOWN: set = set()

FUNCTIONS = ("mdav", "mdav-missing", "il1", "il1s", "eigen", "dRisk")


class _R:
    """sdcMicro through rpy2 (imported on first use)."""

    def __init__(self):
        import rpy2.robjects as ro

        self.ro = ro
        ro.r("suppressMessages(library(sdcMicro))")
        self.version = str(ro.r('as.character(packageVersion("sdcMicro"))')[0])
        self._micro = ro.r('function(x, k) as.matrix(sdcMicro::microaggregation('
                           'x, variables = colnames(x), aggr = k, method = "mdav")$mx)')
        self._util = ro.r("function(x, xm, m) { v <- sdcMicro::dUtility(x, xm = xm, method = m); "
                          "if (is.na(v)) NaN else as.numeric(v) }")
        self._risk = ro.r("function(x, xm, f) sdcMicro::dRisk(x, xm = xm, k = f)")

    def frame(self, X: np.ndarray):
        ro = self.ro
        cols = {}
        for j in range(X.shape[1]):
            v = [ro.NA_Real if np.isnan(x) else float(x) for x in X[:, j]]
            cols[f"v{j}"] = ro.FloatVector(v)
        return ro.DataFrame(cols)

    def mdav(self, X: np.ndarray, k: int) -> np.ndarray:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = np.array(self._micro(self.frame(X), k), dtype=float)
        return out.reshape(X.shape, order="F") if out.shape != X.shape else out

    def utility(self, X, Xm, method) -> float:
        return float(self._util(self.frame(X), self.frame(Xm), method)[0])

    def risk(self, X, Xm, f) -> float:
        return float(self._risk(self.frame(X), self.frame(Xm), f)[0])


def random_input(seed: int, *, missing: bool) -> tuple[np.ndarray, int]:
    """A tie-heavy input and its k: small integer ranges, duplicates, constant columns."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 6))
    n = max(int(rng.integers(4, 80)), 2 * k)
    p = int(rng.integers(2, 6))
    X = rng.integers(0, int(rng.integers(2, 6)), size=(n, p)).astype(float)
    if rng.random() < 0.3:  # duplicated records
        X = X[rng.integers(0, max(1, n // 3), size=n)]
    if rng.random() < 0.2 and p > 2:  # a constant column
        X[:, rng.integers(0, p)] = 7.0
    if rng.random() < 0.2:  # rescaled columns (ties must not depend on units)
        X = X * rng.choice([0.1, 3.7, 1e3, 1 / 3], size=p)
    if np.all(X == X[0]):  # at least one column varies
        X[0, 0] += 1.0
    if missing:
        X[rng.random(X.shape) < rng.uniform(0.02, 0.3)] = np.nan
        X[0, np.all(np.isnan(X), axis=0)] = 1.0  # every column keeps an observed cell
        for j in range(p):  # and two distinct observed values
            obs = np.flatnonzero(~np.isnan(X[:, j]))
            if np.unique(X[obs, j]).size < 2:
                X[rng.integers(0, n), j] = X[obs[0], j] + 1.0
    return X, k


def _groups(M: np.ndarray) -> np.ndarray:
    """Partition read off a release: records released identically share a group."""
    _, inv = np.unique(np.nan_to_num(M, nan=-1.2345e300), axis=0, return_inverse=True)
    return inv.ravel()


def _same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    pairs = np.unique(np.stack([a, b]), axis=1)
    return pairs.shape[1] == np.unique(a).size == np.unique(b).size


def _constant_on(labels: np.ndarray, M: np.ndarray) -> bool:
    """Is the release ``M`` one value per group of ``labels`` in every column (missing
    cells, which stay missing, aside)?"""
    for g in np.unique(labels):
        sub = M[labels == g]
        for col in sub.T:
            v = col[~np.isnan(col)]
            if v.size and not np.allclose(v, v[0], rtol=1e-9, atol=1e-12):
                return False
    return True


def _equal(a: float, b: float, rel: float) -> bool:
    if a == b:  # infinities included
        return True
    if np.isnan(a) or np.isnan(b):
        return bool(np.isnan(a) and np.isnan(b))
    return abs(a - b) <= rel * max(1.0, abs(a), abs(b))


def _last_group_rule(X, ours, sdc, labels) -> bool:
    """sdcMicro's documented last-group release with missing cells explains every cell that
    differs: the group of the differing records releases sum(observed) / group size."""
    bad = ~np.isclose(ours, sdc, rtol=1e-9, atol=1e-12, equal_nan=True)
    rows = np.flatnonzero(bad.any(axis=1))
    if np.unique(labels[rows]).size != 1:  # one group: the last one sdcMicro makes
        return False
    members = np.flatnonzero(labels == labels[rows[0]])
    want = np.nansum(X[members], axis=0) / members.size
    r, c = np.nonzero(bad)
    return bool(np.allclose(sdc[r, c], want[c], rtol=1e-9))


class Tally:
    """Per function: inputs compared, inputs equal, documented, failures."""

    def __init__(self):
        self.rows = {f: dict(inputs=0, cells=0, cells_equal=0, il_equal=0, groups_equal=0,
                             equal=0, documented=0, failures=[]) for f in FUNCTIONS}

    def add(self, f, label, *, equal, cells=(0, 0), il=None, groups=None, documented=False):
        r = self.rows[f]
        documented = documented or (f, label) in KNOWN
        r["inputs"] += 1
        r["cells"] += cells[1]
        r["cells_equal"] += cells[0]
        r["il_equal"] += int(bool(il)) if il is not None else int(equal)
        r["groups_equal"] += int(bool(groups)) if groups is not None else int(equal)
        if equal:
            r["equal"] += 1
        elif documented:
            r["documented"] += 1
        else:
            r["failures"].append(label)

    @property
    def failures(self) -> list:
        return [(f, x) for f, r in self.rows.items() for x in r["failures"]]


def compare_mdav(R, tally, X, k, label, *, missing: bool) -> np.ndarray:
    import pysdcmicro
    from pysdcmicro import metrics

    f = "mdav-missing" if missing else "mdav"
    frame = pd.DataFrame(X, columns=[f"v{j}" for j in range(X.shape[1])])
    opts = {"missing_distance": "sdcmicro"} if missing else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # every column, as the R call (no column is left out as a likely identifier)
        res = pysdcmicro.microaggregate(frame, k, method="mdav", variables=list(frame.columns), **opts)
    ours = res.data.to_numpy(float)
    sdc = R.mdav(X, k)
    same = np.isclose(ours, sdc, rtol=1e-9, atol=1e-12, equal_nan=True)
    # sdcMicro's release is one value per group of ours (and, without missing cells, the
    # partitions read off both releases are the same)
    groups = _constant_on(res.labels, sdc) and (missing or _same_partition(_groups(ours), _groups(sdc)))
    if missing:
        il = groups
    else:
        il = _equal(metrics.il_sse(X, ours), metrics.il_sse(X, sdc), 1e-9)
    equal = bool(same.all())
    documented = missing and not equal and groups and _last_group_rule(X, ours, sdc, res.labels)
    tally.add(f, label, equal=equal, cells=(int(same.sum()), same.size), il=il, groups=groups,
              documented=documented)
    return sdc


def compare_measures(R, tally, X, Xm, label) -> None:
    from pysdcmicro import metrics

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ours = {"il1": metrics.il1(X, Xm), "il1s": metrics.il1s(X, Xm),
                "eigen": metrics.eigen_utility(X, Xm),
                "dRisk": metrics.interval_disclosure_risk(X, Xm, sd_fraction=0.05)}
    dependent = any("linearly dependent" in str(w.message) for w in caught)
    theirs = {"il1": R.utility(X, Xm, "IL1"), "il1s": R.utility(X, Xm, "IL1s"),
              "eigen": R.utility(X, Xm, "eigen"), "dRisk": R.risk(X, Xm, 0.05)}
    for f in ("il1", "il1s", "eigen", "dRisk"):
        eq = _equal(ours[f], theirs[f], 1e-7)
        tally.add(f, label, equal=eq, documented=(f == "eigen" and dependent and np.isnan(ours[f])))


def datasets() -> list:
    """Fair's affairs (6366 x 9) and RAND HIE (20190 x 10) from statsmodels."""
    import statsmodels.api as sm

    return [("Fair's affairs", sm.datasets.fair.load_pandas().data.to_numpy(float)),
            ("RAND HIE", sm.datasets.randhie.load_pandas().data.to_numpy(float))]


def run(seeds: int, *, start: int = 0, with_datasets: bool = False, ks=(3, 5, 10), log=None) -> tuple:
    """Compare on ``seeds`` random inputs (and the two data sets). Returns (tally, version)."""
    R = _R()
    tally = Tally()
    for seed in range(start, start + seeds):
        X, k = random_input(seed, missing=False)
        sdc = compare_mdav(R, tally, X, k, f"seed {seed}", missing=False)
        compare_measures(R, tally, X, sdc, f"seed {seed}")
        Xn, kn = random_input(seed, missing=True)
        compare_mdav(R, tally, Xn, kn, f"seed {seed}", missing=True)
    if with_datasets:
        for name, X in datasets():
            for k in ks:
                t = time.perf_counter()
                compare_mdav(R, tally, X, k, f"{name} k={k}", missing=False)
                if log:
                    log(f"{name} k={k}: {time.perf_counter() - t:.1f} s")
    return tally, R.version


def table(tally: Tally, version: str, seeds: int, with_datasets: bool) -> str:
    lines = [f"Against sdcMicro {version}, {seeds} random tie-heavy inputs"
             + (" plus Fair's affairs and RAND HIE at k = 3, 5, 10" if with_datasets else "") + ".",
             "",
             "| function | inputs | equal | documented | other | cells equal | IL equal | groups equal |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for f, r in tally.rows.items():
        cells = f"{r['cells_equal']}/{r['cells']}" if r["cells"] else "-"
        lines.append(f"| {f} | {r['inputs']} | {r['equal']} | {r['documented']} | {len(r['failures'])} "
                     f"| {cells} | {r['il_equal']} | {r['groups_equal']} |")
    return "\n".join(lines) + "\n"


BEGIN, END = "<!-- parity-table:begin -->", "<!-- parity-table:end -->"


def write_docs(path: str, text: str) -> None:
    with open(path, encoding="utf-8") as fh:
        doc = fh.read()
    a, b = doc.index(BEGIN) + len(BEGIN), doc.index(END)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(doc[:a] + "\n" + text + doc[b:])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=200, help="random inputs (default 200)")
    ap.add_argument("--start", type=int, default=0, help="first seed")
    ap.add_argument("--datasets", action="store_true", help="also Fair's affairs and RAND HIE at k=3,5,10")
    ap.add_argument("--write-docs", metavar="PATH", help="write the table between the markers of PATH")
    args = ap.parse_args(argv)
    tally, version = run(args.seeds, start=args.start, with_datasets=args.datasets,
                         log=lambda s: print(s, file=sys.stderr))
    text = table(tally, version, args.seeds, args.datasets)
    print(text)
    for f, label in tally.failures:
        print(f"differs: {f} on {label}")
    if args.write_docs:
        write_docs(args.write_docs, text)
    return 1 if tally.failures else 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sys.exit(main())
