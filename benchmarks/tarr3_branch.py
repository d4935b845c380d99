"""Issue 14, Tarragona k = 3: branch on how the four extreme records are covered.

    python -m benchmarks.tarr3_branch CAPTURE.pkl LABELS.npy [THETA] [RECORDS]

The groups of size 3..5 with reduced cost <= THETA (default 0.66: IL 14.4649) at the proven
cut duals inside the RECORDS (default 88) records nearest to the group of largest reduced
cost in LABELS (see ``tarr3_region.py``); every way to cover that group's records exactly by
disjoint such groups is a branch: its groups fixed, column generation with the cuts on the
other records (exact pricing with penalties, one round of new triples) gives that branch's
LP value. NOT a proof: covers using groups that reach outside the region are not branched on.
"""

from __future__ import annotations

import os
import pickle
import sys
import time

import numpy as np

from pysdcmicro._partition import canonical_labels, groups_from_labels, sse
from pysdcmicro.optimization._master import ColumnPool, group_cost
from pysdcmicro.optimization._pricing import enumerate_below, neighbours

from .tarr3_cuts5 import SetRows
from .tarr3_dive import column_generation


def main(argv: list[str]) -> None:
    st = pickle.load(open(argv[0], "rb"))
    labels = np.load(argv[1])
    theta = float(argv[2]) if len(argv) > 2 else 0.66
    R = int(argv[3]) if len(argv) > 3 else 88
    Z = st["Z"]
    n = Z.shape[0]
    sst = float(((Z - Z.mean(0)) ** 2).sum())
    pi, sigma, triples, _v = st["res"]["proven_duals"]
    sigma = np.minimum(sigma, 0.0)
    rows_c = SetRows(n, [list(t) for t in triples], -sigma)
    base = float(pi.sum() + sigma.sum())
    groups = groups_from_labels(canonical_labels(labels))
    rc = np.array([group_cost(Z, g) - pi[g].sum() + rows_c.penalty(g) for g in groups])
    worst = groups[int(np.argmax(rc))]
    gd = np.array([float(((Z[g][:, None, :] - Z[worst][None]) ** 2).sum(2).min()) for g in groups])
    region = []
    for g in np.argsort(gd, kind="stable"):
        if len(region) + groups[g].size > R and region:
            break
        region.extend(groups[g].tolist())
    region = np.array(sorted(region))
    Zr = Z[region]
    _, nbr_r = neighbours(Zr, min(16, region.size))
    cand = []
    for s in range(3, 6):
        found, _done = enumerate_below(Zr, nbr_r, pi[region], 3, s, theta, enumerate_limit=3_000_000,
                                       max_columns=3_000_000, budget=10 ** 10)
        for loc, r in found:
            g = region[np.asarray(loc)]
            r2 = r + rows_c.penalty(g)
            if r2 <= theta and np.intersect1d(g, worst).size:
                cand.append((g, r2))
    O = [int(v) for v in worst]
    covers = []

    def rec(left, chosen, used, tot):
        if not left:
            covers.append((tot, list(chosen)))
            return
        o = left[0]
        for g, r in cand:
            if o in g and tot + r <= theta and not (set(g.tolist()) & used):
                if set(g.tolist()) & set(O) - set(left):
                    continue
                rec([v for v in left if v not in g], chosen + [g], used | set(g.tolist()), tot + r)

    rec(O, [], set(), 0.0)
    covers.sort(key=lambda c: c[0])
    print(f"group {O}; {len(cand)} groups touch it with rc <= {theta} in the {region.size}-record region; "
          f"{len(covers)} covers; load {os.getloadavg()[0]:.1f}", flush=True)
    members = [np.asarray(r) for r in st["pool_members"]]
    sets = [tuple(int(v) for v in t) for t in triples]
    t0, c0 = time.monotonic(), time.process_time()
    best = np.inf
    for tot, cover in covers:
        fixed = np.concatenate(cover)
        keep = np.setdiff1d(np.arange(n), fixed)
        where = -np.ones(n, dtype=np.int64)
        where[keep] = np.arange(keep.size)
        Zs = Z[keep]
        pool = ColumnPool(keep.size)
        for r in members:
            loc = where[r]
            if np.all(loc >= 0):
                pool.add(loc, group_cost(Zs, loc))
        for g in groups:
            loc = where[g]
            if np.all(loc >= 0):
                pool.add(loc, group_cost(Zs, loc))
        # records whose incumbent group was broken: chunks of 3 along the first coordinate
        order = np.argsort(Zs[:, 0], kind="stable")
        starts = list(range(0, 3 * (keep.size // 3), 3))
        for j, s0 in enumerate(starts):
            r = order[s0:s0 + 3] if j < len(starts) - 1 else order[s0:]
            pool.add(r, group_cost(Zs, r))
        loc_sets = [tuple(int(where[v]) for v in t) for t in sets if np.all(where[list(t)] >= 0)]
        _, nbr = neighbours(Zs, 16)
        m = column_generation(Zs, nbr, pool, loc_sets, 3, 1, 30.0)
        fcost = sum(group_cost(Z, g) for g in cover)
        val = fcost + m["value"]
        best = min(best, val)
        print(f"cover {[g.tolist() for g in cover]} (rc {tot:.4f}): branch LP IL {100 * val / sst:.6f}; "
              f"{time.monotonic() - t0:.0f}s wall {time.process_time() - c0:.0f}s cpu", flush=True)
    print(f"lowest branch LP IL {100 * best / sst:.6f} (base {100 * base / sst:.6f}); load {os.getloadavg()[0]:.1f}",
          flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
