"""Issue 14, Tarragona k = 3: where does the optimum lie? Subset-row cuts on 5-sets.

    python -m benchmarks.tarr3_cuts5 CAPTURE.pkl [SECONDS] [--no-five] [--per-round N]

Starts from a captured column-generation state (``CAPTURE.pkl``: ``Z``, ``k``, ``nbr_dist``,
``pool_members``, the cut phase's result ``res`` with its 132 triples and the incumbent's
``labels``; written by ``benchmarks/tarr3_capture.py``, outside the repo because it holds the
standardised CASC data) and continues the cut phase with a second family of rank-1 cuts:

    for a 5-set S of records:  sum_C floor(|C cap S| / 2) x_C <= 2,

valid for every partition (Jepsen et al. 2008, subset-row cuts with multiplier 1/2; the LP
alone only gives <= 2.5). Its coefficient is the triples' ``floor(|C cap S| / 2)``, so the
compiled pricing with penalties (``_bb_numba.bb_anchor_points_cuts``, which adds ``w_S``
when a member joins a cut already holding an odd count) prices it unchanged; only the right
hand side (2) differs. Each round: solve the master with all cuts, price sizes 3..5 exactly
with the penalties, add the negative groups; when pricing proves none, the master's value is
a proven lower bound (LP duality over ALL groups), then separate new triples and 5-sets.

Prints one line per master solve and the proven bounds in IL percent, the incumbent's IL and
the reduced-cost slack. Untimed unless run through /work/wt/timed.
"""

from __future__ import annotations

import argparse
import math
import os
import pickle
import time
from itertools import combinations

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from pysdcmicro.optimization._cuts import separate_triples
from pysdcmicro.optimization._master import ColumnPool, group_cost
from pysdcmicro.optimization._pricing import CutRows, anchored_pricing


class SetRows(CutRows):
    """:class:`CutRows` for cut sets of any size (the penalty ``w_S floor(|C cap S|/2)``)."""

    def __init__(self, n: int, sets: list, weights: np.ndarray):
        self.n = n
        self.triples = None
        self.weights = np.ascontiguousarray(np.maximum(np.asarray(weights, dtype=np.float64), 0.0))
        lens = np.array([len(s) for s in sets], dtype=np.int64)
        flat = np.concatenate([np.asarray(s, dtype=np.int64) for s in sets]) if sets else np.zeros(0, np.int64)
        owner = np.repeat(np.arange(len(sets), dtype=np.int64), lens)
        order = np.argsort(flat, kind="stable")
        self.idx = np.ascontiguousarray(owner[order])
        self.ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(flat, minlength=n), out=self.ptr[1:])


def set_matrix(sets: list, n: int) -> sparse.csr_matrix:
    lens = np.array([len(s) for s in sets], dtype=np.int64)
    indptr = np.zeros(len(sets) + 1, dtype=np.int64)
    np.cumsum(lens, out=indptr[1:])
    flat = np.concatenate([np.asarray(s, dtype=np.int64) for s in sets])
    return sparse.csr_matrix((np.ones(flat.size), flat, indptr), shape=(len(sets), n))


def solve_master(pool: ColumnPool, sets: list) -> dict:
    A = pool.matrix()
    c = np.asarray(pool.costs)
    S = set_matrix(sets, pool.n)
    B = (S @ A).tocsr()
    B.data = np.floor(B.data / 2.0)
    B.eliminate_zeros()
    rhs = np.array([len(s) // 2 for s in sets], dtype=np.float64)
    res = linprog(c, A_eq=A, b_eq=np.ones(pool.n), A_ub=B, b_ub=rhs, bounds=(0, None), method="highs")
    if res.status != 0:
        raise RuntimeError(res.message)
    return {"value": float(res.fun), "x": np.asarray(res.x), "pi": np.asarray(res.eqlin.marginals),
            "sigma": np.minimum(np.asarray(res.ineqlin.marginals), 0.0), "rhs": rhs}


def separate_five(members: list, x: np.ndarray, *, existing: set, max_cuts: int, per_record: int = 2,
                  max_nbrs: int = 12, tol: float = 1e-6) -> list:
    """Violated 5-set cuts at ``x``: for each record in a fractional group, the 5-sets of it
    and 4 of its (at most ``max_nbrs`` heaviest) co-members in fractional groups.
    ``lhs(S) = sum_C floor(|C cap S|/2) x_C`` over the fractional groups (a group at 1 holding
    two of S leaves a triple that the triple separation covers)."""
    frac = np.flatnonzero((x > tol) & (x < 1.0 - tol))
    by_rec: dict = {}
    w: dict = {}
    for c in frac:
        rows = [int(r) for r in members[c]]
        for r in rows:
            by_rec.setdefault(r, []).append(c)
        for a, b in combinations(rows, 2):
            w[(a, b)] = w.get((a, b), 0.0) + float(x[c])
    nb: dict = {}
    for (a, b), v in w.items():
        nb.setdefault(a, []).append((v, b))
        nb.setdefault(b, []).append((v, a))
    seen: dict = {}
    for i, lst in nb.items():
        near = [b for _v, b in sorted(lst, reverse=True)[:max_nbrs]]
        for four in combinations(sorted(near), 4):
            S = tuple(sorted((i,) + four))
            if S in seen or S in existing:
                continue
            cols = set()
            for r in S:
                cols.update(by_rec.get(r, ()))
            Sset = set(S)
            lhs = 0.0
            for c in cols:
                h = sum(1 for r in members[c] if int(r) in Sset)
                if h >= 2:
                    lhs += (h // 2) * float(x[c])
            seen[S] = lhs
    violated = sorted(((v, S) for S, v in seen.items() if v > 2.0 + tol), key=lambda t: (-t[0], t[1]))
    out, used = [], {}
    for v, S in violated:
        if len(out) >= max_cuts:
            break
        if any(used.get(r, 0) >= per_record for r in S):
            continue
        for r in S:
            used[r] = used.get(r, 0) + 1
        out.append((v, S))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("capture")
    ap.add_argument("seconds", nargs="?", type=float, default=1200.0)
    ap.add_argument("--no-five", action="store_true")
    ap.add_argument("--per-round", type=int, default=200)
    ap.add_argument("--anchor-time", type=float, default=2.0)
    ap.add_argument("--save", default=None, help="pickle the final sets, duals and pool here (outside the repo)")
    a = ap.parse_args()
    st = pickle.load(open(a.capture, "rb"))
    Z, k, nbr = st["Z"], st["k"], st["nbr_dist"]
    n = Z.shape[0]
    sst = float(((Z - Z.mean(0)) ** 2).sum())
    il = lambda v: 100.0 * v / sst  # noqa: E731
    from pysdcmicro._partition import sse
    ub = sse(Z, st["labels"])
    pool = ColumnPool(n)
    for r in st["pool_members"]:
        pool.add(r, group_cost(Z, r))
    sets = [tuple(int(v) for v in t) for t in st["res"]["triples"]]
    existing = set(sets)
    print(f"n {n} k {k} SST {sst:.6f} incumbent IL {il(ub):.6f} pool {len(pool)} triples {len(sets)} "
          f"load {os.getloadavg()[0]:.1f}", flush=True)
    t0, c0 = time.monotonic(), time.process_time()
    best = -math.inf
    rounds = 0
    last = None
    while time.monotonic() - t0 < a.seconds:
        m = solve_master(pool, sets)
        pi, sigma, value = m["pi"], m["sigma"], m["value"]
        cuts = SetRows(n, [list(s) for s in sets], -sigma)
        found, proven = 0, True
        for s in range(k, 2 * k):
            res = anchored_pricing(Z, nbr, pi, k, s, time_limit=a.anchor_time, cuts=cuts)
            proven = proven and res["proven"]
            for rows, rc in res["columns"][: max(50, n)]:
                if rc < -1e-9 and pool.add(rows, group_cost(Z, rows)) is not None:
                    found += 1
        el = time.monotonic() - t0
        n5 = sum(1 for s in sets if len(s) == 5)
        print(f"  master {il(value):.6f} cuts {len(sets)} (5-sets {n5}) columns +{found} proven {proven} "
              f"{el:.0f}s cpu {time.process_time() - c0:.0f}s", flush=True)
        if found:
            continue
        if not proven:
            print("  pricing not proven (anchor time limit): stop", flush=True)
            break
        best = max(best, value)
        last = (pi.copy(), sigma.copy(), list(sets), value, m["x"].copy())
        slack = ub - value
        print(f"PROVEN bound IL {il(value):.6f} (SSE {value:.6f}); incumbent-bound {slack:.4f} SSE; "
              f"<= 14.46 needs rc sum <= {14.46 * sst / 100 - value:.4f}", flush=True)
        new = [(v, tuple(int(r) for r in t)) for v, t in
               separate_triples(pool.members, m["x"], existing=existing, max_cuts=a.per_round)]
        if not a.no_five:
            new += separate_five(pool.members, m["x"], existing=existing, max_cuts=a.per_round)
        if not new:
            print("  no violated triple or 5-set cut: stop", flush=True)
            break
        for _v, S in new:
            existing.add(S)
            sets.append(S)
        rounds += 1
        print(f"round {rounds}: +{len(new)} cuts (max violation {max(v for v, _ in new):.4f})", flush=True)
    print(f"best proven bound IL {il(best):.6f}; wall {time.monotonic() - t0:.0f}s cpu "
          f"{time.process_time() - c0:.0f}s load {os.getloadavg()[0]:.1f}", flush=True)
    if a.save and last is not None:
        pickle.dump({"pi": last[0], "sigma": last[1], "sets": last[2], "value": last[3], "x": last[4],
                     "pool_members": list(pool.members)}, open(a.save, "wb"))


if __name__ == "__main__":
    main()
