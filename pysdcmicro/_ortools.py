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
#: its ``neighbours`` nearest records (or the path's end), and arc costs come from a Python
#: callback: memory O(n * neighbours), never an n x n matrix.
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
                 solution_limit: int | None = None, neighbours: int = 10, nbrs=None,
                 initial=None, max_matrix_nodes: int | None = None):
    """Shortest Hamiltonian path (or tour when ``closed``) over the rows of ``Z`` with
    OR-Tools' routing library.

    An open path is a tour through a dummy depot at distance 0 from every record, cut at
    the depot; a closed tour starts and ends at record 0. Euclidean distances are scaled
    to integers by a recorded factor (:func:`_distance_scale`). Above
    :data:`ROUTING_MATRIX_MAX_NODES` records the successors of each record are restricted
    to its ``neighbours`` nearest records (``nbrs``, an (n, K) index array, is computed when
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

            nbrs = knn(Z, neighbours)
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

# Everything below takes and returns plain numpy arrays / Python numbers; costs given as
# floats are scaled to integers by the caller (column generation records the factor).


def _cpsat_solver(time_limit: float | None, deterministic_time: float | None, workers: int,
                  seed: int):
    from ortools.sat.python import cp_model

    solver = cp_model.CpSolver()
    params = solver.parameters
    params.num_workers = int(max(1, workers))
    params.random_seed = int(seed) % (2**31 - 1)
    if time_limit is not None:
        params.max_time_in_seconds = max(1e-3, float(time_limit))
    if deterministic_time is not None:
        params.max_deterministic_time = max(1e-3, float(deterministic_time))
    return solver


def _status_name(code) -> str:
    from ortools.sat.python import cp_model

    return {
        cp_model.OPTIMAL: "optimal",
        cp_model.FEASIBLE: "feasible",
        cp_model.INFEASIBLE: "infeasible",
        cp_model.MODEL_INVALID: "invalid",
    }.get(code, "unknown")


def cpsat_min_subset(lin, pair_i, pair_j, pair_w, size: int, *, upper: int | None = None,
                     hint=None, time_limit: float | None = None,
                     deterministic_time: float | None = None, workers: int = 1,
                     seed: int = 0, fixed: int | None = None) -> dict:
    """Choose exactly ``size`` of ``m`` items minimising
    ``sum_i lin[i] x_i + sum_p pair_w[p] x_{pair_i[p]} x_{pair_j[p]}`` (integers).

    Only the listed pairs may be chosen together: two items without a listed pair are never
    both chosen (the caller lists every allowed pair once, ``pair_i < pair_j``,
    ``pair_w >= 0``). The products are linearised exactly with the reformulation-
    linearisation constraints ``y_p <= x_i``, ``y_p <= x_j`` and
    ``sum_{p ∋ i} y_p = (size - 1) x_i`` (which also forbid the unlisted pairs), whose LP
    relaxation is much tighter than ``y >= x_i + x_j - 1``.

    ``upper``: only solutions with objective <= upper are wanted (a cut-off).
    ``fixed``: an item that must be chosen.

    Returns a dict: ``status`` ("optimal", "feasible", "infeasible", "unknown"),
    ``subset`` (item positions or None), ``objective`` (int or None) and ``bound``: a proven
    lower bound on the minimum over all size-``size`` subsets with objective <= ``upper``
    (``+inf`` when the model is proven infeasible, i.e. every subset costs more than
    ``upper``).
    """
    import numpy as np
    from ortools.sat.python import cp_model

    lin = np.asarray(lin, dtype=np.int64)
    pair_i = np.asarray(pair_i, dtype=np.int64)
    pair_j = np.asarray(pair_j, dtype=np.int64)
    pair_w = np.asarray(pair_w, dtype=np.int64)
    m = lin.shape[0]
    model = cp_model.CpModel()
    x = [model.new_bool_var(f"x{i}") for i in range(m)]
    y = [model.new_bool_var(f"y{p}") for p in range(pair_i.shape[0])]
    incident: list[list] = [[] for _ in range(m)]
    for p in range(pair_i.shape[0]):
        a, b = int(pair_i[p]), int(pair_j[p])
        model.add_implication(y[p], x[a])
        model.add_implication(y[p], x[b])
        incident[a].append(y[p])
        incident[b].append(y[p])
    for i in range(m):
        if len(incident[i]) < size - 1:
            model.add(x[i] == 0)
        else:
            model.add(sum(incident[i]) == (size - 1) * x[i])
    model.add(sum(x) == size)
    if fixed is not None:
        model.add(x[int(fixed)] == 1)
    objective = sum(int(lin[i]) * x[i] for i in range(m) if lin[i] != 0) + \
        sum(int(pair_w[p]) * y[p] for p in range(len(y)) if pair_w[p] != 0)
    if upper is not None:
        model.add(objective <= int(upper))
    model.minimize(objective)
    if hint is not None:
        chosen = set(int(v) for v in hint)
        for i in range(m):
            model.add_hint(x[i], i in chosen)
    solver = _cpsat_solver(time_limit, deterministic_time, workers, seed)
    code = solver.solve(model)
    status = _status_name(code)
    out = {"status": status, "subset": None, "objective": None, "bound": None,
           "deterministic_time": float(solver.deterministic_time)}
    if status in ("optimal", "feasible"):
        out["subset"] = np.array([i for i in range(m) if solver.value(x[i])], dtype=np.int64)
        out["objective"] = int(round(solver.objective_value))
        out["bound"] = float(solver.best_objective_bound)
        if status == "optimal":
            out["bound"] = float(out["objective"])
    elif status == "infeasible":
        out["bound"] = float("inf")
    else:
        # Nothing found and nothing proven: the solver's bound is still valid when finite.
        bound = float(solver.best_objective_bound)
        out["bound"] = bound if np.isfinite(bound) else None
    return out


def cpsat_set_partition(n: int, members: list, costs, *, hint=None,
                        time_limit: float | None = None, deterministic_time: float | None = None,
                        workers: int = 1, seed: int = 0) -> dict:
    """Exact set partitioning over given columns: choose columns covering each of the ``n``
    items exactly once with least total (integer) cost.

    ``members[c]`` holds the items of column ``c``; ``costs[c]`` its integer cost;
    ``hint`` is a list of column positions forming a partition (a warm start).
    Returns ``status``, ``columns`` (positions, or None), ``objective`` and ``bound`` (a
    lower bound on the best partition *over these columns only*).
    """
    import numpy as np
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    x = [model.new_bool_var(f"c{c}") for c in range(len(members))]
    covering: list[list] = [[] for _ in range(n)]
    for c, rows in enumerate(members):
        for i in rows:
            covering[int(i)].append(x[c])
    for i in range(n):
        model.add_exactly_one(covering[i])
    model.minimize(sum(int(costs[c]) * x[c] for c in range(len(members))))
    if hint is not None:
        chosen = set(int(c) for c in hint)
        for c in range(len(members)):
            model.add_hint(x[c], c in chosen)
    solver = _cpsat_solver(time_limit, deterministic_time, workers, seed)
    code = solver.solve(model)
    status = _status_name(code)
    out = {"status": status, "columns": None, "objective": None, "bound": None,
           "deterministic_time": float(solver.deterministic_time)}
    if status in ("optimal", "feasible"):
        out["columns"] = np.array([c for c in range(len(members)) if solver.value(x[c])], dtype=np.int64)
        out["objective"] = int(round(solver.objective_value))
        out["bound"] = float(solver.best_objective_bound)
    return out


class GlopMaster:
    """Restricted master LP ``min c x, A x = 1, x >= 0`` in GLOP (OR-Tools), grown column by
    column; re-solves start from the previous basis (GLOP keeps it between solves when the
    model only gained columns).
    """

    def __init__(self, n: int):
        from ortools.linear_solver import pywraplp

        self._pywraplp = pywraplp
        self.solver = pywraplp.Solver.CreateSolver("GLOP")
        self.rows = [self.solver.Constraint(1.0, 1.0) for _ in range(n)]
        self.vars: list = []
        self.objective = self.solver.Objective()
        self.objective.SetMinimization()

    def add_columns(self, members: list, costs) -> None:
        for rows, cost in zip(members, costs):
            var = self.solver.NumVar(0.0, self.solver.infinity(), "")
            self.objective.SetCoefficient(var, float(cost))
            for i in rows:
                self.rows[int(i)].SetCoefficient(var, 1.0)
            self.vars.append(var)

    def solve(self, time_limit: float | None = None) -> dict:
        import numpy as np

        if time_limit is not None:
            self.solver.SetTimeLimit(max(1, int(1000 * time_limit)))
        code = self.solver.Solve()
        if code != self._pywraplp.Solver.OPTIMAL:
            return {"status": "failed", "message": f"GLOP status {code}"}
        return {
            "status": "optimal",
            "objective": self.objective.Value(),
            "x": np.array([v.solution_value() for v in self.vars]),
            "duals": np.array([r.dual_value() for r in self.rows]),
        }
