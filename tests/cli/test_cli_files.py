"""The command line's files: outputs written as one transaction, output paths
checked against the inputs and each other, I/O failures and Ctrl-C as one line, and the
CSV reading rules the API has too (duplicate names, missing strata, formatted numbers).

Most tests call ``cli.main`` in-process (quick); the exit codes, "no traceback" and "no
file created" of the real entry point are checked in a few subprocess runs.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pysdcmicro import cli, metrics
from pysdcmicro._errors import ReleaseCheckError
from pysdcmicro.cli import _commands, _files

CSV = """\
id,name,x,y,code
1,"Smith, J",1.5,10,007
2,Lee,2.5,11,003
3,Kim,3.0,12,012
4,"Ng, A",10.0,40,001
5,Roe,11.5,41,010
6,Poe,12.0,44,005
7,Fox,20.0,80,008
"""


def run(*args, cwd=None, env=None):
    return subprocess.run([sys.executable, "-m", "pysdcmicro", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=120, env=env)


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "in.csv"
    path.write_text(CSV)
    return path


def listing(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


_DEFAULTS_NOTE = "pysdcmicro: warning: default variables:"  # the note of method auto's safe default selection


def one_error_line(err: str, *needles: str) -> str:
    lines = [line for line in err.strip().splitlines() if not line.startswith(_DEFAULTS_NOTE)]
    assert len(lines) == 1, err
    assert lines[0].startswith("pysdcmicro: error: "), err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def main(*args) -> int:
    return cli.main([str(a) for a in args])


# --- output paths refused before any work ----------------------------------------------

@pytest.mark.parametrize("option", ["--output", "--report", "--html"])
@pytest.mark.parametrize("spelling", ["same", "dot", "symlink", "hardlink", "parent"])
def test_an_output_that_is_the_input_is_refused_and_the_input_kept(tmp_path, data, capsys, monkeypatch,
                                                                   option, spelling):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    target = {"same": str(data), "dot": "./in.csv", "parent": "sub/../in.csv"}.get(spelling)
    if spelling == "symlink":
        os.symlink(data, tmp_path / "link.csv")
        target = "link.csv"
    elif spelling == "hardlink":
        os.link(data, tmp_path / "hard.csv")
        target = "hard.csv"
    before = listing(tmp_path)
    assert main("microaggregate", "in.csv", "--k", 2, option, target) == 2
    one_error_line(capsys.readouterr().err, option, "is the input file", "write the output to another file")
    assert data.read_text() == CSV and listing(tmp_path) == before


def test_report_command_refuses_to_overwrite_its_inputs(tmp_path, data, capsys):
    masked = tmp_path / "m.csv"
    masked.write_text(CSV)
    assert main("report", data, masked, "--json", masked) == 2
    one_error_line(capsys.readouterr().err, "--json", "is the input file", "(MASKED)")
    assert masked.read_text() == CSV


def test_two_outputs_naming_one_file_are_refused(tmp_path, data, capsys):
    before = listing(tmp_path)
    assert main("microaggregate", data, "--k", 2, "-o", tmp_path / "a.csv", "--html", tmp_path / "." / "a.csv") == 2
    one_error_line(capsys.readouterr().err, "--output and --html name the same file")
    assert listing(tmp_path) == before
    assert main("demo", "--n", 30, "--original", tmp_path / "d.csv", "--output", tmp_path / "d.csv") == 2
    one_error_line(capsys.readouterr().err, "--original and --output name the same file")
    assert listing(tmp_path) == before


@pytest.mark.parametrize("option", ["--output", "--report", "--html"])
def test_missing_output_folder_and_folder_as_output_are_one_line(tmp_path, data, capsys, option):
    before = listing(tmp_path)
    assert main("microaggregate", data, "--k", 2, option, tmp_path / "nope" / "o.csv") == 2
    one_error_line(capsys.readouterr().err, option, "the folder", "does not exist")
    (tmp_path / "dir").mkdir()
    assert main("microaggregate", data, "--k", 2, option, tmp_path / "dir") == 2
    one_error_line(capsys.readouterr().err, option, "is a folder")
    assert listing(tmp_path) == before | {"dir"} and not any((tmp_path / "dir").iterdir())


def test_input_errors_are_one_line(tmp_path, capsys, monkeypatch):
    assert main("microaggregate", tmp_path, "--k", 2) == 2
    one_error_line(capsys.readouterr().err, "is a folder")
    path = tmp_path / "in.csv"
    path.write_text(CSV)
    real_read_csv = pd.read_csv

    def denied(source, *args, **kwargs):
        if str(source) == str(path):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_read_csv(source, *args, **kwargs)

    monkeypatch.setattr(pd, "read_csv", denied)
    assert main("microaggregate", path, "--k", 2, "-o", tmp_path / "o.csv") == 2
    one_error_line(capsys.readouterr().err, "cannot read input file", "Permission denied")
    assert not (tmp_path / "o.csv").exists()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads and writes everything")
def test_real_permission_denied(tmp_path, data, capsys):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        assert main("microaggregate", data, "--k", 2, "-o", locked / "o.csv") == 2
        one_error_line(capsys.readouterr().err, "cannot write", "Permission denied")
        assert not any(locked.iterdir())
    finally:
        locked.chmod(0o700)
    data.chmod(0)
    try:
        assert main("microaggregate", data, "--k", 2) == 2
        one_error_line(capsys.readouterr().err, "cannot read input file", "Permission denied")
    finally:
        data.chmod(0o600)


# --- the transaction: nothing written unless everything is -----------------------------

def _enospc(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.parametrize("failing", ["table", "json", "html"])
def test_a_failing_output_leaves_no_file_and_keeps_old_ones(tmp_path, data, capsys, monkeypatch, failing):
    out, rep, page = tmp_path / "o.csv", tmp_path / "r.json", tmp_path / "r.html"
    out.write_text("old output\n")  # a pre-existing output is left as it was
    module, name = {"table": (_files, "write_table"), "json": (_commands, "_write_json"),
                    "html": (_commands, "_write_html")}[failing]
    monkeypatch.setattr(module, name, _enospc)
    before = listing(tmp_path)
    assert main("microaggregate", data, "--k", 2, "-o", out, "--report", rep, "--html", page) == 2
    line = one_error_line(capsys.readouterr().err, "cannot write", "No space left on device")
    assert {"table": "--output", "json": "--report", "html": "--html"}[failing] in line
    assert listing(tmp_path) == before  # no temporary file left either
    assert out.read_text() == "old output\n"


@pytest.mark.parametrize("fast", [True, False])
def test_disk_full_inside_the_csv_writer_is_one_line(tmp_path, data, capsys, monkeypatch, fast):
    from pysdcmicro import _csvio

    if fast:  # the pyarrow path: the file handle's write fails
        pytest.importorskip("pyarrow")
        monkeypatch.setattr(_csvio, "_write_rows", lambda cols, handle: _enospc())
    else:  # pandas writes (no pyarrow)
        monkeypatch.setattr(_csvio, "_plan", lambda frame: None)
        monkeypatch.setattr(pd.DataFrame, "to_csv", lambda self, path=None, *a, **k: _enospc() if path else "")
    assert main("microaggregate", data, "--k", 2, "-o", tmp_path / "o.csv") == 2
    one_error_line(capsys.readouterr().err, "cannot write the masked file (--output)", "No space left on device")
    assert listing(tmp_path) == {"in.csv"}


def test_an_oserror_from_anywhere_is_one_line(tmp_path, data, capsys, monkeypatch):
    def broken(*args, **kwargs):
        raise OSError(errno.EIO, os.strerror(errno.EIO), "/some/where")

    monkeypatch.setattr(_files, "verify", broken)
    assert main("microaggregate", data, "--k", 2, "-o", tmp_path / "o.csv") == 2
    one_error_line(capsys.readouterr().err, "Input/output error", "/some/where")
    assert listing(tmp_path) == {"in.csv"}


def test_all_outputs_written_together_with_normal_permissions(tmp_path, data):
    out, rep, page = tmp_path / "o.csv", tmp_path / "r.json", tmp_path / "r.html"
    assert main("microaggregate", data, "--k", 2, "-q", "-o", out, "--report", rep, "--html", page) == 0
    assert listing(tmp_path) == {"in.csv", "o.csv", "r.json", "r.html"}
    mask = os.umask(0)
    os.umask(mask)
    for path in (out, rep, page):
        assert (path.stat().st_mode & 0o777) == 0o666 & ~mask  # not mkstemp's 0o600
    assert json.loads(rep.read_text())["k_anonymity"]["checked_on"] == f"the written file {out}"


def test_replacing_an_output_keeps_its_permissions_and_writes_through_a_symlink(tmp_path, data):
    real = tmp_path / "real.csv"
    real.write_text("old\n")
    real.chmod(0o640)
    os.symlink(real, tmp_path / "link.csv")
    assert main("microaggregate", data, "--k", 2, "-q", "-o", tmp_path / "link.csv") == 0
    assert (tmp_path / "link.csv").is_symlink() and real.read_text().startswith("id,name,x,y,code")
    assert (real.stat().st_mode & 0o777) == 0o640


def test_parquet_output_is_verified_from_the_temporary_file(tmp_path, data):
    pytest.importorskip("pyarrow")
    out = tmp_path / "o.parquet"
    assert main("microaggregate", data, "--k", 2, "-q", "--variables", "x,y", "-o", out) == 0
    assert listing(tmp_path) == {"in.csv", "o.parquet"}
    assert metrics.is_k_anonymous(pd.read_parquet(out), 2, variables=["x", "y"])


# --- the release check, before anything is renamed or printed ---------------------------

def _tamper(monkeypatch):
    """Every masked CSV (file or text) gets one released value changed: not k-anonymous."""
    original_write = _files.write_csv

    def tampering_write(frame, path=None):
        if "x" in frame.columns:
            frame = frame.copy()
            frame.loc[frame.index[0], "x"] += 0.5
        return original_write(frame, path)

    monkeypatch.setattr(_files, "write_csv", tampering_write)


def test_a_release_that_fails_the_check_is_not_written(tmp_path, data, capsys, monkeypatch):
    _tamper(monkeypatch)
    out, rep = tmp_path / "o.csv", tmp_path / "r.json"
    assert main("microaggregate", data, "--k", 2, "--variables", "x,y", "-o", out, "--report", rep) == 3
    captured = capsys.readouterr()
    one_error_line(captured.err, f"the release for {out} is not 2-anonymous", "nothing was written")
    assert captured.out == "" and listing(tmp_path) == {"in.csv"}


def test_stdout_release_is_verified_before_a_byte_is_printed(tmp_path, data, capsys, monkeypatch):
    _tamper(monkeypatch)
    assert main("microaggregate", data, "--k", 2, "--variables", "x,y", "--report", tmp_path / "r.json") == 3
    captured = capsys.readouterr()
    assert captured.out == ""
    one_error_line(captured.err, "the release for standard output is not 2-anonymous")
    assert listing(tmp_path) == {"in.csv"}


def test_verify_checks_k_anonymity_and_the_reported_il():
    import pysdcmicro

    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0, 10.0, 11.0, 12.0], "b": [5.0, 4.0, 6.0, 1.0, 0.0, 2.0]})
    result = pysdcmicro.microaggregate(frame, 3)
    _files.verify(frame, result.data, result)  # the true release passes
    broken = result.data.copy()
    broken.loc[0, "a"] += 1.0
    with pytest.raises(ReleaseCheckError, match="not 3-anonymous"):
        _files.verify(frame, broken, result)
    shifted = result.data.copy()
    shifted.loc[:2, "a"] += 1.0  # still groups of 3, but other values: another IL
    with pytest.raises(ReleaseCheckError, match="the result reports"):
        _files.verify(frame, shifted, result)


# --- Ctrl-C ------------------------------------------------------------------------------

def _interrupt(*args, **kwargs):
    raise KeyboardInterrupt


def test_ctrl_c_while_writing_leaves_no_file(tmp_path, data, capsys, monkeypatch):
    out, rep, page = tmp_path / "o.csv", tmp_path / "r.json", tmp_path / "r.html"
    out.write_text("old output\n")
    monkeypatch.setattr(_commands, "_write_html", _interrupt)
    assert main("microaggregate", data, "--k", 2, "-o", out, "--report", rep, "--html", page) == 130
    err = capsys.readouterr().err
    assert err.strip() == "pysdcmicro: interrupted; no output file was written or changed"
    assert listing(tmp_path) == {"in.csv", "o.csv"} and out.read_text() == "old output\n"


def test_ctrl_c_during_the_renames_is_held_until_every_output_is_in_place(tmp_path, data, capsys, monkeypatch):
    replace = os.replace
    calls = []

    def replace_then_signal(src, dst):
        replace(src, dst)
        calls.append(dst)
        if len(calls) == 1:  # a real Ctrl-C, then a second one (abort), between two renames
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(os, "replace", replace_then_signal)
    out, rep = tmp_path / "o.csv", tmp_path / "r.json"
    assert main("microaggregate", data, "--k", 2, "-o", out, "--report", rep) == 130
    assert len(calls) == 2 and listing(tmp_path) == {"in.csv", "o.csv", "r.json"}
    assert json.loads(rep.read_text())["k_anonymous"] is True
    err = capsys.readouterr().err
    assert err.startswith("pysdcmicro: interrupted; written before it: ") and "Traceback" not in err


_SIGNAL_SCRIPT = textwrap.dedent("""
    import os, signal, sys
    from pysdcmicro import cli
    from pysdcmicro.cli import _commands
    real = _commands._write_json
    def write_json(path, *args, **kwargs):
        real(path, *args, **kwargs)
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while the outputs are being written:
        if "-q" in sys.argv:                 # the first finishes them, a second aborts
            os.kill(os.getpid(), signal.SIGINT)
    _commands._write_json = write_json
    sys.exit(cli.main(sys.argv[1:]))
""")


@pytest.mark.subprocess
def test_real_sigint_in_a_subprocess_exits_130_without_traceback(tmp_path, data):
    command = [sys.executable, "-c", _SIGNAL_SCRIPT, "microaggregate", str(data), "--k", "2",
               "-o", str(tmp_path / "o.csv"), "--report", str(tmp_path / "r.json")]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=120)  # one Ctrl-C: finished
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert listing(tmp_path) == {"in.csv", "o.csv", "r.json"}
    (tmp_path / "o.csv").unlink()
    (tmp_path / "r.json").unlink()
    proc = subprocess.run(command + ["-q"], capture_output=True, text=True, timeout=120)  # two: abort
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr.strip() == "pysdcmicro: interrupted; no output file was written or changed"
    assert listing(tmp_path) == {"in.csv"}


# --- the real entry point: exit codes, one line, nothing created --------------------------

@pytest.mark.subprocess
def test_entry_point_exit_codes_and_no_file_created(tmp_path, data):
    proc = run("microaggregate", data, "--k", 2, "-o", data)
    assert proc.returncode == 2 and data.read_text() == CSV
    one_error_line(proc.stderr, "is the input file")
    proc = run("microaggregate", data, "--k", 2, "--report", tmp_path / "no" / "r.json", "-o", tmp_path / "o.csv")
    assert proc.returncode == 2 and listing(tmp_path) == {"in.csv"}
    one_error_line(proc.stderr, "does not exist")
    proc = run("demo", "--n", 30, "--original", tmp_path / "o.csv", "--html", tmp_path)
    assert proc.returncode == 2 and listing(tmp_path) == {"in.csv"}
    one_error_line(proc.stderr, "--html", "is a folder")


# --- CSV reading: the API's rules ----------------------------------------------------------

def test_duplicate_header_names_are_refused(tmp_path, capsys):
    path = tmp_path / "d.csv"
    path.write_text("a,b,a\n1,2,3\n4,5,6\n7,8,9\n")
    assert main("microaggregate", path, "--k", 2) == 2
    one_error_line(capsys.readouterr().err, "has two columns named 'a'", "column names must be unique")
    path.write_text("a,a.1,b\n1,2,3\n4,5,6\n7,8,9\n")  # a real 'a.1' is fine
    assert main("microaggregate", path, "--k", 2, "-q", "-o", tmp_path / "o.csv") == 0


@pytest.mark.parametrize("cell", ["", "NA", " na ", "NaN"])
def test_missing_strata_cells_are_refused_like_the_api(tmp_path, capsys, cell):
    import pysdcmicro

    path = tmp_path / "s.csv"
    path.write_text(f"g,x\nA,1.5\nA,2\nA,3.5\nB,4\n{cell},5.5\nB,6\n")
    assert main("microaggregate", path, "--k", 2, "--strata", "g") == 2
    line = one_error_line(capsys.readouterr().err, "stratum column 'g' has a missing value", repr(cell),
                          "at row 6 of the file (the header is row 1)", "every record needs a stratum")
    with pytest.raises(ValueError) as api:
        frame = pd.DataFrame({"g": ["A", "A", "A", "B", None, "B"], "x": [1.5, 2, 3.5, 4, 5.5, 6]})
        pysdcmicro.microaggregate(frame, 2, strata="g")
    assert str(api.value).split("; ")[1] == line.split("; ")[1]  # the API's rule; the row is the file's


@pytest.mark.parametrize("cells,example,words", [
    (["1,234", "2,345", "12", "3,456,789"], "1,234", "',' as a thousands separator"),
    (["$12.50", "$3", "$1,000.25", "$7"], "$12.50", "a currency sign ('$')"),
    (["3,5", "4,25", "10", "-1,5"], "3,5", "a decimal comma"),
    (["1.234,5", "2.000", "3,25", "4"], "1.234,5", "'.' as a thousands separator and a decimal comma"),
    (["12 %", "3%", "7 %", "1"], "12 %", "a percent sign"),
    (["(123)", "45", "(6)", "7"], "(123)", "parentheses (an accounting negative)"),
])
def test_numbers_with_formatting_are_refused_naming_the_format(tmp_path, capsys, cells, example, words):
    """A column of numbers written with formatting is text to the reader, so it would pass
    through unmasked: refused, by default and in --variables alike, with what was seen."""
    path = tmp_path / "f.csv"
    pd.DataFrame({"x": [1.5, 2.0, 3.5, 4.25], "income": cells}).to_csv(path, index=False)
    out = tmp_path / "o.csv"
    assert main("microaggregate", path, "--k", 2, "-q", "-o", out) == 2
    one_error_line(capsys.readouterr().err, "column 'income' holds numbers", repr(example),
                   "row 2 of the file (the header is row 1)", words, "write plain numbers", "--variables")
    assert main("microaggregate", path, "--k", 2, "--variables", "x,income", "-o", out) == 2
    one_error_line(capsys.readouterr().err, "column 'income' holds numbers", repr(example), words,
                   "or leave the column out of --variables")
    assert not out.exists()
    assert main("microaggregate", path, "--k", 2, "-q", "--variables", "x", "-o", out) == 0  # the way out
    assert pd.read_csv(out, dtype=str)["income"].tolist() == cells  # passed through as text


def test_plain_text_columns_do_not_warn(tmp_path, data, capsys):
    assert main("microaggregate", data, "--k", 2, "-q", "-o", tmp_path / "o.csv") == 0
    err = capsys.readouterr().err
    assert [line for line in err.splitlines() if not line.startswith(_DEFAULTS_NOTE)] == []  # "Smith, J", "Lee": not numbers


@pytest.mark.slow
def test_many_columns_no_fragmentation_warnings(tmp_path, capsys, monkeypatch):
    """150 columns (the flood began above 100: 400 warnings for 500 columns, from the released
    values read back one column at a time) and read_table's columns parsed after the sniffed
    rows: every frame built in one piece, no pandas PerformanceWarning."""
    rng = np.random.default_rng(0)
    names = [f"c{i}" for i in range(150)]
    full = tmp_path / "full.csv"
    pd.DataFrame(rng.normal(size=(8, 150)).round(3), columns=names).to_csv(full, index=False)
    code = main("microaggregate", full, "--k", 2, "-q", "-o", tmp_path / "o.csv")
    err = capsys.readouterr().err
    assert code == 0 and "fragmented" not in err and "PerformanceWarning" not in err, err[:300]
    assert _files.read_released(tmp_path / "o.csv", names).shape == (8, 150)
    monkeypatch.setattr(_files, "SNIFF_ROWS", 2)  # so that 75 columns are parsed after the sniff
    values = rng.normal(size=(8, 150)).round(3).astype(str)
    values[:2, ::2] = ""  # empty in the sniffed rows, numbers further down
    late = tmp_path / "late.csv"
    pd.DataFrame(values, columns=names).to_csv(late, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table, chosen = _files.read_table(str(late))
    assert chosen == names and all(table[c].dtype == np.float64 for c in names)
    assert table[names[0]].isna().sum() == 2 and table[names[1]].notna().all()


def test_a_read_only_output_is_not_replaced(tmp_path, data, capsys, monkeypatch):
    out = tmp_path / "o.csv"
    out.write_text("keep me\n")
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if str(p) == str(out) and mode & os.W_OK
                        else real_access(p, mode, **kw))  # root may write anything: simulate a 0o444 file
    assert main("microaggregate", data, "--k", 2, "-o", out) == 2
    one_error_line(capsys.readouterr().err, "--output", "Permission denied", "read-only")
    assert out.read_text() == "keep me\n" and listing(tmp_path) == {"in.csv", "o.csv"}


def test_a_fast_reading_off_in_the_last_place_does_not_refuse_a_correct_release(tmp_path, data, capsys,
                                                                                  monkeypatch):
    """The written file is first read back by a fast parser (pyarrow's, else pandas' C
    parser); if it rounded a cell differently, the exact reading (Python's float per cell)
    decides, not the fast one."""
    real_read_csv = pd.read_csv
    real_fast = _files.read_float_columns
    fast_reads = []

    def off_by_one_ulp(*args, **kwargs):
        frame = real_fast(*args, **kwargs)
        if frame is None:
            frame = real_read_csv(args[0], dtype=np.float64, keep_default_na=False, na_values=args[2],
                                  usecols=args[1])[args[1]]
        fast_reads.append(1)
        frame.iloc[0, 0] = np.nextafter(frame.iloc[0, 0], np.inf)
        return frame

    monkeypatch.setattr(_files, "read_float_columns", off_by_one_ulp)
    out = tmp_path / "o.csv"
    assert main("microaggregate", data, "--k", 2, "-q", "--variables", "x,y", "-o", out) == 0, capsys.readouterr()
    assert fast_reads == [1] and metrics.is_k_anonymous(real_read_csv(out), 2, variables=["x", "y"])
    assert main("microaggregate", data, "--k", 2, "-q", "--variables", "x,y") == 0  # standard output too
    assert fast_reads == [1, 1] and capsys.readouterr().out.startswith("id,name,x,y,code")


def test_report_and_demo_write_all_or_nothing(tmp_path, data, capsys, monkeypatch):
    masked = tmp_path / "m.csv"
    assert main("microaggregate", data, "--k", 2, "-q", "--variables", "x,y", "-o", masked) == 0
    assert "released unmasked" in capsys.readouterr().err  # id and code: numeric, not in --variables
    monkeypatch.setattr(_commands, "_write_html", _enospc)
    before = listing(tmp_path)
    assert main("report", data, masked, "--k", 2, "--json", tmp_path / "r.json", "--html", tmp_path / "r.html") == 2
    one_error_line(capsys.readouterr().err, "cannot write the HTML report (--html)", "No space left on device")
    assert main("demo", "--n", 30, "--original", tmp_path / "o.csv", "--output", tmp_path / "d.csv",
                "--report", tmp_path / "d.json", "--html", tmp_path / "d.html") == 2
    one_error_line(capsys.readouterr().err, "cannot write the HTML report (--html)")
    assert listing(tmp_path) == before
    monkeypatch.undo()
    assert main("demo", "--n", 30, "--original", tmp_path / "o.csv", "--output", tmp_path / "d.csv",
                "--report", tmp_path / "d.json") == 0
    assert listing(tmp_path) == before | {"o.csv", "d.csv", "d.json"}
    assert "Masked data written to" in capsys.readouterr().out


def test_docs_table_names_only_existing_tests():
    import re

    page = Path(__file__).resolve().parents[2] / "docs" / "guide" / "command-line.md"
    table = page.read_text().split("## File cases tried", 1)[1]
    named = re.findall(r"`(test_\w+)`", table)
    assert len(named) >= 15
    missing = [name for name in named if name not in globals()]
    assert not missing, missing


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_special_files_are_written_in_place_after_the_check(tmp_path, data, capsys):
    import tempfile
    import threading

    before_tmp = {p for p in os.listdir(tempfile.gettempdir()) if p.startswith(".pysdcmicro-")}
    rep = tmp_path / "r.json"
    assert main("microaggregate", data, "--k", 2, "-q", "--variables", "x,y", "-o", os.devnull, "--report", rep) == 0
    assert json.loads(rep.read_text())["k_anonymous"] is True and not Path(os.devnull).is_file()
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()), daemon=True)
    reader.start()
    assert main("microaggregate", data, "--k", 2, "-q", "--variables", "x,y", "-o", fifo) == 0
    reader.join(timeout=30)
    assert received and received[0].startswith("id,name,x,y,code") and received[0].count("\n") == 8
    after_tmp = {p for p in os.listdir(tempfile.gettempdir()) if p.startswith(".pysdcmicro-")}
    assert after_tmp <= before_tmp  # the temporary copies are removed


# --- the fast CSV writer (pysdcmicro._csvio): the bytes pandas writes, faster ---------------

_ODD_TEXT = ["007", "1e5", "NA", "", "n/a", "NaN", "a,b", 'say "hi"', "two\nlines", " padded ", "é ü 中", '"', ",",
             "-0", "1,234", "$12.50", "None", "#N/A", "0x1F", "inf"]


def _odd_frame(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n) * 10.0 ** rng.uniform(-320, 308, n)  # every layout repr uses
    x[::37] = np.nan
    x[1::41] = -0.0
    x[2::43] = np.round(x[2::43])
    ints = rng.integers(-2**53, 2**53, n)
    text = pd.Series(rng.choice(_ODD_TEXT, n), dtype=str)
    return pd.DataFrame({
        "x": x, "plain": np.round(rng.normal(size=n) * 100, rng.integers(0, 8)), "int": ints,
        "Int": pd.array(np.where(rng.random(n) < 0.2, None, ints), dtype="Int64"), "text": text,
        "obj, with comma": text.astype(object), 'q"uote': rng.normal(size=n)})


@pytest.mark.parametrize("seed", [0, 1])
def test_fast_writer_writes_the_bytes_pandas_writes(tmp_path, seed):
    from pysdcmicro import _csvio

    pytest.importorskip("pyarrow")
    assert _csvio.fast_writer_available()
    frame = _odd_frame(seed=seed)
    with np.errstate(over="ignore"):
        expected = frame.to_csv(index=False)
    assert _csvio.write_csv(frame) == expected
    _csvio.write_csv(frame, tmp_path / "f.csv")
    assert (tmp_path / "f.csv").read_bytes() == expected.encode("utf-8")
    for col in frame.columns:  # one column: an empty cell is written "" (csv quotes a lone empty field)
        assert _csvio.write_csv(frame[[col]]) == frame[[col]].to_csv(index=False), col
    assert _csvio.write_csv(frame.iloc[:0]) == frame.iloc[:0].to_csv(index=False)


def test_fast_writer_leaves_carriage_returns_and_other_dtypes_to_pandas(tmp_path):
    from pysdcmicro import _csvio

    frame = pd.DataFrame({"t": ["a\rb", "c"], "d": pd.to_datetime(["2020-01-01", "2021-02-03"])})
    assert _csvio.write_csv(frame) == frame.to_csv(index=False)
    frame = pd.DataFrame({"b": [True, False], "c": pd.Categorical(["u", "v"])})
    assert _csvio.write_csv(frame) == frame.to_csv(index=False)


def test_fast_reader_reads_the_written_floats_exactly(tmp_path):
    from pysdcmicro import _csvio

    pytest.importorskip("pyarrow")
    frame = _odd_frame(seed=2)
    path = tmp_path / "f.csv"
    _csvio.write_csv(frame, path)
    back = _csvio.read_float_columns(str(path), ["x", "plain", 'q"uote'], _files.NA_CELLS, len(frame))
    for col in ["x", "plain", 'q"uote']:
        a, b = frame[col].to_numpy(), back[col].to_numpy()
        assert np.array_equal(a.view(np.int64)[~np.isnan(a)], b.view(np.int64)[~np.isnan(a)]), col  # bit for bit
        assert np.array_equal(np.isnan(a), np.isnan(b))
    assert _csvio.read_float_columns(str(path), ["text"], _files.NA_CELLS, len(frame)) is None  # not numbers
    assert _csvio.read_float_columns(str(path), ["x"], _files.NA_CELLS, len(frame) + 1) is None  # row count


def test_passthrough_columns_are_written_byte_for_byte_as_read(tmp_path):
    """Columns not microaggregated keep their text exactly: leading zeros, 1e5, NA spellings,
    empty cells, quotes, commas and newlines inside cells (the input written with the usual
    minimal quoting: those columns' bytes in the output equal the input's)."""
    rng = np.random.default_rng(5)
    n = 400
    frame = pd.DataFrame({"id": rng.choice(_ODD_TEXT, n), "x": rng.normal(size=n) * 1000,
                          "code": rng.choice(_ODD_TEXT, n), "y": rng.normal(size=n),
                          "num_text": rng.choice(["007", "1e5", "12", "", "NA", "3.50"], n)})
    src = tmp_path / "in.csv"
    src.write_text(frame.to_csv(index=False))
    out = tmp_path / "out.csv"
    assert main("microaggregate", src, "--k", 3, "--variables", "x,y", "-q", "-o", out,
                "--method", "mdav") == 0
    import csv
    with open(src, newline="") as a, open(out, newline="") as b:
        rows_in, rows_out = list(csv.reader(a)), list(csv.reader(b))
    assert len(rows_in) == len(rows_out) == n + 1
    for r_in, r_out in zip(rows_in, rows_out):
        for j in (0, 2, 4):
            assert r_in[j] == r_out[j]
    # and as bytes: each pass-through cell is written as in the input (same quoting)
    def cells(path, j):
        return [frame_cell for frame_cell in pd.read_csv(path, dtype=str, keep_default_na=False).iloc[:, j]]
    for j in (0, 2, 4):
        assert cells(src, j) == cells(out, j)
    masked = pd.read_csv(out, keep_default_na=False, dtype=str)
    rebuilt = frame.astype(object).copy()
    rebuilt["x"], rebuilt["y"] = masked["x"], masked["y"]
    assert out.read_bytes() == pd.DataFrame(rebuilt).to_csv(index=False).encode()
    assert metrics.is_k_anonymous(masked.astype({"x": float, "y": float}), 3, variables=["x", "y"])
