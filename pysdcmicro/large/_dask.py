"""Dask DataFrame input: read the chosen columns, run the large-data path, and give back a
Dask DataFrame with those columns replaced, lazily, partition by partition.

Only the columns microaggregated (and the stratum columns) are brought into this process,
as an n x d float matrix; every other column stays in the Dask graph and is never read
here. The output is built from the group of each record and the group means (g x d), so the
graph carries O(n) labels plus O(g d) means, not a second copy of the data.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np
import pandas as pd

from .._errors import InvalidInputError
from .._partition import group_means
from .._validation import _is_numeric_series, _resolve_columns

__all__ = ["microaggregate_dask_frame"]


def _import_dask():
    try:
        import dask
        import dask.dataframe as dd
    except ImportError:  # pragma: no cover  (a Dask DataFrame implies dask is installed)
        raise InvalidInputError(
            "a Dask DataFrame needs the optional dependency dask; install it with `pip install 'pysdcmicro[dask]'`."
        ) from None
    return dask, dd


def _replace(part: pd.DataFrame, labels: np.ndarray, means: np.ndarray, columns: list) -> pd.DataFrame:
    out = part.copy()
    for j, col in enumerate(columns):
        out[col] = means[labels, j]
    return out


def microaggregate_dask_frame(ddf: Any, k: int, *, variables: Any = None, strata: Any = None, client: Any = None,
                              blocks: Any = "auto", **kwargs: Any):
    """:func:`pysdcmicro.microaggregate` on a Dask DataFrame (see the module docstring)."""
    from .._api import microaggregate

    started = time.monotonic()
    dask, dd = _import_dask()
    meta = ddf._meta
    columns = list(meta.columns)
    strata_cols = _resolve_columns(strata, columns, "strata")
    if variables is None:
        chosen = [c for c in columns if c not in strata_cols and _is_numeric_series(meta[c])]
    else:
        chosen = _resolve_columns(variables, columns, "variables")
    needed = list(dict.fromkeys(chosen + strata_cols))
    if not needed:
        raise InvalidInputError(
            "`frame` has no numeric column to microaggregate; pass `variables` or convert columns to numbers."
        )
    own_client = None
    if isinstance(client, str):
        from ._executors import DaskExecutor

        own_client = DaskExecutor(client).client
        client = own_client
    elif client is None:
        try:
            from distributed import default_client

            client = default_client()
        except (ImportError, ValueError):
            client = None  # no cluster: Dask's local scheduler reads, local processes solve
    try:
        parts = ddf[needed].to_delayed()
        if client is not None:
            frames = client.gather(client.compute(parts))
        else:
            frames = list(dask.compute(*parts))
        lengths = [len(f) for f in frames]
        local = pd.concat(frames, ignore_index=True) if frames else meta[needed].copy()
        del frames
        res = microaggregate(local, k, variables=chosen or None, strata=strata_cols or None, client=client,
                             blocks=blocks, **kwargs)
    finally:
        if own_client is not None:
            own_client.close()
    varying = [c for c in res.variables if local[c].nunique(dropna=False) > 1]
    means = group_means(local[varying].to_numpy(dtype=np.float64), res.labels, res.n_groups) if varying \
        else np.empty((res.n_groups, 0))
    shared_means = dask.delayed(means, pure=True)
    bounds = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    out_meta = meta.copy()
    for col in varying:
        out_meta[col] = out_meta[col].astype(np.float64)
    new_parts = [
        dask.delayed(_replace, pure=True)(part, res.labels[bounds[i]:bounds[i + 1]].astype(np.int32), shared_means,
                                          varying)
        for i, part in enumerate(ddf.to_delayed())
    ]
    data = dd.from_delayed(new_parts, meta=out_meta, divisions=ddf.divisions, verify_meta=False)
    info = dict(res.info)
    info["dask_frame"] = {"partitions": int(ddf.npartitions), "columns_read": [str(c) for c in needed]}
    return dataclasses.replace(res, data=data, info=info, seconds=time.monotonic() - started)
