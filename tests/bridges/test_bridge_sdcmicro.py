"""The sdcMicro bridge (``pysdcmicro.bridges.sdcmicro``), marked ``r``.

* Import hygiene and the error paths (R missing, rpy2 missing or not loading, sdcMicro
  missing) run everywhere: they fake the missing piece in a subprocess or a fresh session.
* Conversions need R and rpy2 (CI installs both); they skip with the reason otherwise.
* Everything with an sdcMicroObj needs the CRAN package sdcMicro in R; those tests skip
  with "sdcMicro not installed in R: install.packages('sdcMicro') from CRAN" where it is
  absent. The reference values are sdcMicro's own outputs, computed live by calling
  sdcMicro on the same object or data: the native call is the oracle, nothing is
  hard-coded.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pysdcmicro
from pysdcmicro import InvalidInputError, InvalidTypeError, StratumTooSmallError
from pysdcmicro.bridges import sdcmicro as bridge

from .._helpers import naive_sse, zscore

pytestmark = pytest.mark.r

REPO = Path(__file__).resolve().parents[2]


def _python(code: str, env: dict | None = None) -> subprocess.CompletedProcess:
    full = dict(os.environ)
    full.update(env or {})
    for key in [k for k, v in full.items() if v is None]:
        del full[key]
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=full, cwd=str(REPO), timeout=120)


@pytest.fixture(scope="module")
def r_only():
    """R and rpy2 (no sdcMicro needed); skip with the bridge's own reason otherwise."""
    try:
        return bridge.check_r(sdcmicro=False)
    except bridge.RUnavailableError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def sdc(sdcmicro_r):
    """R, rpy2 and sdcMicro; skip with the bridge's own reason otherwise."""
    _, ro, info = sdcmicro_r
    return ro, info


def _same(ro, a, b, tolerance=1e-9):
    """R's all.equal on two sdcMicroObj (every slot, numbers to a relative tolerance)."""
    out = list(ro.r("function(a, b, tol) all.equal(a, b, tolerance = tol)")(a, b, tolerance))
    return out == [True], out


# --------------------------------------------------------------------------------------
# Import hygiene and error paths (no R needed)
# --------------------------------------------------------------------------------------

@pytest.mark.subprocess
def test_import_pysdcmicro_never_imports_rpy2():
    out = _python("""
        import sys
        import pysdcmicro
        import pysdcmicro.bridges.sdcmicro as b   # the bridge module itself loads rpy2 lazily
        print("rpy2" in sys.modules, any(m.startswith("rpy2") for m in sys.modules), b.__name__)
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False", "pysdcmicro.bridges.sdcmicro"]


def test_bridge_is_a_subpackage_of_pysdcmicro():
    assert Path(bridge.__file__).parent == Path(pysdcmicro.__file__).parent / "bridges"
    assert bridge.__name__ == "pysdcmicro.bridges.sdcmicro"


@pytest.mark.subprocess
def test_r_not_found(tmp_path):
    out = _python("""
        from pysdcmicro.bridges import sdcmicro as b
        try:
            b.load_dataset("Tarragona")
        except ImportError as exc:
            print(type(exc).__name__, "|", exc)
    """, env={"PATH": str(tmp_path), "R_HOME": None})
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("RUnavailableError | R not found:")
    assert "apt-get install r-base-core" in out.stdout
    assert 'pip install "pysdcmicro[r]"' in out.stdout


@pytest.mark.subprocess
def test_rpy2_not_installed(tmp_path):
    out = _python("""
        import sys
        sys.modules["rpy2"] = None          # as if rpy2 were not installed
        from pysdcmicro.bridges import sdcmicro as b
        try:
            b.check_r()
        except ImportError as exc:
            print(exc)
    """, env={"R_HOME": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("rpy2 not importable: ")
    assert 'pip install "pysdcmicro[r]" (rpy2>=3.5.17,<3.6)' in out.stdout


@pytest.mark.subprocess
def test_rpy2_does_not_load_against_r():
    pytest.importorskip("rpy2", reason="rpy2 not installed")
    # rpy2 3.6 on R 4.2 fails while loading libR's symbols; fake that failure.
    out = _python("""
        import importlib.abc, sys
        class Broken(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name == "rpy2.rinterface":
                    raise OSError("/usr/lib/R/lib/libR.so: undefined symbol: R_getVar")
        sys.meta_path.insert(0, Broken())
        from pysdcmicro.bridges import sdcmicro as b
        try:
            b.check_r(sdcmicro=False)
        except ImportError as exc:
            print(exc)
    """)
    if "R not found" in out.stdout:
        pytest.skip("R not found")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("rpy2 not importable: rpy2 3.5")
    assert "OSError: /usr/lib/R/lib/libR.so: undefined symbol: R_getVar" in out.stdout
    assert "rpy2 3.5.17" in out.stdout and "rpy2>=3.5.17,<3.6" in out.stdout


def test_sdcmicro_not_installed_message(r_only):
    session = bridge._Session()          # a fresh session that looks for a package R lacks
    session.fn["has_sdcmicro"] = session.ro.r(
        'function() requireNamespace("sdcMicroNotAPackage", quietly = TRUE)')
    with pytest.raises(bridge.SdcMicroNotInstalledError,
                       match=r"^sdcMicro not installed in R: install\.packages\('sdcMicro'\) from CRAN"):
        session.require_sdcmicro()
    assert issubclass(bridge.SdcMicroNotInstalledError, ImportError)


def test_compare_rejects_unknown_methods_before_starting_r():
    df = pd.DataFrame({"a": np.arange(10.0), "b": np.arange(10.0) ** 2})
    with pytest.raises(InvalidInputError, match=r"unknown sdcMicro method 'mdva'.*Did you mean 'sdcMicro:mdav'"):
        bridge.compare(df, ["a", "b"], 3, methods=["sdcMicro:mdva"])
    with pytest.raises(InvalidInputError, match="mdva"):
        bridge.compare(df, ["a", "b"], 3, methods=["mdva"])
    with pytest.raises(InvalidInputError, match="options are not supported for sdcMicro methods"):
        bridge.compare(df, ["a", "b"], 3, methods=[("sdcMicro:mdav", {"x": 1})])
    with pytest.raises(InvalidInputError, match="`reference` must be one of"):
        bridge.compare(df, ["a", "b"], 3, methods=["mdav"], reference="rmd")


def test_groups_from_masked_merges_only_identical_vectors():
    masked = np.array([[1.0, 2.0], [5.0, 5.0], [1.0, 2.0], [5.0, 5.0 + 1e-12], [1.0, 2.0]])
    assert bridge.groups_from_masked(masked).tolist() == [0, 1, 0, 2, 0]


# --------------------------------------------------------------------------------------
# Conversions (R and rpy2 only)
# --------------------------------------------------------------------------------------

def test_frame_round_trip_through_r(r_only):
    s = bridge._session(sdcmicro=False)
    df = pd.DataFrame({
        "x": [1.5, np.nan, -2.0],
        "i": np.array([1, 2, 3], dtype=np.int64),
        "big": np.array([1, 2**40, -5], dtype=np.int64),      # does not fit R's integers
        "n": pd.array([1, None, 3], dtype="Int64"),
        "s": ["u", None, "w"],
        "f": pd.Categorical(["a", None, "b"]),
        "l": [True, False, True],
    }, index=[10, 20, 30])
    r = s.to_r(df)
    types = list(s.ro.r("function(x) vapply(x, function(v) class(v)[1], '')")(r))
    assert types == ["numeric", "integer", "numeric", "integer", "character", "factor", "logical"]
    back = s.to_py(r)
    assert list(back.index) == [0, 1, 2]
    np.testing.assert_array_equal(back["x"], [1.5, np.nan, -2.0])
    assert back["i"].tolist() == [1, 2, 3]
    assert back["big"].tolist() == [1.0, 2.0**40, -5.0]
    assert back["n"].isna().tolist() == [False, True, False]        # NA, never -2147483648
    assert back["n"].dropna().tolist() == [1.0, 3.0]
    assert back["s"].isna().tolist() == [False, True, False] and back["s"][0] == "u"
    assert isinstance(back["f"].dtype, pd.CategoricalDtype) and back["f"].isna().tolist() == [False, True, False]
    assert back["l"].tolist() == [True, False, True]
    assert df.index.tolist() == [10, 20, 30]                       # input untouched


def test_logical_na_comes_back_missing(r_only):
    s = bridge._session(sdcmicro=False)
    back = s.to_py(s.ro.r("data.frame(l = c(TRUE, NA, FALSE), s = c('a', NA, 'b'))"))
    assert back["l"].isna().tolist() == [False, True, False]
    assert back["l"].dropna().tolist() == [True, False]
    assert back["s"].isna().tolist() == [False, True, False]


def test_not_an_sdcmicroobj(r_only):
    with pytest.raises(InvalidTypeError, match="`obj` must be an sdcMicroObj .*got DataFrame"):
        bridge.from_sdcmicro(pd.DataFrame({"a": [1.0]}))
    with pytest.raises(InvalidTypeError, match="`obj` must be an sdcMicroObj"):
        bridge.microaggregation("sdc", aggr=3)


# --------------------------------------------------------------------------------------
# With sdcMicro
# --------------------------------------------------------------------------------------

def test_load_dataset_matches_the_casc_files(sdc, casc):
    tarragona = bridge.load_dataset("Tarragona")
    assert tarragona.shape == (834, 13)
    expected = casc("tarragona")
    np.testing.assert_array_equal(tarragona[expected.columns].to_numpy(dtype=float), expected.to_numpy(dtype=float))
    census = bridge.load_dataset("CASCrefmicrodata")
    np.testing.assert_array_equal(census[casc("census").columns].to_numpy(dtype=float),
                                  casc("census").to_numpy(dtype=float))
    eia = bridge.load_dataset("EIA")
    assert eia.shape == (4092, 15)
    assert isinstance(eia["STATE"].dtype, pd.CategoricalDtype)
    np.testing.assert_array_equal(eia[casc("eia").columns].to_numpy(dtype=float), casc("eia").to_numpy(dtype=float))


def test_load_dataset_testdata_and_errors(sdc):
    td = bridge.load_dataset("testdata")
    assert len(td) == 4580 and {"urbrur", "expend", "income", "savings", "sampling_weight"} <= set(td.columns)
    with pytest.raises(InvalidInputError, match=r"`name` must be one of sdcMicro's data sets .*Did you mean 'Tarragona'"):
        bridge.load_dataset("tarragona")
    with pytest.raises(InvalidTypeError):
        bridge.load_dataset(3)


def test_to_and_from_sdcmicro_with_roles(sdc):
    td = bridge.load_dataset("testdata").iloc[:600].reset_index(drop=True)
    obj = bridge.to_sdcmicro(td, num_vars=["expend", "income", "savings"],
                             key_vars=["urbrur", "roof", "walls", "sex"], weight_var="sampling_weight",
                             strata_var="relat")
    d = bridge.from_sdcmicro(obj)
    assert d.key_vars == ["urbrur", "roof", "walls", "sex"]
    assert d.num_vars == ["expend", "income", "savings"]
    assert d.weight_var == "sampling_weight" and d.strata_var == ["relat"] and d.hh_id is None
    assert not d.dummy_key and not d.can_undo
    assert d.numeric_risk == 1.0                       # nothing masked yet: every record at risk
    assert d.utility == {"il1": 0.0, "il1s": 0.0, "eigen": 0.0}
    pd.testing.assert_frame_equal(d.original[["expend", "income", "savings"]].astype(float),
                                  td[["expend", "income", "savings"]].astype(float))
    assert d.original["urbrur"].astype(str).tolist() == td["urbrur"].astype(str).tolist()
    pd.testing.assert_frame_equal(d.numeric, td[["expend", "income", "savings"]].astype(float))


def test_purely_numeric_data_gets_a_constant_key(sdc, casc):
    ro, _ = sdc
    df = casc("tarragona")
    obj = bridge.to_sdcmicro(df, num_vars=list(df.columns))
    d = bridge.from_sdcmicro(obj)
    assert d.dummy_key and d.key_vars == [] and bridge.DUMMY_KEY not in d.original.columns
    np.testing.assert_array_equal(d.original.to_numpy(dtype=float), df.to_numpy(dtype=float))
    key = list(ro.r("function(o) levels(o@manipKeyVars[[1]])")(obj))
    assert key == ["all"]
    # The constant key changes neither numeric risk nor utility: the same data with a real
    # (random) key variable gives the same slots after the same microaggregation.
    keyed = df.assign(zone=np.random.default_rng(0).choice(["a", "b", "c"], len(df)))
    obj2 = bridge.to_sdcmicro(keyed, num_vars=list(df.columns), key_vars="zone")
    a = bridge.from_sdcmicro(bridge.microaggregation(obj, aggr=5))
    b = bridge.from_sdcmicro(bridge.microaggregation(obj2, aggr=5))
    assert a.numeric_risk == b.numeric_risk
    assert a.utility == b.utility
    with pytest.raises(InvalidInputError, match="already has a column 'pysdcmicro_key'"):
        bridge.to_sdcmicro(df.assign(pysdcmicro_key=1.0), num_vars=list(df.columns))


def test_to_sdcmicro_errors(sdc):
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [3, 4, 5], "t": ["x", "y", "z"]})
    with pytest.raises(InvalidTypeError, match="column 't' in `num_vars` must be numeric"):
        bridge.to_sdcmicro(df, num_vars=["a", "t"])
    with pytest.raises(InvalidInputError, match="unknown column 'c' in `num_vars`"):
        bridge.to_sdcmicro(df, num_vars=["a", "c"])
    with pytest.raises(InvalidInputError, match="column 'a' is both in `key_vars` and `num_vars`"):
        bridge.to_sdcmicro(df, num_vars=["a"], key_vars=["a"])
    with pytest.raises(InvalidTypeError, match="`frame` must be a pandas DataFrame"):
        bridge.to_sdcmicro(df.to_numpy(), num_vars=["a"])
    with pytest.raises(InvalidInputError, match="`num_vars` must name at least one column"):
        bridge.to_sdcmicro(df, num_vars=[])


CASES = [("tarragona", 3), ("tarragona", 5), ("tarragona", 10), ("census", 3), ("census", 4), ("eia", 3),
         ("eia", 5)]


@pytest.mark.parametrize("name,k", CASES)
def test_our_mdav_equals_sdcmicro_on_casc(sdc, casc, name, k):
    """Through the bridge, our mdav == sdcMicro's: same groups, IL to 1e-9, same object.

    Reference: sdcMicro::microaggregation(obj, method = "mdav", aggr = k), called live on
    the same sdcMicroObj.
    """
    ro, _ = sdc
    df = casc(name)
    cols = list(df.columns)
    obj = bridge.to_sdcmicro(df, num_vars=cols)
    native = ro.r("sdcMicro::microaggregation")(obj, method="mdav", aggr=k)
    ours, res = bridge.microaggregation(obj, aggr=k, method="mdav", return_result=True)
    # Whole objects equal, slot by slot (manipNumVars, risk, utility, prev, set, ...).
    ok, why = _same(ro, native, ours, tolerance=1e-12)
    assert ok, why
    dn, do = bridge.from_sdcmicro(native), bridge.from_sdcmicro(ours)
    # Groups: recovered from the masked values (rows with identical masked vectors).
    g_native = bridge.groups_from_masked(dn.numeric[cols].to_numpy())
    g_ours = bridge.groups_from_masked(do.numeric[cols].to_numpy())
    assert np.array_equal(g_native, g_ours)
    # IL of our groups vs our IL computed on sdcMicro's groups, independently, to 1e-9.
    Z = zscore(df.to_numpy(dtype=float))
    il_native = 100 * naive_sse(Z, g_native) / float(((Z - Z.mean(0)) ** 2).sum())
    assert abs(res.information_loss - il_native) < 1e-9
    # Numeric risk and utility are sdcMicro's own, recomputed on the same groups.
    assert do.numeric_risk == pytest.approx(dn.numeric_risk, rel=1e-12)
    for key in ("il1", "il1s", "eigen"):
        assert do.utility[key] == pytest.approx(dn.utility[key], rel=1e-9), key
    assert do.can_undo and dn.can_undo


def test_groups_differ_only_where_duplicates_land(sdc, casc):
    """EIA has exact duplicate records: sdcMicro's and our raw labels may swap duplicates
    between groups, which changes no released value; the recovered groups are equal."""
    df = casc("eia")
    cols = list(df.columns)
    obj = bridge.to_sdcmicro(df, num_vars=cols)
    ours, res = bridge.microaggregation(obj, aggr=3, return_result=True)
    recovered = bridge.groups_from_masked(bridge.from_sdcmicro(ours).numeric[cols].to_numpy())
    n_dup = int(df.duplicated().sum())
    assert n_dup > 0
    assert recovered.max() + 1 <= res.n_groups          # groups with equal means merge
    assert res.sse == pytest.approx(pysdcmicro.sse(pysdcmicro.standardize(df.to_numpy(float))[0], recovered),
                                    rel=1e-12)


def test_undolast_restores_the_previous_state(sdc, casc):
    ro, _ = sdc
    df = casc("tarragona")
    cols = list(df.columns)
    obj = bridge.to_sdcmicro(df, num_vars=cols)
    first = bridge.microaggregation(obj, variables=cols[:6], aggr=4)
    second = bridge.microaggregation(first, variables=cols[6:], aggr=3)
    undo = ro.r("sdcMicro::undolast")
    assert ro.r("identical")(undo(first), obj)[0]
    # sdcMicro keeps one previous state (options maxUndo = 1): undoing `second` gives
    # `first` with its own previous state dropped, exactly as after native calls (below).
    assert ro.r("function(a, b) identical(a@manipNumVars, b@manipNumVars) && identical(a@risk, b@risk) && "
                "identical(a@utility, b@utility) && is.null(a@prev)")(undo(second), first)[0]
    d1, d2 = bridge.from_sdcmicro(first), bridge.from_sdcmicro(second)
    # only the chosen variables changed, each time
    np.testing.assert_array_equal(d1.numeric[cols[6:]].to_numpy(), df[cols[6:]].to_numpy(dtype=float))
    assert not np.array_equal(d1.numeric[cols[:6]].to_numpy(), df[cols[:6]].to_numpy(dtype=float))
    np.testing.assert_array_equal(d2.numeric[cols[:6]].to_numpy(), d1.numeric[cols[:6]].to_numpy())
    # the same two steps natively give the same object
    native = ro.r("sdcMicro::microaggregation")
    n1 = native(obj, variables=ro.StrVector(cols[:6]), method="mdav", aggr=4)
    n2 = native(n1, variables=ro.StrVector(cols[6:]), method="mdav", aggr=3)
    ok, why = _same(ro, n2, second, tolerance=1e-12)
    assert ok, why
    ok, why = _same(ro, undo(n2), undo(second), tolerance=1e-12)
    assert ok, why


def test_strata_match_sdcmicro(sdc, casc):
    """sdcMicro microaggregates each stratum (slot strataVar) on its own, standardizing it
    on its own; the bridge does the same (strata_scaling="stratum")."""
    ro, _ = sdc
    df = casc("tarragona")
    cols = list(df.columns)
    df["band"] = np.array(["low", "mid", "high"])[pd.qcut(df["SALES"], 3, labels=False)]
    obj = bridge.to_sdcmicro(df, num_vars=cols, strata_var="band")
    native = ro.r("sdcMicro::microaggregation")(obj, method="mdav", aggr=3)
    ours, res = bridge.microaggregation(obj, aggr=3, return_result=True)
    ok, why = _same(ro, native, ours, tolerance=1e-12)
    assert ok, why
    assert res.settings["strata_scaling"] == "stratum" and res.settings["strata"] == ["band"]
    for rows in res.groups:
        assert df["band"].iloc[rows].nunique() == 1
    # whole-data z-scores inside strata group differently from sdcMicro here
    glob = bridge.microaggregation(obj, aggr=3, strata_scaling="global")
    ok, _ = _same(ro, native, glob)
    assert not ok
    # strata_variables given explicitly (sdcMicro ignores this argument for objects)
    plain = bridge.to_sdcmicro(df, num_vars=cols)
    explicit = bridge.microaggregation(plain, aggr=3, strata_variables="band")
    assert list(ro.r("function(a, b) all.equal(a@manipNumVars, b@manipNumVars, tolerance = 1e-12)")(
        explicit, native)) == [True]


def test_bridge_errors(sdc, casc):
    df = casc("tarragona")
    cols = list(df.columns)
    df["band"] = ["tiny"] * 2 + ["big"] * (len(df) - 2)
    obj = bridge.to_sdcmicro(df, num_vars=cols, strata_var="band")
    with pytest.raises(StratumTooSmallError, match="stratum band=tiny has 2 records; every stratum needs at least k=3"):
        bridge.microaggregation(obj, aggr=3)
    with pytest.raises(InvalidInputError, match="unknown column 'SALE' in `variables`.*Did you mean 'SALES'"):
        bridge.microaggregation(obj, variables=["SALE"], aggr=3)
    with pytest.raises(InvalidInputError, match="`aggr` must be an integer >= 2; got 1"):
        bridge.microaggregation(obj, aggr=1)
    with pytest.raises(InvalidInputError, match="mdva"):
        bridge.microaggregation(obj, aggr=3, method="mdva")
    with pytest.raises(InvalidInputError, match="both in `variables` and in `strata_variables`"):
        bridge.microaggregation(obj, variables=["SALES", "TREASURY"], strata_variables=["SALES"], aggr=3)
    # missing values: kept by default (tests/test_agency.py); refused on request
    holes = df.drop(columns="band").astype(float)
    holes.iloc[5, 2] = np.nan
    obj_na = bridge.to_sdcmicro(holes, num_vars=cols)
    with pytest.raises(InvalidInputError, match="column 'TREASURY' has a missing value \\(NaN\\) at row 5.*impute"):
        bridge.microaggregation(obj_na, aggr=3, missing="error")


def test_other_methods_and_options_pass_through(sdc, casc):
    df = casc("census")
    cols = list(df.columns)
    obj = bridge.to_sdcmicro(df, num_vars=cols)

    def by_first_column(Z, k, ctx):   # a callable core: sorted runs of k along column 0
        order = np.argsort(Z[:, 0], kind="stable")
        labels = np.empty(len(Z), dtype=np.int64)
        labels[order] = np.minimum(np.arange(len(Z)) // k, len(Z) // k - 1)
        return labels

    ours, res = bridge.microaggregation(obj, aggr=4, method=by_first_column, return_result=True)
    d = bridge.from_sdcmicro(ours)
    assert res.method == "by_first_column"
    np.testing.assert_allclose(d.numeric[cols].to_numpy(), res.data[cols].to_numpy(), rtol=0, atol=0)
    assert d.numeric_risk is not None and d.utility["il1s"] > 0
    with pytest.raises(InvalidInputError, match="method 'mdav' has no option 'not_an_option'"):
        bridge.microaggregation(obj, aggr=4, method="mdav", not_an_option=1)


def test_compare_table(sdc, casc):
    df = casc("tarragona")
    cols = list(df.columns)
    table = bridge.compare(df, cols, 3, methods=["sdcMicro:mdav", "mdav", "sdcMicro:pca", "sdcMicro:onedims"])
    assert list(table.index) == ["sdcMicro:mdav", "mdav", "sdcMicro:pca", "sdcMicro:onedims"]
    assert list(table.columns) == ["IL", "seconds", "n_groups", "min_group_size", "max_group_size",
                                   "identical_groups_to", "same_groups_as_reference", "il_basis", "message"]
    ours = pysdcmicro.microaggregate(df, 3, variables=cols, method="mdav")
    assert abs(table.loc["sdcMicro:mdav", "IL"] - ours.information_loss) < 1e-9
    assert abs(table.loc["mdav", "IL"] - ours.information_loss) < 1e-9
    assert table.loc["mdav", "identical_groups_to"] == "sdcMicro:mdav"
    assert table.loc["sdcMicro:mdav", "identical_groups_to"] == "mdav"
    assert bool(table.loc["mdav", "same_groups_as_reference"])
    assert table.loc["mdav", "n_groups"] == ours.n_groups == 278
    # pca is a partition with group means: its IL is computed on its groups, and is worse
    assert table.loc["sdcMicro:pca", "il_basis"] == "groups"
    assert table.loc["sdcMicro:pca", "min_group_size"] >= 3
    assert table.loc["sdcMicro:pca", "IL"] > table.loc["mdav", "IL"]
    assert not table.loc["sdcMicro:pca", "same_groups_as_reference"]
    # onedims aggregates each variable on its own: no partition, IL of the masked values
    assert table.loc["sdcMicro:onedims", "il_basis"] == "masked values"
    assert (table["seconds"] > 0).all()
    assert table.attrs["versions"]["sdcMicro"] == sdc[1]["sdcMicro"]


def test_compare_reports_sdcmicro_failures(sdc, casc):
    # rmd needs a regular covariance matrix; Census's is singular, so sdcMicro stops.
    table = bridge.compare(casc("census"), list(casc("census").columns), 3, methods=["mdav", "sdcMicro:rmd"])
    assert table.loc["sdcMicro:rmd", "message"].startswith("R error: ")
    assert "singular" in table.loc["sdcMicro:rmd", "message"]
    assert np.isnan(table.loc["sdcMicro:rmd", "IL"])
    assert table.loc["mdav", "message"] == ""


def test_minus_999_is_missing_for_sdcmicro_mdav(sdc):
    """Documented caveat: sdcMicro's mdav treats the value -999 as missing; we do not."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(0, 500, size=(30, 2)).round(), columns=["a", "b"])
    X.loc[4, "a"] = -998.0
    table = bridge.compare(X, ["a", "b"], 3, methods=["sdcMicro:mdav", "mdav"])
    assert table.loc["mdav", "identical_groups_to"] == "sdcMicro:mdav"
    X.loc[4, "a"] = -999.0
    table = bridge.compare(X, ["a", "b"], 3, methods=["sdcMicro:mdav", "mdav"])
    assert table.loc["mdav", "identical_groups_to"] == ""
    assert table.loc["mdav", "IL"] < table.loc["sdcMicro:mdav", "IL"]


@pytest.mark.subprocess
def test_starting_r_leaves_child_processes_working(r_only):
    # rpy2 puts R's library path into LD_LIBRARY_PATH when it starts R; a Python started
    # afterwards (process pools, Dask workers) could then load another libpython and fail.
    # The bridge restores the variable once R is up.
    before = os.environ.get("LD_LIBRARY_PATH")
    bridge.check_r(sdcmicro=False)
    assert os.environ.get("LD_LIBRARY_PATH") == before
    proc = subprocess.run([sys.executable, "-c", "import ssl, multiprocessing; print('ok')"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def test_sorting_methods_weight_by_the_objects_weightvar_as_sdcmicro(sdc):
    ro, _ = sdc
    td = bridge.load_dataset("testdata").iloc[:300].reset_index(drop=True)
    td["sampling_weight"] = np.random.default_rng(5).uniform(50, 500, len(td)).round(1)
    obj = bridge.to_sdcmicro(td, num_vars=["expend", "income", "savings"], key_vars=["urbrur", "roof"],
                             weight_var="sampling_weight")
    micro = ro.r("function(o, m, ms) sdcMicro::microaggregation(o, aggr = 3, method = m, measure = ms)")
    for measure in ("mean", "median"):
        theirs = bridge.from_sdcmicro(micro(obj, "simple", measure)).numeric
        ours = bridge.from_sdcmicro(bridge.microaggregation(obj, aggr=3, method="simple", measure=measure)).numeric
        np.testing.assert_allclose(ours.to_numpy(), theirs.to_numpy(), rtol=1e-12)
        plain = bridge.from_sdcmicro(bridge.microaggregation(obj, aggr=3, method="simple", measure=measure,
                                                             weights=False)).numeric
        assert not np.allclose(plain.to_numpy(), theirs.to_numpy())  # the weights matter here
    # sdcMicro's mdav is unweighted whatever weightVar says, and so is ours by default
    theirs = bridge.from_sdcmicro(micro(obj, "mdav", "mean")).numeric
    ours = bridge.from_sdcmicro(bridge.microaggregation(obj, aggr=3, method="mdav")).numeric
    np.testing.assert_allclose(ours.to_numpy(), theirs.to_numpy(), rtol=1e-12)
