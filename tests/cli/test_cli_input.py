"""What goes into the command line is what the user meant, and a failure leaves nothing behind.

* ragged rows (a trailing separator, a first row with a field too many, a short row) and a
  separator or decimal mark that does not fit are refused with one line naming the row and
  the fix, or read correctly with ``--sep``, ``--decimal``, ``--na-values``;
* a numeric column with a few cells that are not numbers (``:``, ``-``, ``.``, ``?``, a NUL
  byte, text after the rows sniffed first) is refused rather than passed through as text;
  columns left unmasked that look like quasi-identifiers are named in a warning and in the
  report's headline;
* integers beyond 2**53 are refused by the CSV and Parquet paths as the API refuses them;
* outputs are all or nothing with special files among them (``/dev/full``, a FIFO, standard
  output): no regular output is replaced unless everything was written.

A property test (Hypothesis) writes random ragged, mis-separated and almost-numeric files:
each one is either released with every column accounted for, or refused with one line.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pysdcmicro import cli
from pysdcmicro.cli import _files

ROOT = Path(__file__).resolve().parents[2]


def main(*args) -> int:
    return cli.main([str(a) for a in args])


def error_lines(err: str) -> list[str]:
    assert "Traceback" not in err, err
    return [line for line in err.splitlines() if line.startswith("pysdcmicro: error:")]


def refused(capsys, *needles: str) -> str:
    err = capsys.readouterr().err
    lines = error_lines(err)
    assert len(lines) == 1, err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def _numbers(n: int = 40, seed: int = 0) -> tuple[list, list]:
    rng = np.random.default_rng(seed)
    return [int(v) for v in rng.integers(1000, 99999, n)], [int(v) for v in rng.integers(18, 90, n)]


def _write(path: Path, header: str, rows: list[str]) -> Path:
    path.write_text(header + "\n" + "\n".join(rows) + "\n")
    return path


# -- A. ragged rows, separators, decimal marks ----------------------------------------------

def test_a_trailing_comma_is_refused_naming_the_row(tmp_path, capsys):
    income, age = _numbers()
    src = _write(tmp_path / "in.csv", "income,age", [f"{a},{b}," for a, b in zip(income, age)])
    out = tmp_path / "out.csv"
    assert main("microaggregate", src, "--k", 3, "-q", "-o", out) == 2
    refused(capsys, "row 2 has 3 fields", "the header has 2", "trailing ','")
    assert not out.exists()


def test_a_first_row_with_a_field_too_many_is_refused(tmp_path, capsys):
    rows = ["1,2,3"] + [f"{i},{i * 3 % 7}" for i in range(4, 30)]
    src = _write(tmp_path / "in.csv", "a,b", rows)
    assert main("microaggregate", src, "--k", 3, "-q", "-o", tmp_path / "out.csv") == 2
    refused(capsys, "row 2 has 3 fields")
    assert not (tmp_path / "out.csv").exists()


def test_a_short_row_is_refused(tmp_path, capsys):
    rows = [f"{i},{i * 3 % 7}" for i in range(30)]
    rows[11] = "5"
    src = _write(tmp_path / "in.csv", "a,b", rows)
    assert main("microaggregate", src, "--k", 3, "-q", "-o", tmp_path / "out.csv") == 2
    refused(capsys, "row 13 has 1 field,")


def test_a_semicolon_file_with_decimal_commas_is_refused_then_read_with_sep_and_decimal(tmp_path, capsys):
    income, age = _numbers()
    src = _write(tmp_path / "in.csv", "income;age", [f"{a},5;{b},25" for a, b in zip(income, age)])
    out = tmp_path / "out.csv"
    assert main("microaggregate", src, "--k", 3, "-q", "-o", out) == 2
    refused(capsys, "--sep ';'")
    assert not out.exists()
    assert main("microaggregate", src, "--k", 3, "-q", "--sep", ";", "--decimal", ",", "-o", out) == 0, \
        capsys.readouterr().err
    written = pd.read_csv(out, sep=";", decimal=",")
    assert list(written.columns) == ["income", "age"]
    assert written.groupby(["income", "age"]).size().min() >= 3
    assert abs(written["income"].mean() - (np.mean(income) + 0.5)) < 1e-6  # means kept: the numbers were read


def test_a_semicolon_file_without_decimal_commas_is_refused(tmp_path, capsys):
    income, age = _numbers()
    src = _write(tmp_path / "in.csv", "income;age", [f"{a};{b}" for a, b in zip(income, age)])
    assert main("microaggregate", src, "--k", 3, "-q", "-o", tmp_path / "out.csv") == 2
    refused(capsys, "one column named 'income;age'", "--sep ';'")


def test_a_tab_separated_file_is_read_with_sep_tab(tmp_path, capsys):
    income, age = _numbers()
    src = _write(tmp_path / "in.tsv", "income\tage\tname", [f"{a}\t{b}\tx y" for a, b in zip(income, age)])
    out = tmp_path / "out.tsv"
    assert main("microaggregate", src, "--k", 3, "-q", "--sep", "\\t", "-o", out) == 0, capsys.readouterr().err
    written = pd.read_csv(out, sep="\t", dtype=str, keep_default_na=False)
    assert list(written.columns) == ["income", "age", "name"] and (written["name"] == "x y").all()


def test_a_bad_format_options_are_one_line(tmp_path, capsys):
    income, age = _numbers()
    src = _write(tmp_path / "in.csv", "income,age", [f"{a},{b}" for a, b in zip(income, age)])
    assert main("microaggregate", src, "--k", 3, "--sep", ";;") == 2
    refused(capsys, "--sep must be one character")
    assert main("microaggregate", src, "--k", 3, "--sep", ",", "--decimal", ",") == 2
    refused(capsys, "--sep and --decimal")


def test_a_columns_written_are_the_columns_read(tmp_path, capsys, monkeypatch):
    income, age = _numbers()
    src = _write(tmp_path / "in.csv", "income,age", [f"{a},{b}" for a, b in zip(income, age)])
    real = _files.read_table

    def shifted(*args, **kwargs):  # a reader that loses a column on the way
        frame, chosen = real(*args, **kwargs)
        return frame.assign(extra=1.0), chosen

    monkeypatch.setattr(_files, "read_table", shifted)
    out = tmp_path / "out.csv"
    out.write_text("prev\n")
    code = main("microaggregate", src, "--k", 3, "-q", "--variables", "income,age", "-o", out)
    err = capsys.readouterr().err
    assert code in (2, 3) and "columns" in err, err
    assert out.read_text() == "prev\n"


# -- B. almost-numeric columns, unmasked quasi-identifiers ---------------------------------

@pytest.mark.parametrize("cell", [":", "-", ".", "?", "\x00", "n/k"])
def test_b_one_odd_cell_in_a_numeric_column_is_refused(tmp_path, capsys, cell):
    income, age = _numbers()
    rows = [f"{a},{b}" for a, b in zip(income, age)]
    rows[7] = f"{cell},{age[7]}"
    src = _write(tmp_path / "in.csv", "income,age", rows)
    out = tmp_path / "out.csv"
    assert main("microaggregate", src, "--k", 3, "-q", "-o", out) == 2
    refused(capsys, "column 'income'", repr(cell), "row 9", "--na-values", "--variables")
    assert not out.exists()


def test_b_text_after_the_sniffed_rows_is_refused(tmp_path, capsys):
    income, age = _numbers(1200)
    rows = [f"{a},{b}" for a, b in zip(income, age)]
    rows[1100] = f"unknown,{age[1100]}"
    src = _write(tmp_path / "in.csv", "income,age", rows)
    assert main("microaggregate", src, "--k", 3, "-q", "-o", tmp_path / "out.csv") == 2
    refused(capsys, "column 'income'", "'unknown'", "row 1102")


def test_b_na_values_reads_the_odd_cell_as_missing(tmp_path, capsys):
    income, age = _numbers()
    rows = [f"{a},{b}" for a, b in zip(income, age)]
    rows[7] = f":,{age[7]}"
    src = _write(tmp_path / "in.csv", "income,age", rows)
    out, rep = tmp_path / "out.csv", tmp_path / "rep.json"
    assert main("microaggregate", src, "--k", 3, "-q", "--na-values", ":", "-o", out, "--report", rep) == 0
    written = pd.read_csv(out)
    assert np.isnan(written["income"].iloc[7]) and written["income"].notna().sum() == 39
    assert json.loads(rep.read_text())["variables"] == ["income", "age"]


def test_b_a_numeric_column_left_out_of_variables_is_named_even_with_quiet(tmp_path, capsys):
    income, age = _numbers()
    rows = [f"{a},{b},{a % 97}" for a, b in zip(income, age)]
    rows[7] = f":,{age[7]},3"
    src = _write(tmp_path / "in.csv", "income,age,code", rows)
    out, rep = tmp_path / "out.csv", tmp_path / "rep.json"
    assert main("microaggregate", src, "--k", 3, "-q", "--variables", "age", "-o", out, "--report", rep) == 0
    err = capsys.readouterr().err
    warning = [line for line in err.splitlines() if "released unmasked" in line]
    assert len(warning) == 1 and "'income'" in warning[0] and "'code'" in warning[0] and "--variables" in warning[0]
    headline = {item["key"]: item for item in json.loads(rep.read_text())["headline"]}
    assert "'income'" in headline["unmasked"]["reading"] and headline["unmasked"]["verdict"] == "bad"
    assert "columns 'age'" in headline["k_anonymous"]["reading"]


def test_b_report_names_the_columns_it_checked_and_those_it_did_not(tmp_path, capsys):
    income, age = _numbers()
    src = _write(tmp_path / "in.csv", "income,age", [f"{a},{b}" for a, b in zip(income, age)])
    masked = tmp_path / "m.csv"
    assert main("microaggregate", src, "--k", 3, "-q", "--variables", "age", "-o", masked) == 0
    capsys.readouterr()
    rep = tmp_path / "r.json"
    assert main("report", src, masked, "--k", 3, "--json", rep) == 0
    text = capsys.readouterr().out
    assert "columns 'age'" in text and "left unmasked" in text and "'income'" in text
    assert json.loads(rep.read_text())["unmasked"][0]["column"] == "income"


# -- C. one integer rule -------------------------------------------------------------------

@pytest.mark.parametrize("variables", [None, "a,x"])
def test_c_integers_beyond_2_53_in_a_csv_are_refused(tmp_path, capsys, variables):
    rows = [f"{9007199254740992 + (i % 2)},{i * 1.5}" for i in range(30)]
    src = _write(tmp_path / "in.csv", "a,x", rows)
    out = tmp_path / "out.csv"
    extra = ["--variables", variables] if variables else []
    assert main("microaggregate", src, "--k", 3, "-q", "-o", out, *extra) == 2
    refused(capsys, "column 'a'", "9007199254740993", "beyond 2**53")
    assert not out.exists()


def test_c_2_53_itself_is_accepted_as_the_api_accepts_it(tmp_path, capsys):
    from pysdcmicro import microaggregate

    microaggregate(pd.DataFrame({"a": [2 ** 53, 2 ** 53 - 1] * 15, "x": np.arange(30) * 1.5}), 3, method="mdav")
    rows = [f"{9007199254740992 - (i % 2)},{i * 1.5}" for i in range(30)]
    src = _write(tmp_path / "in.csv", "a,x", rows)
    assert main("microaggregate", src, "--k", 3, "-q", "--variables", "a,x", "-o", tmp_path / "out.csv") == 0


def test_c_parquet_int64_beyond_2_53_is_refused(tmp_path, capsys):
    pytest.importorskip("pyarrow")
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pd.DataFrame({"big": 2 ** 60 + np.arange(30), "x": np.arange(30) * 1.5}).to_parquet(src)
    assert main("microaggregate", src, "--k", 3, "-q", "-o", out) == 2
    refused(capsys, "column 'big'", "beyond 2**53")
    assert not out.exists()
    from pysdcmicro.large._parquet import read_matrix  # the streaming (--dask) path's reader

    with pytest.raises(ValueError, match="beyond 2\\*\\*53"):
        read_matrix(str(src), ["big", "x"])


# -- D. all or nothing, special files ----------------------------------------------------

@pytest.fixture
def plain(tmp_path):
    income, age = _numbers()
    return _write(tmp_path / "in.csv", "income,age", [f"{a},{b}" for a, b in zip(income, age)])


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
@pytest.mark.parametrize("option", ["--report", "--html"])
def test_d_a_failing_special_output_replaces_nothing(tmp_path, plain, capsys, option):
    prev = tmp_path / "prev.csv"
    prev.write_text("prev\n")
    assert main("microaggregate", plain, "--k", 3, "-q", "-o", prev, option, "/dev/full") == 2
    refused(capsys, "/dev/full", "No space left on device")
    assert prev.read_text() == "prev\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "prev.csv"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_d_a_fifo_without_reader_is_refused_not_waited_for(tmp_path, plain, capsys):
    prev, fifo = tmp_path / "prev.csv", tmp_path / "fifo"
    prev.write_text("prev\n")
    os.mkfifo(fifo)

    class Waited(Exception):
        pass

    def waited(signum, frame):
        raise Waited("the command waited for a reader")

    previous = signal.signal(signal.SIGALRM, waited)
    signal.alarm(60)
    try:
        code = main("microaggregate", plain, "--k", 3, "-q", "-o", prev, "--report", fifo)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert code == 2
    refused(capsys, "FIFO", "no reader")
    assert prev.read_text() == "prev\n"


def test_d_standard_output_failing_replaces_nothing(tmp_path, plain, capsys, monkeypatch):
    class Full:
        def write(self, text):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        def flush(self):
            pass

    rep = tmp_path / "rep.json"
    rep.write_text("prev\n")
    monkeypatch.setattr(sys, "stdout", Full())
    assert main("microaggregate", plain, "--k", 3, "-q", "--report", rep) == 2
    refused(capsys, "standard output", "No space left on device")
    assert rep.read_text() == "prev\n"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
def test_d_through_the_real_command(tmp_path, plain):
    prev = tmp_path / "prev.csv"
    prev.write_text("prev\n")
    proc = subprocess.run([sys.executable, "-m", "pysdcmicro", "microaggregate", str(plain), "--k", "3", "-q",
                           "-o", str(prev), "--report", "/dev/full"], capture_output=True, text=True, timeout=300,
                          cwd=ROOT)
    assert proc.returncode == 2 and len(error_lines(proc.stderr)) == 1, proc.stderr
    assert prev.read_text() == "prev\n"


# -- the property: released with every column accounted for, or refused ------------------

_MODES = ["clean", "trailing", "long_first", "short", "semicolon", "odd_cell", "late_text"]


@st.composite
def hostile_files(draw):
    n = draw(st.integers(6, 14))
    kinds = draw(st.lists(st.sampled_from(["int", "float", "text", "quoted"]), min_size=1, max_size=4))
    if not any(k in ("int", "float") for k in kinds):
        kinds.append("float")
    columns = []
    for j, kind in enumerate(kinds):
        if kind == "int":
            cells = [str(v) for v in draw(st.lists(st.integers(-10 ** 6, 10 ** 6), min_size=n, max_size=n))]
        elif kind == "float":
            cells = [repr(float(v)) for v in draw(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=n,
                                                           max_size=n))]
        elif kind == "text":
            cells = draw(st.lists(st.text("abcxyz", min_size=1, max_size=5), min_size=n, max_size=n))
        else:
            cells = [f'"{v}, {w}"' for v, w in zip(draw(st.lists(st.text("abc", min_size=1, max_size=3),
                                                                   min_size=n, max_size=n)), range(n))]
        columns.append((f"c{j}", kind, cells))
    mode = draw(st.sampled_from(_MODES))
    sep = ","
    rows = [[col[2][i] for col in columns] for i in range(n)]
    header = [name for name, _, _ in columns]
    numeric = [j for j, (_, kind, _) in enumerate(columns) if kind in ("int", "float")]
    if mode == "trailing":
        rows = [r + [""] for r in rows]
    elif mode == "long_first":
        rows[0] = rows[0] + ["1"]
    elif mode == "short":
        i = draw(st.integers(0, n - 1))
        rows[i] = rows[i][:-1] if len(rows[i]) > 1 else []
    elif mode == "semicolon":
        sep = ";"
        rows = [[c.replace(".", ",") if k in ("float",) else c for c, (_, k, _) in zip(r, columns)] for r in rows]
    elif mode in ("odd_cell", "late_text"):
        j = draw(st.sampled_from(numeric))
        i = draw(st.integers(0, n - 1))
        rows[i][j] = draw(st.sampled_from([":", "-", ".", "?", "\x00", "n/a x"]))
    text = sep.join(header) + "\n" + "".join(sep.join(r) + "\n" for r in rows if r or mode != "short")
    if mode == "short" and any(not r for r in rows):
        text = sep.join(header) + "\n" + "".join((sep.join(r) if r else "") + "\n" for r in rows)
    return text, header, mode


@settings(max_examples=60, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=hostile_files())
def test_every_hostile_file_round_trips_or_is_refused(tmp_path_factory, case):
    text, header, mode = case
    folder = tmp_path_factory.mktemp("prop")
    src, out, rep = folder / "in.csv", folder / "out.csv", folder / "rep.json"
    src.write_bytes(text.encode("utf-8"))
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = cli.main(["microaggregate", str(src), "--k", "2", "-q", "--method", "mdav", "-o", str(out),
                         "--report", str(rep)])
    err = err.getvalue()
    assert "Traceback" not in err
    if code == 2:
        assert len(error_lines(err)) == 1, err
        assert not out.exists() and not rep.exists()
        return
    assert code == 0, (mode, err)
    # every other file must be refused; a one-column file has no separator to get wrong (its
    # short row is a blank line, which no CSV reader takes for a record)
    assert mode == "clean" or (mode in ("short", "semicolon") and len(header) == 1), (mode, text, err)
    original = pd.read_csv(src, dtype=str, keep_default_na=False)
    written = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert list(written.columns) == header == list(original.columns)
    assert len(written) == len(original)
    masked = json.loads(rep.read_text())["variables"]
    for col in header:
        if col not in masked:
            assert written[col].tolist() == original[col].tolist(), col  # passed through byte for byte
            cells = pd.to_numeric(original[col].str.strip().replace("", np.nan), errors="coerce")
            if cells.notna().any():  # a numeric column left unmasked is named
                assert f"'{col}'" in err, (col, err)
        else:
            values = written[col].replace("", np.nan).astype(float)
            assert values.notna().sum() == (original[col].str.strip() != "").sum()


# -- smaller refusals: one line each ------------------------------------------------------

@pytest.mark.parametrize("args, needle", [
    (["microaggregate", "in.csv", "--k", "2.5"], "argument --k: invalid int value: '2.5'"),
    (["microaggregate"], "the following arguments are required"),
    (["frob"], "invalid choice: 'frob'"),
])
def test_argument_errors_are_one_line_not_the_usage_text(capsys, args, needle):
    with pytest.raises(SystemExit) as stop:
        cli.main(args)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("pysdcmicro: error: ") and needle in err, err
    assert "usage:" not in err


def test_demo_with_a_negative_seed_is_one_line(capsys):
    assert main("demo", "--seed", -1) == 2
    refused(capsys, "--seed", "-1")


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="no file modes here")
def test_a_read_only_output_is_not_replaced_whoever_runs_the_command(tmp_path, plain, capsys):
    prev = tmp_path / "prev.csv"
    prev.write_text("prev\n")
    prev.chmod(0o444)  # root may write it anyway: the mode bits decide
    try:
        assert main("microaggregate", plain, "--k", 3, "-q", "-o", prev) == 2
        refused(capsys, "--output", "read-only")
        assert prev.read_text() == "prev\n"
    finally:
        prev.chmod(0o644)


def _archive(tmp_path: Path, kind: str) -> Path:
    import zipfile

    text = "income,age\n" + "".join(f"{a},{b}\n" for a, b in zip(*_numbers()))
    if kind == "two-member zip":
        path = tmp_path / "in.csv.zip"
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("a.csv", text)
            archive.writestr("b.csv", text)
        return path
    suffix, data = {"corrupt xz": (".csv.xz", b"\xfd7zXZ\x00" + b"garbage" * 20),
                    "corrupt zip": (".csv.zip", b"PK\x03\x04" + b"garbage" * 20),
                    "corrupt tar": (".csv.tar", b"garbage" * 100),
                    "truncated gz": (".csv.gz", b"\x1f\x8b" + b"garbage"),
                    "zst": (".csv.zst", b"(\xb5/\xfd" + b"garbage")}[kind]
    path = tmp_path / ("in" + suffix)
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("kind", ["two-member zip", "corrupt xz", "corrupt zip", "corrupt tar", "truncated gz", "zst"])
def test_an_unreadable_compressed_input_is_one_line(tmp_path, capsys, kind):
    if kind == "zst":
        try:
            import zstandard  # noqa: F401
            pytest.skip("zstandard is installed: the garbage is then refused as corrupt, another case")
        except ImportError:
            pass
    out = tmp_path / "out.csv"
    assert main("microaggregate", _archive(tmp_path, kind), "--k", 3, "-q", "-o", out) == 2
    refused(capsys, "input file")
    assert not out.exists()


def test_a_compressed_input_is_read_as_the_plain_one(tmp_path, capsys):
    import gzip

    text = "income,age\n" + "".join(f"{a},{b}\n" for a, b in zip(*_numbers()))
    plain, packed = tmp_path / "in.csv", tmp_path / "in.csv.gz"
    plain.write_text(text)
    packed.write_bytes(gzip.compress(text.encode()))
    for src, out in ((plain, tmp_path / "a.csv"), (packed, tmp_path / "b.csv")):
        assert main("microaggregate", src, "--k", 3, "-q", "--seed", 0, "--method", "mdav", "-o", out) == 0
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()


@pytest.mark.parametrize("ending", [".gz", ".zip", ".xz", ".bz2"])
def test_a_compressed_output_is_compressed_and_verified(tmp_path, plain, capsys, ending):
    import zipfile

    out, ref = tmp_path / f"out.csv{ending}", tmp_path / "ref.csv"
    for target in (ref, out):
        assert main("microaggregate", plain, "--k", 3, "-q", "--seed", 0, "--method", "mdav", "-o", target) == 0
    assert out.read_bytes() != ref.read_bytes()  # not a plain CSV under a compressed name
    assert pd.read_csv(out).equals(pd.read_csv(ref))
    if ending == ".zip":
        assert zipfile.ZipFile(out).namelist() == ["out.csv"]


def test_an_output_name_near_the_length_limit_is_written(tmp_path, plain, capsys):
    out = tmp_path / ("a" * 240 + ".csv")  # 244 bytes: the temporary file's name must fit too
    assert main("microaggregate", plain, "--k", 3, "-q", "-o", out) == 0, capsys.readouterr().err
    assert pd.read_csv(out).shape == (40, 2)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".pysdcmicro-")] == []


def test_a_file_without_a_line_break_is_refused_without_reading_it_whole(tmp_path, capsys, monkeypatch):
    from pysdcmicro import _csvio

    monkeypatch.setattr(_csvio, "HEADER_BYTES", 1 << 20)
    src = tmp_path / "one-line.csv"
    src.write_bytes(b"1," * (1 << 20))  # 2 MiB, no line break
    assert main("microaggregate", src, "--k", 3, "-q", "-o", tmp_path / "out.csv") == 2
    refused(capsys, "no line break in its first 1 MiB")


def test_the_json_names_the_weight_column(tmp_path, capsys):
    income, age = _numbers()
    src = _write(tmp_path / "in.csv", "income,age,w", [f"{a},{b},{1 + i % 3}" for i, (a, b) in
                                                      enumerate(zip(income, age))])
    rep = tmp_path / "rep.json"
    assert main("microaggregate", src, "--k", 3, "-q", "--variables", "income,age", "--weights", "w",
                "-o", tmp_path / "out.csv", "--report", rep) == 0
    assert json.loads(rep.read_text())["weight_column"] == "w"


# -- E. numbers written with formatting, nameless columns, rows named as in the file --------

@pytest.mark.parametrize("cell, words", [
    ("1,234", "',' as a thousands separator"),
    ("12.5%", "a percent sign"),
    ("(123)", "parentheses (an accounting negative)"),
    ("€12", "a currency sign ('€')"),
])
def test_e_one_formatted_cell_in_a_numeric_column_is_refused(tmp_path, capsys, cell, words):
    """One such cell made the whole column text, released unmasked with a warning; now
    refused like a stray '-', and the message describes that cell."""
    income, age = _numbers()
    rows = [f"{a},{b}" for a, b in zip(income, age)]
    rows[7] = f'"{cell}",{age[7]}'
    src = _write(tmp_path / "in.csv", "income,age", rows)
    out = tmp_path / "out.csv"
    assert main("microaggregate", src, "--k", 3, "-q", "-o", out) == 2
    line = refused(capsys, "column 'income'", repr(cell), "row 9 of the file (the header is row 1)", words,
                   "write plain numbers", "--variables")
    assert "thousands separators, a currency sign or a decimal comma" not in line
    assert not out.exists()
    assert main("microaggregate", src, "--k", 3, "-q", "--variables", "income,age", "-o", out) == 2
    refused(capsys, "column 'income'", repr(cell), "row 9", words, "leave the column out of --variables")


def test_e_a_column_of_formatted_numbers_is_refused_naming_the_format(tmp_path, capsys):
    income, age = _numbers()
    src = _write(tmp_path / "in.csv", "income,age", [f'"{a:,}",{b}' for a, b in zip(income, age)])
    out = tmp_path / "out.csv"
    assert main("microaggregate", src, "--k", 3, "-q", "-o", out) == 2
    refused(capsys, "column 'income' holds numbers written with ',' as a thousands separator",
            f"such as '{income[0]:,}' at row 2 of the file", "--variables")
    assert not out.exists()


def test_e_decimal_commas_under_sep_semicolon_alone_are_refused_naming_decimal(tmp_path, capsys):
    income, age = _numbers()
    src = _write(tmp_path / "in.csv", "income;share;age",
                 [f"{a},46;0,{b};{b}" for a, b in zip(income, age)])
    out = tmp_path / "out.csv"
    assert main("microaggregate", src, "--k", 3, "-q", "--sep", ";", "-o", out) == 2
    line = refused(capsys, "column 'income'", f"'{income[0]},46'", "row 2 of the file", "a decimal comma",
                   "--decimal ','")
    assert "write plain numbers" not in line
    assert not out.exists()
    assert main("microaggregate", src, "--k", 3, "-q", "--sep", ";", "--decimal", ",", "-o", out) == 0
    written = pd.read_csv(out, sep=";", decimal=",")
    assert written.groupby(["income", "share", "age"]).size().min() >= 3


def test_e_a_named_column_with_a_stray_cell_is_refused_naming_it(tmp_path, capsys):
    income, age = _numbers()
    rows = [f"{a},{b}" for a, b in zip(income, age)]
    rows[4] = f"-,{age[4]}"
    src = _write(tmp_path / "in.csv", "income,age", rows)
    assert main("microaggregate", src, "--k", 3, "-q", "--variables", "income", "-o", tmp_path / "o.csv") == 2
    refused(capsys, "column 'income'", "'-'", "row 6 of the file", "--na-values -")


def test_e_a_trailing_comma_on_every_row_is_an_empty_column_passed_through(tmp_path, capsys):
    """A common spreadsheet export: header ``a,b,c,`` and rows ``1,2,3,``. The empty-named
    column passes through under its empty name; the written header is the input's."""
    income, age = _numbers()
    src = _write(tmp_path / "in.csv", "income,age,code,", [f"{a},{b},{a % 7:03d}," for a, b in zip(income, age)])
    out = tmp_path / "out.csv"
    assert main("microaggregate", src, "--k", 3, "--variables", "income,age", "-q", "-o", out) == 0, \
        capsys.readouterr().err
    lines_in, lines_out = src.read_text().splitlines(), out.read_text().splitlines()
    assert lines_out[0] == lines_in[0] == "income,age,code,"
    assert [line.split(",", 2)[2] for line in lines_out[1:]] == [line.split(",", 2)[2] for line in lines_in[1:]]
    err = capsys.readouterr().err
    assert "Unnamed" not in err and "error" not in err, err
    assert main("microaggregate", src, "--k", 3, "-q", "-o", out) == 0, capsys.readouterr().err  # default selection
    assert out.read_text().splitlines()[0] == "income,age,code,"


def test_e_a_column_with_no_name_is_named_by_its_position(tmp_path, capsys):
    income, age = _numbers()
    src = _write(tmp_path / "in.csv", "id,,spend,age",
                 [f"{i},{a % 1000},{a},{b}" for i, (a, b) in enumerate(zip(income, age))])
    out = tmp_path / "out.csv"
    assert main("microaggregate", src, "--k", 3, "-q", "-o", out) == 0
    err = capsys.readouterr().err
    assert "Unnamed" not in err and "column 2 (no name) holds numbers and is released unmasked" in err, err
    written = pd.read_csv(out, dtype=str, keep_default_na=False)
    original = pd.read_csv(src, dtype=str, keep_default_na=False)
    assert out.read_text().splitlines()[0] == "id,,spend,age"
    assert written.iloc[:, 1].tolist() == original.iloc[:, 1].tolist()  # byte for byte
    assert main("microaggregate", src, "--k", 3, "-q", "--variables", "spend,age", "-o", out) == 0
    err = capsys.readouterr().err
    assert "column 2 (no name) (numeric, not in --variables)" in err and "''" not in err, err
    src.write_text("id,,spend,\n1,2,3,4\n")
    assert main("microaggregate", src, "--k", 3, "-q", "-o", out) == 2
    refused(capsys, "2 columns with no name", "columns 2, 4")


@pytest.mark.parametrize("cell, option, needle", [
    ("inf", [], "column 'income' has an infinite value ('inf') at row 9 of the file (the header is row 1)"),
    ("n/a", ["--missing", "error"],
     "column 'income' has a missing value ('n/a') at row 9 of the file (the header is row 1); --missing error"),
    ("", ["--missing", "error"], "column 'income' has a missing value (an empty cell) at row 9 of the file"),
    ("?", [], "the cell '?' at row 9 of the file (the header is row 1)"),
])
def test_e_every_message_names_the_row_of_the_file(tmp_path, capsys, cell, option, needle):
    income, age = _numbers()
    rows = [f"{a},{b}" for a, b in zip(income, age)]
    rows[7] = f"{cell},{age[7]}"
    src = _write(tmp_path / "in.csv", "income,age", rows)
    assert main("microaggregate", src, "--k", 3, "-q", "--method", "mdav", *option, "-o", tmp_path / "o.csv") == 2
    refused(capsys, needle)
    assert not (tmp_path / "o.csv").exists()


def test_e_weights_and_big_integers_name_the_row_of_the_file(tmp_path, capsys):
    income, age = _numbers()
    src = _write(tmp_path / "in.csv", "income,age,w", [f"{a},{b},{0 if i == 7 else 1}"
                                                       for i, (a, b) in enumerate(zip(income, age))])
    assert main("microaggregate", src, "--k", 3, "-q", "--variables", "income,age", "--weights", "w") == 2
    refused(capsys, "weight column 'w' has a zero weight ('0') at row 9 of the file (the header is row 1)")
    src = _write(tmp_path / "in.csv", "income,age", [f"{9007199254740993 if i == 7 else a},{b}"
                                                     for i, (a, b) in enumerate(zip(income, age))])
    assert main("microaggregate", src, "--k", 3, "-q") == 2
    refused(capsys, "the integer 9007199254740993 at row 9 of the file (the header is row 1)")


@pytest.mark.parametrize("args, needle", [
    (["--time-limit", "-5"], "`time_limit` must be None or a number of seconds > 0; got -5."),
    (["--time-limit", "0"], "`time_limit` must be None or a number of seconds > 0; got 0."),
    (["--k", "1"], "`k` must be an integer >= 2; got 1."),
    (["--seed", "-1"], "--seed"),
    (["--trim", "0.7", "--measure", "trim"], "`trim` must be <= 0.5"),
    (["--n-jobs", "-3"], "`n_jobs`"),
    (["--blocks", "many"], "--blocks"),
    (["--option", "gamma=1"], "has no option 'gamma'"),
    (["--variables", "income,income"], "lists column 'income' more than once"),
    (["--sep", ";;"], "--sep must be one character"),
])
def test_e_argument_errors_come_before_the_file_is_read(tmp_path, capsys, monkeypatch, args, needle):
    """The only line printed: no default-variables warning first, the input never opened."""
    src = _write(tmp_path / "in.csv", "id,income,age", [f"{i},{a},{b}" for i, (a, b) in enumerate(zip(*_numbers()))])

    def not_read(*a, **k):
        raise AssertionError("the input was read")

    monkeypatch.setattr(_files, "read_table", not_read)
    argv = ["microaggregate", src, "-o", tmp_path / "o.csv", *args]
    if "--k" not in args:
        argv += ["--k", 3]
    assert main(*argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in error_lines(err)[0], err


def test_e_a_header_only_file_has_no_records(tmp_path, capsys):
    src = tmp_path / "in.csv"
    src.write_text("income,age\n")
    assert main("microaggregate", src, "--k", 3, "-q") == 2
    refused(capsys, "has no records (only a header row)")


@pytest.mark.parametrize("names, hint", [
    ("income,nope", None),  # 'income' is named already; 'age' is too far from 'nope'
    ("incme,age", "Did you mean 'income'?"),
    ("income,AGE", "Did you mean 'age'?"),
    ("income,zz", None),
])
def test_e_an_unknown_column_suggests_only_a_near_name_not_given(tmp_path, capsys, monkeypatch, names, hint):
    src = _write(tmp_path / "in.csv", "income,age", [f"{a},{b}" for a, b in zip(*_numbers())])
    real = _files.read_csv
    rows_read = []
    monkeypatch.setattr(_files, "read_csv", lambda *a, **k: rows_read.append(k.get("nrows")) or real(*a, **k))
    assert main("microaggregate", src, "--k", 3, "-q", "--variables", names) == 2
    line = refused(capsys, "unknown column", "the input file has columns: income, age")
    assert (hint in line) if hint else ("Did you mean" not in line), line
    assert rows_read == [1], rows_read  # the header alone was read


def test_e_report_quiet_still_says_why_it_exits_3(tmp_path, capsys):
    src = _write(tmp_path / "in.csv", "income,age", [f"{a},{b}" for a, b in zip(*_numbers())])
    masked = tmp_path / "m.csv"
    assert main("microaggregate", src, "--k", 3, "-q", "--method", "mdav", "-o", masked) == 0
    capsys.readouterr()
    assert main("report", src, masked, "--k", 5, "-q") == 3
    captured = capsys.readouterr()
    assert captured.out == ""  # --quiet: no report
    lines = error_lines(captured.err)
    assert len(lines) == 1 and f"{str(masked)!r} is not 5-anonymous" in lines[0], captured.err
    assert "do not release this file" in lines[0]
