"""Shared fixtures: the CASC data folder, hypothesis profiles, a temporary folder of each
test process, `r` for the tests that use R."""

from __future__ import annotations

import os
import signal
import tempfile
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

# The Ctrl-C tests need Python's own SIGINT handling in this process and in the processes it
# starts; a shell that starts the run in the background hands it SIGINT ignored.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

def pytest_itemcollected(item):
    """Adds `r` to every test that uses R through the ``sdcmicro_r`` fixture (before `-m`
    selects)."""
    if "sdcmicro_r" in getattr(item, "fixturenames", ()):
        item.add_marker(pytest.mark.r)


@pytest.fixture(scope="session", autouse=True)
def _temporary_folder_of_this_process(tmp_path_factory):
    """Each test process, and every process it starts, gets its own temporary folder
    (``tempfile.gettempdir()``, ``$TMPDIR``): tests that look for leftovers there see only
    their own files, with pytest-xdist too and beside other programs."""
    folder = str(tmp_path_factory.mktemp("tmp"))
    saved_env, saved_dir = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"], tempfile.tempdir = folder, folder
    yield
    tempfile.tempdir = saved_dir
    if saved_env is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = saved_env


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
