"""Large data: blocks of near records, solved in parallel (processes or Dask), with border
repair. See :func:`microaggregate_blocked` and the ``blocks``, ``n_jobs`` and ``client``
parameters of :func:`pysdcmicro.microaggregate`, which takes this path by default above
:data:`LARGE_N` records."""

from ._blocked import DEFAULT_BLOCK_SIZE, DEFAULT_REPAIR_PASSES, LARGE_N
from ._blocks import group_windows, principal_axis, principal_blocks
from ._local import batch_local_search, compiled_available

__all__ = ["microaggregate_blocked", "principal_blocks", "principal_axis", "group_windows",
           "batch_local_search", "compiled_available", "LARGE_N", "DEFAULT_BLOCK_SIZE", "DEFAULT_REPAIR_PASSES"]


def __getattr__(name):
    # The public front of this path is built with the other method functions, above the
    # facade (pysdcmicro._methods); it keeps its name here.
    if name == "microaggregate_blocked":
        from .._methods import microaggregate_blocked

        return microaggregate_blocked
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
