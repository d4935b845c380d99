"""Ctrl-C latency of the command line at 10^6 records: the outputs should be in place within 5 s.

For each delay: start ``pysdcmicro microaggregate big.csv --k 3 -o out.csv --report rep.json
-q`` (the default call: method ``auto``, blocks in worker processes) in a new process group,
send SIGINT to the group after the delay (as a terminal's Ctrl-C does), and measure from the
signal:

* ``outputs``: both outputs at their final paths (polled every 10 ms; they are renamed into
  place together, last of all);
* ``exit``: the process has exited;
* ``workers``: the command's worker processes are gone (``-`` if it had none at the
  signal; multiprocessing's resource tracker, which lives until the exit, is not counted).

Then it checks: exit status 0, no ``Traceback`` on stderr, status ``limit`` in the report,
and the written file independently: k-anonymous (a pandas group-by of the released rows:
smallest group >= k) and the report's IL recomputed from the file (z-scores of the original
by column mean and sample sd, SSE / SST) to a relative 1e-9.

The data: ``make_synthetic(10**6, 10, kind="clustered", rng=0)`` written once as
``big.csv`` (columns x0..x9) in ``--data-dir``.

Usage (on an otherwise idle machine, at most ~5 minutes per call)::

    python -m benchmarks.interrupt_latency --delays 2,4,20 --data-dir DIR

Prints a Markdown table (commit, system load at the signal); ``--append FILE`` adds the
rows to a results file.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
N, D, K = 10**6, 10, 3


TABLE_HEAD = "| delay | phase (report) | outputs | exit | workers stopped | rc | traceback | status | file | load | commit |"
TABLE_RULE = "|---|---|---|---|---|---|---|---|---|---|---|"
PAGE_HEAD = (
    "# Ctrl-C latency at 10^6 x 10\n\n"
    "Written by `python -m benchmarks.interrupt_latency --delays ... --append FILE`: the default call "
    "`pysdcmicro microaggregate big.csv --k 3 -o out.csv --report rep.json -q` on "
    "`make_synthetic(10**6, 10, kind=\"clustered\", rng=0)`, SIGINT to its process group after each "
    "delay; seconds from the signal to both outputs in place, to the exit and to the workers' end; "
    "the written file checked independently (k-anonymous, IL as reported); system load (1 min) at "
    "the signal.\n")


def _commit() -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=HERE,
                           capture_output=True, text=True)
    return out.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def _load() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def ensure_data(data_dir: Path) -> Path:
    path = data_dir / "big.csv"
    if not path.exists():
        import pandas as pd

        from pysdcmicro._csvio import write_csv
        from pysdcmicro.datasets import make_synthetic

        data_dir.mkdir(parents=True, exist_ok=True)
        X = make_synthetic(N, D, kind="clustered", rng=0)
        tmp = path.with_suffix(".partial")
        write_csv(pd.DataFrame(X, columns=[f"x{j}" for j in range(D)]), tmp)
        tmp.replace(path)
    return path


def _children(pid: int) -> list[int]:
    """Worker processes of ``pid``: its descendants (from /proc) started by
    multiprocessing's ``spawn_main``, the resource tracker left out (it lives until exit)."""
    return [c for c in _descendants(pid) if _is_worker(c)]


def _is_worker(pid: int) -> bool:
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"spawn_main" in cmd and b"resource_tracker" not in cmd


def _descendants(pid: int) -> list[int]:
    """Descendants of ``pid`` (from /proc)."""
    parent = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parent[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        out += kids
        todo += kids
    return out


def _check_file(big: Path, out: Path, report: dict) -> str:
    """'ok' or what is wrong with the written release (independent of the package's check)."""
    import pandas as pd

    X = pd.read_csv(big, dtype=np.float64).to_numpy()
    R = pd.read_csv(out, dtype=np.float64)
    cols = list(R.columns)
    smallest = int(R.groupby(cols, sort=False).size().min())
    R = R.to_numpy()
    if smallest < K:
        return f"NOT {K}-anonymous (smallest class {smallest})"
    mu = X.mean(axis=0)
    sd = X.std(axis=0, ddof=1)
    sse = float((((X - R) / sd) ** 2).sum())
    sst = float((((X - mu) / sd) ** 2).sum())
    il = 100.0 * sse / sst
    if not np.isclose(il, report["information_loss"], rtol=1e-9, atol=0):
        return f"IL {il!r} != reported {report['information_loss']!r}"
    return f"ok (smallest class {smallest})"


def run_one(big: Path, work: Path, delay: float, extra: list[str]) -> dict:
    out, rep = work / "out.csv", work / "rep.json"
    for p in (out, rep):
        p.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "pysdcmicro", "microaggregate", str(big), "--k", str(K), "-o", str(out),
           "--report", str(rep), "-q", *extra]
    err = open(work / "stderr.txt", "w+")
    started = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
    time.sleep(max(0.0, delay - (time.monotonic() - started)))
    kids = _children(proc.pid)
    load = _load()
    os.killpg(proc.pid, signal.SIGINT)
    t0 = time.monotonic()
    t_out = t_workers = None
    while True:
        now = time.monotonic()
        if t_out is None and out.exists() and rep.exists():
            t_out = now - t0
        if kids and t_workers is None and not _children(proc.pid):
            t_workers = now - t0
        rc = proc.poll()
        if rc is not None:
            t_exit = time.monotonic() - t0
            if kids and t_workers is None:
                t_workers = t_exit
            if t_out is None and out.exists() and rep.exists():
                t_out = t_exit
            break
        if now - t0 > 600:
            proc.kill()
            raise RuntimeError("no exit 600 s after the signal")
        time.sleep(0.01)
    err.seek(0)
    stderr = err.read()
    err.close()
    row = {"delay": delay, "outputs": t_out, "exit": t_exit, "workers": t_workers, "rc": rc,
           "traceback": "Traceback" in stderr, "load": load, "children_at_signal": len(kids),
           "stderr": stderr.strip()[-300:]}
    if rep.exists():
        report = json.loads(rep.read_text())
        row["status"] = report.get("status")
        row["message"] = report.get("message")
        row["file"] = _check_file(big, out, report) if out.exists() else "no output"
    else:
        row["status"], row["message"], row["file"] = None, None, "no report"
    return row


def _phase(message: str | None) -> str:
    if not message:
        return "-"
    if "before the method started" in message:
        return "reading/preparing: runs of k"
    if "before the blocks had a partition" in message:
        return "planning: runs of k"
    if "during the block phase" in message:
        return "block phase, " + message.split("block phase:")[1].split(",")[0].strip()
    if "during border repair" in message:
        return "border repair"
    return message[:70]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--delays", default="2,4,20,45", help="seconds from the start to the SIGINT, comma-separated")
    ap.add_argument("--data-dir", type=Path, default=Path(tempfile.gettempdir()) / "pysdcmicro-interrupt")
    ap.add_argument("--option", action="append", default=[], help="extra CLI argument (repeatable), e.g. --option=--n-jobs=1")
    ap.add_argument("--append", type=Path, help="append the table rows to this Markdown file")
    args = ap.parse_args(argv)
    big = ensure_data(args.data_dir)
    work = args.data_dir / "run"
    work.mkdir(exist_ok=True)
    commit = _commit()
    lines = []
    print(TABLE_HEAD)
    print(TABLE_RULE)
    for delay in [float(d) for d in args.delays.split(",")]:
        r = run_one(big, work, delay, args.option)
        fmt = lambda v: "-" if v is None else f"{v:.2f} s"
        line = (f"| {delay:g} s | {_phase(r['message'])} | {fmt(r['outputs'])} | {fmt(r['exit'])} | "
                f"{fmt(r['workers'])} | {r['rc']} | {'YES' if r['traceback'] else 'no'} | {r['status']} | "
                f"{r['file']} | {r['load']:.1f} | {commit} |")
        print(line, flush=True)
        if r["rc"] != 0 or r["traceback"]:
            print("   stderr: " + r["stderr"].replace("\n", " | "), flush=True)
        lines.append(line)
    if args.append:
        new = not args.append.exists()
        with open(args.append, "a") as fh:
            if new:
                fh.write(PAGE_HEAD)
            fh.write(f"\n## Run of {_dt.datetime.now(_dt.timezone.utc):%Y-%m-%d %H:%M} UTC\n\n")
            fh.write("\n".join([TABLE_HEAD, TABLE_RULE] + lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
