"""ICSM: Iterative Constraint Satisfaction for Microaggregation (Mortazavi and Jalili,
ISC Int. J. of Information Security (ISeCure), 2015; paper file
``shared/papers/003_6648048e24cae545.txt``), with restarts.

Algorithm 2 of the paper::

    A = MDAV(T, k)
    repeat                                   # outer loop: n-opt
        repeat                               # inner loop: 1-opt and 2-opt
            P = tour through the groups of A (MDAV-MHM style, NPN between groups)
            A = Tour2Assignment(P, k)        # circular Hansen-Mukherjee: sizes k..2k-1
            A = SimpleHeuristic(T, k, A)     # pool of improving migrations / exchanges
        until no change
        A = ComplexHeuristic(T, k, A)        # one valid negative cycle in a ranked DAG
    until no change

*SimpleHeuristic* (Algorithm 3): every improving migration (1-opt, R2 + R3, eqs. 5-6)
and exchange (2-opt, R1 + R1, eqs. 3-4) is a negative 2-cycle of the graph H; the ``pool_size``
(pn) most improving ones are applied greedily, best first, skipping any that touches a
group already changed (moves on disjoint groups do not interact, so every predicted gain
is exact). The paper fills the pool with the first pn moves found in scan order; we keep
the pn best, which is deterministic and never worse per round.

*ComplexHeuristic* (Algorithm 4, eqs. 7-8): Score(G) = sum of the R1 weights of the edges
leaving G's records minus those entering them; G_s = the lowest score; groups are ranked by
the distance of their centroid to G_s's; the DAG H' keeps the edges from lower to higher
rank (record -> record R1, record -> group R2, group -> record R3); shortest paths from the
records of G_s and the node G_s, closed by an edge back into G_s, are cycles that visit
each group once, so their weight is the exact SSE change of the cyclic shift (n-opt). The
most negative one is applied.

Cost. The records never move, so each record's nearest records are found once (k-d
tree); from them every round derives each group's nearest groups by centroid
(:func:`neighbour_groups`). SimpleHeuristic evaluates the migrations and exchanges between
neighbour groups, ComplexHeuristic's record edges join neighbour groups (group nodes still
reach every later record), and the tour finds the nearest unvisited record through the
nearest-record lists: compiled kernels (:mod:`._icsm_numba`), O(n L k d) per round for L
neighbour groups, no n x n matrix. With ``neighbours=None`` the moves and cycles are those
of all pairs of groups (the paper's; used by the tests as the reference).

Restarts (section 5.3): the best partition is perturbed (the groups of up to
``perturbation`` records change; we permute the labels of the chosen records, which keeps
every group size) and the local search is run again; the better partition is kept. The
paper perturbs MDAV's partition 1600 times and re-runs ICSM on all the data each time
(``restart_scope="full"`` here, from the best partition instead of MDAV's). The default
``"region"`` perturbs the records nearest to a random record and re-runs ICSM on the
sub-problem made of the ``region_groups`` groups nearest to it: SSE is a sum over groups,
so a better sub-partition is a better partition, and a restart costs tens of milliseconds whatever
n is. A final ICSM pass on all the data then repairs what the region borders hid.
"""

from __future__ import annotations

import time

import numpy as np

from .._context import Context
from .._errors import InvalidInputError
from .._registry import register_improvement, register_method
from .._result import Solution
from .._validation import check_choice, check_positive_int
from ..constructive._mdav import mdav_labels
from ..univariate._hansen_mukherjee import circular_runs
from ._state import Partition, tolerance


def _kernels():
    """The compiled inner loops: those compiled when the package was built
    (:mod:`pysdcmicro._aot`), else :mod:`._icsm_numba`, imported at first use (importing
    numba costs tenths of a second, which a call that runs no ICSM, a first MDAV from R,
    need not pay)."""
    from .. import _aot

    built = _aot.family("icsm")
    if built is not None:
        return built
    from . import _icsm_numba

    return _icsm_numba


#: Groups (nearest by centroid) whose exchanges and migrations with a group SimpleHeuristic
#: evaluates.
NEIGHBOURS = 16
def neighbours_for(k: int) -> int:
    """Neighbour groups per group for minimum group size ``k``: :data:`NEIGHBOURS`, and
    ``4k - 8`` above k = 6 (larger groups are fewer, and ComplexHeuristic's improving
    cycles then reach more groups away)."""
    return max(NEIGHBOURS, 4 * int(k) - 8)


#: Nearest records kept per record for the nearest-point-next step of the tour.
TOUR_NEIGHBOURS = 16

#: Work units charged per record for each pass (tour, pool, cycle search) on top of the
#: evaluations it counts: a pass also rebuilds the neighbour groups, the group index and the
#: tour's dynamic programme, O(n) work of about this many units per record.
PASS_WORK = 40

__all__ = ["partition_tour", "circular_runs", "tour_to_assignment", "simple_heuristic", "complex_heuristic",
           "group_scores", "icsm_search", "perturb"]


# ---------------------------------------------------------------------------
# Tour2Assignment
# ---------------------------------------------------------------------------
def nearest_records(Z: np.ndarray, m: int = TOUR_NEIGHBOURS) -> np.ndarray:
    """Each record's ``m`` nearest other records, nearest first (k-d tree), shape (n, m);
    -1 pads when there are fewer than ``m`` other records."""
    n = Z.shape[0]
    m = max(0, min(m, n - 1))
    out = np.full((n, m), -1, dtype=np.int64)
    if m == 0:
        return out
    from scipy.spatial import cKDTree

    # threads pay from a few thousand records; below, starting them costs more than the query
    workers = -1 if n >= _THREADED_QUERY else 1
    _, idx = cKDTree(Z).query(Z, k=m + 1, workers=workers)
    idx = np.asarray(idx, dtype=np.int64).reshape(n, m + 1)
    # drop each record itself (not always first when it has duplicates)
    self_pos = np.argmax(idx == np.arange(n)[:, None], axis=1)
    found = (idx == np.arange(n)[:, None]).any(axis=1)
    self_pos[~found] = m
    keep = np.ones_like(idx, dtype=bool)
    keep[np.arange(n), self_pos] = False
    out[:] = idx[keep].reshape(n, m)
    return out


#: Records from which :func:`nearest_records` queries its k-d tree with all cores.
_THREADED_QUERY = 2000


def tour_index(Z: np.ndarray, m: int = TOUR_NEIGHBOURS) -> tuple[np.ndarray, ...]:
    """What :func:`partition_tour` looks records up with: the distinct points of ``Z``
    (``pt[x]`` is record x's point; point ``p`` holds the records
    ``porder[pstarts[p]:pstarts[p + 1]]``) and each point's ``m`` nearest other points."""
    uniq, pt = np.unique(Z, axis=0, return_inverse=True)
    pt = pt.reshape(-1).astype(np.int64)
    porder = np.argsort(pt, kind="stable").astype(np.int64)
    pstarts = np.zeros(uniq.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(pt, minlength=uniq.shape[0]), out=pstarts[1:])
    return pt, pstarts, porder, nearest_records(uniq, m)


def _records_from_points(index: tuple) -> np.ndarray | None:
    """Each record's nearest other records, read from :func:`tour_index`'s nearest points
    when every record is its own point (no exact duplicates); None otherwise."""
    pt, pstarts, porder, near = index
    if pstarts.size - 1 != pt.size:
        return None
    out = np.where(near >= 0, porder[np.maximum(near, 0)], -1)
    return out[pt]


def search_index(Z: np.ndarray, use_tour: bool = True) -> tuple[tuple | None, np.ndarray]:
    """What :func:`icsm_search` looks neighbours up with on ``Z``: ``(index, knn)``, the
    :func:`tour_index` (None without the tour) and each record's :data:`TOUR_NEIGHBOURS`
    nearest other records (exact; read from the index when no two records are equal).
    Computed once per data set and shared by the searches on it."""
    index = tour_index(Z) if use_tour else None
    knn = _records_from_points(index) if index is not None else None
    if knn is None:
        knn = nearest_records(Z)
    return index, knn


def partition_tour(P: Partition, index: tuple | None = None, counters: np.ndarray | None = None) -> np.ndarray:
    """A tour through all records that keeps every group contiguous (section 4.2).

    Starts with the group of the record farthest from the overall centroid, entered at
    that record; the next group is the one holding the unvisited record nearest to the
    last record of the tour (nearest point next), entered at that record. Inside a group,
    records follow their distance from the entry record (nearest first), so the last ones
    are those a neighbouring run may take over.

    The nearest unvisited record is looked up through :func:`tour_index` (computed here when
    not given): an unvisited duplicate of the last record, else the nearest of its point's
    ``m`` nearest points with an unvisited record, and only when all of those are exhausted
    a scan of the points left: time O(n m + f u d) for f such misses among u distinct
    points, memory O(n m). Compiled (:func:`._icsm_numba.npn_tour`); ``counters[0]`` (when
    given) counts the points scanned by the misses.
    """
    Z = P.Z
    if index is None:
        index = tour_index(Z)
    pt, pstarts, porder, knn = index
    diff = Z - Z.mean(axis=0)
    entry = int(np.argmax(np.einsum("ij,ij->i", diff, diff)))
    order, starts = P.csr()
    counters = np.zeros(1, dtype=np.int64) if counters is None else counters
    return _kernels().npn_tour(Z, P.labels, order, starts, pt, pstarts, porder, knn, entry, counters)


def tour_to_assignment(P: Partition, k: int, max_size: int | None = None,
                       index: tuple | None = None, counters: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """Tour2Assignment (Algorithm 5): optimal runs of k..2k-1 records along the circular
    tour of :func:`partition_tour`. Never worse than ``P`` (whose groups are runs of that
    tour) when P's groups have at most 2k-1 records; splitting larger groups never hurts."""
    order = partition_tour(P, index, counters)
    seq_labels, cost = circular_runs(P.Z[order], k, max_size)
    labels = np.empty(P.n, dtype=np.int64)
    labels[order] = seq_labels
    return labels, cost


# ---------------------------------------------------------------------------
# SimpleHeuristic: pool of 1-opt and 2-opt moves
# ---------------------------------------------------------------------------
def neighbour_groups(P: Partition, L: int | None = NEIGHBOURS, knn: np.ndarray | None = None) -> np.ndarray:
    """Each group's ``L`` nearest other groups by centroid, shape (g, L), -1 padded; every
    other group when ``L`` is None or at least g - 1.

    The candidates are the groups holding one of the ``knn`` nearest records
    (:func:`nearest_records`) of the group's members (:func:`._icsm_numba.near_groups`), and
    then the neighbours of those (:func:`._icsm_numba.refine_groups`): the second hop finds
    the groups with near centroids but no record among the nearest ones, such as the
    targets of an outlier's migration. The lists cost O(n m d + g L^2 d) however many groups
    there are."""
    g = P.g
    if L is None or L >= g - 1:
        full = np.tile(np.arange(g, dtype=np.int64), (g, 1))
        return full[~np.eye(g, dtype=bool)].reshape(g, max(g - 1, 0))
    if knn is None:
        knn = nearest_records(P.Z)
    order, starts = P.csr()
    nb = _kernels().near_groups(P.Z, P.labels, order, starts, P.cent, knn, int(L))
    return _kernels().refine_groups(P.cent, nb)


def _keep_best(vals, a, b, kinds, limit):
    if vals.size <= limit:
        return vals, a, b, kinds
    sel = np.argpartition(vals, limit - 1)[:limit]
    return vals[sel], a[sel], b[sel], kinds[sel]


def pool_candidates(P: Partition, k: int, *, pool_size: int = 100, max_size: int | None = None,
                    tol: float | None = None, neighbours: int | None = NEIGHBOURS,
                    counters: np.ndarray | None = None, knn: np.ndarray | None = None):
    """The ``pool_size`` most improving moves between neighbour groups (see
    :func:`._icsm_numba.pool_moves`): ``(vals, a, b, kinds)``, kind 0 the exchange of records
    ``a`` and ``b``, kind 1 the migration of record ``a`` to group ``b``."""
    max_size = 2 * k - 1 if max_size is None else max_size
    tol = tolerance(P) if tol is None else tol
    counters = np.zeros(1, dtype=np.int64) if counters is None else counters
    nb = neighbour_groups(P, neighbours, knn)
    order, starts = P.csr()
    return _kernels().pool_moves(P.Z, P.labels, P.sizes, P.cent, P.own, order, starts, nb, int(k),
                               int(max_size), float(tol), int(pool_size), counters)


def simple_heuristic(P: Partition, k: int, *, pool_size: int = 100, max_size: int | None = None,
                     tol: float | None = None, neighbours: int | None = NEIGHBOURS,
                     counters: np.ndarray | None = None, knn: np.ndarray | None = None) -> tuple[int, float]:
    """One round of Algorithm 3 on ``P`` in place; returns (moves applied, SSE change).

    The moves considered are the exchanges and migrations between each group and its
    ``neighbours`` nearest groups by centroid (all pairs of groups with ``None``): a move
    between far groups hardly ever lowers the SSE, and the restriction makes a round cost
    O(n L k d) instead of O(n^2 d). ``counters[0]`` (when given) counts the moves evaluated.
    """
    vals, a, b, kinds = pool_candidates(P, k, pool_size=pool_size, max_size=max_size, tol=tol,
                                        neighbours=neighbours, counters=counters, knn=knn)
    vals, a, b, kinds = _keep_best(vals, a, b, kinds, pool_size)
    if vals.size == 0:
        return 0, 0.0
    order = np.lexsort((b, a, kinds, vals))
    changed: set[int] = set()
    applied = 0
    gain = 0.0
    for t in order:
        i, x = int(a[t]), int(b[t])
        gi = int(P.labels[i])
        gx = int(P.labels[x]) if kinds[t] == 0 else x
        if gi in changed or gx in changed:
            continue
        if kinds[t] == 0:
            P.apply_swap(i, x)
        else:
            P.apply_migrate(i, x)
        changed.update((gi, gx))
        applied += 1
        gain += float(vals[t])
    return applied, gain


# ---------------------------------------------------------------------------
# ComplexHeuristic: valid negative cycles in the ranked DAG
# ---------------------------------------------------------------------------
def group_scores(P: Partition) -> np.ndarray:
    """Score(G_p) of eq. 7: sum over p's records of the R1 weights of their outgoing edges
    (to records of other groups) minus those of their incoming edges. Closed form, O(n d):

    * sum_{j in h} R1(i -> j) = (s_h - 1) e(i, h) - SSE_h (1 + 1/s_h), and summed over all
      groups h, ``sum_h (s_h - 1) e(i, h)`` is a quadratic in ``z_i`` whose coefficients are
      sums over the groups (taken about the overall mean ``zbar``, which keeps the terms small);
    * sum_{j not in p} R1(j -> i) = T + n|zbar - c_p|^2 - SSE_p - (n - s_p) own_i
      - (T + n|z_i - zbar|^2 - s_p own_i - SSE_p) / s_p, with T the total sum of squares.
    """
    n, g = P.n, P.g
    Z = P.Z
    s = P.sizes.astype(np.float64)
    lab = P.labels
    sse_g = np.bincount(lab, weights=P.own, minlength=g)
    zbar = Z.mean(axis=0)
    dz = Z - zbar
    rz = np.einsum("ij,ij->i", dz, dz)
    T = float(rz.sum())
    W = float((sse_g * (1.0 + 1.0 / s)).sum())
    dc = P.cent - zbar
    cz = np.einsum("ij,ij->i", dc, dc)
    w = s - 1.0
    # sum_h w_h |dz_i - dc_h|^2 = (sum w) |dz_i|^2 - 2 dz_i . (sum w_h dc_h) + sum w_h |dc_h|^2
    out = w.sum() * rz - 2.0 * (dz @ (w @ dc)) + float(w @ cz)
    p = lab
    sp = s[p]
    out += -(sp - 1.0) * P.own - W + sse_g[p] * (1.0 + 1.0 / sp)
    inc = T + n * cz[p] - sse_g[p] - (n - sp) * P.own - (T + n * rz - sp * P.own - sse_g[p]) / sp
    return np.bincount(lab, weights=out - inc, minlength=g)


def _walk_back(P: Partition, r: int, ve: int, pred_rec: np.ndarray, pred_grp: np.ndarray):
    """The records of the cycle ending at node ``ve`` (row ``r`` of the predecessor arrays)
    and the group each one moves to."""
    n, lab = P.n, P.labels
    path = [ve]
    v = ve
    while True:
        p = pred_rec[r, v] if v < n else pred_grp[r, v - n]
        if p < 0:
            break
        path.append(int(p))
        v = int(p)
    path.reverse()  # source ... ve; the closing edge goes ve -> path[0]
    records, groups = [], []
    L = len(path)
    for t, u in enumerate(path):
        if u >= n:
            continue
        nxt = path[(t + 1) % L]
        records.append(u)
        groups.append(int(lab[nxt]) if nxt < n else nxt - n)
    return records, groups


def _best_cycle(P: Partition, s: int, k: int, max_size: int, depth: int | None = None, stop=None,
                neighbours: int | None = NEIGHBOURS, counters: np.ndarray | None = None,
                knn: np.ndarray | None = None):
    """Most negative valid cycle through group ``s`` in the DAG H' of eq. 8, with the edges
    into a group's nodes coming from its ``neighbours`` nearest groups by centroid (and from
    the records of ``s``); a group node still reaches every later record (R3). All groups
    with ``neighbours=None``, which is :func:`_best_cycle_dense`'s DAG.

    Returns ``(cost, records, new_groups)`` or None. Compiled
    (:func:`._icsm_numba.best_cycle`): time O(k g L k^2 d) for g groups, memory O(k n).
    ``depth`` keeps the ``depth`` groups nearest to ``s``; ``stop`` is polled once before the
    search (which takes milliseconds)."""
    if stop is not None and stop():
        return None
    dc = P.cent - P.cent[s]
    ranked = np.argsort(np.einsum("ij,ij->i", dc, dc), kind="stable")
    ranked = np.concatenate([[s], ranked[ranked != s]]).astype(np.int64)
    if depth is not None:
        ranked = ranked[:depth + 1]
    nb = neighbour_groups(P, neighbours, knn)
    order, starts = P.csr()
    counters = np.zeros(1, dtype=np.int64) if counters is None else counters
    cost, r, ve, pred_rec, pred_grp = _kernels().best_cycle(P.Z, P.sizes, P.cent, P.own, order, starts, nb, ranked,
                                                          int(s), int(k), int(max_size), counters)
    if r < 0:
        return None
    records, groups = _walk_back(P, int(r), int(ve), pred_rec, pred_grp)
    return float(cost), records, groups


def _best_cycle_dense(P: Partition, s: int, k: int, max_size: int, depth: int | None = None, stop=None):
    """Most negative valid cycle through group ``s`` in the DAG H' of eq. 8 over all groups
    (the reference for :func:`_best_cycle`).

    Returns ``(cost, records, new_groups)`` or None. Nodes are records (0..n-1) and group
    nodes (n + h), processed layer by layer (one layer per group, in rank order) for all
    S = |G_s| + 1 sources at once. Time O(S n^2 (d + k) / 2), memory O(S n k) per layer:
    no n x n matrix. ``stop``: a callable polled every 32 layers; when it returns True the
    search is abandoned (None is returned), so a deadline can interrupt it on large data.
    """
    n, g = P.n, P.g
    Z, z2, own, sizes, lab = P.Z, P.z2, P.own, P.sizes, P.labels
    dc = P.cent - P.cent[s]
    order = np.argsort(np.einsum("ij,ij->i", dc, dc), kind="stable")
    order = np.concatenate([[s], order[order != s]])
    if depth is not None:
        order = order[:depth + 1]
    src = np.asarray(P.members[s], dtype=np.int64)
    S = src.size + 1  # the last source is the group node G_s
    inf = np.inf
    dist_rec = np.full((S, n), inf)
    dist_grp = np.full((S, g), inf)
    pred_rec = np.full((S, n), -1, dtype=np.int64)
    pred_grp = np.full((S, g), -1, dtype=np.int64)
    dist_rec[np.arange(src.size), src] = 0.0
    dist_grp[S - 1, s] = 0.0
    prior = [src]
    prior_groups = [s]
    rows_S = np.arange(S)
    for layer, q in enumerate(order[1:]):
        if stop is not None and layer % 32 == 31 and stop():
            return None
        q = int(q)
        T = np.asarray(P.members[q], dtype=np.int64)
        sq = float(sizes[q])
        U = np.concatenate(prior) if len(prior) > 1 else prior[0]
        if len(prior) > 1:
            prior = [U]
        eU = z2[U] - 2.0 * (Z[U] @ P.cent[q]) + P.cnorm[q]
        dUT = z2[U][:, None] + z2[T][None, :] - 2.0 * (Z[U] @ Z[T].T)
        np.maximum(dUT, 0.0, out=dUT)
        Wt = eU[:, None] - dUT / sq                       # R1(u -> t) + own_t
        dU = dist_rec[:, U]                               # (S, |U|)
        cand = dU[:, :, None] + Wt[None, :, :]            # (S, |U|, |T|)
        arg = cand.argmin(axis=1)                          # (S, |T|)
        best = np.take_along_axis(cand, arg[:, None, :], axis=1)[:, 0, :] - own[T][None, :]
        pred = U[arg]
        if sq > k:                                         # group node -> record: R3
            pg = np.asarray(prior_groups, dtype=np.int64)
            dG = dist_grp[:, pg]
            ga = dG.argmin(axis=1)
            gbest = dG[rows_S, ga]
            alt = gbest[:, None] - (sq / (sq - 1.0)) * own[T][None, :]
            use = alt < best
            best = np.where(use, alt, best)
            pred = np.where(use, (n + pg[ga])[:, None], pred)
        dist_rec[:, T] = best
        pred_rec[:, T] = pred
        if sq < max_size:                                  # record -> group node: R2
            c2 = dU + (sq / (sq + 1.0)) * eU[None, :]
            ua = c2.argmin(axis=1)
            dist_grp[:, q] = c2[rows_S, ua]
            pred_grp[:, q] = U[ua]
        prior.append(T)
        prior_groups.append(q)
    # closing edges back into G_s
    ss = float(sizes[s])
    others = np.flatnonzero(lab != s)
    eS = np.maximum(z2[others] - 2.0 * (Z[others] @ P.cent[s]) + P.cnorm[s], 0.0)
    best_cost, best_key = 0.0, None
    if src.size:
        dOS = np.maximum(z2[others][:, None] + z2[src][None, :] - 2.0 * (Z[others] @ Z[src].T), 0.0)
        close = eS[:, None] - own[src][None, :] - dOS / ss        # R1(ve -> vs), (|others|, |src|)
        cyc = dist_rec[:src.size][:, others] + close.T             # (|src|, |others|)
        r, c = np.unravel_index(np.argmin(cyc), cyc.shape)
        if cyc[r, c] < best_cost:
            best_cost, best_key = float(cyc[r, c]), (int(r), int(others[c]))
        if ss > k:                                                 # group node ve -> record vs: R3
            r3 = -(ss / (ss - 1.0)) * own[src]
            grp = np.arange(g) != s
            dg = np.where(grp[None, :], dist_grp[:src.size], inf)
            cyc = dg + r3[:, None]
            r, c = np.unravel_index(np.argmin(cyc), cyc.shape)
            if cyc[r, c] < best_cost:
                best_cost, best_key = float(cyc[r, c]), (int(r), n + int(c))
    if ss < max_size:                                              # record ve -> group node G_s: R2
        cyc = dist_rec[S - 1, others] + (ss / (ss + 1.0)) * eS
        c = int(np.argmin(cyc))
        if cyc[c] < best_cost:
            best_cost, best_key = float(cyc[c]), (S - 1, int(others[c]))
    if best_key is None:
        return None
    r, ve = best_key
    records, groups = _walk_back(P, r, ve, pred_rec, pred_grp)
    return best_cost, records, groups


def complex_heuristic(P: Partition, k: int, *, max_size: int | None = None, tol: float | None = None,
                      cycle_groups: int = 1, cycle_depth: int | None = None, stop=None,
                      neighbours: int | None = NEIGHBOURS, counters: np.ndarray | None = None,
                      knn: np.ndarray | None = None) -> tuple[int, float]:
    """Algorithm 4 on ``P`` in place: the most negative valid cycle through the group of
    lowest Score (or, with ``cycle_groups`` > 1, through the first group of that many in
    increasing Score that has one), in the DAG of :func:`_best_cycle` (record edges between
    neighbour groups). Returns (records moved, SSE change)."""
    max_size = 2 * k - 1 if max_size is None else max_size
    tol = tolerance(P) if tol is None else tol
    if P.g < 2:
        return 0, 0.0
    scores = group_scores(P)
    for s in np.argsort(scores, kind="stable")[:cycle_groups]:
        found = _best_cycle(P, int(s), k, max_size, cycle_depth, stop, neighbours, counters, knn)
        if found is None or found[0] >= -tol:
            continue
        cost, records, groups = found
        old = {int(P.labels[i]) for i in records} | set(groups)
        before = sum(P.group_sse(h) for h in old)
        prev = [int(P.labels[i]) for i in records]
        P.apply_assignment(records, groups)
        after = sum(P.group_sse(h) for h in old)
        if after < before - tol:
            return len(records), after - before
        P.apply_assignment(records, prev)  # defensive: never accept a non-improving cycle
    return 0, 0.0


# ---------------------------------------------------------------------------
# The ICSM loop
# ---------------------------------------------------------------------------
def icsm_search(Z: np.ndarray, labels: np.ndarray, k: int, *, pool_size: int = 100,
                cycle_groups: int = 1, cycle_depth: int | None = None, max_iterations: int | None = None,
                ctx: Context | None = None, report: bool = True, use_tour: bool = True,
                neighbours: int | str | None = "auto", work: dict | None = None,
                max_work: int | None = None, lookup: tuple | None = None) -> tuple[Partition, int, str]:
    """Algorithm 2 from the partition ``labels`` (instead of MDAV); returns
    ``(partition, rounds, status)``. A round is an inner iteration or an n-opt move that
    lowered the SSE. The partition is never worse than ``labels``; groups keep at most
    2k-1 records (larger input groups may be split by Tour2Assignment) and never fewer
    than k. Every round lowers the SSE by more than :func:`tolerance`, and each costs
    O(n L k d) (pool, cycle) plus the tour's O(n m + f n d) (see :func:`partition_tour`). ``work`` (when given)
    receives the counts ``evaluations`` (moves evaluated by SimpleHeuristic),
    ``tour_scans`` (points scanned outside the nearest-point lists by the tours),
    ``cycle_edges`` (edges relaxed by ComplexHeuristic), ``tours``, ``pools`` and ``cycles``
    (searches run). ``neighbours``: groups per neighbour list (:func:`neighbours_for` with
    ``"auto"``; all groups with None). ``max_work``: a deterministic budget; the search stops
    with status ``"budget"`` after the round in which its work units reached it: the
    evaluations, edges and tour scans (each one distance or gain over the ``d`` columns) and
    :data:`PASS_WORK` per record for each pass. ``lookup``: :func:`search_index` of ``Z``
    (with the tour when ``use_tour``), computed here when None."""
    if isinstance(neighbours, str):
        neighbours = neighbours_for(k)
    P = Partition(Z, labels)
    tol = tolerance(P)
    rounds = 0
    current = P.sse()
    evals = np.zeros(1, dtype=np.int64)
    edges = np.zeros(1, dtype=np.int64)
    scans = np.zeros(1, dtype=np.int64)
    tally = {"tours": 0, "pools": 0, "cycles": 0}
    index = knn = None
    if P.g > 1:
        index, knn = search_index(Z, use_tour) if lookup is None else lookup

    def stop() -> str | None:
        if max_iterations is not None and rounds >= max_iterations:
            return "limit"
        if ctx is not None and ctx.expired():
            return "limit"
        if max_work is not None and _work_total(counts()) >= max_work:
            return "budget"
        return None

    def progress(stage: str) -> None:
        if report and ctx is not None:
            ctx.report(iteration=rounds, sse=current, step=stage)
            ctx.offer(P.labels, current)

    def counts() -> dict:
        return dict(tally, evaluations=int(evals[0]), cycle_edges=int(edges[0]), tour_scans=int(scans[0]),
                    rounds=rounds, n=P.n)

    def finish(why: str):
        if work is not None:
            work.update(counts())
        return P, rounds, why

    while True:
        while True:
            why = stop()
            if why:
                return finish(why)
            before = current
            if use_tour and P.g > 1:
                tally["tours"] += 1
                new_labels, cost = tour_to_assignment(P, k, index=index, counters=scans)
                if cost < current - tol:
                    P = Partition(Z, new_labels)
                    current = P.sse()
                    if ctx is not None and ctx.expired():  # large data: a step takes seconds
                        progress("inner")
                        return finish("limit")
            tally["pools"] += 1
            applied, _ = simple_heuristic(P, k, pool_size=pool_size, tol=tol, neighbours=neighbours,
                                          counters=evals, knn=knn)
            if applied:
                current = P.sse()
            if current < before - tol:
                rounds += 1
                progress("inner")
            else:
                break
        why = stop()
        if why:
            return finish(why)
        tally["cycles"] += 1
        moved, _ = complex_heuristic(P, k, tol=tol, cycle_groups=cycle_groups, cycle_depth=cycle_depth,
                                     stop=ctx.expired if ctx is not None else None, neighbours=neighbours,
                                     counters=edges, knn=knn)
        if not moved:  # none found, or the search was stopped by the deadline
            return finish("limit" if (ctx is not None and ctx.expired()) else "done")
        current = P.sse()
        rounds += 1
        progress("n-opt")


# ---------------------------------------------------------------------------
# Restarts
# ---------------------------------------------------------------------------
def perturb(P: Partition, rng: np.random.Generator, records: int, *, center: int | None = None,
            scope: str = "local", rows: np.ndarray | None = None) -> np.ndarray:
    """Labels of ``P`` (restricted to ``rows`` when given) with the groups of up to
    ``records`` records changed and every group size kept: the chosen records' labels are
    permuted at random (a record keeps its group when the permutation maps it to a record
    of the same group).

    ``scope="global"`` chooses the records uniformly at random (as section 5.3 of the
    paper); ``"local"`` chooses the ``records`` records nearest to ``center`` (a random
    record by default), so the shuffled records come from neighbouring groups.
    """
    rows = np.arange(P.n) if rows is None else np.asarray(rows, dtype=np.int64)
    labels = P.labels[rows].copy()
    m = min(records, rows.size)
    if m < 2:
        return labels
    if scope == "global":
        chosen = np.sort(rng.choice(rows.size, size=m, replace=False))
    else:
        c = int(rng.integers(P.n)) if center is None else int(center)
        dist = P.z2[rows] - 2.0 * (P.Z[rows] @ P.Z[c])
        chosen = np.sort(np.argpartition(dist, m - 1)[:m]) if m < rows.size else np.arange(rows.size)
    labels[chosen] = labels[chosen[rng.permutation(m)]]
    return labels


def _region(P: Partition, center: int, groups: int) -> np.ndarray:
    """Records of the ``groups`` groups whose centroids are nearest to record ``center``."""
    dc = P.cnorm - 2.0 * (P.cent @ P.Z[center])
    g = min(groups, P.g)
    near = np.argpartition(dc, g - 1)[:g] if g < P.g else np.arange(P.g)
    near = near[np.argsort(dc[near], kind="stable")]
    return np.concatenate([np.asarray(P.members[h], dtype=np.int64) for h in near])


#: Whether a region restart's local search starts each round with Tour2Assignment. Without it
#: (pool moves and n-opt cycles only; the final pass on all the data keeps it) a restart costs
#: about 2.3 times less CPU and the chains reached a lower IL at every CPU budget measured
#: (Tarragona k=3, 5-40 CPU s; benchmarks/results/auto.md).
REGION_TOUR = False


class _Quiet:
    """The deadline of a context without its progress reports (for sub-problems)."""

    def __init__(self, ctx: Context):
        self.ctx = ctx

    def expired(self) -> bool:
        return self.ctx.expired()


def icsm_restarts(Z: np.ndarray, P: Partition, k: int, ctx: Context, *, max_restarts: int | None,
                  perturbation: int, restart_scope: str, region_groups: int, pool_size: int,
                  cycle_groups: int, region_tour: bool | None = None,
                  lookup: tuple | None = None) -> tuple[Partition, dict, str]:
    """Iterated local search from ``P``: perturb the best partition, re-optimise, keep
    the better one. Returns (best partition, facts, status). ``lookup``: :func:`search_index`
    of ``Z``, for the searches on all the data (``restart_scope="full"``)."""
    best = P
    best_sse = P.sse()
    tol = tolerance(P)
    done = improved = 0
    status = "done"
    quiet = _Quiet(ctx)
    use_tour = REGION_TOUR if region_tour is None else bool(region_tour)
    while max_restarts is None or done < max_restarts:
        if ctx.expired():
            status = "limit"
            break
        done += 1
        if restart_scope == "region":
            center = int(ctx.rng.integers(best.n))
            rows = _region(best, center, region_groups)
            start = perturb(best, ctx.rng, perturbation, center=center, rows=rows)
            sub = np.ascontiguousarray(Z[rows])
            Q, _, _ = icsm_search(sub, start, k, pool_size=pool_size, cycle_groups=cycle_groups,
                                  ctx=quiet, report=False, use_tour=use_tour)
            before = float(best.own[rows].sum())
            if Q.sse() < before - tol:
                labels = best.labels.copy()
                labels[rows] = Q.labels + best.g
                best = Partition(Z, labels)
        else:
            start = perturb(best, ctx.rng, perturbation, scope="global")
            Q, _, _ = icsm_search(Z, start, k, pool_size=pool_size, cycle_groups=cycle_groups,
                                  ctx=quiet, report=False, lookup=lookup)
            if Q.sse() < best_sse - tol:
                best = Q
        new_sse = best.sse()
        if new_sse < best_sse - tol:
            best_sse = new_sse
            improved += 1
            ctx.offer(best.labels, best_sse)
            ctx.report(iteration=done, sse=best_sse, stage="restarts", improving=improved)
        elif done % 100 == 0:
            ctx.report(iteration=done, sse=best_sse, stage="restarts", improving=improved)
    return best, {"restarts": done, "improving_restarts": improved}, status


# ---------------------------------------------------------------------------
# Registration and public function
# ---------------------------------------------------------------------------
_SCOPES = ("region", "full")


def _check_icsm_options(pool_size, cycle_groups, max_iterations, max_restarts, perturbation, restart_scope,
                        region_groups, ctx):
    pool_size = check_positive_int(pool_size, "pool_size")
    cycle_groups = check_positive_int(cycle_groups, "cycle_groups")
    max_iterations = check_positive_int(max_iterations, "max_iterations", minimum=0, allow_none=True)
    max_restarts = check_positive_int(max_restarts, "max_restarts", minimum=0, allow_none=True)
    perturbation = check_positive_int(perturbation, "perturbation", minimum=2)
    restart_scope = check_choice(restart_scope, "restart_scope", _SCOPES)
    region_groups = check_positive_int(region_groups, "region_groups", minimum=2)
    if max_restarts is None and not ctx.deadline.limited:
        raise InvalidInputError("`max_restarts` must be an integer when there is no time_limit; got None "
                                "(restarts would never stop).")
    return pool_size, cycle_groups, max_iterations, max_restarts, perturbation, restart_scope, region_groups


def _run_icsm(Z, labels, k, ctx, pool_size, cycle_groups, max_iterations, max_restarts, perturbation,
              restart_scope, region_groups, region_tour=None, max_work=None, lookup=None) -> Solution:
    """ICSM from ``labels``: the first search, the restarts and the final pass. ``lookup``:
    :func:`search_index` of ``Z`` (computed here when None), shared by the first search and
    the final pass."""
    (pool_size, cycle_groups, max_iterations, max_restarts, perturbation, restart_scope,
     region_groups) = _check_icsm_options(pool_size, cycle_groups, max_iterations, max_restarts, perturbation,
                                          restart_scope, region_groups, ctx)
    max_work = check_positive_int(max_work, "max_work", allow_none=True)
    started = time.monotonic()
    if lookup is None and Z.shape[0] >= 2 * k:
        lookup = search_index(Z)
    work: dict = {}
    P, rounds, status = icsm_search(Z, labels, k, pool_size=pool_size, cycle_groups=cycle_groups,
                                    max_iterations=max_iterations, ctx=ctx.child(stage="icsm"), work=work,
                                    max_work=max_work, lookup=lookup)
    first_seconds = time.monotonic() - started
    info = {"rounds": rounds, "first_run_sse": P.sse(), "restarts": 0, "improving_restarts": 0,
            "work": _work_total(work)}
    messages = []
    if status == "budget":  # a deterministic stop: the restarts still run
        messages.append(f"first run stopped at max_work={max_work} after {rounds} rounds")
        status = "done"
    elif status == "limit":
        messages.append("time limit reached in the first run" if ctx.expired()
                        else f"first run stopped after max_iterations={max_iterations} rounds")
    restarting = max_restarts is None or max_restarts > 0
    if restarting and status == "done" and P.g > 1:
        if ctx.expired():
            status = "limit"
            messages.append("time limit reached before the restarts")
        else:
            # region restarts keep time for the final pass across region borders: twice the
            # first run's time (the pass starts near a local optimum), at most 5% of what is left
            reserve = min(0.05 * ctx.remaining(), 2.0 * first_seconds + 0.5) if restart_scope == "region" else 0.0
            sub = ctx.child(seconds=ctx.remaining() - reserve if ctx.deadline.limited else None, stage="restarts")
            P, facts, r_status = icsm_restarts(Z, P, k, sub, max_restarts=max_restarts,
                                               perturbation=perturbation, restart_scope=restart_scope,
                                               region_groups=region_groups, pool_size=pool_size,
                                               cycle_groups=cycle_groups, region_tour=region_tour,
                                               lookup=lookup)
            info.update(facts)
            if restart_scope == "region" and facts["improving_restarts"]:
                polish: dict = {}
                # the final pass gets what the first run left of max_work, and at least a quarter
                left = None if max_work is None else max(max_work - info["work"], max_work // 4)
                P, more, p_status = icsm_search(Z, P.labels, k, pool_size=pool_size, cycle_groups=cycle_groups,
                                                ctx=ctx.child(stage="polish"), work=polish, max_work=left,
                                                lookup=lookup)
                info["polish_rounds"] = more
                info["work"] += _work_total(polish)
                r_status = "limit" if p_status == "limit" else r_status
            messages.append(f"{facts['restarts']} restarts, {facts['improving_restarts']} improving")
            if r_status == "limit":
                status = "limit"
                messages.append("time limit reached")
    info["sse"] = P.sse()
    return Solution(labels=P.labels, status=status, message="; ".join(messages), info=info)


def _work_total(work: dict) -> int:
    """The work units of one :func:`icsm_search` (its ``work`` counts)."""
    passes = work.get("tours", 0) + work.get("pools", 0) + work.get("cycles", 0)
    return int(work.get("evaluations", 0) + work.get("cycle_edges", 0) + work.get("tour_scans", 0)
               + PASS_WORK * passes * work.get("n", 0))


@register_method("icsm", summary="ICSM local search (Tour2Assignment, 1-opt/2-opt pool, n-opt cycles) "
                 "from MDAV, with optional restarts (Mortazavi and Jalili 2015)", randomized=True)
def _icsm_solver(Z: np.ndarray, k: int, ctx: Context, *, pool_size: int = 100, cycle_groups: int = 1,
                 max_iterations: int | None = None, max_restarts: int | None = 0, perturbation: int = 20,
                 restart_scope: str = "region", region_groups: int = 30, max_work: int | None = None) -> Solution:
    _check_icsm_options(pool_size, cycle_groups, max_iterations, max_restarts, perturbation, restart_scope,
                        region_groups, ctx)
    labels = mdav_labels(Z, k, deadline=ctx.deadline if ctx.deadline.limited else None)
    ctx.offer(labels, float(Partition(Z, labels).sse()))
    return _run_icsm(Z, labels, k, ctx, pool_size, cycle_groups, max_iterations, max_restarts, perturbation,
                     restart_scope, region_groups, max_work=max_work)


@register_improvement("icsm", summary="ICSM's local search (and optional restarts) from any partition",
                      randomized=True)
def _icsm_improver(Z: np.ndarray, labels: np.ndarray, k: int, ctx: Context, *, pool_size: int = 100,
                   cycle_groups: int = 1, max_iterations: int | None = None, max_restarts: int | None = 0,
                   perturbation: int = 20, restart_scope: str = "region", region_groups: int = 30,
                   region_tour: bool | None = None, max_work: int | None = None) -> Solution:
    return _run_icsm(Z, labels, k, ctx, pool_size, cycle_groups, max_iterations, max_restarts, perturbation,
                     restart_scope, region_groups, region_tour, max_work)


def improve_with(Z: np.ndarray, labels: np.ndarray, k: int, ctx: Context, lookup: tuple | None,
                 **options) -> Solution:
    """The ``icsm`` improvement with the neighbour lookup of ``Z`` given (:func:`search_index`),
    for a caller that uses the lookup too; ``options`` as the improvement's, defaults alike."""
    import inspect

    params = inspect.signature(_icsm_improver).parameters.values()
    merged = {p.name: p.default for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY}
    merged.update(options)
    return _run_icsm(Z, labels, k, ctx, lookup=lookup, **merged)
