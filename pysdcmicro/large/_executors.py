"""Where the blocks run: this process, a pool of local worker processes, or Dask.

Every executor has one method, ``run(fn, n_tasks, make_args, on_done)``: it calls
``fn(*make_args(i))`` for i = 0..n_tasks-1 and ``on_done(i, result)`` in this process as
each finishes (in any order; callers place results by ``i``, so the order never changes
the answer). Arguments are made only when a task is submitted, and at most a few tasks per
worker are in flight, so at any time only those tasks' blocks exist as extra copies.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal as _signal
import sys
import threading
import time
import types
import warnings
from typing import Any, Callable

from .._errors import InvalidInputError, InvalidTypeError

from .._compile import cached
__all__ = ["make_executor", "available_cores", "stop_pool", "SerialExecutor", "ProcessExecutor", "DaskExecutor"]


def available_cores() -> int:
    """CPU cores this process may use."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


class blas_threads:
    """Run a block with the process's BLAS libraries (OpenBLAS, MKL, BLIS) at ``count``
    threads, restored after (threadpoolctl).

    ``auto``'s chain in the calling process while worker processes run on the other cores:
    after a threaded BLAS call OpenBLAS's idle threads busy-wait and would take a worker's core."""

    def __init__(self, count: int = 1):
        self.count = int(count)
        self._limits = None

    def __enter__(self):
        from threadpoolctl import threadpool_limits

        self._limits = threadpool_limits(limits=self.count, user_api="blas")
        return self

    def __exit__(self, *exc):
        if self._limits is not None:
            self._limits.restore_original_limits()
            self._limits = None


class _worker_environment:
    """Set the BLAS thread variables to 1 (where unset) while worker processes start."""

    def __enter__(self):
        self.added = [name for name in _THREAD_VARIABLES if name not in os.environ]
        for name in self.added:
            os.environ[name] = "1"

    def __exit__(self, *exc):
        for name in self.added:
            os.environ.pop(name, None)


class _sigint_blocked:
    """Block SIGINT in this process while worker processes are started: they
    inherit the blocked mask, so a Ctrl-C that reaches the process group while a worker
    still imports (before :func:`_worker_init` runs) cannot print its traceback; here the
    signal stays pending and is delivered when the block ends, so no Ctrl-C is lost."""

    def __enter__(self):
        self.old = None
        if hasattr(_signal, "pthread_sigmask"):
            try:
                self.old = _signal.pthread_sigmask(_signal.SIG_BLOCK, {_signal.SIGINT})
            except (ValueError, OSError):  # pragma: no cover
                self.old = None

    def __exit__(self, *exc):
        if self.old is not None and _signal.SIGINT not in self.old:
            _signal.pthread_sigmask(_signal.SIG_UNBLOCK, {_signal.SIGINT})


def stop_pool(pool: Any, *, terminate: bool, cancel_futures: bool = True, timeout: float = 2.0) -> None:
    """Shut a ``ProcessPoolExecutor`` down: with ``terminate``, its workers are terminated at
    once (an interrupt, an error, a deadline); otherwise they finish their tasks and exit.

    Either way this returns only once the pool's manager thread has ended (after at most
    ``timeout`` seconds per wait when terminating). That thread closes a wake-up pipe which
    CPython's exit hook for process pools writes to without a lock; if the script ends
    while the thread still runs, the two race and the exit prints an ``OSError`` traceback.
    """
    if pool is None:
        return
    if not terminate:
        pool.shutdown(wait=True, cancel_futures=cancel_futures)
        return
    procs = list((getattr(pool, "_processes", None) or {}).values())
    thread = getattr(pool, "_executor_manager_thread", None)  # shutdown() drops the pool's reference to it
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        try:
            proc.terminate()
        except Exception:  # pragma: no cover  (already gone)
            pass
    for proc in procs:
        proc.join(timeout=timeout)
    if thread is not None and thread is not threading.current_thread():
        thread.join(timeout=timeout)


def _worker_init(compiling: tuple = ()) -> None:
    """Worker processes ignore SIGINT: Ctrl-C in a terminal reaches the whole process group,
    and only the parent decides what to do (it stops the workers and keeps what it has), so
    no worker prints a KeyboardInterrupt traceback. ``compiling``: the kernel families that
    one of the workers compiles first (:func:`compile_family`)."""
    import signal

    if "mdav" in compiling:
        from ..constructive import _mdav

        _mdav.compiled_elsewhere(True)

    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except (ValueError, OSError):  # pragma: no cover  (not the main thread / no signals)
        pass


class main_hidden:
    """Hide the script that runs as ``__main__`` from :mod:`multiprocessing` while worker
    processes start, so that they never import it: a script without an ``if __name__ ==
    "__main__":`` guard would otherwise run once more in every worker (and its call there
    fail with a traceback). The workers then cannot unpickle objects defined in the script;
    :func:`uses_main` tells when a task needs them.

    Only the starting of the workers is affected (a spawned worker receives the script's path
    or module name when it starts, and imports nothing else from this process)."""

    def __enter__(self):
        self.main = sys.modules.get("__main__")
        if self.main is not None:
            sys.modules["__main__"] = types.ModuleType("__main__")  # no __file__, no __spec__
        return self

    def __exit__(self, *exc):
        if self.main is not None:
            sys.modules["__main__"] = self.main


def uses_main(obj: Any, depth: int = 4) -> bool:
    """Whether ``obj`` (a task's function or arguments; containers are searched) holds a
    function, class or instance defined in the script that runs as ``__main__``."""
    if isinstance(obj, (str, bytes, int, float, bool, type(None))) or hasattr(obj, "__array_interface__"):
        return False
    if getattr(obj, "__module__", None) in ("__main__", "__mp_main__"):
        return True
    if getattr(type(obj), "__module__", None) in ("__main__", "__mp_main__"):
        return True
    if depth <= 0:
        return False
    if isinstance(obj, dict):
        return any(uses_main(v, depth - 1) for v in obj.values())
    if isinstance(obj, (list, tuple, set, frozenset)):
        return any(uses_main(v, depth - 1) for v in obj)
    inner = [getattr(obj, name) for name in ("func", "core", "__wrapped__") if hasattr(obj, name)]
    return any(uses_main(v, depth - 1) for v in inner)


def main_guarded() -> bool:
    """Whether this call comes from under the ``if __name__ == "__main__":`` guard of the
    script that runs as ``__main__``: workers may then import the script (it only defines
    things there). False when that cannot be told (no script file, another thread)."""
    import ast

    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    name = getattr(getattr(main, "__spec__", None), "name", None)
    if path is None or (name is not None and name.endswith("__main__")):
        return False  # no file, or a package's __main__ (never imported by a worker)
    frame = sys._getframe(1)
    while frame is not None and not (frame.f_globals is main.__dict__ and frame.f_code.co_name == "<module>"):
        frame = frame.f_back
    if frame is None:
        return False
    try:
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        return False
    line = frame.f_lineno
    for node in tree.body:
        if isinstance(node, ast.If) and node.lineno <= line <= (node.end_lineno or node.lineno) \
                and _is_main_test(node.test):
            return True
    return False


def _is_main_test(test: Any) -> bool:
    import ast

    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s.id for s in sides if isinstance(s, ast.Name)]
    values = [s.value for s in sides if isinstance(s, ast.Constant)]
    return names == ["__name__"] and values == ["__main__"]


def _caller_level() -> int:
    """The ``stacklevel`` of a warning that names the first caller outside pysdcmicro."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package + os.sep):
        frame, level = frame.f_back, level + 1
    return level


def start_workers(pool: Any, count: int, fn: Callable, hide_main: bool = True) -> list:
    """Start the ``count`` workers of a spawn-context ``pool`` now (one task ``fn`` each), with
    SIGINT blocked (see :class:`_sigint_blocked`) and the script hidden (:class:`main_hidden`).
    Later submits start no process: each finds a worker."""
    with main_hidden() if hide_main else contextlib.nullcontext():
        with _sigint_blocked():
            return [pool.submit(fn) for _ in range(count)]


def _warm_up() -> int:
    from . import _tasks  # noqa: F401  (imports numpy and pysdcmicro in the worker)

    _load_cached_kernels()
    return os.getpid()


#: The kernel families of the blocked path (MDAV's rounds, the repair sweeps).
BLOCKED_FAMILIES = ("mdav", "blocked")


def cold_families() -> tuple[str, ...]:
    """The families of :data:`BLOCKED_FAMILIES` that numba's disk cache does not hold yet
    (a fresh install)."""
    from .. import _compile

    return tuple(f for f in BLOCKED_FAMILIES if _compile.cold_kernels((f,)))


def compile_family(family: str) -> str:
    """Compile one kernel family in this worker (a task, on a fresh install).

    The pool queues one such task per cold family before any other, so each family is
    compiled once, by one worker, in parallel with the others, instead of by every worker
    one after the other; the other workers load it from numba's disk cache when they need
    it. While one worker compiles MDAV's rounds, the others' blocks take MDAV's numpy rounds
    (the same groups; see :func:`_worker_init`) instead of compiling them too or waiting.
    Compiling here gives the same machine code as compiling inside the first task."""
    try:
        import numpy as np

        from ..constructive import _mdav

        Z = np.random.default_rng(0).standard_normal((24, 2))
        if family == "mdav":
            _mdav.compiled_elsewhere(False)
            nb = _mdav._kernels()
            if nb is not None:
                _mdav._compiled_labels(nb, Z, 2)
        elif family == "blocked":
            from .._context import Context
            from . import _local

            if _local._kernels() is not None:
                _local.batch_local_search(Z, np.arange(24) // 3, 3, Context(0))
    except Exception:  # pragma: no cover  (compiling ahead never fails a call: the task compiles)
        pass
    return family


def _load_cached_kernels() -> None:
    """Load the compiled MDAV rounds and the repair sweeps from numba's on-disk cache, when
    it holds them (a tenth of a second or more per process): while the workers start, not
    inside a block's or a window's time budget. Nothing is compiled here, and nothing is
    loaded for the families compiled when the package was built (:mod:`pysdcmicro._aot`)."""
    try:
        import numpy as np

        from .. import _aot
        from ..constructive import _mdav

        Z = np.random.default_rng(0).standard_normal((24, 2))
        nb = None if _aot.family("mdav") else _mdav._kernels()  # built ones: nothing to load
        if nb is not None and nb.warm():
            _mdav._compiled_labels(nb, Z, 2)
        from . import _local

        lk = _local._kernels()
        if lk is not None and not _aot.family("blocked") \
                and all(_cached(getattr(lk, name)) for name in ("sweeps", "nearest_groups")):
            from .._context import Context

            _local.batch_local_search(Z, np.arange(24) // 3, 3, Context(0))
    except Exception:  # pragma: no cover  (a warm-up never stops a worker)
        pass


def _cached(dispatcher) -> bool:
    """Whether a numba function is compiled in this process or in numba's on-disk cache."""
    return cached(dispatcher)


class SerialExecutor:
    """Run every task in this process, one after the other."""

    name = "serial"
    workers = 1

    def run(self, fn: Callable, n_tasks: int, make_args: Callable[[int], tuple],
            on_done: Callable[[int, Any], None]) -> None:
        for i in range(n_tasks):
            on_done(i, fn(*make_args(i)))

    def describe(self) -> dict:
        return {"executor": "serial", "workers": 1}

    def close(self, cancel: bool = False) -> None:
        pass


class ProcessExecutor:
    """A ``concurrent.futures.ProcessPoolExecutor`` of ``n_jobs`` worker processes.

    Workers are started with the ``spawn`` method (the same on every platform, and no copy
    of this process's memory) and never import the calling script (:class:`main_hidden`), so
    a script needs no ``if __name__ == "__main__":`` guard. A task that uses code defined in
    the script itself needs the workers to import it: they do when the call comes from under
    the guard, and otherwise the tasks run in this process with one ``RuntimeWarning``. If the
    workers cannot start, the remaining tasks run in this process and a ``RuntimeWarning``
    says why.

    The workers run their BLAS single-threaded (``OPENBLAS_NUM_THREADS``,
    ``OMP_NUM_THREADS`` and ``MKL_NUM_THREADS`` are 1 in their environment unless already
    set): ``n_jobs`` processes already use the cores, and threads on top of them slow the
    small matrix products of the blocks down.
    """

    name = "processes"

    def __init__(self, n_jobs: int):
        self.workers = n_jobs
        self._pool = None
        self._pool_main = False  # whether the pool's workers imported the script
        self.fallback = None
        self.ready_at: float | None = None  # time.monotonic() when the last worker was ready

    def _get_pool(self, with_main: bool = False, ready: bool = True):
        """The pool, started when there is none; with ``ready``, after every worker has
        imported pysdcmicro and loaded its kernels (otherwise the first tasks wait for that
        in the pool's queue)."""
        if self._pool is not None and with_main and not self._pool_main:
            self.close()  # its workers cannot see the script's code: new ones that import it
        if self._pool is None:
            from concurrent.futures import ProcessPoolExecutor, wait

            cold = cold_families() if self.workers > 1 else ()
            with _worker_environment():
                pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"),
                                           initializer=_worker_init, initargs=(cold,))
                try:
                    # every worker now, while their environment is set (spawned lazily otherwise)
                    started = start_workers(pool, self.workers, _warm_up, hide_main=not with_main)
                    self._pool_main = with_main
                    self.ready_at = None
                    waiting, lock = [len(started)], threading.Lock()

                    def one_ready(_fut) -> None:  # in the pool's thread, or here if already done
                        with lock:
                            waiting[0] -= 1
                            if waiting[0] == 0:
                                self.ready_at = time.monotonic()

                    for fut in started:
                        fut.add_done_callback(one_ready)
                    if ready:
                        wait(started)
                    for family in cold:  # queued before any task: one family per worker
                        pool.submit(compile_family, family)
                except BaseException:  # a Ctrl-C while they start: terminated now, not left importing
                    self._pool = pool
                    self.close(cancel=True)
                    raise
            self._pool = pool
        return self._pool

    def _needs_main(self, fn, n_tasks, make_args) -> bool | None:
        """Whether the tasks use code of the script run as ``__main__`` (True), do not
        (False), or use it where workers must not import the script (None: run here)."""
        if not n_tasks or not uses_main((fn, make_args(0))):
            return False
        if main_guarded():
            return True
        self.fallback = "the tasks use code defined in the calling script, outside its main guard"
        warnings.warn("n_jobs > 1: the tasks use code defined in the calling script, which worker processes "
                      "would have to run again (the call is not under `if __name__ == \"__main__\":`); running "
                      "them in this process instead. Define that code in a module, or put the call under the "
                      "guard.", RuntimeWarning, stacklevel=_caller_level())
        return None

    def start(self, ready: bool = True) -> None:
        """Start the workers now (for tasks that need no code of the calling script). With
        ``ready`` (under a time limit), return once they are ready, so that their start is
        not counted in the time the first tasks are given; without, at once: the tasks
        queue while the workers start."""
        if self.fallback is None and self._pool is None:
            try:
                self._get_pool(False, ready)
            except KeyboardInterrupt:
                raise
            except Exception:  # run() tries again and falls back to this process
                pass

    def run(self, fn, n_tasks, make_args, on_done) -> None:
        if self.fallback is not None:
            return SerialExecutor().run(fn, n_tasks, make_args, on_done)
        with_main = self._needs_main(fn, n_tasks, make_args)
        if with_main is None:
            return SerialExecutor().run(fn, n_tasks, make_args, on_done)
        from concurrent.futures import FIRST_COMPLETED, wait
        from concurrent.futures.process import BrokenProcessPool

        done_ids: set[int] = set()
        try:
            pool = self._get_pool(with_main)
            pending: dict = {}
            nxt = 0
            limit = 2 * self.workers
            while nxt < n_tasks or pending:
                while nxt < n_tasks and len(pending) < limit:
                    pending[pool.submit(fn, *make_args(nxt))] = nxt
                    nxt += 1
                finished, _ = wait(list(pending), return_when=FIRST_COMPLETED)
                for fut in sorted(finished, key=pending.__getitem__):
                    i = pending.pop(fut)
                    result = fut.result()
                    done_ids.add(i)
                    on_done(i, result)
        except BrokenProcessPool as exc:
            self.fallback = f"{type(exc).__name__}: {exc}"
            warnings.warn(f"worker processes could not run the blocks ({self.fallback}); running them in this "
                          "process instead.", RuntimeWarning, stacklevel=4)
            self.close()
            for i in range(n_tasks):
                if i not in done_ids:
                    on_done(i, fn(*make_args(i)))
        except BaseException:
            self.close(cancel=True)
            raise

    def describe(self) -> dict:
        out = {"executor": "processes", "workers": self.workers, "start_method": "spawn"}
        if self.fallback:
            out["fallback"] = f"ran in this process: {self.fallback}"
        return out

    def close(self, cancel: bool = False) -> None:
        """Shut the pool down; with ``cancel`` (an interrupt or an error) the workers are
        terminated at once instead of finishing the tasks they run."""
        if self._pool is not None:
            pool, self._pool = self._pool, None
            stop_pool(pool, terminate=cancel)


def _forget_sent_messages(client: Any) -> None:
    """Drop the copies of sent messages the Dask client keeps for debugging.

    ``distributed``'s batched stream to the scheduler keeps its last
    ``distributed.admin.low-level-log-length`` (default 1000) messages under 1 MB each, and
    a submitted task's message holds its arguments: a block of 10^4 x 10 floats is 0.8 MB,
    so up to 1000 blocks or windows (a whole copy of the z-scores at 10^7 records) stayed
    alive in this process. Clearing the log after each task keeps only the tasks in flight.
    """
    log = getattr(getattr(client, "scheduler_comm", None), "recent_message_log", None)
    if log is not None:
        try:
            log.clear()
        except Exception:  # pragma: no cover  (a future distributed without this log)
            pass


class DaskExecutor:
    """Tasks on a ``dask.distributed`` cluster (a ``Client``, or a scheduler address)."""

    name = "dask"

    def __init__(self, client: Any):
        try:
            from distributed import Client
        except ImportError:
            raise InvalidInputError(
                "`client` needs the optional dependency dask.distributed; install it with "
                "`pip install 'pysdcmicro[dask]'`."
            ) from None
        self._own = False
        if isinstance(client, str):
            try:
                client = Client(client, timeout=30)
            except OSError as exc:
                raise InvalidInputError(
                    f"`client` must be a dask.distributed Client or a reachable scheduler address; "
                    f"could not connect to {client!r}: {exc}"
                ) from None
            self._own = True
        elif not isinstance(client, Client):
            raise InvalidTypeError(
                f"`client` must be a dask.distributed Client or a scheduler address string; got {client!r}."
            )
        self.client = client
        info = client.scheduler_info()
        workers = info.get("workers", {})
        self.workers = max(1, sum(int(w.get("nthreads", 1)) for w in workers.values()))
        self.address = str(getattr(client.scheduler, "address", ""))

    def run(self, fn, n_tasks, make_args, on_done) -> None:
        from distributed import as_completed

        futures: dict = {}
        nxt = 0
        limit = 2 * self.workers
        seq = as_completed()

        def submit(i: int) -> None:
            fut = self.client.submit(fn, *make_args(i), pure=False)
            futures[fut.key] = (i, fut)
            seq.add(fut)

        try:
            while nxt < n_tasks and len(futures) < limit:
                submit(nxt)
                nxt += 1
            for fut in seq:
                i, _ = futures.pop(fut.key)
                result = fut.result()
                fut.release()
                _forget_sent_messages(self.client)
                on_done(i, result)
                if nxt < n_tasks:
                    submit(nxt)
                    nxt += 1
        except BaseException:
            for _, fut in futures.values():
                fut.cancel()
            raise

    def describe(self) -> dict:
        return {"executor": "dask", "workers": self.workers, "scheduler": self.address}

    def close(self, cancel: bool = False) -> None:
        if self._own:
            self.client.close()


def make_executor(n_jobs: int, client: Any, n_tasks: int):
    """The executor for a run: Dask with a client, else processes when n_jobs > 1, else serial.

    Inside a daemonic process (a worker of someone else's pool), which may not have
    children, the blocks run serially.
    """
    if client is not None:
        return DaskExecutor(client)
    if n_jobs > 1 and n_tasks > 1 and not multiprocessing.current_process().daemon:
        return ProcessExecutor(min(n_jobs, n_tasks))
    return SerialExecutor()
