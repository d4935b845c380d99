"""Shared fixtures: the CASC data folder, hypothesis profiles, a temporary folder of each
test process, the markers of the modules listed in ``MARKERS``."""

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

# Markers of tests in modules that do not carry them themselves: module path (from tests/) ->
# marker -> the names of the module's tests that carry it (a name with its parameters in brackets
# names one case), or "*" for every test of the module.
MARKERS: dict[str, dict[str, set[str] | str]] = {
    "cli/test_cli.py": {"subprocess": "*"},
    "cli/test_cli_files.py": {"subprocess": {"test_entry_point_exit_codes_and_no_file_created",
                                             "test_real_sigint_in_a_subprocess_exits_130_without_traceback"},
                              "slow": {"test_many_columns_no_fragmentation_warnings"}},
    "cli/test_cli_report.py": {"subprocess": {
        "test_report_json_has_k_anonymity_utility_and_risk_of_the_written_file", "test_stdout_output_is_checked_too",
        "test_report_command", "test_report_command_errors", "test_demo_writes_masked_csv_and_reports",
        "test_readme_two_commands_give_a_masked_csv_and_its_report"}},
    "cli/test_hostile.py": {"subprocess": {"test_ctrl_c_during_autos_portfolio_writes_the_whole_data_incumbent"}},
    "cli/test_interrupts.py": {"subprocess": {
        "test_entry_module_imports_nothing_heavy", "test_entry_runs_the_command",
        "test_python_m_pysdcmicro_runs_the_command", "test_python_m_other_module_keeps_pythons_ctrl_c",
        "test_ctrl_c_at_start_up_is_one_line_not_a_traceback"}},
    "local_search/test_local_search.py": {
        "subprocess": {"test_cli_improve_and_icsm"},
        "slow": {"test_icsm_single_run_reaches_table_2",
                 "test_two_swap_reaches_a_true_local_optimum_from_every_start[9-3-3]"}},
}


def pytest_itemcollected(item):
    """Adds the markers of ``MARKERS``, and `r` to every test that uses R through the
    ``sdcmicro_r`` fixture (before `-m` selects)."""
    if "sdcmicro_r" in getattr(item, "fixturenames", ()):
        item.add_marker(pytest.mark.r)
    try:
        module = Path(str(item.path)).resolve().relative_to(REPO / "tests").as_posix()
    except ValueError:
        return
    name = getattr(item, "originalname", item.name)
    for marker, names in MARKERS.get(module, {}).items():
        if names == "*" or name in names or item.name in names:
            item.add_marker(getattr(pytest.mark, marker))


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
