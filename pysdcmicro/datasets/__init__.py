"""Data sets: the embedded demo data the package generates itself, synthetic generators,
and a reader for the CASC reference files (which are not shipped with the package)."""

from ._casc import CASC_COLUMNS, load_casc
from ._synthetic import make_demo_data, make_synthetic

__all__ = ["make_demo_data", "make_synthetic", "load_casc", "CASC_COLUMNS"]
