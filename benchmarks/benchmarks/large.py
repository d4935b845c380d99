"""The large-data path at moderate size: blocks of near records solved in worker processes,
then border repair; against whole-data MDAV on the same synthetic data."""

from __future__ import annotations

import pysdcmicro

from ._data import synthetic, tiny


class Blocked:
    params = [50_000]
    param_names = ["n"]
    number = 1
    repeat = 1
    timeout = 900

    def setup(self, n):
        self.frame = synthetic(n, 10)
        # blocks of 10 000 records in two worker processes (the tiny setting: 20 records, in process)
        self.blocks = {"size": 20 if tiny() else 10_000}
        self.n_jobs = 1 if tiny() else 2

    def _run(self):
        return pysdcmicro.microaggregate(self.frame, 5, method="mdav",
                                         blocks=self.blocks, n_jobs=self.n_jobs, rng=0)

    def time_blocked_mdav(self, n):
        self._run()

    def peakmem_blocked_mdav(self, n):
        self._run()

    def track_information_loss(self, n):
        return self._run().information_loss

    track_information_loss.unit = "IL %"


class WholeDataMdav:
    params = [10_000, 100_000]
    param_names = ["n"]
    number = 1
    repeat = 1

    def setup(self, n):
        self.frame = synthetic(n, 10)

    def time_mdav(self, n):
        pysdcmicro.microaggregate(self.frame, 5, method="mdav",
                                  blocks=None, rng=0)

    def peakmem_mdav(self, n):
        pysdcmicro.microaggregate(self.frame, 5, method="mdav",
                                  blocks=None, rng=0)
