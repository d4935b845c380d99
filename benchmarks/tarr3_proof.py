"""Issue 14, Tarragona k = 3: can a partition reach IL <= T? Branching on the extreme records,
made exhaustive (colgen.md part (m)).

    python -m benchmarks.tarr3_proof CAPTURE.pkl T [--extreme 829,831,832,833]
                                     [--anchor-time 30] [--rounds 2] [--only 0,2]
    python -m benchmarks.tarr3_proof --selftest

The argument. ``CAPTURE.pkl`` (``benchmarks/tarr3_capture.py``; outside the repo, it holds the
standardised CASC data) carries duals ``(pi, sigma)`` of the master with 132 subset-row cuts
whose pricing was PROVEN: every group ``C`` of 3..5 records has

    rc(C) = SSE(C) - pi(C) + sum_T w_T floor(|C cap T| / 2) >= 0,     w_T = -sigma_T >= 0,

and every partition ``P`` has ``SSE(P) >= LB + sum_{C in P} rc(C)``, ``LB = sum pi + sum
sigma`` (the penalties of ``P``'s groups add up to at most ``sum w``, the cuts being valid).
Some optimal partition has groups of 3..5 records only (a group of >= 6 splits without
raising the SSE). So if a partition with ``SSE <= SSE(T) = T SST / 100`` exists, one exists
with groups of 3..5 records whose reduced costs (all >= 0) sum to at most
``S = SSE(T) - LB``. The script

(a) enumerates EVERY group of 3..5 records that holds at least one of the extreme records
    and has ``rc <= S`` (depth-first, exact pruning bound below), and checks it against brute
    force on small instances (``--selftest``);
(b) lists every cover of the extreme records by disjoint such groups with total ``rc <= S``
    (the groups of such a partition that hold an extreme record form one of them);
(c) per cover: its groups fixed, the LP of the other records with the 132 cuts restricted to
    them (a branch is a restriction: the cuts stay valid; cuts touching a fixed record are
    dropped, which only weakens), re-priced with exact pricing with penalties; every pricing
    round whose sizes were all priced gives the Lagrangian bound
    ``_cuts.cut_bound`` (valid for any duals, proven anchors or not: it uses each anchor's
    bound), and the master value counts only when pricing PROVED no negative group. Then
    ``--rounds`` rounds of new triples (valid cuts) and again. A branch whose bound
    (fixed SSE + the sub-problem's bound) exceeds ``SSE(T)`` is closed.

Pruning bound of (a): for a partial group ``A`` that will reach ``s`` records by adding a
set ``B`` of candidates,
``rc(C) >= pairs(A)/s - pi(A) + pen(A) + sum_{l in B} e_l``, ``e_l = (D(l, A) + a_l/2)/s -
pi_l``, with ``pairs`` the sum of squared distances over pairs, ``D(l, A)`` the sum of
``l``'s squared distances to ``A``, ``a_l`` the sum of ``l``'s ``|B| - 1`` smallest squared
distances to any record (``pairs(B) >= sum a_l / 2``), and ``pen`` non-decreasing as records
are added. Prints the counts, the covers, each branch's bounds and the seconds.
"""

from __future__ import annotations

import argparse
import itertools
import os
import pickle
import time

import numpy as np

from pysdcmicro.optimization._cuts import cut_bound, separate_triples
from pysdcmicro.optimization._master import ColumnPool, group_cost
from pysdcmicro.optimization._pricing import anchored_pricing, neighbours

from .tarr3_cuts5 import SetRows, solve_master

EPS = 1e-9


def _sq(Z: np.ndarray, i: int) -> np.ndarray:
    return ((Z - Z[i]) ** 2).sum(1)


def groups_within(Z, pi, cuts, cums, extreme, S, sizes=(3, 4, 5), tol=1e-9):
    """Every group of ``sizes`` records holding at least one of ``extreme`` with reduced cost
    (penalties included) <= ``S``, as ``[(rows, rc)]``; and the search's node count.
    A group is found once: under its first extreme record (in ``extreme``'s order), the
    earlier ones excluded. ``cums[:, t]``: the sum of the ``t`` smallest squared distances
    from each record to the others (``t <= max(sizes) - 2``)."""
    n = Z.shape[0]
    rows_of: dict = {}

    def row(i):
        r = rows_of.get(i)
        if r is None:
            r = rows_of[i] = _sq(Z, i)
        return r

    out = []
    nodes = 0
    for ai, a in enumerate(extreme):
        allowed = np.array([v for v in range(n) if v != a and v not in extreme[:ai]], dtype=np.int64)
        for s in sizes:
            # stack: (A rows, D(., A) over all records, pairs(A), next position in allowed)
            stack = [([a], row(a).copy(), 0.0, 0)]
            while stack:
                A, DA, pairs, p = stack.pop()
                nodes += 1
                need = s - len(A)
                cand = allowed[p:]
                if cand.size < need:
                    continue
                base = pairs / s - pi[A].sum() + cuts.penalty(np.asarray(A))
                e = (DA[cand] + (cums[cand, need - 1] / 2.0 if need > 1 else 0.0)) / s - pi[cand]
                if need == 1:
                    for j in np.flatnonzero(base + e <= S + tol):
                        rows = np.sort(np.asarray(A + [int(cand[j])]))
                        rc = group_cost(Z, rows) - pi[rows].sum() + cuts.penalty(rows)
                        if rc <= S + tol:
                            out.append((rows, float(rc)))
                    continue
                sm = np.partition(e, need - 1)[:need] if e.size > need else np.sort(e)
                sm = np.sort(sm)
                bnd = base + sm[: need - 1].sum() + np.maximum(e, sm[need - 1])
                for j in np.flatnonzero(bnd <= S + tol)[::-1]:
                    l = int(cand[j])
                    stack.append((A + [l], DA + row(l), pairs + float(DA[l]), p + int(j) + 1))
    return out, nodes


def triples_brute(Z, pi, cuts, extreme, S, tol=1e-9):
    """Size 3 by brute force (a check of :func:`groups_within` on the real data): every
    triple holding an extreme record, rc without penalties for all of them (one anchor's
    pairs at a time: O(n^2) memory for n = 834 in an offline script), penalties added to
    those within ``S``."""
    n = Z.shape[0]
    nr = np.einsum("ij,ij->i", Z, Z)
    out = []
    for ai, a in enumerate(extreme):
        al = np.array([v for v in range(n) if v != a and v not in extreme[:ai]], dtype=np.int64)
        Da = _sq(Z, a)[al]
        Dl = np.maximum(nr[al][:, None] + nr[al][None, :] - 2.0 * Z[al] @ Z[al].T, 0.0)
        M = (Da[:, None] + Da[None, :] + Dl) / 3.0 - pi[al][:, None] - pi[al][None, :] - pi[a]
        iu, ju = np.triu_indices(al.size, 1)
        vals = M[iu, ju]
        for q in np.flatnonzero(vals <= S + tol):
            rows = np.sort(np.array([a, al[iu[q]], al[ju[q]]]))
            rc = group_cost(Z, rows) - pi[rows].sum() + cuts.penalty(rows)
            if rc <= S + tol:
                out.append(tuple(int(v) for v in rows))
    return out


def covers_of(extreme, groups, S, tol=1e-9):
    """Every set of disjoint groups (from ``groups``) covering ``extreme`` exactly once each,
    each group holding >= 1 of them, total rc <= ``S``."""
    E = set(int(v) for v in extreme)
    out = []

    def rec(left, chosen, used, tot):
        if not left:
            out.append((tot, list(chosen)))
            return
        o = min(left, key=lambda v: sum(1 for g, _ in groups if v in g))
        for g, r in groups:
            gs = set(int(v) for v in g)
            if o not in gs or tot + r > S + tol or gs & used:
                continue
            if (gs & E) - left:
                continue
            rec(left - gs, chosen + [(g, r)], used | gs, tot + r)

    rec(E, [], set(), 0.0)
    uniq = {}
    for tot, ch in out:
        key = tuple(sorted(tuple(g.tolist()) for g, _ in ch))
        uniq[key] = (tot, ch)
    return sorted(uniq.values(), key=lambda t: t[0])


def branch_bound(Z, keep, members, sets, k, anchor_time, rounds, incumbent_groups, target_sse_sub,
                 max_iters=200, full=False, log=None):
    """Column generation with cuts on the records ``keep`` (local indices ``0..keep.size-1``).
    Returns ``{"bound"`` (the best Lagrangian bound proven on the sub-problem's SSE),
    ``"proven"`` (the last LP's pricing proved no negative group), ``"value"`` (last master),
    ``"why"`` (why it stopped), ``"pool"``, ``"Zs"`` and, from the last master whose pricing was
    proven, ``"pi"``, ``"sigma"``, ``"sets"``, ``"x"``}. Stops as soon as the bound exceeds
    ``target_sse_sub`` unless ``full``."""
    n = Z.shape[0]
    where = -np.ones(n, dtype=np.int64)
    where[keep] = np.arange(keep.size)
    Zs = Z[keep]
    m_ = keep.size
    pool = ColumnPool(m_)
    for r in list(members) + list(incumbent_groups):
        loc = where[np.asarray(r)]
        if np.all(loc >= 0):
            pool.add(loc, group_cost(Zs, loc))
    order = np.argsort(Zs[:, 0], kind="stable")  # a cover always exists: chunks along a coordinate
    starts = list(range(0, k * (m_ // k), k))
    for j, s0 in enumerate(starts):
        r = order[s0:s0 + k] if j < len(starts) - 1 else order[s0:]
        pool.add(r, group_cost(Zs, r))
    loc_sets = [tuple(int(where[v]) for v in t) for t in sets if np.all(where[list(t)] >= 0)]
    existing = set(loc_sets)
    _, nbr = neighbours(Zs, 16)
    best = -np.inf
    sep = 0
    it = 0
    last = None
    state: dict = {}

    def done(why):
        return {"bound": best, "proven": bool(last[1] and last[2] == 0), "value": last[0], "why": why,
                "pool": pool, "Zs": Zs, **state}

    while it < max_iters:
        it += 1
        m = solve_master(pool, loc_sets)
        sigma = m["sigma"]
        cuts = SetRows(m_, [list(s) for s in loc_sets], -sigma)
        found, proven, avals, sb = 0, True, {}, {}
        for s in range(k, 2 * k):
            res = anchored_pricing(Zs, nbr, m["pi"], k, s, time_limit=anchor_time, cuts=cuts)
            proven = proven and res["proven"]
            avals[s], sb[s] = res["anchor_values"], res["bound"]
            for rows, rc in res["columns"][: max(50, m_)]:
                if rc < -1e-9 and pool.add(rows, group_cost(Zs, rows)) is not None:
                    found += 1
        # cut_bound uses sum(sigma): every cut row has right-hand side 1 (triples)
        lag = cut_bound(m["pi"], sigma, avals, sb, k)
        best = max(best, lag)
        if log is not None:
            log(m["value"], lag, proven, found, len(loc_sets))
        last = (m["value"], proven, found)
        if proven and found == 0:
            state.update(pi=m["pi"].copy(), sigma=sigma.copy(), sets=list(loc_sets), value=m["value"], x=m["x"])
        if best > target_sse_sub and not full:
            return done("closed")
        if found:
            continue
        if not proven:
            return done("stopped unproven")
        if sep >= rounds:
            return done("LP proven, rounds done")
        new = separate_triples(pool.members, m["x"], existing=existing, max_cuts=600)
        if not new:
            return done("LP proven, no violated triple")
        for _v, t in new:
            t = tuple(int(r) for r in t)
            existing.add(t)
            loc_sets.append(t)
        sep += 1
    return done("iteration cap")


def branch_mip(Zs, pool, sets, seconds):
    """The sub-problem's set-partitioning MIP over the pool with the cut rows (HiGHS via
    scipy ``milp``): the best partition made of pooled groups and HiGHS's dual bound over the
    pool (NOT a bound over all groups)."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    from .tarr3_cuts5 import set_matrix

    A = pool.matrix()
    c = np.asarray(pool.costs)
    cons = [LinearConstraint(A, 1, 1)]
    if sets:
        B = (set_matrix(sets, pool.n) @ A).tocsr()
        B.data = np.floor(B.data / 2.0)
        B.eliminate_zeros()
        cons.append(LinearConstraint(B, -np.inf, np.array([len(t) // 2 for t in sets], dtype=np.float64)))
    r = milp(c, constraints=cons, integrality=np.ones(c.size), bounds=Bounds(0, 1),
             options={"time_limit": float(seconds), "mip_rel_gap": 0.0, "disp": False})
    if r.x is None:
        return None, getattr(r, "mip_dual_bound", None), r.message
    sel = np.flatnonzero(np.round(r.x) > 0.5)
    return [pool.members[j] for j in sel], getattr(r, "mip_dual_bound", None), r.message


def selftest(seed: int = 0, trials: int = 40) -> None:
    """Brute force on n <= 12: groups_within returns exactly the groups with rc <= S."""
    from pysdcmicro.optimization._pricing import CutRows

    rng = np.random.default_rng(seed)
    total = 0
    for t in range(trials):
        n = int(rng.integers(8, 13))
        Z = rng.normal(size=(n, 3))
        Z[: 2] *= 4.0  # outlying records with large duals, as the extreme ones
        pi = rng.uniform(-0.2, 1.5, n)
        pi[:2] = rng.uniform(5, 40, 2)
        tri = np.array([rng.choice(n, 3, replace=False) for _ in range(int(rng.integers(0, 6)))],
                       dtype=np.int64).reshape(-1, 3)
        cuts = CutRows(n, tri, rng.uniform(0, 3, tri.shape[0]))
        _, nd = neighbours(Z, n)
        cums = np.cumsum(nd, axis=1)
        extreme = [int(v) for v in rng.choice(n, int(rng.integers(1, 4)), replace=False)]
        rcs = {}
        for s in (3, 4, 5):
            for c in itertools.combinations(range(n), s):
                if set(c) & set(extreme):
                    rows = np.array(c)
                    rcs[c] = group_cost(Z, rows) - pi[rows].sum() + cuts.penalty(rows)
        vals = np.sort(np.array(list(rcs.values())))
        j = min(len(vals) - 2, int(rng.integers(0, max(1, len(vals) // 3))))
        S = 0.5 * float(vals[j] + vals[j + 1])  # between two values: no tie with a group's rc
        want = {c for c, r in rcs.items() if r <= S}
        got, _ = groups_within(Z, pi, cuts, cums, extreme, S, tol=0.0)
        got_set = [tuple(int(v) for v in g) for g, _ in got]
        assert len(got_set) == len(set(got_set)), "a group found twice"
        assert set(got_set) == want, (t, sorted(set(got_set) ^ want)[:5])
        total += len(want)
    print(f"selftest: {trials} brute-force instances (n 8..12), {total} groups within S, all equal")


def deep_report(br, Z, keep, fcost, cover, inc, sst, mip_seconds):
    """The incumbent's reduced costs at the branch's last proven duals (where its slack
    sits) and the pool MIP of the branch."""
    from pysdcmicro._partition import sse

    Zs = br["Zs"]
    n = Z.shape[0]
    where = -np.ones(n, dtype=np.int64)
    where[keep] = np.arange(keep.size)
    if "pi" in br and inc:
        pi, sigma, sets = br["pi"], br["sigma"], br["sets"]
        cr = SetRows(keep.size, [list(t) for t in sets], -sigma)
        base = float(pi.sum() + sigma.sum())
        rcs = []
        for g in inc:
            loc = where[np.asarray(g)]
            if np.all(loc >= 0):
                rcs.append((group_cost(Zs, loc) - pi[loc].sum() + cr.penalty(loc), np.asarray(g)))
        inc_sub = sum(group_cost(Zs, where[np.asarray(g)]) for g in inc if np.all(where[np.asarray(g)] >= 0))
        rcs.sort(key=lambda t: -t[0])
        print(f"      incumbent in this branch: IL {100 * (fcost + inc_sub) / sst:.6f}; slack to the branch LP "
              f"{inc_sub - base:.4f} SSE = rc sum {sum(r for r, _ in rcs):.4f} + cut slack; largest rc: "
              + ", ".join(f"{g.tolist()} {r:.4f}" for r, g in rcs[:5]), flush=True)
    if mip_seconds > 0:
        c0 = time.process_time()
        t0 = time.monotonic()
        groups, dual, msg = branch_mip(Zs, br["pool"], br.get("sets", []), mip_seconds)
        if groups is not None:
            lab = np.empty(n, dtype=np.int64)
            for gi, (g, _r) in enumerate(cover):
                lab[g] = gi
            for gi, g in enumerate(groups):
                lab[keep[g]] = len(cover) + gi
            val = sse(Z, lab)
            print(f"      pool MIP ({len(br['pool'])} groups, {len(br.get('sets', []))} cut rows): partition IL "
                  f"{100 * val / sst:.6f}, sizes {np.bincount(lab).min()}..{np.bincount(lab).max()}; dual bound "
                  f"over the pool IL {100 * (fcost + (dual or np.nan)) / sst:.6f}; {msg}; "
                  f"{time.monotonic() - t0:.0f}s wall {time.process_time() - c0:.0f}s cpu", flush=True)
            out = os.environ.get("TARR3_PROOF_LABELS")
            if out:
                np.save(out, lab)
        else:
            print(f"      pool MIP: no partition ({msg})", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("capture", nargs="?")
    ap.add_argument("T", nargs="?", type=float, default=14.46)
    ap.add_argument("--extreme", default="829,831,832,833")
    ap.add_argument("--anchor-time", type=float, default=30.0)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--only", default=None, help="comma-separated branch numbers to run (default: all)")
    ap.add_argument("--enumerate-only", action="store_true")
    ap.add_argument("--full", action="store_true", help="price every branch to its proven LP (no early stop)")
    ap.add_argument("--selftest", action="store_true")
    ap.add_argument("--deep", type=lambda v: {int(x) for x in v.split(",")}, default=None,
                    help="branches to push further: triple rounds until none is violated (--deep-rounds), "
                         "the incumbent's slack there, and the pool MIP (--mip seconds)")
    ap.add_argument("--deep-rounds", type=int, default=30)
    ap.add_argument("--verify-duals", action="store_true",
                    help="first re-price every size 3..5 at the capture's duals (exact, with penalties)")
    ap.add_argument("--mip", type=float, default=0.0)
    ap.add_argument("--labels", default=None, help="the incumbent's labels (its groups seed each branch's pool)")
    a = ap.parse_args()
    if a.selftest:
        selftest()
        return
    t0, c0 = time.monotonic(), time.process_time()
    st = pickle.load(open(a.capture, "rb"))
    Z, k = st["Z"], st["k"]
    n = Z.shape[0]
    sst = float(((Z - Z.mean(0)) ** 2).sum())
    pi, sigma, triples, value = st["res"]["proven_duals"]
    sigma = np.minimum(sigma, 0.0)
    cuts = SetRows(n, [list(t) for t in triples], -sigma)
    lb = float(pi.sum() + sigma.sum())
    target = a.T * sst / 100.0
    S = target - lb
    extreme = [int(v) for v in a.extreme.split(",")]
    cums = np.cumsum(st["nbr_dist"], axis=1)
    print(f"n {n} SST {sst:.6f} LB {lb:.6f} (IL {100 * lb / sst:.6f}); T {a.T} -> SSE {target:.6f}, "
          f"slack S {S:.6f}; extreme {extreme}; load {os.getloadavg()[0]:.1f}", flush=True)
    # Margin: the proven pricing allows reduced costs down to about -1e-9 (float tolerance); a
    # partition has at most n/3 groups, so 1e-6 more slack keeps the lists supersets.
    if a.verify_duals:
        c1, t1 = time.process_time(), time.monotonic()
        for s in range(k, 2 * k):
            res = anchored_pricing(Z, st["nbr_dist"], pi, k, s, time_limit=a.anchor_time, cuts=cuts)
            print(f"    duals check, size {s}: min rc >= {res['bound']:.3e}, proven {res['proven']}, "
                  f"{len(res['columns'])} negative groups", flush=True)
            if not res["proven"] or res["bound"] < -1e-6:
                raise SystemExit("the capture's duals are not proven: the argument does not apply")
        print(f"    duals check: {time.monotonic() - t1:.1f}s wall {time.process_time() - c1:.1f}s cpu", flush=True)
    groups, nodes = groups_within(Z, pi, cuts, cums, extreme, S + 1e-6)
    by_size = np.bincount([g.size for g, _ in groups], minlength=6)[3:]
    print(f"(a) groups holding an extreme record with rc <= S: {len(groups)} (sizes 3/4/5: "
          f"{'/'.join(str(int(v)) for v in by_size)}), search nodes {nodes}; "
          f"{time.monotonic() - t0:.1f}s wall {time.process_time() - c0:.1f}s cpu", flush=True)
    for g, r in sorted(groups, key=lambda t: t[1]):
        print(f"    {g.tolist()} rc {r:.6f} SSE {group_cost(Z, g):.4f}")
    c1 = time.process_time()
    brute = triples_brute(Z, pi, cuts, extreme, S + 1e-6)
    same = set(brute) == {tuple(int(v) for v in g) for g, _ in groups if g.size == 3}
    print(f"    check: brute force over all triples holding an extreme record finds {len(brute)}, "
          f"{'the same' if same else 'DIFFERENT'}; {time.process_time() - c1:.1f}s cpu", flush=True)
    if not same:
        raise SystemExit("the enumeration disagrees with brute force")
    covers = covers_of(extreme, groups, S + 1e-6)
    print(f"(b) covers of {extreme} with total rc <= S: {len(covers)}; "
          f"{time.monotonic() - t0:.1f}s wall {time.process_time() - c0:.1f}s cpu", flush=True)
    for tot, ch in covers:
        print(f"    {[g.tolist() for g, _ in ch]} rc {tot:.6f}")
    if a.enumerate_only:
        return
    members = [np.asarray(r) for r in st["pool_members"]]
    inc = []
    if a.labels:
        from pysdcmicro._partition import canonical_labels, groups_from_labels
        inc = groups_from_labels(canonical_labels(np.load(a.labels)))
    sets = [tuple(int(v) for v in t) for t in triples]
    closed = 0
    only = None if a.only is None else {int(v) for v in a.only.split(",")}
    for bi, (tot, ch) in enumerate(covers):
        if only is not None and bi not in only:
            continue
        b0, bc = time.monotonic(), time.process_time()
        fixed = np.concatenate([g for g, _ in ch])
        fcost = sum(group_cost(Z, g) for g, _ in ch)
        keep = np.setdiff1d(np.arange(n), fixed)
        def log(mv, lag, proven, found, ncuts, fcost=fcost):
            print(f"      master IL {100 * (fcost + mv) / sst:.6f} Lagrangian IL {100 * (fcost + lag) / sst:.6f} "
                  f"pricing proven {proven} +{found} columns, {ncuts} cuts; "
                  f"{time.monotonic() - b0:.0f}s wall", flush=True)

        deep = a.deep is not None and bi in a.deep
        br = branch_bound(Z, keep, members, sets, k, a.anchor_time, a.deep_rounds if deep else a.rounds, inc,
                          target - fcost, full=a.full or deep, log=log)
        bound, proven, mval, why = br["bound"], br["proven"], br["value"], br["why"]
        tot_b = fcost + bound
        ok = tot_b > target
        closed += ok
        print(f"(c) branch {bi}: {[g.tolist() for g, _ in ch]} rc {tot:.6f}: bound IL "
              f"{100 * tot_b / sst:.6f} ({why}; LP proven {proven}; master IL "
              f"{100 * (fcost + mval) / sst:.6f}) -> {'CLOSED' if ok else 'OPEN'}; "
              f"{time.monotonic() - b0:.0f}s wall {time.process_time() - bc:.0f}s cpu; "
              f"load {os.getloadavg()[0]:.1f}", flush=True)
        if deep:
            deep_report(br, Z, keep, fcost, ch, inc, sst, a.mip)
    print(f"closed {closed} of {len(covers)} branches (T {a.T}); {time.monotonic() - t0:.0f}s wall "
          f"{time.process_time() - c0:.0f}s cpu; load {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
