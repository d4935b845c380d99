"""V-MDAV: variable-size MDAV (Solanas and Martinez-Balleste, COMPSTAT 2006).

The algorithm, as published:

c = centroid of the whole data set (computed once)
while at least k records are unassigned:
    e = unassigned record farthest from c
    group e with its k-1 nearest unassigned records
    extend the group, one record at a time, while it has fewer than 2k-1 records:
        e_min = unassigned record closest to the group (least distance to any member)
        d_in  = that distance
        d_out = distance from e_min to its nearest other unassigned record
        if d_in < gamma * d_out: add e_min to the group, else stop extending
each of the (fewer than k) records left joins the group whose centroid is nearest.

Distances are Euclidean on the standardized data (the test ``d_in < gamma * d_out`` is
evaluated as ``d_in**2 < gamma**2 * d_out**2``, the same test). Unlike MDAV, the seed of
each group is taken from one fixed ordering (distance to the centroid of the *whole* data),
and one group is built per step.

Group sizes: a group is built with k..2k-1 records; the left-over records (fewer than k)
then join existing groups, so a group can end with up to 3k-2 records. With ``gamma = 0``
no group is extended: every group has k records except those the n mod k left-overs join
(sizes k..2k-1).

Tie-breaking (deterministic): the farthest record, the nearest records, and the record
closest to the group are each the one with the lowest row position among records at
exactly equal distance; a left-over record joins the lowest-numbered group among groups
whose centroids are at exactly equal distance.

Time: each group costs one distance vector from its seed to the unassigned records (as
MDAV: O(n^2 d / k) in all) plus the extension, which needs the distance of candidate
records to every member: O(n^2 d) in the worst case (scattered data in many dimensions),
much less where the triangle inequality rules most records out. Memory O(n d): no n x n
matrix (products are taken in blocks of at most about 2**22 numbers). Distances are
computed fast as ``|x|^2 - 2 x.y + |y|^2`` (BLAS; with numba, the whole group loop is compiled
in :mod:`._vmdav_numba` with float32 screening passes, see :func:`_screened_labels`) and every decision is re-made with exact
direct differences on the records within twice the rounding-error bound of the best, so
the result equals an exhaustive exact computation (exact duplicates are at distance
exactly 0; ties are broken as documented above).
"""

from __future__ import annotations

import numpy as np

from .._compile import cached
from .._context import Context
from .._registry import register_method
from .._result import Solution
from .._validation import check_number

__all__ = ["vmdav_labels"]

#: The default ``gamma``; see the notes of :func:`vmdav` and the README's "V-MDAV details".
DEFAULT_GAMMA = 0.5


_EPS = float(np.finfo(np.float64).eps)


def _sqdist(R: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Exact-as-possible squared Euclidean distances from each row of ``R`` to ``x``
    (direct differences: exact duplicates are at distance exactly 0)."""
    diff = R - x
    return np.einsum("ij,ij->i", diff, diff)


def _sqdist_to_set(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Squared distance (direct differences) from each row of ``A`` to its nearest row of
    ``B``, in blocks of at most about 2**18 numbers."""
    rows = max(1, (1 << 18) // max(1, B.shape[0] * B.shape[1]))
    out = np.empty(A.shape[0])
    for start in range(0, A.shape[0], rows):
        diff = A[start:start + rows, None, :] - B[None, :, :]
        out[start:start + rows] = np.einsum("ijk,ijk->ij", diff, diff).min(axis=1)
    return out


def _min_sqdist_approx(M: np.ndarray, nm: np.ndarray, A: np.ndarray, na: np.ndarray) -> np.ndarray:
    """Approximate squared distance from each row of ``A`` to its nearest row of ``M``
    as ``|a|^2 - 2 a.m + |m|^2`` (one BLAS product; ``nm``, ``na``: the squared norms)."""
    step = max(1, (1 << 22) // max(1, A.shape[0]))  # at most about 2**22 products at once
    out = None
    for start in range(0, M.shape[0], step):
        P = M[start:start + step] @ A.T
        P *= -2.0
        P += nm[start:start + step, None]
        low = P.min(axis=0)
        out = low if out is None else np.minimum(out, low, out=out)
    out += na
    return out


def _lowest_of_min(values: np.ndarray, pos: np.ndarray) -> int:
    """Index (into ``values``) of the minimum; among exact ties, the lowest ``pos``."""
    at = np.flatnonzero(values == values.min())
    return int(at[np.argmin(pos[at])]) if at.size > 1 else int(at[0])


def vmdav_labels(Z: np.ndarray, k: int, *, gamma: float = DEFAULT_GAMMA,
                 ctx: Context | None = None, threads: int | None = None) -> tuple[np.ndarray, dict]:
    """Group labels of V-MDAV on ``Z`` (rows = records, already scaled).

    Parameters
    ----------
    Z : ndarray of shape (n, d), float64
    k : int
        Minimum group size.
    gamma : float
        Extension parameter (>= 0, not checked here): a group grows by its closest
        unassigned record ``e_min`` while ``d_in < gamma * d_out``.
    ctx : Context, optional
        When its deadline expires, the groups still to build are no longer extended
        (fixed size k), which finishes the partition quickly; ``info["stopped_extending"]``
        then says after how many groups.
    threads : int, optional
        Threads of the compiled rounds' scans (default: every core this process may use, at
        most numba's ``NUMBA_NUM_THREADS``); the labels are the same on any number.

    Returns
    -------
    labels : ndarray of int64
        Groups numbered in order of creation.
    info : dict
        ``extended_groups`` (groups that grew beyond k), ``left_over`` (records that
        joined a group at the end), ``stopped_extending`` (group count at time-out, or None).

    Notes
    -----
    Distances are first computed fast as ``|x|^2 - 2 x.y + |y|^2`` (BLAS), whose rounding
    error is bounded by ``TOL = 8 (d + 2) eps max|z|^2``; every decision (the k nearest,
    ``e_min``, ``d_in``, ``d_out``) is then re-made with exact direct differences on the
    few records within ``2 TOL`` of the best, so the result is that of an exhaustive
    exact computation (ties included). The extension only looks at the records the
    triangle inequality cannot rule out: ``e_min`` lies within ``u + rad`` of the seed e
    (u: distance from e to its nearest unassigned record; rad: the group's radius around
    e), and a record x can only be nearer to ``e_min`` than a known ``v`` if
    ``|d(x, e) - d(e_min, e)| <= v``.
    """
    nb = _screening_kernels(Z)
    if nb is not None and ctx is not None and ctx.deadline.limited and Z.size < _COMPILED_MIN_WORK:
        # under a time limit, small data: the compiled rounds only once loaded (loading them
        # from numba's cache takes tenths of a second, unstoppable); the same groups either way
        from . import _vmdav_numba as vnb

        if not vnb.vmdav_rounds.signatures:
            nb = None
    if nb is not None:
        return _screened_labels(nb, Z, k, gamma, ctx, threads)
    return _numpy_labels(Z, k, gamma, ctx)


def _numpy_labels(Z, k, gamma, ctx):
    """The numpy rounds (BLAS screening; see :func:`vmdav_labels`)."""
    n, d = Z.shape
    labels = np.full(n, -1, dtype=np.int64)
    centre = Z.mean(axis=0)
    far = _sqdist(Z, centre)
    # Seeds in order: farthest from the data centroid first, ties by lowest row position.
    seeds = np.lexsort((np.arange(n), -far))
    extend = gamma > 0
    g2 = float(gamma) * float(gamma)

    idx = np.arange(n)            # row position of each working row
    R = Z                         # working rows (compacted from time to time; never written)
    norms = np.einsum("ij,ij->i", R, R)
    # Absolute error bound of the |x|^2 - 2 x.y + |y|^2 form for any pair of rows.
    tol = 8.0 * (d + 2) * _EPS * float(norms.max()) + 1e-300
    alive = np.ones(n, dtype=bool)  # unassigned, in working coordinates
    local = np.arange(n)          # row position -> working position (valid while unassigned)
    m = n
    removed = 0                   # assigned rows still present in the working arrays
    g = 0
    ptr = 0
    extended = 0
    stopped = None

    timed = ctx is not None and ctx.deadline.limited
    while m >= k:
        if timed and m >= 2 * k and ctx.expired():  # the rest in principal-axis runs of k
            stopped = g if stopped is None else stopped
            m = _cut_short(Z, labels, k)
            break
        while labels[seeds[ptr]] >= 0:
            ptr += 1
        le = int(local[seeds[ptr]])
        x = R[le]
        de = norms - 2.0 * (R @ x) + norms[le]
        de[~alive] = np.inf
        de[le] = -np.inf
        # The k nearest, exactly: every record that can be among them or tie is within
        # 2 tol of the k-th smallest approximate distance.
        kth = np.partition(de, k - 1)[k - 1]
        cand = np.flatnonzero(de <= kth + 2.0 * tol)
        exact = _sqdist(R[cand], x)
        exact[cand == le] = -1.0  # the seed belongs to its own group even among duplicates
        first = np.lexsort((cand, exact))[:k]
        sel = cand[first]
        alive[sel] = False
        labels[idx[sel]] = g
        m -= k
        removed += k
        if extend and ctx is not None and ctx.expired():
            extend = False
            stopped = g
        if extend and m > 0:
            de[le] = 0.0
            rad2 = float(exact[first].max())
            grown = _extend(R, norms, de, rad2, sel, alive, labels, idx, g, k, g2, tol)
            m -= grown
            removed += grown
            if grown:
                extended += 1
        g += 1
        if m and 4 * removed > idx.size:
            idx = idx[alive]
            R = R[alive]
            norms = norms[alive]
            local[idx] = np.arange(idx.size)
            alive = np.ones(idx.size, dtype=bool)
            removed = 0

    left = 0
    if m:
        left = _join_left_overs(Z, labels, idx[alive], g)
    info = {"extended_groups": extended, "left_over": left, "stopped_extending": stopped}
    return labels, info


def _cut_short(Z, labels, k) -> int:
    """Group the records still unlabelled (at least 2k) in runs of k along their first
    principal axis (the last run takes the remainder); returns 0, the records left."""
    from ._mdav import _fill_rest

    _fill_rest(Z, labels, k)
    return 0


def _join_left_overs(Z, labels, rest, g) -> int:
    """The fewer than k unassigned records ``rest`` join the group with the nearest centroid."""
    if True:
        d = Z.shape[1]
        left = int(rest.size)
        done = labels >= 0
        counts = np.bincount(labels[done], minlength=g).astype(np.float64)
        sums = np.zeros((g, d))
        np.add.at(sums, labels[done], Z[done])
        cents = sums / counts[:, None]
        for r in rest:  # ties: argmin takes the lowest group number
            labels[r] = int(np.argmin(_sqdist(cents, Z[r])))
    return left


#: Records x columns from which the compiled screening runs even if it must be compiled
#: first (as for MDAV); below, only when already compiled.
_COMPILED_MIN_WORK = 100_000


def _screening_kernels(Z):
    from . import _mdav

    nb = _mdav._kernels()
    if nb is None or Z.shape[0] == 0 or Z.shape[1] == 0:
        return None
    if Z.size >= _COMPILED_MIN_WORK:
        return nb
    try:
        from . import _vmdav_numba as vnb

        rounds = vnb.vmdav_rounds
        return nb if cached(rounds) else None
    except Exception:  # pragma: no cover
        return None


#: Remaining records from which the compiled rounds scan on several threads (below, one
#: thread: a parallel region's start costs more than it saves).
PARALLEL_MIN_RECORDS = 4_096


def _threads(threads):
    """Threads for the compiled rounds: ``threads`` when given, else every core this process
    may use, at most numba's thread count (``NUMBA_NUM_THREADS``)."""
    import numba

    from ..large._executors import available_cores

    want = available_cores() if threads is None else int(threads)
    return max(1, min(want, numba.config.NUMBA_NUM_THREADS))


def _screened_labels(nb, Z, k, gamma, ctx, threads=None, par_min=None):
    """The compiled V-MDAV rounds (:mod:`._vmdav_numba`): the groups of
    the numpy rounds (:func:`_numpy_labels`), bit for bit, with no Python call
    per group. With a time limit the rounds run in chunks of groups (about 50 ms each) and
    the deadline is read between chunks; after it, no group is extended."""
    from . import _vmdav_numba as vnb

    n, d = Z.shape
    labels = np.full(n, -1, dtype=np.int64)
    centre = Z.mean(axis=0)
    far = _sqdist(Z, centre)
    seeds = np.lexsort((np.arange(n), -far))
    extend = gamma > 0
    g2 = float(gamma) * float(gamma)
    X, sqn, XT32, n32, scale2, E = nb.prepare(Z)
    act = np.arange(n)
    slot = np.arange(n)
    nbl = max(1, (n + 255) // 256)
    bufs = [np.empty(n, dtype=np.float32), np.empty(nbl, dtype=np.float32), np.empty(nbl, dtype=np.float32),
            np.empty(n, dtype=np.float32), np.empty(nbl, dtype=np.float32), np.empty(nbl, dtype=np.float32)]
    state = np.array([n, 0, 0, 0], dtype=np.int64)
    nt = _threads(threads)
    par_min = PARALLEL_MIN_RECORDS if par_min is None else int(par_min)
    stopped = None
    timed = ctx is not None and ctx.deadline.limited
    chunk = 16 if timed else n + 1
    import time

    while state[0] >= k:
        if extend and timed and ctx.expired():
            extend = False
            stopped = int(state[1])
        if timed and state[0] >= 2 * k and ctx.expired():  # the rest in principal-axis runs of k
            state[0] = _cut_short(Z, labels, k)
            break
        t0 = time.perf_counter()
        vnb.vmdav_rounds(X, sqn, XT32, n32, scale2, E, k, g2, extend, seeds, labels, act, slot, state,
                         *bufs, chunk, nt, par_min)
        if timed:
            spent = time.perf_counter() - t0
            chunk = max(1, min(4 * chunk, int(chunk * 0.05 / spent) if spent > 0 else 4 * chunk))
    m = int(state[0])
    g = int(state[1])
    left = 0
    if m:
        left = _join_left_overs(Z, labels, np.sort(act[:m]), g)
    return labels, {"extended_groups": int(state[3]), "left_over": left, "stopped_extending": stopped}


def _extend(R, norms, de, rad2, sel, alive, labels, idx, g, k, g2, tol) -> int:
    """Grow group ``g`` (working positions ``sel``; ``de``: approximate squared distances
    to its seed) while ``d_in**2 < g2 * d_out**2`` and it has fewer than 2k-1 records.

    Updates ``alive`` and ``labels`` in place; returns the number of records added.
    """
    members = np.asarray(sel)
    s_tol = float(np.sqrt(tol))  # error bound of any approximate (non-squared) distance
    ds = np.sqrt(np.maximum(np.where(alive, de, np.inf), 0.0))  # to the seed; inf unless unassigned
    rad = float(np.sqrt(rad2)) * (1.0 + 1e-9) + 1e-12             # group radius around the seed
    in_c = np.zeros(alive.size, dtype=bool)  # candidates whose distance to the group is tracked
    c_pos = np.empty(0, dtype=np.int64)
    c_d = np.empty(0)                         # approximate squared distance of each candidate to the group
    grown = 0
    while members.size < 2 * k - 1:
        u = ds.min()
        if not np.isfinite(u):   # no unassigned record left
            break
        lim = (u + s_tol + rad) * (1.0 + 1e-9) + s_tol + 1e-12
        new = np.flatnonzero((ds <= lim) & ~in_c)
        if 4 * (c_pos.size + new.size) > alive.size:
            # The triangle inequality rules out too little (scattered data in many
            # dimensions): finish on the full working arrays, without gathering rows.
            return grown + _extend_full(R, norms, members, alive, labels, idx, g, k, g2, tol)
        if new.size:
            dn = _min_sqdist_approx(R[members], norms[members], R[new], norms[new])
            in_c[new] = True
            c_pos = np.concatenate([c_pos, new])
            c_d = np.concatenate([c_d, dn])
        # e_min, exactly: refine the candidates within 2 tol of the approximate best.
        near = np.flatnonzero(c_d <= c_d.min() + 2.0 * tol)
        exact_in = _sqdist_to_set(R[c_pos[near]], R[members])
        jn = _lowest_of_min(exact_in, c_pos[near])
        jc = int(near[jn])
        j = int(c_pos[jc])
        d_in2 = float(exact_in[jn])
        xj = R[j]
        dc = norms[c_pos] - 2.0 * (R[c_pos] @ xj) + norms[j]
        dc[jc] = np.inf
        # d_out, exactly: the candidates and, beyond them, the records in the band
        # |d(x, e) - d(e_min, e)| <= v that the triangle inequality cannot rule out.
        v2 = float(dc.min()) if dc.size else np.inf
        if np.isfinite(v2):
            v = float(np.sqrt(max(v2, 0.0) + tol))
            band = np.flatnonzero((np.abs(ds - ds[j]) <= (v + 2.0 * s_tol) * (1.0 + 1e-9) + 1e-12) & ~in_c)
        else:
            band = np.flatnonzero(np.isfinite(ds) & ~in_c)
        pos = c_pos
        dist = dc
        if band.size:
            dist = np.concatenate([dc, norms[band] - 2.0 * (R[band] @ xj) + norms[j]])
            pos = np.concatenate([c_pos, band])
        if dist.size:
            best = dist.min()
            if np.isfinite(best):
                close = pos[dist <= best + 2.0 * tol]
                d_out2 = float(_sqdist(R[close], xj).min())
            else:
                d_out2 = np.inf
        else:
            d_out2 = np.inf
        if not d_in2 < g2 * d_out2:
            break
        alive[j] = False
        labels[idx[j]] = g
        members = np.append(members, j)
        grown += 1
        rad = max(rad, (float(ds[j]) + s_tol) * (1.0 + 1e-9) + 1e-12)
        ds[j] = np.inf
        np.minimum(c_d, dc, out=c_d)
        keep = np.ones(c_pos.size, dtype=bool)
        keep[jc] = False
        c_pos, c_d = c_pos[keep], c_d[keep]
        in_c[j] = False
    return grown



def _extend_full(R, norms, members, alive, labels, idx, g, k, g2, tol) -> int:
    """:func:`_extend` without pruning: distances to every working row (BLAS), each
    decision re-made exactly on the rows within ``2 tol`` of the best."""
    c_d = _min_sqdist_approx(R[members], norms[members], R, norms)
    c_d[~alive] = np.inf
    pos = np.arange(alive.size)
    grown = 0
    while members.size < 2 * k - 1:
        best = c_d.min()
        if not np.isfinite(best):   # no unassigned record left
            break
        near = np.flatnonzero(c_d <= best + 2.0 * tol)
        exact_in = _sqdist_to_set(R[near], R[members])
        jn = _lowest_of_min(exact_in, pos[near])
        j = int(near[jn])
        d_in2 = float(exact_in[jn])
        xj = R[j]
        dc = norms - 2.0 * (R @ xj) + norms[j]
        dc[~alive] = np.inf
        dc[j] = np.inf
        bo = dc.min()
        if np.isfinite(bo):
            close = np.flatnonzero(dc <= bo + 2.0 * tol)
            d_out2 = float(_sqdist(R[close], xj).min())
        else:
            d_out2 = np.inf
        if not d_in2 < g2 * d_out2:
            break
        alive[j] = False
        labels[idx[j]] = g
        members = np.append(members, j)
        grown += 1
        np.minimum(c_d, dc, out=c_d)
        c_d[j] = np.inf
    return grown


@register_method("vmdav", summary="V-MDAV, variable group sizes k..2k-1 (left-overs may reach 3k-2), "
                 "extension parameter gamma", threads=True)
def _vmdav_solver(Z: np.ndarray, k: int, ctx: Context, *, gamma: float = DEFAULT_GAMMA) -> Solution:
    gamma = check_number(gamma, "gamma", low=0.0)
    # threads: those of a whole-data vmdav call (``n_jobs``); one inside blocks or other methods
    threads = getattr(getattr(ctx, "_shared", None), "threads", None) or 1
    labels, info = vmdav_labels(Z, k, gamma=gamma, ctx=ctx, threads=threads)
    if info["stopped_extending"] is not None:
        return Solution(labels=labels, status="limit", info=info,
                        message=f"time limit reached after {info['stopped_extending']} groups: "
                                "the remaining records were grouped without extension (size k, or "
                                "principal-axis runs of k once the limit had passed)")
    return Solution(labels=labels, status="done", info=info)
