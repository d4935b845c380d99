"""Ctrl-C at start-up and during a run of the ``pysdcmicro`` command.

Start-up: the console script and ``python -m pysdcmicro`` enter through
``pysdcmicro.__main__``, which imports nothing heavy (nor does ``import pysdcmicro``) and
guards the command line's import, so SIGINT while numpy/pandas/the package import gives one
line and exit status 130, never a traceback.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pysdcmicro

PACKAGE_DIR = Path(pysdcmicro.__file__).parent  # as tracebacks name its files


def _entry_command() -> list[str]:
    """The installed console script, or the same entry run by this interpreter."""
    exe = Path(sys.executable).with_name("pysdcmicro")
    if exe.exists() and "pysdcmicro.__main__" in exe.read_text(errors="replace"):
        return [str(exe)]
    return [sys.executable, "-c", "import sys; from pysdcmicro.__main__ import main; sys.exit(main())"]


def _interrupt(cmd: list[str], delay: float, timeout: float = 60.0) -> tuple[int, str, float]:
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    time.sleep(delay)
    sent = time.monotonic()
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)  # as a terminal does: the whole process group
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:  # pragma: no cover - a hang is a failure
        os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
        pytest.fail(f"no exit within {timeout} s of SIGINT")
    return proc.returncode, err.decode(errors="replace"), time.monotonic() - sent


@pytest.mark.subprocess
def test_entry_module_imports_nothing_heavy():
    code = ("import sys, pysdcmicro.__main__; heavy = [m for m in ('numpy', 'pandas', 'pysdcmicro.cli') "
            "if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.subprocess
def test_entry_runs_the_command():
    proc = subprocess.run([*_entry_command(), "--version"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.startswith("pysdcmicro ")


@pytest.mark.subprocess
def test_python_m_pysdcmicro_runs_the_command():
    proc = subprocess.run([sys.executable, "-m", "pysdcmicro", "--version"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0 and proc.stdout.startswith("pysdcmicro "), proc.stderr


@pytest.mark.subprocess
def test_python_m_other_module_keeps_pythons_ctrl_c(tmp_path):
    """The ``-m`` start-up guard is for ``python -m pysdcmicro`` only: another module run with
    ``-m`` that imports the package keeps Python's own SIGINT handler."""
    (tmp_path / "probe_mod.py").write_text(
        "import signal, pysdcmicro\nprint(signal.getsignal(signal.SIGINT) is signal.default_int_handler)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-m", "probe_mod"], capture_output=True, text=True, timeout=120,
                          env=env, cwd=tmp_path)
    assert proc.stdout.strip() == "True", proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("entry, delay", [("script", d) for d in (0.05, 0.2, 0.5, 1.0, 1.5)]
                         + [("module", d) for d in (0.2, 1.0)])
@pytest.mark.subprocess
def test_ctrl_c_at_start_up_is_one_line_not_a_traceback(tmp_path, entry, delay):
    data = tmp_path / "in.csv"
    rng = np.random.default_rng(0)
    pd.DataFrame({"x": rng.normal(size=300), "y": rng.normal(size=300)}).to_csv(data, index=False)
    out = tmp_path / "out.csv"
    command = _entry_command() if entry == "script" else [sys.executable, "-m", "pysdcmicro"]
    code, err, _ = _interrupt([*command, "microaggregate", str(data), "--k", "3", "--method", "mdav",
                               "-q", "-o", str(out)], delay)
    ours = f'File "{PACKAGE_DIR}{os.sep}' in err  # a frame in a file of the package: our code had run
    if "Traceback" in err and not ours:
        # the interpreter's own start-up (importing `site`, locating the entry module) was
        # interrupted before any line of ours ran: Python's traceback, and nothing written
        assert "KeyboardInterrupt" in err and code != 0, (code, err)
        assert not out.exists()
        return
    assert "Traceback" not in err, err
    # interrupted (130, one line, nothing written), or already finished (0, output written), or
    # killed by the signal before Python set up its handler (-2: no output at all)
    assert code in (0, 130, -signal.SIGINT), (code, err)
    if code == 130:
        assert err.strip().splitlines()[-1].startswith("pysdcmicro: interrupted"), err
        assert not out.exists()
    if code == 0:
        assert out.exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".pysdcmicro-")) == []


# -- Ctrl-C by phase, in process (deterministic: the signal is sent from inside the phase) --

def _data(tmp_path, n=400):
    rng = np.random.default_rng(3)
    path = tmp_path / "in.csv"
    pd.DataFrame({"x": rng.normal(size=n), "y": rng.normal(size=n) * 10, "z": rng.integers(0, 50, n)}).to_csv(
        path, index=False)
    return path


def _sigint_inside(monkeypatch, module, name, times=1):
    """Make ``module.name`` send itself ``times`` SIGINTs before it does its work."""
    real = getattr(module, name)

    def wrapped(*args, **kwargs):
        for _ in range(times):
            os.kill(os.getpid(), signal.SIGINT)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, wrapped)


def _run(tmp_path, *extra):
    from pysdcmicro import cli

    out, rep = tmp_path / "out.csv", tmp_path / "rep.json"
    code = cli.main(["microaggregate", str(_data(tmp_path)), "--k", "3", "-o", str(out), "--report", str(rep),
                     "-q", "--method", "mdav", *extra])
    return code, out, rep


def _check_written(tmp_path, out, rep, message_part):
    import json

    from pysdcmicro.metrics import is_k_anonymous

    assert out.exists() and rep.exists()
    data = json.loads(rep.read_text())
    assert data["status"] == "limit" and message_part in data["message"], data["message"]
    assert is_k_anonymous(pd.read_csv(out)[data["variables"]], 3)
    assert "not computed" in data["measures_note"] and data["utility"] is None and data["risk"] is None
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".pysdcmicro-")] == []


@pytest.mark.parametrize("fake, name", [
    (os.sep.join(["", "site-packages", "llvmlite", "binding", "executionengine.py"]), "cb"),
    ("<frozen importlib._bootstrap>", "cb"),
    (os.sep.join(["", "lib", "python3", "concurrent", "futures", "process.py"]), "weakref_cb"),
    (os.sep.join(["", "somewhere", "module.py"]), "__del__"),
])
def test_ctrl_c_inside_a_c_callback_is_delivered_again_not_lost(monkeypatch, fake, name):
    """A SIGINT handled while Python code that C calls back runs (numba loading its cache
    through llvmlite; importlib's module-lock weakref callback; a process pool's weakref
    callback; a finalizer) would raise where the exception is only printed ("Exception
    ignored in") and dropped, losing the Ctrl-C: the handler re-sends it shortly instead."""
    from pysdcmicro import _interrupt
    from pysdcmicro.cli import _signals

    sent = []
    monkeypatch.setattr(_signals.os, "kill", lambda pid, sig: sent.append((pid, sig)))
    monkeypatch.setattr(_interrupt._state, "count", 0)
    monkeypatch.setattr(_interrupt._state, "solving", 1)
    code = compile(f"def {name}(h):\n    h(2, sys._getframe())\n", fake, "exec")
    space = {"sys": sys}
    exec(code, space)
    space[name](_signals._handler)  # must not raise here
    deadline = time.monotonic() + 5
    while not sent and time.monotonic() < deadline:
        time.sleep(0.01)
    assert sent == [(os.getpid(), signal.SIGINT)]
    assert _interrupt._state.count == 0
    with pytest.raises(KeyboardInterrupt):  # outside a callback, while solving: raised at once
        _signals._handler(signal.SIGINT, sys._getframe())


@pytest.mark.parametrize("where", ["read_table", "default_variables"])
def test_ctrl_c_while_reading_writes_a_release(tmp_path, monkeypatch, where):
    from pysdcmicro import _validation
    from pysdcmicro.cli import _files

    _sigint_inside(monkeypatch, _files if where == "read_table" else _validation, where)
    code, out, rep = _run(tmp_path)
    assert code == 0
    _check_written(tmp_path, out, rep, "before the method started")


def test_ctrl_c_while_writing_finishes_the_write(tmp_path, monkeypatch):
    from pysdcmicro.cli import _files

    _sigint_inside(monkeypatch, _files, "write_table")
    code, out, rep = _run(tmp_path)
    assert code == 0 and out.exists() and rep.exists()
    import json

    assert json.loads(rep.read_text())["status"] == "done"  # the search had finished: its result is whole


def test_second_ctrl_c_aborts_and_writes_nothing(tmp_path, monkeypatch, capsys):
    from pysdcmicro.cli import _files

    _sigint_inside(monkeypatch, _files, "write_table", times=2)
    code, out, rep = _run(tmp_path)
    assert code == 130 and not out.exists() and not rep.exists()
    assert "no output file was written or changed" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".pysdcmicro-")] == []


def test_ctrl_c_in_read_then_again_in_the_fallback_aborts(tmp_path, monkeypatch):
    from pysdcmicro import _pipeline
    from pysdcmicro.cli import _files

    _sigint_inside(monkeypatch, _files, "read_table")
    _sigint_inside(monkeypatch, _pipeline, "principal_axis_runs_by_stratum")
    code, out, rep = _run(tmp_path)
    assert code == 130 and not out.exists()


def test_python_api_keeps_pythons_ctrl_c(monkeypatch):
    """Outside the command, Ctrl-C is Python's: no handler of ours is left installed."""
    from pysdcmicro import _interrupt

    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert not _interrupt.received()


def test_ctrl_c_during_the_report_measures_leaves_them_out(tmp_path, monkeypatch):
    """The record linkage takes seconds at 10^6 records: a first Ctrl-C during the
    measures stops them, and the outputs are written at once without them."""
    import json

    from pysdcmicro.reporting import _report

    calls = []
    real = _report._measures

    def measures(*args, **kwargs):
        calls.append(1)
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)  # the signal interrupts this sleep; without it the test would take 5 s more
        return real(*args, **kwargs)

    monkeypatch.setattr(_report, "_measures", measures)
    started = time.monotonic()
    code, out, rep = _run(tmp_path, "--html", str(tmp_path / "rep.html"))
    assert code == 0 and calls == [1] and time.monotonic() - started < 4.5
    data = json.loads(rep.read_text())
    assert data["status"] == "done" and data["utility"] is None and "not computed" in data["measures_note"]
    assert "not computed" in (tmp_path / "rep.html").read_text()
    from pysdcmicro.metrics import is_k_anonymous

    assert is_k_anonymous(pd.read_csv(out)[data["variables"]], 3)


def test_ctrl_c_during_the_html_plots_writes_the_page_without_them(tmp_path, monkeypatch, capsys):
    from pysdcmicro.reporting import _html

    def plots(rep):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)
        raise AssertionError("not interrupted")

    monkeypatch.setattr(_html, "_plots", plots)
    html = tmp_path / "rep.html"
    code, out, rep = _run(tmp_path, "--html", str(html))
    assert code == 0 and out.exists() and rep.exists() and html.exists()
    assert "<img" not in html.read_text()
    assert "without its plots" in capsys.readouterr().err


def test_second_ctrl_c_during_the_measures_aborts(tmp_path, monkeypatch):
    from pysdcmicro.reporting import _report

    def measures(*args, **kwargs):
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        except KeyboardInterrupt:  # the first: then a second one while it is being handled
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        raise AssertionError("not interrupted")

    monkeypatch.setattr(_report, "_measures", measures)
    code, out, rep = _run(tmp_path)
    assert code == 130 and not out.exists() and not rep.exists()


# -- SIGTERM and SIGHUP mean what a Ctrl-C means ------------------------------------------

def _signal_inside(monkeypatch, module, name, signum, times=1):
    real = getattr(module, name)

    def wrapped(*args, **kwargs):
        for _ in range(times):
            os.kill(os.getpid(), signum)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, wrapped)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_or_sighup_while_writing_finishes_the_write(tmp_path, monkeypatch, signum):
    import json

    from pysdcmicro.cli import _files

    _signal_inside(monkeypatch, _files, "write_table", signum)
    code, out, rep = _run(tmp_path)
    assert code == 0 and out.exists() and rep.exists()
    assert json.loads(rep.read_text())["status"] == "done"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".pysdcmicro-")] == []
    assert signal.getsignal(signum) is signal.SIG_DFL  # given back after the command


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_or_sighup_while_reading_writes_a_release(tmp_path, monkeypatch, signum):
    from pysdcmicro.cli import _files

    _signal_inside(monkeypatch, _files, "read_table", signum)
    code, out, rep = _run(tmp_path)
    assert code == 0
    _check_written(tmp_path, out, rep, "before the method started")


def test_a_second_sigterm_aborts_and_writes_nothing(tmp_path, monkeypatch, capsys):
    from pysdcmicro.cli import _files

    _signal_inside(monkeypatch, _files, "write_table", signal.SIGTERM, times=2)
    code, out, rep = _run(tmp_path)
    assert code == 130 and not out.exists() and not rep.exists()
    assert "no output file was written or changed" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".pysdcmicro-")] == []


def test_sighup_in_the_report_command_leaves_no_temporary_file(tmp_path, monkeypatch, capsys):
    """Outside a microaggregation run (here ``report``), SIGTERM and SIGHUP stop the command
    as Ctrl-C does: one line, exit status 130, the temporary files removed."""
    from pysdcmicro import cli
    from pysdcmicro.cli import _commands

    code, out, _ = _run(tmp_path)
    assert code == 0
    capsys.readouterr()
    old = tmp_path / "r.json"
    old.write_text("old\n")
    _signal_inside(monkeypatch, _commands, "_write_json", signal.SIGHUP)
    code = cli.main(["report", str(tmp_path / "in.csv"), str(out), "--k", "3", "--json", str(old), "-q"])
    assert code == 130, capsys.readouterr().err
    assert capsys.readouterr().err.startswith("pysdcmicro: interrupted")
    assert old.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".pysdcmicro-")] == []
    assert signal.getsignal(signal.SIGHUP) is signal.SIG_DFL


def test_a_ctrl_c_that_numba_wraps_in_a_system_error_still_returns_the_incumbent():
    """A Ctrl-C that lands inside a compiled function's dispatcher or cache loader reaches
    Python as numba's SystemError with the KeyboardInterrupt in its chain of causes: it is
    still a Ctrl-C, so the method returns its best partition so far."""
    import pysdcmicro
    from pysdcmicro import _interrupt

    def wrapped():
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as exc:
            raise SystemError("<function _numba_unpickle> returned a result with an exception set") from exc

    assert _interrupt.is_ctrl_c(SystemError().with_traceback(None)) is False
    calls = []

    def core(Z, k, ctx):
        labels = np.arange(Z.shape[0]) // k
        labels[labels == labels.max()] = max(labels.max() - 1, 0)
        ctx.offer(labels, 1.0)
        calls.append(1)
        wrapped()

    X = np.random.default_rng(0).normal(size=(30, 2))
    res = pysdcmicro.microaggregate(X, 3, method=core)
    assert calls and res.status == "limit" and "interrupted" in res.message
    with pytest.raises(SystemError):  # any other SystemError is not taken for a Ctrl-C
        pysdcmicro.microaggregate(X, 3, method=lambda Z, k, ctx: (_ for _ in ()).throw(SystemError("other")))


def test_a_second_ctrl_c_that_was_caught_still_aborts_before_anything_is_replaced(tmp_path, monkeypatch, capsys):
    """A method catches a Ctrl-C as "return the incumbent"; if that Ctrl-C was the second,
    the run still aborts at the commit: nothing written, exit status 130."""
    from pysdcmicro.cli import _files

    real = _files.read_back_and_verify

    def swallowing(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)  # the first: recorded (the search is over)
        try:
            os.kill(os.getpid(), signal.SIGINT)  # the second: raised here, and caught
            time.sleep(1.0)  # (delivered at the next bytecode; the sleep is cut short)
        except KeyboardInterrupt:
            pass
        return real(*args, **kwargs)

    monkeypatch.setattr(_files, "read_back_and_verify", swallowing)
    out, rep = tmp_path / "out.csv", tmp_path / "rep.json"
    out.write_text("previous\n")
    code, out, rep = _run(tmp_path)
    assert code == 130 and out.read_text() == "previous\n" and not rep.exists()
    assert "no output file was written or changed" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".pysdcmicro-")] == []


def test_a_second_ctrl_c_during_the_renames_finishes_them_and_says_so(tmp_path, monkeypatch, capsys):
    from pysdcmicro.cli import _files

    real, calls = os.replace, []

    def replace(src, dst):
        calls.append(dst)
        if len(calls) == 1:  # both Ctrl-Cs land between the first and the second rename
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGINT)
        return real(src, dst)

    monkeypatch.setattr(_files.os, "replace", replace)
    out, rep = tmp_path / "out.csv", tmp_path / "rep.json"
    out.write_text("previous\n")
    rep.write_text("previous\n")
    code, out, rep = _run(tmp_path)
    err = capsys.readouterr().err
    assert len(calls) == 2 and code == 130
    assert out.read_text() != "previous\n" and rep.read_text() != "previous\n"
    assert "written before it" in err and str(out) in err and str(rep) in err
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".pysdcmicro-")] == []


# -- SIGTERM to the whole process group: no worker process outlives the command --------

def _group(pgid: int) -> list[tuple[int, str]]:
    """The live (not zombie) processes of process group ``pgid``, from /proc."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        state, _, group = stat[stat.rindex(")") + 2:].split()[:3]
        if int(group) == pgid and state != "Z":
            members.append((int(entry), cmdline))
    return members


def _wait_for(condition, limit: float) -> bool:
    """Poll ``condition`` every 0.1 s; whether it held before ``limit`` seconds (a hang
    detector, not a timing assertion)."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


@pytest.mark.subprocess
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to list a process group")
@pytest.mark.parametrize("path", [[], ["--blocks", "400"]], ids=["auto", "blocked"])
def test_sigterm_to_the_process_group_leaves_no_worker_behind(tmp_path, path):
    src = _data(tmp_path, n=2400)
    out, rep = tmp_path / "out.csv", tmp_path / "rep.json"
    cmd = [sys.executable, "-m", "pysdcmicro", "microaggregate", str(src), "--k", "3", "-o", str(out),
           "--report", str(rep), "-q", "--method", "auto", "--time-limit", "40", "--n-jobs", "2", *path]
    env = dict(os.environ, PYTHONPATH=str(PACKAGE_DIR.parent))
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, env=env)
    try:
        # SIGTERM once the workers (and multiprocessing's resource tracker) run
        started = _wait_for(lambda: sum("multiprocessing" in c for _, c in _group(proc.pid)) >= 2
                            or proc.poll() is not None, 120)
        assert started and proc.poll() is None, "the workers never started"
        os.killpg(proc.pid, signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
        assert _wait_for(lambda: not _group(proc.pid), 30), f"left behind: {_group(proc.pid)}"
    finally:
        if _group(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    err = err.decode(errors="replace")
    assert "Traceback" not in err, err
    # as a first Ctrl-C: the search stops and its best partition is released
    assert proc.returncode == 0, (proc.returncode, err)
    import json

    data = json.loads(rep.read_text())
    assert data["status"] == "limit" and data["k_anonymous"] is True
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".pysdcmicro-")] == []


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_the_start_up_guard_records_sigterm_and_sighup_as_ctrl_c(signum):
    from pysdcmicro import __main__ as entry

    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    received, previous = entry._start_guard()
    try:
        os.kill(os.getpid(), signum)
        time.sleep(0.01)  # (the handler runs at the next bytecode)
    finally:
        entry._restore(previous)
    assert received == [signum]
    assert {s: signal.getsignal(s) for s in before} == before


def test_a_signal_the_process_was_started_ignoring_stays_ignored(tmp_path, monkeypatch):
    """Under ``nohup`` SIGHUP is ignored: a closed terminal must not stop the run (nor
    SIGINT a job that a shell started in the background)."""
    from pysdcmicro import __main__ as entry
    from pysdcmicro.cli import _files

    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        received, guard = entry._start_guard()
        entry._restore(guard)
        assert signal.SIGHUP not in guard and received == []
        _signal_inside(monkeypatch, _files, "read_table", signal.SIGHUP)
        code, out, rep = _run(tmp_path)
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, previous)
    import json

    assert code == 0 and json.loads(rep.read_text())["status"] == "done"  # not stopped


def test_a_ctrl_c_that_an_import_wrapped_is_one_line(tmp_path, monkeypatch, capsys):
    """Python 3.11 wraps a KeyboardInterrupt raised while a class body's ``__set_name__`` runs
    (a dataclass field, during an import) in a RuntimeError: still a Ctrl-C, one line."""
    from pysdcmicro.cli import _commands

    def interrupted_import(*args, **kwargs):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as exc:
            raise RuntimeError("Error calling __set_name__ on 'Field' instance") from exc

    monkeypatch.setattr(_commands, "cmd_microaggregate", interrupted_import)
    code, out, rep = _run(tmp_path)
    err = capsys.readouterr().err
    assert code == 130 and not out.exists() and "Traceback" not in err
    assert err.strip() == "pysdcmicro: interrupted; no output file was written or changed"


def test_a_ctrl_c_inside_pyarrows_reader_is_the_users_interrupt(tmp_path, monkeypatch):
    # pyarrow's CSV reader turns SIGINT into its own ArrowCancelled error; the read-back of
    # the release must see it as the Ctrl-C it is, not as an unreadable file
    pa = pytest.importorskip("pyarrow")
    import pyarrow.csv as pacsv

    from pysdcmicro import _csvio

    path = tmp_path / "x.csv"
    path.write_text("a,b\n1,2\n3,4\n")

    def cancelled(*args, **kwargs):
        raise pa.ArrowCancelled("Operation cancelled. Detail: received signal 2")

    monkeypatch.setattr(pacsv, "read_csv", cancelled)
    with pytest.raises(KeyboardInterrupt):
        _csvio.read_float_columns(str(path), ["a", "b"], [])
