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

# The public names are imported on first use (Scientific Python SPEC 1): ``import pysdcmicro``
# imports no other module at all, so the command line guards its start-up against Ctrl-C
# before anything heavy is imported (see ``pysdcmicro.__main__``).

# Each public name and the module that defines it (relative to this package).
_LAZY = {
    "__version__": "._version",
    "microaggregate": "._api",
    "Microaggregator": "._api",
    "ProgressEvent": "._context",
    "ConstantColumnWarning": "._errors",
    "DisclosureRiskWarning": "._errors",
    "InvalidInputError": "._errors",
    "InvalidTypeError": "._errors",
    "PysdcmicroError": "._errors",
    "ReleaseCheckError": "._errors",
    "StratumTooSmallError": "._errors",
    "check_partition": "._partition",
    "information_loss": "._partition",
    "sse": "._partition",
    "sst": "._partition",
    "MethodSpec": "._registry",
    "STATUSES": "._result",
    "MicroaggregationResult": "._result",
    "Solution": "._result",
    "verify_release": "._release",
    "standardize": "._standardize",
    "mdav": "._methods",
    "mu_approx": "._methods",
    "mu_approx_structure": ".constructive",
    "vmdav": "._methods",
    "column_generation": "._methods",
    "decomposition": "._methods",
    "compress_tsp_mhm": "._methods",
    "mhm": "._methods",
    "tsp_mhm": "._methods",
    "icsm": "._methods",
    "two_swap": "._methods",
    "Report": ".reporting",
    "compare": ".reporting",
    "report": ".reporting",
    "microaggregate_blocked": "._methods",
    "auto": "._methods",
}
# Subpackages, imported on first use as well.
_SUBMODULES = ("constructive", "datasets", "large", "local_search", "metrics", "optimization", "reporting",
               "univariate")

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
    "DisclosureRiskWarning",
    "ReleaseCheckError",
    "verify_release",
    "MethodSpec",
]


def __getattr__(name: str):
    import importlib

    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value  # later look-ups skip this function
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(__all__) | set(_SUBMODULES))


def methods() -> "dict[str, MethodSpec]":
    """Registered methods by name (read by the CLI, the docs and the contract tests).

    Examples
    --------
    >>> "mdav" in methods()
    True
    """
    from ._methods import all_methods

    return all_methods()


def improvements() -> "dict[str, MethodSpec]":
    """Registered improvement steps (local search) by name."""
    from ._methods import all_improvements

    return all_improvements()
