"""Shared fixtures: the CASC data folder, hypothesis profiles, helpers."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

try:
    from hypothesis import settings

    # Derandomized by default so CI runs are repeatable (STYLE item 15).
    settings.register_profile("ci", derandomize=True, deadline=None, max_examples=60, print_blob=True)
    settings.register_profile("thorough", deadline=None, max_examples=1000)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
except ImportError:  # pragma: no cover
    pass

REPO = Path(__file__).resolve().parents[1]


def casc_dir() -> Path:
    """Folder of the CASC CSV files: $PYSDCMICRO_CASC_DIR, else ../shared/data beside the repo."""
    env = os.environ.get("PYSDCMICRO_CASC_DIR")
    return Path(env) if env else REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def casc():
    """Loader of the CASC sets with the published columns; skips when the files are absent."""
    folder = casc_dir()
    if not (folder / "tarragona.csv").is_file():
        pytest.skip(f"CASC data not found in {folder} (set PYSDCMICRO_CASC_DIR)")
    from pysdcmicro.datasets import load_casc

    cache: dict[str, pd.DataFrame] = {}

    def load(name: str) -> pd.DataFrame:
        if name not in cache:
            cache[name] = load_casc(name, data_dir=folder)
        return cache[name].copy()

    return load


@pytest.fixture(scope="session")
def sdcmicro_r():
    """R, rpy2 and sdcMicro for the comparison tests, as ``(bridge, ro, info)``; skips with
    the bridge's own reason (what is missing and how to install it) otherwise."""
    from pysdcmicro.bridges import sdcmicro as bridge

    try:
        info = bridge.check_r(sdcmicro=True)
    except bridge.RUnavailableError as exc:
        pytest.skip(str(exc))
    import rpy2.robjects as ro

    return bridge, ro, info


@pytest.fixture
def small_frame():
    rng = np.random.default_rng(7)
    return pd.DataFrame({
        "id": [f"r{i}" for i in range(23)],
        "a": rng.normal(size=23),
        "b": rng.integers(0, 100, 23),
        "c": rng.exponential(size=23),
        "tag": pd.Categorical(rng.choice(["x", "y"], 23)),
    })
