"""Issue 14, Tarragona k = 3: the set-partitioning MIP over the groups of small reduced cost
at proven cut duals.

    python -m benchmarks.tarr3_rcmip CAPTURE.pkl CUTS.pkl THETA [MIP_SECONDS] [--sizes 3,4,5]
                                     [--max-columns N]

``CAPTURE.pkl`` as for ``benchmarks/tarr3_cuts5.py`` (Z, nbr_dist, the incumbent's labels);
``CUTS.pkl`` the proven state that script saves (duals ``pi``, ``sigma`` of a master with
cut sets ``sets`` (triples, rhs 1; 5-sets, rhs 2) whose exact pricing found no negative
group, and its pool). For any partition P,

    SSE(P) >= sum(pi) + sum_S sigma_S rhs_S + sum_{C in P} rc(C),   rc(C) >= 0 for every C,

so a partition with IL <= target uses only groups with rc <= slack(target) = target SSE -
(sum pi + sum sigma rhs). The script enumerates every group of the sizes given with
rc (penalties included) <= THETA (``enumerate_below`` without the penalties, a superset, then
filtered), counts them per size with the seconds, adds the pool's groups within THETA and
the incumbent's groups, and solves the MIP over them with the cut rows (HiGHS via
:func:`scipy.optimize.milp`). When the enumeration is complete and THETA >= slack(target),
the MIP's answer is exact for the target: a partition at or below it, or a proof that none
exists. Otherwise it is a heuristic (a restricted master).
"""

from __future__ import annotations

import argparse
import os
import pickle
import time

import numpy as np
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, milp

from pysdcmicro._partition import canonical_labels, groups_from_labels, sse
from pysdcmicro.optimization._master import group_cost
from pysdcmicro.optimization._pricing import enumerate_below

from .tarr3_cuts5 import SetRows, set_matrix


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("capture")
    ap.add_argument("cuts")
    ap.add_argument("theta", type=float)
    ap.add_argument("mip_seconds", nargs="?", type=float, default=240.0)
    ap.add_argument("--sizes", default="3,4,5")
    ap.add_argument("--max-columns", type=int, default=400_000)
    ap.add_argument("--enumerate-limit", type=int, default=2_000_000)
    ap.add_argument("--count-only", action="store_true")
    a = ap.parse_args()
    st = pickle.load(open(a.capture, "rb"))
    cu = pickle.load(open(a.cuts, "rb"))
    Z, k, nbr = st["Z"], st["k"], st["nbr_dist"]
    n = Z.shape[0]
    sst = float(((Z - Z.mean(0)) ** 2).sum())
    pi, sigma, sets = cu["pi"], np.minimum(cu["sigma"], 0.0), cu["sets"]
    rhs = np.array([len(s) // 2 for s in sets], dtype=np.float64)
    base = float(pi.sum() + sigma @ rhs)
    ub = sse(Z, st["labels"])
    rows_c = SetRows(n, [list(s) for s in sets], -sigma)
    print(f"bound IL {100 * base / sst:.6f} (cut master {100 * cu['value'] / sst:.6f}); incumbent IL "
          f"{100 * ub / sst:.6f}; slack to 14.46: {14.46 * sst / 100 - base:.4f}, to incumbent "
          f"{ub - base:.4f}; THETA {a.theta} (IL {100 * (base + a.theta) / sst:.6f}); cuts {len(sets)}; "
          f"load {os.getloadavg()[0]:.1f}", flush=True)
    cols, complete = [], True
    t0, c0 = time.monotonic(), time.process_time()
    for s in (int(v) for v in a.sizes.split(",")):
        t1 = time.monotonic()
        g, done = enumerate_below(Z, nbr, pi, k, s, a.theta, enumerate_limit=a.enumerate_limit,
                                  max_columns=a.max_columns, budget=10 ** 10)
        kept = [r for r, rc in g if rc + rows_c.penalty(r) <= a.theta]
        complete &= done
        print(f"size {s}: {len(g)} groups with rc <= THETA without penalties, {len(kept)} with them, "
              f"complete {done}, {time.monotonic() - t1:.1f}s wall", flush=True)
        cols += kept
    print(f"enumeration: {len(cols)} groups, complete {complete}, {time.monotonic() - t0:.1f}s wall "
          f"{time.process_time() - c0:.1f}s cpu", flush=True)
    if a.count_only:
        return
    seen = {np.sort(r).tobytes() for r in cols}
    pool_rc = []
    for r in cu["pool_members"]:
        r = np.sort(np.asarray(r))
        if r.size <= 2 * k - 1 and r.tobytes() not in seen:
            rc = group_cost(Z, r) - pi[r].sum() + rows_c.penalty(r)
            if rc <= a.theta:
                cols.append(r)
                seen.add(r.tobytes())
                pool_rc.append(rc)
    for r in groups_from_labels(canonical_labels(st["labels"])):
        r = np.sort(np.asarray(r))
        if r.tobytes() not in seen:
            cols.append(r)
            seen.add(r.tobytes())
    m = len(cols)
    cost = np.array([group_cost(Z, r) for r in cols])
    lens = np.array([r.size for r in cols])
    indptr = np.concatenate([[0], np.cumsum(lens)])
    A = sparse.csc_matrix((np.ones(indptr[-1]), np.concatenate(cols), indptr), shape=(n, m))
    B = (set_matrix(sets, n) @ A).tocsr()
    B.data = np.floor(B.data / 2.0)
    B.eliminate_zeros()
    print(f"MIP: {m} columns ({len(pool_rc)} from the pool), {len(sets)} cut rows, "
          f"{a.mip_seconds:.0f}s limit", flush=True)
    t1 = time.monotonic()
    res = milp(cost, constraints=[LinearConstraint(A, 1, 1), LinearConstraint(B, -np.inf, rhs)],
               integrality=np.ones(m), bounds=Bounds(0, 1),
               options={"time_limit": a.mip_seconds, "disp": False, "mip_rel_gap": 0})
    print(f"MIP status {res.status} ({res.message}) {time.monotonic() - t1:.1f}s", flush=True)
    if res.x is not None:
        sel = np.flatnonzero(res.x > 0.5)
        lab = np.empty(n, dtype=np.int64)
        for g, j in enumerate(sel):
            lab[cols[j]] = g
        val = sse(Z, lab)
        print(f"MIP partition IL {100 * val / sst:.6f} (min size {np.bincount(lab).min()}, covered "
              f"{np.bincount(lab).sum()}); dual bound IL "
              f"{100 * getattr(res, 'mip_dual_bound', float('nan')) / sst:.6f}", flush=True)
        if val < ub:
            np.save(os.path.join(os.path.dirname(a.cuts), "rcmip_labels.npy"), lab)


if __name__ == "__main__":
    main()
