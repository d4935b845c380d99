"""Constructive heuristics: build a k-partition from scratch (MDAV, V-MDAV, mu-Approx)."""

from ._mdav import mdav, mdav_labels
from ._vmdav import vmdav, vmdav_labels

__all__ = ["mdav", "mdav_labels", "vmdav", "vmdav_labels"]
