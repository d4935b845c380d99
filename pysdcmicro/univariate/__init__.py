"""Optimal univariate grouping along record orderings (Hansen-Mukherjee, Tour2Assignment),
the orderings (MDAV, NPN, PCA, TSP paths, Compress-TSP) and the methods built on them
(``mhm``, ``tsp-mhm``, ``compress-tsp-mhm``)."""

from ._hansen_mukherjee import optimal_runs, run_costs
from . import _mhm  # noqa: F401  (registers mhm, tsp-mhm, compress-tsp-mhm)
from ._orderings import ORDERINGS, compressed_tsp_path, mdav_order, npn_order, pca_order, tsp_path
from ._tsp import path_length

__all__ = ["optimal_runs", "run_costs", "ORDERINGS", "mdav_order",
           "npn_order", "pca_order", "tsp_path", "compressed_tsp_path", "path_length"]
