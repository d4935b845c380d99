"""Pricing for the set-partitioning model of microaggregation (Castro, Gentile and
Spagnolo-Arrizabalaga 2022, model (6)-(7)).

A column is a group ``C`` of ``s`` records, ``k <= s <= 2k-1``, with cost
``w_C = SSE(C) = 1/(2s) sum_{i,j in C} D_ij`` (``D`` squared Euclidean distances). With
duals ``pi`` of the covering constraints its reduced cost is ``rc(C) = w_C - pi(C)``.

Three tools live here:

* :func:`neighbours`: the ``L`` nearest records of every record (blocked, O(n L) memory);
* :func:`heuristic_pricing`: from every record, a greedy group over its ``L`` nearest
  records followed by best-improvement swaps, for every size; cheap and vectorised;
* :func:`exact_pricing`: the minimum reduced cost of each size, proven by CP-SAT on a model
  reduced by valid per-record and per-pair bounds, with a safe lower bound whatever
  happens (time-out included);
* :func:`record_bounds`: the cheap valid bound ``min rc_s >= sum of the s smallest
  b_i(s)``, ``b_i(s) = a_i(s)/(2s) - pi_i`` where ``a_i(s)`` is the sum of the ``s-1``
  smallest distances from record ``i``;
* :func:`record_lagrangian` / :func:`record_ascent`: the per-record Lagrangian bound from
  branch and bounds stopped at a node budget, and a monotone dual ascent on it.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from .. import _ortools
from .._context import Deadline as _Deadline

__all__ = ["neighbours", "heuristic_pricing", "exact_pricing", "anchored_pricing", "record_bounds",
           "lagrangian_bound", "enumerate_below", "anchor_relaxation", "anchor_lagrangian_bound",
           "nn_dual", "record_lagrangian", "record_supergradient", "record_ascent"]

_BLOCK_ELEMS = 1 << 22  # entries of a distance block (32 MiB of float64)


def _sqdist(A: np.ndarray, B: np.ndarray, nA: np.ndarray | None = None, nB: np.ndarray | None = None) -> np.ndarray:
    nA = np.einsum("ij,ij->i", A, A) if nA is None else nA
    nB = np.einsum("ij,ij->i", B, B) if nB is None else nB
    D = nA[:, None] - 2.0 * (A @ B.T) + nB[None, :]
    np.maximum(D, 0.0, out=D)
    return D


def neighbours(Z: np.ndarray, L: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``L`` nearest records of each record, itself first, and their squared distances.

    Returns ``(idx, dist)`` of shape (n, L), rows sorted by distance (ties by index).
    Time O(n^2 d), memory O(n L + block): the n x n matrix is never stored.
    """
    n = Z.shape[0]
    L = min(L, n)
    norms = np.einsum("ij,ij->i", Z, Z)
    idx = np.empty((n, L), dtype=np.int64)
    dist = np.empty((n, L))
    step = max(1, _BLOCK_ELEMS // max(n, 1))
    for start in range(0, n, step):
        stop = min(n, start + step)
        D = _sqdist(Z[start:stop], Z, norms[start:stop], norms)
        rows = np.arange(stop - start)
        D[rows, np.arange(start, stop)] = -1.0  # self first
        if L < n:
            part = np.argpartition(D, L - 1, axis=1)[:, :L]
        else:
            part = np.tile(np.arange(n), (stop - start, 1))
        vals = np.take_along_axis(D, part, axis=1)
        order = np.lexsort((part, vals), axis=1)
        idx[start:stop] = np.take_along_axis(part, order, axis=1)
        dist[start:stop] = np.take_along_axis(vals, order, axis=1)
        dist[start:stop, 0] = 0.0
    return idx, dist


def record_bounds(nbr_dist: np.ndarray, pi: np.ndarray, k: int) -> tuple[dict, dict]:
    """Per-size ``b_i(s)`` and the valid bound ``min_{|C|=s} rc(C) >= sum of the s smallest
    b_i(s)``.

    ``rc(C) = sum_{i in C} [1/(2s) sum_{j in C} D_ij - pi_i]`` and each bracket is at least
    ``b_i(s) = a_i(s)/(2s) - pi_i`` with ``a_i(s)`` the sum of the ``s-1`` smallest
    distances from ``i`` to other records. Needs ``nbr_dist`` with at least ``2k-1``
    columns (self first). Returns ``(b, bound)`` dicts keyed by size.
    """
    n = nbr_dist.shape[0]
    cums = np.cumsum(nbr_dist, axis=1)  # cums[:, t] = sum of the t smallest others (self is 0)
    b, bound = {}, {}
    for s in range(k, min(2 * k - 1, n) + 1):
        bs = cums[:, s - 1] / (2.0 * s) - pi
        b[s] = bs
        bound[s] = float(np.sum(np.partition(bs, s - 1)[:s])) if n > s else float(bs.sum())
    return b, bound


def lagrangian_bound(pi: np.ndarray, rc_bounds: dict, n: int) -> float:
    """``sum(pi) + min { sum_s r_s n_s : sum_s s n_s = n, n_s >= 0 integer }``.

    Valid for ANY ``pi`` when ``r_s`` is a lower bound on the reduced cost of every group of
    size ``s`` (every k-partition into groups of k..2k-1 records has ``n_s`` groups of size
    ``s`` with ``sum_s s n_s = n``). At least as strong as ``sum(pi) + floor(n/k) min_s r_s``.
    """
    f = np.full(n + 1, np.inf)
    f[0] = 0.0
    sizes = sorted(rc_bounds)
    for t in range(1, n + 1):
        best = np.inf
        for s in sizes:
            if s <= t and f[t - s] + rc_bounds[s] < best:
                best = f[t - s] + rc_bounds[s]
        f[t] = best
    return float(np.sum(pi) + f[n])


def _candidate_block(Z: np.ndarray, nbr_idx: np.ndarray) -> np.ndarray:
    """Squared distances among the L candidates of each seed in the block: (b, L, L)."""
    P = Z[nbr_idx]  # (b, L, d)
    sq = np.einsum("bld,bld->bl", P, P)
    D = sq[:, :, None] + sq[:, None, :] - 2.0 * np.einsum("bld,bmd->blm", P, P)
    np.maximum(D, 0.0, out=D)
    return D


def heuristic_pricing(Z: np.ndarray, nbr_idx: np.ndarray, pi: np.ndarray, k: int, *,
                      seeds: np.ndarray | None = None, swap_rounds: int = 3,
                      tol: float = 1e-9, deadline=None) -> list[tuple[np.ndarray, float]]:
    """Negative reduced-cost groups found greedily around each seed record.

    For each seed, its ``L`` nearest records are the candidates; starting from the seed,
    the candidate that least increases ``rc`` is added until ``2k-1`` records, and the group
    at every size ``s`` in ``k..2k-1`` is then improved by best-improvement swaps (one
    member out, one candidate in) for up to ``swap_rounds`` rounds. Returns
    ``(rows, rc)`` for every distinct group with ``rc < -tol``, best first. With a
    ``deadline``, seeds are taken in blocks and the blocks left when it expires are skipped
    (a heuristic: fewer columns, nothing to prove).

    Time O(n L^2 (d + k)) per call; memory O(block L^2).
    """
    n = Z.shape[0]
    L = nbr_idx.shape[1]
    smax = min(2 * k - 1, n)
    if seeds is None:
        seeds = np.arange(n)
    found: dict[bytes, tuple[np.ndarray, float]] = {}
    step = max(1, (_BLOCK_ELEMS // 4) // (L * L))
    if deadline is not None:
        step = max(1, min(step, 64))  # a block of 64 seeds: well under a second at k = 10
    for start in range(0, seeds.size, step):
        if deadline is not None and start > 0 and deadline.expired():
            break
        sb = seeds[start:start + step]
        cand = nbr_idx[sb]  # (b, L) candidate record ids, seed first
        D = _candidate_block(Z, cand)
        P = pi[cand]  # (b, L)
        b = sb.size
        ar = np.arange(b)
        chosen = np.zeros((b, L), dtype=bool)
        chosen[:, 0] = True
        acc = D[:, 0, :].copy()  # sum of distances from each candidate to the members
        for m in range(1, smax):
            score = acc - (m + 1) * P
            score[chosen] = np.inf
            j = np.argmin(score, axis=1)
            chosen[ar, j] = True
            acc += D[ar, j, :]
            s = m + 1
            if s >= k:
                cols = _improve_swaps(D, P, chosen.copy(), acc.copy(), s, swap_rounds)
                _collect(cols, D, P, cand, s, found, tol)
    out = sorted(found.values(), key=lambda t: t[1])
    return out


def _improve_swaps(D, P, chosen, acc, s, rounds):
    """Best-improvement swaps on a batch of groups (indicator ``chosen`` over candidates)."""
    b, L = chosen.shape
    ar = np.arange(b)
    for _ in range(rounds):
        # delta(l out, j in) = (acc_j - D_jl - acc_l)/s + P_l - P_j
        acc_in = np.where(chosen, np.inf, acc - s * P)  # candidates j not in C: acc_j - s P_j
        acc_out = np.where(chosen, acc - s * P, np.nan)  # members l: acc_l - s P_l
        # delta * s = acc_j - s P_j - D_jl - (acc_l - s P_l)
        delta = acc_in[:, None, :] - D - acc_out[:, :, None]  # (b, l, j)
        delta = np.where(chosen[:, :, None], delta, np.inf)
        flat = delta.reshape(b, -1)
        best = np.argmin(flat, axis=1)
        val = flat[ar, best]
        improve = val < -1e-12
        if not improve.any():
            break
        rows = ar[improve]
        lo, jin = np.divmod(best[improve], L)
        chosen[rows, lo] = False
        chosen[rows, jin] = True
        acc[rows] += D[rows, jin, :] - D[rows, lo, :]
    return chosen, acc


def _collect(cols, D, P, cand, s, found, tol):
    chosen, acc = cols
    # rc = (1/2 sum_{l in C} acc_l)/s - sum P_l
    pair_sum = 0.5 * np.where(chosen, acc, 0.0).sum(axis=1)
    rc = pair_sum / s - np.where(chosen, P, 0.0).sum(axis=1)
    for r in np.flatnonzero(rc < -tol):
        rows = np.sort(cand[r][chosen[r]])
        key = rows.tobytes()
        if key not in found:
            found[key] = (rows, float(rc[r]))


def _scaled(values: np.ndarray, factor: float, direction: str) -> np.ndarray:
    scaled = values * factor
    out = np.floor(scaled) if direction == "down" else np.ceil(scaled)
    return out.astype(np.int64)


def exact_pricing(Z: np.ndarray, nbr_dist: np.ndarray, pi: np.ndarray, k: int, s: int, *,
                  time_limit: float | None, deterministic_time: float | None, workers: int,
                  seed: int, max_records: int, hint: np.ndarray | None = None,
                  scale_target: float = 1e8) -> dict:
    """Minimum reduced cost over ALL groups of size ``s``, with a proven lower bound.

    Reduction (each step removes only groups that are proven to have ``rc >= 0``):

    * record ``i`` is dropped when ``b_i(s) + (sum of the s-1 smallest b_l, l != i) >= 0``;
    * pair ``(i, j)`` is forbidden when
      ``D_ij/s + (a'_i + a'_j)/(2s) - pi_i - pi_j + B_{s-2} >= 0``, where ``a'_i`` is the
      sum of the ``s-2`` smallest distances from ``i`` and ``B_{s-2}`` the sum of the
      ``s-2`` smallest ``b_l(s)`` (a lower bound on what the other members contribute).

    The remaining model ``min sum_{i<j} D_ij/s x_i x_j - sum_i pi_i x_i, sum x = s`` goes
    to CP-SAT with integer coefficients ``floor(F D_ij / s)`` and ``floor(-F pi_i)``, so the
    integer objective never exceeds ``F rc``: CP-SAT's proven bound divided by ``F`` is a
    valid lower bound on ``min rc`` (the recorded ``factor`` is ``F``). A cut-off
    ``objective <= -1`` asks only for negative columns; an infeasible model proves
    ``min rc >= 0`` over the kept records.

    Returns a dict: ``bound`` (valid lower bound on the min rc over all groups of size s,
    always <= 0 unless proven otherwise), ``column`` (rows of the best group found, or None),
    ``rc`` (its float reduced cost), ``status``, ``records`` (model size), ``pairs``,
    ``factor``, ``proven`` (whether the bound equals the minimum, up to the scaling).
    Uses an (m x m) distance block for the m kept records (m <= ``max_records``).
    """
    n = Z.shape[0]
    cums = np.cumsum(nbr_dist, axis=1)
    bvec = cums[:, s - 1] / (2.0 * s) - pi
    order = np.argsort(bvec, kind="stable")
    smallest = bvec[order[:s]]
    # For each i, the sum of the s-1 smallest b_l over l != i.
    base = float(smallest[: s - 1].sum())
    rest = np.full(n, base)
    in_small = np.zeros(n, dtype=bool)
    in_small[order[: s - 1]] = True
    rest[in_small] = base - bvec[in_small] + bvec[order[s - 1]]
    keep = np.flatnonzero(bvec + rest < 0.0)
    record_bound = float(smallest.sum())
    out = {"bound": record_bound, "column": None, "rc": None, "status": "pruned",
           "records": int(keep.size), "pairs": 0, "factor": None, "proven": False}
    if keep.size < s:
        out.update(bound=max(0.0, record_bound), status="no negative column", proven=True)
        return out
    if keep.size > max_records:
        out["status"] = "too large"
        return out
    Zk = Z[keep]
    Dk = _sqdist(Zk, Zk)
    a2 = cums[keep, s - 2] if s >= 2 else np.zeros(keep.size)  # s-2 smallest distances
    B2 = float(np.sum(np.sort(bvec)[: s - 2])) if s >= 3 else 0.0
    pk = pi[keep]
    test = Dk / s + (a2[:, None] + a2[None, :]) / (2.0 * s) - pk[:, None] - pk[None, :] + B2
    iu, ju = np.triu_indices(keep.size, 1)
    allowed = test[iu, ju] < 0.0
    iu, ju = iu[allowed], ju[allowed]
    out["pairs"] = int(iu.size)
    q = Dk[iu, ju] / s
    biggest = max(float(q.max()) if q.size else 0.0, float(np.abs(pk).max()), 1e-300)
    factor = scale_target / biggest
    Q = _scaled(q, factor, "down")
    lin = _scaled(-pk, factor, "down")
    hint_local = None
    if hint is not None:
        pos = np.searchsorted(keep, hint)
        if np.all(pos < keep.size) and np.all(keep[np.minimum(pos, keep.size - 1)] == hint):
            hint_local = pos
    res = _ortools.cpsat_min_subset(lin, iu, ju, Q, s, upper=-1, hint=hint_local,
                                    time_limit=time_limit, deterministic_time=deterministic_time,
                                    workers=workers, seed=seed)
    out.update(status=res["status"], factor=factor, deterministic_time=res["deterministic_time"])
    bound_scaled = res["bound"]
    if bound_scaled is None:
        cp_bound = -math.inf
    else:
        cp_bound = min(0.0, bound_scaled / factor)  # <= every scaled objective / F <= rc
    # A tiny safety margin for the float division.
    cp_bound -= 1e-12 * (abs(cp_bound) + 1.0)
    out["bound"] = max(out["bound"], cp_bound) if math.isfinite(cp_bound) else out["bound"]
    if res["status"] == "infeasible":
        out["bound"] = max(0.0, record_bound)
        out["proven"] = True
    if res["subset"] is not None:
        rows = keep[res["subset"]]
        G = Z[rows]
        rc = float(((G - G.mean(axis=0)) ** 2).sum() - pi[rows].sum())
        out["column"] = np.sort(rows)
        out["rc"] = rc
        out["proven"] = res["status"] == "optimal"
    return out


def _enumerate_anchor(Dsub: np.ndarray, pis: np.ndarray, s: int, limit_rows: int = 20000,
                      collect: float | None = None, out: list | None = None):
    """Best group {0} + (s-1) of 1..m-1 by complete enumeration; Dsub (m x m) with the anchor
    at position 0. Returns (rc_min, positions). With ``collect``, every group with
    rc <= collect is appended to ``out`` as (positions, rc)."""
    import itertools

    m = Dsub.shape[0]
    best, best_rows = math.inf, None
    it = itertools.combinations(range(1, m), s - 1)
    iu, ju = np.triu_indices(s, 1)
    while True:
        chunk = np.fromiter(itertools.chain.from_iterable(itertools.islice(it, limit_rows)), dtype=np.int64)
        if chunk.size == 0:
            break
        comb = np.concatenate([np.zeros((chunk.size // (s - 1), 1), dtype=np.int64),
                               chunk.reshape(-1, s - 1)], axis=1)
        pair = Dsub[comb[:, iu], comb[:, ju]].sum(axis=1)
        rc = pair / s - pis[comb].sum(axis=1)
        if collect is not None:
            for r in np.flatnonzero(rc <= collect):
                out.append((comb[r].copy(), float(rc[r])))
        r = int(np.argmin(rc))
        if rc[r] < best:
            best, best_rows = float(rc[r]), comb[r].copy()
    return best, best_rows


def anchor_relaxation(Z: np.ndarray, nbr_dist: np.ndarray, pi: np.ndarray, s: int, *,
                      norms: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per-anchor lower bounds ``LB_i`` on the reduced cost of every size-``s`` group whose
    lowest-index member is ``i`` (see :func:`anchored_pricing`), and the sum of the ``s-2``
    smallest ``e_l`` of each anchor. ``LB_i = inf`` where no such group exists.

    Time O(n^2 d) in row blocks, memory O(block n).
    """
    n = Z.shape[0]
    cums = np.cumsum(nbr_dist, axis=1)
    a2 = cums[:, s - 2] if s >= 2 else np.zeros(n)
    norms = np.einsum("ij,ij->i", Z, Z) if norms is None else norms
    step = max(1, _BLOCK_ELEMS // max(n, 1))
    anchor_lb = np.full(n, np.inf)
    sum_small = np.zeros(n)  # sum of the s-2 smallest e per anchor
    cols = np.arange(n)
    if n - 1 < s - 1:
        return anchor_lb, sum_small
    for start in range(0, n, step):
        stop = min(n, start + step)
        D = _sqdist(Z[start:stop], Z, norms[start:stop], norms)
        E = (2.0 * D + a2[None, :]) / (2.0 * s) - pi[None, :]
        E[cols[None, :] <= np.arange(start, stop)[:, None]] = np.inf
        part = np.partition(E, s - 2, axis=1)[:, : s - 1] if s >= 2 else np.zeros((stop - start, 0))
        part.sort(axis=1)
        tot = part.sum(axis=1)
        anchor_lb[start:stop] = -pi[start:stop] + tot
        sum_small[start:stop] = part[:, : s - 2].sum(axis=1) if s >= 3 else 0.0
    return anchor_lb, sum_small


def anchor_lagrangian_bound(pi: np.ndarray, anchor_values: dict, k: int, *, shift: bool = True) -> float:
    """``max_lam [sum(pi) + lam n + (sum of the floor(n/k) most negative r_i(lam))]``,
    ``r_i(lam) = min(0, min_s (v_s[i] - lam s))``.

    Valid for ANY ``pi`` and any ``lam`` when ``v_s[i]`` bounds from below the reduced cost
    of every size-``s`` group whose lowest-index member is ``i`` (``inf``: no such group).
    Proof: the groups of a partition cover the ``n`` records once, so ``sum_C rc(C) = lam n
    + sum_C (rc(C) - lam |C|)``; each term is at least ``r_anchor(lam)`` (<= 0); the groups
    have distinct lowest-index members and there are at most ``floor(n/k)`` of them, so the
    terms add up to at least the ``floor(n/k)`` most negative ``r_i(lam)``; and the optimum
    is ``sum(pi) + sum_C rc(C)`` for an optimal partition. (It is the bound at the uniformly
    shifted duals ``pi + lam``.) ``lam = 0`` charges each anchor once, not the worst one
    ``n/k`` times, as :func:`lagrangian_bound` does; the best ``lam`` is found by a ternary
    search (the expression is concave in ``lam``). ``shift=False``: ``lam = 0`` only.
    """
    n = pi.size
    g = n // k
    sizes = sorted(anchor_values)
    V = np.stack([np.where(np.isfinite(anchor_values[s]), anchor_values[s], np.inf) for s in sizes])
    S = np.asarray(sizes, dtype=np.float64)[:, None]

    def value(lam: float) -> float:
        r = np.minimum(0.0, np.min(V - lam * S, axis=0))
        part = np.partition(r, g - 1)[:g] if 0 < g < n else r
        return float(lam * n + np.sum(part))

    best = value(0.0)
    if not shift:
        return float(np.sum(pi) + best)
    finite = V[np.isfinite(V)]
    big = float(np.abs(finite).max()) if finite.size else 0.0
    if big > 0.0:
        lo, hi = -big / k - 1e-12, big + 1e-12
        for _ in range(60):
            a, b = lo + (hi - lo) / 3.0, hi - (hi - lo) / 3.0
            if value(a) < value(b):
                lo = a
            else:
                hi = b
        best = max(best, value(0.5 * (lo + hi)))
    return float(np.sum(pi) + best)


def nn_dual(nbr_dist: np.ndarray, k: int) -> np.ndarray:
    """A dual-feasible point of model (6)-(7) from nearest neighbours alone:
    ``u_i = min_{k <= s <= 2k-1} a_i(s) / (2s)``, ``a_i(s)`` the sum of the ``s-1``
    smallest squared distances from record ``i``.

    Every group ``C`` of size ``s`` has ``SSE(C) = sum_{i in C} (1/(2s)) sum_{j in C} D_ij
    >= sum_{i in C} a_i(s)/(2s) >= u(C)``, so ``u`` prices no column negative and
    ``sum(u)`` is a lower bound on the optimal SSE (on every k-partition: an optimal one
    has groups of k..2k-1 records). Needs ``nbr_dist`` with at least ``2k-1`` columns
    (self first). O(n k).
    """
    n = nbr_dist.shape[0]
    cums = np.cumsum(nbr_dist, axis=1)
    sizes = range(k, min(2 * k - 1, n) + 1)
    return np.min(np.stack([cums[:, s - 1] / (2.0 * s) for s in sizes]), axis=0)


def _anchor_value(res: dict, relaxed: float, Z: np.ndarray, pi: np.ndarray, members: np.ndarray,
                  columns: list, cuts: CutRows | None = None) -> float:
    """An anchor's bound from a branch-and-bound result (:func:`branch_and_bound_anchor`):
    its minimum (clipped at 0, lowered by a float margin) when complete, else the larger of
    the search's open-node bound and the relaxation bound ``relaxed``. Appends the groups
    found (as record rows, with their reduced cost recomputed in the centroid form) that are
    negative to ``columns``."""
    val = min(0.0, res["value"])
    val -= 1e-12 * (abs(val) + 1.0)
    for pos, _v in res["columns"]:
        rows = np.sort(members[pos])
        G = Z[rows]
        rc = float(((G - G.mean(axis=0)) ** 2).sum() - pi[rows].sum())
        if cuts is not None:
            rc += cuts.penalty(rows)
        if rc < -1e-9:
            columns.append((rows, rc))
    return val if res["complete"] else max(relaxed, val)


class CutRows:
    """Subset-row cuts on triples for pricing: cut ``T`` (a row of ``triples``) with weight
    ``w_T = -sigma_T >= 0`` (``sigma_T <= 0`` its dual in the master) adds
    ``w_T floor(|C cap T| / 2)`` to the reduced cost of a group ``C``; per record the list
    of cuts it is in (CSR: ``ptr``, ``idx``)."""

    def __init__(self, n: int, triples: np.ndarray, weights: np.ndarray):
        triples = np.asarray(triples, dtype=np.int64).reshape(-1, 3)
        self.n = n
        self.triples = triples
        self.weights = np.ascontiguousarray(np.maximum(np.asarray(weights, dtype=np.float64), 0.0))
        flat = triples.ravel()
        order = np.argsort(flat, kind="stable")
        self.idx = np.ascontiguousarray((order // 3).astype(np.int64))
        self.ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(flat, minlength=n), out=self.ptr[1:])

    def penalty(self, rows: np.ndarray) -> float:
        rows = np.asarray(rows, dtype=np.int64)
        ids = np.concatenate([self.idx[self.ptr[r]:self.ptr[r + 1]] for r in rows]) if rows.size else self.idx[:0]
        if ids.size == 0:
            return 0.0
        cnt = np.bincount(ids, minlength=self.weights.size)
        return float(np.dot(self.weights, cnt // 2))

    def local(self, members: np.ndarray) -> tuple:
        """The kernel's per-member CSR for ``members`` (global cut ids), and the weights."""
        members = np.asarray(members, dtype=np.int64)
        lens = self.ptr[members + 1] - self.ptr[members]
        cptr = np.zeros(members.size + 1, dtype=np.int64)
        np.cumsum(lens, out=cptr[1:])
        start = np.repeat(self.ptr[members], lens)
        offs = np.arange(int(cptr[-1]), dtype=np.int64) - np.repeat(cptr[:-1], lens)
        return cptr, np.ascontiguousarray(self.idx[start + offs]), self.weights


def anchored_pricing(Z: np.ndarray, nbr_dist: np.ndarray, pi: np.ndarray, k: int, s: int, *,
                     deadline=None, enumerate_limit: int = 100_000,
                     time_limit: float | None = None, deterministic_time: float | None = None,
                     workers: int = 1, seed: int = 0, scale_target: float = 1e8,
                     max_anchors: int | None = None, max_found: int | None = None,
                     max_records: int = 500, anchor_solver: str = "bb",
                     node_limit: int | None = None, bb_max_records: int = 3000,
                     per_anchor: int = 3, compiled: bool = True, cuts: CutRows | None = None) -> dict:
    """Minimum reduced cost over ALL groups of size ``s``, anchor by anchor, with a proven
    lower bound.

    Every group ``C`` is anchored at its lowest-index member ``i``. For the other members
    ``l`` (all ``> i``), with ``a'_l`` the sum of the ``s-2`` smallest distances from ``l``,

        rc(C) >= -pi_i + sum_{l in C \\ i} e_l,   e_l = (2 D_il + a'_l) / (2s) - pi_l,

    because the terms of ``i`` and ``l`` in ``rc(C) = sum_{u in C}[1/(2s) sum_{v in C} D_uv -
    pi_u]`` both contain ``D_il/(2s)`` and ``l``'s other distances are at least its
    ``s-2`` smallest. Hence the anchor bound ``LB_i = -pi_i + (sum of the s-1 smallest
    e_l)``: anchors with ``LB_i >= 0`` hold no negative group, and inside an anchor only the
    records ``l`` with ``-pi_i + e_l + (sum of the s-2 smallest other e) < 0`` can be in a
    negative group. Each remaining anchor is solved exactly, by complete enumeration when
    ``C(m, s-1) <= enumerate_limit``, else by CP-SAT (integer-scaled, coefficients rounded
    down, the anchor fixed in), whose proven bound is used when it stops early. An anchor not
    reached (deadline, ``max_anchors``) or with more than ``max_records`` records left for
    CP-SAT contributes its ``LB_i``.

    With ``cuts`` (:class:`CutRows`) the reduced cost includes the subset-row penalties
    (``rc(C) = SSE(C) - pi(C) + sum_T w_T floor(|C cap T|/2)``); they are >= 0, so every bound
    above stays valid and only the compiled search (which adds them, see :mod:`._bb_numba`)
    may run: without it, ``cuts`` raises.

    Returns ``bound`` (valid lower bound on the min rc of size-``s`` groups), ``columns``
    (negative groups found, one per anchor, as (rows, rc)), ``proven`` (bound equals the
    minimum, i.e. every anchor was solved to optimality), ``anchors`` (active anchors),
    ``solved``, ``cpsat_calls``, ``factor`` (smallest CP-SAT scaling factor used).
    Time O(n^2 d) for the anchor bounds (row blocks, O(block n) memory) plus the anchors.
    """
    n = Z.shape[0]
    cums = np.cumsum(nbr_dist, axis=1)
    a2 = cums[:, s - 2] if s >= 2 else np.zeros(n)
    norms = np.einsum("ij,ij->i", Z, Z)
    anchor_lb, sum_small = anchor_relaxation(Z, nbr_dist, pi, s, norms=norms)
    active = np.flatnonzero(anchor_lb < 0.0)
    active = active[np.argsort(anchor_lb[active], kind="stable")]
    anchor_val = anchor_lb.copy()
    columns = []
    solved = 0
    cp_calls = 0
    factors = []
    proven = True
    bb_nodes = 0
    rate = _RATE  # nodes per wall second of the compiled search, measured as it runs
    points_kernel = _bb_kernel(points=True, deadline=deadline) if (anchor_solver == "bb" and compiled) else None
    if cuts is not None:
        points_kernel = _bb_kernel(points=True, deadline=deadline, cuts=True) if compiled else None
        if points_kernel is None or anchor_solver != "bb":
            raise RuntimeError("pricing with subset-row cuts needs the compiled branch and bound")
    for count, i in enumerate(active):
        if (deadline is not None and deadline.expired()) or (max_anchors is not None and count >= max_anchors) \
                or (max_found is not None and len(columns) >= max_found):
            proven = False
            break
        Di = np.maximum(norms[i] - 2.0 * (Z @ Z[i]) + norms, 0.0)
        e = (2.0 * Di + a2) / (2.0 * s) - pi
        e[: i + 1] = np.inf
        cand = np.flatnonzero(e + sum_small[i] - pi[i] < 0.0)
        if s >= 3:
            extra = np.argpartition(e, s - 3)[: s - 2] if n - i - 1 >= s - 2 else np.array([], dtype=np.int64)
            cand = np.union1d(cand, extra[np.isfinite(e[extra])])
        if points_kernel is not None:
            # Compiled search straight from the points: candidates by their bound e_l, the
            # pair bound from each candidate's s-2 nearest records overall (no m x m block;
            # on full Tarragona k = 5 building and tightening the blocks took 97 % of a round).
            if cand.size < s - 1:
                anchor_val[i] = 0.0
                solved += 1
                continue
            cand = cand[np.argsort(e[cand], kind="stable")]
            members = np.concatenate([[i], cand])
            res = _bb_points(points_kernel, Z[members], pi[members], cums[cand, :s], s,
                             node_limit=node_limit if node_limit is not None else (
                                 None if deterministic_time is None else int(deterministic_time * 200_000)),
                             deadline=deadline if time_limit is None else (
                                 deadline.child(time_limit) if deadline is not None else _Deadline(time_limit)),
                             keep=per_anchor, rate=rate,
                             extra=() if cuts is None else cuts.local(members))
            bb_nodes += res["nodes"]
            anchor_val[i] = _anchor_value(res, anchor_lb[i], Z, pi, members, columns, cuts)
            if res["complete"]:
                solved += 1
            else:
                proven = False
            continue
        # Tighten: the other s-2 members of l's group lie in the candidate set (or are the
        # anchor), so a'_l can be taken over those only; repeat while the set shrinks.
        members = np.concatenate([[i], cand])
        Dsub = None
        for _ in range(6):
            if cand.size < s - 1:
                break
            members = np.concatenate([[i], cand])
            Zm = Z[members]
            Dsub = _sqdist(Zm, Zm)
            if s < 3:
                break
            Dl = Dsub[1:].copy()  # rows: candidates; columns: anchor + candidates
            Dl[np.arange(cand.size), np.arange(1, cand.size + 1)] = np.inf  # not itself
            a_loc = np.sum(np.partition(Dl, s - 3, axis=1)[:, : s - 2], axis=1)
            e_loc = (2.0 * Dsub[0, 1:] + a_loc) / (2.0 * s) - pi[cand]
            small = np.sort(e_loc)[: s - 1]
            if -pi[i] + small.sum() >= 0.0:
                cand = cand[:0]
                break
            thr = pi[i] - small[: s - 2].sum()
            keep = (e_loc < thr) | (e_loc <= small[s - 3])
            if keep.all():
                break
            cand = cand[keep]
        if cand.size < s - 1:
            anchor_val[i] = 0.0  # every group at this anchor is provably non-negative
            solved += 1
            continue
        if Dsub is None or Dsub.shape[0] != cand.size + 1:
            members = np.concatenate([[i], cand])
            Zm = Z[members]
            Dsub = _sqdist(Zm, Zm)
        pis = pi[members]
        if anchor_solver == "bb":
            if members.size > bb_max_records:
                proven = False  # keeps its relaxation bound
                continue
            from .._context import Deadline

            limit = node_limit
            if limit is None and deterministic_time is not None:
                limit = int(deterministic_time * 200_000)
            dl = deadline
            if time_limit is not None:
                dl = deadline.child(time_limit) if deadline is not None else Deadline(time_limit)
            kernel = _bb_kernel(deadline=deadline) if compiled else None
            if kernel is not None:
                res = _bb_compiled(kernel, Dsub, pis, s, node_limit=limit, deadline=dl, keep=per_anchor,
                                   rate=rate)
            else:
                res = branch_and_bound_anchor(Dsub, pis, s, node_limit=limit, deadline=dl, keep=per_anchor)
            bb_nodes += res["nodes"]
            anchor_val[i] = _anchor_value(res, anchor_lb[i], Z, pi, members, columns)
            if res["complete"]:
                solved += 1
            else:
                proven = False
            continue
        if math.comb(cand.size, s - 1) <= enumerate_limit:
            val, pos = _enumerate_anchor(Dsub, pis, s)
            anchor_val[i] = min(0.0, val)
            solved += 1
            if val < -1e-9:
                rows = np.sort(members[pos])
                G = Z[rows]
                columns.append((rows, float(((G - G.mean(axis=0)) ** 2).sum() - pi[rows].sum())))
            continue
        m = members.size
        if m > max_records:
            # Too large a model: building its m^2/2 pair terms alone outlasts any per-call
            # limit (full EIA, k = 10: anchors with ~4000 candidates overran a 600-s run by
            # 300 s). The anchor keeps its relaxation bound, unproven.
            proven = False
            continue
        iu, ju = np.triu_indices(m, 1)
        q = Dsub[iu, ju] / s
        biggest = max(float(q.max()), float(np.abs(pis).max()), 1e-300)
        factor = scale_target / biggest
        factors.append(factor)
        Q = _scaled(q, factor, "down")
        lin = _scaled(-pis, factor, "down")
        res = _ortools.cpsat_min_subset(lin, iu, ju, Q, s, upper=-1, fixed=0,
                                        time_limit=time_limit, deterministic_time=deterministic_time,
                                        workers=workers, seed=seed)
        cp_calls += 1
        big = 0
        if res["status"] == "infeasible":
            anchor_val[i] = 0.0
            solved += 1
        else:
            b = res["bound"]
            val = min(0.0, (b + big) / factor) if b is not None and math.isfinite(b) else anchor_lb[i]
            val -= 1e-12 * (abs(val) + 1.0)
            anchor_val[i] = max(anchor_lb[i], val)
            if res["status"] == "optimal":
                solved += 1
            else:
                proven = False
            if res["subset"] is not None:
                rows = np.sort(members[res["subset"]])
                if rows.size == s and i in rows:
                    G = Z[rows]
                    rc = float(((G - G.mean(axis=0)) ** 2).sum() - pi[rows].sum())
                    if rc < -1e-9:
                        columns.append((rows, rc))
    finite = anchor_val[np.isfinite(anchor_val)]
    bound = float(finite.min()) if finite.size else 0.0
    columns.sort(key=lambda t: t[1])
    return {"bound": bound, "columns": columns, "proven": proven, "anchors": int(active.size),
            "solved": solved, "cpsat_calls": cp_calls, "factor": min(factors) if factors else None,
            "anchor_values": anchor_val, "bb_nodes": bb_nodes}


def enumerate_below(Z: np.ndarray, nbr_dist: np.ndarray, pi: np.ndarray, k: int, s: int,
                    threshold: float, *, enumerate_limit: int = 300_000, max_columns: int = 200_000,
                    deadline=None, budget: int = 2_000_000) -> tuple[list, bool]:
    """Every group of size ``s`` with reduced cost <= ``threshold`` (>= 0), anchor by anchor.

    The anchor bounds of :func:`anchored_pricing` with 0 replaced by ``threshold`` discard
    anchors and candidates that cannot reach it; each remaining anchor is enumerated
    completely. Returns ``(groups, complete)``: ``complete`` is False when an anchor was too
    large to enumerate, the deadline passed or ``max_columns`` was reached (the groups found
    are still returned) or when more than ``budget`` groups in all would have to be looked at.
    """
    n = Z.shape[0]
    cums = np.cumsum(nbr_dist, axis=1)
    a2 = cums[:, s - 2] if s >= 2 else np.zeros(n)
    norms = np.einsum("ij,ij->i", Z, Z)
    found: list = []
    complete = True
    work = 0
    for i in range(n - s + 1):
        if deadline is not None and deadline.expired():
            return found, False
        Di = np.maximum(norms[i] - 2.0 * (Z @ Z[i]) + norms, 0.0)
        e = (2.0 * Di + a2) / (2.0 * s) - pi
        e[: i + 1] = np.inf
        order = np.sort(e)[: s - 1]
        if not np.all(np.isfinite(order)) or -pi[i] + order.sum() > threshold:
            continue
        thr = threshold + pi[i] - order[: s - 2].sum()
        cand = np.flatnonzero((e <= thr) | (e <= order[-1]))
        cand = cand[np.isfinite(e[cand])]
        if cand.size < s - 1:
            continue
        count = math.comb(cand.size, s - 1)
        if count > enumerate_limit:
            complete = False
            continue
        work += count
        if work > budget:
            return found, False
        members = np.concatenate([[i], cand])
        Zm = Z[members]
        Dsub = _sqdist(Zm, Zm)
        got: list = []
        _enumerate_anchor(Dsub, pi[members], s, collect=threshold, out=got)
        for pos, rc in got:
            found.append((np.sort(members[pos]), rc))
        if len(found) > max_columns:
            return found, False
    return found, complete


_KERNEL: list = []
#: Nodes per wall second of the compiled search, shared by every call in the process (a fresh
#: estimate per call started each one at the quiet-machine rate); see :func:`_run_kernel`.
_RATE: list = [200_000.0, False]  # (nodes per second, measured yet)
#: A kernel that is not compiled yet (not in this process, no current numba disk cache) is
#: compiled only when the deadline leaves at least this many seconds: compiling
#: ``bb_anchor_points`` took 28 s of wall time on the 2-core machine (``bb_anchor`` 5 s) and
#: cannot be interrupted, so a short time-limited run (decomposition's subsets, auto's
#: worker) would overrun its limit by that much; it uses the numpy search instead.
COMPILE_MIN_SECONDS = 120.0
IMPORT_MIN_SECONDS = 10.0


def _warm(fn) -> bool:
    """True when calling the compiled ``fn`` costs no compilation (see ``_mdav_numba.warm``)."""
    if fn.signatures:
        return True
    try:
        return bool(fn._cache._cache_file._load_index())
    except Exception:  # pragma: no cover  (numba internals moved: treat as cold)
        return False


def _bb_kernel(points: bool = False, deadline=None, cuts: bool = False):
    """The compiled branch and bound (:mod:`._bb_numba`; ``points``: the variant computing
    distances from the points; ``cuts``: that variant with subset-row cut penalties), or None without numba, or when it still needs compiling and
    ``deadline`` leaves less than :data:`COMPILE_MIN_SECONDS` (or numba is not imported yet
    and it leaves less than :data:`IMPORT_MIN_SECONDS`: the import costs about a second of
    CPU that no deadline can interrupt, a minute of wall time on a starved core)."""
    if not _KERNEL:
        if deadline is not None and "numba" not in sys.modules and deadline.remaining() < IMPORT_MIN_SECONDS:
            return None
        try:
            from . import _bb_numba

            _KERNEL.extend([_bb_numba.bb_anchor, _bb_numba.bb_anchor_points, _bb_numba.bb_anchor_points_cuts])
        except Exception:  # numba missing or unusable: the numpy search serves
            _KERNEL.extend([None, None, None])
    kernel = _KERNEL[2 if cuts else (1 if points else 0)]
    if kernel is not None and deadline is not None and deadline.remaining() < COMPILE_MIN_SECONDS \
            and not _warm(kernel):
        return None
    if kernel is not None and deadline is not None and not kernel.signatures \
            and deadline.remaining() < IMPORT_MIN_SECONDS:
        # Cached on disk but not loaded in this process: loading costs about a second of CPU
        # that no deadline can interrupt (a starved bound search ran 11 s past its deadline).
        return None
    return kernel


def _run_kernel(kernel, X: np.ndarray, pis: np.ndarray, A: np.ndarray, s: int, *,
                node_limit: int | None, deadline, keep: int, rate: list, best: float, extra: tuple = ()) -> tuple:
    """One call of a compiled kernel; the deadline as a node budget at the measured node
    rate (``rate[0]``, nodes per second, updated here: the kernel cannot read a clock).
    Returns ``(value, complete, nodes, positions)``, positions (candidate indices, 0-based)
    of the kept groups, best first."""
    import time

    limit = node_limit if node_limit is not None else 1 << 62
    if deadline is not None:
        rem = deadline.remaining()
        if math.isfinite(rem):
            limit = min(limit, max(1000, int(rem * rate[0])))
            if len(rate) > 1 and not rate[1]:
                # Not measured yet in this process: a first budget of 20,000 nodes measures
                # the rate (the quiet-machine guess, 200,000 per second, gave a search 10 s
                # past its deadline at a tenth of a core).
                limit = min(limit, 20_000)
    loaded = bool(getattr(kernel, "signatures", True))  # else this call compiles or loads it
    t0 = time.perf_counter()
    value, complete, nodes, fval, fpos, nf = kernel(np.ascontiguousarray(X, dtype=np.float64),
                                                    np.ascontiguousarray(pis, dtype=np.float64), s,
                                                    np.ascontiguousarray(A, dtype=np.float64),
                                                    float(best), int(limit), int(keep), *extra)
    dt = time.perf_counter() - t0
    if nodes >= 20_000 and dt > 0 and loaded:
        # Down at once, up slowly: on a starved core the wall rate falls twentyfold, and a
        # budget from the quiet-machine rate ran a bound search 197 s past its deadline
        # (full EIA, k = 10, nice 19 at load 11).
        measured = nodes / dt
        first = len(rate) > 1 and not rate[1]
        rate[0] = measured if (first or measured < rate[0]) else 0.8 * rate[0] + 0.2 * measured
        if len(rate) > 1:
            rate[1] = True
    return float(value), bool(complete), int(nodes), [(fpos[j, :s - 1], float(fval[j])) for j in range(nf)]


def _bb_points(kernel, P: np.ndarray, pis: np.ndarray, A: np.ndarray, s: int, *,
               node_limit: int | None, deadline, keep: int, rate: list, best: float = 0.0,
               extra: tuple = ()) -> dict:
    """The compiled search on points ``P`` (anchor first, candidates in their order) with
    pair bounds ``A`` (c x s, cumulated: ``A[l, r]`` <= the r smallest distances from
    candidate l to the others); the result dict of :func:`branch_and_bound_anchor`
    (positions into ``P``). Deadline as a node budget (see :func:`_run_kernel`)."""
    out = {"value": best, "complete": True, "columns": [], "nodes": 0}
    if P.shape[0] - 1 < s - 1:
        return out
    value, complete, nodes, found = _run_kernel(kernel, P, pis, A, s, node_limit=node_limit,
                                                deadline=deadline, keep=keep, rate=rate, best=best, extra=extra)
    out.update(value=value, complete=complete, nodes=nodes)
    out["columns"] = [(np.concatenate([[0], 1 + pos]), v) for pos, v in found]
    return out


def _bb_prepare(Dsub: np.ndarray, pis: np.ndarray, s: int):
    """Candidates in increasing order of their single-record bound, and ``A`` (c x s): the
    cumulated smallest distances from each candidate to the other candidates."""
    c = Dsub.shape[0] - 1
    rough = (2.0 * Dsub[0, 1:] + np.partition(Dsub[1:, 1:], min(s - 2, c - 1), axis=1)[:, :s - 1].sum(axis=1)) \
        / (2.0 * s) - pis[1:]
    perm = np.argsort(rough, kind="stable")
    full = np.concatenate([[0], 1 + perm])
    D = np.ascontiguousarray(Dsub[np.ix_(full, full)])
    p = np.ascontiguousarray(pis[full])
    A = np.zeros((c, s))
    if s >= 3 and c >= 2:
        Dn = D[1:, 1:].copy()
        np.fill_diagonal(Dn, np.inf)
        r = min(s - 2, c - 1)
        small = np.sort(np.partition(Dn, r - 1, axis=1)[:, :r], axis=1)
        A[:, 1:r + 1] = np.cumsum(small, axis=1)
    return D, p, A, perm


def _bb_compiled(kernel, Dsub: np.ndarray, pis: np.ndarray, s: int, *, node_limit: int | None,
                 deadline, keep: int, rate: list, best: float = 0.0) -> dict:
    """:func:`branch_and_bound_anchor` by the compiled kernel: same result dict; a search
    stopped by its budget (the deadline as a node budget, see :func:`_run_kernel`) returns
    its open nodes' least bound, as the numpy search does."""
    out = {"value": best, "complete": True, "columns": [], "nodes": 0}
    c = Dsub.shape[0] - 1
    if c < s - 1:
        return out
    D, p, A, perm = _bb_prepare(Dsub, pis, s)
    value, complete, nodes, found = _run_kernel(kernel, D, p, A, s, node_limit=node_limit,
                                                deadline=deadline, keep=keep, rate=rate, best=best)
    out.update(value=value, complete=complete, nodes=nodes)
    out["columns"] = [(np.concatenate([[0], 1 + perm[pos]]), v) for pos, v in found]
    return out


def branch_and_bound_anchor(Dsub: np.ndarray, pis: np.ndarray, s: int, *, best: float = 0.0,
                            node_limit: int | None = None, deadline=None, keep: int = 3,
                            batch_elems: int = 1 << 18) -> dict:
    """Minimum reduced cost of a group ``{0} + (s-1) of 1..m-1`` (position 0 is the anchor),
    by a branch and bound over the candidates; only values below ``best`` (default 0)
    matter.

    Members are added in the order of the candidates (sorted by their single-record bound,
    a reduced-cost order), so a node is a partial group ``P`` (the anchor and ``m-1``
    candidates, the last at position ``q``) whose completions use candidates after ``q``.
    With ``t = s - |P|`` members still to add and ``acc_l = sum_{u in P} D_ul``,

        rc(P + N) = rc_part(P) + sum_{l in N} (acc_l / s - pi_l) + pairs(N) / s
                  >= rc_part(P) + sum_{l in N} g_l,   g_l = (acc_l + A_l(t-1)/2) / s - pi_l,

    ``rc_part(P) = pairs(P)/s - pi(P)`` and ``A_l(r)`` the sum of the ``r`` smallest
    distances from ``l`` to the other candidates (each new member has ``t-1`` partners among
    the new ones: the sorted-distance bound of Aloise et al. 2014). A child ``P + l`` is
    bounded by ``rc_part(P) + max(S_t, g_l + S_{t-1})`` with ``S_r`` the sum of the ``r``
    smallest ``g`` after ``q`` (the other ``t-1`` new members are among them, ``l``
    excluded), and pruned when that is ``>= best``. Nodes are expanded in vectorised batches,
    depth first, most promising batch first.

    Returns ``value`` (a valid lower bound on the minimum, ``min(best, ...)``: exact when
    ``complete``), ``complete``, ``columns`` (up to ``keep`` groups below the initial
    ``best``, as (positions, rc), best first) and ``nodes`` (expanded).
    """
    m = Dsub.shape[0]
    c = m - 1
    out = {"value": best, "complete": True, "columns": [], "nodes": 0}
    if c < s - 1:
        return out
    # Candidates in increasing order of their single-record bound (a reduced-cost order).
    rough = (2.0 * Dsub[0, 1:] + np.partition(Dsub[1:, 1:], min(s - 2, c - 1), axis=1)[:, :s - 1].sum(axis=1)) \
        / (2.0 * s) - pis[1:]
    perm = np.argsort(rough, kind="stable")
    full = np.concatenate([[0], 1 + perm])
    Dsub = Dsub[np.ix_(full, full)]
    pis = pis[full]
    Dc = Dsub[1:, 1:]
    pc = pis[1:]
    # A_l(r): the r smallest distances from l to the other candidates, cumulated (A[:, 0] = 0).
    if s >= 3 and c >= 2:
        Dn = Dc.copy()
        np.fill_diagonal(Dn, np.inf)
        r = min(s - 2, c - 1)
        small = np.sort(np.partition(Dn, r - 1, axis=1)[:, :r], axis=1)
        A = np.zeros((c, s - 1))
        A[:, 1:r + 1] = np.cumsum(small, axis=1)
    else:
        A = np.zeros((c, max(s - 1, 1)))
    # Stack of batches: (bound, last, acc, cost, members), depth = members' width + 1.
    start_bound = -math.inf
    stack = [(np.array([start_bound]), np.array([-1]), Dsub[0:1, 1:].copy(), np.array([-pis[0]]),
              np.zeros((1, 0), dtype=np.int64))]
    found: list = []
    pos = np.arange(c)
    nodes = 0
    while stack:
        if (node_limit is not None and nodes >= node_limit) or (deadline is not None and deadline.expired()):
            out["complete"] = False
            break
        bnd, last, acc, cost, mem = stack.pop()
        live = bnd < best
        if not live.all():
            bnd, last, acc, cost, mem = bnd[live], last[live], acc[live], cost[live], mem[live]
        F = bnd.size
        if F == 0:
            continue
        nodes += F
        t = s - 1 - mem.shape[1]  # members still to add
        G = (acc + 0.5 * A[:, t - 1][None, :]) / s - pc[None, :]
        G[pos[None, :] <= last[:, None]] = np.inf
        if t == 1:
            vals = cost[:, None] + G
            flat = np.flatnonzero(vals.ravel() < best)
            if flat.size:
                f, l = np.divmod(flat, c)
                v = vals[f, l]
                order = np.argsort(v, kind="stable")[:keep]
                for o in order:
                    found.append((np.concatenate([mem[f[o]], [l[o]]]), float(v[o])))
                found.sort(key=lambda z: z[1])
                del found[keep:]
                best = min(best, float(v[order[0]]))
            continue
        part = np.sort(np.partition(G, t - 1, axis=1)[:, :t], axis=1)
        St = part.sum(axis=1)
        St1 = St - part[:, t - 1]
        child = cost[:, None] + np.maximum(St[:, None], G + St1[:, None])
        child[:, pos > c - t] = np.inf  # no room left after l for the other t-1 members
        flat = np.flatnonzero(child.ravel() < best)
        if flat.size == 0:
            continue
        f, l = np.divmod(flat, c)
        cb = child[f, l]
        order = np.argsort(cb, kind="stable")
        f, l, cb = f[order], l[order], cb[order]
        step = max(1, batch_elems // c)
        chunks = []
        for a in range(0, f.size, step):
            ff, ll = f[a:a + step], l[a:a + step]
            chunks.append((cb[a:a + step], ll, acc[ff] + Dc[ll], cost[ff] + acc[ff, ll] / s - pc[ll],
                           np.concatenate([mem[ff], ll[:, None]], axis=1)))
        stack.extend(reversed(chunks))
    if not out["complete"]:
        open_min = min((float(b.min()) for b, *_ in stack if b.size), default=math.inf)
        out["value"] = min(best, open_min)
    else:
        out["value"] = best
    out["nodes"] = nodes
    out["columns"] = [(np.concatenate([[0], 1 + perm[p]]), v) for p, v in found]
    return out


def record_lagrangian(Z: np.ndarray, nbr_dist: np.ndarray, pi: np.ndarray, k: int, *,
                      node_limit: int = 2000, deadline=None, upper: np.ndarray | None = None,
                      hints: list | None = None, probes: int = 6, floor: float | None = None,
                      compiled: bool = True, starts: np.ndarray | None = None,
                      threads: int | None = None) -> dict:
    """The per-record Lagrangian bound at ANY duals ``pi``, from truncated pricing:

        optimum >= sum_i pi_i + sum_i m_i,   m_i <= min over groups C containing i of rc(C)/|C|,

    groups of ``k..2k-1`` records, ``rc(C) = SSE(C) - pi(C)``. Proof: an optimal partition
    has groups of ``k..2k-1`` records and ``SSE = sum(pi) + sum_C rc(C) = sum(pi) + sum_i
    rc(C(i))/|C(i)|`` (each group's reduced cost shared equally by its members), and each
    term is at least ``m_i``. ``m_i`` may be positive (no clipping at 0).

    ``m_i`` comes from a branch and bound per record and size (the compiled search of
    :mod:`._bb_numba`, record ``i`` at position 0, candidates all the other records left by
    the sorted-distance test) stopped after ``node_limit`` nodes: a stopped search gives the
    least bound of its open nodes, never more than its minimum, so the bound is valid
    whatever the budget (the budget only decides how tight it is). Sizes are searched with
    the best ratio found so far as cut-off; when a search stops at its budget, up to
    ``probes`` searches with lower cut-offs (bisection between the relaxation and the best
    ratio found) prove the largest ratio they can: a finished search with cut-off ``T``
    proves that no group is below ``T``, and low cut-offs prune most of the tree.

    Returns ``bound`` (float, with a float-safety margin), ``m`` (the per-record lower
    bounds), ``groups`` (for each record the best group found containing it, or None:
    the supergradient of the bound is ``1 - sum_i [j in groups_i] / |groups_i|``), ``ratio``
    (the best group's rc/|C| per record: upper bounds of the true minima), ``complete`` (every
    search finished: ``m`` is exact), ``nodes``. ``upper``: optional known upper bounds on the
    per-record minima (cut-offs); ``hints``: a group per record (or None), e.g. the groups of
    an earlier call, whose reduced cost at ``pi`` is a first cut-off. ``floor``: a value known
    to bound every ``m_i`` from below (0 when ``pi`` is dual feasible, i.e. no group has a
    negative reduced cost), used where the searches prove less. ``node_limit`` may be one
    budget per record (an array); ``starts``: optional ratios, one per record, probed second
    (a warm start of the bisection: any value is valid, since only a finished search
    counts). ``threads``: worker threads over the records (default: the CPUs this process
    may use; the compiled search releases the GIL); the result does not depend on it. Time
    O(n^2 d k) for the tests plus the searches, memory O(n k) per thread.
    """
    n = Z.shape[0]
    cums = np.cumsum(nbr_dist, axis=1)
    norms = np.einsum("ij,ij->i", Z, Z)
    kernel = _bb_kernel(points=True, deadline=deadline) if compiled else None
    m = np.empty(n)
    ratio = np.full(n, np.inf)
    groups: list = [None] * n
    done = np.zeros(n, dtype=bool)
    exact = np.zeros(n, dtype=bool)
    counted = np.zeros(n, dtype=np.int64)
    budgets = node_limit if np.ndim(node_limit) else None

    def one(i: int) -> None:
        budget = int(budgets[i]) if budgets is not None else int(node_limit)
        start = None if starts is None else float(starts[i])
        mi, ri, rows, nodes_i, full = _record_value(Z, norms, cums, pi, k, i, kernel, budget, deadline,
                                                    None if upper is None else float(upper[i]),
                                                    None if hints is None else hints[i], probes, floor,
                                                    start)
        m[i], ratio[i], groups[i], counted[i], exact[i] = mi, ri, rows, nodes_i, full
        done[i] = True

    workers = _threads(threads, n, kernel)
    if workers <= 1:
        for i in range(n):
            if deadline is not None and deadline.expired():
                break
            one(i)
    else:
        # Records in parallel threads (the compiled search releases the GIL; so do numpy's
        # large operations): each record's value depends on ``pi``, ``upper`` and ``hints``
        # only, so the result is the serial one whatever the order (tested).
        import threading

        lock = threading.Lock()
        nxt = [0]
        stop = threading.Event()  # set on an error or an interrupt: the workers quit
        errors: list = []

        def run() -> None:
            try:
                while not stop.is_set():
                    with lock:
                        i = nxt[0]
                        nxt[0] += 1
                    if i >= n or (deadline is not None and deadline.expired()):
                        return
                    one(i)
            except BaseException as exc:  # pragma: no cover - re-raised below
                errors.append(exc)
                stop.set()

        pool = [threading.Thread(target=run, daemon=True) for _ in range(workers)]
        try:
            for t in pool:
                t.start()
            for t in pool:
                t.join()
        except BaseException:  # Ctrl-C in the main thread: the workers stop after their record
            stop.set()
            raise
        if errors:
            raise errors[0]
    if not done.all():
        # Records not reached: the neighbour bound of every one at once (O(n k) in all,
        # where the per-record relaxation costs O(n (d + k log n)) EACH: on full EIA at
        # k = 10 finishing the pass that way took seconds of CPU past the deadline, minutes
        # of wall time on a starved core).
        rest = np.flatnonzero(~done)
        m[rest] = _neighbour_ratio(cums, pi, k, rest)
        if floor is not None:
            m[rest] = np.maximum(m[rest], floor)
    bound = float(pi.sum() + m.sum())
    bound -= 1e-9 * (float(np.abs(pi).sum()) + float(np.abs(m).sum()) + 1.0)
    return {"bound": bound, "m": m, "groups": groups, "ratio": ratio, "complete": bool(exact.all()),
            "nodes": int(counted.sum())}


def _threads(threads: int | None, n: int, kernel) -> int:
    """Worker threads for :func:`record_lagrangian`: ``threads`` when given, else the CPUs this
    process may use (at most 2 without the compiled search, whose numpy stand-in holds the
    GIL most of the time), 1 for tiny inputs."""
    if threads is not None:
        return max(1, int(threads))
    if n < 64:
        return 1
    import os

    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 8 if kernel is not None else 1))


def _record_value(Z, norms, cums, pi, k, i, kernel, node_limit, deadline, upper, hint, probes, floor,
                  start):
    """``m_i`` for one record (see :func:`record_lagrangian`): returns ``(m_i, best ratio,
    best group, nodes, exact)``. ``start``: a ratio to probe first after the best one (a warm start of the
    bisection, e.g. what the previous ascent step proved, shifted to these duals)."""
    n = Z.shape[0]
    sizes = list(range(k, min(2 * k - 1, n) + 1))
    nodes = 0
    Di = np.maximum(norms[i] - 2.0 * (Z @ Z[i]) + norms, 0.0)
    Di[i] = np.inf
    # The 2k-2 nearest other records, nearest first (an O(n) selection: a full sort of the n
    # distances per record took a tenth of the ascent's time on full EIA).
    near = min(2 * k - 2, n - 1)
    ordD = np.argpartition(Di, near - 1)[:near] if near < n else np.argsort(Di)
    ordD = ordD[np.lexsort((ordD, Di[ordD]))]
    best_ratio = math.inf if upper is None else upper
    best_rows = None
    if hint is not None and k <= hint.size <= 2 * k - 1:
        rows = hint
        G = Z[rows]
        rc = float(((G - G.mean(axis=0)) ** 2).sum() - pi[rows].sum())
        if rc / rows.size < best_ratio:
            best_ratio, best_rows = rc / rows.size, rows
    relax = {}
    es = {}
    for s in sizes:
        a2 = cums[:, s - 2] if s >= 2 else np.zeros(n)
        e = (2.0 * Di + a2) / (2.0 * s) - pi
        e[i] = np.inf
        part = np.partition(e, s - 2)[: s - 1] if s >= 2 else np.zeros(0)
        relax[s] = -pi[i] + float(part.sum())
        es[s] = e
        # A real group: i and its s-1 nearest records (cut-off for the searches).
        rows = np.concatenate([[i], ordD[: s - 1]])
        G = Z[rows]
        rc = float(((G - G.mean(axis=0)) ** 2).sum() - pi[rows].sum())
        if rc / s < best_ratio:
            best_ratio, best_rows = rc / s, np.sort(rows)
    # Bisection on the ratio r: a probe runs, for every size whose relaxation is below r, a
    # search with cut-off s r and the node budget; when every search finishes, no group
    # containing i has a ratio below min(r, best found), so m_i >= that. The first probe is
    # at the best ratio known (the exact minimum when it finishes), the second at ``start``
    # when given (inside the bracket), then halves.
    lo = min(relax[s] / s for s in sizes)
    if floor is not None:
        lo = max(lo, min(floor, best_ratio))
    hi_try = best_ratio
    for probe in range(probes):
        if lo >= best_ratio - 1e-12 * (abs(best_ratio) + 1.0):
            break
        if deadline is not None and deadline.expired():
            break
        top = min(hi_try, best_ratio)
        if probe == 0:
            r = best_ratio
        elif probe == 1 and start is not None and lo < start < top:
            r = start
        else:
            r = lo + 0.5 * (top - lo)
        finished = True
        for s in sorted(sizes, key=lambda t: relax[t]):
            if relax[s] / s >= r:
                continue
            if deadline is not None and deadline.expired():
                finished = False  # one search per check (the numpy search on all the
                break  # records costs O(n^2 d): seconds past the deadline when starved)
            e = es[s]
            thr = s * r
            if s >= 3:
                low = np.argpartition(e, s - 3)[: s - 2]
                keep = e + float(e[low].sum()) - pi[i] < thr
                keep[low] = True
            else:
                keep = e - pi[i] < thr
            cand = np.flatnonzero(keep)
            cand = cand[np.isfinite(e[cand])]
            cand = cand[np.argsort(e[cand], kind="stable")]
            members = np.concatenate([[i], cand])
            if kernel is not None:
                res = _bb_points(kernel, Z[members], pi[members], cums[cand, :s], s,
                                 node_limit=node_limit, deadline=None, keep=1, rate=[_RATE[0]], best=thr)
            else:
                Dsub = _sqdist(Z[members], Z[members])
                res = branch_and_bound_anchor(Dsub, pi[members], s, best=thr, node_limit=node_limit,
                                              keep=1)
            nodes += res["nodes"]
            for pos, _v in res["columns"]:
                rows = np.sort(members[pos])
                G = Z[rows]
                rc = float(((G - G.mean(axis=0)) ** 2).sum() - pi[rows].sum())
                if rc / s < best_ratio:
                    best_ratio, best_rows = rc / s, rows
            if not res["complete"]:
                finished = False
                break
        if finished:
            lo = max(lo, min(r, best_ratio))
        else:
            hi_try = r
    exact = not (lo < best_ratio - 1e-12 * (abs(best_ratio) + 1.0))
    return min(lo, best_ratio), best_ratio, best_rows, nodes, exact


def _neighbour_ratio(cums: np.ndarray, pi: np.ndarray, k: int, rows: np.ndarray) -> np.ndarray:
    """A lower bound on ``rc(C)/|C|`` over the groups ``C`` containing each record of
    ``rows``: ``min_s (b_i(s) + B_{s-1}(s)) / s`` with ``b_j(s) = a_j(s)/(2s) - pi_j`` (each
    member's share of ``rc(C)`` is at least its ``b_j(s)``, see :func:`record_bounds`) and
    ``B_{s-1}(s)`` the sum of the ``s-1`` smallest ``b_j(s)`` over all records (at most the
    other members' sum). O(n k) for all rows at once."""
    n = cums.shape[0]
    out = np.full(rows.size, np.inf)
    for s in range(k, min(2 * k - 1, n) + 1):
        b = cums[:, s - 1] / (2.0 * s) - pi
        others = float(np.partition(b, s - 2)[: s - 1].sum()) if s >= 2 else 0.0
        out = np.minimum(out, (b[rows] + others) / s)
    return out


def record_supergradient(groups: list, n: int) -> np.ndarray:
    """``1 - sum_i [j in groups_i] / |groups_i|``: a supergradient of the per-record
    Lagrangian at the duals where ``groups`` are the minimising groups (with truncated
    pricing, an approximation)."""
    g = np.ones(n)
    for rows in groups:
        if rows is not None:
            g[rows] -= 1.0 / rows.size
    return g


def record_ascent(Z: np.ndarray, nbr_dist: np.ndarray, pi: np.ndarray, k: int, *, deadline=None,
                  node_limit: int = 200, probes: int = 6, max_steps: int = 50,
                  min_gain: float = 1e-4, feasible: bool = False, compiled: bool = True,
                  node_max: int | None = None, grow_below: float = 0.02, warm: bool = True,
                  threads: int | None = None) -> dict:
    """Monotone dual ascent on the per-record Lagrangian (:func:`record_lagrangian`).

    With ``m_i`` proven lower bounds on ``min_{C containing i} rc(C)/|C|`` at ``pi``, the duals
    ``pi' = pi + m`` price no group negative: ``rc'(C) = rc(C) - m(C) >= |C| min_i ratio -
    m(C) >= 0``. So ``pi'`` is dual feasible, ``sum(pi') = sum(pi) + sum(m)`` is the bound
    proven at ``pi``, and at ``pi'`` every ``m'_i >= 0`` (``floor=0``): the next bound is never
    lower. Each step is one call of :func:`record_lagrangian`; the ascent stops when a step
    gains less than ``min_gain`` (relative), after ``max_steps`` or at the deadline (a step
    cut short still proves its bound). ``feasible``: ``pi`` itself is dual feasible.

    Returns ``bound`` (the best proven), ``duals`` (a dual-feasible point whose sum is
    ``bound``, before the float margin), ``steps`` (one ``(bound, nodes, complete)`` per
    step) and ``columns`` (the best group found per record at the last step, for the pool).
    """
    pi = np.asarray(pi, dtype=np.float64).copy()
    n = pi.size
    best = -math.inf
    steps: list = []
    hints = None
    groups: list = []
    node_max = 32 * node_limit if node_max is None else max(int(node_max), node_limit)
    budgets = np.full(n, int(node_limit), dtype=np.int64)
    starts = None
    gains: list = []
    while len(steps) < max_steps:
        if deadline is not None and deadline.expired() and steps:
            break
        res = record_lagrangian(Z, nbr_dist, pi, k, node_limit=budgets, deadline=deadline,
                                hints=hints, probes=probes, floor=0.0 if feasible else None,
                                compiled=compiled, starts=starts, threads=threads)
        steps.append((float(res["bound"]), int(res["nodes"]), bool(res["complete"])))
        gain = res["bound"] - best
        best = max(best, res["bound"])
        hints = groups = res["groups"]
        m = res["m"]
        pi = pi + m
        feasible = True
        if gain < min_gain * max(abs(best), 1e-300) and len(steps) > 1:
            break
        if len(steps) > 1:
            gains.append(gain)
            if gain < grow_below * max(abs(best), 1e-300):
                # The steps flatten: the searches stop at their budget far below the best
                # groups found (Census@sub:400, k = 10, 8th step: 4.5 proven of <= 70.6 at 200
                # nodes, 19.0 of <= 20.9 at 2000), so records not proven exact get twice the
                # nodes (up to ``node_max``); exact ones keep theirs.
                rat = res["ratio"]
                seen = np.isfinite(rat)  # inf: a record the deadline left unsearched
                inexact = seen & (m < np.where(seen, rat, 0.0) - 1e-12 * (np.abs(np.where(seen, rat, 0.0)) + 1.0))
                budgets = np.where(inexact, np.minimum(2 * budgets, node_max), budgets)
        if warm:
            # Warm-started bisection: the next step's m_i is probed first (after the best
            # group's ratio) at this step's m_i scaled by the last ratio of gains, the usual
            # decay of the ascent (a probe anywhere is valid: only a finished search counts).
            decay = min(1.0, max(0.2, gains[-1] / gains[-2])) if len(gains) >= 2 and gains[-2] > 0 else 0.5
            starts = np.maximum(m, 0.0) * decay
    return {"bound": best, "duals": pi, "steps": steps,
            "columns": [g for g in groups if g is not None]}
