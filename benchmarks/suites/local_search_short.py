"""The `local_search` suite with 120 s (instead of 600 s) per ICSM restart cell: two-swap
after the Step-2 start of Castro et al. 2022 (papers/000, Tables 1 and 3), ICSM in one run
(papers/003, Table 2), ICSM with restarts (papers/003, Table 4, whose values took 1600
restarts). Restart cells: seed 0, restarts until the time limit, so their number depends on
the machine's speed."""

from .local_search import cases

CASES = cases(120.0)
