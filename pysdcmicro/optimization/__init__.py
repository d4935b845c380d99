"""Optimization-based methods: column generation with certified lower bounds, and the
decomposition heuristic of Castro, Gentile and Spagnolo-Arrizabalaga (PSD 2022)."""

from . import _column_generation, _decomposition  # noqa: F401  (register column-generation, decomposition)

from ._auto import AutoPlan
from ._column_generation import ColumnGenerationOptions

__all__ = ["AutoPlan", "ColumnGenerationOptions"]
