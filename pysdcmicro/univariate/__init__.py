"""Optimal univariate grouping along record orderings (Hansen-Mukherjee, Tour2Assignment)."""

from ._hansen_mukherjee import optimal_runs, run_costs

__all__ = ["optimal_runs", "run_costs"]
