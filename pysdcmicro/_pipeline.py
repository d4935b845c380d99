"""Validated arrays in: partition -> release -> result.

The facade (:mod:`pysdcmicro._api`) checks the caller's input once and builds a
:class:`Job`; the steps here work on its arrays and never check them again:

1. :func:`prepare`: the z-scores the partition is built on, SST, constant columns;
2. :func:`partition`: the method core and improvement steps on the whole data, on each
   stratum, or on the blocks of the large-data path (:mod:`pysdcmicro.large`);
3. :func:`release`: group values (mean, median, trimmed or weighted mean), missing cells,
   rounding, then the release check (k-anonymity, IL);
4. :func:`result`: the caller's data with the released columns, and the result object.

Importing this module imports every algorithm package, so their methods are registered.
"""

from __future__ import annotations

import math
import sys
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pandas as pd

from . import _compile, _interrupt, _registry
# Importing the algorithm packages registers their methods (in this order, the order of the listings).
from . import constructive, optimization, univariate, local_search  # noqa: F401, I001
from .optimization import _auto  # noqa: F401
from ._aggregate import group_statistic, round_release, standardization_with_missing
from ._context import Context, TerminalProgress
from ._errors import ConstantColumnWarning, InvalidInputError, InvalidTypeError, StratumTooSmallError
from ._partition import canonical_labels, groups_from_labels, sst
from ._release import release_sse_sst, verify_release_values
from ._result import MicroaggregationResult
from ._solve import Step, principal_axis_runs_by_stratum, solve_block, worst_status
from ._standardize import standardization, standardize
from ._validation import Dataset, check_n_jobs
from ._version import __version__
from .large._blocked import BlockPlan, plan_blocks, solve_blocked, start_workers_early
from .large._executors import available_cores

__all__ = ["Method", "Job", "resolve_method", "per_variable_method", "prepare", "partition", "release", "result",
           "run"]


@dataclass
class Method:
    """A resolved method: its name, core, registry entry (None for a callable) and options."""

    name: str
    core: Callable
    spec: _registry.MethodSpec | None
    options: dict  # as given, passed to the core
    settings: dict  # defaults and given, recorded in ``result.settings``


def resolve_method(method: Any, options: dict) -> Method:
    """A registered method name or a callable ``core(Z, k, ctx, **options)``."""
    if isinstance(method, str):
        spec = _registry.get_method(method)
        spec.check_options(options)
        return Method(spec.name, spec.core, spec, dict(options), {**spec.defaults(), **options})
    if callable(method):
        return Method(getattr(method, "__name__", "custom"), method, None, dict(options), dict(options))
    raise InvalidTypeError(f"`method` must be a method name or a callable; got {method!r}.")


@dataclass
class Job:
    """Validated inputs of one run (every value checked by the facade)."""

    ds: Dataset
    k: int
    method: Method
    steps: list[Step]
    scaling: str = "standardize"
    strata_scaling: str = "global"
    rng: Any = None
    time_limit: float | None = None
    started: float = field(default_factory=time.monotonic)
    callback: Callable | None = None
    keep_history: bool = False
    blocks: Any = "auto"
    n_jobs: int | None = None
    client: Any = None
    missing: str = "keep"
    measure: str = "mean"
    trim: float = 0.0
    weights: np.ndarray | None = None
    weight_column: Any = None
    decimals: int | None = None

    @property
    def full_name(self) -> str:
        return self.method.name + "".join(f"+{s.name}" for s in self.steps)


@dataclass
class Prepared:
    """What :func:`prepare` computes: the arrays the partition is built on and measured by."""

    Z: np.ndarray | None  # the partition's coordinates (None once the partition is fixed)
    constant: np.ndarray  # per column: no spread (kept unchanged, out of SSE and SST)
    observed: np.ndarray  # per cell: not missing
    total: float  # SST of the observed cells
    code_cells: np.ndarray | None = None  # cells holding the method's missing-value code
    distance_missing: np.ndarray | None = None  # cells the method reads as missing (ctx.missing_cells)

    @property
    def has_missing(self) -> bool:
        return not self.observed.all()


@dataclass
class Partitioned:
    labels: np.ndarray
    status: str
    message: str
    lower: float | None  # lower bound on the SSE, or None
    info: dict
    plan: BlockPlan | None
    root: Context


@dataclass
class Released:
    labels: np.ndarray
    groups: list
    values: np.ndarray  # n x p released values of the chosen columns
    sse: float
    sst: float

    @property
    def information_loss(self) -> float:
        return 100.0 * self.sse / self.sst


def prepare(job: Job, *, stacklevel: int = 1) -> Prepared:
    """z-scores, constant columns, SST; the method's missing-value code. Warnings are issued
    ``stacklevel`` frames above the caller."""
    ds, method = job.ds, job.method
    observed = ~np.isnan(ds.X)
    code_cells = distance_missing = None
    mc = method.spec.missing_code if method.spec is not None else None
    if mc is not None and mc.applies(method.settings):  # the method's missing-value code counts as missing
        code_cells = ds.X == mc.code
        for j in np.flatnonzero(code_cells.any(axis=0)):
            warnings.warn(f"column {ds.variables[j]!r} holds {mc.code:g} in {int(code_cells[:, j].sum())} cell(s): "
                          f'{mc.option}="{mc.value}" treats {mc.code:g} as missing, as {mc.origin} does.',
                          UserWarning, stacklevel=stacklevel + 1)
        distance_missing = ~observed | code_cells
        if not code_cells.any():
            code_cells = None
    has_missing = not observed.all()
    # overflow-free for any finite input (power-of-two pre-scaling); with missing cells the
    # z-scores use the observed values and a missing cell is imputed by regression on the
    # record's other columns (standardization_with_missing)
    st = standardization_with_missing(ds.X) if has_missing else standardization(ds.X)
    if _no_spread(ds.X, every=True).all():  # no spread anywhere (0.0 == -0.0 here; missing cells left out)
        names = ", ".join(map(str, ds.variables))
        raise InvalidInputError(
            f"every chosen variable is constant ({names}); SST is 0, so information loss is undefined "
            "and there is nothing to microaggregate."
        )
    for j in np.flatnonzero(st.constant):
        warnings.warn(constant_column_message(ds.variables[j], ds.X[:, j]), ConstantColumnWarning,
                      stacklevel=stacklevel + 1)
    Z = st.Z if job.scaling == "standardize" else _raw_centered(st, ds.X)
    total = sst(st.Z) if not has_missing else float(np.sum(st.Z[observed] ** 2))  # SST of the observed cells
    return Prepared(Z=Z, constant=st.constant, observed=observed, total=total, code_cells=code_cells,
                    distance_missing=distance_missing)


def _root_context(job: Job, prep: Prepared) -> Context:
    budget = None if job.time_limit is None else max(0.0, job.time_limit - (time.monotonic() - job.started))
    root = Context(job.rng, budget, callback=job.callback, sst=prep.total if job.scaling == "standardize" else None,
                   method=job.full_name, keep_history=job.keep_history)
    root._shared.start = job.started  # elapsed and the limit count from the call
    root.missing_cells = prep.distance_missing
    root._shared.limit = job.time_limit
    return root


def _plan(job: Job, prep: Prepared, root: Context) -> tuple[BlockPlan | None, dict]:
    """The large-data plan (None: whole data) and the options the method runs with."""
    ds, spec = job.ds, job.method.spec
    options = job.method.options
    plan = plan_blocks(job.blocks, job.n_jobs, job.client, ds.n, job.k)
    if plan is not None and ds.strata is None and ds.n <= plan.block_size:
        plan = None  # one block: exactly the whole-data run
    if plan is None and spec is not None and spec.threads:  # whole-data scans on n_jobs threads
        root._shared.threads = check_n_jobs(job.n_jobs, default=available_cores())
    if plan is None and spec is not None and "n_jobs" in spec.options and job.n_jobs is not None:
        options = {**options, "n_jobs": job.n_jobs}  # the method's own workers (the caller's n_jobs)
        job.method.settings["n_jobs"] = job.n_jobs
    if plan is not None and spec is not None and spec.per_variable:
        if job.blocks != "auto" or job.client is not None:
            given = f"blocks={job.blocks!r}" if job.blocks != "auto" else "a Dask client"
            raise InvalidInputError(f"method {spec.name!r} sorts each variable on the whole data (n log n time, "
                                    f"n memory); it does not run in blocks; got {given}: drop it.")
        plan = None  # one sort per column: the whole data, however many records
    if plan is not None and prep.distance_missing is not None and prep.distance_missing.any():
        mc = spec.missing_code
        raise InvalidInputError(f'`{mc.option}` "{mc.value}" reproduces {mc.origin}\'s whole-data {spec.name}; it '
                                "cannot run in blocks (got blocks/n_jobs/client); drop them or use the default "
                                f'"{spec.options[mc.option].default}".')
    if plan is not None and spec is not None:
        extra = {key: value for key, value in spec.block_defaults.items() if key not in options}
        if extra:
            options = {**options, **extra}
            job.method.settings.update(extra)
    return plan, options


def early_workers(job: Job) -> Any:
    """The blocked path's worker processes, started before :func:`prepare` when the run will
    use them (:func:`~pysdcmicro.large._blocked.start_workers_early`); None otherwise."""
    spec = job.method.spec
    if job.time_limit is not None or (spec is not None and spec.per_variable):
        return None
    try:
        plan = plan_blocks(job.blocks, job.n_jobs, job.client, job.ds.n, job.k)
    except Exception:  # reported by partition()
        return None
    return start_workers_early(plan, job.ds.n, job.k, method=job.method.core, improve=job.steps,
                               strata=job.ds.strata, strata_names=job.ds.strata_names)


def partition(job: Job, prep: Prepared, executor: Any = None) -> Partitioned:
    """Method and improvement steps on the whole data, on each stratum or on blocks. A
    Ctrl-C returns the best partition so far (``status="limit"``); the z-scores are
    released from ``prep`` once the partition is fixed. ``executor``: the blocked path's
    workers, already started (:func:`early_workers`), for the blocks to use."""
    ds, k, Z = job.ds, job.k, prep.Z
    root = _root_context(job, prep)
    plan, options = _plan(job, prep, root)
    if plan is None and executor is not None:  # the workers are not needed after all
        executor.close(cancel=True)
    try:
        _interrupt.start_solving()  # the command line: raises at once if Ctrl-C came while preparing
        _compile.announce(root, job.method.name, blocked=plan is not None,
                          steps=tuple(step.name for step in job.steps))
        if plan is not None:
            Z_part = Z
            if ds.strata is not None and job.strata_scaling == "stratum":  # groups never cross strata
                Z_part = np.empty_like(Z)
                for s in range(len(ds.strata_names)):
                    rows = np.flatnonzero(ds.strata == s)
                    Z_part[rows] = zscores(ds.X[rows])
            labels, status, message, lower, info = solve_blocked(
                plan, Z_part, k, root, method=job.method.core, options=options, improve=job.steps,
                improve_options=None, strata=ds.strata, strata_names=ds.strata_names, executor=executor)
            del Z_part
        elif ds.strata is None:
            sol, _ = solve_block(job.method.core, options, job.steps, Z, k, root)
            labels, status, message, lower, info = sol.labels, sol.status, sol.message, sol.lower_bound, sol.info
        else:
            labels, status, message, lower, info = _solve_strata(job, prep, options, root)
    except KeyboardInterrupt as exc:
        early = isinstance(exc, _interrupt.InterruptedBeforeSolve)
        if plan is None and not early:  # the other paths release their incumbent themselves (run_core)
            raise
        # Ctrl-C before the method started (command line: while the data were read and
        # prepared) or before the blocks had a partition (while they are planned): runs of k
        root.deadline.stop()
        labels = principal_axis_runs_by_stratum(Z, k, ds.strata)
        status, lower, info = "limit", None, {}
        message = ("interrupted (Ctrl-C) before the " + ("method started" if early else "blocks had a partition")
                   + ": records grouped in runs of k along their first principal axis")
    finally:
        _interrupt.stop_solving()
        if isinstance(job.callback, TerminalProgress):
            job.callback.close()
    # The partition is fixed: the z-scores are no longer needed. Freed before the release is
    # built, so the peak holds the data, the release and the check's work, not the z-scores too.
    prep.Z = Z = None
    return Partitioned(labels=labels, status=status, message=message, lower=lower, info=info, plan=plan, root=root)


def _solve_strata(job: Job, prep: Prepared, options: dict, root: Context):
    ds, k = job.ds, job.k
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
        sub = Context(root.rng, _deadline=root.deadline.child(fraction=share), callback=job.callback,
                      sst=prep.total if job.scaling == "standardize" else None, method=job.full_name,
                      keep_history=job.keep_history, stage=ds.strata_names[s])
        sub._shared.start = root._shared.start  # elapsed time counts from the call, not the stratum
        mask = getattr(root, "missing_cells", None)
        sub.missing_cells = None if mask is None else mask[rows]
        sub.report(stratum=f"{s + 1}/{n_strata}", records=int(rows.size))
        block = zscores(ds.X[rows]) if job.strata_scaling == "stratum" else np.ascontiguousarray(prep.Z[rows])
        sol, _ = solve_block(job.method.core, options, job.steps, block, k, sub)
        if job.keep_history:
            root.history.extend(sub.history)
        labels[rows] = sol.labels + offset
        offset += int(sol.labels.max()) + 1
        statuses.append(sol.status)
        if sol.message:
            messages.append(f"[{ds.strata_names[s]}] {sol.message}")
        bounds.append(sol.lower_bound)
        infos.append({"stratum": ds.strata_names[s], "n": int(rows.size), "status": sol.status,
                      "message": sol.message, **sol.info})
    lower = None if any(b is None for b in bounds) else float(sum(bounds))
    return labels, worst_status(statuses), _strata_message(messages, statuses), lower, {"strata": infos}


def _strata_message(messages: list[str], statuses: list[str]) -> str:
    """The strata's messages, joined while they are few; otherwise the first and a count, so
    that a status line stays one line (each stratum's message is in ``info["strata"]``)."""
    if len(messages) <= 3:
        return "; ".join(messages)
    counts = ", ".join(f"{statuses.count(s)} {s}" for s in dict.fromkeys(statuses))
    return f"{len(statuses)} strata ({counts}); {messages[0]}; ... (each stratum's message in info['strata'])"


def release(job: Job, prep: Prepared, part: Partitioned) -> Released:
    """The released values of the chosen columns, checked: k-anonymous (a missing cell
    matches any value) and IL as reported. After a Ctrl-C on the command line the check is
    left to the command, which runs it on the file as written and read back."""
    ds, k = job.ds, job.k
    labels = canonical_labels(part.labels)
    groups = groups_from_labels(labels)
    code = prep.code_cells
    X_stat = ds.X if code is None else np.where(code, np.nan, ds.X)
    values = group_statistic(X_stat, labels, len(groups), measure=job.measure, trim=job.trim, weights=job.weights)
    # one n x p array, filled in place below
    released = values[labels]
    del values
    if code is not None:  # a group whose members all hold the code there releases the code
        released = np.where(np.isnan(released) & code, job.method.spec.missing_code.code, released)
    passthrough = prep.constant  # bit-identical columns pass through with their original values
    if passthrough.any():
        released[:, passthrough] = ds.X[:, passthrough]
    if prep.has_missing:
        released[~prep.observed] = np.nan  # a missing cell stays missing
    if job.decimals is not None:
        released[:, ~passthrough] = round_release(released[:, ~passthrough], job.decimals)
    # IL of the values actually released (float64 group values, rounded if asked), not of an
    # idealised partition; missing cells are skipped.
    sse_value, total = release_sse_sst(ds.X, released)
    il = 100.0 * sse_value / total
    if not _interrupt.received():
        verify_release_values(ds.X, released, k, il, what="the release built from this partition",
                              sse_sst=(sse_value, total))
    return Released(labels=labels, groups=groups, values=released, sse=sse_value, sst=total)


def result(job: Job, prep: Prepared, part: Partitioned, rel: Released) -> MicroaggregationResult:
    """The caller's data with the released columns, and the result object."""
    ds = job.ds
    data = build_output(ds, rel.values, prep.constant, job.decimals)
    info = dict(part.info)
    info.update(_agency_info(ds, rel.values, prep.observed, job.weights, job.weight_column))
    il = rel.information_loss
    lower_il = gap = None
    if part.lower is not None and job.scaling == "standardize":
        lower_il = max(0.0, 100.0 * part.lower / rel.sst)
        gap = 100.0 * (il - lower_il) / il if il > 0 else 0.0  # percent, as IL
    return MicroaggregationResult(
        data=data, labels=rel.labels, groups=rel.groups, k=job.k, method=job.full_name, sse=rel.sse, sst=rel.sst,
        information_loss=il, lower_bound=lower_il, gap=gap, status=part.status, message=part.message,
        seconds=time.monotonic() - job.started, variables=list(ds.variables), settings=_settings(job, part.plan),
        info=info, history=list(part.root.history) if job.keep_history else None,
    )


def run(job: Job, *, stacklevel: int = 1) -> MicroaggregationResult:
    """:func:`prepare`, :func:`partition`, :func:`release`, :func:`result`."""
    executor = early_workers(job)
    try:
        prep = prepare(job, stacklevel=stacklevel + 1)
        part = partition(job, prep, executor)
    finally:  # stopped if the run ended before the blocks took them (closing twice does nothing)
        if executor is not None:
            executor.close(cancel=True)
    return result(job, prep, part, release(job, prep, part))


def _settings(job: Job, plan: BlockPlan | None) -> dict:
    ds, w = job.ds, job.weights
    return {
        "method": job.method.name,
        "k": job.k,
        "options": job.method.settings,
        "improve": [s.settings() for s in job.steps],
        "rng": rng_setting(job.rng),
        "time_limit": job.time_limit,
        "scaling": job.scaling,
        "strata": list(ds.strata_columns),
        "strata_scaling": job.strata_scaling,
        "variables": list(ds.variables),
        "blocks": None if plan is None else plan.settings(),
        "missing": job.missing,
        "measure": job.measure,
        "trim": job.trim if job.measure == "trim" else None,
        "weights": None if w is None else (job.weight_column if job.weight_column is not None
                                           else "<array given by the caller>"),
        "decimals": job.decimals,
        "versions": versions(),
    }


def versions() -> dict:
    """Versions of this package and of the libraries that shaped the result."""
    out = {"pysdcmicro": __version__, "numpy": np.__version__, "pandas": pd.__version__}
    mod = sys.modules.get("ortools")
    if mod is not None:
        out["ortools"] = getattr(mod, "__version__", "?")
    return out


def rng_setting(rng: Any) -> Any:
    """``rng`` as recorded in ``result.settings`` (an integer seed, or a note)."""
    if rng is None or isinstance(rng, (int, np.integer)):
        return None if rng is None else int(rng)
    return f"<{type(rng).__name__} given by the caller>"


def per_variable_method(method: Any) -> _registry.MethodSpec | None:
    """The registry entry of ``method`` when it names a method that partitions one variable
    at a time (``per_variable``; the facade runs it once per column), else None."""
    if not isinstance(method, str):
        return None
    try:
        spec = _registry.get_method(method)
    except (InvalidInputError, InvalidTypeError):  # reported where the method is resolved
        return None
    return spec if spec.per_variable else None


def constant_columns(X: np.ndarray) -> np.ndarray:
    """Per column: no spread (its observed values all equal, or fewer than two observed)."""
    return _no_spread(X)


def constant_column_message(name: Any, x: np.ndarray) -> str:
    """The :class:`~pysdcmicro.ConstantColumnWarning` text for column ``name`` holding ``x``."""
    return (f"column {name!r} is constant (value {_first_observed(x):g}): it is left unchanged and contributes "
            "nothing to SSE or SST.")


def _no_spread(X: np.ndarray, every: bool = False) -> np.ndarray:
    """Per column: are its observed values all equal (0.0 == -0.0), or fewer than two observed?
    With ``every``, only whether all are: the columns after the first with spread are not read."""
    out = np.zeros(X.shape[1], dtype=bool)
    for j in range(X.shape[1]):
        xo = X[:, j][~np.isnan(X[:, j])]
        out[j] = xo.size < 2 or bool(np.all(xo == xo[0]))
        if every and not out[j]:
            break
    return out


def _first_observed(x: np.ndarray) -> float:
    xo = x[~np.isnan(x)]
    return float(xo[0]) if xo.size else math.nan


def zscores(X: np.ndarray) -> np.ndarray:
    """z-scores a partition is built on (missing cells imputed as :func:`prepare` does)."""
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


def build_output(ds, released: np.ndarray, constant: np.ndarray, decimals: int | None = None):
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
