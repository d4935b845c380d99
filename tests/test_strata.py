"""Strata (sdcMicro's ``strata_variables``): ``microaggregate(..., strata=[cols])`` and the
CLI's ``--strata`` microaggregate within each combination of the strata columns' values.

Checked here: groups never cross strata, every group has >= k records, IL is that of the
whole data set (independent SSE on whole-data z-scores), a stratum smaller than k is an
error that names it, ``strata_scaling="stratum"`` is exactly "run the method on each
stratum alone" (what sdcMicro does), and the CLI does the same.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import pysdcmicro
from pysdcmicro import InvalidInputError, StratumTooSmallError, microaggregate
from pysdcmicro.cli import main

from ._helpers import assert_k_partition, naive_sse, naive_sst, partitions_of, zscore
from .method_budgets import budget

METHODS = sorted(pysdcmicro.methods())


def _frame(n=60, seed=0):
    """Three regions of unequal size and spread, interleaved rows, a non-default index."""
    rng = np.random.default_rng(seed)
    region = rng.choice(["north", "south", "east"], size=n, p=[0.5, 0.3, 0.2])
    scale = np.where(region == "north", 1.0, np.where(region == "south", 10.0, 0.1))
    return pd.DataFrame({
        "id": [f"r{i}" for i in range(n)],
        "region": region,
        "size": rng.integers(0, 2, n),
        "income": rng.normal(50, 5, n) * scale,
        "wealth": rng.exponential(3, n) + rng.normal(0, 1, n) * scale,
        "age": rng.integers(18, 90, n).astype(float),
    }, index=pd.Index(np.arange(n) * 10 + 7, name="rec"))


VARS = ["income", "wealth", "age"]


def _assert_within_strata(labels, strata_codes):
    for g in np.unique(labels):
        members = strata_codes[labels == g]
        assert np.all(members == members[0]), f"group {g} crosses strata {sorted(set(members))}"


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("k", [2, 3, 4])
def test_groups_never_cross_strata(method, k):
    df = _frame(seed=k)
    res = microaggregate(df, k, variables=VARS, strata="region", method=method, rng=0, **budget(method))
    assert_k_partition(res.labels, len(df), k)
    _assert_within_strata(res.labels, df["region"].to_numpy())
    # IL is that of the whole data set: SSE / SST on whole-data z-scores, computed naively.
    Z = zscore(df[VARS].to_numpy())
    parts = partitions_of(res)  # one partition, or one per variable (onedims)
    assert res.sse == pytest.approx(sum(naive_sse(Z[:, cols], labels) for cols, labels in parts), rel=1e-9)
    assert res.sst == pytest.approx(naive_sst(Z), rel=1e-12)
    # Released values are group means; other columns (the stratum one included) untouched.
    X, R = df[VARS].to_numpy(), res.data[VARS].to_numpy()
    for cols, labels in parts:
        assert_k_partition(labels, len(df), k)
        _assert_within_strata(labels, df["region"].to_numpy())
        for g in np.unique(labels):
            rows = np.flatnonzero(labels == g)
            np.testing.assert_allclose(R[np.ix_(rows, cols)], np.broadcast_to(X[np.ix_(rows, cols)].mean(axis=0),
                                                                              (len(rows), len(cols))), rtol=1e-12)
    pd.testing.assert_frame_equal(res.data.drop(columns=VARS), df.drop(columns=VARS))
    assert res.data.index.equals(df.index)


def test_several_strata_columns():
    df = _frame(n=90, seed=5)
    res = microaggregate(df, 3, variables=VARS, strata=["region", "size"], method="mdav")
    codes = (df["region"] + "/" + df["size"].astype(str)).to_numpy()
    _assert_within_strata(res.labels, codes)
    assert_k_partition(res.labels, 90, 3)
    names = [item["stratum"] for item in res.info["strata"]]
    assert len(names) == len(set(codes))
    assert "region=east, size=0" in names
    assert sum(item["n"] for item in res.info["strata"]) == 90
    assert res.settings["strata"] == ["region", "size"]


def test_stratum_scaling_is_each_stratum_alone():
    """strata_scaling="stratum" = the method run on each stratum's rows by themselves."""
    df = _frame(n=80, seed=11)
    res = microaggregate(df, 3, variables=VARS, strata="region", strata_scaling="stratum", method="mdav")
    assert res.settings["strata_scaling"] == "stratum"
    for region in ("north", "south", "east"):
        mask = (df["region"] == region).to_numpy()
        alone = microaggregate(df[mask], 3, variables=VARS, method="mdav")
        pd.testing.assert_frame_equal(res.data[mask], alone.data)
        # same partition of the stratum's rows
        assert np.array_equal(pysdcmicro._partition.canonical_labels(res.labels[mask]), alone.labels)


def test_global_scaling_uses_whole_data_z_scores():
    """strata_scaling="global" (default): each stratum is grouped on whole-data z-scores."""
    from pysdcmicro.constructive import mdav_labels

    df = _frame(n=80, seed=11)
    res = microaggregate(df, 3, variables=VARS, strata="region", method="mdav")
    assert res.settings["strata_scaling"] == "global"
    Z = pysdcmicro.standardize(df[VARS].to_numpy())[0]
    for region in ("north", "south", "east"):
        rows = np.flatnonzero((df["region"] == region).to_numpy())
        expected = mdav_labels(np.ascontiguousarray(Z[rows]), 3)
        got = pysdcmicro._partition.canonical_labels(res.labels[rows])
        assert np.array_equal(got, pysdcmicro._partition.canonical_labels(expected))


def test_the_two_scalings_can_group_differently():
    # Region "south" has 10x the income spread of the whole data's other regions: within it,
    # whole-data z-scores weigh income far more than within-stratum ones do.
    df = _frame(n=120, seed=3)
    a = microaggregate(df, 3, variables=VARS, strata="region", strata_scaling="global", method="mdav")
    b = microaggregate(df, 3, variables=VARS, strata="region", strata_scaling="stratum", method="mdav")
    assert not np.array_equal(a.labels, b.labels)
    _assert_within_strata(b.labels, df["region"].to_numpy())
    # Both report IL on whole-data z-scores.
    Z = zscore(df[VARS].to_numpy())
    assert b.information_loss == pytest.approx(100 * naive_sse(Z, b.labels) / naive_sst(Z), rel=1e-9)


@pytest.mark.parametrize("strata_scaling", ["global", "stratum"])
def test_one_stratum_equals_no_strata(strata_scaling):
    df = _frame(n=50, seed=2).assign(country="ES")
    plain = microaggregate(df, 4, variables=VARS, method="mdav")
    one = microaggregate(df, 4, variables=VARS, strata="country", strata_scaling=strata_scaling, method="mdav")
    assert np.array_equal(plain.labels, one.labels)
    assert one.information_loss == pytest.approx(plain.information_loss, rel=1e-12)


def test_too_small_stratum_is_named():
    df = _frame(n=40, seed=1)
    df.loc[df.index[[3, 17]], "region"] = "islands"
    with pytest.raises(StratumTooSmallError, match=r"stratum region=islands has 2 records; every stratum "
                                                   r"needs at least k=3"):
        microaggregate(df, 3, variables=VARS, strata="region", method="mdav")
    # a ValueError for callers who do not know pysdcmicro
    with pytest.raises(ValueError, match="islands"):
        microaggregate(df, 3, variables=VARS, strata=["region"], strata_scaling="stratum", method="mdav")
    # a single record: singular wording, several columns named
    df.loc[df.index[17], "region"] = "north"
    df["size"] = 0
    with pytest.raises(StratumTooSmallError, match=r"stratum region=islands, size=0 has 1 record;"):
        microaggregate(df, 2, variables=VARS, strata=["region", "size"], method="mdav")


def test_strata_errors():
    df = _frame(n=30)
    with pytest.raises(InvalidInputError, match="both in `variables` and in `strata`"):
        microaggregate(df, 3, variables=["income", "size"], strata="size", method="mdav")
    with pytest.raises(InvalidInputError, match="unknown column 'regoin' in `strata`.*Did you mean 'region'"):
        microaggregate(df, 3, variables=VARS, strata="regoin", method="mdav")
    with pytest.raises(InvalidInputError, match=r"`strata_scaling` must be one of 'global', 'stratum'; got 'local'"):
        microaggregate(df, 3, variables=VARS, strata="region", strata_scaling="local", method="mdav")
    with pytest.raises(InvalidInputError, match='`strata_scaling` must be "global" when `scaling` is \'none\''):
        microaggregate(df, 3, variables=VARS, strata="region", scaling="none", strata_scaling="stratum", method="mdav")
    bad = df.copy()
    bad.loc[bad.index[4], "region"] = None
    with pytest.raises(InvalidInputError, match="stratum column 'region' has a missing value at row 4"):
        microaggregate(bad, 3, variables=VARS, strata="region", method="mdav")
    with pytest.raises(InvalidInputError, match="`strata` needs a DataFrame"):
        microaggregate(df[VARS].to_numpy(), 3, strata=0, method="mdav")


def test_default_variables_exclude_strata_columns():
    df = _frame(n=40, seed=4)
    res = microaggregate(df, 3, strata="size", method="mdav")   # numeric stratum column, not microaggregated
    assert "size" not in res.variables
    assert res.data["size"].equals(df["size"])
    _assert_within_strata(res.labels, df["size"].to_numpy())


def test_estimator_passes_strata_scaling():
    df = _frame(n=60, seed=8)
    est = pysdcmicro.Microaggregator(k=3, variables=VARS, strata="region", strata_scaling="stratum", method="mdav")
    assert "strata_scaling='stratum'" in repr(est)
    out = est.fit_transform(df)
    ref = microaggregate(df, 3, variables=VARS, strata="region", strata_scaling="stratum", method="mdav")
    pd.testing.assert_frame_equal(out, ref.data)


def test_cli_strata(tmp_path, capsys):
    df = _frame(n=45, seed=6)
    src = tmp_path / "in.csv"
    df.to_csv(src, index=False)
    out, report = tmp_path / "out.csv", tmp_path / "r.json"
    code = main(["microaggregate", str(src), "--k", "3", "--variables", "income,wealth,age",
                 "--strata", "region", "--strata-scaling", "stratum", "--method", "mdav", "--output", str(out),
                 "--report", str(report), "--quiet"])
    assert code == 0
    masked = pd.read_csv(out)
    rep = json.loads(report.read_text())
    assert rep["settings"]["strata"] == ["region"]
    assert rep["settings"]["strata_scaling"] == "stratum"
    ref = microaggregate(df.reset_index(drop=True), 3, variables=VARS, strata="region", strata_scaling="stratum", method="mdav")
    assert rep["information_loss"] == pytest.approx(ref.information_loss, rel=1e-12)
    np.testing.assert_allclose(masked[VARS].to_numpy(), ref.data[VARS].to_numpy(), rtol=1e-12)
    assert masked["region"].tolist() == df["region"].tolist()
    # every released combination is shared by >= 3 records of the same region
    counts = masked.groupby(["region"] + VARS).size()
    assert counts.min() >= 3


def test_cli_too_small_stratum(tmp_path, capsys):
    df = _frame(n=30, seed=6)
    df.loc[df.index[0], "region"] = "islands"
    src = tmp_path / "in.csv"
    df.to_csv(src, index=False)
    code = main(["microaggregate", str(src), "--k", "3", "--variables", "income,wealth", "--strata", "region",
                 "--quiet", "--output", str(tmp_path / "o.csv")])
    assert code == 2
    err = capsys.readouterr().err
    assert "pysdcmicro: error: stratum region=islands has 1 record; every stratum needs at least k=3" in err


def test_many_strata_give_a_one_line_message_and_each_strata_message_in_info():
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"s": np.repeat(np.arange(12), 9), "x": rng.normal(size=108), "y": rng.normal(size=108)})
    res = pysdcmicro.microaggregate(df, 3, variables=["x", "y"], strata="s", method="auto")
    strata = res.info["strata"]
    assert len(strata) == 12 and all(s["message"].startswith("auto") and s["status"] == "done" for s in strata)
    assert res.message.startswith("12 strata (12 done); [s=0] auto") and len(res.message) < 400
