"""Make ``pysdcmicro.bridges`` importable when pysdcmicro runs straight from a source checkout.

The bridges' source lives in the repository's top-level ``bridges/`` folder (STYLE item 7:
the R bridge beside the core, never imported by it). An installed copy has it as the
subpackage ``pysdcmicro/bridges`` (``setup.py`` maps the folder), and an editable install
maps it with its own import hook. But ``python -m pytest`` at the repository root imports
``pysdcmicro`` from the checkout itself, shadowing the installed copy; there
``pysdcmicro/bridges`` does not exist, so this finder maps exactly that one name to
``<checkout>/bridges``. It is registered only in a checkout (``bridges/__init__.py`` and
``pyproject.toml`` beside the ``pysdcmicro`` folder), last on ``sys.meta_path`` so every
other finder goes first, and it imports nothing until ``pysdcmicro.bridges`` is imported.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from pathlib import Path

_NAME = "pysdcmicro.bridges"


class _SourceBridgesFinder(importlib.abc.MetaPathFinder):
    def __init__(self, folder: Path):
        self.folder = folder

    def find_spec(self, fullname, path=None, target=None):
        if fullname != _NAME:
            return None
        return importlib.util.spec_from_file_location(
            fullname, self.folder / "__init__.py", submodule_search_locations=[str(self.folder)])


def register() -> None:
    root = Path(__file__).resolve().parent.parent
    folder = root / "bridges"
    if not ((folder / "__init__.py").is_file() and (root / "pyproject.toml").is_file()):
        return
    if not any(isinstance(f, _SourceBridgesFinder) for f in sys.meta_path):
        sys.meta_path.append(_SourceBridgesFinder(folder))
