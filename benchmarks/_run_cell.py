"""Child process of the benchmark runner: run one case, print one JSON line."""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from pathlib import Path


def _rss_kib() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def load_dataset(name: str):
    """CASC sets by name (published columns), ``NAME@sub:N:SEED`` (N random rows of a CASC
    set, drawn with ``numpy.random.default_rng(SEED)``, kept in file order), or
    ``synthetic:KIND:N:D[:SEED]``, ``statsmodels:NAME`` (the numeric columns of a data set that
    ships with statsmodels); ``NAME@missing:SHARE:SEED``: the data set with each
    cell missing independently with probability SHARE (``numpy.random.default_rng(SEED)``)."""
    if "@missing:" in name:
        import numpy as np

        base, spec = name.split("@missing:")
        share, seed = float(spec.split(":")[0]), int(spec.split(":")[1])
        full = load_dataset(base).astype(float)
        holes = np.random.default_rng(seed).random(full.shape) < share
        return full.mask(holes)
    if "@sub:" in name:
        import numpy as np

        base, spec = name.split("@sub:")
        size, seed = (int(v) for v in spec.split(":"))
        full = load_dataset(base)
        rows = np.sort(np.random.default_rng(seed).choice(len(full), size, replace=False))
        return full.iloc[rows].reset_index(drop=True)
    if name.startswith("statsmodels:"):
        import statsmodels.api as sm

        return getattr(sm.datasets, name.split(":", 1)[1]).load_pandas().data.select_dtypes("number")
    if name.startswith("synthetic:"):
        from pysdcmicro.datasets import make_synthetic

        parts = name.split(":")
        kind, n, d = parts[1], int(parts[2]), int(parts[3])
        seed = int(parts[4]) if len(parts) > 4 else 0
        return make_synthetic(n, d, kind=kind, rng=seed)
    from pysdcmicro.datasets import load_casc

    folder = os.environ.get("PYSDCMICRO_CASC_DIR") or str(Path(__file__).resolve().parents[2] / "shared" / "data")
    return load_casc(name, data_dir=folder)


def main() -> None:
    case = json.loads(sys.argv[1])
    import numpy as np  # noqa: F401

    import pysdcmicro

    microaggregate = pysdcmicro.microaggregate  # the package's lazy import happens here, off the clock
    data = load_dataset(case["dataset"])
    baseline = _rss_kib()
    t0 = time.perf_counter()
    kwargs = dict(case.get("kwargs", {}))
    if hasattr(data, "columns"):  # every published column (EIA's UTILITYID too)
        kwargs.setdefault("variables", list(data.columns))
    res = microaggregate(
        data, case["k"], method=case["method"], improve=case.get("improve"),
        improve_options=case.get("improve_options"), rng=case.get("seed"),
        time_limit=case.get("time_limit"), **kwargs, **case.get("options", {}),
    )
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    memory = res.info.get("memory", {})  # the large-data path reports its worker processes' peaks
    out = {
        "information_loss": res.information_loss,
        "lower_bound": res.lower_bound,
        "gap": res.gap,
        "seconds": wall,
        "peak_mib": max(0, peak - baseline) / 1024.0,
        "peak_abs_mib": peak / 1024.0,
        "workers_peak_mib_total": memory.get("worker_peak_mib_total", 0.0),
        "workers": memory.get("worker_processes", 0),
        "status": res.status,
        "n": res.n,
        "d": len(res.variables),
        "n_groups": res.n_groups,
        "max_group_size": int(res.group_sizes.max()),
        "info": {**{k: v for k, v in res.to_dict().items() if k in ("path_length", "converged", "step3_sse")},
                 **({"nn_bound_il": 100.0 * res.info["nn_bound"] / res.sst}
                    if res.info.get("nn_bound") is not None and res.sst else {})},
        "blocks": res.info["blocks"]["count"] if "blocks" in res.info else None,
        "repair_gain": res.info.get("repair", {}).get("gain_information_loss"),
        "message": res.message,
        "winner": res.info.get("winner"),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
