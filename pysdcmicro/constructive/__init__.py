"""Constructive heuristics: build a k-partition from scratch (MDAV, V-MDAV, mu-Approx, sorting)."""

from ._mdav import mdav_labels
from ._mu_approx import MuApproxStructure, SteinerTree, mu_approx_structure
from ._vmdav import vmdav_labels
from . import _sorting  # noqa: F401  (registers pca, single, simple)

__all__ = ["mdav_labels", "mu_approx_structure", "MuApproxStructure", "SteinerTree", "vmdav_labels"]
