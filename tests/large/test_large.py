"""The large-data path: blocks, per-block solve in processes or on Dask, border repair.

Small n and small blocks keep these fast; the 10^4..10^6 numbers are in
benchmarks/results/large.md.
"""

from __future__ import annotations

import itertools
import time

import numpy as np
import pandas as pd
import pytest

import pysdcmicro
from pysdcmicro import ConstantColumnWarning, StratumTooSmallError, microaggregate
from pysdcmicro._context import Context
from pysdcmicro._partition import sse
from pysdcmicro.datasets import make_synthetic
from pysdcmicro.large import (batch_local_search, group_windows, microaggregate_blocked, principal_axis,
                              principal_blocks)
from pysdcmicro.large import _blocked
from pysdcmicro.large._blocks import iter_principal_blocks, split_blocks

from .._helpers import assert_k_partition, naive_sse, naive_sst, zscore


def _clusters(n_per=300, d=3, seed=0):
    """Two far-apart clouds: any sensible block never mixes them."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(n_per, d))
    b = rng.normal(size=(n_per, d)) + 50.0
    X = np.vstack([a, b])
    perm = rng.permutation(2 * n_per)
    return X[perm], (perm >= n_per)  # second: True for the rows of cloud b


# --------------------------------------------------------------------------- blocks

@pytest.mark.parametrize("n,k,block", [(1000, 3, 100), (997, 5, 128), (64, 4, 1), (50, 3, 49), (31, 2, 8)])
def test_principal_blocks_partition_the_records_with_sizes_in_range(n, k, block):
    Z = zscore(make_synthetic(n, 4, kind="uniform", rng=n))
    blocks = principal_blocks(Z, k, block)
    rows = np.concatenate(blocks)
    assert sorted(rows.tolist()) == list(range(n))
    sizes = np.array([b.size for b in blocks])
    assert sizes.min() >= 2 * k  # never a block too small for a valid group
    assert sizes.max() <= max(block, 4 * k - 1)
    assert np.count_nonzero(sizes % k) <= 1  # every block but one holds whole groups of k
    for b in blocks:
        assert np.all(np.diff(b) > 0)


def test_principal_blocks_keep_near_records_together():
    X, in_b = _clusters()
    blocks = principal_blocks(zscore(X), 3, 150)
    assert len(blocks) == 4
    for b in blocks:
        assert in_b[b].all() or not in_b[b].any()


def test_principal_blocks_respect_roots():
    Z = zscore(make_synthetic(200, 3, rng=3))
    roots = [np.arange(0, 200, 2), np.arange(1, 200, 2)]
    blocks = principal_blocks(Z, 3, 30, roots)
    for b in blocks:
        assert len(set((b % 2).tolist())) == 1


def test_principal_axis_matches_svd():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 4)) @ rng.normal(size=(4, 4))
    mean, axis = principal_axis(X)
    _, _, vt = np.linalg.svd(X - X.mean(axis=0))
    np.testing.assert_allclose(mean, X.mean(axis=0))
    assert abs(abs(axis @ vt[0]) - 1.0) < 1e-10
    w = rng.uniform(0.5, 3, 300)
    mean_w, _ = principal_axis(X, np.arange(300), w)
    np.testing.assert_allclose(mean_w, np.average(X, axis=0, weights=w))


def test_threaded_split_and_windows_are_the_serial_ones():
    # sibling sets are cut on several threads, in any order: the same blocks and windows
    rng = np.random.default_rng(3)
    Z = np.vstack([rng.normal(size=(1700, 4)), rng.normal(5, 1, size=(900, 4))])
    roots = [np.arange(0, 1200), np.arange(1200, 1230), np.arange(1230, 2600)]
    for r in (None, roots):
        serial = [b.tolist() for b in iter_principal_blocks(Z, 3, 100, r)]
        assert len(serial) >= (26 if r is None else 27)
        for threads in (1, 3, 8):
            got: dict = {}
            split_blocks(Z, 3, 100, r, lambda i, rows: got.__setitem__(i, rows.tolist()), threads=threads)
            assert [got[i] for i in range(len(got))] == serial
    C = rng.normal(size=(3000, 3))
    sizes = rng.integers(3, 6, 3000)
    for q in (0.3, 0.7):
        serial = [w.tolist() for w in group_windows(C, sizes, 200, q, threads=1)]
        assert len(serial) >= 50
        for threads in (2, 8):
            assert [w.tolist() for w in group_windows(C, sizes, 200, q, threads=threads)] == serial


def test_threaded_split_stops_and_raises():
    rng = np.random.default_rng(4)
    Z = rng.normal(size=(3000, 3))
    got: list = []
    split_blocks(Z, 3, 100, None, lambda i, rows: got.append(i), threads=4, stopped=lambda: len(got) >= 3)
    assert 3 <= len(got) < 30
    with pytest.raises(ZeroDivisionError):
        split_blocks(Z, 3, 100, None, lambda i, rows: 1 / 0, threads=4)


def test_group_windows_cover_every_group_once():
    rng = np.random.default_rng(1)
    C = rng.normal(size=(200, 3))
    sizes = rng.integers(3, 6, 200)
    for q in (0.3, 0.5, 0.7):
        wins = group_windows(C, sizes, 60, q)
        assert sorted(np.concatenate(wins).tolist()) == list(range(200))
        assert max(sizes[w].sum() for w in wins if w.size > 1) <= 60


# --------------------------------------------------------------------------- local search

def _all_moves_and_swaps(Z, labels, k, max_size):
    """Brute force: SSE change of every size-feasible move and swap."""
    base = naive_sse(Z, labels)
    sizes = np.bincount(labels)
    out = []
    for i in range(len(labels)):
        for g in range(sizes.size):
            if g != labels[i] and sizes[labels[i]] > k and sizes[g] < max_size:
                new = labels.copy()
                new[i] = g
                out.append(naive_sse(Z, new) - base)
    for i, j in itertools.combinations(range(len(labels)), 2):
        if labels[i] != labels[j]:
            new = labels.copy()
            new[i], new[j] = labels[j], labels[i]
            out.append(naive_sse(Z, new) - base)
    return np.array(out)


_COMPILED = [False] + ([True] if pysdcmicro.large.compiled_available() else [])


@pytest.mark.parametrize("compiled", _COMPILED)
@pytest.mark.parametrize("seed,k", [(0, 2), (1, 3), (2, 3)])
def test_batch_local_search_reaches_a_local_optimum_and_never_worsens(seed, k, compiled):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(24, 2))
    start = np.repeat(np.arange(24 // k), k)[: 24]
    start = np.concatenate([start, np.full(24 - start.size, start.max())])
    rng.shuffle(start)
    sol = batch_local_search(Z, start, k, Context(0), rounds=200, neighbours=50, tol=0.0, compiled=compiled)
    assert sol.status == "done"  # stopped because nothing improves
    assert_k_partition(sol.labels, 24, k, max_size=2 * k - 1)
    assert naive_sse(Z, sol.labels) <= naive_sse(Z, start) + 1e-12
    assert sol.info["moves"] + sol.info["swaps"] > 0
    # With every group a neighbour, no single move or swap improves the result.
    assert _all_moves_and_swaps(Z, sol.labels, k, 2 * k - 1).min() > -1e-9


@pytest.mark.parametrize("compiled", _COMPILED)
def test_batch_local_search_each_round_lowers_sse(compiled):
    Z = zscore(make_synthetic(600, 4, kind="uniform", rng=2))
    labels = np.repeat(np.arange(200), 3)  # rows in generation order: poor groups
    values = [sse(Z, labels)]
    for _ in range(5):
        labels = batch_local_search(Z, labels, 3, Context(0), rounds=1, compiled=compiled).labels
        values.append(sse(Z, labels))
    assert all(b < a for a, b in zip(values, values[1:]))
    assert_k_partition(labels, 600, 3, max_size=5)


@pytest.mark.parametrize("compiled", _COMPILED)
def test_batch_local_search_stops_on_an_expired_deadline(compiled):
    Z = np.random.default_rng(0).normal(size=(30, 2))
    labels = np.repeat(np.arange(10), 3)
    sol = batch_local_search(Z, labels, 3, Context(0, 1e-9), compiled=compiled)
    assert sol.status == "limit"
    np.testing.assert_array_equal(sol.labels, labels)


@pytest.mark.skipif(not pysdcmicro.large.compiled_available(), reason="numba not installed")
def test_compiled_sweeps_dissolve_mdav_groups_and_keep_sizes_in_range():
    """After MDAV every group has exactly k records, so no record can move; the compiled
    sweeps dissolve groups into their neighbours, then move and swap records. The SSE
    falls, every group keeps k..2k-1 records, the labels come back numbered 0..g-1."""
    from pysdcmicro.constructive._mdav import mdav_labels

    Z = zscore(make_synthetic(2000, 4, kind="clustered", rng=11))
    start = mdav_labels(Z, 5)
    assert set(np.bincount(start)[:-1].tolist()) == {5}
    sol = batch_local_search(Z, start, 5, Context(0), rounds=6, tol=0.0)
    assert sol.info["dissolved"] > 0 and sol.info["moves"] > 0 and sol.info["swaps"] > 0
    assert_k_partition(sol.labels, 2000, 5, max_size=9)
    assert np.array_equal(np.unique(sol.labels), np.arange(sol.labels.max() + 1))
    assert naive_sse(Z, sol.labels) < 0.95 * naive_sse(Z, start)
    # the numpy rounds cannot change the group sizes from there (moves only leave groups above k)
    plain = batch_local_search(Z, start, 5, Context(0), rounds=6, compiled=False)
    assert naive_sse(Z, sol.labels) < naive_sse(Z, plain.labels)


@pytest.mark.skipif(not pysdcmicro.large.compiled_available(), reason="numba not installed")
def test_compiled_sweeps_with_duplicate_records_and_tied_centroids():
    """Identical records make identical centroids (the k-d tree may list a group after its
    twins): still a valid partition that is never worse."""
    Z = np.repeat(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]), 12, axis=0)
    Z = np.vstack([Z, np.random.default_rng(3).normal(size=(12, 2))])
    labels = np.arange(48) % 12
    sol = batch_local_search(Z, labels, 3, Context(0), rounds=20, neighbours=11, tol=0.0)
    assert_k_partition(sol.labels, 48, 3, max_size=5)
    assert naive_sse(Z, sol.labels) <= naive_sse(Z, labels) + 1e-12


def test_auto_light_in_blocks_is_never_worse_than_mdav():
    from pysdcmicro.constructive._mdav import mdav_labels
    from pysdcmicro.optimization._auto import _auto_solver

    Z = zscore(make_synthetic(1500, 5, kind="uniform", rng=12))
    sol = _auto_solver(Z, 5, Context(0), effort="light")
    assert_k_partition(sol.labels, 1500, 5)
    assert naive_sse(Z, sol.labels) <= naive_sse(Z, mdav_labels(Z, 5)) + 1e-9
    expected = "mdav+local-search" if pysdcmicro.large.compiled_available() else "mdav+two-swap"
    assert sol.info["winner"] == expected


# --------------------------------------------------------------------------- the path

def test_blocked_result_is_a_valid_k_partition_with_whole_data_il():
    X = make_synthetic(900, 3, kind="clustered", rng=4)
    df = pd.DataFrame(X, columns=["a", "b", "c"], index=[f"r{i}" for i in range(900)])
    df.insert(1, "id", np.arange(900))
    res = microaggregate(df, 3, variables=["a", "b", "c"], blocks=100, n_jobs=1, rng=0, method="mdav")
    assert_k_partition(res.labels, 900, 3)
    Z = zscore(X)
    assert res.sse == pytest.approx(naive_sse(Z, res.labels), rel=1e-9)
    assert res.information_loss == pytest.approx(100 * naive_sse(Z, res.labels) / naive_sst(Z), rel=1e-9)
    assert res.lower_bound is None and res.status == "done"
    for rows in res.groups:
        np.testing.assert_allclose(res.data.iloc[rows][["a", "b", "c"]].to_numpy(),
                                   np.broadcast_to(X[rows].mean(axis=0), (rows.size, 3)), rtol=1e-12, atol=1e-12)
    assert res.data["id"].tolist() == list(range(900)) and list(res.data.index) == list(df.index)
    blocks, repair = res.info["blocks"], res.info["repair"]
    n_blocks = len(principal_blocks(Z, 3, 100))
    assert blocks["count"] == n_blocks >= 9 and sum(blocks["sizes"]) == 900 and blocks["statuses"] == {"done": n_blocks}
    assert repair["sse_after"] <= repair["sse_before"] and len(repair["passes"]) == 2
    assert repair["information_loss_after"] == pytest.approx(res.information_loss, rel=1e-9)
    assert res.settings["blocks"]["block_size"] == 100 and res.settings["blocks"]["reason"] == "requested"
    # Border repair lets groups straddle the block borders.
    block_of = np.empty(900, dtype=np.int64)
    for b, rows in enumerate(principal_blocks(Z, 3, 100)):
        block_of[rows] = b
    assert any(np.unique(block_of[rows]).size > 1 for rows in res.groups)


def test_tracked_sses_are_those_of_the_partitions():
    # the blocks' SSE is summed from their tasks and each pass's from its windows' decreases;
    # both must be the SSE of the partition, computed over every record
    X = make_synthetic(1500, 3, kind="clustered", rng=8)
    Z = zscore(X)
    plain = microaggregate(X, 3, blocks={"size": 200, "repair": "none"}, n_jobs=1, method="mdav", rng=0)
    assert plain.info["repair"]["sse_before"] == pytest.approx(naive_sse(Z, plain.labels), rel=1e-9)
    res = microaggregate(X, 3, blocks={"size": 200, "repair_passes": 3}, n_jobs=1, method="mdav", rng=0)
    repair = res.info["repair"]
    assert repair["sse_before"] == pytest.approx(plain.info["repair"]["sse_before"], rel=1e-12)
    passes = repair["passes"]
    assert len(passes) == 3 and passes[0]["sse_before"] == repair["sse_before"]
    assert all(a["sse_after"] == b["sse_before"] for a, b in zip(passes, passes[1:]))
    assert passes[-1]["sse_after"] == pytest.approx(naive_sse(Z, res.labels), rel=1e-9)
    assert repair["sse_after"] == pytest.approx(naive_sse(Z, res.labels), rel=1e-12)
    assert repair["sse_after"] < repair["sse_before"] and "dropped" not in repair


def test_a_repair_whose_windows_misreport_is_dropped(monkeypatch):
    X = make_synthetic(600, 3, rng=6)
    plain = microaggregate(X, 3, blocks={"size": 100, "repair": "none"}, n_jobs=1, method="mdav")

    def lying(Z, labels, k, *args, **kwargs):  # a worse partition, reported as a better one
        out = np.minimum(np.arange(Z.shape[0]) // k, Z.shape[0] // k - 1)  # runs of k rows, in row order
        return {"labels": out, "status": "done", "message": "", "before": 1.0, "after": 0.0, "pid": None}

    monkeypatch.setattr(_blocked, "improve_window_task", lying)
    res = microaggregate(X, 3, blocks={"size": 100}, n_jobs=1, method="mdav")
    assert_k_partition(res.labels, 600, 3)
    assert res.sse == pytest.approx(plain.sse, rel=1e-12)
    assert "larger SSE" in res.info["repair"]["dropped"]


def test_repair_never_raises_sse_nor_breaks_group_sizes():
    X = make_synthetic(600, 3, rng=6)

    def bad(Z, labels, k, ctx):  # swaps two records between groups whatever the cost; breaks sizes too
        out = labels.copy()
        out[0] = labels.max()
        out[-1] = labels.max() + 1
        return out

    plain = microaggregate(X, 3, blocks={"size": 100, "repair": "none"}, n_jobs=1, method="mdav")
    res = microaggregate(X, 3, blocks={"size": 100, "repair": bad}, n_jobs=1, method="mdav")
    assert_k_partition(res.labels, 600, 3)
    assert res.sse == pytest.approx(plain.sse, rel=1e-12)
    assert all(p["improved"] == 0 for p in res.info["repair"]["passes"])
    assert plain.info["repair"]["skipped"] == "repair is off"


def test_tiny_blocks_and_small_strata_still_get_valid_groups():
    rng = np.random.default_rng(8)
    df = pd.DataFrame({"x": rng.normal(size=70), "y": rng.normal(size=70),
                       "s": ["a"] * 60 + ["b"] * 5 + ["c"] * 5})
    # Block size 1 acts as 2k; strata "b" and "c" have k..2k-1 records: one group each.
    res = microaggregate(df, 3, variables=["x", "y"], strata="s", blocks=1, n_jobs=1, rng=0, method="mdav")
    assert_k_partition(res.labels, 70, 3)
    for s in ("a", "b", "c"):
        rows = np.flatnonzero(df["s"] == s)
        other = np.flatnonzero(df["s"] != s)
        assert not set(res.labels[rows]) & set(res.labels[other])  # groups never cross strata
    assert len(set(res.labels[60:65])) == 1 and len(set(res.labels[65:])) == 1
    assert res.info["blocks"]["min_size"] >= 5 and res.info["blocks"]["count"] >= 10
    with pytest.raises(StratumTooSmallError, match="stratum s=c has 2 records"):
        microaggregate(df.iloc[:67], 3, variables=["x", "y"], strata="s", blocks=10, n_jobs=1, method="mdav")


def test_fewer_than_2k_records_with_blocks_make_one_group():
    X = np.random.default_rng(3).normal(size=(5, 2))
    res = microaggregate(X, 3, blocks=1, n_jobs=1, method="mdav")
    assert res.n_groups == 1 and res.settings["blocks"] is None


def test_one_block_is_exactly_the_whole_data_run():
    X = make_synthetic(300, 3, rng=2)
    whole = microaggregate(X, 4, blocks=None, method="mdav")
    one = microaggregate(X, 4, blocks=300, n_jobs=2, method="mdav")
    np.testing.assert_array_equal(whole.labels, one.labels)
    assert one.settings["blocks"] is None and "blocks" not in one.info


def test_auto_threshold_dispatch(monkeypatch):
    X = make_synthetic(400, 3, rng=9)
    default = microaggregate(X, 4, method="mdav")
    assert default.settings["blocks"] is None  # 400 <= LARGE_N: whole data
    assert _blocked.LARGE_N == 50_000
    monkeypatch.setattr(_blocked, "LARGE_N", 300)
    monkeypatch.setattr(_blocked, "DEFAULT_BLOCK_SIZE", 100)
    res = microaggregate(X, 4, n_jobs=1, method="mdav")
    assert res.settings["blocks"]["reason"].startswith("auto: more than 300 records")
    assert res.info["blocks"]["count"] == 4 and res.info["blocks"]["sizes"] == [100] * 4
    assert_k_partition(res.labels, 400, 4)
    off = microaggregate(X, 4, blocks=None, method="mdav")
    np.testing.assert_array_equal(off.labels, default.labels)


def test_blocked_il_no_worse_than_whole_mdav_on_clustered_data():
    # A true property at this size (measured; see benchmarks/results/large.md for 10^4..10^5):
    # the repair's local search gains more than the block borders cost.
    X = make_synthetic(3000, 5, kind="clustered", rng=1)
    whole = microaggregate(X, 3, blocks=None, method="mdav")
    blocked = microaggregate(X, 3, blocks=600, n_jobs=1, rng=0, method="mdav")
    assert blocked.information_loss <= whole.information_loss
    assert blocked.info["repair"]["gain_information_loss"] > 0


def _shuffled_mdav(Z, k, ctx):
    """A randomized method (for the executor tests): random groups of k (the last k..2k-1)."""
    n = Z.shape[0]
    labels = np.empty(n, dtype=np.int64)
    labels[ctx.rng.permutation(n)] = np.minimum(np.arange(n) // k, max(n // k - 1, 0))
    return labels


@pytest.mark.subprocess
def test_same_seed_same_result_in_this_process_and_in_a_process_pool():
    X = make_synthetic(1200, 3, rng=11)
    serial = microaggregate(X, 3, method=_shuffled_mdav, blocks=200, n_jobs=1, rng=7)
    pooled = microaggregate(X, 3, method=_shuffled_mdav, blocks=200, n_jobs=2, rng=7)
    np.testing.assert_array_equal(serial.labels, pooled.labels)
    assert pooled.info["blocks"]["executor"] == "processes" and pooled.info["memory"]["worker_processes"] >= 1
    other = microaggregate(X, 3, method=_shuffled_mdav, blocks=200, n_jobs=1, rng=8)
    assert not np.array_equal(serial.labels, other.labels)  # the seed matters


def test_unpicklable_method_runs_in_this_process():
    X = make_synthetic(400, 2, rng=1)
    res = microaggregate(X, 3, method=lambda Z, k, ctx: _shuffled_mdav(Z, k, ctx), blocks=100, n_jobs=2, rng=0)
    assert_k_partition(res.labels, 400, 3)
    assert res.info["blocks"]["executor"] == "serial" and "pickled" in res.info["blocks"]["serial_reason"]


def test_progress_reports_each_block_and_each_repair_pass():
    events = []
    microaggregate(make_synthetic(500, 2, rng=0), 5, blocks=100, n_jobs=1, progress=events.append, method="mdav")
    per_block = [e for e in events if e.stage == "blocks" and e.iteration is not None]
    assert [e.iteration for e in per_block] == [1, 2, 3, 4, 5]
    assert per_block[-1].extra["blocks"] == "5/5"
    assert any(e.stage.startswith("repair 2/2") and e.information_loss is not None for e in events)


def test_time_limit_keeps_a_valid_partition():
    X = make_synthetic(2000, 3, rng=5)
    res = microaggregate(X, 3, blocks=200, n_jobs=1, time_limit=1e-6, method="mdav")
    assert_k_partition(res.labels, 2000, 3)
    assert res.status == "limit"


@pytest.mark.parametrize("kwargs,error,message", [
    ({"blocks": "big"}, ValueError, "`blocks` must be None, 'auto', a block size (integer) or a dict of options; got 'big'."),
    ({"blocks": 2.5}, TypeError, "`blocks` must be None, 'auto', a block size"),
    ({"blocks": 0}, ValueError, "`blocks` must be an integer >= 1; got 0."),
    ({"blocks": {"sise": 10}}, ValueError, "`blocks` has no option 'sise'"),
    ({"blocks": {"repair": "nope"}}, ValueError, "unknown improvement 'nope'"),
    ({"blocks": {"repair_passes": -1}}, ValueError, "`repair_passes` must be an integer >= 0; got -1."),
    ({"blocks": 10, "n_jobs": -2}, ValueError, "`n_jobs` must be None, -1 or an integer >= 0; got -2."),
    ({"blocks": 10, "client": 3}, TypeError, "`client` must be a dask.distributed Client"),
])
def test_bad_large_data_options(kwargs, error, message):
    with pytest.raises(error) as exc:
        microaggregate(np.random.default_rng(0).normal(size=(40, 2)), 3, **kwargs)
    assert message in str(exc.value)


def test_microaggregate_blocked_is_the_same_path():
    X = make_synthetic(500, 3, rng=3)
    a = microaggregate_blocked(X, 3, block_size=100, n_jobs=1, rng=1, repair_options={"rounds": 3})
    b = microaggregate(X, 3, blocks={"size": 100, "repair_options": {"rounds": 3}}, n_jobs=1, rng=1, method="mdav")
    np.testing.assert_array_equal(a.labels, b.labels)
    assert a.settings["blocks"]["repair_options"] == {"rounds": 3}


# --------------------------------------------------------------------------- Dask

@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed", reason="Dask tests need pysdcmicro[dask]")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


@pytest.mark.subprocess
def test_dask_cluster_gives_the_same_result_as_the_process_pool(dask_client):
    X = make_synthetic(1500, 3, kind="clustered", rng=12)
    pooled = microaggregate(X, 3, blocks=250, n_jobs=2, rng=3, method="mdav")
    on_dask = microaggregate(X, 3, blocks=250, client=dask_client, rng=3, method="mdav")
    np.testing.assert_array_equal(pooled.labels, on_dask.labels)
    assert on_dask.info["blocks"]["executor"] == "dask"
    assert on_dask.information_loss == pooled.information_loss
    by_address = microaggregate(X, 3, blocks=250, client=dask_client.scheduler.address, rng=3, method="mdav")
    np.testing.assert_array_equal(pooled.labels, by_address.labels)


@pytest.mark.subprocess
def test_dask_dataframe_in_dask_dataframe_out(dask_client):
    dd = pytest.importorskip("dask.dataframe")
    X = make_synthetic(800, 3, rng=13)
    df = pd.DataFrame(X, columns=["a", "b", "c"], index=np.arange(1000, 1800))
    df.insert(0, "name", [f"p{i}" for i in range(800)])
    df["const"] = 4
    ddf = dd.from_pandas(df, npartitions=3)
    with pytest.warns(ConstantColumnWarning):
        res = microaggregate(ddf, 3, variables=["a", "b", "c", "const"], blocks=200, rng=0, method="mdav")
    with pytest.warns(ConstantColumnWarning):
        expected = microaggregate(df, 3, variables=["a", "b", "c", "const"], blocks=200, n_jobs=1, rng=0, method="mdav")
    assert isinstance(res.data, dd.DataFrame)
    np.testing.assert_array_equal(res.labels, expected.labels)
    out = res.data.compute()
    assert out["name"].tolist() == df["name"].tolist()  # dask may store text as Arrow strings
    pd.testing.assert_frame_equal(out.drop(columns="name"), expected.data.drop(columns="name"))
    assert res.info["dask_frame"]["partitions"] == 3 and res.info["blocks"]["executor"] == "dask"


@pytest.mark.subprocess
def test_dask_is_optional_for_the_core():
    import subprocess
    import sys

    code = ("import sys; sys.modules['dask'] = None; sys.modules['distributed'] = None; import pysdcmicro, numpy as np; "
            "r = pysdcmicro.microaggregate(np.random.default_rng(0).normal(size=(300, 2)), 5, blocks=100, n_jobs=1); "
            "print(r.info['blocks']['count'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "3"
    code_client = code.replace("n_jobs=1", "client='tcp://127.0.0.1:1'")
    out = subprocess.run([sys.executable, "-c", code_client], capture_output=True, text=True, timeout=120)
    assert "`client` needs the optional dependency dask.distributed" in out.stderr


@pytest.mark.subprocess
def test_a_worker_process_does_not_import_pandas():
    """What a worker imports and runs (its warm-up, a block, a repair window) works with
    pandas blocked: a worker starts without the half second pandas costs to import."""
    import subprocess
    import sys

    code = ("import sys; sys.modules['pandas'] = None\n"
            "import numpy as np\n"
            "from pysdcmicro.large import _executors, _tasks\n"
            "from pysdcmicro.constructive._mdav import _mdav_solver\n"
            "_executors._warm_up()\n"
            "Z = np.random.default_rng(0).normal(size=(60, 3))\n"
            "r = _tasks.solve_block_task(Z, 3, _mdav_solver, {}, [], None, 0, None)\n"
            "w = _tasks.improve_window_task(Z, r['labels'], 3, 'batch', {}, 0, None)\n"
            "print(r['labels'].size, w['after'] <= w['before'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["60", "True"]


# --------------------------------------------------------------------------- command line

def _cli(*args):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "pysdcmicro", *map(str, args)], capture_output=True, text=True,
                          timeout=300)


@pytest.mark.subprocess
def test_cli_parquet_in_and_out_with_blocks(tmp_path):
    pytest.importorskip("pyarrow", reason="Parquet needs pysdcmicro[parquet]")
    import json

    rng = np.random.default_rng(2)
    df = pd.DataFrame({"id": [f"{i:05d}" for i in range(600)], "x": rng.normal(size=600),
                       "y": rng.integers(0, 1000, 600), "group": pd.Categorical(rng.choice(["a", "b"], 600))})
    src, out, rep = tmp_path / "in.parquet", tmp_path / "out.parquet", tmp_path / "r.json"
    df.to_parquet(src, index=False)
    proc = _cli("microaggregate", src, "--k", 4, "--variables", "x,y", "--method", "mdav", "--blocks", 100, "--n-jobs", 1,
                "--output", out, "--report", rep, "--quiet")
    assert proc.returncode == 0, proc.stderr
    masked = pd.read_parquet(out)
    assert masked["id"].tolist() == df["id"].tolist() and masked["group"].tolist() == df["group"].tolist()
    report = json.loads(rep.read_text())
    assert report["blocks"]["count"] == 6 and report["settings"]["blocks"]["block_size"] == 100
    assert report["min_group_size"] >= 4
    res = microaggregate(df, 4, variables=["x", "y"], blocks=100, n_jobs=1, method="mdav")
    np.testing.assert_allclose(masked[["x", "y"]].to_numpy(), res.data[["x", "y"]].to_numpy(), rtol=1e-15)


@pytest.mark.subprocess
def test_cli_large_csv_reader_finds_numeric_columns_past_the_first_rows(tmp_path):
    n = 1500
    rng = np.random.default_rng(4)
    x = rng.normal(size=n).round(3)
    late_text = [f"{v:.2f}" for v in rng.normal(size=n)]
    late_text[1200] = "n.a."  # text after the rows read first: the column is not numeric
    late_number = [""] * 1100 + [str(v) for v in rng.integers(0, 9, n - 1100)]  # missing first, numbers later
    lines = ["x,late_text,late_number,code"] + [f"{a},{b},{c},{i:04d}" for i, (a, b, c) in
                                                enumerate(zip(x, late_text, late_number))]
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    src.write_text("\n".join(lines) + "\n")
    from pysdcmicro.cli import read_table

    frame, chosen = read_table(str(src))
    assert chosen == ["x", "late_number", "code"]
    assert frame["late_text"].tolist() == late_text
    proc = _cli("microaggregate", src, "--k", 3, "--variables", "x", "--output", out, "--quiet")
    assert proc.returncode == 0, proc.stderr
    masked = pd.read_csv(out, dtype=str, keep_default_na=False)
    original = pd.read_csv(src, dtype=str, keep_default_na=False)
    for col in ("late_text", "late_number", "code"):
        assert masked[col].tolist() == original[col].tolist()  # byte for byte
    # A missing value far down a chosen column is still found and named.
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n" + "".join(f"{i},{i % 7}\n" for i in range(1400)) + "5, NA \n")
    proc = _cli("microaggregate", bad, "--k", 3, "--missing", "error", "--output", tmp_path / "o.csv")
    assert proc.returncode == 2 and "column 'b' has a missing value (' NA ') at row 1402 of the file" in proc.stderr


@pytest.mark.subprocess
def test_cli_bad_blocks_option(tmp_path):
    src = tmp_path / "in.csv"
    src.write_text("a,b\n1,2\n3,4\n5,6\n7,8\n")
    proc = _cli("microaggregate", src, "--k", 2, "--blocks", "many")
    assert proc.returncode == 2
    assert proc.stderr.strip() == "pysdcmicro: error: --blocks must be auto, none or a block size (integer); got 'many'."


# --------------------------------------------------------------------------- Ctrl-C

def test_interrupt_in_the_block_phase_keeps_solved_blocks_and_splits_the_rest():
    X = make_synthetic(3000, 3, rng=2)
    seen = []

    def progress(event):
        if event.stage == "blocks" and event.iteration:
            seen.append(event.iteration)
            if len(seen) == 3:
                raise KeyboardInterrupt

    res = microaggregate(X, 4, blocks=300, n_jobs=1, rng=0, progress=progress)
    assert_k_partition(res.labels, 3000, 4)
    assert res.status == "limit"
    assert "interrupted (Ctrl-C) during the block phase" in res.message
    assert res.info["repair"]["skipped"] == "interrupted (Ctrl-C)"


def test_interrupt_while_the_blocks_are_split_does_not_wait_for_the_split(monkeypatch):
    """Ctrl-C while the split thread is still cutting blocks (3-4 s at 10^6): the blocks cut
    so far are kept, the records not yet in a block get a quick split at once."""
    import threading

    real = _blocked.split_blocks
    hold, two_cut = threading.Event(), threading.Event()

    def slow_split(Z, k, block_size, roots, emit, threads=None, stopped=None):
        def slow_emit(i, rows):
            if i == 2:
                two_cut.set()
                hold.wait(30)  # the rest of the split "takes long"
            emit(i, rows)

        real(Z, k, block_size, roots, slow_emit, threads=1, stopped=stopped)

    monkeypatch.setattr(_blocked, "split_blocks", slow_split)
    X = make_synthetic(3000, 3, rng=2)

    def progress(event):
        if event.stage == "blocks" and event.iteration:
            two_cut.wait(30)  # the split has cut its first blocks, however loaded the machine
            raise KeyboardInterrupt

    try:
        res = microaggregate(X, 4, blocks=300, n_jobs=1, rng=0, progress=progress)
    finally:
        hold.set()
    assert_k_partition(res.labels, 3000, 4)
    assert res.status == "limit"
    assert "records not yet split into blocks by a quick split" in res.message
    assert res.info["blocks"]["statuses"]["interrupted"] >= 2


def test_quick_labels_is_a_k_partition():
    rng = np.random.default_rng(0)
    for n in (4, 7, 8, 9, 23, 100):
        lab = _blocked.quick_labels(rng.normal(size=(n, 3)), 4)
        assert_k_partition(lab, n, 4)


_CTRL_C_SCRIPT = r"""
import sys, time
import numpy as np
from pysdcmicro import microaggregate
from pysdcmicro.datasets import make_synthetic

def progress(event):
    if event.stage == "blocks" and event.iteration == 1:
        print("FIRST", flush=True)

if __name__ == "__main__":
    X = make_synthetic(int(sys.argv[1]), 5, rng=0)
    res = microaggregate(X, 5, blocks=int(sys.argv[2]), n_jobs=2, rng=0, progress=progress)
    sizes = np.bincount(res.labels)
    print("RESULT", res.status, int(sizes.min()), time.monotonic(), flush=True)
"""


@pytest.mark.subprocess
@pytest.mark.slow
def test_ctrl_c_with_worker_processes_returns_fast_without_worker_tracebacks(tmp_path):
    """SIGINT to the whole process group (what a terminal's Ctrl-C does): the run returns
    its partition with status "limit" within a few seconds, and no worker prints a traceback."""
    import os
    import signal
    import subprocess
    import sys
    import time

    script = tmp_path / "run.py"
    script.write_text(_CTRL_C_SCRIPT)
    proc = subprocess.Popen([sys.executable, str(script), "60000", "4000"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("FIRST"), (line, proc.stderr.read())
        sent = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        elapsed = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert "Traceback" not in err, err
    result = [ln for ln in out.splitlines() if ln.startswith("RESULT")]
    assert result, (out, err)
    _, status, min_size, _ = result[0].split()
    assert status == "limit" and int(min_size) >= 5
    assert elapsed < 15, elapsed  # target 5 s; generous for a loaded CI machine


_PLAIN_SCRIPT = """\
import numpy as np
from pysdcmicro import microaggregate
print("TOP LEVEL", flush=True)
{extra}
res = microaggregate(np.random.default_rng(0).normal(size=(900, 3)), 3, method={method}, blocks=300, n_jobs=2, rng=0)
print("RESULT", res.status, res.info["blocks"].get("executor"), res.info["blocks"]["count"], flush=True)
"""

_SCRIPT_METHOD = """\
def mine(Z, k, ctx):
    return np.minimum(np.argsort(np.argsort(Z[:, 0], kind="stable")) // k, len(Z) // k - 1)
"""


@pytest.mark.subprocess
@pytest.mark.slow
@pytest.mark.parametrize("own_method", [False, True])
def test_a_script_without_a_main_guard_runs_once_without_tracebacks(tmp_path, own_method):
    """Worker processes never import the calling script, so a script without ``if __name__ ==
    "__main__":`` runs its top level once and prints no traceback. A method defined in that
    script cannot reach the workers without running it again: the blocks then run in this
    process, with one warning."""
    import subprocess
    import sys

    script = tmp_path / "plain.py"
    script.write_text(_PLAIN_SCRIPT.format(extra=_SCRIPT_METHOD if own_method else "",
                                           method="mine" if own_method else repr("mdav")))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr, out.stderr
    assert out.stdout.count("TOP LEVEL") == 1
    assert [line for line in out.stdout.splitlines() if line.startswith("RESULT done processes")], out.stdout
    warned = [line for line in out.stderr.splitlines() if "RuntimeWarning" in line]
    if own_method:
        assert len(warned) == 1 and "running them in this process instead" in warned[0]
    else:
        assert not out.stderr.strip(), out.stderr


def test_interrupt_in_the_repair_keeps_the_partition_so_far():
    X = make_synthetic(3000, 3, rng=3)

    def progress(event):
        if event.stage.startswith("repair") and event.iteration:
            raise KeyboardInterrupt

    res = microaggregate(X, 4, blocks=300, n_jobs=1, rng=0, progress=progress)
    assert_k_partition(res.labels, 3000, 4)
    assert res.status == "limit"
    assert "interrupted (Ctrl-C) during border repair" in res.message


# --------------------------------------------------------------------------- same seed, same answer on every path

def _renumbered(labels):
    """Labels renumbered by first appearance (a partition, whatever its group numbers)."""
    _, first, inv = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first)] = np.arange(first.size)
    return rank[inv.reshape(-1)]


@pytest.mark.parametrize("seed,n,d,k", [(0, 150, 3, 3), (1, 120, 6, 4), (2, 90, 1, 2)])
def test_plain_python_sweeps_equal_the_compiled_sweeps(seed, n, d, k):
    """Without numba the border repair runs the same sweeps as plain Python: the same
    partition bit for bit (an MDAV start, so dissolving, moves and swaps all happen)."""
    from pysdcmicro.constructive._mdav import mdav_labels
    from pysdcmicro.large import _local

    if _local._kernels() is None:
        pytest.skip("numba not installed: nothing compiled to compare with")
    Z = zscore(make_synthetic(n, d, kind="clustered" if seed % 2 else "uniform", rng=seed))
    start = mdav_labels(Z, k)
    compiled = _local._compiled_search(_local._kernels(), Z, start, k, Context(0), 6, 8, 2 * k - 1, 0.0)
    plain = _local._compiled_search(_local._plain_kernels(), Z, start, k, Context(0), 6, 8, 2 * k - 1, 0.0)
    assert compiled.info["moves"] + compiled.info["swaps"] > 0
    assert compiled.info == plain.info
    np.testing.assert_array_equal(compiled.labels, plain.labels)


def test_without_numba_the_blocked_path_gives_the_same_partition(monkeypatch):
    """numba absent (both dispatches report it missing): MDAV's numpy rounds and the plain
    sweeps give the partition and the released values of the compiled run."""
    from pysdcmicro.constructive import _mdav
    from pysdcmicro.large import _local

    X = make_synthetic(400, 3, kind="clustered", rng=21)
    with_numba = microaggregate(X, 4, method="mdav", blocks=100, n_jobs=1, rng=5)
    monkeypatch.setattr(_mdav, "_NB", False)
    monkeypatch.setattr(_local, "_NB", False)
    assert _mdav._kernels() is None and _local._kernels() is None
    without = microaggregate(X, 4, method="mdav", blocks=100, n_jobs=1, rng=5)
    np.testing.assert_array_equal(_renumbered(with_numba.labels), _renumbered(without.labels))
    np.testing.assert_array_equal(with_numba.data, without.data)


def test_kernel_dispatch_is_thread_safe(monkeypatch):
    """Threads asking for the kernels while one imports them all get the kernels (a thread
    used to see 'unavailable' mid-import and run another search: on a Dask cluster of
    threads the first blocks then differed from the 1-process run)."""
    import sys
    import threading

    from pysdcmicro.constructive import _mdav
    from pysdcmicro.large import _local

    for mod, name in ((_local, "pysdcmicro.large._local_numba"), (_mdav, "pysdcmicro.constructive._mdav_numba")):
        want = mod._kernels()
        monkeypatch.setattr(mod, "_NB", None)
        monkeypatch.delitem(sys.modules, name, raising=False)
        barrier = threading.Barrier(6)
        got = []

        def ask(mod=mod, barrier=barrier, got=got):
            barrier.wait()
            got.append(mod._kernels())

        threads = [threading.Thread(target=ask) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(got) == 6 and all(g is got[0] for g in got)
        assert (got[0] is None) == (want is None)


@pytest.mark.subprocess
def test_same_partition_in_this_process_and_in_worker_processes():
    """The default improver (MDAV blocks + border repair), 1 process against 2 spawned
    worker processes (whose numba caches and imports are their own)."""
    X = make_synthetic(2400, 4, kind="clustered", rng=17)
    one = microaggregate(X, 4, method="mdav", blocks=400, n_jobs=1, rng=2)
    two = microaggregate(X, 4, method="mdav", blocks=400, n_jobs=2, rng=2)
    assert two.info["blocks"]["executor"] == "processes"
    np.testing.assert_array_equal(_renumbered(one.labels), _renumbered(two.labels))
    np.testing.assert_array_equal(one.data, two.data)


# --------------------------------------------------------------------------- neighbour groups, settled regions

@pytest.mark.parametrize("g,d,L,rounded", [(300, 10, 8, False), (200, 3, 8, True), (40, 1, 5, True), (9, 2, 8, False)])
def test_neighbour_groups_are_the_exact_nearest_with_ties_to_the_lower_group(g, d, L, rounded):
    """The compiled brute force and its numpy twin give the same lists; each row holds the
    L nearest other rows by exact distance (checked against a sorted full distance matrix,
    ties to the lower row number), never the row itself."""
    from pysdcmicro.large import _local

    rng = np.random.default_rng(g + d)
    C = rng.random((g, d))
    if rounded:  # many exact ties
        C = np.round(C, 1)
    got = _local._neighbour_groups(C, L)
    np.testing.assert_array_equal(got, _local._nearest_numpy(C, L))
    D = ((C[:, None, :] - C[None, :, :]) ** 2).sum(axis=2)
    np.fill_diagonal(D, np.inf)
    want = np.argsort(D, axis=1, kind="stable")[:, :L]
    np.testing.assert_array_equal(np.take_along_axis(D, got, 1), np.take_along_axis(D, want, 1))
    if not rounded:
        np.testing.assert_array_equal(got, want)
    assert not (got == np.arange(g)[:, None]).any()


def test_regions_start_the_search_at_their_borders():
    """Groups whose records and neighbour groups all come from one region start settled:
    with one region everywhere nothing is evaluated and nothing changes; with two regions
    (two halves solved apart) the search runs from their border, never raises the SSE and
    evaluates fewer records than a search with no regions at all."""
    from pysdcmicro.constructive._mdav import mdav_labels

    Z = zscore(make_synthetic(1200, 4, kind="uniform", rng=3))
    half = np.argsort(Z[:, 0], kind="stable")[:600]
    region = np.zeros(1200, dtype=np.int64)
    region[half] = 1
    start = np.empty(1200, dtype=np.int64)
    for r in (0, 1):  # each half solved apart: MDAV then the search, as in a block
        rows = np.flatnonzero(region == r)
        lab = batch_local_search(Z[rows], mdav_labels(Z[rows], 4), 4, Context(0), tol=0.0, rounds=50).labels
        start[rows] = lab + (0 if r == 0 else 10_000)
    start = np.unique(start, return_inverse=True)[1].reshape(-1)
    one = batch_local_search(Z, start, 4, Context(0), regions=np.zeros(1200, dtype=np.int64))
    assert one.info["evaluations"] == 0
    np.testing.assert_array_equal(one.labels, start)
    two = batch_local_search(Z, start, 4, Context(0), regions=region)
    full = batch_local_search(Z, start, 4, Context(0))
    assert_k_partition(two.labels, 1200, 4)
    assert 0 < two.info["evaluations"] < full.info["evaluations"]
    assert sse(Z, two.labels) < sse(Z, start)
    with pytest.raises(ValueError, match="`regions` must hold one integer >= 0 per record"):
        batch_local_search(Z, start, 4, Context(0), regions=np.zeros(5, dtype=np.int64))


def test_repair_scope_is_checked_and_both_scopes_give_valid_partitions():
    X = make_synthetic(3000, 3, kind="uniform", rng=4)
    with pytest.raises(ValueError, match="`repair_scope` must be 'borders' or 'all'; got 'some'"):
        microaggregate(X, 4, method="mdav", blocks={"size": 500, "repair_scope": "some"}, n_jobs=1)
    for scope in ("borders", "all"):
        res = microaggregate(X, 4, method="mdav", blocks={"size": 500, "repair_scope": scope}, n_jobs=1, rng=0)
        assert_k_partition(res.labels, 3000, 4)
        assert res.info["repair"]["sse_after"] <= res.info["repair"]["sse_before"]


@pytest.mark.subprocess
def test_workers_start_before_the_data_are_prepared_and_give_the_same_result(monkeypatch):
    """Without a time limit the blocked path's workers start before the standardization
    (their start overlaps it); the partition is the one of the serial run."""
    from pysdcmicro import _pipeline

    order = []
    real_prepare, real_early = _pipeline.prepare, _pipeline.early_workers

    def prepare(job, **kw):
        order.append("prepare")
        return real_prepare(job, **kw)

    def early(job):
        ex = real_early(job)
        order.append(None if ex is None else ex.name)
        return ex

    monkeypatch.setattr(_pipeline, "prepare", prepare)
    monkeypatch.setattr(_pipeline, "early_workers", early)
    X = make_synthetic(1200, 3, rng=11)
    pooled = microaggregate(X, 3, method="mdav", blocks=200, n_jobs=2, rng=7)
    assert order == ["processes", "prepare"]
    assert pooled.info["blocks"]["executor"] == "processes" and pooled.info["memory"]["worker_processes"] >= 1
    serial = microaggregate(X, 3, method="mdav", blocks=200, n_jobs=1, rng=7)
    assert order[-2:] == [None, "prepare"]
    np.testing.assert_array_equal(serial.labels, pooled.labels)
    order.clear()
    microaggregate(X, 3, method="mdav", blocks=200, n_jobs=2, rng=7, time_limit=30)
    assert order == [None, "prepare"]  # under a time limit the blocks wait for ready workers


@pytest.mark.subprocess
@pytest.mark.parametrize("cancel", [False, True])
def test_closing_the_workers_ends_the_pool_thread(cancel):
    # CPython's exit hook for process pools writes to a pipe that the pool's thread closes:
    # a script that ends while that thread runs can print an OSError traceback at exit
    from pysdcmicro.large._executors import ProcessExecutor

    executor = ProcessExecutor(2)
    executor.start(ready=True)
    thread = executor._pool._executor_manager_thread
    procs = list(executor._pool._processes.values())
    assert thread.is_alive() and len(procs) == 2
    executor.close(cancel=cancel)
    assert not thread.is_alive()
    assert not any(proc.is_alive() for proc in procs)


@pytest.mark.subprocess
def test_workers_started_early_are_stopped_when_the_preparation_fails():
    import multiprocessing

    X = make_synthetic(1200, 3, rng=11)
    X[:, :] = 1.0  # every column constant: refused while the data are prepared
    before = set(multiprocessing.active_children())
    with pytest.raises(pysdcmicro.InvalidInputError, match="every chosen variable is constant"):
        microaggregate(X, 3, method="mdav", blocks=200, n_jobs=2, rng=7)
    # The pool's own thread may be reaping a worker at the same moment (two waitpid calls on
    # one process: the loser sees it as running until the winner records the exit), so the
    # children are polled for up to 10 s; a worker left running fails the test.
    end = time.monotonic() + 10
    while set(multiprocessing.active_children()) - before and time.monotonic() < end:
        time.sleep(0.05)
    assert not set(multiprocessing.active_children()) - before


def test_the_blocked_path_says_what_it_did():
    X = make_synthetic(3000, 3, kind="clustered", rng=2)
    res = microaggregate(X, 3, method="mdav", blocks=1000, n_jobs=1, rng=0)
    assert res.message.startswith("blocked (requested): 4 blocks of 750 records, mdav in each, in this process; "
                                  "border repair: 2 passes over ")
    assert "IL " in res.message and res.message.endswith("no lower bound (blocks restrict the groups)")
    off = microaggregate(X, 3, method="mdav", blocks={"size": 1000, "repair": "none"}, n_jobs=1, rng=0)
    assert "no border repair (repair is off)" in off.message
