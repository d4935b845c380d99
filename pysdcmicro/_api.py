"""The facade: :func:`microaggregate` and the estimator :class:`Microaggregator`.

Pipeline (STYLE item 7): validate -> standardize -> partition (registered method, then
optional improvement steps; per stratum) -> aggregate -> metrics.
"""

from __future__ import annotations

import math
import sys
import time
import warnings
from typing import Any, Callable

import numpy as np
import pandas as pd

from . import _registry
from ._context import Context, ProgressEvent
from ._errors import ConstantColumnWarning, InvalidInputError, InvalidTypeError, StratumTooSmallError
from ._partition import canonical_labels, check_partition, groups_from_labels, sse, sst
from ._result import MicroaggregationResult, Solution
from . import _interrupt
from ._release import release_sse_sst, verify_release_values
from ._standardize import SCALINGS, standardization, standardize
from ._aggregate import MEASURES, MISSING, group_statistic, round_release, standardization_with_missing
from ._validation import (as_dataset, check_choice, check_k, check_number, check_positive_int, check_rng,
                          check_time_limit,
                          check_variable_groups, check_weights)

__all__ = ["microaggregate", "Microaggregator"]

_STATUS_RANK = {"done": 0, "limit": 1, "infeasible": 2}

#: Accepted values of ``strata_scaling``: z-scores over the whole data (default) or within
#: each stratum (what sdcMicro does, as it runs its method once per stratum).
STRATA_SCALINGS = ("global", "stratum")


class _Step:
    """A resolved improvement step: a registered name or a user callable, with options."""

    def __init__(self, spec_or_callable: Any, options: dict):
        if callable(spec_or_callable) and not isinstance(spec_or_callable, _registry.MethodSpec):
            self.name = getattr(spec_or_callable, "__name__", "custom")
            self.core = spec_or_callable
            self.spec = None
        else:
            self.spec = spec_or_callable
            self.name = spec_or_callable.name
            self.core = spec_or_callable.core
            self.spec.check_options(options)
        self.options = options

    def settings(self) -> dict:
        opts = dict(self.spec.defaults()) if self.spec else {}
        opts.update(self.options)
        return {"name": self.name, "options": opts}


def _resolve_improve(improve: Any, improve_options: dict | None) -> list[_Step]:
    if improve is None:
        if improve_options:
            raise InvalidInputError("`improve_options` was given but `improve` is None.")
        return []
    items = improve if isinstance(improve, list) else [improve]
    steps = []
    for item in items:
        options = dict(improve_options or {}) if len(items) == 1 else {}
        if isinstance(item, tuple):
            if len(item) != 2 or not isinstance(item[1], dict):
                raise InvalidTypeError(
                    f"an `improve` step given as a tuple must be (name, options_dict); got {item!r}."
                )
            item, options = item[0], {**options, **item[1]}
        if isinstance(item, str):
            steps.append(_Step(_registry.get_improvement(item), options))
        elif callable(item):
            steps.append(_Step(item, options))
        else:
            raise InvalidTypeError(
                f"`improve` must be an improvement name, a callable, or a list of them; got {item!r}."
            )
    return steps


def _as_solution(out: Any) -> Solution:
    if isinstance(out, Solution):
        return out
    return Solution(labels=np.asarray(out))


def _run_core(call: Callable[[], Any], ctx: Context, fallback: np.ndarray | None,
              Z: np.ndarray | None = None, k: int | None = None) -> Solution:
    """Run a core; on Ctrl-C stop every deadline and return the incumbent (or, when the
    core had found none yet, the records grouped in runs of k along their first principal
    axis: a valid k-partition in O(n d + n log n), so an interrupt always releases)."""
    try:
        return _as_solution(call())
    except KeyboardInterrupt:
        ctx.deadline.stop()
        labels, _ = ctx.incumbent
        if labels is not None and np.shape(labels) != (Z.shape[0] if Z is not None else np.shape(labels)[0],):
            labels = None  # not a partition of these records (never expected; never released)
        message = "interrupted (Ctrl-C): best partition found so far"
        if labels is None:
            labels = fallback
        if labels is None and Z is not None and k is not None:
            labels = _principal_axis_runs(Z, k)
            message = ("interrupted (Ctrl-C) before the method had a partition: records grouped in runs of k "
                       "along their first principal axis")
        if labels is None:
            raise
        return Solution(labels=labels, status="limit", message=message)


def _principal_axis_runs(Z: np.ndarray, k: int) -> np.ndarray:
    """Sort the records along their first principal axis (the top eigenvector of the d x d
    matrix Z'Z, one pass over the data: it runs after a Ctrl-C, when time counts) and cut
    the order into runs of k; the last run takes the rest."""
    n, d = Z.shape
    C = Z.T @ Z
    v = np.ones(d) / math.sqrt(d)
    if np.isfinite(C).all() and C.any():
        v = np.linalg.eigh(C)[1][:, -1]
    score = Z @ v
    order = np.argsort(score)  # unstable (4x faster); the stable order is taken where there are ties
    ranked = score[order]
    if n > 1 and (np.any(ranked[1:] == ranked[:-1]) or np.isnan(ranked[-1])):
        order = np.argsort(score, kind="stable")
    labels = np.empty(n, dtype=np.int64)
    labels[order] = np.minimum(np.arange(n) // k, max(n // k - 1, 0))
    return labels


def _principal_axis_runs_by_stratum(Z: np.ndarray, k: int, strata: np.ndarray | None) -> np.ndarray:
    """:func:`_principal_axis_runs` within each stratum (groups never cross strata)."""
    if strata is None:
        return _principal_axis_runs(Z, k)
    labels = np.empty(Z.shape[0], dtype=np.int64)
    offset = 0
    for s in np.unique(strata):
        rows = np.flatnonzero(strata == s)
        lab = _principal_axis_runs(Z[rows], k)
        labels[rows] = lab + offset
        offset += int(lab.max()) + 1
    return labels


def _solve_block(method_core: Callable, options: dict, steps: list[_Step], Z: np.ndarray, k: int,
                 ctx: Context) -> tuple[Solution, list[str]]:
    """Method then improvement steps on one block of records (the whole data or a stratum)."""
    n = Z.shape[0]
    sol = _run_core(lambda: method_core(Z, k, ctx, **options), ctx, None, Z, k)
    _check_core_output(sol.labels, n, k, "method")
    statuses = [sol.status]
    messages = [sol.message] if sol.message else []
    info = dict(sol.info)
    lower = sol.lower_bound
    labels = sol.labels
    current = sse(Z, labels)
    for step in steps:
        ctx.reset_incumbent()
        ctx.offer(labels, current)
        step_ctx = ctx.child(stage=step.name)
        new = _run_core(lambda: step.core(Z, labels, k, step_ctx, **step.options), step_ctx, labels)
        _check_core_output(new.labels, n, k, f"improvement {step.name!r}")
        new_sse = sse(Z, new.labels)
        if new_sse <= current + 1e-9 * max(1.0, abs(current)):
            labels, current = new.labels, new_sse
        else:  # an improvement step must never make things worse; keep the input
            messages.append(f"{step.name}: result worse than its input was discarded")
        statuses.append(new.status)
        if new.message:
            messages.append(f"{step.name}: {new.message}")
        for key, value in new.info.items():
            info[f"{step.name}.{key}" if key in info else key] = value
        if new.lower_bound is not None:
            lower = new.lower_bound if lower is None else max(lower, new.lower_bound)
    status = max(statuses, key=_STATUS_RANK.__getitem__)
    return Solution(labels=labels, status=status, message="; ".join(messages), lower_bound=lower,
                    info=info), messages


def _check_core_output(labels: np.ndarray, n: int, k: int, what: str) -> None:
    try:
        check_partition(np.asarray(labels), n, k)
    except InvalidInputError as exc:  # a bug in a core, not a user error
        raise RuntimeError(f"{what} returned an invalid k-partition: {exc}") from None


class _TerminalProgress:
    """Show progress events on a terminal (stderr by default).

    On a terminal (``live``): one line, rewritten in place with a carriage return at most
    every ``interval`` seconds (0.1 s by default), fitted to the terminal's width by
    dropping the least important fields whole (never cut mid-number), ended with a newline
    by :meth:`close`. Elsewhere (a log file, a notebook): one line per event, at most every
    ``interval`` seconds (2 s by default). The last event is always shown by :meth:`close`,
    so the final state (best IL, bound) is on screen when the run ends.

    A *heartbeat* (a daemon thread) shows the last state again, its clock moved on, when no
    line was shown for ``heartbeat`` seconds (2 s by default; ``None``: off), so a long step
    that reports nothing (a solver call, a worker process) still updates the display.
    """

    def __init__(self, interval: float | None = None, stream=None, *, live: bool | None = None,
                 heartbeat: float | None = 2.0):
        import threading

        self.stream = stream if stream is not None else sys.stderr
        if live is None:
            isatty = getattr(self.stream, "isatty", None)
            live = bool(isatty()) if callable(isatty) else False
        self.live = live
        self.interval = interval if interval is not None else (0.1 if live else 2.0)
        self.heartbeat = heartbeat
        self._last = -math.inf
        self._pending: ProgressEvent | None = None
        self._latest: tuple[ProgressEvent, float] | None = None
        self._width = 0
        self._shown = False
        self._lock = threading.RLock()
        self._thread = None
        self._closed = threading.Event()

    def __call__(self, event: ProgressEvent) -> None:
        now = time.monotonic()
        with self._lock:
            self._latest = (event, now)
            if now - self._last >= self.interval:
                self._last = now
                self._show(event)
            else:
                self._pending = event
        if self.heartbeat is not None and self._thread is None:
            import threading

            self._thread = threading.Thread(target=self._beat, name="pysdcmicro-progress", daemon=True)
            self._thread.start()

    def _beat(self) -> None:
        period = max(0.05, self.heartbeat / 4)
        while not self._closed.wait(period):
            with self._lock:
                now = time.monotonic()
                if self._latest is None or now - self._last < self.heartbeat:
                    continue
                event, when = self._latest
                import dataclasses

                moved = dataclasses.replace(event, elapsed=event.elapsed + (now - when))
                self._last = now
                self._show(moved)

    def _show(self, event: ProgressEvent) -> None:
        self._pending = None
        self._shown = True
        try:
            if self.live:
                import shutil

                columns = shutil.get_terminal_size((100, 24)).columns - 1
                text = event.fit(columns)
                self.stream.write("\r" + text.ljust(self._width))
                self._width = len(text)
            else:
                self.stream.write(str(event) + "\n")
            self.stream.flush()
        except (OSError, ValueError):  # a closed stream must never stop the computation
            pass

    def close(self) -> None:
        """Show the last event if it was held back, and end the live line."""
        self._closed.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
            self._thread = None
        with self._lock:
            if self._pending is not None:
                self._show(self._pending)
            if self.live and self._shown:
                try:
                    self.stream.write("\n")
                    self.stream.flush()
                except (OSError, ValueError):
                    pass
                self._shown = False


def _progress_callback(progress: Any) -> Callable | None:
    if progress is None or progress is False:
        return None
    if progress is True:
        return _TerminalProgress()
    if callable(progress):
        return progress
    raise InvalidTypeError(f"`progress` must be None, True or a callable; got {progress!r}.")


def _versions() -> dict:
    from . import __version__

    versions = {"pysdcmicro": __version__, "numpy": np.__version__, "pandas": pd.__version__}
    mod = sys.modules.get("ortools")
    if mod is not None:
        versions["ortools"] = getattr(mod, "__version__", "?")
    return versions


def _draw_seed() -> int:
    """A fresh seed for a run without one (63 bits of OS entropy), recorded in ``settings``."""
    return int(np.random.SeedSequence().entropy) & ((1 << 63) - 1)


def _rng_setting(rng: Any) -> Any:
    if rng is None or isinstance(rng, (int, np.integer)):
        return None if rng is None else int(rng)
    return f"<{type(rng).__name__} given by the caller>"


def microaggregate(frame: Any, k: int, *, variables: Any = None, method: str | Callable = "auto",
                   strata: Any = None, improve: Any = None, improve_options: dict | None = None,
                   scaling: str = "standardize", strata_scaling: str = "global", rng: Any = None,
                   time_limit: float | None = None, progress: Any = None, keep_history: bool = False,
                   blocks: Any = "auto", n_jobs: int | None = None, client: Any = None,
                   missing: str = "keep", measure: str = "mean", trim: float = 0.0, weights: Any = None,
                   decimals: int | None = None, **method_options: Any) -> MicroaggregationResult:
    """Microaggregate the chosen columns of ``frame`` into groups of at least ``k`` records.

    Each record's chosen variables are replaced by the mean of its group; the grouping
    minimises (heuristically, or with a certified bound for the optimisation methods) the
    information loss IL = 100 * SSE / SST on the standardized variables.

    Parameters
    ----------
    frame : DataFrame or array_like of shape (n, p)
        The records. Never modified.
    k : int
        Minimum group size (the k of k-anonymity), 2 <= k <= n.
    variables : column label, list, or list of lists, optional
        Columns microaggregated jointly. Default: every numeric (non-boolean) column that
        is not a stratum or weight column, except identifier-like columns (integer values, a
        different one on every record and nearly consecutive, or an identifier-like name such
        as ``id``) and constant ones: those are left out with an
        :class:`~pysdcmicro._validation.IdentifierColumnWarning` naming them. For an array:
        column positions (every column by default). A list of lists
        (``[["a", "b"], ["c", "d"]]``) gives groups of variables, each microaggregated
        independently with its own partition (as mu-ARGUS does); ``info["variable_groups"]``
        then holds each group's partition, IL and k-anonymity, and k-anonymity holds within
        each group's columns (not across groups).
    method : str or callable, default "auto"
        A registered method name (``pysdcmicro.methods()`` lists them) or a callable
        ``core(Z, k, ctx, **options)`` returning labels or a ``Solution``. ``"auto"``
        without ``time_limit`` does a fixed, reproducible amount of work (never worse than
        MDAV followed by two-swap); with ``time_limit`` it uses the whole budget on every
        core (see ``docs/guide/auto.md``).
    strata : column label or list, optional
        Microaggregate within each combination of these columns' values (sdcMicro's
        ``strata_variables``). A stratum with fewer than ``k`` records is an error.
    improve : str, callable, (name, options) tuple, or list of them, optional
        Improvement steps run after the method (local search). Each never raises the SSE.
    improve_options : dict, optional
        Options of a single improvement step.
    scaling : {"standardize", "none"}, default "standardize"
        How records are compared while building the partition: z-scores (the literature's
        convention, with ``ddof=1``) or the raw values. IL is always computed on z-scores.
    strata_scaling : {"global", "stratum"}, default "global"
        With ``strata`` and ``scaling="standardize"``: the z-scores that build each
        stratum's partition are taken over the whole data (``"global"``) or within the
        stratum (``"stratum"``, as sdcMicro does: it runs its method on each stratum
        separately, so e.g. its MDAV weighs variables by their variance in the stratum).
        The two give the same IL measure (always on whole-data z-scores) but may group
        differently. Ignored without ``strata``.
    rng : None, int >= 0 or numpy.random.Generator
        Seed of every random choice (``np.random.default_rng(rng)`` is made once). Without
        one, a seed is drawn and recorded in ``result.settings["rng"]``: passing it back
        repeats the run exactly, provided no clock stopped it (no ``time_limit``).
    time_limit : float, optional
        Seconds for the algorithm, measured from the start of this call. A method that
        reaches it returns its best partition so far with ``status="limit"``; it never
        raises. Runs stopped by the clock depend on the machine's speed, so they are not
        reproducible even with a seed; runs without ``time_limit`` are.
    progress : None, True or callable, optional
        ``True`` prints progress to stderr; a callable receives
        :class:`~pysdcmicro.ProgressEvent` objects.
    keep_history : bool, default False
        Store the progress events in ``result.history``.
    blocks : None, "auto", int or dict, default "auto"
        The large-data path (:mod:`pysdcmicro.large`): split the records into blocks of
        near records, solve the blocks in parallel, then repair the block borders.
        ``"auto"`` takes it above ``pysdcmicro.large.LARGE_N`` (50 000) records; an integer
        takes it with that block size; a dict gives its options (``size``, ``repair``,
        ``repair_options``, ``repair_passes``, ``window_size``, ``repair_scope``); ``None``
        never blocks.
    n_jobs : int, optional
        Worker processes for the blocks (default: every available core; 1 runs them in
        this process). Besides the large-data path, only whole-data ``vmdav`` uses it: the
        threads of its compiled rounds (same labels on any number).
    client : dask.distributed.Client or str, optional
        Run the blocks on this Dask cluster (a client or a scheduler address) instead of
        local processes. A Dask DataFrame ``frame`` also runs there. Needs the optional
        extra ``pysdcmicro[dask]``.
    missing : {"keep", "error"}, default "keep"
        Missing values (NaN) in the chosen columns: ``"keep"`` groups their records with
        the others (the partition is built on z-scores where a missing cell is imputed by
        the column mean, i.e. z = 0), releases in each column the measure over the group's
        members observed there, and leaves every missing cell missing; k-anonymity then
        follows sdcMicro's rule for missing key values (a missing cell matches any value).
        ``"error"`` refuses them.
    measure : {"mean", "median", "trim"}, default "mean"
        The released value of a group (sdcMicro's ``measure``): mean, median, or trimmed
        mean (``trim`` = proportion dropped at each end, as R's ``mean(x, trim=)``). The
        partition is the method's own (built for the mean); the measure replaces the group
        value afterwards, and IL is that of the values released.
    trim : float, default 0
        With ``measure="trim"``: proportion in [0, 0.5] dropped at each end of each group.
    weights : column label or array of n numbers, optional
        Sampling weights (finite, >= 0): each group releases its weighted mean, so the
        weighted total of every microaggregated column is kept. The grouping itself is
        unweighted. The weight column passes through untouched.
    decimals : int, optional
        Round released values to this many decimals (>= 0); with 0 a DataFrame column
        gets an integer dtype (``Int64`` when it has missing cells). IL and k-anonymity
        are those of the rounded values. Without it, microaggregated integer columns
        become float64 (group means).
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
    Constant columns are kept unchanged and contribute nothing to SSE or SST (a
    :class:`~pysdcmicro.ConstantColumnWarning` says so). If every chosen column is
    constant, IL is undefined and an error is raised.

    With ``strata``, each stratum is partitioned on its own; IL is that of the whole data
    set (on whole-data z-scores), whatever ``strata_scaling`` is.

    On the large-data path the groups come from blocks plus border repair, not from the
    method run on the whole data (MDAV's groups then differ from sdcMicro's); ``info``
    says so (``blocks``, ``repair``, ``memory``). Pass ``blocks=None`` for whole-data.

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
    rng = check_rng(rng)
    if rng is None:
        rng = _draw_seed()
    groups_of_variables = check_variable_groups(variables)
    if groups_of_variables is not None:
        return _microaggregate_groups(
            frame, k, groups_of_variables, started, method=method, strata=strata, improve=improve,
            improve_options=improve_options, scaling=scaling, strata_scaling=strata_scaling, rng=rng,
            time_limit=time_limit, progress=progress, keep_history=keep_history, blocks=blocks, n_jobs=n_jobs,
            client=client, missing=missing, measure=measure, trim=trim, weights=weights, decimals=decimals,
            **method_options)
    if _is_dask_frame(frame) and (missing, measure, trim, weights, decimals) != ("keep", "mean", 0.0, None, None):
        raise InvalidInputError("a Dask DataFrame takes none of `measure`, `trim`, `weights`, `decimals`, "
                                "`missing`; compute() it into pandas first.")
    if _is_dask_frame(frame):  # the large-data path reads it, runs, and returns a Dask DataFrame
        from .large._dask import microaggregate_dask_frame

        return microaggregate_dask_frame(
            frame, k, variables=variables, method=method, strata=strata, improve=improve,
            improve_options=improve_options, scaling=scaling, strata_scaling=strata_scaling, rng=rng,
            time_limit=time_limit, progress=progress, keep_history=keep_history, blocks=blocks, n_jobs=n_jobs,
            client=client, **method_options)
    missing = check_choice(missing, "missing", MISSING)
    measure = check_choice(measure, "measure", MEASURES)
    trim = check_number(trim, "trim", low=0.0, high=0.5)
    if trim and measure != "trim":
        raise InvalidInputError(f'`trim` is only used with measure="trim"; got trim={trim:g} with measure={measure!r}.')
    decimals = check_positive_int(decimals, "decimals", minimum=0, allow_none=True)
    if weights is not None and measure != "mean":
        raise InvalidInputError(
            f'`weights` give weighted means: they need measure="mean"; got measure={measure!r}.')
    label_weights = isinstance(weights, (str, int, np.integer)) and not isinstance(weights, bool)
    ds = as_dataset(frame, variables, strata, missing=missing, exclude=[weights] if label_weights else None)
    w, weight_column = check_weights(weights, ds)
    k = check_k(k, ds.n)
    time_limit = check_time_limit(time_limit)
    scaling = check_choice(scaling, "scaling", SCALINGS)
    strata_scaling = check_choice(strata_scaling, "strata_scaling", STRATA_SCALINGS)
    if strata_scaling == "stratum" and scaling != "standardize":
        raise InvalidInputError(
            f'`strata_scaling` must be "global" when `scaling` is {scaling!r}; got "stratum" '
            "(per-stratum z-scores need scaling=\"standardize\")."
        )
    if not isinstance(keep_history, bool):
        raise InvalidTypeError(f"`keep_history` must be True or False; got {keep_history!r}.")

    if isinstance(method, str):
        spec = _registry.get_method(method)
        spec.check_options(method_options)
        method_name, method_core = spec.name, spec.core
        options_setting = {**spec.defaults(), **method_options}
    elif callable(method):
        spec = None
        method_name = getattr(method, "__name__", "custom")
        method_core = method
        options_setting = dict(method_options)
    else:
        raise InvalidTypeError(f"`method` must be a method name or a callable; got {method!r}.")
    steps = _resolve_improve(improve, improve_options)
    callback = _progress_callback(progress)

    observed = ~np.isnan(ds.X)
    has_missing = not observed.all()
    sdc_missing = spec is not None and spec.name == "mdav" and options_setting.get("missing_distance") == "sdcmicro"
    distance_missing = None
    if sdc_missing:  # sdcMicro's mdav: missing cells, and a genuine -999 (its NA code), count as missing
        minus999 = ds.X == -999.0
        for j in np.flatnonzero(minus999.any(axis=0)):
            warnings.warn(f"column {ds.variables[j]!r} holds -999 in {int(minus999[:, j].sum())} cell(s): "
                          'missing_distance="sdcmicro" treats -999 as missing, as sdcMicro does.',
                          UserWarning, stacklevel=2)
        distance_missing = ~observed | minus999
        if not minus999.any():
            minus999 = None
    # overflow-free for any finite input (power-of-two pre-scaling); with missing cells the
    # z-scores use the observed values and a missing cell is imputed by the mean (z = 0)
    st = standardization_with_missing(ds.X) if has_missing else standardization(ds.X)
    Z_il, constant = st.Z, st.constant
    if _no_spread(ds.X).all():  # no spread anywhere (0.0 == -0.0 here; missing cells left out)
        names = ", ".join(map(str, ds.variables))
        raise InvalidInputError(
            f"every chosen variable is constant ({names}); SST is 0, so information loss is undefined "
            "and there is nothing to microaggregate."
        )
    for j in np.flatnonzero(constant):
        warnings.warn(
            f"column {ds.variables[j]!r} is constant (value {_first_observed(ds.X[:, j]):g}): it is left unchanged and "
            "contributes nothing to SSE or SST.",
            ConstantColumnWarning, stacklevel=2,
        )
    Z = Z_il if scaling == "standardize" else _raw_centered(st, ds.X)
    total = sst(Z_il) if not has_missing else float(np.sum(Z_il[observed] ** 2))  # SST of the observed cells
    full_name = method_name + "".join(f"+{s.name}" for s in steps)

    budget = None if time_limit is None else max(0.0, time_limit - (time.monotonic() - started))
    root = Context(rng, budget, callback=callback, sst=total if scaling == "standardize" else None,
                   method=full_name, keep_history=keep_history)
    root._shared.start = started  # elapsed and the limit count from the call
    root.missing_cells = distance_missing
    root._shared.limit = time_limit

    from .large._blocked import plan_blocks, solve_blocked
    from .large._executors import available_cores

    plan = plan_blocks(blocks, n_jobs, client, ds.n, k)
    if plan is not None and ds.strata is None and ds.n <= plan.block_size:
        plan = None  # one block: exactly the whole-data run
    if plan is None and spec is not None and spec.name == "vmdav":
        # whole-data V-MDAV scans on threads: n_jobs of them (default every core)
        root._shared.threads = available_cores() if n_jobs is None or n_jobs == -1 else int(n_jobs)
    if plan is not None and sdc_missing and distance_missing.any():
        raise InvalidInputError('`missing_distance` "sdcmicro" reproduces sdcMicro\'s whole-data mdav; it cannot run '
                                "in blocks (got blocks/n_jobs/client); drop them or use the default \"imputed\".")
    if plan is not None and spec is not None and spec.name == "auto" and "effort" not in method_options:
        method_options = {**method_options, "effort": "light"}  # blocks: MDAV + two-swap each
        options_setting["effort"] = "light"
    try:
        _interrupt.start_solving()  # the command line: raises at once if Ctrl-C came while preparing
        if plan is not None:
            Z_part = Z
            if ds.strata is not None and strata_scaling == "stratum":  # groups never cross strata
                Z_part = np.empty_like(Z)
                for s in range(len(ds.strata_names)):
                    rows = np.flatnonzero(ds.strata == s)
                    Z_part[rows] = _zscores(ds.X[rows])
            labels, status, message, lower, info = solve_blocked(
                plan, Z_part, k, root, method=spec.name if spec is not None else method_core,
                options=method_options, improve=improve, improve_options=improve_options, strata=ds.strata,
                strata_names=ds.strata_names)
        elif ds.strata is None:
            block_sol, _ = _solve_block(method_core, method_options, steps, Z, k, root)
            labels = block_sol.labels
            status, message, lower, info = block_sol.status, block_sol.message, block_sol.lower_bound, block_sol.info
        else:
            labels, status, message, lower, info = _solve_strata(
                ds, method_core, method_options, steps, Z, k, root, callback, keep_history, total, scaling, full_name,
                strata_scaling == "stratum")
    except KeyboardInterrupt as exc:
        early = isinstance(exc, _interrupt.InterruptedBeforeSolve)
        if plan is None and not early:  # the other paths release their incumbent themselves (_run_core)
            raise
        # Ctrl-C before the method started (command line: while the data were read and
        # prepared) or before the blocks had a partition (while they are planned): runs of k
        root.deadline.stop()
        labels = _principal_axis_runs_by_stratum(Z, k, ds.strata)
        status, lower, info = "limit", None, {}
        message = ("interrupted (Ctrl-C) before the " + ("method started" if early else "blocks had a partition")
                   + ": records grouped in runs of k along their first principal axis")
    finally:
        _interrupt.stop_solving()
        if isinstance(callback, _TerminalProgress):
            callback.close()
    # The partition is fixed: the z-scores are no longer needed. Freed before the release is
    # built, so the peak holds the data, the release and the check's work, not the z-scores too.
    Z = Z_il = Z_part = st = None

    labels = canonical_labels(labels)
    groups = groups_from_labels(labels)
    X_stat = ds.X if not (sdc_missing and minus999 is not None) else np.where(minus999, np.nan, ds.X)
    values = group_statistic(X_stat, labels, len(groups), measure=measure, trim=trim, weights=w)
    if X_stat is not ds.X:  # a group whose members are all -999 there releases -999
        vals = values[labels]
        values_rows = np.where(np.isnan(vals) & minus999, -999.0, vals)
    else:
        values_rows = None
    passthrough = constant  # bit-identical columns pass through with their original values
    # one n x p array, filled in place below
    released = values[labels] if values_rows is None else values_rows
    del values, values_rows
    if passthrough.any():
        released[:, passthrough] = ds.X[:, passthrough]
    if has_missing:
        released[~observed] = np.nan  # a missing cell stays missing
    if decimals is not None:
        released[:, ~passthrough] = round_release(released[:, ~passthrough], decimals)
    # IL of the values actually released (float64 group values, rounded if asked), not of an
    # idealised partition; missing cells are skipped.
    sse_value, total = release_sse_sst(ds.X, released)
    il = 100.0 * sse_value / total
    # The final check before anything leaves this function: k-anonymous (a missing cell
    # matches any value), IL as reported. After a Ctrl-C on the command line it is left to the
    # command, which runs the same check on the file as written and read back (issue 19: the
    # outputs within seconds of the signal).
    if not _interrupt.received():
        verify_release_values(ds.X, released, k, il, what="the release built from this partition")
    data = _build_output(ds, released, passthrough, decimals)
    info = dict(info)
    info.update(_agency_info(ds, released, observed, w, weight_column))
    lower_il = gap = None
    if lower is not None and scaling == "standardize":
        lower_il = max(0.0, 100.0 * lower / total)
        gap = (il - lower_il) / il if il > 0 else 0.0
    settings = {
        "method": method_name,
        "k": k,
        "options": options_setting,
        "improve": [s.settings() for s in steps],
        "rng": _rng_setting(rng),
        "time_limit": time_limit,
        "scaling": scaling,
        "strata": list(ds.strata_columns),
        "strata_scaling": strata_scaling,
        "variables": list(ds.variables),
        "blocks": None if plan is None else plan.settings(),
        "missing": missing,
        "measure": measure,
        "trim": trim if measure == "trim" else None,
        "weights": None if w is None else (weight_column if weight_column is not None else "<array given by the caller>"),
        "decimals": decimals,
        "versions": _versions(),
    }
    return MicroaggregationResult(
        data=data, labels=labels, groups=groups, k=k, method=full_name, sse=sse_value, sst=total,
        information_loss=il, lower_bound=lower_il, gap=gap, status=status, message=message,
        seconds=time.monotonic() - started, variables=list(ds.variables), settings=settings, info=info,
        history=list(root.history) if keep_history else None,
    )


def _microaggregate_groups(frame: Any, k: int, groups: list, started: float, *, rng: Any, time_limit: Any,
                           **kwargs: Any) -> MicroaggregationResult:
    """Groups of variables (``variables=[["a", "b"], ["c", "d"]]``), as mu-ARGUS: each
    group microaggregated independently with its own partition; the release combines them
    and is checked group by group (k-anonymity on each group's own columns)."""
    if _is_dask_frame(frame):
        raise InvalidInputError("groups of variables need a pandas DataFrame or an array; compute() the Dask "
                                "DataFrame first.")
    time_limit = check_time_limit(time_limit)
    flat = [v for group in groups for v in group]
    weights = kwargs.get("weights")
    label_weights = isinstance(weights, (str, int, np.integer)) and not isinstance(weights, bool)
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
    from ._release import wildcard_frequencies

    per_group = []
    for r, group, cols in zip(results, groups, positions):
        freq = wildcard_frequencies(released[:, cols])
        per_group.append({
            "variables": [str(v) for v in group], "n_groups": r.n_groups, "information_loss": r.information_loss,
            "sse": r.sse, "sst": r.sst, "status": r.status, "k_anonymous": bool(freq.min() >= k),
            "smallest_frequency": int(freq.min()), "lower_bound": r.lower_bound,
            "labels": r.labels.tolist(),
        })
    lower_il = gap = None
    if all(r.lower_bound is not None for r in results):
        lower_il = 100.0 * sum(r.lower_bound * r.sst / 100.0 for r in results) / total
        gap = (il - lower_il) / il if il > 0 else 0.0
    first = results[0]
    status = max((r.status for r in results), key=_STATUS_RANK.__getitem__)
    message = "; ".join(f"[group {g + 1}] {r.message}" for g, r in enumerate(results) if r.message)
    info: dict = {"variable_groups": per_group, "labels_are_of": "the first variable group"}
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


def _solve_strata(ds, method_core, options, steps, Z, k, root, callback, keep_history, total, scaling,
                  full_name, per_stratum_z=False):
    n_strata = len(ds.strata_names)
    members = [np.flatnonzero(ds.strata == s) for s in range(n_strata)]
    for s, rows in enumerate(members):
        if rows.size < k:
            raise StratumTooSmallError(
                f"stratum {ds.strata_names[s]} has {rows.size} record{'s' if rows.size != 1 else ''}; "
                f"every stratum needs at least k={k} (merge it with another stratum or lower k)."
            )
    labels = np.empty(ds.n, dtype=np.int64)
    offset = 0
    statuses, messages, bounds, infos = [], [], [], []
    left = ds.n
    for s, rows in enumerate(members):
        share = rows.size / left
        left -= rows.size
        sub = Context(root.rng, _deadline=root.deadline.child(fraction=share), callback=callback,
                      sst=total if scaling == "standardize" else None, method=full_name,
                      keep_history=keep_history, stage=ds.strata_names[s])
        sub._shared.start = root._shared.start  # elapsed time counts from the call, not the stratum
        mask = getattr(root, "missing_cells", None)
        sub.missing_cells = None if mask is None else mask[rows]
        sub.report(stratum=f"{s + 1}/{n_strata}", records=int(rows.size))
        block = _zscores(ds.X[rows]) if per_stratum_z else np.ascontiguousarray(Z[rows])
        sol, _ = _solve_block(method_core, options, steps, block, k, sub)
        if keep_history:
            root.history.extend(sub.history)
        labels[rows] = sol.labels + offset
        offset += int(sol.labels.max()) + 1
        statuses.append(sol.status)
        if sol.message:
            messages.append(f"[{ds.strata_names[s]}] {sol.message}")
        bounds.append(sol.lower_bound)
        infos.append({"stratum": ds.strata_names[s], "n": int(rows.size), **sol.info})
    status = max(statuses, key=_STATUS_RANK.__getitem__)
    lower = None if any(b is None for b in bounds) else float(sum(bounds))
    return labels, status, "; ".join(messages), lower, {"strata": infos}


def _is_dask_frame(obj: Any) -> bool:
    """A Dask DataFrame, recognised without importing dask."""
    module = type(obj).__module__ or ""
    return module.split(".")[0] in ("dask", "dask_expr") and hasattr(obj, "npartitions") \
        and hasattr(obj, "to_delayed")


def _no_spread(X: np.ndarray) -> np.ndarray:
    """Per column: are its observed values all equal (0.0 == -0.0), or fewer than two observed?"""
    out = np.empty(X.shape[1], dtype=bool)
    for j in range(X.shape[1]):
        xo = X[:, j][~np.isnan(X[:, j])]
        out[j] = xo.size < 2 or bool(np.all(xo == xo[0]))
    return out


def _first_observed(x: np.ndarray) -> float:
    xo = x[~np.isnan(x)]
    return float(xo[0]) if xo.size else math.nan


def _zscores(X: np.ndarray) -> np.ndarray:
    """z-scores a partition is built on (missing cells imputed by the mean, z = 0)."""
    if np.isnan(X).any():
        return standardization_with_missing(X).Z
    return standardize(X)[0]


def _raw_centered(st, X: np.ndarray) -> np.ndarray:
    """``scaling="none"``: raw values over one common power of two, centred on the observed
    mean; a missing cell is imputed by the mean (0)."""
    if not np.isnan(X).any():
        return st.raw_centered(X)
    common = float(np.max(st.factor)) if st.factor.size else 1.0
    Xs = np.asarray(X, dtype=np.float64) / common
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-missing column
        Xs = Xs - np.nanmean(Xs, axis=0)
    Xs[np.isnan(Xs)] = 0.0
    return np.ascontiguousarray(Xs)


def _agency_info(ds, released: np.ndarray, observed: np.ndarray, w: np.ndarray | None,
                 weight_column: Any) -> dict:
    """Facts the report shows for agency data: missing cells, weighted totals."""
    out: dict = {"missing_cells": int((~observed).sum())}
    if out["missing_cells"]:
        out["missing_cells_by_variable"] = {str(v): int((~observed[:, j]).sum()) for j, v in enumerate(ds.variables)
                                            if not observed[:, j].all()}
    if w is not None:
        totals = {}
        for j, v in enumerate(ds.variables):
            before = float(np.nansum(w * ds.X[:, j]))
            after = float(np.nansum(w * released[:, j]))
            rel = abs(after - before) / abs(before) if before != 0 else abs(after - before)
            totals[str(v)] = {"before": before, "after": after, "relative_difference": rel}
        out["weighted_totals"] = totals
        out["weight_column"] = None if weight_column is None else str(weight_column)
    return out


def _released_series(values: np.ndarray, index, name, decimals: int | None) -> pd.Series:
    """A released column; with ``decimals=0`` an integer dtype (``Int64`` if it has missing
    cells) when every value fits exactly."""
    if decimals == 0:
        missing = np.isnan(values)
        if np.all(np.abs(values[~missing]) <= 2.0 ** 53):
            ints = np.where(missing, 0.0, values).astype(np.int64)
            if not missing.any():
                return pd.Series(ints, index=index, name=name)
            return pd.Series(pd.arrays.IntegerArray(ints, missing), index=index, name=name)
    return pd.Series(values, index=index, name=name)


def _build_output(ds, released: np.ndarray, constant: np.ndarray, decimals: int | None = None):
    """The caller's data with the chosen non-constant columns replaced by ``released``;
    every other column (and constant chosen columns) passes through untouched, same dtype.
    Built with one concatenation (no column-by-column assignment: no fragmentation)."""
    if ds.is_frame:
        src = ds.source
        replaced = {int(pos): j for j, pos in enumerate(ds.positions) if not constant[j]}
        if decimals is None and len(replaced) == src.shape[1]:  # every column released: one block
            # the fancy index makes a new array: the frame takes it as it is (one copy, not two)
            out = pd.DataFrame(released[:, [replaced[pos] for pos in range(src.shape[1])]], index=src.index,
                               columns=src.columns, copy=False)
            out.attrs = dict(src.attrs)
            return out
        parts = []
        for pos in range(src.shape[1]):
            if pos in replaced:
                parts.append(_released_series(released[:, replaced[pos]], src.index, src.columns[pos], decimals))
            else:
                parts.append(src.iloc[:, pos].copy(deep=True))
        out = pd.concat(parts, axis=1) if parts else src.copy(deep=True)
        out.columns = src.columns
        out.attrs = dict(src.attrs)
        return out
    src = ds.source
    if isinstance(src, np.ndarray) and src.ndim == 2 and src.dtype == np.float64 \
            and np.array_equal(ds.positions, np.arange(src.shape[1])):
        return released  # every column chosen: the release is the output (constant columns hold the originals)
    out = np.array(src, dtype=np.float64, copy=True)
    for j, pos in enumerate(ds.positions):
        if not constant[j]:
            out[:, pos] = released[:, j]
    return out


class Microaggregator:
    """Estimator-style interface to :func:`microaggregate` (scikit-learn conventions).

    Parameters are those of :func:`microaggregate`; ``fit`` stores the result.

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
    """

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
        self.method_options = method_options

    def get_params(self) -> dict:
        params = {name: getattr(self, name) for name in (
            "k", "method", "variables", "strata", "improve", "improve_options", "scaling", "strata_scaling",
            "rng", "time_limit", "progress")}
        params.update(self.method_options)
        return params

    def fit(self, X: Any, y: Any = None) -> "Microaggregator":
        self.result_ = microaggregate(
            X, self.k, method=self.method, variables=self.variables, strata=self.strata,
            improve=self.improve, improve_options=self.improve_options, scaling=self.scaling,
            strata_scaling=self.strata_scaling, rng=self.rng, time_limit=self.time_limit, progress=self.progress, **self.method_options)
        self.labels_ = self.result_.labels
        self.information_loss_ = self.result_.information_loss
        return self

    def fit_transform(self, X: Any, y: Any = None) -> Any:
        return self.fit(X).result_.data

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items()
                         if v is not None and not (k == "scaling" and v == "standardize")
                         and not (k == "strata_scaling" and v == "global"))
        return f"Microaggregator({args})"
