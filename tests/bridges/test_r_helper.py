"""The Python half of the R package (``bridges/R/pysdcmicro/inst/python/pysdcmicro_r.py``),
called here directly as reticulate calls it: numbers in as raw doubles in R's column-major
order, plain values out. Needs neither R nor rpy2."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

HELPER = Path(__file__).resolve().parents[2] / "bridges" / "R" / "pysdcmicro" / "inst" / "python" / "pysdcmicro_r.py"


@pytest.fixture(scope="module")
def helper():
    spec = importlib.util.spec_from_file_location("pysdcmicro_r", HELPER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _raw(X):
    return bytearray(np.asarray(X, dtype=np.float64).tobytes(order="F"))


def _run(helper, X, names, k=3, **kwargs):
    return helper.run(_raw(X), names, k, kwargs.pop("method", "mdav"), **kwargs)


def test_errors_name_r_rows_from_1_in_r_terms(helper):
    X = np.column_stack([np.arange(1.0, 13), np.arange(12.0, 0, -1)])
    X[4, 1] = np.inf  # R's row 5
    out = _run(helper, X, ["a", "b"])
    assert "column 'b' has an infinite value (Inf) at row 5;" in out["error"]
    X[4, 1] = -np.inf
    assert "(-Inf) at row 5;" in _run(helper, X, ["a", "b"])["error"]
    X[4, 1], X[1, 0] = 1.0, np.nan  # R's row 2
    err = _run(helper, X, ["a", "b"], missing="error")["error"]
    assert "column 'a' has a missing value (NA) at row 2;" in err
    assert 'pass missing = "keep" to keep them' in err and "CLI" not in err
    w = np.ones(12)
    w[6] = 0.0  # R's position 7
    assert "at row 7" in _run(helper, np.column_stack([np.arange(12.0), np.arange(12.0) ** 2]), ["a", "b"],
                              weights=_raw(w))["error"]


def test_count_of_cells_sdcmicro_releases_as_na(helper):
    """sdcMicro's group statistic has no na.rm: a group with a missing cell in a column
    releases NA there for all its members. simple's groups are rows 1-3, 4-6, ... (k = 3)."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 3))
    X[[2, 7, 8], 0] = np.nan  # groups 1 (2 observed cells left) and 3 (1 left)
    X[20, 2] = np.nan  # group 7 (2 left)
    out = _run(helper, X, ["a", "b", "c"], method="simple", count_na=True)
    assert out["error"] == "" and (out["na_cells"], out["na_groups"]) == (5, 3)
    assert _run(helper, X, ["a", "b", "c"], method="simple")["na_cells"] == 0  # counted only when asked


@pytest.mark.parametrize("method", ["single", "onedims", "pca"])
def test_count_of_na_cells_follows_each_columns_groups(helper, method):
    import pandas as pd

    import pysdcmicro

    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 3))
    X[[3, 9, 30], 1] = np.nan
    X[[0, 1], 2] = np.nan
    out = _run(helper, X, ["a", "b", "c"], method=method, count_na=True)
    res = pysdcmicro.microaggregate(pd.DataFrame(X, columns=["a", "b", "c"]), 3, method=method,
                                    **({"varsort": 1} if method == "single" else {}))
    per_column = {g["variables"][0]: g["labels"] for g in res.info.get("variable_groups", [])}
    cells = groups = 0
    for c, name in enumerate(["a", "b", "c"]):
        labels = np.asarray(per_column.get(name, res.labels))
        for g in np.unique(labels):
            gaps = np.isnan(X[labels == g, c])
            if gaps.any():
                cells += int((~gaps).sum())
                groups += 1
    assert (out["na_cells"], out["na_groups"]) == (cells, groups) and cells > 0
