"""Issue 14, Tarragona k = 3: capture the state the ``tarr3_*`` scripts start from.

    python -m benchmarks.tarr3_capture OUT.pkl [SECONDS]

Runs ``microaggregate(tarragona, 3, method="column-generation", rng=0, time_limit=SECONDS)``
(default 400) and pickles the standardised data ``Z``, ``k``, the neighbour distances, the
pool after the cut phase, the cut phase's result (its triples and the proven duals
``(pi, sigma, triples, value)``) and the returned labels to OUT.pkl. OUT.pkl holds the CASC
data: keep it outside the repository.
"""

from __future__ import annotations

import pickle
import sys

import numpy as np

from ._run_cell import load_dataset


def main(argv: list[str]) -> None:
    import pysdcmicro
    from pysdcmicro.optimization import _cuts

    out, limit = argv[0], float(argv[1]) if len(argv) > 1 else 400.0
    orig = _cuts.cut_phase
    store: dict = {}

    def wrapped(Z, k, nbr_dist, pool, **kw):
        res = orig(Z, k, nbr_dist, pool, **kw)
        store.update(Z=Z, k=k, nbr_dist=nbr_dist, pool_members=list(pool.members), res=res)
        return res

    _cuts.cut_phase = wrapped
    data = load_dataset("tarragona")
    res = pysdcmicro.microaggregate(data, 3, method="column-generation", rng=0, time_limit=limit,
                                    variables=list(data.columns))
    print("IL", res.information_loss, "LB", res.lower_bound)
    store["labels"] = np.asarray(res.labels)
    store["il"] = res.information_loss
    with open(out, "wb") as fh:
        pickle.dump(store, fh)


if __name__ == "__main__":
    main(sys.argv[1:])
