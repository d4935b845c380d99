"""Time limits on a deterministic clock: a deadline that expires after a given number of
reads (no wall clock), so each test asks the same thing on any machine.

Whatever the method and wherever its deadline expires (before its first step, after a few
checks, in the middle), it returns a valid k-partition and never raises; where the first
MDAV is cut short, the records left are grouped in runs along their first principal axis.
"""

from __future__ import annotations

import numpy as np
import pytest

import pysdcmicro
from pysdcmicro import microaggregate
from pysdcmicro._context import Context, Deadline
from pysdcmicro._methods import get_method
from pysdcmicro._partition import sse

from ._helpers import assert_k_partition
from .method_budgets import budget

METHODS = sorted(pysdcmicro.methods())


class CountingClock:
    """A clock that moves one unit per read: ``Deadline(N, clock=...)`` expires at the
    N-th read after it was made."""

    def __init__(self):
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        return float(self.reads)


def _ctx(reads: int, seed: int = 0) -> Context:
    return Context(seed, _deadline=Deadline(reads, clock=CountingClock()))


def _data(n=300, d=3, seed=0):
    return np.random.default_rng(seed).standard_normal((n, d))


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("reads", [0, 1, 3, 20])
def test_every_method_returns_a_k_partition_when_its_deadline_expires(method, reads):
    Z = _data()
    spec = get_method(method)
    if spec.per_variable:  # its core takes one column at a time
        Z = Z[:, :1]
    sol = spec.core(Z, 3, _ctx(reads), **budget(method))
    labels = np.asarray(getattr(sol, "labels", sol))
    assert_k_partition(labels, Z.shape[0], 3)
    assert getattr(sol, "status", "done") in ("done", "limit")


@pytest.mark.parametrize("method", ["vmdav", "column-generation", "decomposition"])
def test_an_expired_deadline_says_limit(method):
    """Cut short at once: the status tells the caller the limit was hit. (MDAV's compiled
    rounds, once loaded, group a few hundred records inline in microseconds; its numpy
    rounds are cut short in the tests below.)"""
    Z = _data(400)
    sol = get_method(method).core(Z, 3, _ctx(0), **budget(method))
    assert sol.status == "limit"
    assert_k_partition(sol.labels, Z.shape[0], 3)


def test_mdav_cut_short_groups_the_rest_along_the_principal_axis():
    from pysdcmicro.constructive._mdav import _dense_labels, _fill_rest

    Z = _data(600, 4, seed=3)
    full = _dense_labels(Z, 3)
    # expired at the 5th check: 4 rounds of two groups each, the same as the full run's first 8
    part = _dense_labels(Z, 3, deadline=Deadline(5, clock=CountingClock()))
    done = part >= 0
    assert 0 < done.sum() < Z.shape[0]
    assert np.array_equal(part[done], full[done])
    _fill_rest(Z, part, 3)
    assert_k_partition(part, Z.shape[0], 3)
    # the rest: runs of k along the first principal axis of the records left
    rest = ~done
    R = Z[rest] - Z[rest].mean(axis=0)
    axis = np.linalg.svd(R, full_matrices=False)[2][0]
    score = R @ axis
    for g in np.unique(part[rest]):
        inside = score[part[rest] == g]
        outside = score[part[rest] != g]
        assert ((outside < inside.min()) | (outside > inside.max())).all()


def test_mdav_labels_unchanged_without_a_limit():
    from pysdcmicro.constructive._mdav import mdav_labels

    Z = _data(500, 3, seed=4)
    a = mdav_labels(Z, 3)
    b = mdav_labels(Z, 3, deadline=Deadline(None))
    order_a, order_b = [], []
    mdav_labels(Z, 3, order=order_a)
    mdav_labels(Z, 3, order=order_b, deadline=Deadline(None))
    assert np.array_equal(a, b) and order_a == order_b


def test_mdav_order_covers_every_record_when_cut_short():
    from pysdcmicro.constructive._mdav import mdav_labels

    Z = _data(500, 3, seed=5)
    order: list = []
    labels = mdav_labels(Z, 3, order=order, deadline=Deadline(3, clock=CountingClock()))
    assert sorted(order) == list(range(500))
    assert_k_partition(labels, 500, 3)


def test_vmdav_cut_short_by_the_deadline():
    from pysdcmicro.constructive._vmdav import _numpy_labels

    Z = _data(500, 3, seed=6)
    full, _ = _numpy_labels(Z, 3, 0.5, None)
    cut, info = _numpy_labels(Z, 3, 0.5, _ctx(10))
    assert_k_partition(cut, 500, 3)
    assert info["stopped_extending"] is not None
    same, _ = _numpy_labels(Z, 3, 0.5, Context(0))  # a context without a limit: the same groups
    assert np.array_equal(same, full)


def test_neighbour_lists_stop_at_the_deadline():
    from pysdcmicro.optimization._lagrangian import neighbours

    Z = _data(300)
    assert neighbours(Z, 8, deadline=Deadline(0, clock=CountingClock())) is None
    idx, dist = neighbours(Z, 8, deadline=Deadline(None))
    idx0, dist0 = neighbours(Z, 8)
    assert np.array_equal(idx, idx0) and np.array_equal(dist, dist0)


@pytest.mark.parametrize("reads", [0, 2, 6, 12, 40])
def test_column_generation_returns_its_best_seed_when_the_limit_comes_early(reads):
    Z = _data(400)
    sol = get_method("column-generation").core(Z, 3, _ctx(reads), **budget("column-generation"))
    assert_k_partition(sol.labels, 400, 3)
    assert sol.status == "limit"
    if sol.info.get("iterations") == 0:  # stopped before the column pool existed: no bound claimed
        assert sol.lower_bound is None


def _never_returns(args):  # a subset worker that is still busy long after the round's end
    import time

    time.sleep(120)


def test_decomposition_round_keeps_input_labels_of_a_late_subset(monkeypatch):
    """A subset whose worker is not back at the round's end keeps the input partition's
    labels, and the round returns at once instead of waiting for the worker."""
    from pysdcmicro.optimization import _decomposition

    monkeypatch.setattr(_decomposition, "_solve_subset", _never_returns)
    monkeypatch.setattr(_decomposition, "_LATE", 0.0)
    Z = _data(120)
    labels = np.arange(120) // 3
    info = {"local_search": "icsm"}
    ctx = _ctx(0)
    union, sub_info, statuses, _ = _decomposition._one_round(Z, 3, ctx, labels, 2, "path", None, 2, None, {}, info)
    assert_k_partition(union, 120, 3)
    assert statuses == ["limit", "limit"]
    assert sse(Z, union) == pytest.approx(sse(Z, labels))
    assert all(s.get("timed_out") for s in sub_info)


def test_blocked_path_with_an_expired_limit_is_a_k_partition(monkeypatch):
    """The blocked path cut short everywhere (blocks and repair): still a k-partition."""
    import pysdcmicro._pipeline as pipeline

    real = pipeline._root_context

    def expired_root(job, prep):
        root = real(job, prep)
        root.deadline = Deadline(0, clock=CountingClock())
        return root

    monkeypatch.setattr(pipeline, "_root_context", expired_root)
    X = _data(3000, 4, seed=7)
    res = microaggregate(X, 3, method="mdav", blocks={"size": 500}, n_jobs=1, rng=0, time_limit=60)
    assert_k_partition(res.labels, 3000, 3)
    assert res.status == "limit"


def test_blocked_path_runs_in_process_under_a_short_limit():
    from pysdcmicro.large import _blocked

    X = _data(3000, 4, seed=8)
    limit = _blocked.SERIAL_BELOW_SECONDS / 2
    res = microaggregate(X, 3, method="simple", blocks={"size": 1000}, n_jobs=2, rng=0, time_limit=limit)
    assert_k_partition(res.labels, 3000, 3)
    assert res.info["blocks"]["executor"] == "serial"
    assert "worker processes" in res.info["blocks"]["serial_reason"]


def test_compiled_mdav_still_loading_at_the_deadline_is_left_behind():
    """A kernel call that does not stop at the flag (it is still loading) is not waited
    for: every record comes back ungrouped, and the caller groups them quickly."""
    import threading
    from types import SimpleNamespace

    from pysdcmicro.constructive import _mdav

    release = threading.Event()
    calls = []

    def loading_rounds(*args):
        calls.append(1)
        release.wait(30)  # never looks at the flag while "loading"

    try:
        Z = _data(200)
        fake = SimpleNamespace(mdav_rounds=loading_rounds)
        labels, why = _mdav._rounds_in_thread(fake, (Z,), 3, Deadline(0, clock=CountingClock()))
        assert calls and why == "time limit reached"
        assert (labels == -1).all()
        _mdav._fill_rest(Z, labels, 3)
        assert_k_partition(labels, 200, 3)
    finally:
        release.set()


def test_numpy_grouping_gives_the_compiled_partition():
    """Under a short limit the MHM family may group with the numpy DP instead of loading the
    compiled one: the same partition."""
    from pysdcmicro.univariate._hansen_mukherjee import optimal_runs

    Z = _data(2000, 3, seed=9)
    order = np.random.default_rng(1).permutation(2000)
    a, cost_a = optimal_runs(Z, order, 3)
    b, cost_b = optimal_runs(Z, order, 3, compiled=False)
    assert np.array_equal(a, b) and cost_a == pytest.approx(cost_b, rel=1e-12)


def test_mhm_under_a_short_limit_groups_with_numpy_when_not_loaded(monkeypatch):
    from pysdcmicro.univariate import _hansen_mukherjee as hm
    from pysdcmicro.univariate import _mhm

    from types import SimpleNamespace

    # as in a process that has not loaded the compiled DP yet
    monkeypatch.setattr(hm, "_kernels", lambda: SimpleNamespace(dp_linear=SimpleNamespace(signatures=[])))
    Z = _data(1000, 3, seed=10)
    selector = _mhm._Selector(Z, 3, False, _ctx(10))
    _mhm._load_grouping(Z, 3, Context(0, 1.0), False, selector)
    assert selector.compiled is False
    selector(np.arange(1000))
    assert_k_partition(selector.labels, 1000, 3)
