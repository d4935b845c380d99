"""The large-data path: blocks of near records, solved in parallel, then border repair.

``microaggregate`` takes this path when ``blocks`` asks for it, and by default
(``blocks="auto"``) for more than :data:`LARGE_N` records:

1. **Blocks.** The records (within each stratum) are split by recursive principal-axis
   bisection (:func:`~pysdcmicro.large.principal_blocks`) into blocks of at most
   ``block_size`` near records; no block has fewer than ``2k`` records (unless a whole
   stratum has fewer, and then it is one group), so there are never small blocks to merge.
2. **Solve.** Each block is microaggregated on its own with the chosen method (and
   ``improve`` steps), in worker processes (``n_jobs``) or on a Dask cluster (``client``).
   Each block gets a seed drawn up front from ``rng``, so the result is the same whatever the
   executor and the order in which blocks finish.
3. **Border repair.** Groups never straddle a block border after step 2. The repair tiles the
   groups into windows of whole groups (weighted principal-axis bisection of the group
   centroids, cut at other quantiles than the blocks' medians so the block borders run
   through the windows) and runs an improvement step in each window (default: the built-in
   move/swap/dissolve local search :func:`~pysdcmicro.large.batch_local_search`, compiled
   when numba is installed; or any
   registered improvement or callable ``improver(Z, labels, k, ctx)``), so groups may cross
   the borders. A window's new partition is kept only if it lowers the window's SSE and every
   group still has at least ``k`` records: the repair never raises the SSE. Windows of one
   pass are disjoint, so they run in parallel; passes alternate the cut quantiles.

The result is a k-partition of the whole data set; IL is computed over the whole data set.
Ctrl-C stops the worker processes at once (they ignore SIGINT themselves, so no worker
traceback) and returns with status ``"limit"``: during the block phase the blocks solved so
far are kept and every other block is grouped by a quick split along its column of largest
spread (runs of k records; O(B log B) per block), with no repair; during the repair the
partition so far is kept. A time limit is
shared: 60 % for the blocks, the rest for the repair passes; blocks not yet solved when it
expires still get their method's quick partition (every record needs a group), repair
windows are then skipped.
There is no lower bound (blocking restricts the groups, so per-block bounds do not bound the
whole problem).

Memory: O(n d) for the data in this process (while the blocks are split, one more reordered
copy of the records, so the split reads slices) plus the blocks in flight (two per worker);
each worker holds one block or window. Time: blocking O(n d^2 log(n / B)); MDAV per block
O(B^2 d / k), so O(n B d / k) in all; one repair pass O(n L s d) per round (L neighbour
groups, s group size) plus O(n W d / k) for the windows' centroid distances.
"""

from __future__ import annotations

import math
import os
import pickle
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .. import _registry
from .._errors import InvalidInputError, InvalidTypeError, StratumTooSmallError
from .._partition import group_means
from .._partition import sse as sse_of
from .._result import Solution
from .._validation import check_n_jobs
from ._blocks import block_sizes, group_windows, split_blocks
from ._executors import SerialExecutor, _load_cached_kernels, available_cores, make_executor
from ._tasks import improve_window_task, peak_rss_kib, solve_block_task

__all__ = ["LARGE_N", "DEFAULT_BLOCK_SIZE", "BlockPlan", "plan_blocks", "solve_blocked", "start_workers_early"]

#: ``blocks="auto"`` takes the large-data path above this many records. Whole-data MDAV,
#: O(n^2 d / k), takes about a minute at 10^5 records of 10 variables on one core.
LARGE_N = 50_000

#: Default block size: MDAV on a block of B records costs O(B^2 d / k), so the whole path
#: costs O(n B d / k); larger blocks cut fewer near neighbours apart. Measured at 10^5 x 10,
#: k = 5, 2 workers (loaded machine): B = 5 000 gave IL 9.903 (uniform) / 0.599 (clustered)
#: in 17-18 s, B = 10 000 gave 9.687 / 0.594 in 24 s; whole-data MDAV 9.932 / 0.649.
DEFAULT_BLOCK_SIZE = 10_000

#: Default number of border-repair passes and their window cut quantiles (alternating).
DEFAULT_REPAIR_PASSES = 2
_QUANTILES = (0.3, 0.7)

_OPTION_KEYS = ("size", "repair", "repair_options", "repair_passes", "window_size", "repair_scope")


@dataclass
class BlockPlan:
    """Validated settings of the large-data path."""

    block_size: int
    repair: Any = "batch"
    repair_options: dict = field(default_factory=dict)
    repair_passes: int = DEFAULT_REPAIR_PASSES
    window_size: int | None = None
    repair_scope: str = "all"
    n_jobs: int = 1
    client: Any = None
    reason: str = "requested"

    def settings(self) -> dict:
        repair = self.repair if self.repair is None or isinstance(self.repair, str) else \
            getattr(self.repair, "__name__", "custom")
        return {"block_size": self.block_size, "repair": repair, "repair_options": dict(self.repair_options),
                "repair_passes": self.repair_passes, "window_size": self.window_size or self.block_size,
                "repair_scope": self.repair_scope, "n_jobs": self.n_jobs, "dask": self.client is not None, "reason": self.reason}


def _check_int(value: Any, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InvalidTypeError(f"`{name}` must be an integer >= {minimum}; got {value!r}.")
    if value < minimum:
        raise InvalidInputError(f"`{name}` must be an integer >= {minimum}; got {int(value)}.")
    return int(value)


def _check_repair(repair: Any) -> Any:
    if repair is None or repair is False or repair == "none":
        return None
    if repair == "auto" or repair == "batch":
        return "batch"
    if isinstance(repair, str):
        return _registry.get_improvement(repair).name
    if callable(repair):
        return repair
    raise InvalidTypeError(
        f"`repair` must be 'auto', 'none', an improvement name or a callable; got {repair!r}."
    )


def plan_blocks(blocks: Any, n_jobs: Any, client: Any, n: int, k: int) -> BlockPlan | None:
    """Validate ``blocks``, ``n_jobs`` and ``client``; the plan, or None for whole-data."""
    jobs = check_n_jobs(n_jobs, default=available_cores())  # None, 0 and -1: every available core
    if client is not None and not isinstance(client, str) and not hasattr(client, "submit"):
        raise InvalidTypeError(
            f"`client` must be a dask.distributed Client or a scheduler address string; got {client!r}."
        )
    options: dict = {}
    if blocks is None or blocks is False:
        return None
    if isinstance(blocks, dict):
        unknown = [key for key in blocks if key not in _OPTION_KEYS]
        if unknown:
            raise InvalidInputError(
                f"`blocks` has no option {unknown[0]!r}; its options are: {', '.join(_OPTION_KEYS)}."
            )
        options = dict(blocks)
        size = options.pop("size", "auto")
        reason = "requested"
    elif isinstance(blocks, str):
        if blocks != "auto":
            raise InvalidInputError(
                f"`blocks` must be None, 'auto', a block size (integer) or a dict of options; got {blocks!r}."
            )
        if n <= LARGE_N:
            return None
        size, reason = "auto", f"auto: more than {LARGE_N} records"
    elif isinstance(blocks, (int, np.integer)) and not isinstance(blocks, bool):
        size, reason = blocks, "requested"
    else:
        raise InvalidTypeError(
            f"`blocks` must be None, 'auto', a block size (integer) or a dict of options; got {blocks!r}."
        )
    block_size = DEFAULT_BLOCK_SIZE if size == "auto" else _check_int(size, "blocks", 1)
    block_size = max(block_size, 2 * k)
    repair = _check_repair(options.get("repair", "auto"))
    repair_options = options.get("repair_options") or {}
    if not isinstance(repair_options, dict):
        raise InvalidTypeError(f"`repair_options` must be a dict; got {repair_options!r}.")
    if isinstance(repair, str) and repair != "batch":
        _registry.get_improvement(repair).check_options(repair_options)
    passes = _check_int(options.get("repair_passes", DEFAULT_REPAIR_PASSES), "repair_passes", 0)
    window = options.get("window_size")
    window = None if window is None else max(_check_int(window, "window_size", 1), 2 * k)
    scope = options.get("repair_scope", "all")
    if scope not in ("borders", "all"):
        raise InvalidInputError(f"`repair_scope` must be 'borders' or 'all'; got {scope!r}.")
    return BlockPlan(block_size=block_size, repair=repair, repair_options=dict(repair_options),
                     repair_passes=passes, window_size=window, repair_scope=scope, n_jobs=jobs, client=client,
                     reason=reason)


def _repair_core(repair: Any) -> Any:
    """What a repair task receives: "batch" (the built-in search), or the improvement core
    itself (a registered name is looked up here, so a worker needs no registry)."""
    if isinstance(repair, str) and repair != "batch":
        return _registry.get_improvement(repair).core
    return repair


def _picklable(obj: Any) -> bool:
    try:
        pickle.dumps(obj)
        return True
    except Exception:
        return False


#: Seconds per record x column kept back from a time limit for the release that follows the
#: partition (group means, the k-anonymity check): about 0.6 s at 2 x 10^5 x 6 on a busy core.
RELEASE_SECONDS_PER_CELL = 5e-7

#: Under a time limit with less than this many seconds left, the blocks and the repair run
#: in this process: starting worker processes (a fresh interpreter importing numpy, numba
#: and pysdcmicro) takes seconds on a busy machine.
SERIAL_BELOW_SECONDS = 10.0


def _builtin(*parts: Any) -> bool:
    """Whether ``parts`` (cores, steps, repair) are all pysdcmicro's own (no script code)."""
    for part in parts:
        for item in (part if isinstance(part, (list, tuple)) else [part]):
            core = getattr(item, "core", item)
            if callable(core) and not str(getattr(core, "__module__", "")).startswith("pysdcmicro."):
                return False
    return True


def _roots(strata: np.ndarray | None, strata_names: list, n: int, k: int) -> list[np.ndarray]:
    if strata is None:
        return [np.arange(n)]
    members = [np.flatnonzero(strata == s) for s in range(len(strata_names))]
    for s, rows in enumerate(members):
        if rows.size < k:
            raise StratumTooSmallError(
                f"stratum {strata_names[s]} has {rows.size} record{'s' if rows.size != 1 else ''}; "
                f"every stratum needs at least k={k} (merge it with another stratum or lower k)."
            )
    return members


class _Memory:
    """Peak resident memory of every worker process seen (by process id)."""

    def __init__(self):
        self.peaks: dict[int, int] = {}

    def add(self, result: dict, local_pid: int) -> None:
        pid = result.get("pid")
        if pid is not None and pid != local_pid:
            self.peaks[pid] = max(self.peaks.get(pid, 0), int(result.get("peak_kib", 0)))

    def info(self) -> dict:
        vals = list(self.peaks.values())
        return {"main_peak_mib": peak_rss_kib() / 1024.0, "worker_processes": len(vals),
                "worker_peak_mib": max(vals) / 1024.0 if vals else 0.0,
                "worker_peak_mib_total": sum(vals) / 1024.0}


def start_workers_early(plan: BlockPlan | None, n: int, k: int, *, method: Any, improve: Any,
                        strata: np.ndarray | None = None, strata_names: list | None = None):
    """The worker processes of a blocked run without a time limit, started before the data
    are standardized, so that their start (a fresh interpreter importing numpy, numba and
    pysdcmicro, seconds on many cores) overlaps the preparation and the split instead of
    following them. None when the run would not start them (whole data, a time limit, a
    Dask client, one worker or one block, code of the calling script).
    :func:`solve_blocked` takes the executor (``executor=``); whoever started it closes it
    if the run ends before."""
    if plan is None or plan.client is not None or plan.n_jobs <= 1 or not _builtin(method, improve, plan.repair):
        return None
    if strata is None and n <= plan.block_size:
        return None
    try:
        roots = _roots(strata, strata_names or [], n, k)
    except Exception:  # reported where the blocks are made
        return None
    n_blocks = sum(len(block_sizes(int(root.size), k, plan.block_size)) for root in roots)
    executor = make_executor(plan.n_jobs, None, n_blocks)
    if not hasattr(executor, "start"):
        return None
    executor.start(ready=False)
    return executor


def solve_blocked(plan: BlockPlan, Z: np.ndarray, k: int, ctx, *, method: Any, options: dict,
                  improve: Any, improve_options: dict | None, strata: np.ndarray | None = None,
                  strata_names: list | None = None, executor: Any = None) -> tuple[np.ndarray, str, str, None, dict]:
    """Blocks, per-block solve, border repair. Returns ``(labels, status, message, None, info)``.
    ``executor``: workers already started (:func:`start_workers_early`); closed here."""
    n = Z.shape[0]
    if ctx.deadline.limited:  # the release after the partition (group means, its check) needs time too
        reserve = min(RELEASE_SECONDS_PER_CELL * Z.size, 0.5 * ctx.remaining())
        ctx = ctx.child(seconds=max(0.0, ctx.remaining() - reserve))
    roots = _roots(strata, strata_names or [], n, k)
    feed = _BlockFeed(Z, k, plan.block_size, roots)  # split in a thread while the first blocks run
    n_blocks = len(feed)
    method_ref = method
    serial_reason = None
    if callable(method) and not _picklable(method):
        serial_reason = "the method callable cannot be pickled, so blocks run in this process"
    if improve is not None and not _picklable(improve):
        serial_reason = "an improve callable cannot be pickled, so blocks run in this process"
    if callable(plan.repair) and not _picklable(plan.repair):
        serial_reason = "the repair callable cannot be pickled, so it runs in this process"
    if serial_reason is None and plan.client is None and ctx.deadline.limited \
            and ctx.remaining() < SERIAL_BELOW_SECONDS and plan.n_jobs > 1:
        serial_reason = (f"less than {SERIAL_BELOW_SECONDS:g} s of time limit: worker processes would spend "
                         "a large part of it starting, so the blocks run in this process")
    if executor is not None and serial_reason:
        executor.close(cancel=True)
        executor = None
    if executor is None:
        executor = SerialExecutor() if serial_reason else make_executor(plan.n_jobs, plan.client, n_blocks)
    if _builtin(method, improve, plan.repair):
        # workers started (and their kernels loaded) now, while the split makes the first
        # blocks, and before the blocks' time is shared out
        if hasattr(executor, "start"):
            executor.start(ready=ctx.deadline.limited)
        elif ctx.deadline.limited:
            _load_cached_kernels()
    memory = _Memory()
    local_pid = os.getpid()
    block_info: dict = {"count": n_blocks, "block_size": plan.block_size}
    blocks_started = time.monotonic()
    try:
        block_labels, statuses, messages, seconds, interrupted, blocks, block_sses = _solve_blocks(
            feed, Z, k, ctx, executor, memory, local_pid, method_ref, options, improve, improve_options,
            share=0.6 if plan.repair is not None and plan.repair_passes else 1.0)
        unsplit = rest_parts = 0
        if not interrupted:
            blocks = feed.all()
        elif len(blocks) < n_blocks:  # interrupted while the blocks were still being split
            blocks, block_labels = list(blocks), list(block_labels)
            covered = np.zeros(n, dtype=bool)
            for rows in blocks:
                covered[rows] = True
            for root in roots:  # the rest of each root: its unsplit blocks together (k or more records)
                rest = np.asarray(root, dtype=np.intp)[~covered[root]]
                if rest.size:
                    blocks.append(rest)
                    block_labels.append(quick_labels(Z[rest], k))
                    statuses.append("interrupted")
                    messages.append("interrupted (Ctrl-C) before these records were split into blocks: quick split")
                    unsplit += int(rest.size)
                    rest_parts += 1
    except BaseException:
        executor.close(cancel=True)
        raise
    seconds_split = feed.seconds
    labels = np.empty(n, dtype=np.int64)
    offset = 0
    for rows, lab in zip(blocks, block_labels):
        labels[rows] = lab + offset
        offset += int(lab.max()) + 1
    sizes = [int(b.size) for b in blocks]
    counts: dict[str, int] = {}
    for s in statuses:
        counts[s] = counts.get(s, 0) + 1
    block_info.update({
        "sizes": sizes, "min_size": min(sizes), "max_size": max(sizes), "statuses": counts,
        "not_done": [{"block": i, "status": s, "message": m} for i, (s, m) in enumerate(zip(statuses, messages))
                     if s != "done"][:100],
        "seconds_split": seconds_split, "seconds": seconds, "reason": plan.reason,
    })
    ready_at = getattr(executor, "ready_at", None)
    if ready_at is not None:  # how long the block phase waited for the workers to start
        block_info["seconds_workers_start"] = max(0.0, min(seconds, ready_at - blocks_started))
    status = "limit" if "limit" in counts else "done"
    message_parts = []
    if interrupted:
        quick = counts.get("interrupted", 0) - rest_parts  # blocks split but not solved
        solved = len(blocks) - rest_parts - quick
        rest = f", the {unsplit} records not yet split into blocks by a quick split too" if unsplit else ""
        message_parts.append(f"interrupted (Ctrl-C) during the block phase: {solved} of {n_blocks} blocks solved, "
                             f"{quick} grouped by a quick split along one column{rest}; no border repair")
        block_info["interrupted"] = True
        status = "limit"
    elif status == "limit":
        message_parts.append(f"{counts['limit']} of {n_blocks} blocks stopped by the time limit")
    if interrupted:  # return at once: the result's own IL is computed by the caller
        info = {"blocks": block_info | executor.describe(), "memory": memory.info(),
                "repair": {"improver": plan.settings()["repair"], "passes": [], "skipped": "interrupted (Ctrl-C)"}}
        executor.close(cancel=True)
        return labels, "limit", "; ".join(message_parts), None, info
    # each block's SSE came from its task (groups never straddle blocks here): summed in
    # block order, so the same whatever order the blocks finished in
    block_sse = math.fsum(block_sses) if None not in block_sses else sse_of(Z, labels)
    ctx.report(stage="blocks", sse=block_sse, blocks=f"{n_blocks}/{n_blocks}")
    repair_info: dict = {"improver": plan.settings()["repair"], "options": dict(plan.repair_options), "passes": []}
    block_labels = labels.copy() if plan.repair is not None and n_blocks > 1 else labels
    try:
        if plan.repair is not None and n_blocks > 1:
            region = None
            if plan.repair == "batch" and plan.repair_scope == "borders":
                region = np.empty(n, dtype=np.int64)  # each record's block: the first pass starts at their borders
                for i, rows in enumerate(blocks):
                    region[rows] = i
            labels, r_status, r_message = _repair(plan, Z, k, ctx, labels, strata, executor, memory, local_pid,
                                                  repair_info, region, block_sse)
            if r_status == "limit":
                status = "limit"
            if r_message:
                message_parts.append(r_message)
        else:
            repair_info["skipped"] = "one block" if n_blocks <= 1 else "repair is off"
    finally:
        executor.close()
    # The passes track their SSE from the windows' own before/after values; the result's is
    # computed over every record once, and a repair that raised it (a bug: every window is
    # checked) is dropped, never a worse partition.
    repair_info.pop("_sse", None)
    final_sse = sse_of(Z, labels) if repair_info["passes"] else block_sse
    if final_sse > block_sse + 1e-9 * max(1.0, block_sse):
        labels, final_sse = block_labels, block_sse
        repair_info["dropped"] = "the repaired partition had a larger SSE than the blocks': kept the blocks'"
    del block_labels
    repair_info["sse_before"] = block_sse
    repair_info["sse_after"] = final_sse
    il_before, il_after = ctx._il(block_sse), ctx._il(final_sse)
    if il_before is not None:
        repair_info["information_loss_before"] = il_before
        repair_info["information_loss_after"] = il_after
        repair_info["gain_information_loss"] = il_before - il_after
    block_info.update(executor.describe())
    if serial_reason:
        block_info["serial_reason"] = serial_reason
    info = {"blocks": block_info, "repair": repair_info, "memory": memory.info()}
    message = "; ".join([_description(plan, ctx, n_blocks, block_info, repair_info)] + message_parts)
    return labels, status, message, None, info


def _description(plan: BlockPlan, ctx, n_blocks: int, block_info: dict, repair_info: dict) -> str:
    """What the large-data path did, for the result's message: the blocks, where they ran,
    the border repair and its gain, and why there is no lower bound."""
    method = getattr(getattr(ctx, "_shared", None), "method", "") or "the method"
    sizes = (f"{block_info['min_size']}..{block_info['max_size']}" if block_info["min_size"] != block_info["max_size"]
             else f"{block_info['max_size']}")
    workers = block_info.get("workers", 1)
    where = ("in this process" if block_info.get("executor") == "serial" or workers <= 1
             else f"on {workers} {'Dask workers' if block_info.get('executor') == 'dask' else 'worker processes'}")
    text = (f"blocked ({plan.reason}): {n_blocks} block{'s' if n_blocks != 1 else ''} of {sizes} records, "
            f"{method} in each, {where}")
    passes = repair_info.get("passes") or []
    if passes:
        windows = sum(p.get("windows", 0) for p in passes)
        gain = ""
        if "information_loss_before" in repair_info:
            gain = f", IL {repair_info['information_loss_before']:.4f} -> {repair_info['information_loss_after']:.4f} %"
        text += f"; border repair: {len(passes)} pass{'es' if len(passes) != 1 else ''} over {windows} windows{gain}"
    elif repair_info.get("skipped"):
        text += f"; no border repair ({repair_info['skipped']})"
    return text + "; no lower bound (blocks restrict the groups)"


class _BlockFeed:
    """The blocks of :func:`~pysdcmicro.large.principal_blocks`, split in helper threads
    while the first ones are already being solved (the split is the serial step before the
    workers can start: seconds at 10^6 x 10, with the workers idle). ``feed[i]`` waits until
    block ``i`` exists; ``len(feed)`` is known at once (the cut positions depend on the
    record counts only). The same blocks in the same order as the list version."""

    def __init__(self, Z: np.ndarray, k: int, block_size: int, roots: list[np.ndarray]):
        import threading

        self._sizes = [m for root in roots for m in block_sizes(int(root.size), k, block_size)]
        self._blocks: list[np.ndarray | None] = [None] * len(self._sizes)
        self._error: BaseException | None = None
        self._done = False
        self._stop = False
        self.seconds = 0.0
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._run, args=(Z, k, block_size, roots), daemon=True,
                                        name="pysdcmicro-split")
        self._thread.start()

    def _emit(self, i: int, rows: np.ndarray) -> None:
        with self._cond:
            self._blocks[i] = rows
            self._cond.notify_all()

    def _run(self, Z, k, block_size, roots) -> None:
        started = time.monotonic()
        try:
            split_blocks(Z, k, block_size, roots, self._emit, stopped=lambda: self._stop)
        except BaseException as exc:  # pragma: no cover  (re-raised in the caller's thread)
            self._error = exc
        finally:
            self.seconds = time.monotonic() - started
            with self._cond:
                self._done = True
                self._cond.notify_all()

    def __len__(self) -> int:
        return len(self._sizes)

    def __getitem__(self, i: int) -> np.ndarray:
        with self._cond:
            while self._blocks[i] is None and not self._done:
                self._cond.wait()
            if self._error is not None:
                raise self._error
            return self._blocks[i]

    def stop(self) -> list[np.ndarray]:
        """The first blocks, as far as they are all split; the split stops (at its next cut:
        no waiting for the rest, after a Ctrl-C). Their rows are disjoint; the records not
        in them form, within each root, a union of whole blocks and unsplit parts (so k or
        more, or none)."""
        with self._cond:
            self._stop = True
            if self._error is not None:
                raise self._error
            done = next((i for i, rows in enumerate(self._blocks) if rows is None), len(self._blocks))
            return list(self._blocks[:done])

    def all(self) -> list[np.ndarray]:
        self._thread.join()
        if self._error is not None:
            raise self._error
        if [None if b is None else b.size for b in self._blocks] != self._sizes:  # pragma: no cover
            raise RuntimeError("the blocks do not have their planned sizes")  # (a planning bug)
        return self._blocks


def _task_seconds(deadline, workers: int, left: int) -> float | None:
    if not deadline.limited:
        return None
    rem = deadline.remaining()
    return max(1e-6, min(rem, rem * workers / max(1, left)))


def _solve_blocks(blocks, Z, k, ctx, executor, memory, local_pid, method, options, improve, improve_options,
                  share):
    n_blocks = len(blocks)
    seeds = [int(s) for s in ctx.rng.integers(0, 2**63 - 1, size=n_blocks, dtype=np.int64)]
    phase = ctx.deadline.child(fraction=share)
    out: list = [None] * n_blocks
    started = time.monotonic()
    done = [0]

    def make_args(i: int) -> tuple:
        return (Z[blocks[i]], k, method, options, improve, improve_options, seeds[i],
                _task_seconds(phase, executor.workers, n_blocks - i))

    def on_done(i: int, result: dict) -> None:
        out[i] = result
        memory.add(result, local_pid)
        done[0] += 1
        ctx.report(stage="blocks", iteration=done[0], blocks=f"{done[0]}/{n_blocks}",
                   records=int(blocks[i].size))

    interrupted = False
    try:
        executor.run(solve_block_task, n_blocks, make_args, on_done)
    except KeyboardInterrupt:
        ctx.deadline.stop()
        executor.close(cancel=True)
        interrupted = True
        if isinstance(blocks, _BlockFeed):  # the blocks split so far; the caller groups the rest
            blocks = blocks.stop()
            n_blocks = len(blocks)
            out = out[:n_blocks]
        for i in range(n_blocks):
            if out[i] is None:
                out[i] = {"labels": quick_labels(Z[blocks[i]], k), "status": "interrupted",
                          "message": "interrupted (Ctrl-C): quick split"}
    labels = [r["labels"] for r in out]
    for rows, lab in zip(blocks, labels):
        if lab.shape != (rows.size,):  # pragma: no cover  (a core bug; _solve_block checks it)
            raise RuntimeError("a block returned labels of the wrong length")
    return (labels, [r["status"] for r in out], [r["message"] for r in out], time.monotonic() - started,
            interrupted, blocks, [r.get("sse") for r in out])


def quick_labels(Z: np.ndarray, k: int) -> np.ndarray:
    """A k-partition in O(n d + n log n): runs of k records along the column of largest
    spread (the last run takes the remainder, k..2k-1 records). What an interrupted block
    gets: it must be quick, not good."""
    n = Z.shape[0]
    if n < 2 * k:
        return np.zeros(n, dtype=np.int64)
    col = int(np.argmax(Z.max(axis=0) - Z.min(axis=0)))
    x = Z[:, col]
    order = np.argsort(x)  # the unstable SIMD sort (4x faster); the stable order where there are ties
    ranked = x[order]
    if np.any(ranked[1:] == ranked[:-1]) or np.isnan(ranked[-1]):
        order = np.argsort(x, kind="stable")
    g = n // k
    labels = np.empty(n, dtype=np.int64)
    labels[order] = np.minimum(np.arange(n) // k, g - 1)
    return labels


def _group_stats(Z: np.ndarray, labels: np.ndarray):
    """Group sizes, centroids (columns on threads for large data) and which groups have records."""
    g = int(labels.max()) + 1
    sizes = np.bincount(labels, minlength=g)
    return sizes, group_means(Z, labels, g), sizes > 0


def _repair(plan: BlockPlan, Z, k, ctx, labels, strata, executor, memory, local_pid, info, region=None,
            start_sse=None):
    """Border-repair passes over windows of whole groups. Never raises the SSE.

    ``region`` (per record, or None): where each record was last improved (its block for the
    first pass, its window of the pass before for the next); the built-in search in a window
    then starts from the groups at those borders (``repair_scope="borders"``; default ``"all"``:
    every group of a window starts unsettled)."""
    window_size = plan.window_size or plan.block_size
    repair_core = _repair_core(plan.repair)
    status, message = "done", ""
    started_all = time.monotonic()
    for p in range(plan.repair_passes):
        if ctx.expired():
            status, message = "limit", f"time limit reached before border-repair pass {p + 1}"
            break
        started = time.monotonic()
        sizes, C, live = _group_stats(Z, labels)
        gids = np.flatnonzero(live)
        if strata is not None:
            first = np.full(sizes.size, labels.size)
            np.minimum.at(first, labels, np.arange(labels.size))
            group_root = strata[first[gids]]
            sets = [gids[group_root == s] for s in np.unique(group_root)]
        else:
            sets = [gids]
        windows: list[np.ndarray] = []
        q = _QUANTILES[p % len(_QUANTILES)]
        for ids in sets:
            for w in group_windows(C[ids], sizes[ids], window_size, q):
                if w.size >= 2:
                    windows.append(ids[w])
        n_win = len(windows)
        # Rows of every window at once (windows hold whole groups and a pass keeps each
        # window's records inside it): one stable sort by window, O(n log n), no per-group loop.
        win_of_group = np.full(sizes.size, n_win, dtype=np.int64)
        local_id = np.empty(sizes.size, dtype=np.int64)  # each group's number inside its window
        for i, w in enumerate(windows):
            win_of_group[w] = i
            local_id[w] = np.arange(w.size)
        rec_win = win_of_group[labels]
        # stable, so each window's rows stay in record order; 16-bit keys sort by radix, O(n)
        win_order = np.argsort(rec_win.astype(np.uint16) if n_win < 65535 else rec_win, kind="stable")
        win_starts = np.searchsorted(rec_win[win_order], np.arange(n_win + 1))
        prev_region, region = region, (rec_win if region is not None else None)  # records stay in their window
        del rec_win
        seeds = [int(s) for s in ctx.rng.integers(0, 2**63 - 1, size=n_win, dtype=np.int64)]
        before_pass = sse_of(Z, labels) if start_sse is None else start_sse
        start_sse = info["_sse"] = None
        gains: dict[int, float] = {}  # accepted windows' SSE decreases (windows hold whole groups)
        improved = [0]
        done = [0]
        next_id = [int(labels.max()) + 1]
        phase = ctx.deadline.child(fraction=1.0 / max(1, plan.repair_passes - p))

        def window_rows(i: int) -> np.ndarray:
            return win_order[win_starts[i]:win_starts[i + 1]]

        def make_args(i: int) -> tuple:
            rows = window_rows(i)
            return (Z[rows], local_id[labels[rows]], k, repair_core, plan.repair_options, seeds[i],
                    _task_seconds(phase, executor.workers, n_win - i),
                    None if prev_region is None else prev_region[rows])

        accepted: dict[int, np.ndarray] = {}

        def on_done(i: int, result: dict) -> None:
            memory.add(result, local_pid)
            done[0] += 1
            new = result.get("labels")
            if new is not None:
                # the task computed both SSEs of its window (improve_window_task); here only
                # what costs O(window): the pass's SSE is recomputed over all records below
                new = np.asarray(new, dtype=np.int64)
                before, after = float(result["before"]), float(result["after"])
                if new.shape == (win_starts[i + 1] - win_starts[i],) and new.min() >= 0:
                    counts = np.bincount(new)
                    if counts[counts > 0].min() >= k and after < before - 1e-12 * max(1.0, before):
                        accepted[i] = new
                        gains[i] = before - after
            if done[0] == n_win or done[0] % max(1, n_win // 20) == 0:
                ctx.report(stage=f"repair {p + 1}/{plan.repair_passes}", iteration=done[0],
                           windows=f"{done[0]}/{n_win}")

        def apply_accepted() -> None:
            # In window order, not in the order the windows finished: a window with more
            # groups than it was given (a custom improver) numbers its extra groups from
            # next_id, so the order would change the labels, hence the next pass's windows.
            for i in sorted(accepted):
                new, win, rows = accepted[i], windows[i], window_rows(i)
                ids = np.unique(new)
                mapping = np.empty(int(ids.max()) + 1, dtype=np.int64)
                reuse = min(ids.size, win.size)
                mapping[ids[:reuse]] = win[:reuse]
                if ids.size > reuse:
                    extra = ids.size - reuse
                    mapping[ids[reuse:]] = np.arange(next_id[0], next_id[0] + extra)
                    next_id[0] += extra
                labels[rows] = mapping[new]
                improved[0] += 1
            accepted.clear()

        planned = time.monotonic()
        try:
            executor.run(improve_window_task, n_win, make_args, on_done)
        except KeyboardInterrupt:
            ctx.deadline.stop()
            executor.close(cancel=True)
            apply_accepted()
            status, message = "limit", "interrupted (Ctrl-C) during border repair: best partition so far"
            info["passes"].append({"windows": n_win, "windows_done": done[0], "improved": improved[0],
                                   "interrupted": True})
            break
        seconds_windows = time.monotonic() - planned
        apply_accepted()
        used = np.bincount(labels) > 0  # groups dissolved by a window: renumber without gaps, O(n)
        if not used.all():
            labels = (np.cumsum(used) - 1)[labels]
        # windows are disjoint and hold whole groups: the pass lowers the SSE by the sum of the
        # accepted windows' decreases (in window order); the caller checks the final SSE
        after_pass = before_pass - math.fsum(gains[i] for i in sorted(gains))
        start_sse = info["_sse"] = after_pass
        pass_info = {"windows": n_win, "improved": improved[0], "quantile": q,
                     "sse_before": before_pass, "sse_after": after_pass,
                     "seconds": time.monotonic() - started, "seconds_windows": seconds_windows}
        il = ctx._il(after_pass)
        if il is not None:
            pass_info["information_loss_after"] = il
        info["passes"].append(pass_info)
        ctx.report(stage=f"repair {p + 1}/{plan.repair_passes}", sse=after_pass, windows=f"{n_win}/{n_win}")
        if ctx.expired() and p + 1 < plan.repair_passes:
            status, message = "limit", f"time limit reached after border-repair pass {p + 1}"
            break
    info["seconds"] = time.monotonic() - started_all
    return labels, status, message
