"""The partition step on one block of records: a method core, then improvement steps.

A block is the whole data, one stratum, or one block of the large-data path (run here or in
a worker process: everything a worker receives is resolved by the caller, so a worker needs
no registry lookup). :mod:`pysdcmicro._pipeline` builds on it.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from . import _registry
from ._context import Context
from ._errors import InvalidInputError, InvalidTypeError
from ._interrupt import is_ctrl_c
from ._partition import check_partition, sse
from ._result import Solution

__all__ = ["Step", "resolve_improve", "run_core", "solve_block", "check_core_output", "principal_axis_runs",
           "principal_axis_runs_by_stratum", "worst_status", "STATUS_RANK"]

#: Status vocabulary, least to most severe.
STATUS_RANK = {"done": 0, "limit": 1, "infeasible": 2}


def worst_status(statuses) -> str:
    """The most severe of ``statuses``."""
    return max(statuses, key=STATUS_RANK.__getitem__)


class Step:
    """A resolved improvement step: a registered name or a user callable, with options."""

    def __init__(self, spec_or_callable: Any, options: dict):
        if callable(spec_or_callable) and not isinstance(spec_or_callable, _registry.MethodSpec):
            self.name = getattr(spec_or_callable, "__name__", "custom")
            self.core = spec_or_callable
            self.spec = None
        else:
            self.spec = spec_or_callable
            self.name = spec_or_callable.name
            self.core = spec_or_callable.core
            self.spec.check_options(options)
        self.options = options

    def settings(self) -> dict:
        opts = dict(self.spec.defaults()) if self.spec else {}
        opts.update(self.options)
        return {"name": self.name, "options": opts}


def resolve_improve(improve: Any, improve_options: dict | None) -> list[Step]:
    if improve is None:
        if improve_options:
            raise InvalidInputError("`improve_options` was given but `improve` is None.")
        return []
    items = improve if isinstance(improve, list) else [improve]
    steps = []
    for item in items:
        options = dict(improve_options or {}) if len(items) == 1 else {}
        if isinstance(item, tuple):
            if len(item) != 2 or not isinstance(item[1], dict):
                raise InvalidTypeError(
                    f"an `improve` step given as a tuple must be (name, options_dict); got {item!r}."
                )
            item, options = item[0], {**options, **item[1]}
        if isinstance(item, str):
            steps.append(Step(_registry.get_improvement(item), options))
        elif callable(item):
            steps.append(Step(item, options))
        else:
            raise InvalidTypeError(
                f"`improve` must be an improvement name, a callable, or a list of them; got {item!r}."
            )
    return steps


def _as_solution(out: Any) -> Solution:
    if isinstance(out, Solution):
        return out
    return Solution(labels=np.asarray(out))


def run_core(call: Callable[[], Any], ctx: Context, fallback: np.ndarray | None,
              Z: np.ndarray | None = None, k: int | None = None) -> Solution:
    """Run a core; on Ctrl-C stop every deadline and return the incumbent (or, when the
    core had found none yet, the records grouped in runs of k along their first principal
    axis: a valid k-partition in O(n d + n log n), so an interrupt always releases)."""
    try:
        return _as_solution(call())
    except (KeyboardInterrupt, SystemError) as exc:
        if not is_ctrl_c(exc):
            raise
        ctx.deadline.stop()
        labels, _ = ctx.incumbent
        if labels is not None and np.shape(labels) != (Z.shape[0] if Z is not None else np.shape(labels)[0],):
            labels = None  # not a partition of these records (never expected; never released)
        message = "interrupted (Ctrl-C): best partition found so far"
        if labels is None:
            labels = fallback
        if labels is None and Z is not None and k is not None:
            labels = principal_axis_runs(Z, k)
            message = ("interrupted (Ctrl-C) before the method had a partition: records grouped in runs of k "
                       "along their first principal axis")
        if labels is None:
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise KeyboardInterrupt from exc
        return Solution(labels=labels, status="limit", message=message)


def principal_axis_runs(Z: np.ndarray, k: int) -> np.ndarray:
    """Sort the records along their first principal axis (the top eigenvector of the d x d
    matrix Z'Z, one pass over the data: it runs after a Ctrl-C, when time counts) and cut
    the order into runs of k; the last run takes the rest."""
    n, d = Z.shape
    C = Z.T @ Z
    v = np.ones(d) / math.sqrt(d)
    if np.isfinite(C).all() and C.any():
        v = np.linalg.eigh(C)[1][:, -1]
    score = Z @ v
    order = np.argsort(score)  # unstable (4x faster); the stable order is taken where there are ties
    ranked = score[order]
    if n > 1 and (np.any(ranked[1:] == ranked[:-1]) or np.isnan(ranked[-1])):
        order = np.argsort(score, kind="stable")
    labels = np.empty(n, dtype=np.int64)
    labels[order] = np.minimum(np.arange(n) // k, max(n // k - 1, 0))
    return labels


def principal_axis_runs_by_stratum(Z: np.ndarray, k: int, strata: np.ndarray | None) -> np.ndarray:
    """:func:`principal_axis_runs` within each stratum (groups never cross strata)."""
    if strata is None:
        return principal_axis_runs(Z, k)
    labels = np.empty(Z.shape[0], dtype=np.int64)
    offset = 0
    for s in np.unique(strata):
        rows = np.flatnonzero(strata == s)
        lab = principal_axis_runs(Z[rows], k)
        labels[rows] = lab + offset
        offset += int(lab.max()) + 1
    return labels


def solve_block(method_core: Callable, options: dict, steps: list[Step], Z: np.ndarray, k: int,
                 ctx: Context) -> tuple[Solution, list[str]]:
    """Method then improvement steps on one block of records (the whole data or a stratum)."""
    n = Z.shape[0]
    sol = run_core(lambda: method_core(Z, k, ctx, **options), ctx, None, Z, k)
    check_core_output(sol.labels, n, k, "method")
    statuses = [sol.status]
    messages = [sol.message] if sol.message else []
    info = dict(sol.info)
    lower = sol.lower_bound
    labels = sol.labels
    current = sse(Z, labels)
    for step in steps:
        ctx.reset_incumbent()
        ctx.offer(labels, current)
        step_ctx = ctx.child(stage=step.name)
        new = run_core(lambda: step.core(Z, labels, k, step_ctx, **step.options), step_ctx, labels)
        check_core_output(new.labels, n, k, f"improvement {step.name!r}")
        new_sse = sse(Z, new.labels)
        if new_sse <= current + 1e-9 * max(1.0, abs(current)):
            labels, current = new.labels, new_sse
        else:  # an improvement step must never make things worse; keep the input
            messages.append(f"{step.name}: result worse than its input was discarded")
        statuses.append(new.status)
        if new.message:
            messages.append(f"{step.name}: {new.message}")
        for key, value in new.info.items():
            info[f"{step.name}.{key}" if key in info else key] = value
        if new.lower_bound is not None:
            lower = new.lower_bound if lower is None else max(lower, new.lower_bound)
    status = worst_status(statuses)
    return Solution(labels=labels, status=status, message="; ".join(messages), lower_bound=lower,
                    info=info), messages


def check_core_output(labels: np.ndarray, n: int, k: int, what: str) -> None:
    try:
        check_partition(np.asarray(labels), n, k)
    except InvalidInputError as exc:  # a bug in a core, not a user error
        raise RuntimeError(f"{what} returned an invalid k-partition: {exc}") from None
