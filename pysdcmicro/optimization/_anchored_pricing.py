"""Anchored exact pricing: the minimum reduced cost of every group size, proven anchor by
anchor (a group's anchor is its lowest-index member), each anchor by the branch and bound,
complete enumeration or CP-SAT; and :class:`CutRows`, the subset-row cut penalties that the
compiled search adds to the reduced cost."""

from __future__ import annotations

import math

import numpy as np

from .. import _ortools
from .._context import Deadline as _Deadline
from ._branch_and_bound import _RATE, _bb_compiled, _bb_kernel, _bb_points, branch_and_bound_anchor
from ._exact_pricing import _enumerate_anchor, _scaled
from ._lagrangian import _sqdist, anchor_relaxation

__all__ = ["anchored_pricing", "CutRows"]


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
                     per_anchor: int = 3, compiled: bool = True, cuts: CutRows | None = None,
                     stop_relaxation: bool = False) -> dict | None:
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
    With ``stop_relaxation``, ``deadline`` is checked between the row blocks of the anchor
    bounds too, and None is returned (no bound, no column) when it expires there.
    """
    pricer = _AnchorPricer(Z, nbr_dist, pi, s, deadline=deadline, enumerate_limit=enumerate_limit,
                           time_limit=time_limit, deterministic_time=deterministic_time, workers=workers,
                           seed=seed, scale_target=scale_target, max_records=max_records,
                           anchor_solver=anchor_solver, node_limit=node_limit, bb_max_records=bb_max_records,
                           per_anchor=per_anchor, compiled=compiled, cuts=cuts,
                           stop_relaxation=stop_relaxation)
    if pricer.anchor_lb is None:  # the deadline came during the anchor bounds
        return None
    active = np.flatnonzero(pricer.anchor_lb < 0.0)
    active = active[np.argsort(pricer.anchor_lb[active], kind="stable")]
    for count, i in enumerate(active):
        if (deadline is not None and deadline.expired()) or (max_anchors is not None and count >= max_anchors) \
                or (max_found is not None and len(pricer.columns) >= max_found):
            pricer.proven = False
            break
        pricer.price_anchor(i)
    finite = pricer.anchor_val[np.isfinite(pricer.anchor_val)]
    bound = float(finite.min()) if finite.size else 0.0
    columns = sorted(pricer.columns, key=lambda t: t[1])
    return {"bound": bound, "columns": columns, "proven": pricer.proven, "anchors": int(active.size),
            "solved": pricer.solved, "cpsat_calls": pricer.cp_calls,
            "factor": min(pricer.factors) if pricer.factors else None,
            "anchor_values": pricer.anchor_val, "bb_nodes": pricer.bb_nodes}


class _AnchorPricer:
    """One call of :func:`anchored_pricing`: the per-call data, the tallies, and the exact
    solution of one anchor (:meth:`price_anchor`) by the compiled search from the points, or,
    after tightening its candidates, by a search on their distance block, complete
    enumeration or CP-SAT."""

    def __init__(self, Z, nbr_dist, pi, s, *, deadline, enumerate_limit, time_limit, deterministic_time,
                 workers, seed, scale_target, max_records, anchor_solver, node_limit, bb_max_records,
                 per_anchor, compiled, cuts, stop_relaxation=False):
        self.Z, self.pi, self.s, self.n = Z, pi, s, Z.shape[0]
        self.deadline, self.enumerate_limit, self.time_limit = deadline, enumerate_limit, time_limit
        self.deterministic_time, self.workers, self.seed = deterministic_time, workers, seed
        self.scale_target, self.max_records, self.anchor_solver = scale_target, max_records, anchor_solver
        self.node_limit, self.bb_max_records, self.per_anchor = node_limit, bb_max_records, per_anchor
        self.compiled, self.cuts = compiled, cuts
        self.cums = np.cumsum(nbr_dist, axis=1)
        self.a2 = self.cums[:, s - 2] if s >= 2 else np.zeros(self.n)
        self.norms = np.einsum("ij,ij->i", Z, Z)
        relaxed = anchor_relaxation(Z, nbr_dist, pi, s, norms=self.norms,
                                    deadline=deadline if stop_relaxation else None)
        if relaxed is None:
            self.anchor_lb = None
            return
        self.anchor_lb, self.sum_small = relaxed
        self.anchor_val = self.anchor_lb.copy()
        self.columns: list = []
        self.solved = self.cp_calls = self.bb_nodes = 0
        self.factors: list = []
        self.proven = True
        self.rate = _RATE  # nodes per wall second of the compiled search, measured as it runs
        self.points_kernel = _bb_kernel(points=True, deadline=deadline) if (anchor_solver == "bb" and compiled) \
            else None
        if cuts is not None:
            self.points_kernel = _bb_kernel(points=True, deadline=deadline, cuts=True) if compiled else None
            if self.points_kernel is None or anchor_solver != "bb":
                raise RuntimeError("pricing with subset-row cuts needs the compiled branch and bound")

    def _node_limit(self) -> int | None:
        if self.node_limit is not None or self.deterministic_time is None:
            return self.node_limit
        return int(self.deterministic_time * 200_000)

    def _search_deadline(self):
        if self.time_limit is None:
            return self.deadline
        return self.deadline.child(self.time_limit) if self.deadline is not None else _Deadline(self.time_limit)

    def _settle(self, i: int, res: dict, members: np.ndarray, cuts=None) -> None:
        """Record a branch-and-bound result for anchor ``i``."""
        self.bb_nodes += res["nodes"]
        self.anchor_val[i] = _anchor_value(res, self.anchor_lb[i], self.Z, self.pi, members, self.columns, cuts)
        if res["complete"]:
            self.solved += 1
        else:
            self.proven = False

    def candidates(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """The records after ``i`` that can be in a negative group anchored at ``i``, and the
        per-record bounds ``e``."""
        Z, pi, s, norms = self.Z, self.pi, self.s, self.norms
        Di = np.maximum(norms[i] - 2.0 * (Z @ Z[i]) + norms, 0.0)
        e = (2.0 * Di + self.a2) / (2.0 * s) - pi
        e[: i + 1] = np.inf
        cand = np.flatnonzero(e + self.sum_small[i] - pi[i] < 0.0)
        if s >= 3:
            extra = np.argpartition(e, s - 3)[: s - 2] if self.n - i - 1 >= s - 2 else np.array([], dtype=np.int64)
            cand = np.union1d(cand, extra[np.isfinite(e[extra])])
        return cand, e

    def price_anchor(self, i: int) -> None:
        cand, e = self.candidates(i)
        if self.points_kernel is not None:
            self._points(i, cand, e)
            return
        cand, members, Dsub = self._tighten(i, cand)
        if cand.size < self.s - 1:
            self.anchor_val[i] = 0.0  # every group at this anchor is provably non-negative
            self.solved += 1
            return
        if self.anchor_solver == "bb":
            self._block_search(i, members, Dsub)
        elif math.comb(cand.size, self.s - 1) <= self.enumerate_limit:
            self._enumerate(i, members, Dsub)
        else:
            self._cpsat(i, members, Dsub)

    def _points(self, i: int, cand: np.ndarray, e: np.ndarray) -> None:
        """The compiled search straight from the points: candidates by their bound ``e_l``,
        the pair bound from each candidate's ``s-2`` nearest records overall (no distance
        block to build and tighten)."""
        s = self.s
        if cand.size < s - 1:
            self.anchor_val[i] = 0.0
            self.solved += 1
            return
        cand = cand[np.argsort(e[cand], kind="stable")]
        members = np.concatenate([[i], cand])
        res = _bb_points(self.points_kernel, self.Z[members], self.pi[members], self.cums[cand, :s], s,
                         node_limit=self._node_limit(), deadline=self._search_deadline(), keep=self.per_anchor,
                         rate=self.rate, extra=() if self.cuts is None else self.cuts.local(members))
        self._settle(i, res, members, self.cuts)

    def _tighten(self, i: int, cand: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Shrink the candidates: the other ``s-2`` members of a candidate's group lie in the
        candidate set (or are the anchor), so its ``a'_l`` is taken over those only; repeated
        while the set shrinks. Returns the candidates, the members (anchor first) and their
        distance block."""
        Z, pi, s = self.Z, self.pi, self.s
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
        if cand.size >= s - 1 and (Dsub is None or Dsub.shape[0] != cand.size + 1):
            members = np.concatenate([[i], cand])
            Zm = Z[members]
            Dsub = _sqdist(Zm, Zm)
        return cand, members, Dsub

    def _block_search(self, i: int, members: np.ndarray, Dsub: np.ndarray) -> None:
        if members.size > self.bb_max_records:
            self.proven = False  # keeps its relaxation bound
            return
        pis = self.pi[members]
        limit, dl = self._node_limit(), self._search_deadline()
        kernel = _bb_kernel(deadline=self.deadline) if self.compiled else None
        if kernel is not None:
            res = _bb_compiled(kernel, Dsub, pis, self.s, node_limit=limit, deadline=dl, keep=self.per_anchor,
                               rate=self.rate)
        else:
            res = branch_and_bound_anchor(Dsub, pis, self.s, node_limit=limit, deadline=dl, keep=self.per_anchor)
        self._settle(i, res, members)

    def _enumerate(self, i: int, members: np.ndarray, Dsub: np.ndarray) -> None:
        val, pos = _enumerate_anchor(Dsub, self.pi[members], self.s)
        self.anchor_val[i] = min(0.0, val)
        self.solved += 1
        if val < -1e-9:
            rows = np.sort(members[pos])
            G = self.Z[rows]
            self.columns.append((rows, float(((G - G.mean(axis=0)) ** 2).sum() - self.pi[rows].sum())))

    def _cpsat(self, i: int, members: np.ndarray, Dsub: np.ndarray) -> None:
        """CP-SAT on the integer-scaled anchor model (coefficients rounded down, the anchor
        fixed in); its proven bound counts when it stops early."""
        s, pi = self.s, self.pi
        m = members.size
        if m > self.max_records:
            # Too large a model: building its m^2/2 pair terms alone outlasts any per-call
            # limit. The anchor keeps its relaxation bound, unproven.
            self.proven = False
            return
        pis = pi[members]
        iu, ju = np.triu_indices(m, 1)
        q = Dsub[iu, ju] / s
        biggest = max(float(q.max()), float(np.abs(pis).max()), 1e-300)
        factor = self.scale_target / biggest
        self.factors.append(factor)
        Q = _scaled(q, factor, "down")
        lin = _scaled(-pis, factor, "down")
        res = _ortools.cpsat_min_subset(lin, iu, ju, Q, s, upper=-1, fixed=0, time_limit=self.time_limit,
                                        deterministic_time=self.deterministic_time, workers=self.workers,
                                        seed=self.seed)
        self.cp_calls += 1
        if res["status"] == "infeasible":
            self.anchor_val[i] = 0.0
            self.solved += 1
            return
        b = res["bound"]
        val = min(0.0, b / factor) if b is not None and math.isfinite(b) else self.anchor_lb[i]
        val -= 1e-12 * (abs(val) + 1.0)
        self.anchor_val[i] = max(self.anchor_lb[i], val)
        if res["status"] == "optimal":
            self.solved += 1
        else:
            self.proven = False
        if res["subset"] is not None:
            rows = np.sort(members[res["subset"]])
            if rows.size == s and i in rows:
                G = self.Z[rows]
                rc = float(((G - G.mean(axis=0)) ** 2).sum() - pi[rows].sum())
                if rc < -1e-9:
                    self.columns.append((rows, rc))
