"""Local search: improvement steps that take a k-partition and return one with SSE never
higher (two-swap, ICSM's 1-opt / 2-opt / n-opt moves), ICSM as a method, and restarts."""

from . import _icsm, _two_swap  # noqa: F401  (register icsm and two-swap)

__all__: list[str] = []
