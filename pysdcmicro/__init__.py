"""pysdcmicro: microaggregation for statistical disclosure control.

Partition records into groups of at least k and release each record's quasi-identifiers as
its group mean, with the least information loss IL = 100 * SSE / SST (on standardized
variables).

Quick start
-----------
>>> import pandas as pd, pysdcmicro
>>> df = pysdcmicro.datasets.make_demo_data(n=60, rng=1)
>>> res = pysdcmicro.microaggregate(df, 3, variables=["employees", "turnover", "wages"])
>>> res.status, int(res.group_sizes.min()) >= 3
('done', True)
"""

from __future__ import annotations

from ._version import __version__

import sys as _sys

if _sys.argv[:1] == ["-m"]:  # `python -m pysdcmicro` (issue 19): Ctrl-C while importing -> one line, exit 130
    import _pysdcmicro_start

    if _pysdcmicro_start.started_as_module():
        _pysdcmicro_start.begin()  # ended by pysdcmicro.__main__

from . import datasets, metrics
from ._api import Microaggregator, microaggregate
from ._context import ProgressEvent
from ._errors import (
    ConstantColumnWarning,
    InvalidInputError,
    InvalidTypeError,
    PysdcmicroError,
    ReleaseCheckError,
    StratumTooSmallError,
)
from ._partition import check_partition, information_loss, sse, sst
from ._registry import MethodSpec
from ._result import STATUSES, MicroaggregationResult, Solution
from ._release import verify_release
from ._standardize import standardize
from .constructive import mu_approx_structure
from ._methods import (auto, column_generation, compress_tsp_mhm, decomposition, icsm, mdav, mhm, mu_approx,
                       tsp_mhm, two_swap, vmdav)
from .reporting import Report, compare, report
from . import large
from ._methods import microaggregate_blocked

from . import _source_tree

_source_tree.register()  # `pysdcmicro.bridges` from a source checkout (never imports rpy2)

__all__ = [
    "__version__",
    "microaggregate",
    "Microaggregator",
    "MicroaggregationResult",
    "Solution",
    "STATUSES",
    "ProgressEvent",
    "methods",
    "improvements",
    "mdav",
    "auto",
    "column_generation",
    "decomposition",
    "mhm",
    "tsp_mhm",
    "compress_tsp_mhm",
    "mu_approx",
    "mu_approx_structure",
    "vmdav",
    "large",
    "microaggregate_blocked",
    "two_swap",
    "icsm",
    "sse",
    "sst",
    "information_loss",
    "check_partition",
    "standardize",
    "datasets",
    "metrics",
    "report",
    "compare",
    "Report",
    "PysdcmicroError",
    "InvalidInputError",
    "InvalidTypeError",
    "StratumTooSmallError",
    "ConstantColumnWarning",
    "ReleaseCheckError",
    "verify_release",
    "MethodSpec",
]


def methods() -> dict[str, MethodSpec]:
    """Registered methods by name (read by the CLI, the docs and the contract tests).

    Examples
    --------
    >>> "mdav" in methods()
    True
    """
    from ._methods import all_methods

    return all_methods()


def improvements() -> dict[str, MethodSpec]:
    """Registered improvement steps (local search) by name."""
    from ._methods import all_improvements

    return all_improvements()
