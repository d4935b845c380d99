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

__all__: list[str] = []

# ---------------------------------------------------------------------------------------
# Routing (TSP paths)
# ---------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------
# CP-SAT and linear solvers (column generation)
# ---------------------------------------------------------------------------------------
