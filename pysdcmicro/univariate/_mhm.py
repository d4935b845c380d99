"""Methods built on optimal univariate grouping along an ordering of the records.

* ``mhm``: multivariate Hansen-Mukherjee (Domingo-Ferrer et al. 2006): an ordering (MDAV,
  NPN, first principal component, TSP path, or any callable), then the optimal partition
  into runs of k..2k-1 consecutive records (:func:`~pysdcmicro.univariate.optimal_runs`).
* ``tsp-mhm``: C-MHM (Maya-Lopez, Casino and Solanas 2021): the ordering is a short
  Hamiltonian path over all records.
* ``compress-tsp-mhm``: Compress-TSP-MHM (Maya-Lopez, Martinez-Balleste and Casino 2022,
  Algorithm 1): the path is computed over the centroids of MDAV groups of size c, then
  decompressed.

Each takes ``circular=True`` for the Tour2Assignment reading of the order (Mortazavi and
Jalili 2015): the order is a cycle, the last records may join the first ones (the best of
the 2k-1 rotations; with a TSP ordering the closed tour is shortened instead of the path).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._compile import cached
from .._context import Context
from .._registry import register_method
from .._result import Solution
from .._validation import check_choice, check_positive_int
from ._hansen_mukherjee import optimal_runs
from ._orderings import (
    ORDERINGS,
    WITHIN_GROUP_ORDERS,
    _check_tsp_options,
    _compressed_tsp_path,
    _tsp_path,
    check_permutation,
    mdav_order,
    npn_order,
    pca_order,
    path_length,
)

__all__ = []


#: How a path method picks the order it groups along.
SELECTIONS = ("sse", "length")


class _Selector:
    """Scores orders by the SSE of their optimal grouping and keeps the best one.

    With ``select="sse"`` the path search hands it the best path at a few checkpoints (the
    paths visited are all short; their groupings differ by up to ~1 IL point on the CASC
    sets); with ``"length"`` only the final, shortest path is scored (plain C-MHM)."""

    def __init__(self, Z: np.ndarray, k: int, circular: bool, ctx: Context):
        self.Z, self.k, self.circular, self.ctx = Z, k, circular, ctx
        self.best_sse = np.inf
        self.labels = None
        self.order = None
        self.scored = 0
        self._seen: set = set()
        self.compiled = True  # False: the numpy DP (see _load_grouping)

    def __call__(self, order: np.ndarray) -> None:
        key = hash(order.tobytes())
        if key in self._seen:
            return
        self._seen.add(key)
        labels, cost = optimal_runs(self.Z, order, self.k, circular=self.circular, compiled=self.compiled)
        self.scored += 1
        if cost < self.best_sse:
            self.best_sse, self.labels, self.order = cost, labels, order
            self.ctx.offer(labels, cost)
            self.ctx.report(sse=cost, stage="grouping", paths_scored=self.scored)


def _group_along(Z: np.ndarray, k: int, ctx: Context, order: np.ndarray, circular: bool, info: dict,
                 stopped: bool, selector: _Selector | None = None) -> Solution:
    if selector is None:
        selector = _Selector(Z, k, circular, ctx)
    selector(order)  # the final path is always a candidate
    if not np.array_equal(selector.order, order):
        info["shortest_path_length"] = info.get("path_length")
        info["path_length"] = path_length(Z, selector.order)
    info["paths_scored"] = selector.scored
    info["circular"] = circular
    status = "limit" if stopped else "done"
    message = "time limit reached during the path search; grouped along the best path so far" if stopped else ""
    return Solution(labels=selector.labels, status=status, message=message, info=info)


#: Under a time limit with less than this many seconds left, the grouping of up to
#: ``NUMPY_GROUPING_MAX_WORK`` records x k x columns runs in numpy (tenths of a second)
#: unless the compiled DP is loaded already (loading it takes about as long, unstoppable).
NUMPY_GROUPING_SECONDS = 2.0
NUMPY_GROUPING_MAX_WORK = 500_000


def _load_grouping(Z: np.ndarray, k: int, ctx: Context, circular: bool = False, selector=None) -> None:
    """Under a time limit, the compiled grouping (optimal runs) loaded before the time is
    shared out: its first call loads it (tenths of a second), which would otherwise come
    after the path search's share of the time. With little time and small data, the numpy
    DP instead (``selector.compiled = False``)."""
    from . import _hansen_mukherjee as hm

    if not (ctx.deadline.limited and Z.shape[0] * k >= hm._COMPILED_MIN_WORK):
        return
    nb = hm._kernels()
    if nb is not None and not nb.dp_linear.signatures and not circular and selector is not None \
            and ctx.remaining() < NUMPY_GROUPING_SECONDS and Z.size * k <= NUMPY_GROUPING_MAX_WORK:
        selector.compiled = False
        return
    if nb is not None and not _loadable(nb.dp_linear):  # a first use: numba compiles (seconds)
        ctx.report(stage="compiling the grouping kernels (first use only; cached on disk afterwards)")
    if nb is not None:  # the kernels the full-size call will use, on 2k records
        Zo = np.ascontiguousarray(Z[: 2 * k], dtype=np.float64)
        _, _, choice = nb.dp_linear(Zo, k, 2 * k - 1)
        nb.backtrack(choice, 2 * k)


def _loadable(dispatcher) -> bool:
    """Whether a numba function is compiled in this process or in numba's on-disk cache."""
    return cached(dispatcher, unknown=True)  # cannot tell: say nothing


def _one_group(Z: np.ndarray) -> Solution:
    return Solution(labels=np.zeros(Z.shape[0], dtype=np.int64), status="done",
                    message="fewer than 2k records: one group")


@register_method("mhm", summary="Multivariate Hansen-Mukherjee: optimal runs of k..2k-1 along an ordering "
                 "(mdav, npn, pca, tsp or a callable)", renamed={"neighbors": "neighbours"})
def _mhm_solver(Z: np.ndarray, k: int, ctx: Context, *, ordering: str = "mdav", circular: bool = False,
                solver: str = "ils", iterations: int | None = None, neighbours: int = 10,
                select: str = "sse") -> Solution:
    if not callable(ordering):
        check_choice(ordering, "ordering", tuple(ORDERINGS))
    _check_tsp_options(solver, iterations, neighbours)
    check_choice(select, "select", SELECTIONS)
    n = Z.shape[0]
    if n < 2 * k:
        return _one_group(Z)
    info: dict[str, Any] = {"ordering": ordering if isinstance(ordering, str) else getattr(ordering, "__name__", "callable")}
    stopped = False
    selector = _Selector(Z, k, circular, ctx)
    _load_grouping(Z, k, ctx, circular, selector)
    if callable(ordering):
        order = check_permutation(ordering(Z, ctx), n)
    elif ordering == "mdav":
        order = mdav_order(Z, ctx, k=k)
        stopped = ctx.expired()
    elif ordering == "npn":
        order = npn_order(Z)
    elif ordering == "pca":
        order = pca_order(Z)
    else:
        order, tinfo = _tsp_path(Z, ctx.child(fraction=0.95, stage="tsp"), closed=circular, solver=solver,
                                 iterations=iterations, neighbours=neighbours,
                                 checkpoint=selector if select == "sse" else None)
        stopped = tinfo.pop("stopped", False)
        info["tsp"] = tinfo
        info["select"] = select
    info["path_length"] = path_length(Z, order)
    return _group_along(Z, k, ctx, order, circular, info, stopped, selector)


@register_method("tsp-mhm", summary="C-MHM: optimal runs of k..2k-1 along a short Hamiltonian path over all "
                 "records (Maya-Lopez et al. 2021)", randomized=True, renamed={"neighbors": "neighbours"})
def _tsp_mhm_solver(Z: np.ndarray, k: int, ctx: Context, *, circular: bool = False, solver: str = "ils",
                    iterations: int | None = None, neighbours: int = 10, select: str = "sse") -> Solution:
    _check_tsp_options(solver, iterations, neighbours)
    check_choice(select, "select", SELECTIONS)
    if Z.shape[0] < 2 * k:
        return _one_group(Z)
    selector = _Selector(Z, k, circular, ctx)
    _load_grouping(Z, k, ctx, circular, selector)
    order, tinfo = _tsp_path(Z, ctx.child(fraction=0.95, stage="tsp"), closed=circular, solver=solver,
                             iterations=iterations, neighbours=neighbours,
                             checkpoint=selector if select == "sse" else None)
    stopped = tinfo.pop("stopped", False)
    info = {"path_length": tinfo.pop("path_length"), "select": select, "tsp": tinfo}
    return _group_along(Z, k, ctx, order, circular, info, stopped, selector)


@register_method("compress-tsp-mhm", summary="Compress-TSP-MHM: path over the centroids of MDAV groups of size c, "
                 "decompressed, then optimal runs (Maya-Lopez et al. 2022)", randomized=True, renamed={"neighbors": "neighbours"})
def _compress_tsp_mhm_solver(Z: np.ndarray, k: int, ctx: Context, *, compression: int = 2,
                             within: str = "path", circular: bool = False, solver: str = "ils",
                             iterations: int | None = None, neighbours: int = 10, select: str = "sse") -> Solution:
    _check_tsp_options(solver, iterations, neighbours)
    check_choice(select, "select", SELECTIONS)
    check_positive_int(compression, "compression", minimum=1)
    check_choice(within, "within", WITHIN_GROUP_ORDERS)
    if Z.shape[0] < 2 * k:
        return _one_group(Z)
    selector = _Selector(Z, k, circular, ctx)
    _load_grouping(Z, k, ctx, circular, selector)
    order, info = _compressed_tsp_path(Z, ctx.child(fraction=0.95, stage="tsp"), compression=compression,
                                       within=within, closed=circular, solver=solver, iterations=iterations,
                                       neighbours=neighbours, checkpoint=selector if select == "sse" else None)
    stopped = info.pop("stopped", False)
    info["select"] = select
    return _group_along(Z, k, ctx, order, circular, info, stopped, selector)
