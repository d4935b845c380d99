"""What algorithm cores return (:class:`Solution`) and what users get back
(:class:`MicroaggregationResult`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Solution", "MicroaggregationResult", "STATUSES"]

#: One status vocabulary for every method.
#: ``"done"``: the method ran to its natural end.
#: ``"limit"``: a time, iteration or interruption limit stopped it; the best partition
#: found so far (the incumbent) is returned.
#: ``"infeasible"``: no k-partition exists (never for valid input, as k <= n).
STATUSES = ("done", "limit", "infeasible")


@dataclass
class Solution:
    """Output of an algorithm core.

    Attributes
    ----------
    labels : ndarray of int64, shape (n,)
        Group of each record.
    status : str
        One of :data:`STATUSES`.
    message : str
        Human-readable detail ("time limit reached after 12 restarts", ...).
    lower_bound : float or None
        A proven lower bound on the optimal SSE in the partition space, if the method
        computes one.
    info : dict
        Method-specific facts worth reporting (``path_length``, solver settings, ...).
        Values must be JSON-serializable.
    """

    labels: np.ndarray
    status: str = "done"
    message: str = ""
    lower_bound: float | None = None
    info: dict = field(default_factory=dict)


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        value = float(value)
        return value if math.isfinite(value) else None
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if value is None or isinstance(value, (str, int, bool)):
        return value
    return str(value)


@dataclass
class MicroaggregationResult:
    """Result of :func:`pysdcmicro.microaggregate` and of every method function.

    Attributes
    ----------
    data : DataFrame or ndarray
        A new object shaped like the input: same index, same column order, the chosen
        variables replaced by their group means, every other column untouched.
    labels : ndarray of int64, shape (n,)
        Group of each record (row position order), groups numbered in order of their
        first record.
    groups : list of ndarray
        Row positions (0-based) of each group.
    k : int
        Minimum group size asked for.
    method : str
        Registered name of the method (with ``+improvement`` steps appended).
    sse, sst : float
        Within-group and total sum of squares on the standardized variables.
    information_loss : float
        IL = 100 * SSE / SST in percent (lower is better).
    lower_bound : float or None
        Proven lower bound on the optimal IL (percent), when the method computes one.
    gap : float or None
        gap: (IL - lower bound) / IL in percent, ``100 * (information_loss - lower_bound) /
        information_loss``, when a bound is known (0: the partition is proven optimal).
    status : str
        ``"done"``, ``"limit"`` (stopped by a limit; best partition found so far) or
        ``"infeasible"``.
    message : str
        Detail on the status.
    seconds : float
        Wall-clock time of the whole call.
    variables : list
        Columns microaggregated.
    settings : dict
        Everything needed to reproduce the result: method, k, options with their
        defaults, seed, time limit, scaling, strata, library versions.
    info : dict
        Method-specific facts (``path_length``, number of iterations, ...).
    history : list or None
        Progress events, when ``keep_history=True`` was asked for.
    """

    data: Any
    labels: np.ndarray
    groups: list
    k: int
    method: str
    sse: float
    sst: float
    information_loss: float
    lower_bound: float | None
    gap: float | None
    status: str
    message: str
    seconds: float
    variables: list
    settings: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)
    history: list | None = None

    @property
    def n(self) -> int:
        return int(self.labels.shape[0])

    @property
    def n_groups(self) -> int:
        return len(self.groups)

    @property
    def group_sizes(self) -> np.ndarray:
        return np.bincount(self.labels)

    def to_dict(self) -> dict:
        """The JSON report: every scalar field, group-size summary, settings and info
        (not the data nor the labels)."""
        sizes = self.group_sizes
        report = {
            "method": self.method,
            "k": self.k,
            "n": self.n,
            "variables": [str(v) if not isinstance(v, (int, np.integer)) else int(v) for v in self.variables],
            "information_loss": self.information_loss,
            "sse": self.sse,
            "sst": self.sst,
            "lower_bound": self.lower_bound,
            "gap": self.gap,
            "n_groups": self.n_groups,
            "min_group_size": int(sizes.min()),
            "max_group_size": int(sizes.max()),
            "group_size_counts": {int(s): int(c) for s, c in zip(*np.unique(sizes, return_counts=True))},
            "seconds": self.seconds,
            "status": self.status,
            "message": self.message,
            "settings": self.settings,
        }
        report.update({key: value for key, value in self.info.items() if key not in report})
        return _jsonable(report)

    def to_json(self, **kwargs: Any) -> str:
        kwargs.setdefault("indent", 2)
        return json.dumps(self.to_dict(), **kwargs)

    def summary(self) -> str:
        """A short readable report for the terminal."""
        sizes = self.group_sizes
        lines = [
            f"method            {self.method}",
            f"records x vars    {self.n} x {len(self.variables)}",
            f"k                 {self.k}",
            f"groups            {self.n_groups} (sizes {int(sizes.min())}..{int(sizes.max())})",
            f"information loss  {self.information_loss:.4f} %   (SSE {self.sse:.6g} / SST {self.sst:.6g})",
        ]
        if self.lower_bound is not None:
            lines.append(f"lower bound       {self.lower_bound:.4f} %   (gap {self.gap or 0:.2f} %)")
        for key in ("path_length",):
            if key in self.info:
                lines.append(f"{key:<18}{self.info[key]:.6g}")
        lines.append(f"status            {self.status}" + (f" ({self.message})" if self.message else ""))
        lines.append(f"seconds           {self.seconds:.3f}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        lb = "" if self.lower_bound is None else f", lower_bound={self.lower_bound:.4f}"
        return (f"MicroaggregationResult(method={self.method!r}, k={self.k}, n={self.n}, "
                f"n_groups={self.n_groups}, information_loss={self.information_loss:.4f}{lb}, "
                f"status={self.status!r}, seconds={self.seconds:.3f})")
