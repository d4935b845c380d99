"""Column labels of every kind, MultiIndex columns, zero weights and records that variable
groups leave identifiable, through the API and the report.

* A label pandas accepts but the package cannot name, look up or write (None, NaN, a
  missing MultiIndex level, two equal labels) is one ``InvalidInputError`` line naming the
  column and the rule; every other label (numbers, booleans, timestamps, tuples, mixed) works
  end to end: release, result JSON, report text, JSON and HTML.
* MultiIndex columns are named by tuples in ``variables`` (also as groups), ``strata`` and
  ``weights``; the release keeps the MultiIndex and the other columns untouched.
* A zero weight is refused: a group whose other records weigh 0 would release one record's
  values as its weighted mean.
* With groups of variables, the records whose combination of every group's released values
  is shared by fewer than k records are counted (``info["across_groups"]``), named in a
  ``DisclosureRiskWarning`` and in the report's headline.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

import pysdcmicro
from pysdcmicro import DisclosureRiskWarning, InvalidInputError, microaggregate, report


def _frame(columns, n=30, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(rng.normal(size=(n, len(columns))), columns=columns)


def _quiet(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return microaggregate(*args, **kwargs)


def _end_to_end(frame, res):
    """The release keeps the frame's columns; result and report serialise and print."""
    assert type(res.data.columns) is type(frame.columns)
    assert list(res.data.columns) == list(frame.columns)
    json.dumps(res.to_dict())
    rep = report(res, frame)
    assert rep.k_anonymous
    text = rep.to_text()
    data = json.loads(rep.to_json())
    assert len(data["variables"]) == len(res.variables)
    assert "<html" in rep.to_html(plots=False).lower()
    return text, data


# --------------------------------------------------------------------------------------
# labels
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("columns, shown", [
    (["a", None], "None|nan"),  # (pandas may store it as NaN)
    ([1.5, None], "nan"),  # pandas stores None among floats as NaN
    ([1.5, np.nan], "nan"),
    (pd.MultiIndex.from_tuples([("a", "x"), ("a", np.nan)]), r"\('a', nan\)"),
])
def test_a_missing_label_is_one_line(columns, shown):
    frame = _frame(columns)
    with pytest.raises(InvalidInputError, match=rf"column 1 of `frame` has a missing label, (?:{shown}); every "
                                                r"column needs a label"):
        microaggregate(frame, 3, method="mdav")


def test_an_unhashable_label_is_one_line():
    frame = _frame(["a", "b"])
    frame.columns = pd.Index([[1, 2], "b"], dtype=object)
    with pytest.raises(pysdcmicro.InvalidTypeError, match=r"column 0 of `frame` has the unhashable label \[1, 2\]"):
        microaggregate(frame, 3, method="mdav")


def test_two_equal_labels_are_one_line():
    frame = _frame(["a", "b", "a"])
    with pytest.raises(InvalidInputError, match=r"two columns named 'a', columns 0 and 2; column names must be unique"):
        microaggregate(frame, 3, method="mdav")
    frame = pd.DataFrame(np.zeros((4, 2)), columns=pd.Index([1, "1"], dtype=object))
    frame.columns = pd.Index([1, True], dtype=object)  # equal to Python (True == 1) and to pandas
    with pytest.raises(InvalidInputError, match=r"two columns named True \(1 and True are equal labels\)"):
        microaggregate(frame, 2, method="mdav")


@pytest.mark.parametrize("columns", [
    [1.5, "a", 2],
    [True, "a", 7],
    [pd.Timestamp("2020-01-01"), "a", 2.0],
    [("a", "b"), "c", 3],
])
def test_labels_of_any_other_kind_work_end_to_end(columns):
    frame = _frame(columns)
    res = _quiet(frame, 3, method="mdav", rng=0)
    assert res.variables == list(frame.columns)
    _end_to_end(frame, res)
    res = _quiet(frame, 3, method="mdav", rng=0, variables=[columns[0], columns[2]])
    pd.testing.assert_series_equal(res.data[columns[1]], frame[columns[1]])
    _end_to_end(frame, res)


def test_a_float_label_names_the_weight_column():
    frame = _frame([1.5, "a", 0.5])
    frame[0.5] = np.linspace(1, 3, len(frame))
    res = _quiet(frame, 3, method="mdav", weights=0.5, rng=0)
    assert res.variables == [1.5, "a"] and res.info["weight_column"] == "0.5"  # (named as text, for JSON)
    pd.testing.assert_series_equal(res.data[0.5], frame[0.5])
    _end_to_end(frame, res)


# --------------------------------------------------------------------------------------
# MultiIndex columns
# --------------------------------------------------------------------------------------

def _multi():
    columns = pd.MultiIndex.from_tuples([("inc", "wage"), ("inc", "rent"), ("size", "staff"), ("meta", "w"),
                                         ("meta", "region")])
    frame = _frame(list(range(5)), n=36)
    frame.columns = columns
    frame[("meta", "w")] = np.linspace(1, 4, len(frame))
    frame[("meta", "region")] = np.repeat([1, 2], 18)
    return frame


def test_multiindex_columns_are_named_by_tuples():
    frame = _multi()
    before = frame.copy(deep=True)
    chosen = [("inc", "wage"), ("inc", "rent")]
    res = _quiet(frame, 3, method="mdav", variables=chosen, rng=0)
    assert res.variables == chosen
    assert isinstance(res.data.columns, pd.MultiIndex) and res.data.columns.equals(frame.columns)
    for c in frame.columns:
        if c not in chosen:
            pd.testing.assert_series_equal(res.data[c], frame[c])
    assert pysdcmicro.metrics.is_k_anonymous(res.data[chosen], 3)
    _end_to_end(frame, res)
    pd.testing.assert_frame_equal(frame, before)  # never mutated


def test_one_tuple_names_one_multiindex_column():
    frame = _multi()
    res = _quiet(frame, 3, method="mdav", variables=("inc", "wage"), rng=0)
    assert res.variables == [("inc", "wage")]


def test_multiindex_columns_in_groups_strata_and_weights():
    frame = _multi()
    groups = [[("inc", "wage"), ("inc", "rent")], [("size", "staff")]]
    res = _quiet(frame, 3, method="mdav", variables=groups, weights=("meta", "w"), strata=("meta", "region"),
                 rng=0)
    assert res.settings["variable_groups"] == groups
    assert res.data.columns.equals(frame.columns)
    assert res.info["weight_column"] == str(("meta", "w"))
    for g in res.info["variable_groups"]:
        assert g["k_anonymous"]
    pd.testing.assert_series_equal(res.data[("meta", "region")], frame[("meta", "region")])
    json.dumps(res.to_dict())


def test_multiindex_columns_pass_through_without_variables():
    frame = _multi()
    res = _quiet(frame, 3, method="mdav", rng=0)
    assert res.data.columns.equals(frame.columns)


def test_an_unknown_tuple_is_one_line():
    frame = _multi()
    with pytest.raises(InvalidInputError, match=r"unknown column 'inc' in `variables`"):
        microaggregate(frame, 3, method="mdav", variables=[("inc", "wage"), "inc"])


# --------------------------------------------------------------------------------------
# zero weights
# --------------------------------------------------------------------------------------

def test_a_zero_weight_is_refused_naming_column_row_value_rule_and_fix():
    frame = _frame(["x", "y"], n=12)
    frame["w"] = 1.0
    frame.loc[[4, 5, 9], "w"] = 0.0
    before = frame.copy(deep=True)
    with pytest.raises(InvalidInputError) as info:
        microaggregate(frame, 3, method="mdav", variables=["x", "y"], weights="w")
    message = str(info.value)
    assert "\n" not in message
    for part in ("weight column 'w'", "a zero weight (0) at row 4 and 2 more", "must be a finite number > 0",
                 "own values", "drop the records of weight 0"):
        assert part in message, (part, message)
    pd.testing.assert_frame_equal(frame, before)
    with pytest.raises(InvalidInputError, match=r"`weights` has a zero weight \(0\) at row 4"):
        microaggregate(frame, 3, method="mdav", variables=["x", "y"], weights=frame["w"].to_numpy())


def test_positive_weights_give_weighted_means():
    frame = _frame(["x", "y"], n=12)
    frame["w"] = np.linspace(0.5, 3.0, len(frame))
    res = microaggregate(frame, 3, method="mdav", variables=["x", "y"], weights="w")
    for g in range(res.n_groups):
        rows = res.labels == g
        expected = np.average(frame.loc[rows, "x"], weights=frame.loc[rows, "w"])
        assert np.allclose(res.data.loc[rows, "x"], expected, rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------------------------
# records identifiable across variable groups
# --------------------------------------------------------------------------------------

def _rows_below(data, columns, k):
    counts = data.groupby(columns, sort=False)[columns[0]].transform("size")
    return int((counts < k).sum())


def test_records_unique_across_groups_are_counted_warned_and_in_the_headline():
    frame = _frame(list("abcd"), n=60)
    with pytest.warns(DisclosureRiskWarning) as caught:
        res = microaggregate(frame, 3, method="mdav", variables=[["a", "b"], ["c", "d"]], rng=0)
    expected = _rows_below(res.data, list("abcd"), 3)
    assert expected > 0  # independent columns: the two partitions differ
    across = res.info["across_groups"]
    assert across["records_below_k"] == expected and across["variables"] == list("abcd")
    assert f"{expected} records can be singled out across the groups" in str(caught[0].message)
    assert caught[0].filename == __file__  # shown at the caller's line
    rep = report(res, frame)
    item = next(h for h in rep.headline() if h["key"] == "across_groups")
    assert item["verdict"] == "bad" and item["value"].startswith(f"{expected} record")
    data = json.loads(rep.to_json())
    assert data["across_groups"]["records_below_k"] == expected
    assert any(h["key"] == "across_groups" for h in data["headline"])
    text = " ".join(rep.to_text().split())  # (wrapped at 100 characters)
    assert "across variable groups" in text and "of each variable group on its own: 'a', 'b' | 'c', 'd'" in text
    assert "across variable groups" in rep.to_html(plots=False)


def test_groups_with_the_same_partition_are_k_anonymous_across_them():
    frame = _frame(["a", "b"], n=30)
    frame["c"], frame["d"] = frame["a"] * 2.0, frame["b"] * 2.0  # the same records, the same groups
    with warnings.catch_warnings():
        warnings.simplefilter("error", DisclosureRiskWarning)
        res = microaggregate(frame, 3, method="mdav", variables=[["a", "b"], ["c", "d"]], rng=0)
    assert res.info["across_groups"]["records_below_k"] == 0 == _rows_below(res.data, list("abcd"), 3)
    item = next(h for h in report(res).headline() if h["key"] == "across_groups")
    assert item["verdict"] == "good"


def test_one_group_has_no_across_groups_line():
    frame = _frame(["a", "b"], n=30)
    res = microaggregate(frame, 3, method="mdav", rng=0)
    assert "across_groups" not in res.info
    assert all(h["key"] != "across_groups" for h in report(res).headline())


def test_a_per_variable_method_counts_records_across_columns_without_a_warning():
    """onedims is per-variable by definition (its report says "per variable only"): the
    records its columns single out together are counted, and no warning repeats it."""
    frame = _frame(list("abc"), n=60)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DisclosureRiskWarning)
        res = microaggregate(frame, 3, method="onedims")
    assert res.info["across_groups"]["records_below_k"] == _rows_below(res.data, list("abc"), 3) > 0
