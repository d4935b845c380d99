"""The package's version (one place, read by ``pysdcmicro.__version__`` and the results)."""

__version__ = "0.1.0"
