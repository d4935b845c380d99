"""Progress display and Ctrl-C: shown on a terminal only, the last state always shown, and an
interrupted search returns its best partition with status "limit" (tested by sending a real
SIGINT to a subprocess)."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import pysdcmicro
from pysdcmicro import ProgressEvent
from pysdcmicro._api import _TerminalProgress
from pysdcmicro.datasets import make_demo_data, make_synthetic

from ._helpers import assert_k_partition, naive_sse, zscore

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and terminals")


def event(i, il=None, lb=None):
    return ProgressEvent(method="m", stage="s", elapsed=float(i), iteration=i, information_loss=il, lower_bound=lb)


def test_event_text_shows_gap_when_a_bound_is_known():
    text = str(event(3, il=10.0, lb=9.0))
    assert "it=3" in text and "IL=10.0000" in text and "LB=9.0000" in text and "gap=10.00%" in text
    assert "gap" not in str(event(3, il=10.0))
    assert str(ProgressEvent(method="mdav", stage="", elapsed=0.0)).endswith("mdav")


def test_live_display_rewrites_one_line_and_ends_it():
    stream = io.StringIO()
    show = _TerminalProgress(interval=0.0, stream=stream, live=True)
    for i in range(3):
        show(event(i, il=5.0 - i))
    show.close()
    out = stream.getvalue()
    assert out.count("\r") == 3 and out.endswith("\n") and out.count("\n") == 1
    assert "IL=3.0000" in out.rsplit("\r", 1)[1]


def test_throttled_display_shows_the_last_event_on_close():
    stream = io.StringIO()
    show = _TerminalProgress(interval=3600.0, stream=stream, live=False)
    for i in range(5):
        show(event(i))
    assert stream.getvalue().count("\n") == 1  # the first event only, the others held back
    show.close()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2 and "it=0" in lines[0] and "it=4" in lines[1]


def test_default_mode_follows_the_stream():
    assert _TerminalProgress(stream=io.StringIO()).live is False


def reporting_method(Z, k, ctx):
    from pysdcmicro.constructive import mdav_labels

    labels = mdav_labels(Z, k)
    for i in range(5):
        ctx.report(iteration=i, sse=pysdcmicro.sse(Z, labels), lower_bound=0.0)
    return labels


def test_progress_true_prints_the_final_state_to_stderr(capsys):
    pysdcmicro.microaggregate(make_synthetic(30, 2, rng=0), 3, method=reporting_method, progress=True)
    err = capsys.readouterr().err
    assert "it=0" in err and "it=4" in err  # stderr is not a terminal here: first line, then the last


def test_one_event_per_stratum():
    events = []
    df = make_demo_data(120, rng=2)
    pysdcmicro.microaggregate(df, 3, variables=["employees", "wages"], strata="region", progress=events.append, method="mdav")
    strata = [e.extra["stratum"] for e in events if "stratum" in e.extra]
    n = df["region"].nunique()
    assert strata == [f"{i}/{n}" for i in range(1, n + 1)]
    assert sum(e.extra["records"] for e in events if "stratum" in e.extra) == 120


# -- Ctrl-C ------------------------------------------------------------------------------------------
SLOW_METHOD = """
import sys, time
import numpy as np
import pysdcmicro
from pysdcmicro.constructive import mdav_labels

def slow_search(Z, k, ctx):
    # A test-only method: offers MDAV, then a better partition, then searches forever.
    labels = mdav_labels(Z, k)
    ctx.offer(labels, pysdcmicro.sse(Z, labels))
    order = np.argsort(Z[:, 0], kind="stable")
    better = np.empty(len(Z), dtype=np.int64)
    better[order] = np.minimum(np.arange(len(Z)) // k, len(Z) // k - 1)
    ctx.offer(better, pysdcmicro.sse(Z, better))
    print("READY", flush=True)
    i = 0
    while True:
        i += 1
        ctx.report(iteration=i)
        time.sleep(0.005)
"""


def _interrupt(proc: subprocess.Popen) -> tuple[str, str]:
    line = proc.stdout.readline()
    assert line.strip() == "READY", line + proc.stderr.read()
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    return out, err


@pytest.mark.subprocess
def test_ctrl_c_returns_the_best_partition_with_status_limit():
    script = SLOW_METHOD + textwrap.dedent("""
        import json
        X = pysdcmicro.datasets.make_synthetic(40, 1, rng=5)
        res = pysdcmicro.microaggregate(X, 4, method=slow_search)
        print(json.dumps({"status": res.status, "message": res.message, "labels": res.labels.tolist(),
                          "il": res.information_loss, "X": X.tolist()}))
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = _interrupt(proc)
    assert proc.returncode == 0, err
    got = json.loads(out.strip().splitlines()[-1])
    assert got["status"] == "limit" and "interrupted" in got["message"]
    labels, X = np.array(got["labels"]), np.array(got["X"])
    assert_k_partition(labels, 40, 4)
    Z = zscore(X)
    # The incumbent is the better of the two offers: sorted runs of 4 on the single variable.
    order = np.argsort(X[:, 0], kind="stable")
    runs = np.empty(40, dtype=np.int64)
    runs[order] = np.arange(40) // 4
    assert got["il"] == pytest.approx(100 * naive_sse(Z, runs) / (39.0), rel=1e-9)


@pytest.mark.subprocess
def test_ctrl_c_in_the_cli_writes_the_incumbent_and_a_report(tmp_path):
    data = tmp_path / "in.csv"
    make_demo_data(60, rng=1).to_csv(data, index=False)
    out, rep = tmp_path / "out.csv", tmp_path / "rep.json"
    script = SLOW_METHOD + textwrap.dedent(f"""
        from pysdcmicro._registry import register_method
        from pysdcmicro import cli
        def slow(Z, k, ctx):
            return slow_search(Z, k, ctx)
        register_method("slow-test", summary="test only")(slow)
        sys.exit(cli.main(["microaggregate", {str(data)!r}, "--k", "3", "--variables", "employees,turnover",
                           "--method", "slow-test", "--output", {str(out)!r}, "--report", {str(rep)!r}]))
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stdout, err = _interrupt(proc)
    assert proc.returncode == 0, err
    report = json.loads(rep.read_text())
    assert report["status"] == "limit" and "interrupted" in report["message"]
    assert report["k_anonymous"] is True and report["min_group_size"] >= 3
    assert "limit" in stdout  # the text report says so


# -- terminal or not -----------------------------------------------------------------------------------
CHATTY = textwrap.dedent("""
    import sys, time
    from pysdcmicro._registry import register_method
    from pysdcmicro.constructive import mdav_labels
    from pysdcmicro import cli, sse
    def chatty(Z, k, ctx):
        labels = mdav_labels(Z, k)
        for i in range(8):
            ctx.report(iteration=i, sse=sse(Z, labels))
            time.sleep(0.03)
        return labels
    register_method("chatty-test", summary="test only")(chatty)
    sys.exit(cli.main(["microaggregate", sys.argv[1], "--k", "3", "--method", "chatty-test",
                       "--output", sys.argv[2]] + sys.argv[3:]))
""")


@pytest.fixture
def csv_in(tmp_path):
    path = tmp_path / "in.csv"
    make_demo_data(40, rng=0)[["employees", "turnover"]].to_csv(path, index=False)
    return path


@pytest.mark.subprocess
def test_cli_progress_is_silent_when_piped(tmp_path, csv_in):
    proc = subprocess.run([sys.executable, "-c", CHATTY, str(csv_in), str(tmp_path / "o.csv")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "it=" not in proc.stderr and proc.stderr.strip() == ""


def _run_on_pty(args):
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(master)
    return proc.returncode, b"".join(chunks).decode()


@pytest.mark.subprocess
def test_cli_progress_on_a_terminal_is_one_updating_line(tmp_path, csv_in):
    pytest.importorskip("pty")
    code, err = _run_on_pty([sys.executable, "-c", CHATTY, str(csv_in), str(tmp_path / "o.csv")])
    assert code == 0, err
    assert "chatty-test" in err and "it=7" in err  # the final state is shown
    assert "\r" in err.replace("\r\n", "\n")       # rewritten in place, not one line per event
    assert err.replace("\r\n", "\n").count("\n") == 1
    code, err = _run_on_pty([sys.executable, "-c", CHATTY, str(csv_in), str(tmp_path / "o.csv"), "--quiet"])
    assert code == 0 and err == ""
