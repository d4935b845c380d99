"""Exact pricing over all records at once, and complete enumeration below a threshold.

:func:`exact_pricing` proves the minimum reduced cost of each size by one CP-SAT model per
size, reduced by valid per-record and per-pair bounds and scaled to integers rounded in the
safe direction (``exact_model="global"`` of column generation). :func:`enumerate_below`
lists every group whose reduced cost is at most a threshold, anchor by anchor (the
gap-closing step: with an optimal MIP over them, a proof of optimality).
"""

from __future__ import annotations

import math

import numpy as np

from .. import _ortools
from ._lagrangian import _sqdist

__all__ = ["exact_pricing", "enumerate_below"]


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
