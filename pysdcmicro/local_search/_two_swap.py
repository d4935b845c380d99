"""Two-swap local search (Castro, Gentile, Spagnolo-Arrizabalaga, PSD 2022, section 3, Fig. 1),
with the optional 1-opt migration move of ICSM (Mortazavi and Jalili 2015, Definition 2).

Each iteration applies the single best move over all pairs of records in different groups
(swap) and, with ``one_opt``, over all records and groups (migration of a record from a
group above ``k`` to a group below ``2k - 1``), until no move lowers the SSE.

Best improvement without re-scanning all pairs: every record keeps its best swap partner
and its best migration target. A move touches two groups A and B; only pairs with a
record of A or B change value, so after a move the rows of A's and B's records are
recomputed (O(k n d)), every other record's best is compared with its new pair values
from those rows, and only records whose best partner was in A or B are re-scanned. The
result is Fig. 1's sequence of best moves (between equal gains the record with the lowest
index wins; a record's partner among equal gains may differ from a full rescan's).

Swaps alone run compiled (:mod:`._two_swap_numba`: the same bookkeeping, pair by pair,
without the n x block matrix products); with ``one_opt`` the rows are matrix products.
"""

from __future__ import annotations

import time

import numpy as np

from .._context import Context
from .._errors import InvalidTypeError
from .._registry import register_improvement
from .._result import Solution
from .._validation import check_positive_int
from ._state import BLOCK, Partition, tolerance

__all__ = ["two_swap_search"]


def _best_swaps(P: Partition, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    vals = np.empty(rows.size)
    args = np.empty(rows.size, dtype=np.int64)
    for start in range(0, rows.size, BLOCK):
        blk = rows[start:start + BLOCK]
        D = P.swap_rows(blk)
        j = D.argmin(axis=1)
        vals[start:start + blk.size] = D[np.arange(blk.size), j]
        args[start:start + blk.size] = j
    return vals, args


def _best_migrations(P: Partition, rows: np.ndarray, k: int, max_size: int) -> tuple[np.ndarray, np.ndarray]:
    vals = np.empty(rows.size)
    args = np.empty(rows.size, dtype=np.int64)
    for start in range(0, rows.size, BLOCK):
        blk = rows[start:start + BLOCK]
        M = P.migrate_rows(blk, k, max_size)
        h = M.argmin(axis=1)
        vals[start:start + blk.size] = M[np.arange(blk.size), h]
        args[start:start + blk.size] = h
    return vals, args


def two_swap_search(P: Partition, k: int, *, one_opt: bool = False, max_size: int | None = None,
                    max_iterations: int | None = None, ctx: Context | None = None,
                    report_every: float = 0.5) -> tuple[int, str]:
    """Best-improvement two-swap (and 1-opt) on ``P`` in place.

    Returns ``(iterations, status)`` with status ``"done"`` at a local optimum, ``"limit"``
    when ``max_iterations`` or the context's deadline stopped it.
    """
    if not one_opt:
        return _two_swap_compiled(P, max_iterations=max_iterations, ctx=ctx, report_every=report_every)
    n = P.n
    max_size = 2 * k - 1 if max_size is None else max_size
    tol = tolerance(P)
    everyone = np.arange(n)
    sw_v, sw_j = _best_swaps(P, everyone)
    if one_opt:
        mg_v, mg_h = _best_migrations(P, everyone, k, max_size)
    current = P.sse()
    iterations = 0
    status = "done"
    last = time.monotonic()
    in_ab = np.zeros(n, dtype=bool)
    while True:
        if max_iterations is not None and iterations >= max_iterations:
            status = "limit"
            break
        if ctx is not None and ctx.expired():
            status = "limit"
            break
        i = int(np.argmin(sw_v))
        best = sw_v[i]
        kind = "swap"
        if one_opt:
            i2 = int(np.argmin(mg_v))
            if mg_v[i2] < best:
                i, best, kind = i2, mg_v[i2], "migrate"
        if not best < -tol:
            break
        if kind == "swap":
            A, B = P.apply_swap(i, int(sw_j[i]))
        else:
            A, B = P.apply_migrate(i, int(mg_h[i]))
        current += best
        iterations += 1
        ab = np.array(P.members[A] + P.members[B], dtype=np.int64)
        in_ab[ab] = True
        # swaps: rows of A and B, then everybody else's best against them
        D = P.swap_rows(ab)
        j = D.argmin(axis=1)
        col_arg = D.argmin(axis=0)
        col_v = D[col_arg, everyone]
        sw_v[ab] = D[np.arange(ab.size), j]
        sw_j[ab] = j
        stale = ~in_ab & in_ab[sw_j]
        better = ~in_ab & ~stale & (col_v < sw_v)
        sw_v[better] = col_v[better]
        sw_j[better] = ab[col_arg[better]]
        redo = np.flatnonzero(stale)
        if redo.size:
            sw_v[redo], sw_j[redo] = _best_swaps(P, redo)
        if one_opt:
            mg_v[ab], mg_h[ab] = _best_migrations(P, ab, k, max_size)
            stale = ~in_ab & ((mg_h == A) | (mg_h == B))
            for h in (A, B):
                col = P.migrate_col(h, k, max_size)
                better = ~in_ab & ~stale & (col < mg_v)
                mg_v[better] = col[better]
                mg_h[better] = h
            redo = np.flatnonzero(stale)
            if redo.size:
                mg_v[redo], mg_h[redo] = _best_migrations(P, redo, k, max_size)
        in_ab[ab] = False
        if ctx is not None:
            now = time.monotonic()
            if now - last >= report_every:
                last = now
                ctx.report(iteration=iterations, sse=current)
                ctx.offer(P.labels, current)
    return iterations, status


#: Moves per call of the compiled loop between deadline checks and progress reports.
_CHUNK = 64
#: Records per call of the compiled first scan (best partners) between deadline checks.
_ROWS = 1024


def _two_swap_compiled(P: Partition, *, max_iterations: int | None, ctx: Context | None,
                       report_every: float) -> tuple[int, str]:
    """Swaps only, with the compiled bookkeeping of :mod:`._two_swap_numba` (the same moves
    as the matrix-product rows, in O(n + g k) memory)."""
    from .. import _aot

    kern = _aot.family("two-swap")  # compiled when the package was built, else numba's
    if kern is None:
        from . import _two_swap_numba as kern

    n, g = P.n, P.g
    tol = tolerance(P)
    labels = P.labels.copy()
    sizes = P.sizes.copy()
    order, starts = P.csr()
    width = int(sizes.max()) if g else 1
    members = np.full((g, width), -1, dtype=np.int64)
    where = np.empty(n, dtype=np.int64)
    for h in range(g):
        rows = order[starts[h]:starts[h + 1]]
        members[h, :rows.size] = rows
        where[rows] = np.arange(rows.size)
    count = sizes.copy()
    sums = np.zeros((g, P.d))
    np.add.at(sums, labels, P.Z)
    cent = sums / np.maximum(sizes, 1)[:, None]
    diff = P.Z - cent[labels]
    own = np.einsum("ij,ij->i", diff, diff)
    best_v = np.empty(n)
    best_j = np.empty(n, dtype=np.int64)
    everyone = np.arange(n, dtype=np.int64)
    for start in range(0, n, _ROWS):  # O(n g d) in all: in slices, between deadline checks
        if ctx is not None and ctx.expired():
            return 0, "limit"
        kern.best_rows(P.Z, labels, sizes, cent, own, everyone[start:start + _ROWS], best_v, best_j)
    gains = np.empty(_CHUNK)
    iterations = 0
    status = "done"
    current = P.sse()
    last = time.monotonic()
    while True:
        if max_iterations is not None and iterations >= max_iterations:
            status = "limit"
            break
        if ctx is not None and ctx.expired():
            status = "limit"
            break
        chunk = _CHUNK if max_iterations is None else min(_CHUNK, max_iterations - iterations)
        moves, optimum = kern.swap_moves(P.Z, labels, sizes, sums, cent, own, members, count, where, best_v,
                                         best_j, tol, chunk, gains)
        iterations += int(moves)
        current += float(gains[:moves].sum())
        if ctx is not None and moves:
            now = time.monotonic()
            if now - last >= report_every:
                last = now
                ctx.report(iteration=iterations, sse=current)
                ctx.offer(labels.copy(), current)
        if optimum:
            break
    P.set_labels(labels)
    return iterations, status


@register_improvement("two-swap", summary="best-improvement swaps of two records (Castro et al. 2022, Fig. 1); "
                      "one_opt adds ICSM's migrations")
def _two_swap_improver(Z: np.ndarray, labels: np.ndarray, k: int, ctx: Context, *, one_opt: bool = False,
                       max_iterations: int | None = None) -> Solution:
    if not isinstance(one_opt, (bool, np.bool_)):
        raise InvalidTypeError(f"`one_opt` must be True or False; got {one_opt!r}.")
    max_iterations = check_positive_int(max_iterations, "max_iterations", minimum=0, allow_none=True)
    P = Partition(Z, labels)
    start = P.sse()
    if ctx.expired():
        return Solution(labels=P.labels, status="limit", message="time limit reached before the first move",
                        info={"two_swap_moves": 0})
    moves, status = two_swap_search(P, k, one_opt=bool(one_opt), max_iterations=max_iterations, ctx=ctx)
    final = P.sse()
    ctx.report(iteration=moves, sse=final)
    message = "" if status == "done" else (
        "time limit reached" if ctx.expired() else f"stopped after max_iterations={max_iterations} moves")
    return Solution(labels=P.labels, status=status, message=message,
                    info={"two_swap_moves": moves, "two_swap_sse_change": final - start})
