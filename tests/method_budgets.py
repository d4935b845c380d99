"""Small deterministic budgets for the contract tests of each registered method.

A method whose defaults are slow on 20-60 records adds its fast options here (iteration
counts, CP-SAT deterministic time with one worker; never wall-clock limits).
"""

BUDGETS: dict[str, dict] = {
    "mdav": {},
    "column-generation": {"pricing_deterministic_time": 2.0, "max_iterations": 200,
                          "mip_solver": "cpsat", "mip_deterministic_time": 2.0},
    "decomposition": {"n_jobs": 1, "s": 2, "pricing_deterministic_time": 2.0, "max_iterations": 200,
                      "mip_deterministic_time": 2.0},
    # Path search budget: kicks of the iterated local search (deterministic).
    "tsp-mhm": {"iterations": 50},
    "compress-tsp-mhm": {"iterations": 50},
    "icsm": {"max_restarts": 3},  # exercise the restart path (deterministic count, no wall clock)
}

IMPROVEMENT_BUDGETS: dict[str, dict] = {
    "icsm": {"max_restarts": 2},
    "two-swap": {"one_opt": True},
}


def budget(name: str) -> dict:
    return dict(BUDGETS.get(name, {}))


def improvement_budget(name: str) -> dict:
    return dict(IMPROVEMENT_BUDGETS.get(name, {}))
