"""Method `auto`: the default method, reproducible without a limit and never worse than MDAV +
two-swap, its plan (count budgets instead of the clock), drawn seeds recorded, the seed's
validation, safe default variables, progress lines."""

from __future__ import annotations

import io
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

import pysdcmicro
from pysdcmicro import Microaggregator, ProgressEvent, microaggregate
from pysdcmicro._api import _TerminalProgress
from pysdcmicro._context import Context
from pysdcmicro._errors import InvalidInputError, InvalidTypeError
from pysdcmicro._validation import IdentifierColumnWarning, identifier_reason
from pysdcmicro.datasets import make_synthetic
from pysdcmicro.optimization._auto import AutoPlan

from .._helpers import assert_k_partition, naive_sse, zscore


def test_auto_is_registered_and_the_default():
    assert "auto" in pysdcmicro.methods()
    X = make_synthetic(40, 2, rng=0)
    assert microaggregate(X, 3, rng=0).method == "auto"
    assert Microaggregator(3).method == "auto"
    from pysdcmicro.cli import _build_parser as build_parser

    args = build_parser().parse_args(["microaggregate", "x.csv", "--k", "3"])
    assert args.method == "auto"


@pytest.mark.parametrize("seed,n,d,k", [(0, 60, 2, 3), (1, 90, 4, 4), (2, 75, 3, 5), (3, 48, 1, 2)])
def test_auto_without_limit_never_worse_than_mdav_two_swap(seed, n, d, k):
    X = np.random.default_rng(seed).normal(size=(n, d)) ** 3  # skewed, as real data
    res = microaggregate(X, k, method="auto", rng=seed)
    base = microaggregate(X, k, method="mdav", improve="two-swap")
    assert_k_partition(res.labels, n, k)
    assert res.sse == pytest.approx(naive_sse(zscore(X), res.labels), rel=1e-9)
    assert res.sse <= base.sse * (1 + 1e-12)
    assert res.status == "done" and "fixed work" in res.message
    assert res.info["plan"]["restarts"] > 0 and res.info["winner"]
    # the neighbour bound: below the result (and a brute-force check on tiny data elsewhere)
    assert res.lower_bound is not None and res.lower_bound <= res.information_loss + 1e-9


def test_auto_without_limit_is_deterministic_for_a_seed():
    X = make_synthetic(120, 3, rng=4)
    a = microaggregate(X, 3, method="auto", rng=7)
    b = microaggregate(X, 3, method="auto", rng=7)
    np.testing.assert_array_equal(a.labels, b.labels)


def test_neighbour_bound_never_above_a_brute_force_optimum():
    from pysdcmicro.optimization._auto import neighbour_bound

    from .._exact_dp import exact_optimum_dp as optimal_sse  # exact optimum by dynamic programming

    for seed in range(4):
        Z = zscore(np.random.default_rng(seed).normal(size=(9, 2)))
        assert neighbour_bound(Z, 3) <= optimal_sse(Z, 3) + 1e-9


def test_a_short_time_limit_still_gives_the_cheap_bound():
    # 1500 x 10: n^2 d above the always-on size, but the bound takes a few hundredths of a
    # second, so even a 1-s limit has room for it (the gap is reported)
    X = make_synthetic(1500, 10, kind="clustered", rng=3)
    res = microaggregate(X, 3, method="auto", time_limit=1.0, rng=0)
    assert res.lower_bound is not None and 0 < res.lower_bound <= res.information_loss


@pytest.mark.parametrize("d", [2, 20])
def test_neighbour_bound_from_icsm_lists_equals_its_own_scan(d):
    from pysdcmicro.local_search._icsm import search_index
    from pysdcmicro.optimization._auto import neighbour_bound

    from .._exact_dp import exact_optimum_dp as optimal_sse

    rng = np.random.default_rng(d)
    X = rng.integers(0, 3, size=(60, d)).astype(float)  # many equal records
    X[::7] += rng.normal(size=(9, d))
    Z = zscore(X)
    for k in (2, 3, 5):
        knn = search_index(Z)[1]
        assert neighbour_bound(Z, k, knn) == pytest.approx(neighbour_bound(Z, k), rel=1e-12, abs=1e-12)
    for seed in range(3):
        Z = zscore(np.random.default_rng(seed).normal(size=(9, d)))
        assert neighbour_bound(Z, 3, search_index(Z)[1]) <= optimal_sse(Z, 3) + 1e-9


def test_seedless_runs_use_the_fixed_default_seed():
    # the same release twice, not two maskings of the same records
    X = make_synthetic(80, 3, rng=1)
    first = microaggregate(X, 3, method="auto")
    assert first.settings["rng"] == 0
    np.testing.assert_array_equal(first.labels, microaggregate(X, 3, method="auto").labels)
    np.testing.assert_array_equal(first.labels, microaggregate(X, 3, method="auto", rng=0).labels)
    other = [microaggregate(X, 3, method="auto", rng=seed).labels for seed in (1, 2, 3)]
    assert any(not np.array_equal(first.labels, lab) for lab in other)  # the seed matters
    gen = microaggregate(X, 3, method="mdav", rng=np.random.default_rng(0))
    assert gen.settings["rng"] == "<Generator given by the caller>"


@pytest.mark.parametrize("rng,kind,text", [
    (1.5, InvalidTypeError, "`rng` must be None, an integer >= 0 or a numpy.random.Generator; got 1.5."),
    (-5, InvalidInputError, "`rng` must be None, an integer >= 0 or a numpy.random.Generator; got -5."),
    (True, InvalidTypeError, "got True."),
    ("1", InvalidTypeError, "got '1'."),
])
def test_bad_rng_is_one_clear_line(rng, kind, text):
    with pytest.raises(kind) as err:
        microaggregate(make_synthetic(12, 2, rng=0), 3, method="mdav", rng=rng)
    assert str(err.value) == text or str(err.value).endswith(text)
    assert "\n" not in str(err.value)


@pytest.mark.subprocess
def test_cli_negative_seed_is_one_error_line(tmp_path):
    path = tmp_path / "in.csv"
    pd.DataFrame(make_synthetic(20, 2, rng=0), columns=["a", "b"]).to_csv(path, index=False)
    out = subprocess.run([sys.executable, "-m", "pysdcmicro", "microaggregate", str(path), "--k", "3",
                          "--seed", "-5", "--method", "mdav"], capture_output=True, text=True)
    assert out.returncode == 2
    assert out.stderr.strip() == "pysdcmicro: error: `--seed` must be an integer >= 0; got -5."


def test_time_limited_auto_keeps_a_valid_partition_never_worse_than_the_baseline():
    X = make_synthetic(150, 3, rng=2)
    base = microaggregate(X, 3, method="mdav", improve="two-swap")
    res = microaggregate(X, 3, method="auto", rng=0, time_limit=2.0, n_jobs=1)
    assert_k_partition(res.labels, 150, 3)
    assert res.sse <= base.sse * (1 + 1e-12)
    assert res.status in ("limit", "done")
    assert "s on 1 core:" in res.message and res.info["winner"]
    assert res.info["plan"]["restarts"] == "alone"
    assert res.settings["time_limit"] == 2.0


def test_a_count_budget_makes_the_time_limited_portfolio_reproducible():
    """``epoch_restarts`` bounds the restarts by a count, not the clock: the portfolio on one
    core then does the same work, and gives the same partition, on any machine (the time
    limit is a ceiling it never reaches)."""
    X = make_synthetic(150, 3, rng=2)
    plan = AutoPlan(epoch_restarts=6)
    a = microaggregate(X, 3, method="auto", rng=3, time_limit=600.0, n_jobs=1, plan=plan)
    b = microaggregate(X, 3, method="auto", rng=3, time_limit=600.0, n_jobs=1, plan=plan)
    np.testing.assert_array_equal(a.labels, b.labels)
    restarts = [c for c in a.info["components"] if c["name"] == "icsm-restarts"]
    assert [c["restarts"] for c in restarts] == [[6]]
    assert a.status == "done" and a.sse <= a.info["baseline_sse"] * (1 + 1e-12)
    assert a.settings["options"]["plan"] == plan


def test_plan_fields_give_the_fixed_work():
    X = make_synthetic(120, 3, rng=4)
    res = microaggregate(X, 3, method="auto", rng=0, plan={"restarts": 3, "bound": False})
    plan = res.info["plan"]
    assert {key: plan[key] for key in ("icsm", "restarts", "bound", "two_swap")} == {
        "icsm": True, "restarts": 3, "bound": False, "two_swap": True}
    assert "mdav+two-swap, ICSM with 3 restarts" in res.message and res.lower_bound is None
    res = microaggregate(X, 3, method="auto", rng=0, plan=AutoPlan(icsm=False))
    assert res.info["plan"]["icsm"] is False and res.info["winner"] == "mdav+two-swap"
    assert "mdav+two-swap only;" in res.message


def test_fixed_work_is_a_count_budget_that_stops_icsm():
    """Without a time limit ICSM stops at its work budget (counted, not timed): a tiny budget
    stops the first run after one round, the same on every run; two-swap is skipped when
    its O(n^2 d) scan is over budget, and the answer is never worse than the baseline."""
    X = make_synthetic(400, 4, rng=5)
    plan = AutoPlan(work_base=1.0, work_per_record=1.0, two_swap_max_work=0.0, restarts=2)
    a = microaggregate(X, 3, method="auto", rng=1, plan=plan)
    b = microaggregate(X, 3, method="auto", rng=1, plan=plan)
    np.testing.assert_array_equal(a.labels, b.labels)
    assert a.info["plan"]["two_swap"] is False and a.info["plan"]["icsm_work"] == (1 + 400) // 4
    assert a.info["icsm"]["rounds"] == 1
    full = microaggregate(X, 3, method="auto", rng=1, plan=AutoPlan(two_swap_max_work=0.0, restarts=2))
    assert full.info["icsm"]["rounds"] > 1 and full.info["icsm"]["work"] > a.info["icsm"]["work"]
    mdav = microaggregate(X, 3, method="mdav")
    assert a.sse <= a.info["baseline_sse"] * (1 + 1e-12) and a.info["baseline_sse"] == pytest.approx(mdav.sse)


@pytest.mark.parametrize("plan,kind,text", [
    ("fast", InvalidTypeError, "`plan` must be None, an AutoPlan or a dict of its fields; got 'fast'."),
    ({"restart": 3}, InvalidInputError, "`plan` has no field 'restart'; its fields are: "),
])
def test_bad_plan_is_one_clear_line(plan, kind, text):
    with pytest.raises(kind) as err:
        microaggregate(make_synthetic(30, 2, rng=0), 3, method="auto", rng=0, plan=plan)
    assert str(err.value).startswith(text) and "\n" not in str(err.value)


def test_auto_on_the_blocked_path_runs_the_light_variant_in_blocks():
    X = make_synthetic(600, 2, rng=3)
    res = microaggregate(X, 3, method="auto", rng=0, blocks=200, n_jobs=1)
    assert_k_partition(res.labels, 600, 3)
    assert res.settings["options"]["effort"] == "light"
    assert res.info["blocks"]["count"] >= 2


def frame_with_identifiers(n=40):
    rng = np.random.default_rng(0)
    return pd.DataFrame({
        "id": np.arange(1000, 1000 + n),  # a key: integers, distinct, dense
        "UTILITYID": np.repeat(np.arange(n // 4), 4) * 17 + 3,  # integer, repeated, identifier name
        "year": np.full(n, 1996),  # constant
        "income": rng.lognormal(10, 1, n).round(0),  # integer-valued, distinct, but spread out
        "age": rng.integers(18, 90, n),
    })


def test_default_variables_leave_identifiers_out_with_a_warning():
    df = frame_with_identifiers()
    with pytest.warns(IdentifierColumnWarning) as caught:
        res = microaggregate(df, 4, method="mdav")
    assert res.variables == ["income", "age"]
    for col in ("id", "UTILITYID", "year"):
        pd.testing.assert_series_equal(res.data[col], df[col])  # released as they were: never averaged
        assert f"'{col}'" in str(caught[0].message)
    assert "microaggregating 'income', 'age'" in str(caught[0].message)
    # named explicitly, an identifier-like column is microaggregated (the user's choice)
    res = microaggregate(df, 4, method="mdav", variables=["id", "income"])
    assert res.variables == ["id", "income"]


def test_identifier_rule():
    n = 50
    assert identifier_reason(np.arange(n), "row") is not None
    assert identifier_reason(np.full(n, 3.0), "x") == "constant"
    assert identifier_reason(np.arange(n) * 1000.0 + 7, "salary") is None  # distinct integers, spread out
    assert identifier_reason(np.arange(n) + 0.5, "x") is None  # not integers
    assert identifier_reason(np.repeat(np.arange(5), 10), "customer_id") is not None
    assert identifier_reason(np.repeat(np.arange(5), 10), "paid") is None


def test_default_variables_refuse_when_only_identifiers_are_left():
    df = pd.DataFrame({"id": np.arange(20), "name": list("abcdefghijklmnopqrst")})
    with pytest.raises(InvalidInputError, match="every numeric column looks like an identifier"):
        microaggregate(df, 3)


@pytest.mark.subprocess
def test_cli_default_variables_warn_and_pass_identifiers_through(tmp_path):
    df = frame_with_identifiers()
    path, out_path = tmp_path / "in.csv", tmp_path / "out.csv"
    df.to_csv(path, index=False)
    out = subprocess.run([sys.executable, "-m", "pysdcmicro", "microaggregate", str(path), "--k", "4",
                          "--method", "mdav", "-o", str(out_path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stderr.splitlines() if line.startswith("pysdcmicro: warning: default variables")]
    assert len(lines) == 1 and "'id'" in lines[0] and "'UTILITYID'" in lines[0]
    released = pd.read_csv(out_path)
    assert released["id"].tolist() == df["id"].tolist()


def test_progress_line_fits_the_width_by_dropping_whole_fields():
    ev = ProgressEvent(method="auto", stage="icsm-restarts", elapsed=12.34, iteration=120,
                       information_loss=14.56789, lower_bound=9.8, extra={"restarts": 4000}, limit=60)
    full = str(ev)
    assert "[   12.3s/60s]" in full and "IL=14.5679" in full and "gap=" in full
    clock = "[   12.3s/60s]"
    assert ev.fit(5) == clock  # never cut: the clock alone
    for width in range(len(clock), len(full) + 5):
        text = ev.fit(width)
        assert len(text) <= width
        pieces = text.split()
        for piece in pieces:  # every number whole, as in the full line
            if "=" in piece:
                assert piece in full
        if width >= len("[   12.3s/60s] auto/icsm-restarts IL=14.5679"):
            assert "IL=14.5679" in text  # the best IL goes only after the extras, iteration, bound


def test_heartbeat_shows_progress_while_nothing_is_reported():
    stream = io.StringIO()
    show = _TerminalProgress(interval=0.0, stream=stream, live=False, heartbeat=0.2)
    show(ProgressEvent(method="m", stage="long step", elapsed=1.0, information_loss=3.0))
    for _ in range(600):  # until three lines are out (however slow the machine)
        if len(stream.getvalue().splitlines()) >= 3:
            break
        time.sleep(0.05)
    show.close()
    lines = stream.getvalue().splitlines()
    assert len(lines) >= 3 and all("m/long step" in line for line in lines)
    clocks = [float(line.split("s]")[0].strip("[ ")) for line in lines]
    assert clocks == sorted(clocks) and clocks[-1] > clocks[0]


class TickClock:
    """A clock that advances a fixed step at each reading: deadlines on it are budgets of
    clock readings, the same on any machine."""

    def __init__(self, step: float):
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


@pytest.mark.slow
def test_decomposition_keeps_improving_until_its_deadline():
    """With a time limit the decomposition starts new rounds until the deadline (or, after
    two rounds without a gain, ICSM restarts take the rest), never only one round. The
    deadline runs on a tick clock and the subsets' column generation on deterministic
    budgets, so the run is the same on a loaded machine."""
    from pysdcmicro._context import Deadline
    from pysdcmicro.optimization._decomposition import _decomposition_solver

    Z = zscore(make_synthetic(120, 2, rng=5))
    ctx = Context(0, _deadline=Deadline(3.0, clock=TickClock(0.01)))
    sol = _decomposition_solver(Z, 3, ctx, s=2, n_jobs=1, local_search="two-swap", max_iterations=20,
                                pricing_deterministic_time=1.0, mip_deterministic_time=1.0)
    assert_k_partition(sol.labels, 120, 3)
    rounds = len(sol.info["rounds"])
    assert rounds >= 2 or "icsm_restarts_sse" in sol.info
    assert sol.message.startswith(f"decomposition: {rounds} round")
    assert naive_sse(Z, sol.labels) <= sol.info["step7_sse"] + 1e-9


def test_decomposition_message_says_what_ran():
    X = make_synthetic(60, 2, rng=1)
    res = microaggregate(X, 3, method="decomposition", rng=0, s=2, n_jobs=1, local_search="two-swap",
                         max_iterations=20, pricing_deterministic_time=1.0, mip_deterministic_time=1.0)
    assert res.message.startswith("decomposition: 1 round of 2 subsets (column generation each), "
                                  "local search two-swap")


@pytest.mark.subprocess
@pytest.mark.slow
def test_two_core_portfolio_runs_restart_chains_that_exchange_the_best():
    """On 2 cores and n <= chains_max_n the worker runs its own restart chain on all the data
    from the start (no serial ICSM run first); column generation takes the worker's chain over
    at the second epoch and answers. Count budgets (restarts per epoch, epochs, column
    generation's iterations) replace the clock: the time limit is a ceiling never reached."""
    plan = AutoPlan(epoch_restarts=3, chain_epochs=3, cg_min_limit=0.0, cg_switch_epoch=1, cg_min_left=0.0,
                    cut_max_k=0, cg_extra={"max_iterations": 2, "mip": False})
    X = make_synthetic(600, 3, rng=4)  # above colgen_small_n: the worker shares the restarts
    base = microaggregate(X, 3, method="mdav", improve="two-swap")
    res = microaggregate(X, 3, method="auto", rng=0, time_limit=600.0, n_jobs=2, plan=plan)
    assert_k_partition(res.labels, 600, 3)
    assert res.sse <= base.sse * (1 + 1e-12)
    assert res.info["plan"]["restarts"] == "chains"
    assert "icsm" not in res.info["seconds"]  # no serial ICSM run before the chains
    chains = [c for c in res.info["components"] if c["name"] == "icsm-restarts"]
    assert [c["epoch"] for c in chains] == [1, 2, 3] and all(c["mode"] == "chains" for c in chains)
    assert chains[0]["processes"] == 2 and chains[0]["restarts"] == [3, 3]
    assert chains[1]["processes"] == 1  # column generation holds the worker
    assert "column-generation started at" in res.info["seconds"]
    cg = [c for c in res.info["components"] if c["name"] == "column-generation"]
    assert len(cg) == 1 and cg[0]["where"] == "worker" and cg[0]["iterations"] <= 2
    assert res.info["winner"] in ("mdav+two-swap", "icsm-restarts (chain in this process)",
                                  "icsm-restarts (chain in a worker)", "icsm-restarts (chains merged)",
                                  "column-generation (worker)")
    # two chains in the first epoch: their improvements were merged into the best partition
    assert chains[0]["merge"]["sse"] <= min(chains[0]["sse"]) * (1 + 1e-12)
    assert "merge" not in chains[1]  # one chain: nothing to merge
    assert "workers: icsm-restarts chain on all the data; column generation in a worker" in res.message
    assert res.lower_bound is None or res.lower_bound <= res.information_loss + 1e-9


class _DeadPool:
    """A worker pool whose workers died while starting (as in a script without a main guard
    under the spawn start method): every task fails."""

    def submit(self, fn, *args):
        from concurrent.futures import Future
        from concurrent.futures.process import BrokenProcessPool

        f = Future()
        f.set_exception(BrokenProcessPool("a worker died while starting"))
        return f

    def shutdown(self, wait=True, cancel_futures=False):
        pass


def test_message_says_so_when_no_worker_answered(monkeypatch):
    from pysdcmicro.optimization import _auto

    monkeypatch.setattr(_auto, "_pool", lambda workers: _DeadPool())
    X = make_synthetic(600, 3, rng=4)
    res = microaggregate(X, 3, method="auto", rng=0, time_limit=600.0, n_jobs=2,
                         plan=AutoPlan(epoch_restarts=2, chain_epochs=1))
    assert_k_partition(res.labels, 600, 3)
    assert "workers: none answered (failed: BrokenProcessPool: a worker died while starting)" in res.message
    assert "chain on all the data" not in res.message
    assert res.info["winner"] in ("mdav+two-swap", "icsm-restarts (chain in this process)")


def test_a_cold_pricing_kernel_is_not_compiled_on_a_short_deadline(monkeypatch):
    """Compiling the branch and bound took 28 s and cannot be interrupted: a time-limited run
    with less than COMPILE_MIN_SECONDS left uses the numpy search instead (the decomposition's
    6-s test ran 18-36 s with a cold numba cache); without a limit, or warm, it is compiled."""
    from pysdcmicro._context import Deadline
    from pysdcmicro.optimization import _branch_and_bound as _pricing

    if _pricing._bb_kernel(points=True) is None:
        pytest.skip("numba not installed: there is no compiled kernel")
    monkeypatch.setattr(_pricing, "_warm", lambda fn: False)
    assert _pricing._bb_kernel(points=True, deadline=Deadline(5.0)) is None
    assert _pricing._bb_kernel(deadline=Deadline(5.0)) is None
    assert _pricing._bb_kernel(points=True, deadline=Deadline(None)) is not None
    assert _pricing._bb_kernel(points=True, deadline=Deadline(_pricing.COMPILE_MIN_SECONDS + 60)) is not None
    monkeypatch.setattr(_pricing, "_warm", lambda fn: True)
    assert _pricing._bb_kernel(points=True, deadline=Deadline(5.0)) is not None


def test_portfolio_refuses_to_run_in_a_starting_worker(monkeypatch):
    """A script without a __main__ guard is imported again by every spawned worker; the call
    there must fail at once (not run a second, unused copy of the whole budget)."""
    import multiprocessing

    monkeypatch.setattr(multiprocessing.current_process(), "_inheriting", True, raising=False)
    with pytest.raises(RuntimeError, match="__main__"):
        microaggregate(make_synthetic(60, 2, rng=0), 3, method="auto", rng=0, time_limit=30.0)


def test_interrupt_gathers_the_workers_answers():
    """After a Ctrl-C the portfolio takes the partitions the workers hand back within
    ``interrupt_wait`` seconds (a better one becomes the incumbent; a part's labels, a failed
    or a late worker are passed over: the late one never completes, so the call returns only
    because it is not awaited past the wait)."""
    from concurrent.futures import Future

    from pysdcmicro.optimization._auto import _gather

    ctx = Context(0, 10.0)
    ctx.offer(np.zeros(6, dtype=np.int64), 5.0)
    better, part, failed, late = Future(), Future(), Future(), Future()
    better.set_result({"labels": np.array([0, 0, 0, 1, 1, 1]), "sse": 2.0})
    part.set_result({"labels": np.array([0, 0, 0]), "sse": 1.0})
    failed.set_exception(RuntimeError("worker died"))
    _gather([(part, None, None), failed, better, late], ctx, time.monotonic() + 0.3, 6)
    labels, value = ctx.incumbent
    assert value == 2.0 and list(labels) == [0, 0, 0, 1, 1, 1]


@pytest.mark.subprocess
@pytest.mark.slow
def test_ctrl_c_in_the_first_epoch_returns_the_workers_best(tmp_path):
    """Ctrl-C (here: KeyboardInterrupt raised from the progress callback, in the main thread,
    where the signal lands) once the chains run: the call returns the interrupt's answer, a
    valid k-partition never worse than MDAV + two-swap, status limit, and the temporary
    folder of the stop file is removed. The time limit is a ceiling: without the interrupt
    the call would not return for minutes."""
    import os
    import tempfile

    X = make_synthetic(600, 3, rng=4)  # chains: colgen_small_n < n <= chains_max_n
    base = microaggregate(X, 3, method="mdav", improve="two-swap")
    seen = []

    def progress(event):
        if event.stage == "restarts" and not seen:  # this process's chain: the workers' have started
            seen.append(event)
            raise KeyboardInterrupt

    before = set(os.listdir(tempfile.gettempdir()))
    res = microaggregate(X, 3, method="auto", rng=0, time_limit=600.0, n_jobs=2, progress=progress)
    assert seen
    assert res.status == "limit" and "interrupted (Ctrl-C)" in res.message
    assert_k_partition(res.labels, 600, 3)
    assert res.sse <= base.sse * (1 + 1e-12)
    after = set(os.listdir(tempfile.gettempdir()))
    assert not [p for p in after - before if p.startswith("pysdcmicro-auto-")]


def test_dives_fix_lp_integral_groups_and_never_worsen():
    """`_dives` (after a converged column generation): every dive fixes some of the incumbent's
    LP-integral groups and re-solves the rest; the answer is a valid k-partition no worse than
    its start, and column generation lists the integral groups only when asked and converged.
    Budgets are counts (iterations, dives); the deadlines are ceilings."""
    from pysdcmicro._partition import sse
    from pysdcmicro.optimization import _auto
    from pysdcmicro.optimization._column_generation import solve_column_generation

    Z = zscore(make_synthetic(36, 2, rng=3))
    start = microaggregate(Z, 3, method="mdav", scaling="none").labels
    # deadlines below COMPILE_MIN_SECONDS: no numba compilation inside the test
    cg = solve_column_generation(Z, 3, Context(0, 100.0), seeds=[start], mip=False, integral_groups=True,
                                 max_iterations=200)
    assert cg.info["converged"]
    assert cg.info["integral_groups"]
    assert "integral_groups" not in solve_column_generation(Z, 3, Context(0, 100.0), seeds=[start], mip=False,
                                                            max_iterations=1).info
    for g in cg.info["integral_groups"]:
        assert 3 <= len(g) <= 5
    plan = AutoPlan(dive_min_seconds=0.0, dive_seconds=0.5, max_dives=2)
    labels, stats = _auto._dives(Z, 3, start, cg.info["integral_groups"], Context(1, 100.0), plan)
    assert_k_partition(labels, 36, 3)
    assert sse(Z, labels) <= sse(Z, start) * (1 + 1e-12)
    assert stats["dives"] == 2 and all(s < 36 for s in stats["dive_residual_sizes"])


def test_column_generation_worker_runs_the_cut_phase_at_k3():
    """auto's column-generation worker at k <= 3 runs the subset-row cuts after its LP: the
    component reports the cut phase, whose bound lies between the plain LP value and the
    brute-force optimum, and the worker's bound names its argument. (The component itself,
    in this process: the whole portfolio needs worker processes and a 240-s budget.)"""
    from pysdcmicro.optimization import _auto

    from .._helpers import brute_force_optimum

    rng = np.random.default_rng(6)  # test_subset_row_cuts: k = 3, a fractional plain LP
    n, k = int(rng.integers(8, 13)), int(rng.choice([2, 3, 4]))
    Z = zscore(rng.normal(size=(n, int(rng.integers(1, 4)))))
    assert k == 3
    opt, _ = brute_force_optimum(Z, k)
    start = microaggregate(Z, k, method="mdav", scaling="none").labels
    plan = AutoPlan()
    options = plan.cg_options(150.0, k)
    assert options["cut_rounds"] > 0 and 0 < options["cut_time"] <= plan.cut_seconds
    # a 150-s deadline (long enough to load or compile the pricing with cuts before the capped
    # cut phase) is a ceiling: the tiny run converges in about a second once it is compiled
    res = _auto._component("column-generation", Z, k, start, 0, time.time() + 150.0, None, options)
    assert res.get("converged")
    cuts = res["subset_row_cuts"]
    assert res["lp_value"] < opt - 1e-6  # the plain LP is fractional here
    assert cuts["rounds"] >= 1 and cuts["seconds"] is not None
    # at least the LP value (less the bound's float margin), at most the optimum (on a quiet
    # machine above the LP: test_subset_row_cuts; here the capped phase may stop by the clock)
    assert res["lp_value"] * (1 - 1e-7) <= cuts["bound_after"] <= opt + 1e-9
    assert res["lower_bound"] <= opt + 1e-9
    assert _auto._bound_argument(res).startswith("column generation: ")
    assert plan.cut_options(30.0, 4) == {}


@pytest.mark.subprocess
def test_blas_threads_sets_and_restores_blas_threads():
    # auto's calling process runs its chain with one BLAS thread while the workers run
    # (OpenBLAS's idle threads busy-wait and took the column-generation worker's core)
    import numpy as np
    from threadpoolctl import threadpool_info

    from pysdcmicro.large._executors import blas_threads

    np.dot(np.ones((2, 2)), np.ones((2, 2)))  # numpy's BLAS is loaded
    blas = [p for p in threadpool_info() if p["user_api"] == "blas"]
    assert blas, "numpy's BLAS library is not visible to threadpoolctl"
    before = [p["num_threads"] for p in blas]
    with blas_threads(1):
        assert all(p["num_threads"] == 1 for p in threadpool_info() if p["user_api"] == "blas")
    assert [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"] == before


_NO_GUARD_SCRIPT = """\
import numpy as np
from pysdcmicro import microaggregate
print("TOP LEVEL", flush=True)
res = microaggregate(np.random.default_rng(0).normal(size=(600, 3)), 3, rng=0, time_limit=600, n_jobs=2,
                     plan={"epoch_restarts": 2, "chain_epochs": 1})
print("RESULT", res.status, res.message, flush=True)
"""


@pytest.mark.subprocess
@pytest.mark.slow
def test_a_script_without_a_main_guard_runs_once_and_its_workers_answer(tmp_path):
    """The portfolio's workers never import the calling script: a script without ``if __name__
    == "__main__":`` runs its top level once, prints no traceback, and its worker chain
    answers (a count budget: the 600-s limit is a ceiling)."""
    script = tmp_path / "plain.py"
    script.write_text(_NO_GUARD_SCRIPT)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr and "Error" not in out.stderr, out.stderr
    assert out.stdout.count("TOP LEVEL") == 1
    result = [line for line in out.stdout.splitlines() if line.startswith("RESULT")]
    assert result and "workers: icsm-restarts chain on all the data" in result[0], out.stdout
    assert "none answered" not in result[0]
