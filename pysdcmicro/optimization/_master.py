"""Column pool and restricted master LP of the set-partitioning model.

The master is ``min sum_C w_C x_C  s.t.  sum_{C ∋ i} x_C = 1 (every record i), x >= 0``
over the pooled columns. Two LP engines: HiGHS through :func:`scipy.optimize.linprog`
(rebuilt each solve) and GLOP through :mod:`pysdcmicro._ortools` (columns appended, warm
re-solves; the default).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .. import _ortools

if TYPE_CHECKING:  # scipy.sparse is imported where it is used: it costs tenths of a second to import
    from scipy import sparse

__all__ = ["ColumnPool", "make_master", "group_cost"]


def group_cost(Z: np.ndarray, rows: np.ndarray) -> float:
    """SSE of one group (centroid form)."""
    G = Z[rows]
    diff = G - G.mean(axis=0)
    return float(np.einsum("ij,ij->", diff, diff))


class ColumnPool:
    """Distinct groups (sorted row arrays) with their SSE costs.

    Memory O(total group sizes); the sparse covering matrix is built on demand.
    """

    def __init__(self, n: int):
        self.n = n
        self.members: list[np.ndarray] = []
        self.costs: list[float] = []
        self._index: dict[bytes, int] = {}

    def __len__(self) -> int:
        return len(self.members)

    def add(self, rows: np.ndarray, cost: float) -> int | None:
        """Add a group; returns its position, or None when it is already pooled."""
        rows = np.sort(np.asarray(rows, dtype=np.int64))
        key = rows.tobytes()
        if key in self._index:
            return None
        self._index[key] = len(self.members)
        self.members.append(rows)
        self.costs.append(float(cost))
        return len(self.members) - 1

    def position(self, rows: np.ndarray) -> int | None:
        return self._index.get(np.sort(np.asarray(rows, dtype=np.int64)).tobytes())

    def keep(self, positions: np.ndarray) -> None:
        """Keep only the columns at ``positions`` (in that order)."""
        self.members = [self.members[p] for p in positions]
        self.costs = [self.costs[p] for p in positions]
        self._index = {m.tobytes(): i for i, m in enumerate(self.members)}

    def matrix(self, start: int = 0) -> sparse.csc_matrix:
        from scipy import sparse

        cols = self.members[start:]
        if not cols:
            return sparse.csc_matrix((self.n, 0))
        indptr = np.zeros(len(cols) + 1, dtype=np.int64)
        indptr[1:] = np.cumsum([c.size for c in cols])
        indices = np.concatenate(cols)
        data = np.ones(indices.size)
        return sparse.csc_matrix((data, indices, indptr), shape=(self.n, len(cols)))

    def reduced_costs(self, pi: np.ndarray) -> np.ndarray:
        M = self.matrix()
        return np.asarray(self.costs) - M.T @ pi


class _HighsMaster:
    name = "highs"

    def __init__(self, pool: ColumnPool):
        self.pool = pool
        self._blocks: list = []
        self._count = 0

    def sync(self) -> None:
        if self._count < len(self.pool):
            self._blocks.append(self.pool.matrix(self._count))
            self._count = len(self.pool)

    def reset(self) -> None:
        self._blocks, self._count = [], 0

    def solve(self, time_limit: float | None = None) -> dict:
        from scipy import sparse
        from scipy.optimize import linprog

        self.sync()
        A = sparse.hstack(self._blocks, format="csc") if len(self._blocks) > 1 else self._blocks[0]
        self._blocks = [A]
        c = np.asarray(self.pool.costs)
        res = linprog(c, A_eq=A, b_eq=np.ones(self.pool.n), bounds=(0, None), method="highs",
                      options=None if time_limit is None else {"time_limit": max(0.01, float(time_limit))})
        if res.status != 0:
            return {"status": "failed", "message": res.message}
        return {"status": "optimal", "objective": float(res.fun), "x": np.asarray(res.x),
                "duals": np.asarray(res.eqlin.marginals, dtype=np.float64)}


class _GlopMaster:
    name = "glop"

    def __init__(self, pool: ColumnPool):
        self.pool = pool
        self.reset()

    def reset(self) -> None:
        self._lp = _ortools.GlopMaster(self.pool.n)
        self._count = 0

    def sync(self) -> None:
        if self._count < len(self.pool):
            self._lp.add_columns(self.pool.members[self._count:], self.pool.costs[self._count:])
            self._count = len(self.pool)

    def solve(self, time_limit: float | None = None) -> dict:
        self.sync()
        return self._lp.solve(time_limit)


def make_master(kind: str, pool: ColumnPool):
    return _HighsMaster(pool) if kind == "highs" else _GlopMaster(pool)
