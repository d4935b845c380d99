"""Local search: improvement steps that take a k-partition and return one with SSE never
higher (two-swap, ICSM's 1-opt / 2-opt / n-opt moves), ICSM as a method, and restarts."""

from ._icsm import icsm
from ._two_swap import two_swap

__all__ = ["two_swap", "icsm"]
