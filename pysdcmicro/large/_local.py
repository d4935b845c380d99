"""Batched local search: record moves and swaps between neighbouring groups.

The built-in border-repair step of the large-data path (and usable on its own on any
partition of a few thousand records). Each round:

1. computes every group's centroid (and, every third round, its ``neighbours`` nearest
   other groups);
2. for every record x of group A, the best *move* to a neighbour group B (when
   ``|A| > k`` and ``|B| < max_size``),
   ``delta = |B|/(|B|+1) ||x - c_B||^2 - |A|/(|A|-1) ||x - c_A||^2``,
   and the best *swap* with a record y of a neighbour group B,
   ``delta = ||y - c_A||^2 - ||x - c_A||^2 + ||x - c_B||^2 - ||y - c_B||^2
   - ||x - y||^2 (1/|A| + 1/|B|)``;
3. applies the improving moves and swaps best first, each group taking part in at most one
   of them per round, so every applied delta is exact and the SSE falls by their sum.

Group sizes stay >= k (moves only leave groups above k) and no group grows beyond
``max_size`` (default 2k - 1). Deterministic: ties go to the lowest record, then the
nearest neighbour group in index order.

With numba (a dependency of pysdcmicro) the rounds run compiled
(:mod:`._local_numba`) and differ in two ways, both for a lower IL in less time than
two-swap: a round is a *sweep* that applies each record's best move or swap at once (every later record sees the
updated centroids), and each sweep starts by trying to *dissolve* each group into its
neighbour groups (its records inserted one by one where the exact insertion cost is least,
kept when the costs add up to less than the group's SSE): after MDAV every group has exactly
k records, and without dissolving no record could ever move.

Compiled sweeps: time per sweep O(n L s d) (records looked at again only where something
changed) plus O(g^2 d) per neighbour-list refresh (every second sweep; exact brute force, a
k-d tree above 4096 groups); memory O(n + g (L + s + d)).

Numpy rounds: time per round O(g^2 d + n L s d) for n records in g groups, L = ``neighbours``, s the
largest group size; memory O(g^2 + chunk L s d): the g x g centroid distance matrix is why
it is meant for windows of up to about 10^4 records (g ~ 2000 at k = 5: 32 MB).
"""

from __future__ import annotations

import os
import threading

import numpy as np

from .._context import Context
from .._errors import InvalidInputError
from .._result import Solution
from .._validation import check_number, check_positive_int

__all__ = ["batch_local_search", "compiled_available"]

_CHUNK = 1024
_NB_EVERY = 3  # numpy rounds per neighbour-list refresh (centroids move little in a round)
#: Compiled sweeps per neighbour-list refresh (fresher lists: a lower IL for the same sweeps).
_NB_EVERY_COMPILED = 2
_NB = None


_NB_LOCK = threading.Lock()
_PLAIN_NB = None


def _kernels():
    """The compiled sweeps, or None: those compiled when the package was built
    (:mod:`pysdcmicro._aot`), else numba's (compiled on first use, cached on disk).

    Thread-safe: a thread asking while another imports them waits for that import, so every
    thread runs the same search (the same partition as a 1-process run of the seed)."""
    global _NB
    if _NB is None:
        with _NB_LOCK:
            if _NB is None:
                from .. import _aot

                found = _aot.family("blocked") or False  # compiled when the package was built
                if not found and not os.environ.get("PYSDCMICRO_NO_NUMBA"):
                    try:
                        from . import _local_numba
                        found = _local_numba
                    except Exception:  # numba missing or unusable: the same sweeps, interpreted
                        pass
                _NB = found
    return _NB or None


def _plain_kernels():
    """The sweeps of :mod:`._local_numba` as plain Python (its source loaded once more with
    ``njit`` a no-op): the same partition as the compiled sweeps, bit for bit, at
    interpreter speed. What runs without numba, so that the answer never depends on whether
    numba is installed, importable or cached in the process that runs it."""
    global _PLAIN_NB
    if _PLAIN_NB is None:
        with _NB_LOCK:
            if _PLAIN_NB is None:
                import types

                path = os.path.join(os.path.dirname(__file__), "_local_numba.py")
                with open(path, encoding="utf-8") as fh:
                    code = compile(fh.read(), path, "exec")
                mod = types.ModuleType(__name__.rsplit(".", 1)[0] + "._local_plain")
                mod.__file__ = path
                mod.__dict__["_PLAIN"] = True
                exec(code, mod.__dict__)
                _PLAIN_NB = mod
    return _PLAIN_NB


def compiled_available() -> bool:
    """True when the compiled local-search sweeps can run (numba installed)."""
    return _kernels() is not None


#: Up to this many groups the neighbour lists come from exact brute force (compiled, or its
#: numpy twin), above it from a k-d tree (O(g log g)).
_BRUTE_GROUPS = 4096


def _neighbour_groups(C: np.ndarray, L: int) -> np.ndarray:
    """Each group's L nearest other groups by centroid, nearest first, ties to the lower group.

    Up to :data:`_BRUTE_GROUPS` groups: exact brute force, compiled when numba is there
    (:func:`._local_numba.nearest_groups`) and otherwise :func:`_nearest_numpy`, which
    computes the same numbers, so both give the same lists (a k-d tree is slow on a few
    thousand centroids of near-uniform data). Above: a k-d tree, O(g log g)."""
    C = np.ascontiguousarray(C, dtype=np.float64)
    g = C.shape[0]
    if g <= _BRUTE_GROUPS:
        kernels = _kernels()
        if kernels is not None:
            return kernels.nearest_groups(C, L)
        return _nearest_numpy(C, L)
    from scipy.spatial import cKDTree

    _, nb = cKDTree(C).query(C, L + 1)
    nb = np.asarray(nb, dtype=np.int64).reshape(g, L + 1)
    own = np.arange(g)[:, None]
    # the group itself is normally first; drop it wherever it is (duplicate centroids)
    out = np.empty((g, L), dtype=np.int64)
    keep = nb != own
    first = keep.all(axis=1)  # the group itself not found (ties beyond L + 1): drop the last
    keep[first, -1] = False
    out[:] = nb[keep].reshape(g, L)
    return out


def _nearest_numpy(C: np.ndarray, L: int, chunk: int = 256) -> np.ndarray:
    """:func:`._local_numba.nearest_groups` in numpy (the same sums in the same order)."""
    g, d = C.shape
    out = np.empty((g, L), dtype=np.int64)
    for lo in range(0, g, chunk):
        hi = min(g, lo + chunk)
        acc = np.zeros((hi - lo, g))
        for t in range(d):
            q = C[None, :, t] - C[lo:hi, t, None]
            acc += q * q
        acc[np.arange(hi - lo), np.arange(lo, hi)] = np.inf
        out[lo:hi] = np.argsort(acc, axis=1, kind="stable")[:, :L]
    return out


def _compiled_search(kernels, Z, labels, k, ctx, rounds, L, max_size, tol, regions=None) -> Solution:
    n, d = Z.shape
    Zc = np.ascontiguousarray(Z, dtype=np.float64)
    info = {"rounds": 0, "moves": 0, "swaps": 0, "dissolved": 0, "evaluations": 0}
    status = "done"
    out = np.zeros(7)
    converged = False
    # What the sweeps know between calls (see _local_numba.sweeps): a record or group is
    # evaluated again only when its neighbourhood changed, also across neighbour-list refreshes.
    evald = np.full(n, -1, dtype=np.int64)
    stamp = devald = prev_nb = None
    clock = 1
    while info["rounds"] < rounds:
        if ctx.expired():
            status = "limit"
            break
        kept, labels = np.unique(labels, return_inverse=True)  # groups dissolved last call: gone
        labels = labels.reshape(-1).astype(np.int64)
        g = int(labels[-1] if n == 0 else labels.max()) + 1
        Lg = min(L, g - 1)
        if Lg < 1:
            converged = True
            break
        size = np.bincount(labels, minlength=g).astype(np.int64)
        width = max(max_size, int(size.max()))
        order = np.argsort(labels, kind="stable")
        starts = np.concatenate([[0], np.cumsum(size)])
        where = np.empty(n, dtype=np.int64)
        where[order] = np.arange(n) - starts[labels[order]]
        members = np.full((g, width), -1, dtype=np.int64)
        members[labels[order], where[order]] = order
        C = np.empty((g, d))
        for j in range(d):
            C[:, j] = np.bincount(labels, weights=Zc[:, j], minlength=g) / size
        old = None
        if prev_nb is not None:  # the old lists in the new group numbers (-1: dissolved)
            new_id = np.full(prev_nb.shape[0], -1, dtype=np.int64)
            new_id[kept] = np.arange(g)
            old = np.where(prev_nb >= 0, new_id[np.maximum(prev_nb, 0)], -1)[kept]
        nb = _neighbour_groups(C, Lg)
        if stamp is None:
            stamp = np.zeros(g, dtype=np.int64)
            devald = np.full(g, -1, dtype=np.int64)
            if regions is not None:  # groups the caller knows to be settled: start as evaluated
                settled = _settled_groups(regions, labels, g, nb)
                devald[settled] = 0
                evald[settled[labels]] = 0
        else:
            stamp, devald = stamp[kept], devald[kept]
            if old.shape == nb.shape:
                changed = (np.sort(old, axis=1) != np.sort(nb, axis=1)).any(axis=1)
            else:
                changed = np.ones(g, dtype=bool)
            devald[changed] = -1
            evald[changed[labels]] = -1
        prev_nb = nb
        sums = np.zeros((g, d))
        step = min(_NB_EVERY_COMPILED, rounds - info["rounds"])
        kernels.sweeps(Zc, labels, k, max_size, nb, step, tol, members, size.copy(), where, size, sums, C, out,
                       True, stamp, devald, evald, clock)
        clock = int(out[6])
        info["rounds"] += int(out[0])
        info["moves"] += int(out[1])
        info["swaps"] += int(out[2])
        info["dissolved"] += int(out[4])
        info["evaluations"] += int(out[5])
        if int(out[0]) < step:  # stopped early: nothing (or too little) left to gain
            converged = True
            break
    _, labels = np.unique(labels, return_inverse=True)
    labels = labels.reshape(-1).astype(np.int64)
    message = ""
    if status == "done" and not converged:
        status = "limit"
        message = f"stopped after the last of {rounds} rounds"
    elif status == "limit":
        message = "time limit reached"
    return Solution(labels=labels, status=status, message=message, info=info)


def _settled_groups(regions: np.ndarray, labels: np.ndarray, g: int, nb: np.ndarray) -> np.ndarray:
    """Groups whose records, and the records of all their neighbour groups, come from one
    region (where the search already ran with the same neighbourhood): nothing to do there
    until a neighbour changes. A group with records from two regions is never settled."""
    lo = np.full(g, np.iinfo(np.int64).max, dtype=np.int64)
    hi = np.full(g, -1, dtype=np.int64)
    np.minimum.at(lo, labels, regions)
    np.maximum.at(hi, labels, regions)
    region = np.where(lo == hi, lo, -1)
    same = np.where(nb >= 0, region[np.maximum(nb, 0)] == region[:, None], True)
    return (region >= 0) & same.all(axis=1)


def batch_local_search(Z: np.ndarray, labels: np.ndarray, k: int, ctx: Context, *, rounds: int = 9,
                       neighbours: int = 8, max_size: int | None = None, tol: float = 1e-4,
                       compiled: bool | None = None, regions: np.ndarray | None = None) -> Solution:
    """Improve a k-partition by batched moves and swaps between neighbouring groups.

    An improvement core (``improver(Z, labels, k, ctx, **options) -> Solution``): the
    returned partition never has a higher SSE than ``labels``, and keeps every group between
    ``k`` and ``max_size`` records (groups already larger only shrink).

    Parameters
    ----------
    Z : ndarray of shape (n, d)
    labels : ndarray of int, shape (n,)
        A k-partition (group numbers 0..g-1).
    k : int
    ctx : Context
        Deadline polled once per round.
    rounds : int, default 9
        Most rounds; it stops earlier at a local optimum (no improving move or swap). The
        neighbour lists are recomputed every third round (centroids move little).
    neighbours : int, default 8
        Candidate groups per record: the nearest group centroids to its own group's.
    max_size : int, optional
        Largest group a move may create; default ``2k - 1``.
    tol : float, default 1e-4
        Compiled sweeps only: stop after a sweep that lowers the SSE by less than this
        fraction (0 = sweep until nothing improves or ``rounds`` is reached).
    compiled : bool, optional
        None or True (default): the sweeps, compiled when numba is installed and otherwise
        the same source run as plain Python (the same partition bit for bit, much slower).
        False: the numpy rounds instead (batched moves and swaps, another search with
        another result; kept for comparison).

    regions : ndarray of int, shape (n,), optional
        Compiled sweeps only. Where each record was last improved (the large-data path's
        border repair passes its block, or its window of the last pass): a group whose records
        and whose neighbour groups' records all come from one region was already searched
        with this neighbourhood, so it starts *settled* and is evaluated only once a
        neighbour group changes. The search then starts at the borders between regions and
        spreads inward only as far as the changes reach. None (default): every group starts
        unsettled.

    The quality/time knob of the border repair is ``rounds``, ``neighbours`` and ``tol``
    (more neighbours: lower IL, proportionally more time).

    Examples
    --------
    >>> from pysdcmicro._context import Context
    >>> Z = np.array([[0.0], [0.1], [5.0], [5.1], [0.2], [5.2]])
    >>> sol = batch_local_search(Z, np.array([0, 0, 0, 1, 1, 1]), 3, Context(0))
    >>> sol.labels.tolist()
    [0, 0, 1, 1, 0, 1]
    """
    rounds = check_positive_int(rounds, "rounds", minimum=0)
    neighbours = check_positive_int(neighbours, "neighbours")
    max_size = check_positive_int(max_size, "max_size", minimum=k, allow_none=True)
    max_size = 2 * k - 1 if max_size is None else max_size
    tol = check_number(tol, "tol", low=0.0)
    labels = np.array(labels, dtype=np.int64, copy=True)
    n = Z.shape[0]
    g = int(labels.max()) + 1 if n else 0
    L = min(neighbours, g - 1)
    if L < 1 or rounds == 0:
        return Solution(labels=labels, info={"rounds": 0, "moves": 0, "swaps": 0})
    if compiled is None or compiled:
        kernels = _kernels() or _plain_kernels()
        if regions is not None:
            regions = np.asarray(regions, dtype=np.int64).reshape(-1)
            if regions.shape != (n,) or (n and regions.min() < 0):
                raise InvalidInputError(f"`regions` must hold one integer >= 0 per record ({n}); got shape "
                                        f"{regions.shape}.")
        return _compiled_search(kernels, Z, labels, k, ctx, rounds, L, max_size, tol, regions)
    return _numpy_search(Z, labels, k, ctx, rounds, L, max_size)


def _numpy_search(Z: np.ndarray, labels: np.ndarray, k: int, ctx: Context, rounds: int, L: int,
                  max_size: int) -> Solution:
    """The numpy rounds: each applies the improving moves and swaps best first, every group
    in at most one of them, so every applied delta is exact."""
    n, d = Z.shape
    g = int(labels.max()) + 1 if n else 0
    info = {"rounds": 0, "moves": 0, "swaps": 0}
    zz = np.einsum("ij,ij->i", Z, Z)
    scale = float(zz.sum()) / max(n, 1) + 1.0
    tol = 1e-12 * scale
    status = "done"
    for r in range(rounds):
        if ctx.expired():
            status = "limit"
            break
        size = np.bincount(labels, minlength=g)
        sums = np.empty((g, d))
        for j in range(d):
            sums[:, j] = np.bincount(labels, weights=Z[:, j], minlength=g)
        live = size > 0
        C = np.zeros((g, d))
        C[live] = sums[live] / size[live, None]
        cc = np.einsum("ij,ij->i", C, C)
        if r % _NB_EVERY == 0:
            nb = _numpy_neighbours(C, cc, live, L)
        best_delta, use_swap, swap_with, cand, jm = _best_changes(Z, zz, labels, k, max_size, size, C, cc, live, nb)
        improving = np.flatnonzero(best_delta < -tol)
        info["rounds"] = r + 1
        if improving.size == 0:
            break
        labels, moves, swaps = _apply_changes(labels, improving, best_delta, use_swap, swap_with, cand, jm, g)
        info["moves"] += moves
        info["swaps"] += swaps
    else:
        # Every round improved something: the round cap, not a local optimum, stopped it.
        status = "limit"
        info["message"] = f"stopped after the last of {rounds} rounds"
    message = info.pop("message", "time limit reached" if status == "limit" else "")
    return Solution(labels=labels, status=status, message=message, info=info)


def _numpy_neighbours(C: np.ndarray, cc: np.ndarray, live: np.ndarray, L: int) -> np.ndarray:
    """Each group's L nearest live groups by centroid, nearest first (a g x g matrix)."""
    G = cc[:, None] - 2.0 * (C @ C.T) + cc[None, :]
    G[:, ~live] = np.inf
    np.fill_diagonal(G, np.inf)
    nb = np.argpartition(G, L - 1, axis=1)[:, :L]
    return np.take_along_axis(nb, np.argsort(np.take_along_axis(G, nb, 1), axis=1, kind="stable"), 1)


def _best_changes(Z, zz, labels, k, max_size, size, C, cc, live, nb) -> tuple:
    """Each record's best move to, or swap with a record of, a neighbour group: (best delta,
    whether it is a swap, the swap partner, the candidate groups, the best move's column)."""
    n = Z.shape[0]
    g = size.shape[0]
    ar = np.arange(n)
    own = labels
    dA = np.maximum(zz - 2.0 * np.einsum("ij,ij->i", Z, C[own]) + cc[own], 0.0)
    cand = nb[own]                                                   # n x L
    dxB = np.maximum(zz[:, None] - 2.0 * np.einsum("id,ild->il", Z, C[cand]) + cc[cand], 0.0)
    sA = size[own].astype(np.float64)
    sB = size[cand].astype(np.float64)
    # Moves.
    gain_out = np.where(sA > k, sA / np.maximum(sA - 1.0, 1.0) * dA, -np.inf)
    cost_in = np.where(sB < max_size, sB / (sB + 1.0) * dxB, np.inf)
    same = cand == own[:, None]          # only when fewer than L other groups exist
    cost_in[~live[cand] | same] = np.inf
    jm = np.argmin(cost_in, axis=1)
    move_delta = cost_in[ar, jm] - gain_out
    # Swaps: the members of each candidate group, padded with -1.
    s_max = int(size.max())
    order = np.argsort(labels, kind="stable")
    starts = np.concatenate([[0], np.cumsum(size)])
    members = np.full((g, s_max), -1, dtype=np.int64)
    members[labels[order], ar - starts[labels[order]]] = order
    swap_delta = np.full(n, np.inf)
    swap_with = np.full(n, -1, dtype=np.int64)
    for lo in range(0, n, _CHUNK):
        hi = min(n, lo + _CHUNK)
        Y = members[cand[lo:hi]]                                     # c x L x s
        valid = Y >= 0
        Yc = np.where(valid, Y, 0)
        zy = Z[Yc]                                                   # c x L x s x d
        xy = np.einsum("cd,clsd->cls", Z[lo:hi], zy)
        yA = np.einsum("clsd,cd->cls", zy, C[own[lo:hi]])
        dxy = np.maximum(zz[lo:hi, None, None] + zz[Yc] - 2.0 * xy, 0.0)
        dyA = np.maximum(zz[Yc] - 2.0 * yA + cc[own[lo:hi], None, None], 0.0)
        delta = (dyA - dA[lo:hi, None, None] + dxB[lo:hi, :, None] - dA[Yc]
                 - dxy * (1.0 / sA[lo:hi, None, None] + 1.0 / sB[lo:hi, :, None]))
        delta[~valid | same[lo:hi, :, None]] = np.inf
        flat = delta.reshape(hi - lo, -1)
        best = np.argmin(flat, axis=1)
        swap_delta[lo:hi] = flat[np.arange(hi - lo), best]
        swap_with[lo:hi] = Yc.reshape(hi - lo, -1)[np.arange(hi - lo), best]
    use_swap = swap_delta < move_delta
    best_delta = np.where(use_swap, swap_delta, move_delta)
    return best_delta, use_swap, swap_with, cand, jm


def _apply_changes(labels, improving, best_delta, use_swap, swap_with, cand, jm, g) -> tuple:
    """Apply the improving changes best first, each group in at most one: (labels, moves, swaps)."""
    own = labels
    improving = improving[np.argsort(best_delta[improving], kind="stable")]
    touched = np.zeros(g, dtype=bool)
    new = labels.copy()
    moves = swaps = 0
    for x in improving.tolist():
        a = own[x]
        if use_swap[x]:
            y = int(swap_with[x])
            b = own[y]
        else:
            y = -1
            b = int(cand[x, jm[x]])
        if touched[a] or touched[b]:
            continue
        touched[a] = touched[b] = True
        new[x] = b
        if y >= 0:
            new[y] = a
            swaps += 1
        else:
            moves += 1
    return new, moves, swaps
