"""Bridges between pysdcmicro and other statistical disclosure control software.

A front end beside the command line: the core of pysdcmicro never imports it, and nothing
here is imported by ``import pysdcmicro``. Each bridge imports its own dependencies lazily,
when one of its functions is first called.

* :mod:`pysdcmicro.bridges.sdcmicro`: pysdcmicro methods on R sdcMicro objects through
  rpy2 (``pip install "pysdcmicro[r]"``, plus R and the CRAN package sdcMicro).

The command ``pysdcmicro sdcmicro IN.rds OUT.rds`` (the same on a saved sdcMicroObj) belongs
to the command line (``pysdcmicro.cli._sdcmicro``), which imports this bridge.
"""

__all__ = ["sdcmicro"]


def __getattr__(name):  # ``pysdcmicro.bridges.sdcmicro`` after a bare ``import pysdcmicro.bridges``
    if name in __all__:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
