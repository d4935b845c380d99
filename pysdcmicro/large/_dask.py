"""Dask DataFrame input: read the chosen columns (:func:`dask_input`); the facade runs the
large-data path on them; :func:`dask_output` gives back a Dask DataFrame with those columns
replaced, lazily, partition by partition.

Only the columns microaggregated (and the stratum columns) are brought into this process,
as an n x d float matrix; every other column stays in the Dask graph and is never read
here. The output is built from the group of each record and the group means (g x d), so the
graph carries O(n) labels plus O(g d) means, not a second copy of the data.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from typing import Any

import numpy as np
import pandas as pd

from .._errors import InvalidInputError
from .._partition import group_means
from .._validation import _is_numeric_series, _resolve_columns

__all__ = ["DaskInput", "dask_input", "dask_output"]


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


@dataclasses.dataclass
class DaskInput:
    """The chosen and stratum columns of a Dask DataFrame, brought into this process."""

    local: pd.DataFrame  # the columns read, one pandas frame
    chosen: list  # the columns to microaggregate
    strata: list  # the stratum columns
    needed: list  # the columns read
    lengths: list  # rows of each partition
    client: Any  # the cluster the blocks run on, or None


@contextlib.contextmanager
def dask_input(ddf: Any, *, variables: Any = None, strata: Any = None, client: Any = None):
    """Read the chosen and stratum columns of ``ddf`` (see the module docstring); a client
    made here from a scheduler address is closed on leaving the block."""
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
        yield DaskInput(local=local, chosen=chosen, strata=strata_cols, needed=needed, lengths=lengths,
                        client=client)
    finally:
        if own_client is not None:
            own_client.close()


def dask_output(ddf: Any, inp: DaskInput, res: Any, started: float):
    """The result of the run on ``inp.local`` with a lazy Dask DataFrame as its data: the
    columns of ``ddf`` replaced partition by partition from the labels and group means."""
    dask, dd = _import_dask()
    meta = ddf._meta
    local = inp.local
    varying = [c for c in res.variables if local[c].nunique(dropna=False) > 1]
    means = group_means(local[varying].to_numpy(dtype=np.float64), res.labels, res.n_groups) if varying \
        else np.empty((res.n_groups, 0))
    shared_means = dask.delayed(means, pure=True)
    bounds = np.concatenate([[0], np.cumsum(inp.lengths)]).astype(np.int64)
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
    info["dask_frame"] = {"partitions": int(ddf.npartitions), "columns_read": [str(c) for c in inp.needed]}
    return dataclasses.replace(res, data=data, info=info, seconds=time.monotonic() - started)
