"""Our utility and risk measures against sdcMicro's own ``dUtility`` and ``dRisk``.

Marked ``r``; needs R, rpy2 and the CRAN package sdcMicro (skips with the reason otherwise).
The oracle is sdcMicro itself, called live on the same original and masked data: nothing is
hard-coded. Checked: sdcMicro 5.8.1 (IL1s, IL1, eigen; dRisk with k = 0.01, 0.05, 0.1).
"""

from __future__ import annotations

import numpy as np
import pytest

import pysdcmicro
from pysdcmicro import metrics
from pysdcmicro.bridges import sdcmicro as bridge

pytestmark = pytest.mark.r


@pytest.fixture(scope="module")
def r():
    try:
        bridge.check_r(sdcmicro=True)
    except bridge.RUnavailableError as exc:
        pytest.skip(str(exc))
    import rpy2.robjects as ro

    session = bridge._session()
    return ro, session


@pytest.mark.parametrize("dataset,k", [("tarragona", 3), ("census", 5), ("eia", 10)])
def test_utility_and_risk_equal_sdcmicro(r, casc, dataset, k):
    ro, s = r
    original = casc(dataset).astype(float)
    masked = pysdcmicro.microaggregate(original, k, method="mdav", variables=list(original.columns)).data
    x, xm = s.to_r(original), s.to_r(masked)
    d_utility = ro.r("function(x, xm, m) sdcMicro::dUtility(x, xm = xm, method = m)")
    d_risk = ro.r("function(x, xm, k) sdcMicro::dRisk(x, xm = xm, k = k)")
    assert metrics.il1s(original, masked) == pytest.approx(float(d_utility(x, xm, "IL1s")[0]), rel=1e-9)
    assert metrics.il1(original, masked) == pytest.approx(float(d_utility(x, xm, "IL1")[0]), rel=1e-9)
    if dataset == "census":
        # Census has 13 linearly dependent columns (rank 12): sdcMicro divides by a
        # rounding-level eigenvalue and returns noise; we return NaN with a warning.
        with pytest.warns(RuntimeWarning, match="linearly dependent"):
            assert np.isnan(metrics.eigen_utility(original, masked))
    else:
        assert metrics.eigen_utility(original, masked) == pytest.approx(float(d_utility(x, xm, "eigen")[0]), rel=1e-7)
    for f in (0.01, 0.05, 0.1):
        ours = metrics.interval_disclosure_risk(original, masked, sd_fraction=f)
        assert ours == pytest.approx(float(d_risk(x, xm, f)[0]), rel=1e-12), f
