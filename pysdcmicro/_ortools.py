"""The one module that talks to OR-Tools (STYLE item 6).

OR-Tools' Python API moves between releases (``pywrapcp`` -> ``pywraprouting``,
CamelCase -> snake_case in CP-SAT), so every call lives here behind small functions of our
own. Float costs are scaled to integers with a recorded factor; a solver bound is turned
back into a lower bound rounded in the safe direction.

Sections:
* routing (Hamiltonian paths / TSP), used by the orderings;
* CP-SAT and linear solvers, used by column generation.
"""

from __future__ import annotations

__all__: list[str] = ["routing_path", "ROUTING_MATRIX_MAX_NODES"]

# ---------------------------------------------------------------------------------------
# Routing (TSP paths)
# ---------------------------------------------------------------------------------------

#: Up to this many records the routing model gets the whole integer distance matrix
#: (``RegisterTransitMatrix``: (n+1)^2 int64 inside OR-Tools plus a transient Python list of
#: lists, about 270 MB at n = 2000). Beyond it, each record may only be followed by one of
#: its ``neighbors`` nearest records (or the path's end), and arc costs come from a Python
#: callback: memory O(n * neighbors), never an n x n matrix.
ROUTING_MATRIX_MAX_NODES = 2000

_FIRST_SOLUTIONS = ("PATH_CHEAPEST_ARC", "SAVINGS", "CHRISTOFIDES", "PARALLEL_CHEAPEST_INSERTION",
                    "LOCAL_CHEAPEST_INSERTION", "GLOBAL_CHEAPEST_ARC", "LOCAL_CHEAPEST_ARC",
                    "FIRST_UNBOUND_MIN_VALUE", "AUTOMATIC")
_METAHEURISTICS = ("GUIDED_LOCAL_SEARCH", "GREEDY_DESCENT", "SIMULATED_ANNEALING", "TABU_SEARCH",
                   "GENERIC_TABU_SEARCH", "AUTOMATIC")


def _distance_scale(Z) -> float:
    """Integer scaling factor: the longest possible arc (bounded by the bounding-box diagonal)
    maps to at most 1e6, so that an arc fits int32 and a path of n arcs fits int64 easily."""
    import numpy as np

    if Z.shape[0] == 0:
        return 1.0
    span = float(np.sqrt(((Z.max(axis=0) - Z.min(axis=0)) ** 2).sum()))
    return 1e6 / span if span > 0 else 1.0


def routing_path(Z, *, closed: bool = False, first_solution: str = "PATH_CHEAPEST_ARC",
                 metaheuristic: str = "GUIDED_LOCAL_SEARCH", time_limit: float | None = None,
                 solution_limit: int | None = None, neighbors: int = 10, nbrs=None,
                 initial=None, max_matrix_nodes: int | None = None):
    """Shortest Hamiltonian path (or tour when ``closed``) over the rows of ``Z`` with
    OR-Tools' routing library.

    An open path is a tour through a dummy depot at distance 0 from every record, cut at
    the depot; a closed tour starts and ends at record 0. Euclidean distances are scaled
    to integers by a recorded factor (:func:`_distance_scale`). Above
    :data:`ROUTING_MATRIX_MAX_NODES` records the successors of each record are restricted
    to its ``neighbors`` nearest records (``nbrs``, an (n, K) index array, is computed when
    not given) or its successor in ``initial``.

    ``initial`` (a permutation of ``range(n)``, read as a path or a tour) is the first
    solution when given; otherwise OR-Tools builds one with ``first_solution``. In sparse
    mode OR-Tools' constructive heuristics often dead-end, so ``initial`` is needed there.

    Returns ``(order, info)``: ``order`` a permutation of ``range(n)`` (None when OR-Tools
    found no solution in time), ``info`` the settings used (``scale``, ``first_solution``,
    ``metaheuristic``, ``mode``, ``time_limit``, ``solution_limit``, ``status``).

    OR-Tools' routing search is deterministic for a given model, parameters and limits;
    with a time limit, the result depends on the machine's speed.
    """
    import math

    import numpy as np
    from ortools.constraint_solver import pywrapcp, routing_enums_pb2

    n = Z.shape[0]
    if first_solution not in _FIRST_SOLUTIONS:
        raise ValueError(f"`first_solution` must be one of {', '.join(_FIRST_SOLUTIONS)}; got {first_solution!r}.")
    if metaheuristic not in _METAHEURISTICS:
        raise ValueError(f"`metaheuristic` must be one of {', '.join(_METAHEURISTICS)}; got {metaheuristic!r}.")
    limit = ROUTING_MATRIX_MAX_NODES if max_matrix_nodes is None else max_matrix_nodes
    scale = _distance_scale(Z)
    info = {"engine": "ortools-routing", "scale": scale, "first_solution": first_solution,
            "metaheuristic": metaheuristic, "time_limit": time_limit, "solution_limit": solution_limit}
    if n <= 2:
        info.update(mode="trivial", status="done")
        return np.arange(n, dtype=np.int64), info
    dummy = 0 if closed else 1  # node 0 is the dummy depot of an open path
    size = n + dummy
    manager = pywrapcp.RoutingIndexManager(size, 1, 0)
    model = pywrapcp.RoutingModel(manager)
    sparse = n > limit
    if not sparse:
        sq = np.einsum("ij,ij->i", Z, Z)
        D = sq[:, None] - 2.0 * (Z @ Z.T) + sq[None, :]
        np.maximum(D, 0.0, out=D)
        M = np.zeros((size, size), dtype=np.int64)
        M[dummy:, dummy:] = np.rint(np.sqrt(D) * scale).astype(np.int64)
        del D
        rows = M.tolist()
        del M
        evaluator = model.RegisterTransitMatrix(rows)
        del rows
        info["mode"] = "matrix"
    else:
        if nbrs is None:
            from .univariate._tsp import knn

            nbrs = knn(Z, neighbors)
        P = [tuple(r) for r in Z.tolist()]
        dist = math.dist
        index_to_node = manager.IndexToNode

        def cost(i, j):
            a = index_to_node(i) - dummy
            b = index_to_node(j) - dummy
            if a < 0 or b < 0:
                return 0
            return int(round(dist(P[a], P[b]) * scale))

        evaluator = model.RegisterTransitCallback(cost)
        succ_initial = {}
        if initial is not None:
            init = [int(v) for v in initial]
            succ_initial = dict(zip(init[:-1], init[1:]))
            if closed:
                succ_initial[init[-1]] = init[0]
        # Successors restricted to the candidate lists (plus the depot / the start).
        end_index = model.End(0)
        for a in range(n):
            idx = manager.NodeToIndex(a + dummy)
            allowed = [manager.NodeToIndex(int(b) + dummy) for b in nbrs[a]]
            allowed.append(end_index)
            if a in succ_initial:
                allowed.append(manager.NodeToIndex(succ_initial[a] + dummy))
            model.NextVar(idx).SetValues(allowed)
        info["mode"] = f"sparse-knn-{nbrs.shape[1]}"
    model.SetArcCostEvaluatorOfAllVehicles(evaluator)
    params = pywrapcp.DefaultRoutingSearchParameters()
    params.first_solution_strategy = getattr(routing_enums_pb2.FirstSolutionStrategy, first_solution)
    params.local_search_metaheuristic = getattr(routing_enums_pb2.LocalSearchMetaheuristic, metaheuristic)
    if time_limit is not None:
        params.time_limit.FromMilliseconds(max(1, int(1000 * time_limit)))
    if solution_limit is not None:
        params.solution_limit = int(solution_limit)
    if time_limit is None and solution_limit is None and metaheuristic not in ("GREEDY_DESCENT",):
        raise ValueError("a metaheuristic search needs `time_limit` or `solution_limit`.")
    if initial is not None:
        route = [manager.NodeToIndex(int(v) + dummy) for v in initial]
        if closed:  # the tour starts at record 0 (the depot)
            k0 = route.index(manager.NodeToIndex(0))
            route = route[k0 + 1:] + route[:k0]
        model.CloseModelWithParameters(params)
        start = model.ReadAssignmentFromRoutes([route], True)
        if start is None:
            raise ValueError("`initial` is not a feasible route of the routing model.")
        solution = model.SolveFromAssignmentWithParameters(start, params)
        info["first_solution"] = "initial"
    else:
        solution = model.SolveWithParameters(params)
    status = model.status()
    info["status"] = int(status)
    if solution is None:
        return None, info
    order = []
    index = model.Start(0)
    while not model.IsEnd(index):
        node = manager.IndexToNode(index) - dummy
        if node >= 0:
            order.append(node)
        index = solution.Value(model.NextVar(index))
    info["objective"] = solution.ObjectiveValue() / scale
    return np.array(order, dtype=np.int64), info


# ---------------------------------------------------------------------------------------
# CP-SAT and linear solvers (column generation)
# ---------------------------------------------------------------------------------------
