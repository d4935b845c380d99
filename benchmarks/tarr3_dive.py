"""Issue 14, Tarragona k = 3: a dive on the master WITH subset-row cuts (branch-and-price
without backtracking).

    python -m benchmarks.tarr3_dive CAPTURE.pkl [--fix-above X] [--rounds R]

From the captured state (``benchmarks/tarr3_capture.py``): solve the master with the 132
triples, fix every group at 1 and the fractional group with the largest value (or every
group above ``--fix-above``), drop the fixed records (and every cut touching them), then
column generation with cuts on the records left (exact pricing with the penalties, new
triples separated ``--rounds`` times per step), and repeat until the master is integral.
Prints per step the records left, the fixed SSE plus the remaining master's value (IL %) and
the seconds; at the end the partition's IL against the capture's incumbent.
"""

from __future__ import annotations

import argparse
import os
import pickle
import time

import numpy as np

from pysdcmicro._partition import sse
from pysdcmicro.optimization._cuts import separate_triples
from pysdcmicro.optimization._master import ColumnPool, group_cost
from pysdcmicro.optimization._pricing import anchored_pricing, neighbours

from .tarr3_cuts5 import SetRows, solve_master


def column_generation(Zs, nbr, pool, sets, k, rounds, anchor_time):
    """Master with cuts on the sub-problem, priced to a proven LP, ``rounds`` separations."""
    n = Zs.shape[0]
    existing = set(sets)
    sep = 0
    while True:
        m = solve_master(pool, sets) if sets else solve_master_plain(pool)
        found = 0
        cuts = SetRows(n, [list(s) for s in sets], -m["sigma"]) if sets else None
        for s in range(k, 2 * k):
            if n < s:
                break
            res = anchored_pricing(Zs, nbr, m["pi"], k, s, time_limit=anchor_time, cuts=cuts)
            for rows, rc in res["columns"][: max(50, n)]:
                if rc < -1e-9 and pool.add(rows, group_cost(Zs, rows)) is not None:
                    found += 1
        if found:
            continue
        if sep >= rounds:
            return m
        new = separate_triples(pool.members, m["x"], existing=existing, max_cuts=600)
        if not new:
            return m
        for _v, t in new:
            t = tuple(int(r) for r in t)
            existing.add(t)
            sets.append(t)
        sep += 1


def solve_master_plain(pool):
    from scipy.optimize import linprog

    res = linprog(np.asarray(pool.costs), A_eq=pool.matrix(), b_eq=np.ones(pool.n), bounds=(0, None),
                  method="highs")
    return {"value": float(res.fun), "x": np.asarray(res.x), "pi": np.asarray(res.eqlin.marginals),
            "sigma": np.zeros(0), "rhs": np.zeros(0)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("capture")
    ap.add_argument("--fix-above", type=float, default=None)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--anchor-time", type=float, default=30.0)
    a = ap.parse_args()
    st = pickle.load(open(a.capture, "rb"))
    Z, k = st["Z"], st["k"]
    n = Z.shape[0]
    sst = float(((Z - Z.mean(0)) ** 2).sum())
    ub = sse(Z, st["labels"])
    R = np.arange(n)
    members = [np.asarray(r) for r in st["pool_members"]]
    sets = [tuple(int(v) for v in t) for t in st["res"]["triples"]]
    fixed: list = []
    fixed_cost = 0.0
    t0, c0 = time.monotonic(), time.process_time()
    print(f"incumbent IL {100 * ub / sst:.6f}; load {os.getloadavg()[0]:.1f}", flush=True)
    step = 0
    while R.size:
        where = -np.ones(n, dtype=np.int64)
        where[R] = np.arange(R.size)
        Zs = Z[R]
        pool = ColumnPool(R.size)
        for r in members:
            loc = where[r]
            if np.all(loc >= 0):
                pool.add(loc, group_cost(Zs, loc))
        if R.size < k:  # cannot form a group: join the nearest fixed group
            for r in R:
                d = [float(((Z[g] - Z[r]) ** 2).sum(1).min()) for g in fixed]
                j = int(np.argmin(d))
                fixed[j] = np.append(fixed[j], r)
            break
        # a cover always exists: chunks of 3 along the first coordinate (the last takes 3..5)
        order = np.argsort(Zs[:, 0], kind="stable")
        cut = list(range(0, k * (R.size // k), k))
        for j, s0 in enumerate(cut):
            rows = order[s0:s0 + k] if j < len(cut) - 1 else order[s0:]
            pool.add(rows, group_cost(Zs, rows))
        loc_sets = [tuple(int(where[v]) for v in t) for t in sets if np.all(where[list(t)] >= 0)]
        _, nbr = neighbours(Zs, min(16, R.size - 1))
        m = column_generation(Zs, nbr, pool, loc_sets, k, a.rounds if step < 50 else 0, a.anchor_time)
        x = m["x"]
        members = [R[c] for c in pool.members] + members
        sets = [tuple(int(R[v]) for v in t) for t in loc_sets] + [t for t in sets if not np.all(where[list(t)] >= 0)]
        integ = np.flatnonzero(x > 1 - 1e-6)
        frac = np.flatnonzero((x > 1e-6) & (x < 1 - 1e-6))
        print(f"step {step}: records {R.size}, fixed + master IL {100 * (fixed_cost + m['value']) / sst:.6f}, "
              f"cuts {len(loc_sets)}, integral {integ.size}, fractional {frac.size}, "
              f"{time.monotonic() - t0:.0f}s wall {time.process_time() - c0:.0f}s cpu", flush=True)
        if frac.size == 0:
            pick = integ
        elif a.fix_above is not None:
            pick = np.union1d(integ, frac[x[frac] >= a.fix_above])
            if pick.size == integ.size:
                pick = np.union1d(integ, [frac[np.argmax(x[frac])]])
        else:
            pick = np.union1d(integ, [frac[np.argmax(x[frac])]])
        drop = np.zeros(R.size, dtype=bool)
        for c in pick:
            rows = pool.members[c]
            if drop[rows].any():
                continue
            drop[rows] = True
            fixed.append(R[rows])
            fixed_cost += pool.costs[c]
        R = R[~drop]
        step += 1
    labels = np.empty(n, dtype=np.int64)
    for g, rows in enumerate(fixed):
        labels[rows] = g
    val = sse(Z, labels)
    print(f"dive partition IL {100 * val / sst:.6f} (incumbent {100 * ub / sst:.6f}); min size "
          f"{np.bincount(labels).min()}; {time.monotonic() - t0:.0f}s wall {time.process_time() - c0:.0f}s cpu",
          flush=True)
    np.save("/tmp/tarr3_dive_labels.npy", labels)


if __name__ == "__main__":
    main()
