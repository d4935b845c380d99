"""Record linkage cross-checked with sdcMicro's ``recordLinkage()`` (sdcMicro >= 5.8.1 with
the CRAN package clue; run through ``Rscript``, never imported).

sdcMicro's ``recordLinkage`` is the *global* one-to-one linkage of Herranz et al. (2015,
Hungarian algorithm), a different measure from ours (each record to its nearest released
record). What it shares with ours is the distance matrix and, for each record, ``n_best``:
how many released records attain the minimal distance. From its Euclidean distance matrix
and ``n_best`` we recompute our per-record probability ``1 / n_best`` (when one's own record
is among the nearest, else 0) and compare record by record. Marked ``r``; skips with the
reason where Rscript, sdcMicro's ``recordLinkage`` or clue is missing.
"""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

import pysdcmicro

pytestmark = [pytest.mark.r, pytest.mark.subprocess]

R_SCRIPT = r"""
suppressMessages(library(sdcMicro))
args <- commandArgs(trailingOnly = TRUE)
x <- read.csv(args[1]); y <- read.csv(args[2])
r <- recordLinkage(x, y, vars = names(x), distance = "euclidean", return_matrix = TRUE)
D <- r$distance_matrix
rowmin <- apply(D, 1, min)
own_is_nearest <- abs(diag(D) - rowmin) <= sqrt(.Machine$double.eps) * pmax(1, rowmin)
write.csv(data.frame(own_is_nearest = own_is_nearest, n_best = r$matches$n_best[order(r$matches$x_row)]),
          args[3], row.names = FALSE)
"""


@pytest.fixture(scope="module")
def rscript():
    exe = shutil.which("Rscript")
    if exe is None:
        pytest.skip("Rscript not found")
    probe = subprocess.run([exe, "-e", "suppressMessages(library(sdcMicro)); stopifnot(exists('recordLinkage')); "
                                       "stopifnot(requireNamespace('clue', quietly = TRUE))"],
                           capture_output=True, text=True, timeout=120)
    if probe.returncode != 0:
        pytest.skip("sdcMicro with recordLinkage() and the R package clue are needed: "
                    + (probe.stderr.strip().splitlines() or ["?"])[-1])
    return exe


@pytest.mark.parametrize("k", [3])
def test_per_record_linkage_equals_sdcmicros_distances_and_n_best(rscript, tmp_path, k):
    df = pysdcmicro.datasets.make_demo_data(150, rng=1)
    qi = ["employees", "turnover", "wages", "assets", "profit"]
    res = pysdcmicro.microaggregate(df, k, variables=qi)
    ours = pysdcmicro.metrics.record_linkage_risk(df, res.data, variables=qi, per_record=True)
    mean, sd = df[qi].mean(), df[qi].std()              # the original's, as our measure
    ((df[qi] - mean) / sd).to_csv(tmp_path / "x.csv", index=False)
    ((res.data[qi] - mean) / sd).to_csv(tmp_path / "y.csv", index=False)
    (tmp_path / "rl.R").write_text(R_SCRIPT)
    proc = subprocess.run([rscript, str(tmp_path / "rl.R"), str(tmp_path / "x.csv"), str(tmp_path / "y.csv"),
                           str(tmp_path / "out.csv")], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    sdc = pd.read_csv(tmp_path / "out.csv")
    expected = np.where(sdc["own_is_nearest"], 1.0 / sdc["n_best"], 0.0)
    np.testing.assert_allclose(ours.per_record, expected, rtol=0, atol=1e-12)
    assert ours.linked == pytest.approx(expected.mean(), abs=1e-12)
