"""Optimization-based methods: column generation with certified lower bounds, and the
decomposition heuristic of Castro, Gentile and Spagnolo-Arrizabalaga (PSD 2022)."""

from ._column_generation import column_generation
from ._decomposition import decomposition

__all__ = ["column_generation", "decomposition"]
