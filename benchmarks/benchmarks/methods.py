"""The methods a user calls, on the CASC reference sets: seconds (``time_``) and information
loss (``track_``, IL in percent) per data set and k.

Every call uses every published column and seed 0. ``auto`` runs without a time limit (a
fixed, reproducible amount of work); with a time limit it would use every core for the whole
budget, which is what ``benchmarks/suites/auto_budget.py`` measures.
"""

from __future__ import annotations

import pysdcmicro

from ._data import CASC_KS, CASC_SETS, casc


class _CASCMethod:
    """One method on every CASC set and k; subclasses set ``kwargs``."""

    params = (list(CASC_SETS), list(CASC_KS))
    param_names = ["dataset", "k"]
    kwargs: dict = {}
    number = 1
    repeat = 1
    timeout = 600

    def setup(self, dataset, k):
        self.frame = casc(dataset)

    def _run(self, k):
        return pysdcmicro.microaggregate(self.frame, k, variables=list(self.frame.columns), rng=0,
                                         **self.kwargs)

    def time_microaggregate(self, dataset, k):
        self._run(k)

    def track_information_loss(self, dataset, k):
        return self._run(k).information_loss

    track_information_loss.unit = "IL %"


class Mdav(_CASCMethod):
    kwargs = {"method": "mdav"}


class Vmdav(_CASCMethod):
    kwargs = {"method": "vmdav"}


class MdavTwoSwap(_CASCMethod):
    kwargs = {"method": "mdav", "improve": "two-swap"}


class Icsm(_CASCMethod):
    kwargs = {"method": "icsm"}


class AutoNoLimit(_CASCMethod):
    kwargs = {"method": "auto"}
