"""Data for the asv benchmarks: the CASC reference sets and synthetic data.

``PYSDCMICRO_ASV_TINY=1`` shrinks every data set to a few dozen rows, so that
``tests/test_benchmarks.py`` runs each benchmark once in seconds (the numbers then mean
nothing; the benchmarks only must not rot).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

CASC_SETS = ("tarragona", "census", "eia")
CASC_KS = (3, 5, 10)


def tiny() -> bool:
    return os.environ.get("PYSDCMICRO_ASV_TINY", "") not in ("", "0")


def casc_dir() -> Path:
    env = os.environ.get("PYSDCMICRO_CASC_DIR")
    if env:
        return Path(env)
    # benchmarks/benchmarks/_data.py -> the repository's parent holds shared/data
    return Path(__file__).resolve().parents[3] / "shared" / "data"


@functools.lru_cache(maxsize=None)
def _casc(name: str):
    from pysdcmicro.datasets import load_casc

    return load_casc(name, data_dir=str(casc_dir()))


def casc(name: str):
    """The CASC set ``name`` with every published column; raises NotImplementedError (asv's
    way to skip a benchmark) when the files are absent."""
    if not (casc_dir() / f"{name}.csv").is_file():
        raise NotImplementedError(f"CASC data not found in {casc_dir()} (set PYSDCMICRO_CASC_DIR)")
    frame = _casc(name)
    if tiny():
        frame = frame.iloc[:60].reset_index(drop=True)
    return frame


def synthetic(n: int, d: int = 10, kind: str = "clustered"):
    """``make_synthetic(n, d, kind, rng=0)``; a few dozen rows in the tiny setting."""
    from pysdcmicro.datasets import make_synthetic

    return make_synthetic(60 if tiny() else n, d, kind=kind, rng=0)
