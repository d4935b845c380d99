"""Optimal univariate grouping along record orderings (Hansen-Mukherjee, Tour2Assignment),
the orderings (MDAV, NPN, PCA, TSP paths, Compress-TSP) and the methods built on them
(``mhm``, ``tsp-mhm``, ``compress-tsp-mhm``)."""

from ._hansen_mukherjee import optimal_runs, run_costs
from ._mhm import compress_tsp_mhm, mhm, tsp_mhm
from ._orderings import ORDERINGS, compressed_tsp_path, mdav_order, npn_order, pca_order, tsp_path
from ._tsp import path_length

__all__ = ["optimal_runs", "run_costs", "mhm", "tsp_mhm", "compress_tsp_mhm", "ORDERINGS", "mdav_order",
           "npn_order", "pca_order", "tsp_path", "compressed_tsp_path", "path_length"]
