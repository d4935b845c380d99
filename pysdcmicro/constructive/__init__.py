"""Constructive heuristics: build a k-partition from scratch (MDAV, V-MDAV, mu-Approx)."""

from ._mdav import mdav, mdav_labels
from ._mu_approx import MuApproxStructure, SteinerTree, mu_approx, mu_approx_structure

__all__ = ["mdav", "mdav_labels", "mu_approx", "mu_approx_structure", "MuApproxStructure", "SteinerTree"]
