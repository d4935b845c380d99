"""Issue 14, Tarragona k = 3: the exact best rearrangement of a region around the group that
carries the incumbent's slack.

    python -m benchmarks.tarr3_region CAPTURE.pkl LABELS.npy [RECORDS ...]

At the proven duals of the master with cuts (``pi``, ``sigma``, from CAPTURE.pkl; see
``benchmarks/tarr3_capture.py``), ``SSE(P) - (sum pi + sum sigma) >= sum_{C in P} rc(C)``
with every ``rc(C) >= 0`` (penalties included). The script prints each group's reduced cost
in the partition LABELS.npy (on Tarragona k = 3 one group, the four extreme records
829/831/832/833, carries 0.87 of the 0.95 slack), then for each region size RECORDS (default
30 45 60): the region = that group plus the partition's groups nearest to it (by the closest
distance between members) up to RECORDS records; every group of size 3..5 inside the region
whose reduced cost is <= the slack (a better partition holds no other: the groups outside
have rc >= 0) is enumerated, and the set-partitioning MIP over them (HiGHS, exact) gives the
best partition of the region with the rest fixed. Prints the region's SSE before and after.
"""

from __future__ import annotations

import os
import pickle
import sys
import time
import numpy as np
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, milp

from pysdcmicro._partition import canonical_labels, groups_from_labels, sse
from pysdcmicro.optimization._master import group_cost
from pysdcmicro.optimization._pricing import enumerate_below, neighbours

from .tarr3_cuts5 import SetRows


def main(argv: list[str]) -> None:
    st = pickle.load(open(argv[0], "rb"))
    labels = np.load(argv[1])
    sizes_r = [int(v) for v in argv[2:]] or [30, 45, 60]
    Z = st["Z"]
    n = Z.shape[0]
    sst = float(((Z - Z.mean(0)) ** 2).sum())
    pi, sigma, triples, _value = st["res"]["proven_duals"]
    sigma = np.minimum(sigma, 0.0)
    rows_c = SetRows(n, [list(t) for t in triples], -sigma)
    base = float(pi.sum() + sigma.sum())
    ub = sse(Z, labels)
    slack = ub - base
    groups = groups_from_labels(canonical_labels(labels))
    rc = np.array([group_cost(Z, g) - pi[g].sum() + rows_c.penalty(g) for g in groups])
    top = np.argsort(rc)[::-1]
    print(f"partition IL {100 * ub / sst:.6f}; bound IL {100 * base / sst:.6f}; slack {slack:.4f} SSE; "
          f"sum rc {rc.sum():.4f}; largest rc: " + ", ".join(f"{groups[g].tolist()} {rc[g]:.4f}" for g in top[:4])
          + f"; load {os.getloadavg()[0]:.1f}", flush=True)
    worst = groups[top[0]]
    gd = np.array([float(((Z[g][:, None, :] - Z[worst][None]) ** 2).sum(2).min()) for g in groups])
    order = np.argsort(gd, kind="stable")
    for R in sizes_r:
        t0 = time.monotonic()
        region, chosen = [], []
        for g in order:
            if len(region) + groups[g].size > R and region:
                break
            region.extend(groups[g].tolist())
            chosen.append(g)
        region = np.array(sorted(region))
        m = region.size
        Zr = Z[region]
        _, nbr_r = neighbours(Zr, min(16, m))
        cols, costs, complete = [], [], True
        for s in range(3, 6):
            found, done = enumerate_below(Zr, nbr_r, pi[region], 3, s, slack, enumerate_limit=3_000_000,
                                          max_columns=3_000_000, budget=10 ** 10)
            complete &= done
            for loc, r in found:
                if r + rows_c.penalty(region[loc]) <= slack:
                    cols.append(np.asarray(loc))
                    costs.append(group_cost(Zr, loc))
        before = sum(group_cost(Z, groups[g]) for g in chosen)
        q = len(cols)
        lens = np.array([c.size for c in cols])
        indptr = np.concatenate([[0], np.cumsum(lens)])
        A = sparse.csc_matrix((np.ones(indptr[-1]), np.concatenate(cols), indptr), shape=(m, q))
        res = milp(np.array(costs), constraints=[LinearConstraint(A, 1, 1)], integrality=np.ones(q),
                   bounds=Bounds(0, 1), options={"time_limit": 120.0, "mip_rel_gap": 0})
        after = float(res.fun) if res.x is not None else float("nan")
        print(f"region {m} records ({len(chosen)} groups): {q} groups within the slack (complete {complete}); region SSE "
              f"{before:.4f} -> {after:.4f} (MIP {res.message}); partition IL "
              f"{100 * (ub - before + after) / sst:.6f}; {time.monotonic() - t0:.1f}s", flush=True)
        if res.x is not None and after < before - 1e-9:
            new = labels.copy()
            for j, c in enumerate(np.flatnonzero(res.x > 0.5)):
                new[region[cols[c]]] = n + j
            new = canonical_labels(new)
            print(f"  improved: IL {100 * sse(Z, new) / sst:.6f}, min size {np.bincount(new).min()}", flush=True)
            np.save("/tmp/tarr3_region_labels.npy", new)
            labels = new


if __name__ == "__main__":
    main(sys.argv[1:])
