"""The univariate path: optimal grouping of consecutive records (Hansen-Mukherjee dynamic
programme) on one variable, and along an ordering of several."""

from __future__ import annotations

import numpy as np

import pysdcmicro
from pysdcmicro.univariate import optimal_runs

from ._data import CASC_KS, CASC_SETS, casc, tiny


class OneVariable:
    """One variable, sorted: the optimal grouping of consecutive records (the compiled
    dynamic programme behind `mhm`, `tsp-mhm` and ICSM's Tour2Assignment) is exact."""

    params = [10_000, 100_000, 1_000_000]
    param_names = ["n"]
    number = 1
    repeat = 3

    def setup(self, n):
        self.x = np.sort(np.random.default_rng(0).normal(size=60 if tiny() else n)).reshape(-1, 1)
        self.order = np.arange(len(self.x))
        optimal_runs(self.x[:400], self.order[:400], 5)  # compiled (or loaded from numba's cache) here

    def time_optimal_runs(self, n):
        optimal_runs(self.x, self.order, 5)

    def peakmem_optimal_runs(self, n):
        optimal_runs(self.x, self.order, 5)


class MhmOnCASC:
    """MHM along the default ordering on the CASC sets."""

    params = (list(CASC_SETS), list(CASC_KS))
    param_names = ["dataset", "k"]
    number = 1
    repeat = 1

    def setup(self, dataset, k):
        self.frame = casc(dataset)

    def time_mhm(self, dataset, k):
        pysdcmicro.microaggregate(self.frame, k, variables=list(self.frame.columns), method="mhm", rng=0)

    def track_information_loss(self, dataset, k):
        return pysdcmicro.microaggregate(self.frame, k, variables=list(self.frame.columns),
                                         method="mhm", rng=0).information_loss

    track_information_loss.unit = "IL %"
