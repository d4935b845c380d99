"""Large data: blocks of near records, solved in parallel (processes or Dask), with border
repair. See :func:`microaggregate_blocked` and the ``blocks``, ``n_jobs`` and ``client``
parameters of :func:`pysdcmicro.microaggregate`, which takes this path by default above
:data:`LARGE_N` records."""

from ._blocked import DEFAULT_BLOCK_SIZE, DEFAULT_REPAIR_PASSES, LARGE_N
from ._blocks import group_windows, principal_axis, principal_blocks
from ._local import batch_local_search, compiled_available

__all__ = ["microaggregate_blocked", "principal_blocks", "principal_axis", "group_windows",
           "batch_local_search", "compiled_available", "LARGE_N", "DEFAULT_BLOCK_SIZE", "DEFAULT_REPAIR_PASSES"]


def microaggregate_blocked(frame, k, *, method="mdav", block_size=None, repair="auto", repair_options=None,
                           repair_passes=DEFAULT_REPAIR_PASSES, window_size=None, repair_scope="all", n_jobs=None,
                           client=None, **kwargs):
    """Microaggregate large data: blocks of near records, solved in parallel, borders repaired.

    The large-data path of :func:`pysdcmicro.microaggregate`, taken whatever the number of
    records: split into blocks by recursive principal-axis bisection, run ``method`` (and any
    ``improve`` steps) on each block in worker processes or on a Dask cluster, then run
    border-repair passes of local search over windows of whole groups that straddle the
    block borders.

    Parameters
    ----------
    frame : DataFrame, Dask DataFrame or array_like of shape (n, p)
        The records; never modified. A Dask DataFrame gives a Dask DataFrame back.
    k : int
        Minimum group size.
    method : str or callable, default "mdav"
        Method run on each block.
    block_size : int, optional
        Largest block (default :data:`DEFAULT_BLOCK_SIZE`); sizes below ``2k`` act as
        ``2k``. Blocks of one stratum are never mixed with another's.
    repair : "auto", "none", str or callable, default "auto"
        Border-repair step: ``"auto"`` is the built-in :func:`batch_local_search`; a
        registered improvement name (``pysdcmicro.improvements()``) or a callable
        ``improver(Z, labels, k, ctx, **options)`` also works; ``"none"`` skips the repair.
    repair_options : dict, optional
        Options of the repair step (for ``"auto"``: ``rounds``, ``neighbours``, ``max_size``,
        ``tol``): the quality/time knob, with ``repair_passes``.
    repair_passes : int, default 2
        Passes over differently placed windows.
    window_size : int, optional
        Records per repair window (default: ``block_size``).
    repair_scope : {"all", "borders"}, default "all"
        Built-in repair only. ``"borders"``: in each window, a group whose records and
        neighbour groups' records all come from one block (second pass: one window of the
        first) starts settled, so the search starts at the borders and spreads only as far
        as changes reach (less work in few dimensions; in 10 it saved no time). ``"all"``:
        every group starts unsettled.
    n_jobs : int, optional
        Worker processes (default: every available core; 1 = this process).
    client : dask.distributed.Client or str, optional
        Run on this Dask cluster instead (client or scheduler address).
    **kwargs
        Every other parameter of :func:`pysdcmicro.microaggregate` (``variables``,
        ``strata``, ``improve``, ``rng``, ``time_limit``, ``progress``, method options).

    Returns
    -------
    MicroaggregationResult
        A k-partition of the whole data set, IL over the whole data set; ``info["blocks"]``
        (count, sizes, statuses, executor), ``info["repair"]`` (passes, windows improved, IL
        before and after: the repair gain) and ``info["memory"]`` (peak memory of this
        process and of the workers).

    Notes
    -----
    Time O(n B d / k) for MDAV on blocks of B records plus O(n L s d) per repair round
    (L = 8 neighbour groups, s <= 2k - 1); memory O(n d) here plus one block per worker
    task in flight. Same ``rng`` seed, same result with any executor: every block and window
    gets a seed drawn up front. No lower bound is reported (blocking restricts the groups).

    Examples
    --------
    >>> import numpy as np
    >>> from pysdcmicro.large import microaggregate_blocked
    >>> X = np.random.default_rng(0).normal(size=(400, 3))
    >>> res = microaggregate_blocked(X, 4, block_size=100, n_jobs=1, rng=0)
    >>> res.info["blocks"]["count"], int(res.group_sizes.min()) >= 4
    (4, True)
    >>> res.info["repair"]["sse_after"] <= res.info["repair"]["sse_before"]
    True
    """
    from .._api import microaggregate

    options = {"size": "auto" if block_size is None else block_size, "repair": repair,
               "repair_options": repair_options, "repair_passes": repair_passes, "window_size": window_size,
               "repair_scope": repair_scope}
    return microaggregate(frame, k, method=method, blocks=options, n_jobs=n_jobs, client=client, **kwargs)
