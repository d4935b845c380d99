"""The CLI's Dask path on a local cluster of worker processes, measured end to end.

    python -m benchmarks.dask_cluster N [--workers 2] [--memory-limit 3GiB] [--data DIR]

Generates ``make_synthetic(N, 10, kind="clustered", rng=0)`` with an ``id`` column as Parquet
under ``--data`` (default ``/tmp``; never in the repository) unless it is there, starts
``dask scheduler`` and ``dask worker --nworkers W --nthreads 1 --memory-limit L``, runs
``pysdcmicro microaggregate IN.parquet --k 5 --method mdav --dask ADDRESS -o OUT.parquet``
under ``/usr/bin/time -v`` while sampling the resident memory of the scheduler and every
worker process (psutil, every 0.5 s), stops the cluster, then checks the written file on its
own (pandas group-by on the 10 released columns: every class >= k; rows in input order with
the ``id`` column intact; IL recomputed from the original) and prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np


#: Records generated and written per batch above this size (``_generate``).
GEN_BATCH = 1_000_000


def _generate(n: int, path: Path) -> None:
    """``n`` x 10 clustered records with an ``id`` column, as Parquet with row groups of 10^6.

    Up to 10^6 records: ``make_synthetic(n, 10, kind="clustered", rng=0)`` in one call (the
    files of the earlier rows). Above: batch ``b`` of 10^6 records is
    ``make_synthetic(10^6, 10, kind="clustered", n_clusters=1000, rng=[0, b])`` written as
    it is made, so no more than one batch is held; the whole file is then a mixture of
    ``n / 1000`` Gaussian clusters with centres and spreads drawn from the same laws as one
    ``make_synthetic(n, ...)`` call (about 1000 records a cluster), not the same numbers.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pysdcmicro.datasets import make_synthetic

    def table(X, start):
        cols = {"id": pa.array(np.arange(start, start + X.shape[0], dtype=np.int64))}
        for j in range(10):
            cols[f"x{j}"] = pa.array(X[:, j])
        return pa.table(cols)

    if n <= GEN_BATCH:
        pq.write_table(table(make_synthetic(n, 10, kind="clustered", rng=0), 0), path, row_group_size=GEN_BATCH)
        return
    tmp = path.with_suffix(".partial")
    writer = None
    try:
        for b, start in enumerate(range(0, n, GEN_BATCH)):
            m = min(GEN_BATCH, n - start)
            X = make_synthetic(m, 10, kind="clustered", n_clusters=max(2, m // 1000), rng=[0, b])
            t = table(X, start)
            del X
            if writer is None:
                writer = pq.ParquetWriter(tmp, t.schema)
            writer.write_table(t, row_group_size=GEN_BATCH)
        writer.close()
        writer = None
        tmp.rename(path)
    finally:
        if writer is not None:
            writer.close()


class _Sampler(threading.Thread):
    """Peak resident memory per process of a set of process trees."""

    def __init__(self, roots: list[int]):
        super().__init__(daemon=True)
        import psutil

        self.psutil = psutil
        self.roots = roots
        self.peaks: dict[int, tuple[str, int]] = {}
        self.cpu: dict[int, float] = {}
        self.total_peak = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.5):
            total = 0
            for root in self.roots:
                try:
                    procs = [self.psutil.Process(root)]
                    procs += procs[0].children(recursive=True)
                except self.psutil.NoSuchProcess:
                    continue
                for p in procs:
                    try:
                        rss = p.memory_info().rss
                        name = " ".join(p.cmdline()[1:4])[:60]
                        t = p.cpu_times()
                        self.cpu[p.pid] = t.user + t.system
                    except self.psutil.Error:
                        continue
                    total += rss
                    old = self.peaks.get(p.pid, ("", 0))[1]
                    self.peaks[p.pid] = (name, max(old, rss))
            self.total_peak = max(self.total_peak, total)


def _same_priority(pid: int) -> None:
    """Give a process started in its own session (so its own scheduler autogroup, where the
    kernel ignores the process nice value against other sessions) the nice value of this
    process: when the benchmark runs at a raised priority, the cluster and the CLI run at it
    too, not at the equal share of any other session."""
    nice = os.nice(0)
    try:
        with open(f"/proc/{pid}/autogroup", "w") as f:
            f.write(str(nice))
    except OSError:
        pass


def _verify(original: Path, written: Path, k: int, il_reported: float | None) -> dict:
    import pandas as pd

    cols = [f"x{j}" for j in range(10)]
    out = pd.read_parquet(written)
    ids_ok = bool((out["id"].to_numpy() == np.arange(len(out))).all())
    sizes = out.groupby(cols, sort=False, dropna=False).size()
    R = out[cols].to_numpy()
    del out
    X = pd.read_parquet(original, columns=cols).to_numpy()
    mu, sd = X.mean(axis=0), X.std(axis=0, ddof=1)
    sse = float((((X - R) / sd) ** 2).sum())
    sst = float((((X - mu) / sd) ** 2).sum())
    return {"rows": int(R.shape[0]), "id_column_intact": ids_ok, "classes": int(sizes.size),
            "smallest_class": int(sizes.min()), "k_anonymous": bool(sizes.min() >= k),
            "il_recomputed": 100.0 * sse / sst, "il_reported": il_reported}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("n", type=float)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--memory-limit", default="3GiB")
    ap.add_argument("--data", default="/tmp")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--extra", default="", help="more CLI arguments")
    ap.add_argument("--log-length", type=int, default=16,
                    help="distributed.admin.low-level-log-length of the cluster and the CLI (dask's default: 1000)")
    args = ap.parse_args()
    n = int(args.n)
    data = Path(args.data)
    data.mkdir(parents=True, exist_ok=True)
    src = data / f"clustered_{n}x10.parquet"
    dst = data / f"clustered_{n}x10.k{args.k}.out.parquet"
    if not src.exists():
        _generate(n, src)
    bindir = Path(sys.executable).parent
    # distributed keeps, per connection, its last `distributed.admin.low-level-log-length`
    # (default 1000) messages under 1 MB for debugging: on the scheduler these hold the task
    # arguments (blocks and windows of 10^4 x 10 floats, 0.8 MB each), so its memory grew
    # with n (387 MiB at 10^6, 802 MiB at 3 x 10^6). A short log keeps only the recent ones.
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               DASK_DISTRIBUTED__ADMIN__LOW_LEVEL_LOG_LENGTH=str(args.log_length))
    sched_file = data / f"dask-scheduler-{os.getpid()}.json"
    sched = subprocess.Popen([str(bindir / "dask"), "scheduler", "--port", "0", "--no-dashboard",
                              "--scheduler-file", str(sched_file)], env=env, start_new_session=True,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _same_priority(sched.pid)
    workers = None
    try:
        for _ in range(600):
            if sched_file.exists() and sched_file.stat().st_size:
                break
            time.sleep(0.1)
        address = json.loads(sched_file.read_text())["address"]
        workers = subprocess.Popen([str(bindir / "dask"), "worker", address, "--nworkers", str(args.workers),
                                    "--nthreads", "1", "--memory-limit", args.memory_limit, "--no-dashboard"],
                                   env=env, start_new_session=True, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        _same_priority(workers.pid)
        from distributed import Client

        with Client(address, timeout=120) as c:
            c.wait_for_workers(args.workers, timeout=300)
        sampler = _Sampler([sched.pid, workers.pid])
        sampler.start()
        load_before = os.getloadavg()
        cmd = ["/usr/bin/time", "-v", str(bindir / "pysdcmicro"), "microaggregate", str(src), "--k", str(args.k),
               "--method", "mdav", "--variables", ",".join(f"x{j}" for j in range(10)), "--seed", "0",
               "--dask", address, "-o", str(dst)] + args.extra.split()
        started = time.monotonic()
        log = data / f"clustered_{n}x10.k{args.k}.stderr.log"
        with open(log, "w") as errfile:
            client = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errfile, text=True, env=env,
                                      start_new_session=True)
            _same_priority(client.pid)
            stdout, _ = client.communicate()
        run = subprocess.CompletedProcess(cmd, client.returncode, stdout, log.read_text())
        wall = time.monotonic() - started
        load_after = os.getloadavg()
        sampler.stop.set()
        sampler.join()
    finally:
        for proc in (workers, sched):
            if proc is not None:
                proc.terminate()
        for proc in (workers, sched):
            if proc is not None:
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
        sched_file.unlink(missing_ok=True)
    stderr = run.stderr
    client_kib = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", stderr).group(1))
    client_cpu = sum(float(re.search(rf"{what} time \(seconds\): ([0-9.]+)", stderr).group(1))
                     for what in ("User", "System"))
    il = re.search(r"information loss ([0-9.]+) %", run.stdout)
    block_lines = sum(1 for line in stderr.splitlines() if "blocks=" in line)
    row = {
        "n": n, "d": 10, "k": args.k, "workers": args.workers, "memory_limit": args.memory_limit,
        "low_level_log_length": args.log_length,
        "exit": run.returncode, "wall_seconds": wall,
        "client_peak_mib": client_kib / 1024.0,
        "cluster_peaks_mib": {f"{pid} {name}": rss / 2**20 for pid, (name, rss) in sampler.peaks.items()},
        "cluster_total_peak_mib": sampler.total_peak / 2**20,
        "total_peak_mib_upper": client_kib / 1024.0 + sampler.total_peak / 2**20,
        "cpu_seconds_client": client_cpu, "cpu_seconds_cluster": sum(sampler.cpu.values()),
        "load_before": load_before, "load_after": load_after, "progress_block_lines": block_lines,
        "summary": run.stdout.strip().splitlines(),
        "stderr_tail": [line for line in stderr.splitlines() if not line.startswith("\t")][-5:],
    }
    if run.returncode == 0:
        row["check"] = _verify(src, dst, args.k, float(il.group(1)) if il else None)
    print(json.dumps(row, indent=1))


if __name__ == "__main__":
    main()
