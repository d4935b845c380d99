"""The facade: result object, estimator, pluggable methods and steps, settings."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import pysdcmicro
from pysdcmicro import Microaggregator, Solution, microaggregate
from pysdcmicro.datasets import make_demo_data, make_synthetic

from ._helpers import assert_k_partition, naive_sse, zscore


def test_result_fields_and_report():
    df = make_demo_data(120, rng=2)
    res = microaggregate(df, 4, variables=["employees", "turnover", "wages"], method="mdav")
    for field in ("data", "labels", "groups", "k", "method", "sse", "sst", "information_loss", "lower_bound",
                  "gap", "status", "message", "seconds", "variables", "settings", "info"):
        assert hasattr(res, field)
    assert res.lower_bound is None and res.gap is None
    assert res.status == "done"
    assert res.labels.dtype == np.int64
    # Canonical labels: groups numbered by their first record.
    firsts = [int(np.flatnonzero(res.labels == g)[0]) for g in range(res.n_groups)]
    assert firsts == sorted(firsts)
    assert json.loads(res.to_json())["n"] == 120
    assert "information loss" in res.summary()
    assert "MicroaggregationResult(method='mdav'" in repr(res)
    # Untouched columns keep their dtype and values; chosen ones become floats.
    assert res.data["firm_id"].tolist() == df["firm_id"].tolist()
    assert res.data["region"].dtype == df["region"].dtype
    assert res.data["assets"].dtype == df["assets"].dtype
    pd.testing.assert_series_equal(res.data["profit"], df["profit"])


def test_settings_record_everything():
    res = microaggregate(make_synthetic(50, 3, rng=0), 3, method="mdav", rng=11, time_limit=30)
    s = res.settings
    assert s["method"] == "mdav" and s["k"] == 3 and s["rng"] == 11 and s["time_limit"] == 30
    assert s["scaling"] == "standardize" and s["options"] == {"missing_distance": "imputed"} and s["improve"] == []
    assert {"pysdcmicro", "numpy", "pandas"} <= set(s["versions"])


def test_array_input_with_positions():
    X = make_synthetic(40, 4, rng=1)
    res = microaggregate(X, 3, variables=[0, 2])
    np.testing.assert_array_equal(res.data[:, 1], X[:, 1])
    np.testing.assert_array_equal(res.data[:, 3], X[:, 3])
    assert res.variables == [0, 2]


def test_estimator():
    X = make_synthetic(30, 2, rng=3)
    est = Microaggregator(k=3)
    out = est.fit_transform(X)
    assert out.shape == X.shape
    assert_k_partition(est.labels_, 30, 3)
    assert est.information_loss_ == est.result_.information_loss
    assert est.get_params()["k"] == 3
    assert "Microaggregator(k=3" in repr(est)


def test_callable_method_and_improvement():
    X = make_synthetic(24, 2, rng=4)

    def pairs_in_order(Z, k, ctx):
        # groups of k consecutive rows, last group takes the rest
        labels = np.minimum(np.arange(Z.shape[0]) // k, Z.shape[0] // k - 1)
        return Solution(labels=labels, info={"custom": True})

    res = microaggregate(X, 3, method=pairs_in_order)
    assert res.method == "pairs_in_order" and res.info["custom"] is True
    assert_k_partition(res.labels, 24, 3)

    def keep(Z, labels, k, ctx):
        return labels

    res2 = microaggregate(X, 3, method="mdav", improve=keep)
    assert res2.method == "mdav+keep"

    def worse(Z, labels, k, ctx):
        return np.zeros_like(labels)  # one big group: valid but worse

    res3 = microaggregate(X, 3, method="mdav", improve=worse)
    assert res3.sse == pytest.approx(microaggregate(X, 3, method="mdav").sse)
    assert "discarded" in res3.message


def test_invalid_core_output_is_a_bug_not_a_user_error():
    def broken(Z, k, ctx):
        return np.arange(Z.shape[0])  # groups of one

    with pytest.raises(RuntimeError, match="returned an invalid k-partition"):
        microaggregate(make_synthetic(10, 2, rng=0), 3, method=broken)


def test_progress_callback_and_history():
    events = []

    def method(Z, k, ctx):
        from pysdcmicro.constructive import mdav_labels

        labels = mdav_labels(Z, k)
        ctx.report(iteration=1, sse=pysdcmicro.sse(Z, labels))
        return labels

    res = microaggregate(make_synthetic(30, 2, rng=0), 3, method=method, progress=events.append, keep_history=True)
    assert len(events) == 1 and events[0].iteration == 1
    assert events[0].information_loss == pytest.approx(res.information_loss)
    assert res.history == events


def test_scaling_none_partitions_raw_values_but_reports_il_on_zscores():
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.normal(0, 1000, 40), rng.normal(0, 1, 40)])
    raw = microaggregate(X, 4, method="mdav", scaling="none")
    std = microaggregate(X, 4, method="mdav")
    assert raw.sse == pytest.approx(naive_sse(zscore(X), raw.labels))
    from pysdcmicro._partition import canonical_labels
    from pysdcmicro.constructive import mdav_labels

    # The partition is MDAV on the raw (centred) values, where the first column dominates.
    np.testing.assert_array_equal(raw.labels, canonical_labels(mdav_labels(X - X.mean(axis=0), 4)))
    assert not np.array_equal(raw.labels, std.labels)
    assert raw.settings["scaling"] == "none"


def test_strata_groups_stay_within_strata():
    df = make_demo_data(200, rng=5)
    res = microaggregate(df, 3, variables=["employees", "turnover"], strata="region")
    for rows in res.groups:
        assert df["region"].iloc[rows].nunique() == 1
    assert len(res.info["strata"]) == df["region"].nunique()
    assert res.sse == pytest.approx(naive_sse(zscore(df[["employees", "turnover"]].to_numpy(float)), res.labels))


def test_methods_registry_is_public():
    assert "mdav" in pysdcmicro.methods()
    spec = pysdcmicro.methods()["mdav"]
    assert spec.summary and spec.kind == "method"


# -- scikit-learn's estimator contract ---------------------------------------------------------------
# The checks of sklearn.utils.estimator_checks that apply to a transformer of DataFrames whose
# parameters include the method's options. Not run, and why:
#   check_n_features_in: fit stores the result (result_, labels_), not n_features_in_: the
#     output is the caller's whole frame, columns chosen by `variables`, not a feature matrix.
#   check_fit2d_1sample: one record is refused with "`k` must be <= the number of records",
#     not scikit-learn's "n_samples=1" wording.
#   check_estimators_nan_inf: missing values are allowed (missing="keep"), by design.
SKLEARN_CHECKS = ["check_estimator_cloneable", "check_parameters_default_constructible",
                  "check_get_params_invariance", "check_set_params", "check_no_attributes_set_in_init",
                  "check_dont_overwrite_parameters", "check_estimators_overwrite_params", "check_estimator_repr",
                  "check_fit_idempotent", "check_transformer_general", "check_fit2d_1feature",
                  "check_estimators_dtypes", "check_transformer_data_not_an_array", "check_fit_check_is_fitted",
                  "check_do_not_raise_errors_in_init_or_set_params"]


@pytest.mark.parametrize("check", SKLEARN_CHECKS)
def test_sklearn_estimator_checks(check):
    estimator_checks = pytest.importorskip("sklearn.utils.estimator_checks",
                                           reason="scikit-learn runs its own estimator checks")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant or identifier-like columns in scikit-learn's test data
        getattr(estimator_checks, check)("Microaggregator", Microaggregator(k=3, method="mdav", rng=0))


def test_sklearn_clone_keeps_every_parameter_and_method_option():
    base = pytest.importorskip("sklearn.base", reason="scikit-learn's clone")
    est = Microaggregator(k=4, method="mu-approx", rng=7, randomized=False, time_limit=5.0)
    copy = base.clone(est)
    assert copy is not est
    assert copy.get_params() == est.get_params()
    assert copy.get_params()["randomized"] is False and copy.get_params()["k"] == 4
    assert not hasattr(copy, "result_")


def test_get_params_and_set_params_round_trip():
    est = Microaggregator(k=3, method="icsm", max_restarts=2)
    params = est.get_params(deep=True)
    assert params == est.get_params(deep=False)  # no parameter is itself an estimator
    assert params["max_restarts"] == 2 and params["method"] == "icsm"
    assert est.set_params(k=5, max_restarts=4, pool_size=50) is est
    assert (est.k, est.get_params()["max_restarts"], est.get_params()["pool_size"]) == (5, 4, 50)
    X = np.random.default_rng(0).normal(size=(30, 2))
    assert est.fit(X).result_.settings["options"]["pool_size"] == 50
    with pytest.raises(pysdcmicro.InvalidInputError, match="has no option 'no_such_option'"):
        Microaggregator(k=3, method="mdav").set_params(no_such_option=1).fit(X)


def test_sklearn_grid_search_over_k():
    model_selection = pytest.importorskip("sklearn.model_selection", reason="scikit-learn's grid search")
    X = np.random.default_rng(1).normal(size=(40, 2))

    def score(estimator, X, y=None):
        return -estimator.information_loss_

    search = model_selection.GridSearchCV(Microaggregator(method="mdav"), {"k": [2, 3, 5]}, scoring=score, cv=2)
    search.fit(X)
    assert search.best_params_ == {"k": 2}  # the smallest groups lose the least information


def test_method_capabilities_are_fields_of_the_registry():
    """What the pipeline does differently for a method comes from its registry entry."""
    methods = pysdcmicro.methods()
    code = methods["mdav"].missing_code
    assert (code.option, code.value, code.code) == ("missing_distance", "sdcmicro", -999.0)
    assert methods["vmdav"].threads and not methods["mdav"].threads
    assert dict(methods["auto"].block_defaults) == {"effort": "light"}
    assert all(spec.missing_code is None for name, spec in methods.items() if name != "mdav")
    assert [name for name, spec in methods.items() if spec.per_variable] == ["onedims"]


def test_block_defaults_apply_on_blocks_only_unless_given():
    X = make_synthetic(120, 2, rng=5)
    blocked = microaggregate(X, 3, method="auto", blocks=40, n_jobs=1, rng=0)
    assert blocked.settings["options"]["effort"] == "light"
    given = microaggregate(X, 3, method="auto", blocks=40, n_jobs=1, rng=0, effort="full")
    assert given.settings["options"]["effort"] == "full"
    whole = microaggregate(X[:30], 3, method="auto", blocks=None, rng=0)
    assert whole.settings["options"]["effort"] == "full"
