"""Large data: blocks of near records, solved in parallel (processes or Dask), with border
repair. See :func:`microaggregate_blocked` and the ``blocks``, ``n_jobs`` and ``client``
parameters of :func:`pysdcmicro.microaggregate`, which takes this path by default above
:data:`LARGE_N` records.

The names are imported at first use: a worker process imports only the task module it
runs (:mod:`._tasks`), not the planning code and its pandas."""

__all__ = ["microaggregate_blocked", "principal_blocks", "principal_axis", "group_windows",
           "batch_local_search", "compiled_available", "LARGE_N", "DEFAULT_BLOCK_SIZE", "DEFAULT_REPAIR_PASSES"]

_HOMES = {"LARGE_N": "._blocked", "DEFAULT_BLOCK_SIZE": "._blocked", "DEFAULT_REPAIR_PASSES": "._blocked",
          "group_windows": "._blocks", "principal_axis": "._blocks", "principal_blocks": "._blocks",
          "batch_local_search": "._local", "compiled_available": "._local"}


def __getattr__(name):
    import importlib

    if name == "microaggregate_blocked":
        # the public front of this path is built with the other method functions, above the
        # facade (pysdcmicro._methods); it keeps its name here
        from .._methods import microaggregate_blocked

        return microaggregate_blocked
    if name in _HOMES:
        value = getattr(importlib.import_module(_HOMES[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
