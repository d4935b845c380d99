"""Risks the command line must not let pass in silence: a zero sampling weight (refused),
records identifiable across variable groups (a warning ``--quiet`` does not hide, the
report's headline), and ``pysdcmicro report`` without ``--variables`` (it names the columns
it checked and those it did not)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from pysdcmicro import cli

from .test_cli_files import one_error_line


def main(*args) -> int:
    return cli.main([str(a) for a in args])


def _write(tmp_path, n=60, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.normal(size=(n, 4)).round(4), columns=list("abcd"))
    frame["w"] = rng.uniform(1, 5, n).round(2)
    path = tmp_path / "in.csv"
    frame.to_csv(path, index=False)
    return path, frame


def test_a_zero_weight_is_one_error_line_and_nothing_written(tmp_path, capsys):
    src, frame = _write(tmp_path)
    frame.loc[7, "w"] = 0
    frame.to_csv(src, index=False)
    out = tmp_path / "out.csv"
    out.write_text("previous\n")
    assert main("microaggregate", src, "--k", 3, "--variables", "a,b", "--weights", "w", "-o", out, "-q") == 2
    one_error_line(capsys.readouterr().err, "weight column 'w' has a zero weight ('0.0') at row 9 of the file",
                   "every sampling weight must be a finite number > 0", "drop the records of weight 0")
    assert out.read_text() == "previous\n"


def test_records_unique_across_groups_are_named_even_with_quiet(tmp_path, capsys):
    src, _ = _write(tmp_path)
    out, rep, page = tmp_path / "out.csv", tmp_path / "rep.json", tmp_path / "rep.html"
    assert main("microaggregate", src, "--k", 3, "--method", "mdav", "--variables", "a,b;c,d", "--seed", 0,
                "-o", out, "--report", rep, "--html", page, "-q") == 0
    released = pd.read_csv(out)
    counts = released.groupby(list("abcd"))["a"].transform("size")
    below = int((counts < 3).sum())
    assert below > 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "singled out across the groups" in line]
    assert len(lines) == 1 and lines[0].startswith("pysdcmicro: warning: variable groups: "
                                                   f"{below} records can be singled out"), err
    data = json.loads(rep.read_text())
    assert data["across_groups"]["records_below_k"] == below
    item = next(h for h in data["headline"] if h["key"] == "across_groups")
    assert item["verdict"] == "bad" and item["value"].startswith(f"{below} record")
    assert "across variable groups" in page.read_text()


def test_without_quiet_the_text_report_says_it_too(tmp_path, capsys):
    src, _ = _write(tmp_path)
    assert main("microaggregate", src, "--k", 3, "--method", "mdav", "--variables", "a,b;c,d", "--seed", 0,
                "-o", tmp_path / "out.csv") == 0
    out = capsys.readouterr().out
    assert "across variable groups:" in out and "record(s) below k" in out


def test_report_without_variables_names_the_columns_it_checked_and_those_it_did_not(tmp_path, capsys):
    src, frame = _write(tmp_path)
    frame["id"] = np.arange(len(frame))
    frame.to_csv(src, index=False)
    out = tmp_path / "out.csv"
    assert main("microaggregate", src, "--k", 3, "--method", "mdav", "--variables", "a,b", "-o", out, "-q") == 0
    capsys.readouterr()
    assert main("report", src, out, "--k", 3) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "checked on the file" in text and ", columns 'a', 'b'." in text  # (a long path may be wrapped)
    for column in ("'c'", "'d'", "'w'", "'id'"):
        assert column in text.split("left unmasked:")[1], column
