"""Every bad-input rule raises the documented error type with a message naming the column
or parameter, the rule and the value (STYLE item 8)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pysdcmicro
from pysdcmicro import InvalidInputError, InvalidTypeError, StratumTooSmallError, microaggregate


@pytest.fixture
def df():
    return pd.DataFrame({
        "id": ["a", "b", "c", "d", "e", "f"],
        "x": [1.0, 2.0, 3.0, 10.0, 11.0, 12.0],
        "y": [5, 6, 7, 1, 2, 3],
        "flag": [True, False, True, False, True, False],
    })


@pytest.mark.parametrize("value,exc,text", [
    (np.nan, InvalidInputError, "column 'x' has a missing value (NaN) at row 2"),
    (np.inf, InvalidInputError, "column 'x' has an infinite value (inf) at row 2"),
    (-np.inf, InvalidInputError, "column 'x' has an infinite value (-inf) at row 2"),
])
def test_missing_and_infinite(df, value, exc, text):
    df.loc[2, "x"] = value
    with pytest.raises(exc) as info:
        microaggregate(df, 3, variables=["x", "y"], missing="error")
    assert text in str(info.value)
    assert "impute or drop" in str(info.value)


def test_none_in_object_column_is_named(df):
    df["z"] = [1.0, None, 3.0, 4.0, 5.0, 6.0]
    with pytest.raises(InvalidInputError, match=r"column 'z' has a missing value \(NaN\) at row 1"):
        microaggregate(df, 3, variables=["z"], missing="error")


def test_nullable_integer_missing(df):
    df["n"] = pd.array([1, 2, None, 4, 5, 6], dtype="Int64")
    with pytest.raises(InvalidInputError, match=r"column 'n' has a missing value \(NaN\) at row 2"):
        microaggregate(df, 3, variables=["n"], missing="error")


def test_missing_value_with_custom_index_names_the_label(df):
    df.index = [f"r{i}" for i in range(6)]
    df.loc["r4", "y"] = np.nan
    with pytest.raises(InvalidInputError, match=r"column 'y' .* at row 4 \(index 'r4'\)"):
        microaggregate(df, 3, variables=["x", "y"], missing="error")


def test_non_numeric_column(df):
    with pytest.raises(InvalidTypeError, match=r"column 'id' must be numeric .* got dtype .*e\.g\. value 'a'"):
        microaggregate(df, 3, variables=["id", "x"])


def test_boolean_column_is_not_numeric(df):
    with pytest.raises(InvalidTypeError, match="column 'flag' must be numeric"):
        microaggregate(df, 3, variables=["flag"])


def test_default_variables_skip_text_and_bool(df):
    res = microaggregate(df, 3)
    assert res.variables == ["x", "y"]
    assert res.data["flag"].tolist() == df["flag"].tolist()


def test_unknown_column(df):
    with pytest.raises(InvalidInputError, match=r"unknown column 'xx' in `variables`; the data has columns: id, x, y, flag\. Did you mean 'x'\?"):
        microaggregate(df, 3, variables=["xx"])


def test_duplicate_variable(df):
    with pytest.raises(InvalidInputError, match="`variables` lists column 'x' more than once"):
        microaggregate(df, 3, variables=["x", "x"])


@pytest.mark.parametrize("k,exc,text", [
    (1, InvalidInputError, "`k` must be an integer >= 2; got 1."),
    (0, InvalidInputError, "`k` must be an integer >= 2; got 0."),
    (2.5, InvalidTypeError, "`k` must be an integer >= 2; got 2.5."),
    ("3", InvalidTypeError, "`k` must be an integer >= 2; got '3'."),
    (True, InvalidTypeError, "`k` must be an integer >= 2; got True."),
    (7, InvalidInputError, "`k` must be <= the number of records (6); got 7."),
])
def test_bad_k(df, k, exc, text):
    with pytest.raises(exc) as info:
        microaggregate(df, k)
    assert str(info.value) == text


def test_numpy_integer_k_is_fine(df):
    assert microaggregate(df, np.int64(3)).k == 3


def test_empty_data():
    with pytest.raises(InvalidInputError, match="`frame` must have at least one record; got 0 rows."):
        microaggregate(pd.DataFrame({"x": []}), 2)
    with pytest.raises(InvalidInputError, match="`frame` must have at least one column; got 0 columns."):
        microaggregate(pd.DataFrame(index=range(5)), 2)
    with pytest.raises(InvalidInputError, match="got 0 rows"):
        microaggregate(np.empty((0, 3)), 2)


def test_no_numeric_column():
    with pytest.raises(InvalidInputError, match="`frame` has no numeric column to microaggregate"):
        microaggregate(pd.DataFrame({"s": list("abcd")}), 2)


def test_constant_column_warns_and_all_constant_is_an_error(df):
    df["c"] = 4.0
    with pytest.warns(pysdcmicro.ConstantColumnWarning, match=r"column 'c' is constant \(value 4\): it is left unchanged and contributes nothing to SSE or SST"):
        res = microaggregate(df, 3, variables=["x", "c"])
    assert res.data["c"].tolist() == [4.0] * 6
    assert np.isfinite(res.information_loss)
    with pytest.raises(InvalidInputError, match=r"every chosen variable is constant \(c\); SST is 0"):
        microaggregate(df, 3, variables=["c"])


def test_unknown_method_and_option(df):
    with pytest.raises(InvalidInputError, match=r"unknown method 'mdv'; choose one of: .*mdav.* Did you mean 'mdav'\?"):
        microaggregate(df, 3, method="mdv")
    with pytest.raises(InvalidInputError, match=r"method 'mdav' has no option 'gamma'"):
        microaggregate(df, 3, method="mdav", gamma=0.2)
    with pytest.raises(InvalidTypeError, match="`method` must be a method name or a callable; got 3"):
        microaggregate(df, 3, method=3)


def test_unknown_improvement(df):
    with pytest.raises(InvalidInputError, match=r"unknown improvement 'nope'"):
        microaggregate(df, 3, improve="nope")


@pytest.mark.parametrize("bad,exc", [(0, InvalidInputError), (-1.5, InvalidInputError), ("10", InvalidTypeError),
                                      (float("nan"), InvalidTypeError)])
def test_bad_time_limit(df, bad, exc):
    with pytest.raises(exc, match="`time_limit` must be None or a number of seconds > 0"):
        microaggregate(df, 3, time_limit=bad)


def test_bad_scaling_and_frame_types(df):
    with pytest.raises(InvalidInputError, match=r"`scaling` must be one of 'standardize', 'none'; got 'zscore'"):
        microaggregate(df, 3, scaling="zscore")
    with pytest.raises(InvalidTypeError, match="`frame` must be a pandas DataFrame or a 2-D numeric array; got Series"):
        microaggregate(df["x"], 3)
    with pytest.raises(InvalidInputError, match=r"`frame` must be 2-D .* got an array of shape \(6,\)"):
        microaggregate(np.arange(6.0), 3)
    with pytest.raises(InvalidTypeError, match="`frame` must hold real numbers; got an array of dtype <U1"):
        microaggregate(np.array([["a", "b"], ["c", "d"]]), 2)


def test_strata_errors(df):
    df["region"] = ["n", "n", "n", "s", "s", "s"]
    df.loc[5, "region"] = "e"
    with pytest.raises(StratumTooSmallError, match=r"stratum region=e has 1 record; every stratum needs at least k=2"):
        microaggregate(df, 2, variables=["x", "y"], strata=["region"])
    with pytest.raises(InvalidInputError, match="column 'region' is both in `variables` and in `strata`"):
        microaggregate(df, 2, variables=["x", "region"], strata="region")
    df.loc[0, "region"] = None
    with pytest.raises(InvalidInputError, match=r"stratum column 'region' has a missing value at row 0"):
        microaggregate(df, 2, variables=["x", "y"], strata="region")


def test_errors_are_builtin_subclasses():
    assert issubclass(InvalidInputError, ValueError)
    assert issubclass(InvalidTypeError, TypeError)
    assert issubclass(StratumTooSmallError, ValueError)


def test_input_frame_never_mutated_even_on_error(df):
    before = df.copy(deep=True)
    df2 = df.copy()
    df2.loc[1, "x"] = np.nan
    before2 = df2.copy(deep=True)
    with pytest.raises(InvalidInputError):
        microaggregate(df2, 3, variables=["x"], missing="error")
    microaggregate(df, 3)
    pd.testing.assert_frame_equal(df, before)
    pd.testing.assert_frame_equal(df2, before2)


def test_a_calendar_field_in_the_default_variables_is_named():
    import warnings

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"MONTH": rng.integers(1, 13, 60), "income": rng.normal(size=60), "sales": rng.normal(size=60)})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pysdcmicro.microaggregate(df, 3, method="mdav")
    text = " ".join(str(w.message) for w in caught)
    assert "'MONTH' looks like a calendar field" in text
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pysdcmicro.microaggregate(df[["income", "sales"]], 3, method="mdav")
    assert not [w for w in caught if "calendar" in str(w.message)]
