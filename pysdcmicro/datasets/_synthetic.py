"""Generated data: nothing is downloaded or read from disk."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._validation import check_positive_int, check_choice

__all__ = ["make_demo_data", "make_synthetic"]

_REGIONS = ["north", "south", "east", "west"]
_SECTORS = ["manufacturing", "retail", "services", "construction", "agriculture"]


def make_demo_data(n: int = 600, *, rng=0) -> pd.DataFrame:
    """A synthetic business survey, the embedded default data of ``pysdcmicro demo``.

    Each firm has an identifier, two categorical columns (``region``, ``sector``) and five
    skewed, correlated numeric quasi-identifiers driven by a latent firm size:
    ``employees`` (integer), ``turnover``, ``wages``, ``assets`` and ``profit`` (which can
    be negative), all in thousands. A few exact duplicate records are included, as in
    real registers.

    ``firm_id`` (one per firm) is a direct identifier and ``region`` and ``sector`` are
    categorical key variables: microaggregation passes them through untouched, and the
    release report (:func:`pysdcmicro.report`) and the default-variables warning name them
    (remove the identifier before release; recode or suppress the categories).

    Parameters
    ----------
    n : int, default 600
        Number of firms (>= 10).
    rng : None, int or Generator, default 0
        Seed; the default makes the same data on every machine.

    Examples
    --------
    >>> df = make_demo_data(8 * 5, rng=3)
    >>> df.shape, list(df.columns)[:3]
    ((40, 8), ['firm_id', 'region', 'sector'])
    """
    n = check_positive_int(n, "n", minimum=10)
    gen = np.random.default_rng(rng)
    sector = gen.integers(0, len(_SECTORS), n)
    region = gen.choice(len(_REGIONS), n, p=[0.35, 0.25, 0.25, 0.15])
    size = gen.normal(0.0, 1.0, n) + 0.4 * (sector == 0) - 0.3 * (sector == 4)
    employees = np.maximum(1, np.round(np.exp(2.2 + 1.1 * size + gen.normal(0, 0.25, n)))).astype(np.int64)
    productivity = np.exp(gen.normal(4.3, 0.35, n) + 0.25 * (sector == 2))
    turnover = np.round(employees * productivity * np.exp(gen.normal(0, 0.2, n)), 1)
    wages = np.round(employees * np.exp(gen.normal(3.4, 0.2, n)), 1)
    assets = np.round(turnover * np.exp(gen.normal(-0.2, 0.5, n)), 1)
    profit = np.round(turnover - wages - 0.6 * turnover * np.exp(gen.normal(0, 0.15, n)), 1)
    df = pd.DataFrame({
        "firm_id": [f"F{i:05d}" for i in range(1, n + 1)],
        "region": pd.Categorical([_REGIONS[i] for i in region], categories=_REGIONS),
        "sector": pd.Categorical([_SECTORS[i] for i in sector], categories=_SECTORS),
        "employees": employees,
        "turnover": turnover,
        "wages": wages,
        "assets": assets,
        "profit": profit,
    })
    # Exact duplicates of the numeric part (about 1 %), as real registers have.
    dup = gen.choice(n, size=max(1, n // 100), replace=False)
    src = gen.choice(n, size=dup.size, replace=False)
    num = ["employees", "turnover", "wages", "assets", "profit"]
    df.loc[dup, num] = df.loc[src, num].to_numpy()
    return df


def make_synthetic(n: int, d: int, *, kind: str = "clustered", rng=None, n_clusters: int | None = None) -> np.ndarray:
    """Synthetic numeric data for benchmarks and large-data runs.

    Parameters
    ----------
    n, d : int
        Records and variables.
    kind : {"clustered", "uniform", "gaussian"}
        ``"clustered"``: a Gaussian mixture with ``n_clusters`` (default ``max(2, n // 1000)``)
        centres of varied spread; ``"uniform"``: independent U(0, 1) columns;
        ``"gaussian"``: independent N(0, 1) columns (no structure to exploit: the hardest
        case for local search).
    rng : None, int or Generator

    Examples
    --------
    >>> make_synthetic(100, 3, kind="uniform", rng=0).shape
    (100, 3)
    """
    n = check_positive_int(n, "n")
    d = check_positive_int(d, "d")
    kind = check_choice(kind, "kind", ("clustered", "uniform", "gaussian"))
    gen = np.random.default_rng(rng)
    if kind == "uniform":
        return gen.random((n, d))
    if kind == "gaussian":
        return gen.normal(0.0, 1.0, (n, d))
    c = n_clusters if n_clusters is not None else max(2, n // 1000)
    c = check_positive_int(c, "n_clusters")
    centres = gen.normal(0.0, 10.0, (c, d))
    spread = np.exp(gen.normal(0.0, 0.5, c))
    which = gen.integers(0, c, n)
    X = centres[which]
    X += gen.normal(0.0, 1.0, (n, d)) * spread[which, None]
    return X
