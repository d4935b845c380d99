"""Pricing for the set-partitioning model of microaggregation (Castro, Gentile and
Spagnolo-Arrizabalaga 2022, model (6)-(7)): one import point for the pricing modules.

A column is a group ``C`` of ``s`` records, ``k <= s <= 2k-1``, with cost ``SSE(C)``; with
duals ``pi`` of the covering constraints its reduced cost is ``rc(C) = SSE(C) - pi(C)``.
Pricing finds groups of negative reduced cost, or proves lower bounds on it:

* :mod:`._lagrangian`: neighbour lists and the Lagrangian bounds every routine starts from
  (:func:`neighbours`, :func:`record_bounds`, :func:`lagrangian_bound`, :func:`nn_dual`,
  :func:`anchor_relaxation`, :func:`anchor_lagrangian_bound`);
* :mod:`._heuristic_pricing`: greedy groups around each record (:func:`heuristic_pricing`);
* :mod:`._anchored_pricing`: exact pricing anchor by anchor (:func:`anchored_pricing`), with
  subset-row cut penalties (:class:`CutRows`);
* :mod:`._branch_and_bound`: the per-anchor branch and bound and its compiled kernel;
* :mod:`._exact_pricing`: exact pricing by one CP-SAT model per size (:func:`exact_pricing`)
  and complete enumeration below a threshold (:func:`enumerate_below`);
* :mod:`._record_ascent`: the per-record Lagrangian from truncated pricing and the dual
  ascent on it (:func:`record_lagrangian`, :func:`record_ascent`).
"""

from ._anchored_pricing import CutRows, anchored_pricing
from ._branch_and_bound import _bb_kernel, branch_and_bound_anchor  # noqa: F401  (_bb_kernel: auto's import)
from ._exact_pricing import enumerate_below, exact_pricing
from ._heuristic_pricing import heuristic_pricing
from ._lagrangian import (anchor_lagrangian_bound, anchor_relaxation, lagrangian_bound, neighbours, nn_dual,
                          record_bounds)
from ._record_ascent import record_ascent, record_lagrangian, record_supergradient

__all__ = ["neighbours", "heuristic_pricing", "exact_pricing", "anchored_pricing", "record_bounds",
           "lagrangian_bound", "enumerate_below", "anchor_relaxation", "anchor_lagrangian_bound",
           "nn_dual", "record_lagrangian", "record_supergradient", "record_ascent", "CutRows",
           "branch_and_bound_anchor"]
