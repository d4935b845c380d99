"""Orderings of the records for optimal univariate grouping (MHM).

Each ordering is a function ``f(Z, ctx=None, **options) -> permutation`` of the rows of the
standardized data ``Z`` (STYLE item 5: a method takes an ordering by name or as any
callable ``f(Z, ctx)``):

* :func:`mdav_order`: the records in the order MDAV puts them into groups;
* :func:`npn_order`: nearest point next, from the record farthest from the centroid;
* :func:`pca_order`: sorted by the first principal component;
* :func:`tsp_path`: a short Hamiltonian path (our iterated 2-opt/Or-opt local search, or
  OR-Tools' routing search);
* :func:`compressed_tsp_path`: Compress-TSP (Maya-Lopez et al. 2022, Algorithm 1, phases
  1-3): MDAV groups of size ``c``, a path over their centroids, each group's records
  inserted in turn.
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable

import numpy as np

from .._context import Context
from .._errors import InvalidInputError
from .._partition import group_means
from .._validation import check_choice, check_positive_int
from ..constructive._mdav import mdav_labels
from ._tsp import EXACT_MAX_NODES, exact_order, greedy_edge_order, improve_order, knn, path_length

__all__ = ["mdav_order", "npn_order", "pca_order", "tsp_path", "compressed_tsp_path", "ORDERINGS",
           "resolve_ordering", "TSP_SOLVERS", "WITHIN_GROUP_ORDERS"]

#: Path search engines of :func:`tsp_path`.
TSP_SOLVERS = ("ils", "ortools")
#: Orders of the records of one compressed group in :func:`compressed_tsp_path`.
WITHIN_GROUP_ORDERS = ("path", "centroid", "index")

#: Kicks of the iterated local search per record when ``iterations`` is None.
DEFAULT_KICKS_PER_RECORD = 5
#: Independent search chains sharing the kicks (from the same greedy start).
CHAINS = 1
#: Paths handed to a checkpoint per chain (see ``improve_order``).
CHECKPOINTS = 50
#: Longest run of records moved by one kick.
MAX_SEGMENT = 50


def _ctx(ctx: Context | None) -> Context:
    return ctx if ctx is not None else Context()


def mdav_order(Z: np.ndarray, ctx: Context | None = None, *, k: int = 3) -> np.ndarray:
    """Records in the order MDAV (group size ``k``) puts them into groups; within a group,
    the group's seed record first, then its neighbours nearest first.

    Examples
    --------
    >>> import numpy as np
    >>> Z = np.array([[0.0], [10.0], [1.0], [11.0], [2.0], [12.0]])
    >>> mdav_order(Z, k=3).tolist()
    [0, 2, 4, 1, 3, 5]
    """
    order: list = []
    limited = ctx is not None and ctx.deadline.limited  # cut short: the rest along the principal axis
    mdav_labels(Z, int(k), order=order, deadline=ctx.deadline if limited else None)
    return np.array(order, dtype=np.int64)


def npn_order(Z: np.ndarray, ctx: Context | None = None) -> np.ndarray:
    """Nearest point next: start at the record farthest from the centroid, then always go
    to the nearest record not yet visited (ties: lowest row). O(n^2 d) time, O(n d) memory.

    Examples
    --------
    >>> import numpy as np
    >>> Z = np.array([[0.0], [10.0], [1.0], [11.0], [2.0]])
    >>> npn_order(Z).tolist()
    [3, 1, 4, 2, 0]
    """
    n = Z.shape[0]
    if n == 0:
        return np.empty(0, dtype=np.int64)
    center = Z.mean(axis=0)
    cur = int(np.argmax(((Z - center) ** 2).sum(axis=1)))
    sq = np.einsum("ij,ij->i", Z, Z)
    visited = np.zeros(n, dtype=bool)
    order = np.empty(n, dtype=np.int64)
    for t in range(n):
        order[t] = cur
        visited[cur] = True
        if t == n - 1:
            break
        x = Z[cur]
        dist = sq - 2.0 * (Z @ x)
        dist[visited] = np.inf
        cur = int(np.argmin(dist))
    return order


def pca_order(Z: np.ndarray, ctx: Context | None = None) -> np.ndarray:
    """Records sorted by their score on the first principal component (ties: lowest row).
    The component's sign is fixed so that its largest loading is positive. O(n d^2).

    Examples
    --------
    >>> import numpy as np
    >>> Z = np.array([[2.0, 2.1], [0.0, 0.1], [1.0, 0.9], [3.0, 3.0]])
    >>> pca_order(Z).tolist()
    [1, 2, 0, 3]
    """
    n, d = Z.shape
    if n == 0 or d == 0:
        return np.arange(n, dtype=np.int64)
    C = Z - Z.mean(axis=0)
    cov = C.T @ C
    w, V = np.linalg.eigh(cov)
    v = V[:, -1]
    if v[np.argmax(np.abs(v))] < 0:
        v = -v
    return np.argsort(C @ v, kind="stable").astype(np.int64)


def _tsp_path(Z: np.ndarray, ctx: Context, *, closed: bool = False, solver: str = "ils",
              iterations: int | None = None, neighbours: int = 10,
              checkpoint: Callable | None = None) -> tuple[np.ndarray, dict]:
    """The path and the facts about its search (see :func:`tsp_path`); ``checkpoint`` is
    handed to :func:`~pysdcmicro.univariate._tsp.improve_order`. ``info["seconds"]``: wall
    time of the path search (with the checkpoints' scoring, when there is one)."""
    started = time.perf_counter()
    order, info = _tsp_path_inner(Z, ctx, closed=closed, solver=solver, iterations=iterations,
                                  neighbours=neighbours, checkpoint=checkpoint)
    info["seconds"] = time.perf_counter() - started
    return order, info


def _tsp_path_inner(Z: np.ndarray, ctx: Context, *, closed: bool, solver: str, iterations: int | None,
                    neighbours: int, checkpoint: Callable | None) -> tuple[np.ndarray, dict]:
    n = Z.shape[0]
    info: dict[str, Any] = {"solver": solver, "closed": closed, "neighbours": neighbours}
    if n <= EXACT_MAX_NODES:
        order = exact_order(Z, closed=closed)
        info.update(method="enumeration", path_length=path_length(Z, order), stopped=False)
        if closed:
            info["cycle_length"] = path_length(Z, order, closed=True)
        return order, info
    if ctx.expired():
        order = pca_order(Z)
        info.update(path_length=path_length(Z, order), stopped=True, fallback="pca (time limit reached)")
        return order, info
    nbrs = knn(Z, neighbours, deadline=ctx.expired)
    if nbrs is None:  # the time limit came during the O(n^2 d) candidate lists
        order = pca_order(Z)
        info.update(path_length=path_length(Z, order), stopped=True, fallback="pca (time limit reached)")
        return order, info
    start = greedy_edge_order(Z, nbrs)
    info["start"] = "greedy-edge"
    info["start_length"] = path_length(Z, start, closed=closed)
    seed = ctx.seed()
    info["seed"] = seed
    stopped = False
    if solver == "ils":
        kicks = int(DEFAULT_KICKS_PER_RECORD * n) if iterations is None else int(iterations)

        def report(done, length):
            ctx.report(iteration=done, stage="tsp", path_length=length)

        rng = np.random.default_rng(seed)
        chains = max(1, int(CHAINS))
        order, best_len = None, np.inf
        done = acc = 0
        for r in range(chains):
            share = kicks // chains + (1 if r < kicks % chains else 0)
            o, ils = improve_order(Z, start, closed=closed, nbrs=nbrs, kicks=share, rng=rng,
                                   deadline=ctx.expired, report=report, checkpoint=checkpoint,
                                   checkpoints=CHECKPOINTS, max_segment=MAX_SEGMENT)
            length = path_length(Z, o, closed=closed)
            if length < best_len:
                order, best_len = o, length
            done += ils["kicks_done"]
            acc += ils["accepted"]
            stopped = ils["stopped"]
            if stopped:
                break
        info.update(kicks=kicks, kicks_done=done, kicks_accepted=acc, chains=chains,
                    max_segment=MAX_SEGMENT, checkpoints=CHECKPOINTS if checkpoint is not None else 0)
    else:
        from .._ortools import routing_path

        seconds = max(1.0, n / 100.0) if iterations is None else None
        remaining = ctx.remaining()
        if math.isfinite(remaining):
            seconds = remaining if seconds is None else min(seconds, remaining)
        order, ort = routing_path(Z, closed=closed, time_limit=seconds, solution_limit=iterations,
                                  nbrs=nbrs, initial=start if n > _matrix_limit() else None)
        info["ortools"] = ort
        if order is None:
            order = _local_start(Z, start, closed, nbrs)
            info["fallback"] = "greedy-edge + local search (OR-Tools found no solution)"
        stopped = ctx.expired()
    info["stopped"] = bool(stopped)
    info["path_length"] = path_length(Z, order)
    if closed:
        info["cycle_length"] = path_length(Z, order, closed=True)
    return order, info


def _matrix_limit() -> int:
    from .._ortools import ROUTING_MATRIX_MAX_NODES

    return ROUTING_MATRIX_MAX_NODES


def _local_start(Z, start, closed, nbrs):
    return improve_order(Z, start, closed=closed, nbrs=nbrs, kicks=0)[0]


def _check_tsp_options(solver: str, iterations: int | None, neighbours: int) -> None:
    check_choice(solver, "solver", TSP_SOLVERS)
    check_positive_int(iterations, "iterations", minimum=0, allow_none=True)
    check_positive_int(neighbours, "neighbours", minimum=2)


def tsp_path(Z: np.ndarray, ctx: Context | None = None, *, closed: bool = False, solver: str = "ils",
             iterations: int | None = None, neighbours: int = 10, rng: Any = None,
             time_limit: float | None = None, return_info: bool = False):
    """A short Hamiltonian path over the records (the rows of ``Z``), for C-MHM.

    Parameters
    ----------
    Z : ndarray of shape (n, d)
        Records, already scaled; distances are Euclidean.
    ctx : Context, optional
        Run context (its ``rng`` and deadline are used); made from ``rng`` and
        ``time_limit`` when not given.
    closed : bool, default False
        Shorten the closed tour (for circular grouping) instead of the open path.
    solver : {"ils", "ortools"}
        ``"ils"``: greedy-edge start, then our 2-opt + Or-opt iterated local search
        (:mod:`pysdcmicro.univariate._tsp`). ``"ortools"``: OR-Tools routing (first
        solution ``PATH_CHEAPEST_ARC`` and guided local search; see
        :func:`pysdcmicro._ortools.routing_path`).
    iterations : int or None
        ``"ils"``: number of kicks (default 5 n). ``"ortools"``: solution limit (default:
        none, and a time limit of max(1, n/100) seconds).
    neighbours : int, default 10
        Candidate-list length (nearest records considered by the moves).
    return_info : bool
        Also return a dict of facts: ``path_length``, ``start_length``, ``seed``,
        ``kicks_done``, ``stopped``, OR-Tools settings (with the integer scaling factor).

    Returns
    -------
    order : ndarray of int64, a permutation of range(n)
    info : dict (only when ``return_info``)

    Notes
    -----
    With the default budget the shortest paths found on the CASC sets are within 0.2 % of
    Concorde's optimal ones (Maya-Lopez et al. 2022, Tables 2-4: Census 1175.4 against
    1173.23, Tarragona 773.0 against 772.62; EIA 732.4, shorter than the published 740.69).
    Time: a kick costs about 0.5-1 ms (pure Python local search; 2.5-5 ms per record with
    the default 5 kicks per record), plus O(n^2 d) once for the candidate lists (blocked);
    memory O(n (d + K)), no n x n matrix (the OR-Tools solver uses one up to
    :data:`pysdcmicro._ortools.ROUTING_MATRIX_MAX_NODES` records).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x = rng.permutation(40).astype(float)
    >>> Z = np.column_stack([x, np.zeros(40)])
    >>> order = tsp_path(Z, rng=0)
    >>> bool(np.all(np.diff(x[order]) == 1) or np.all(np.diff(x[order]) == -1))
    True
    """
    _check_tsp_options(solver, iterations, neighbours)
    if ctx is None:
        ctx = Context(rng, time_limit)
    order, info = _tsp_path(np.ascontiguousarray(Z, dtype=np.float64), ctx, closed=closed, solver=solver,
                            iterations=iterations, neighbours=neighbours)
    return (order, info) if return_info else order


def _compressed_tsp_path(Z: np.ndarray, ctx: Context, *, compression: int = 2, within: str = "path",
                         closed: bool = False, solver: str = "ils", iterations: int | None = None,
                         neighbours: int = 10, checkpoint: Callable | None = None) -> tuple[np.ndarray, dict]:
    c = int(compression)
    if c == 1:
        order, info = _tsp_path(Z, ctx, closed=closed, solver=solver, iterations=iterations,
                                neighbours=neighbours, checkpoint=checkpoint)
        info["compression"] = 1
        return order, info
    labels = mdav_labels(Z, c, deadline=ctx.deadline if ctx.deadline.limited else None)
    g = int(labels.max()) + 1
    centroids = group_means(Z, labels, g)
    center = Z.mean(axis=0)
    rows = np.arange(Z.shape[0])
    if within == "centroid":
        key = ((Z - center) ** 2).sum(axis=1)
    elif within == "index":
        key = rows.astype(np.float64)

    def decompress(corder: np.ndarray) -> np.ndarray:
        """Records group after group along ``corder``; within a group by ``within``
        (ties: lowest row). O(n log n), vectorised."""
        rank = np.empty(g, dtype=np.int64)
        rank[corder] = np.arange(g)
        if within == "path":
            # Direction from the previous to the next centroid on the path (the group's own
            # centroid stands in for a missing neighbour at either end).
            C = centroids[corder]
            prev = np.vstack([C[:1], C[:-1]])
            nxt = np.vstack([C[1:], C[-1:]])
            direction = np.empty_like(C)
            direction[corder] = nxt - prev
            k_ = np.einsum("ij,ij->i", Z, direction[labels])
        else:
            k_ = key
        return np.lexsort((rows, k_, rank[labels])).astype(np.int64)

    cp = None if checkpoint is None else (lambda corder: checkpoint(decompress(corder)))
    corder, cinfo = _tsp_path(centroids, ctx, closed=closed, solver=solver, iterations=iterations,
                              neighbours=neighbours, checkpoint=cp)
    order = decompress(corder)
    info = {"compression": c, "within": within, "n_centroids": g,
            "centroid_path_length": cinfo.pop("path_length"), "tsp": cinfo,
            "stopped": cinfo.get("stopped", False), "path_length": path_length(Z, order)}
    if closed:
        info["cycle_length"] = path_length(Z, order, closed=True)
    return order, info


def compressed_tsp_path(Z: np.ndarray, ctx: Context | None = None, *, compression: int = 2,
                        within: str = "path", closed: bool = False, solver: str = "ils",
                        iterations: int | None = None, neighbours: int = 10, rng: Any = None,
                        time_limit: float | None = None, return_info: bool = False):
    """Compress-TSP ordering (Maya-Lopez, Martinez-Balleste and Casino 2022, Algorithm 1,
    phases 1-3).

    1. Compression: MDAV with group size ``compression`` (c) on ``Z``; the group centroids
       form the compressed data set (about n / c points).
    2. A short path over the centroids (:func:`tsp_path`).
    3. Decompression: the centroids' records, group after group along that path; within a
       group, ``within`` decides: ``"path"`` (default: along the direction from the
       previous to the next centroid), ``"centroid"`` (the paper's rule: ascending distance
       to the data set's centroid) or ``"index"`` (ascending row, as the authors' public R
       code does).

    ``compression=1`` is the plain :func:`tsp_path`. Other parameters as in
    :func:`tsp_path`; the info dict adds ``centroid_path_length`` and ``n_centroids``.

    Examples
    --------
    >>> import numpy as np
    >>> Z = np.array([[0.0], [0.1], [5.0], [5.1], [1.0], [1.1]])
    >>> compressed_tsp_path(Z, compression=2, within="path", rng=0).tolist()
    [3, 2, 5, 4, 1, 0]
    """
    _check_tsp_options(solver, iterations, neighbours)
    check_positive_int(compression, "compression", minimum=1)
    check_choice(within, "within", WITHIN_GROUP_ORDERS)
    if ctx is None:
        ctx = Context(rng, time_limit)
    order, info = _compressed_tsp_path(np.ascontiguousarray(Z, dtype=np.float64), ctx, compression=compression,
                                       within=within, closed=closed, solver=solver, iterations=iterations,
                                       neighbours=neighbours)
    return (order, info) if return_info else order


#: Built-in orderings by name (``mhm(ordering=NAME)``).
ORDERINGS: dict[str, Callable] = {
    "mdav": mdav_order,
    "npn": npn_order,
    "pca": pca_order,
    "tsp": tsp_path,
}


def resolve_ordering(ordering: Any) -> Callable | str:
    """A built-in ordering name (returned as is, checked) or a callable."""
    if callable(ordering):
        return ordering
    return check_choice(ordering, "ordering", tuple(ORDERINGS))


def check_permutation(order: Any, n: int, what: str = "ordering") -> np.ndarray:
    """The result of a user ordering as int64 array, checked to be a permutation of range(n)."""
    try:
        arr = np.asarray(order)
    except Exception as exc:  # pragma: no cover - exotic objects
        raise InvalidInputError(f"`{what}` must return a permutation of range({n}); got {type(order).__name__}.") from exc
    if arr.ndim != 1 or arr.shape[0] != n or not np.issubdtype(arr.dtype, np.integer):
        raise InvalidInputError(
            f"`{what}` must return a permutation of range({n}) (1-D integers); got shape {arr.shape}, dtype {arr.dtype}."
        )
    arr = arr.astype(np.int64)
    seen = np.zeros(n, dtype=bool)
    if arr.min(initial=0) < 0 or arr.max(initial=-1) >= n:
        raise InvalidInputError(f"`{what}` must return a permutation of range({n}); got values out of range.")
    seen[arr] = True
    if not seen.all():
        raise InvalidInputError(f"`{what}` must return a permutation of range({n}); got repeated records.")
    return arr
