"""The report from the command line: --report JSON, --html, `pysdcmicro report`, and the
README's two commands to a masked CSV and its report."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import pysdcmicro
from pysdcmicro import cli, metrics
from pysdcmicro.cli import _files
from pysdcmicro.datasets import make_demo_data

REPO = Path(__file__).resolve().parents[2]
QI = ["employees", "turnover", "wages"]


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "pysdcmicro", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


@pytest.fixture
def data_csv(tmp_path):
    path = tmp_path / "in.csv"
    make_demo_data(90, rng=2).to_csv(path, index=False)
    return path


@pytest.mark.subprocess
def test_report_json_has_k_anonymity_utility_and_risk_of_the_written_file(tmp_path, data_csv):
    out, rep, page = tmp_path / "out.csv", tmp_path / "rep.json", tmp_path / "rep.html"
    proc = run("microaggregate", data_csv, "--k", 3, "--variables", ",".join(QI), "--output", out,
               "--report", rep, "--html", page)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(rep.read_text())
    assert report["k_anonymous"] is True
    assert report["k_anonymity"]["checked_on"] == f"the written file {out}"
    original, written = pd.read_csv(data_csv), pd.read_csv(out)
    assert metrics.is_k_anonymous(written, 3, variables=QI)
    assert report["utility"]["il1s"] == pytest.approx(metrics.il1s(original, written, variables=QI), rel=1e-12)
    assert report["utility"]["eigen"] == pytest.approx(metrics.eigen_utility(original, written, variables=QI), rel=1e-10)
    assert report["risk"]["interval_disclosure"] == pytest.approx(
        metrics.interval_disclosure_risk(original, written, variables=QI))
    link = metrics.record_linkage_risk(original, written, variables=QI)
    assert report["risk"]["record_linkage"]["linked"] == pytest.approx(link.linked, abs=1e-12)
    assert report["risk"]["record_linkage"]["within_top"] == pytest.approx(link.within_top, abs=1e-12)
    assert [item["key"] for item in report["headline"]][:2] == ["k_anonymous", "information_loss"]
    # The earlier keys are still there.
    for key in ("method", "k", "n", "information_loss", "lower_bound", "min_group_size", "settings", "input", "output"):
        assert key in report, key
    assert page.read_text().startswith("<!DOCTYPE html>")
    assert re.search(r"^3-anonymous: +yes", proc.stdout, re.M)


def test_k_anonymity_is_checked_on_the_written_bytes(tmp_path, data_csv, monkeypatch, capsys):
    """If what reaches the file differs from the result in memory, the report must say so."""
    original_write = _files.write_csv  # the CLI's CSV writer (pysdcmicro._csvio)

    def tampering_write(frame, path=None):
        if "employees" in frame.columns and path is not None:
            frame = frame.copy()
            frame.loc[frame.index[0], "employees"] += 0.5
        return original_write(frame, path)

    monkeypatch.setattr(_files, "write_csv", tampering_write)
    out, rep = tmp_path / "out.csv", tmp_path / "rep.json"
    code = cli.main(["microaggregate", str(data_csv), "--k", "3", "--variables", ",".join(QI), "--output", str(out),
                     "--report", str(rep)])
    # The release check runs before anything is renamed into place, so a release
    # that is not k-anonymous is never written (nor its report): exit 3, one line.
    assert code == 3  # a release that is not k-anonymous is an error for scripts
    assert not out.exists() and not rep.exists()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"pysdcmicro: error: the release for {out} is not "
                                               "3-anonymous")


@pytest.mark.subprocess
def test_stdout_output_is_checked_too(data_csv, tmp_path):
    rep = tmp_path / "rep.json"
    proc = run("microaggregate", data_csv, "--k", 4, "--variables", ",".join(QI), "--report", rep)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(rep.read_text())
    assert report["k_anonymous"] is True and report["k_anonymity"]["checked_on"] == "the CSV written to standard output"
    written = pd.read_csv(pd.io.common.StringIO(proc.stdout))
    assert metrics.is_k_anonymous(written, 4, variables=QI)


@pytest.mark.subprocess
def test_report_command(tmp_path, data_csv):
    out = tmp_path / "out.csv"
    run("microaggregate", data_csv, "--k", 3, "--method", "mdav", "--variables", ",".join(QI), "--output", out, "-q")
    js, page = tmp_path / "r.json", tmp_path / "r.html"
    proc = run("report", data_csv, out, "--k", 3, "--json", js, "--html", page)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(js.read_text())
    assert report["variables"] == QI  # the numeric columns that changed
    assert report["k_anonymous"] is True
    original = pd.read_csv(data_csv)
    res = pysdcmicro.microaggregate(original, 3, variables=QI, method="mdav")
    assert report["information_loss"] == pytest.approx(res.information_loss, rel=1e-10)
    assert re.search(r"^3-anonymous: +yes", proc.stdout, re.M) and page.exists()
    # A k the file does not reach: NO, exit status 3.
    proc = run("report", data_csv, out, "--k", 4)
    assert proc.returncode == 3 and re.search(r"^4-anonymous: +NO", proc.stdout, re.M)
    # Without --k: the smallest class only.
    proc = run("report", data_csv, out)
    assert proc.returncode == 0 and "k not given" in proc.stdout


@pytest.mark.subprocess
def test_report_command_errors(tmp_path, data_csv):
    short = tmp_path / "short.csv"
    pd.read_csv(data_csv).iloc[:10].to_csv(short, index=False)
    proc = run("report", data_csv, short, "--k", 3)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "pysdcmicro: error: `masked` must have as many records as `original` (90); got 10."
    proc = run("report", data_csv, tmp_path / "missing.csv")
    assert proc.returncode == 2 and "does not exist" in proc.stderr


@pytest.mark.subprocess
def test_demo_writes_masked_csv_and_reports(tmp_path):
    proc = run("demo", "--n", 120, "--original", "o.csv", "--output", "m.csv", "--report", "r.json", "--html",
               "r.html", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["k_anonymous"] is True and report["n"] == 120
    assert {"il1s", "eigen"} <= set(report["utility"]) and "interval_disclosure" in report["risk"]
    rep = pysdcmicro.compare(pd.read_csv(tmp_path / "o.csv"), pd.read_csv(tmp_path / "m.csv"), k=3)
    assert rep.k_anonymous and rep.information_loss == pytest.approx(report["information_loss"], rel=1e-10)


def _readme_report_commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    section = text.split("## Report", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return [line.split("#", 1)[0].strip() for line in block.splitlines() if line.strip()]


@pytest.mark.subprocess
def test_readme_two_commands_give_a_masked_csv_and_its_report(tmp_path):
    """The README's Report section: install, then one command to a masked CSV and its report."""
    install, command = _readme_report_commands()
    assert "pip install" in install and '".[plot]"' in install  # not run here: the suite runs installed
    args = shlex.split(command)
    assert args[0] == "pysdcmicro"
    proc = run(*args[1:], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    outputs = {a: b for a, b in zip(args, args[1:]) if a.startswith("--")}
    masked = pd.read_csv(tmp_path / outputs["--output"])
    report = json.loads((tmp_path / outputs["--report"]).read_text())
    assert report["k_anonymous"] is True and metrics.is_k_anonymous(masked, report["k"], variables=report["variables"])
    assert (tmp_path / outputs["--html"]).read_text().count("data:image/png;base64,") == 3
