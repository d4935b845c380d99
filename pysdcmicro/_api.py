"""The facade: :func:`microaggregate` and the estimator :class:`Microaggregator`.

It validates the caller's input once, at this boundary, and hands arrays to the pipeline
(:mod:`pysdcmicro._pipeline`): partition -> release -> result. Groups of variables and Dask
DataFrames are compositions of pipeline runs.
"""

from __future__ import annotations

import sys
import time
import warnings
from typing import Any, Callable

import numpy as np
import pandas as pd

from . import _pipeline, _registry
from ._aggregate import MEASURES, MISSING
from ._context import TerminalProgress as _TerminalProgress
from ._errors import ConstantColumnWarning, DisclosureRiskWarning, InvalidInputError, InvalidTypeError
from ._release import across_groups, across_groups_message, verify_release_values, wildcard_frequencies
from ._result import MicroaggregationResult
from ._solve import resolve_improve, worst_status
from ._standardize import SCALINGS
from ._validation import (as_dataset, check_choice, check_k, check_number, check_positive_int, check_rng,
                          check_time_limit, check_variable_groups, check_weights,
                          is_weight_label)

__all__ = ["microaggregate", "Microaggregator"]

#: Accepted values of ``strata_scaling``: z-scores over the whole data (default) or within
#: each stratum (what sdcMicro does, as it runs its method once per stratum).
STRATA_SCALINGS = ("global", "stratum")


def microaggregate(frame: Any, k: int, *, variables: Any = None, method: str | Callable = "auto",
                   strata: Any = None, improve: Any = None, improve_options: dict | None = None,
                   scaling: str = "standardize", strata_scaling: str = "global", rng: Any = None,
                   time_limit: float | None = None, progress: Any = None, keep_history: bool = False,
                   blocks: Any = "auto", n_jobs: int | None = None, client: Any = None,
                   missing: str = "keep", measure: str = "mean", trim: float = 0.0, weights: Any = None,
                   decimals: int | None = None, **method_options: Any) -> MicroaggregationResult:
    """Microaggregate the chosen columns of ``frame`` into groups of at least ``k`` records.

    Each record's chosen variables are replaced by its group's mean; the grouping minimises
    the information loss IL = 100 * SSE / SST on the standardized variables.

    Parameters
    ----------
    frame : DataFrame or array_like of shape (n, p)
        The records. Never modified.
    k : int
        Minimum group size (the k of k-anonymity), 2 <= k <= n.
    variables : column label, list, or list of lists, optional
        Columns microaggregated jointly. Default: every numeric column that is not a
        stratum or weight column, except identifier-like and constant ones, which a warning
        names. For an array: column positions. A list of lists (``[["a", "b"], ["c", "d"]]``)
        gives groups of variables, each with its own partition; k-anonymity then holds within
        each group's columns, not across groups (``info["variable_groups"]``): the records
        whose combination of every group's values is shared by fewer than ``k`` records are
        counted in ``info["across_groups"]`` and named in a ``DisclosureRiskWarning``.
    method : str or callable, default "auto"
        A registered method name (``pysdcmicro.methods()``) or a callable
        ``core(Z, k, ctx, **options)`` returning labels or a ``Solution``. ``"auto"`` does
        a fixed, reproducible amount of work, or with ``time_limit`` uses the whole budget.
    strata : column label or list, optional
        Microaggregate within each combination of these columns' values (``k`` records each).
    improve : str, callable, (name, options) tuple, or list of them, optional
        Improvement steps run after the method (local search). Each never raises the SSE.
    improve_options : dict, optional
        Options of a single improvement step.
    scaling : {"standardize", "none"}, default "standardize"
        Compare records on z-scores (``ddof=1``) or raw values; IL is always on z-scores.
    strata_scaling : {"global", "stratum"}, default "global"
        With ``strata``: z-scores over the whole data, or within each stratum (as
        sdcMicro). IL is always on whole-data z-scores.
    rng : None, int >= 0 or numpy.random.Generator
        Seed of every random choice. None is the fixed seed 0, so the
        same data and settings give the same release (without ``time_limit``): a re-run
        never publishes a second, different masking of the same records, which an
        intruder could intersect with the first. Another integer gives another partition;
        a Generator (``numpy.random.default_rng()`` for fresh entropy) is used as given.
        The seed is recorded in ``result.settings["rng"]``.
    time_limit : float, optional
        Seconds, from the start of this call. A method that reaches it returns its best
        partition so far with ``status="limit"``, never an exception. Runs stopped by the
        clock are not reproducible even with a seed; runs without ``time_limit`` are.
    progress : None, True or callable, optional
        ``True`` prints progress to stderr; a callable receives ``ProgressEvent`` objects.
    keep_history : bool, default False
        Store the progress events in ``result.history``.
    blocks : None, "auto", int or dict, default "auto"
        The large-data path (:mod:`pysdcmicro.large`: blocks of near records solved in
        parallel, then border repair): ``"auto"`` above ``pysdcmicro.large.LARGE_N``
        records, an integer block size, a dict of its options, or ``None`` (never).
    n_jobs : int, optional
        Worker processes or threads (scikit-learn's convention: None or 0 = the default,
        -1 = every core): the blocks' workers on the large-data path, else those of
        ``auto``, ``decomposition``, ``column-generation`` (CP-SAT threads, default 1) and
        ``vmdav`` (same labels on any number). The other defaults use every core.
    client : dask.distributed.Client or str, optional
        Run the blocks on this Dask cluster (a client or an address; ``pysdcmicro[dask]``).
    missing : {"keep", "error"}, default "keep"
        Missing values (NaN) in the chosen columns: ``"keep"`` groups their records with
        the others (on z-scores where a missing cell is imputed by regression on the
        record's other columns), releases the measure over the group's observed values and
        leaves every missing cell missing; a missing cell matches any value in the
        k-anonymity check, as in sdcMicro. ``"error"`` refuses them.
    measure : {"mean", "median", "trim", "onestep"}, default "mean"
        The released value of a group (sdcMicro's ``measure``): mean, median, trimmed
        mean (``trim`` = proportion dropped at each end, as R's ``mean(x, trim=)``), or
        sdcMicro's one-step robust mean (values clipped around the group median). The
        partition is the method's own (built for the mean); the measure replaces the group
        value afterwards, and IL is that of the values released.
    trim : float, default 0
        With ``measure="trim"``: proportion in [0, 0.5] dropped at each end of each group.
    weights : column label or array of n numbers, optional
        Sampling weights (finite, > 0): each group releases its weighted mean, so weighted
        totals are kept, or with ``measure="median"`` its weighted median (the grouping is
        unweighted). A zero weight is refused: a group
        whose other records weigh 0 would release one record's own values.
    decimals : int, optional
        Round released values to this many decimals (0: integer columns stay integer);
        IL and k-anonymity are those of the rounded values.
    **method_options
        Options of the chosen method (see ``pysdcmicro.methods()``).

    Returns
    -------
    MicroaggregationResult

    Raises
    ------
    InvalidInputError (a ValueError), InvalidTypeError (a TypeError)
        For bad input; the message names the parameter or column, the rule and the value.

    Notes
    -----
    Constant columns are kept unchanged and add nothing to SSE or SST (a
    :class:`~pysdcmicro.ConstantColumnWarning` says so); if every chosen column is
    constant, IL is undefined and an error is raised. On the large-data path the groups
    come from blocks plus border repair (``info["blocks"]``), not from the method run on
    the whole data; ``blocks=None`` keeps the whole data.

    Examples
    --------
    >>> import pandas as pd
    >>> from pysdcmicro import microaggregate
    >>> df = pd.DataFrame({"id": list("abcdef"),
    ...                    "income": [10.0, 11.0, 12.0, 50.0, 52.0, 54.0],
    ...                    "age": [30, 31, 33, 60, 61, 62]})
    >>> res = microaggregate(df, 3, variables=["income", "age"])
    >>> res.data["income"].tolist()
    [11.0, 11.0, 11.0, 52.0, 52.0, 52.0]
    >>> res.data["id"].tolist()   # other columns pass through untouched
    ['a', 'b', 'c', 'd', 'e', 'f']
    >>> res.status, res.n_groups
    ('done', 2)
    """
    started = time.monotonic()
    method_options, n_jobs = _renamed_options(method, method_options, n_jobs)
    rng = check_rng(rng)
    if rng is None:
        rng = DEFAULT_SEED
    common = dict(method=method, strata=strata, improve=improve, improve_options=improve_options, scaling=scaling,
                  strata_scaling=strata_scaling, rng=rng, time_limit=time_limit, progress=progress,
                  keep_history=keep_history, blocks=blocks, n_jobs=n_jobs, client=client)
    groups_of_variables = check_variable_groups(variables, getattr(frame, "columns", None))
    if _pipeline.per_variable_method(method) is not None:  # e.g. onedims: once per column
        res = _microaggregate_per_variable(frame, k, variables, groups_of_variables, started, missing=missing,
                                           measure=measure, trim=trim, weights=weights, decimals=decimals,
                                           **common, **method_options)
        if res is not None:
            return res
    if groups_of_variables is not None:
        return _microaggregate_groups(frame, k, groups_of_variables, started, missing=missing, measure=measure,
                                      trim=trim, weights=weights, decimals=decimals, **common, **method_options)
    if _is_dask_frame(frame):
        if (missing, measure, trim, weights, decimals) != ("keep", "mean", 0.0, None, None):
            raise InvalidInputError("a Dask DataFrame takes none of `measure`, `trim`, `weights`, `decimals`, "
                                    "`missing`; compute() it into pandas first.")
        return _microaggregate_dask(frame, k, variables=variables, **common, **method_options)
    missing, measure, trim, decimals = _check_release(missing, measure, trim, weights, decimals)
    label_weights = is_weight_label(weights, getattr(frame, "columns", None))
    ds = as_dataset(frame, variables, strata, missing=missing, exclude=[weights] if label_weights else None)
    w, weight_column = check_weights(weights, ds)
    k = check_k(k, ds.n)
    time_limit = check_time_limit(time_limit)
    scaling, strata_scaling = _check_scaling(scaling, strata_scaling)
    if not isinstance(keep_history, bool):
        raise InvalidTypeError(f"`keep_history` must be True or False; got {keep_history!r}.")
    job = _pipeline.Job(  # (keywords evaluated in order: method, then improve, then progress)
        ds=ds, k=k, method=_pipeline.resolve_method(method, method_options),
        steps=resolve_improve(improve, improve_options), callback=_progress_callback(progress), scaling=scaling,
        strata_scaling=strata_scaling, rng=rng, time_limit=time_limit, started=started, keep_history=keep_history,
        blocks=blocks, n_jobs=n_jobs, client=client, missing=missing, measure=measure, trim=trim, weights=w,
        weight_column=weight_column, decimals=decimals)
    return _pipeline.run(job, stacklevel=2)


def _renamed_options(method: Any, options: dict, n_jobs: Any) -> tuple[dict, Any]:
    """A registered method's options with their deprecated names replaced (a ``FutureWarning``
    for each, shown at the caller's line outside the package), and ``n_jobs``: a method's
    ``n_jobs`` option is this function's ``n_jobs`` parameter."""
    if not isinstance(method, str) or not options:
        return options, n_jobs
    try:
        spec = _registry.get_method(method)
    except (InvalidInputError, InvalidTypeError):  # reported by the pipeline, with the others
        return options, n_jobs
    if not any(name in spec.renamed for name in options):
        return options, n_jobs
    old = next((o for o, new in spec.renamed.items() if new == "n_jobs" and o in options), None)
    if old is not None and n_jobs is not None and options[old] != n_jobs:
        raise InvalidInputError(f"method {spec.name!r}: give `n_jobs` only (`{old}` is its deprecated name); got "
                                f"both, n_jobs={n_jobs!r} and {old}={options[old]!r}.")
    options = spec.rename_deprecated(options, stacklevel=_outside_package())
    if "n_jobs" in options:
        n_jobs = options.pop("n_jobs")
    return options, n_jobs


def _outside_package() -> int:
    """The ``stacklevel`` of :meth:`MethodSpec.rename_deprecated` (called from
    :func:`_renamed_options`) that shows a warning at the first frame outside this package."""
    frame, level = sys._getframe(2), 2  # microaggregate's frame: 3 above the warning's caller
    while frame is not None and frame.f_globals.get("__name__", "").partition(".")[0] == "pysdcmicro":
        frame, level = frame.f_back, level + 1
    return level


def _check_release(missing: Any, measure: Any, trim: Any, weights: Any, decimals: Any) -> tuple:
    """``missing``, ``measure``, ``trim``, ``decimals`` checked (and ``weights`` against ``measure``)."""
    missing = check_choice(missing, "missing", MISSING)
    measure = check_choice(measure, "measure", MEASURES)
    trim = check_number(trim, "trim", low=0.0, high=0.5)
    if trim and measure != "trim":
        raise InvalidInputError(f'`trim` is only used with measure="trim"; got trim={trim:g} with measure={measure!r}.')
    decimals = check_positive_int(decimals, "decimals", minimum=0, allow_none=True)
    if weights is not None and measure not in ("mean", "median"):
        raise InvalidInputError(
            f'`weights` give weighted means or medians: they need measure="mean" or "median"; got measure={measure!r}.')
    return missing, measure, trim, decimals


def _check_scaling(scaling: Any, strata_scaling: Any) -> tuple[str, str]:
    scaling = check_choice(scaling, "scaling", SCALINGS)
    strata_scaling = check_choice(strata_scaling, "strata_scaling", STRATA_SCALINGS)
    if strata_scaling == "stratum" and scaling != "standardize":
        raise InvalidInputError(
            f'`strata_scaling` must be "global" when `scaling` is {scaling!r}; got "stratum" '
            "(per-stratum z-scores need scaling=\"standardize\")."
        )
    return scaling, strata_scaling


def _microaggregate_dask(frame: Any, k: int, *, variables: Any, strata: Any, client: Any, blocks: Any,
                         **kwargs: Any) -> MicroaggregationResult:
    """A Dask DataFrame: its chosen columns read here, the large-data path run on them, and a
    Dask DataFrame given back with those columns replaced lazily."""
    from .large._dask import dask_input, dask_output

    started = time.monotonic()
    with dask_input(frame, variables=variables, strata=strata, client=client) as inp:
        res = microaggregate(inp.local, k, variables=inp.chosen or None, strata=inp.strata or None,
                             client=inp.client, blocks=blocks, **kwargs)
    return dask_output(frame, inp, res, started)


def _microaggregate_groups(frame: Any, k: int, groups: list, started: float, *, rng: Any, time_limit: Any,
                           warn_across: bool = True, **kwargs: Any) -> MicroaggregationResult:
    """Groups of variables (``variables=[["a", "b"], ["c", "d"]]``), as mu-ARGUS: each
    group microaggregated independently with its own partition; the release combines them
    and is checked group by group (k-anonymity on each group's own columns). Records that
    the combination of the groups singles out are counted in ``info["across_groups"]`` and,
    with ``warn_across``, named in a ``DisclosureRiskWarning`` (a per-variable method such as
    ``onedims`` is per-variable by definition, which its report states: no warning)."""
    if _is_dask_frame(frame):
        raise InvalidInputError("groups of variables need a pandas DataFrame or an array; compute() the Dask "
                                "DataFrame first.")
    time_limit = check_time_limit(time_limit)
    flat = [v for group in groups for v in group]
    weights = kwargs.get("weights")
    label_weights = is_weight_label(weights, getattr(frame, "columns", None))
    ds = as_dataset(frame, flat, kwargs.get("strata"), missing=check_choice(kwargs.get("missing", "keep"), "missing",
                                                                             MISSING),
                    exclude=[weights] if label_weights else None)
    k = check_k(k, ds.n)
    results = []
    for g, group in enumerate(groups):
        budget = None
        if time_limit is not None:  # what is left, shared by the groups still to run
            budget = max(1e-3, (time_limit - (time.monotonic() - started)) / (len(groups) - g))
        results.append(microaggregate(frame, k, variables=group, rng=rng, time_limit=budget, **kwargs))
    if ds.is_frame:
        owner = {v: r for r, group in zip(results, groups) for v in group}
        parts = [owner[c].data[c] if c in owner else frame[c].copy(deep=True) for c in frame.columns]
        data = pd.concat(parts, axis=1)
        data.columns = frame.columns
        data.attrs = dict(frame.attrs)
        released = data[flat].to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        data = np.array(frame, dtype=np.float64, copy=True)
        for r, group in zip(results, groups):
            data[:, group] = r.data[:, group]
        released = data[:, flat]
    sse_value = float(sum(r.sse for r in results))
    total = float(sum(r.sst for r in results))
    il = 100.0 * sse_value / total
    index = {v: j for j, v in enumerate(flat)}
    positions = [[index[v] for v in group] for group in groups]
    verify_release_values(ds.X, released, k, il, what="the release of the variable groups", names=flat,
                          groups=positions)
    per_group = []
    for r, group, cols in zip(results, groups, positions):
        freq = wildcard_frequencies(released[:, cols])
        per_group.append({
            "variables": [str(v) for v in group], "n_groups": r.n_groups, "information_loss": r.information_loss,
            "sse": r.sse, "sst": r.sst, "status": r.status, "k_anonymous": bool(freq.min() >= k),
            "smallest_frequency": int(freq.min()), "lower_bound": r.lower_bound,
            "labels": r.labels.tolist(),
        })
    across = across_groups(released, k, flat)
    if across["records_below_k"] and warn_across:
        warnings.warn(across_groups_message(across, k), DisclosureRiskWarning, stacklevel=3)
    lower_il = gap = None
    if all(r.lower_bound is not None for r in results):
        lower_il = 100.0 * sum(r.lower_bound * r.sst / 100.0 for r in results) / total
        gap = 100.0 * (il - lower_il) / il if il > 0 else 0.0  # percent, as IL
    first = results[0]
    status = worst_status(r.status for r in results)
    message = "; ".join(f"[group {g + 1}] {r.message}" for g, r in enumerate(results) if r.message)
    info: dict = {"variable_groups": per_group, "labels_are_of": "the first variable group", "across_groups": across}
    info["missing_cells"] = int(sum(r.info.get("missing_cells", 0) for r in results))
    totals = {key: value for r in results for key, value in r.info.get("weighted_totals", {}).items()}
    if totals:
        info["weighted_totals"] = totals
        info["weight_column"] = first.info.get("weight_column")
    settings = dict(first.settings)
    settings["variables"] = list(flat)
    settings["variable_groups"] = [list(group) for group in groups]
    settings["time_limit"] = time_limit
    return MicroaggregationResult(
        data=data, labels=first.labels, groups=first.groups, k=k, method=first.method, sse=sse_value, sst=total,
        information_loss=il, lower_bound=lower_il, gap=gap, status=status, message=message,
        seconds=time.monotonic() - started, variables=list(flat), settings=settings, info=info,
        history=None)


def _microaggregate_per_variable(frame: Any, k: int, variables: Any, groups: list | None, started: float,
                                 **kwargs: Any) -> MicroaggregationResult | None:
    """A method that partitions one variable at a time (``per_variable`` in the registry:
    ``onedims``): every chosen column is a variable group of its own, microaggregated as
    groups of variables are; given groups are split into their columns (each column on its
    own inside each group). Constant columns are left unchanged (a warning names each).
    None when at most one column has spread: the ordinary path runs it (or refuses it)."""
    if _is_dask_frame(frame):
        raise InvalidInputError(f"method {kwargs['method']!r} microaggregates each variable on its own: it needs a "
                                "pandas DataFrame or an array; compute() the Dask DataFrame first.")
    if kwargs.get("client") is not None:
        raise InvalidInputError(f"method {kwargs['method']!r} sorts each variable on the whole data in this process; "
                                "it takes no Dask `client`; drop it.")
    weights = kwargs.get("weights")
    label_weights = isinstance(weights, (str, int, np.integer)) and not isinstance(weights, bool)
    ds = as_dataset(frame, variables if groups is None else [v for group in groups for v in group],
                    kwargs.get("strata"), missing=check_choice(kwargs.get("missing", "keep"), "missing", MISSING),
                    exclude=[weights] if label_weights else None)
    constant = _pipeline.constant_columns(ds.X)
    if ds.X.shape[1] - int(constant.sum()) < 1 or ds.X.shape[1] < 2:
        return None
    for j in np.flatnonzero(constant):
        warnings.warn(_pipeline.constant_column_message(ds.variables[j], ds.X[:, j]), ConstantColumnWarning,
                      stacklevel=3)
    res = _microaggregate_groups(frame, k, [[v] for v, c in zip(ds.variables, constant) if not c], started,
                                 warn_across=False, **kwargs)
    res.info["labels_are_of"] = "the first variable"
    res.variables = list(ds.variables)  # constant columns too: chosen, released unchanged
    res.settings["variables"] = list(ds.variables)
    return res


def _is_dask_frame(obj: Any) -> bool:
    """A Dask DataFrame, recognised without importing dask."""
    module = type(obj).__module__ or ""
    return module.split(".")[0] in ("dask", "dask_expr") and hasattr(obj, "npartitions") \
        and hasattr(obj, "to_delayed")


def _progress_callback(progress: Any) -> Callable | None:
    if progress is None or progress is False:
        return None
    if progress is True:
        return _TerminalProgress()
    if callable(progress):
        return progress
    raise InvalidTypeError(f"`progress` must be None, True or a callable; got {progress!r}.")


#: The seed of a run without ``rng``: a fixed one, so that running the same release twice
#: gives the same masked data (two different maskings of the same records leak more than
#: one).
DEFAULT_SEED = 0


class Microaggregator:
    """Estimator-style interface to :func:`microaggregate` (scikit-learn conventions).

    Parameters are those of :func:`microaggregate`; ``fit`` stores the result. The
    parameters follow scikit-learn's estimator contract: ``__init__`` only stores them,
    :meth:`get_params` / :meth:`set_params` read and change them (method options
    included, by name), so :func:`sklearn.base.clone` and grid searches work.

    Attributes
    ----------
    result_ : MicroaggregationResult
    labels_ : ndarray of int64
    information_loss_ : float

    Examples
    --------
    >>> import numpy as np
    >>> from pysdcmicro import Microaggregator
    >>> X = np.array([[0.0], [1.0], [2.0], [10.0], [11.0], [12.0]])
    >>> Microaggregator(k=3).fit_transform(X).ravel().tolist()
    [1.0, 1.0, 1.0, 11.0, 11.0, 11.0]
    >>> Microaggregator(k=3, method="mdav").set_params(k=2).get_params()["k"]
    2
    """

    _PARAMS = ("k", "method", "variables", "strata", "improve", "improve_options", "scaling", "strata_scaling",
               "rng", "time_limit", "progress")

    def __init__(self, k: int = 3, *, method: str | Callable = "auto", variables: Any = None,
                 strata: Any = None, improve: Any = None, improve_options: dict | None = None,
                 scaling: str = "standardize", strata_scaling: str = "global", rng: Any = None,
                 time_limit: float | None = None, progress: Any = None, **method_options: Any):
        self.k = k
        self.method = method
        self.variables = variables
        self.strata = strata
        self.improve = improve
        self.improve_options = improve_options
        self.scaling = scaling
        self.strata_scaling = strata_scaling
        self.rng = rng
        self.time_limit = time_limit
        self.progress = progress
        self._method_options = dict(method_options)

    def get_params(self, deep: bool = True) -> dict:
        """The parameters, method options included (``deep``: those of a parameter that is
        itself an estimator too, as ``name__param``)."""
        params = {name: getattr(self, name) for name in self._PARAMS}
        params.update(self._method_options)
        if deep:
            for name, value in list(params.items()):
                if hasattr(value, "get_params") and not isinstance(value, type):
                    params.update((f"{name}__{key}", v) for key, v in value.get_params(deep=True).items())
        return params

    def set_params(self, **params: Any) -> "Microaggregator":
        """Set parameters; a name that is not a parameter of :func:`microaggregate` here is
        a method option (checked against the method by :meth:`fit`)."""
        nested: dict = {}
        for name, value in params.items():
            if "__" in name:
                outer, inner = name.split("__", 1)
                nested.setdefault(outer, {})[inner] = value
            elif name in self._PARAMS:
                setattr(self, name, value)
            else:
                self._method_options[name] = value
        for outer, values in nested.items():
            target = self.get_params(deep=False).get(outer)
            if not hasattr(target, "set_params"):
                raise InvalidInputError(f"`{outer}` is not an estimator parameter with parameters of its own; "
                                        f"got {outer}__{next(iter(values))}.")
            target.set_params(**values)
        return self

    def __sklearn_tags__(self):
        """scikit-learn's tags (read only by scikit-learn, so imported from it here): a
        transformer of 2-D numeric data, missing values allowed, no target."""
        from sklearn.utils import InputTags, Tags, TargetTags, TransformerTags

        return Tags(estimator_type=None, target_tags=TargetTags(required=False),
                    transformer_tags=TransformerTags(), input_tags=InputTags(allow_nan=True),
                    non_deterministic=False)

    def fit(self, X: Any, y: Any = None) -> "Microaggregator":
        self.result_ = microaggregate(
            X, self.k, method=self.method, variables=self.variables, strata=self.strata,
            improve=self.improve, improve_options=self.improve_options, scaling=self.scaling,
            strata_scaling=self.strata_scaling, rng=self.rng, time_limit=self.time_limit, progress=self.progress,
            **self._method_options)
        self.labels_ = self.result_.labels
        self.information_loss_ = self.result_.information_loss
        return self

    def fit_transform(self, X: Any, y: Any = None) -> Any:
        return self.fit(X).result_.data

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params(deep=False).items()
                         if v is not None and not (k == "scaling" and v == "standardize")
                         and not (k == "strata_scaling" and v == "global"))
        return f"Microaggregator({args})"
