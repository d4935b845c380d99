"""Optimization-based methods: column generation with certified lower bounds, and the
decomposition heuristic of Castro, Gentile and Spagnolo-Arrizabalaga (PSD 2022)."""

from . import _column_generation, _decomposition  # noqa: F401  (register column-generation, decomposition)

__all__: list[str] = []
