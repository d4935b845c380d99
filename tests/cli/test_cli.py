"""The command line, run as a user runs it: in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from .._helpers import naive_sse, naive_sst, zscore

pytestmark = pytest.mark.subprocess  # every test here runs the command as a process

CSV = """\
id,name,x,y,code
1,"Smith, J",1.5,10,007
2,Lee,2.5,11,008
3,Kim,3.0,12,009
4,"Ng, A",10.0,40,010
5,Roe,11.5,41,011
6,Poe,12.0,44,012
7,Fox,20.0,80,013
"""


def run(*args, cwd=None, check=False):
    proc = subprocess.run([sys.executable, "-m", "pysdcmicro", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=120)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


@pytest.fixture
def csv_file(tmp_path):
    path = tmp_path / "in.csv"
    path.write_text(CSV)
    return path


def test_microaggregate_writes_csv_and_report(tmp_path, csv_file):
    out, rep = tmp_path / "out.csv", tmp_path / "rep.json"
    proc = run("microaggregate", csv_file, "--k", 3, "--variables", "x,y", "--method", "mdav", "--output", out,
               "--report", rep, check=True)
    assert "information loss" in proc.stdout
    report = json.loads(rep.read_text())
    for key in ("method", "k", "n", "variables", "information_loss", "sse", "sst", "lower_bound", "n_groups",
                "min_group_size", "max_group_size", "seconds", "status"):
        assert key in report, key
    assert report["method"] == "mdav" and report["k"] == 3 and report["n"] == 7
    assert report["variables"] == ["x", "y"]
    assert report["min_group_size"] >= 3
    masked = pd.read_csv(out, dtype=str, keep_default_na=False)
    original = pd.read_csv(csv_file, dtype=str, keep_default_na=False)
    assert list(masked.columns) == list(original.columns)
    # Columns not microaggregated are copied as text, byte for byte (leading zeros kept).
    for col in ("id", "name", "code"):
        assert masked[col].tolist() == original[col].tolist()
    assert "007" in out.read_text() and '"Smith, J"' in out.read_text()
    # The report's IL is that of the written groups, computed independently.
    X = original[["x", "y"]].astype(float).to_numpy()
    M = masked[["x", "y"]].astype(float).to_numpy()
    labels = pd.Series([tuple(r) for r in M]).factorize()[0]
    il = 100 * naive_sse(zscore(X), labels) / naive_sst(zscore(X))
    assert report["information_loss"] == pytest.approx(il, rel=1e-9)


def test_default_output_is_stdout_and_default_variables_are_numeric(csv_file):
    proc = run("microaggregate", csv_file, "--k", 2, check=True)
    frame = pd.read_csv(pd.io.common.StringIO(proc.stdout), dtype=str, keep_default_na=False)
    assert frame.shape == (7, 5)
    assert "information loss" in proc.stderr  # the summary goes to stderr when data goes to stdout
    assert frame["name"].tolist()[0] == "Smith, J"
    # id and code hold consecutive distinct integers (keys): left out by default, with a warning
    assert frame["id"].tolist() == [str(i) for i in range(1, 8)] and frame["code"].tolist()[0] == "007"
    assert "pysdcmicro: warning: default variables: microaggregating 'x', 'y'; left out 'id'" in proc.stderr


@pytest.mark.parametrize("args,message", [
    (["--k", "1"], "`k` must be an integer >= 2; got 1."),
    (["--k", "9"], "`k` must be <= the number of records (7); got 9."),
    (["--k", "3", "--variables", "name"], "column 'name' must be numeric"),
    (["--k", "3", "--variables", "x,zz"], "unknown column 'zz' in `variables`"),
    (["--k", "3", "--method", "nope"], "unknown method 'nope'"),
    (["--k", "3", "--option", "gamma=1"], "method 'auto' has no option 'gamma'"),
    (["--k", "3", "--option", "gamma"], "an option must be written NAME=VALUE; got 'gamma'."),
    (["--k", "3", "--time-limit", "-1"], "`time_limit` must be None or a number of seconds > 0; got -1."),
])
def test_bad_input_exits_nonzero_with_one_clear_line(csv_file, args, message):
    proc = run("microaggregate", csv_file, *args, "--output", csv_file.with_suffix(".out"))
    assert proc.returncode == 2
    # one error line (the default-variables warning, naming the key-like id and code, may come first)
    lines = [line for line in proc.stderr.strip().splitlines() if not line.startswith("pysdcmicro: warning:")]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("pysdcmicro: error: ")
    assert message in lines[0]


def test_missing_value_in_csv(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("a,b\n1,2\n3,\n5,6\n7,8\n")
    proc = run("microaggregate", path, "--k", 2, "--missing", "error")
    assert proc.returncode == 2
    assert "column 'b' has a missing value (an empty cell) at row 3 of the file (the header is row 1)" in proc.stderr


def test_missing_file_and_empty_file(tmp_path):
    proc = run("microaggregate", tmp_path / "nope.csv", "--k", 2)
    assert proc.returncode == 2 and "does not exist" in proc.stderr
    empty = tmp_path / "e.csv"
    empty.write_text("")
    proc = run("microaggregate", empty, "--k", 2)
    assert proc.returncode == 2 and "is empty" in proc.stderr


def test_constant_column_warning_is_one_line_and_run_succeeds(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("a,b\n1,5\n2,5\n3,5\n4,5\n")
    proc = run("microaggregate", path, "--k", 2, "--variables", "a,b", "--output", tmp_path / "o.csv")
    assert proc.returncode == 0
    assert "pysdcmicro: warning: column 'b' is constant (value 5)" in proc.stderr


def test_methods_lists_every_registered_method():
    import pysdcmicro

    proc = run("methods", check=True)
    for name, spec in pysdcmicro.methods().items():
        assert name in proc.stdout and spec.summary in proc.stdout


def test_demo_runs_on_embedded_data():
    proc = run("demo", check=True)
    assert "k-anonymity check" in proc.stdout and ": OK" in proc.stdout
    assert "information loss" in proc.stdout


def test_console_script_installed():
    script = Path(sys.executable).parent / "pysdcmicro"
    if not script.exists():
        pytest.skip(f"console script not installed next to {sys.executable} (package not pip-installed)")
    proc = subprocess.run([str(script), "--version"], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.startswith("pysdcmicro ")


def test_seed_and_options_are_recorded(tmp_path, csv_file):
    rep = tmp_path / "r.json"
    run("microaggregate", csv_file, "--k", 2, "--variables", "x,y", "--method", "mdav", "--seed", 5,
        "--output", tmp_path / "o.csv",
        "--report", rep, check=True)
    settings = json.loads(rep.read_text())["settings"]
    assert settings["rng"] == 5 and settings["method"] == "mdav" and settings["k"] == 2


def test_same_answer_as_python_api(tmp_path, csv_file):
    import pysdcmicro

    out = tmp_path / "o.csv"
    run("microaggregate", csv_file, "--k", 3, "--variables", "x,y", "--seed", 1, "--output", out, check=True)
    frame = pd.read_csv(csv_file)
    res = pysdcmicro.microaggregate(frame, 3, variables=["x", "y"], rng=1)
    np.testing.assert_allclose(pd.read_csv(out)[["x", "y"]].to_numpy(), res.data[["x", "y"]].to_numpy(), rtol=1e-15)
