"""Columns passed through unmasked are named when they could identify or single out records,
and the default variables leave identifiers out and name category codes and numbering.

* text unique (or nearly) per record is identifier-like; text with few values, booleans and
  binary or class-label codes are categorical key variables; constant columns are never named;
* integer identification numbers (``ssn``, ``zip``, ``resp_no``) are left out by name;
  integers that may be numbering (equally spaced, evenly spread over a huge range) stay in
  and are named; measurements (skewed integer incomes) are neither;
* binary and class-label columns stay in the default variables (the release stays
  k-anonymous with them) and the warning says what their group means are;
* ``report(result, original)`` names the same columns as the command line.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

import pysdcmicro
from pysdcmicro import cli
from pysdcmicro._columns import (category_codes, column_entry, doubtful_identifier, identifier_reason,
                                 unmasked_columns)
from pysdcmicro._validation import IdentifierColumnWarning

N = 300


def main(*args) -> int:
    return cli.main([str(a) for a in args])


def _default(frame: pd.DataFrame, **kwargs):
    """microaggregate with default variables; the result and the default-variables warning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = pysdcmicro.microaggregate(frame, 3, method="mdav", **kwargs)
    notes = [str(w.message) for w in caught if issubclass(w.category, IdentifierColumnWarning)]
    assert len(notes) <= 1, notes
    return res, (notes[0] if notes else "")


def _by_column(entries: list[dict]) -> dict:
    return {e["column"]: e for e in entries}


@pytest.fixture
def survey():
    rng = np.random.default_rng(0)
    return pd.DataFrame({
        "customer": [f"C{1000 + i:05d}" for i in range(N)],
        "income": rng.lognormal(10, 1, N).round(0),  # integer-valued, different on every record: a measurement
        "age": rng.integers(18, 90, N),
        "OWNRENT": rng.integers(0, 2, N),
        "region": rng.choice(["north", "south", "east"], N),
        "YEAR": np.full(N, 96),
    })


# -- 1. text identifiers and categories are named ------------------------------------------

def test_report_names_every_column_passed_through_with_its_reason():
    df = pysdcmicro.datasets.make_demo_data()
    res = pysdcmicro.microaggregate(df, 3, variables=["employees", "turnover", "wages"], method="mdav")
    rep = pysdcmicro.report(res, df)
    got = _by_column(rep.unmasked)
    assert set(got) == {"firm_id", "region", "sector", "assets", "profit"}
    assert got["firm_id"]["reason"] == \
        "identifier-like text, unique on 600 of 600 records: remove it before release"
    for col in ("region", "sector"):
        assert got[col]["reason"].startswith(
            "categorical: a possible key variable that microaggregation does not protect (recode or suppress it; "
            "see sdcMicro's categorical methods)")
        assert got[col]["option"] is None  # text cannot be microaggregated
    assert got["assets"] == {"column": "assets", "reason": "numeric, not in `variables`", "option": "variables"}
    order = [e["column"] for e in rep.unmasked]  # most dangerous first
    assert order[0] == "firm_id" and set(order[-2:]) == {"region", "sector"}
    assert rep.to_dict()["unmasked"] == rep.unmasked
    assert any(item["key"] == "unmasked" for item in rep.headline())


def test_constant_strata_and_weight_columns_are_never_named(survey):
    survey = survey.assign(w=1.0 + np.arange(N) % 3, stratum=np.where(np.arange(N) % 2, "a", "b"))
    res = pysdcmicro.microaggregate(survey, 3, method="mdav", variables=["income", "age"], strata="stratum",
                                    weights="w")
    got = _by_column(pysdcmicro.report(res, survey).unmasked)
    assert "YEAR" not in got and "stratum" not in got and "w" not in got
    assert got["customer"]["reason"].startswith("identifier-like text, unique on 300 of 300 records")
    assert got["OWNRENT"]["reason"].startswith("categorical: a possible key variable")
    assert "two values, 0 and 1" in got["OWNRENT"]["reason"] and got["OWNRENT"]["option"] == "variables"


def test_report_on_an_array_names_columns_by_position():
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.normal(size=40), rng.normal(size=40), rng.normal(size=40), np.full(40, 2.0)])
    res = pysdcmicro.microaggregate(X, 3, method="mdav", variables=[0, 1])
    assert pysdcmicro.report(res, X).unmasked == [{"column": 2, "reason": "numeric, not in `variables`",
                                                   "option": "variables"}]


def test_default_variables_warning_names_the_text_columns_passed_through():
    df = pysdcmicro.datasets.make_demo_data()
    res, note = _default(df)
    assert res.variables == ["employees", "turnover", "wages", "assets", "profit"]
    assert "Passed through unmasked: 'firm_id' (identifier-like text, unique on 600 of 600 records: remove it " \
           "before release)" in note
    assert "'sector' (5 values), 'region' (4 values) are categorical: possible key variables" in note
    res, note = _default(df, strata="region")  # a stratum column: the release is k-anonymous with it
    assert "'region'" not in note and "'firm_id'" in note


def test_the_list_in_the_warning_is_capped():
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"x": rng.normal(size=60), "y": rng.normal(size=60)})
    for j in range(12):
        df[f"cat{j:02d}"] = rng.choice(["a", "b", "c"], 60)
    _, note = _default(df)
    assert "and 4 more are categorical" in note and "'cat11'" not in note


def test_identifier_like_text_by_name_with_repeated_values():
    # EIA's UTILNAME: one name per utility, 12 monthly records each
    names = pd.Series(np.repeat([f"Utility {i} Co" for i in range(30)], 12))
    entry = column_entry(names, "UTILNAME")
    assert entry.kind == "identifier" and entry.reason.startswith("identifier-like text (a name), 30 distinct")
    assert column_entry(names, "utility_group").kind == "categorical"  # not named like a name: a category
    assert column_entry(pd.Series(["x"] * 10), "const") is None


def test_cli_names_text_columns_and_not_a_constant_column(tmp_path, capsys):
    rng = np.random.default_rng(3)
    n = 360  # 30 utilities, 12 monthly records each
    frame = pd.DataFrame({
        "UTILITYID": np.repeat(np.arange(n // 12) * 17 + 3, 12), "UTILNAME": np.repeat([f"U{i} Co" for i in
                                                                                        range(n // 12)], 12),
        "STATE": rng.choice(["AK", "AL", "AZ", "CA"], n), "YEAR": np.full(n, 96),
        "RES": rng.lognormal(5, 1, n).round(1), "COM": rng.lognormal(5, 1, n).round(1),
    })
    src, out, rep = tmp_path / "in.csv", tmp_path / "out.csv", tmp_path / "rep.json"
    frame.to_csv(src, index=False)
    assert main("microaggregate", src, "--k", 3, "--method", "mdav", "-q", "-o", out, "--report", rep) == 0
    err = capsys.readouterr().err
    warning = [line for line in err.splitlines() if line.startswith("pysdcmicro: warning: default variables")]
    assert len(warning) == 1 and "'UTILNAME' (identifier-like text" in warning[0] and "'STATE' (4 values)" in warning[0]
    unmasked = _by_column(json.loads(rep.read_text())["unmasked"])
    assert set(unmasked) == {"UTILITYID", "UTILNAME", "STATE"}  # YEAR is constant: it singles out nobody
    assert unmasked["STATE"]["option"] is None and unmasked["UTILITYID"]["option"] == "--variables"
    # with --variables the command's own warning names the text columns too
    assert main("microaggregate", src, "--k", 3, "--method", "mdav", "-q", "--variables", "RES,COM", "-o", out) == 0
    err = capsys.readouterr().err
    warning = [line for line in err.splitlines() if "released unmasked" in line]
    assert len(warning) == 1 and "'UTILNAME'" in warning[0] and "'STATE'" in warning[0]
    assert "'YEAR'" not in warning[0]
    # and so does the report of a file masked elsewhere
    assert main("report", src, out, "--k", 3, "--json", rep) == 0
    capsys.readouterr()
    assert {"UTILNAME", "STATE", "UTILITYID"} <= set(_by_column(json.loads(rep.read_text())["unmasked"]))


# -- 2. integer identification numbers ----------------------------------------------------

def test_identification_numbers_are_left_out_by_name():
    rng = np.random.default_rng(4)
    ssn = rng.choice(np.arange(100_000_000, 999_999_999), N, replace=False)
    for name in ("ssn", "SSN", "zip", "ZIPCODE", "postal_code", "PostCode", "phone", "respondent", "resp_no",
                 "caseNr", "account_number", "employee_number"):
        assert identifier_reason(ssn, name) is not None, name
    zips = rng.integers(10_000, 99_999, N)  # repeated values: only the name says what it is
    assert identifier_reason(zips, "zip") == "integer values and the name of an identification number"
    for name in ("account_balance", "number_of_children", "salary", "phone_minutes"):
        assert identifier_reason(rng.integers(0, 5000, N), name) is None, name
    assert identifier_reason(rng.normal(size=N), "ssn") is None  # not integers: not an identification number


def test_ssn_respondent_no_and_zip_are_never_averaged():
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"ssn": rng.choice(np.arange(100_000_000, 999_999_999), N, replace=False),
                       "respondent_no": 987654 + 7 * np.arange(N), "zip": rng.integers(10_000, 99_999, N),
                       "income": rng.lognormal(10, 1, N).round(0), "age": rng.integers(18, 90, N)})
    res, note = _default(df)
    assert res.variables == ["income", "age"]
    for col in ("ssn", "respondent_no", "zip"):
        assert f"'{col}' (integer values and the name of an identification number)" in note
        pd.testing.assert_series_equal(res.data[col], df[col])


def test_numbering_without_a_name_is_kept_and_named():
    rng = np.random.default_rng(6)
    spaced = 987654 + 7 * np.arange(N)
    issued = rng.choice(np.arange(100_000_000, 999_999_999), N, replace=False)
    income = rng.lognormal(10, 1, N).round(0)  # unique integers over a wide range, but skewed
    assert len(np.unique(income)) == N
    assert "in steps of 7" in doubtful_identifier(spaced, "x")
    assert "spread evenly" in doubtful_identifier(issued, "x")
    assert doubtful_identifier(income, "income") is None
    assert doubtful_identifier(np.arange(N) * 1000.0 + 7, "salary") is not None  # kept, but named
    assert identifier_reason(np.arange(N) * 1000.0 + 7, "salary") is None
    assert doubtful_identifier(np.repeat(issued[: N // 2], 2), "x") is None  # shared values: not numbering
    df = pd.DataFrame({"a": spaced, "b": issued, "income": income, "age": rng.integers(18, 90, N)})
    res, note = _default(df)
    assert res.variables == ["a", "b", "income", "age"]  # when unsure, keep the column ...
    assert "'a' (integer values, a different one on every record, in steps of 7)" in note  # ... and name it
    assert "'b' (integer values, a different one on every record, spread evenly" in note
    assert "may be identification numbers rather than measurements" in note and "'income' (" not in note


@pytest.mark.parametrize("name", ["tarragona", "census", "eia"])
def test_casc_measurements_raise_no_new_note(name, casc):
    frame = casc(name)
    numeric = [c for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c])]
    _, note = _default(frame[numeric])
    assert "look categorical" not in note and "identification numbers" not in note


# -- 3. binary and class-label columns -----------------------------------------------------

def test_binary_and_class_labels_stay_in_and_are_named(survey):
    survey = survey.assign(target=np.arange(N) % 3)
    assert category_codes(survey["OWNRENT"].to_numpy(), "OWNRENT") == "two values, 0 and 1"
    assert category_codes(survey["target"].to_numpy(), "target") == "3 integer values (0, 1, 2) and a class-label name"
    assert category_codes(survey["target"].to_numpy(), "visits") is None  # a small count keeps its place
    assert category_codes(survey["income"].to_numpy(), "income") is None
    res, note = _default(survey.drop(columns=["customer", "region"]))
    assert res.variables == ["income", "age", "OWNRENT", "target"]  # released as group means: k-anonymous
    assert "'OWNRENT' (two values, 0 and 1), 'target' (3 integer values (0, 1, 2) and a class-label name) look " \
           "categorical" in note
    assert "a group mean of category codes is not a category" in note and "`strata` (--strata)" in note
    # passed as a stratum the code stays exact and is not named
    res, note = _default(survey.drop(columns=["customer", "region", "target"]), strata="OWNRENT")
    assert "OWNRENT" not in note and set(res.data["OWNRENT"]) == {0, 1}


def test_a_binary_column_left_out_is_named_as_categorical(survey):
    res = pysdcmicro.microaggregate(survey, 3, method="mdav", variables=["income", "age"])
    got = _by_column(pysdcmicro.report(res, survey).unmasked)
    assert got["OWNRENT"]["reason"].startswith("categorical: a possible key variable")
    bools = survey.assign(OWNRENT=survey["OWNRENT"].astype(bool))
    entries = unmasked_columns(bools, ["income", "age"])
    assert _by_column(entries)["OWNRENT"]["reason"].startswith("categorical: ")


def test_a_label_like_name_on_distinct_numbers_is_not_a_category():
    # codes repeat: six distinct values on six records are measurements, whatever the name
    assert category_codes(np.array([1.0, 2, 3, 5, 6, 7]), "y") is None
    assert category_codes(np.array([1.0, 2, 3, 1, 2, 3]), "y") == "3 integer values (1, 2, 3) and a class-label name"


def test_a_hundred_incomes_are_not_issued_numbers(casc):
    # Census's AGI, PTOTVAL and TAXINC on a random sample of 100 records look evenly spread
    # to a 5 % Kolmogorov-Smirnov test; too few records to tell numbering from incomes
    frame = casc("census")
    rows = np.sort(np.random.default_rng(1).choice(len(frame), 100, replace=False))
    sample = frame.iloc[rows]
    assert [c for c in sample.columns if doubtful_identifier(sample[c].to_numpy(float), c)] == []
