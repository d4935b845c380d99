"""Orderings (MDAV, NPN, PCA, TSP paths, Compress-TSP) and the methods mhm, tsp-mhm,
compress-tsp-mhm.

Exact references: brute force over all orders of a few points (shortest path), brute force
over all k-partitions (tests/_helpers.py) for 1-D data, where grouping along the sorted
order is optimal (Hansen and Mukherjee 2003).
"""

from __future__ import annotations

import itertools
import math
from collections import deque

import numpy as np
import pytest

import pysdcmicro
from pysdcmicro import InvalidInputError, microaggregate
from pysdcmicro._context import Context
from pysdcmicro.constructive import mdav_labels
from pysdcmicro.univariate import (
    compressed_tsp_path,
    mdav_order,
    npn_order,
    optimal_runs,
    path_length,
    pca_order,
    tsp_path,
)
from pysdcmicro.univariate._tsp import _Search, exact_order, greedy_edge_order, improve_order, knn

from .._helpers import assert_k_partition, brute_force_optimum, naive_sse, zscore


def _brute_path(Z, closed=False):
    """Shortest open path / closed tour by plain enumeration (independent of exact_order)."""
    n = len(Z)
    best = math.inf
    for perm in itertools.permutations(range(n)):
        length = sum(math.dist(Z[perm[i]], Z[perm[i + 1]]) for i in range(n - 1))
        if closed:
            length += math.dist(Z[perm[-1]], Z[perm[0]])
        best = min(best, length)
    return best


def _brute_path_np(Z, closed=False):
    """The same enumeration, vectorised (for n = 8: 40320 orders)."""
    n = len(Z)
    D = np.sqrt(((Z[:, None] - Z[None]) ** 2).sum(-1))
    perms = np.array(list(itertools.permutations(range(n))))
    lengths = D[perms[:, :-1], perms[:, 1:]].sum(1)
    if closed:
        lengths += D[perms[:, -1], perms[:, 0]]
    return float(lengths.min())


def _is_perm(order, n):
    order = np.asarray(order)
    return order.shape == (n,) and sorted(order.tolist()) == list(range(n))


# --- path search ---------------------------------------------------------------------------

@pytest.mark.parametrize("closed", [False, True])
@pytest.mark.parametrize("n", [2, 3, 5, 7])
def test_exact_order_is_shortest(n, closed):
    Z = np.random.default_rng(n).normal(size=(n, 3))
    order = exact_order(Z, closed=closed)
    assert _is_perm(order, n)
    assert path_length(Z, order, closed=closed) == pytest.approx(_brute_path(Z, closed), abs=1e-12)


@pytest.mark.parametrize("closed", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_iterated_local_search_finds_the_optimum_of_small_instances(seed, closed):
    rng = np.random.default_rng(100 + seed)
    Z = rng.normal(size=(8, 2)) * [3.0, 1.0]
    start = rng.permutation(8)
    order, info = improve_order(Z, start, closed=closed, kicks=300, rng=seed, neighbours=7)
    assert _is_perm(order, 8)
    assert info["kicks_done"] == 300 and not info["stopped"]
    assert path_length(Z, order, closed=closed) == pytest.approx(_brute_path_np(Z, closed), abs=1e-9)


@pytest.mark.parametrize("closed", [False, True])
def test_local_search_length_bookkeeping_and_never_longer(closed):
    """The incrementally tracked length equals the recomputed one after every kind of move,
    and the result is never longer than the start."""
    rng = np.random.default_rng(7)
    Z = rng.normal(size=(120, 4))
    start = rng.permutation(120)
    nbrs = knn(Z, 8)
    S = _Search(Z, nbrs, start, closed)
    queue, inq = deque(range(S.m)), [True] * S.m
    S.run_queue(queue, inq)
    assert S.length == pytest.approx(S.exact_length(), rel=1e-10)
    for t in range(200):  # kicks without acceptance test: tours must stay consistent
        S.segment_swap(int(rng.integers(0, S.m - 12)), int(rng.integers(1, 6)), int(rng.integers(1, 6)))
        assert S.length == pytest.approx(S.exact_length(), rel=1e-10)
        queue.extend(v for v in range(S.m) if not inq[v])
        inq = [True] * S.m
        S.run_queue(queue, inq)
        assert S.length == pytest.approx(S.exact_length(), rel=1e-10)
        assert all(S.tour[S.pos[v]] == v for v in range(S.m))
    order = S.order()
    assert _is_perm(order, 120)
    assert path_length(Z, order, closed=closed) <= path_length(Z, start, closed=closed)


def test_knn_matches_full_sort():
    Z = np.random.default_rng(3).normal(size=(70, 3))
    nb = knn(Z, 5, block=16)
    D = np.sqrt(((Z[:, None] - Z[None]) ** 2).sum(-1))
    np.fill_diagonal(D, np.inf)
    for i in range(70):
        np.testing.assert_allclose(D[i, nb[i]], np.sort(D[i])[:5], rtol=1e-9)


def test_greedy_edge_is_a_permutation_even_with_duplicates():
    Z = np.repeat(np.random.default_rng(2).normal(size=(15, 2)), 4, axis=0)
    order = greedy_edge_order(Z, knn(Z, 5))
    assert _is_perm(order, 60)


@pytest.mark.parametrize("solver", ["ils", "ortools"])
@pytest.mark.parametrize("closed", [False, True])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 6, 9, 40])
def test_tsp_path_is_a_permutation(n, closed, solver):
    Z = np.random.default_rng(n).normal(size=(n, 3))
    order, info = tsp_path(Z, closed=closed, solver=solver, iterations=20, rng=0, return_info=True)
    assert _is_perm(order, n)
    assert info["path_length"] == pytest.approx(path_length(Z, order))


def test_tsp_path_on_a_line_is_the_sorted_order():
    x = np.random.default_rng(0).permutation(60).astype(float)
    Z = np.column_stack([x, np.zeros(60)])
    for closed in (False,):
        order = tsp_path(Z, closed=closed, rng=1)
        steps = np.diff(x[order])
        assert np.all(steps == 1) or np.all(steps == -1)


def test_tsp_path_is_deterministic_for_a_seed():
    Z = np.random.default_rng(5).normal(size=(80, 3))
    a = tsp_path(Z, rng=3, iterations=100)
    b = tsp_path(Z, rng=3, iterations=100)
    np.testing.assert_array_equal(a, b)


def test_tsp_path_expired_deadline_still_returns_a_permutation():
    Z = np.random.default_rng(5).normal(size=(50, 3))
    ctx = Context(0, time_limit=1e-9)
    order, info = tsp_path(Z, ctx, return_info=True)
    assert _is_perm(order, 50)
    assert info["stopped"] is True


# --- OR-Tools routing adapter ----------------------------------------------------------------

@pytest.mark.parametrize("closed", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_ortools_routing_path(closed, sparse):
    from pysdcmicro._ortools import routing_path

    rng = np.random.default_rng(11)
    Z = rng.normal(size=(30, 3))
    nbrs = knn(Z, 6)
    start = greedy_edge_order(Z, nbrs)
    order, info = routing_path(Z, closed=closed, solution_limit=30, nbrs=nbrs,
                               initial=start if sparse else None, max_matrix_nodes=10 if sparse else None)
    assert _is_perm(order, 30)
    assert info["mode"] == ("sparse-knn-6" if sparse else "matrix")
    assert info["scale"] > 0
    # The integer objective is the scaled length, each arc rounded by at most 1/2.
    length = path_length(Z, order, closed=closed)
    assert abs(info["objective"] - length) <= 31 * 0.5 / info["scale"] + 1e-9
    if sparse:
        assert length <= path_length(Z, start, closed=closed) + 31 / info["scale"]


def test_ortools_settings_are_reported():
    X = np.random.default_rng(1).normal(size=(30, 3))
    res = microaggregate(X, 3, method="tsp-mhm", solver="ortools", iterations=10, rng=0)
    ort = res.info["tsp"]["ortools"]
    assert ort["scale"] > 0 and ort["solution_limit"] == 10
    assert ort["first_solution"] == "PATH_CHEAPEST_ARC" and ort["metaheuristic"] == "GUIDED_LOCAL_SEARCH"
    assert "ortools" in res.to_json()


# --- other orderings -----------------------------------------------------------------------

@pytest.mark.parametrize("f", [npn_order, pca_order, lambda Z: mdav_order(Z, k=3)])
def test_orderings_are_permutations(f):
    Z = zscore(np.random.default_rng(4).normal(size=(37, 3)))
    assert _is_perm(f(Z), 37)


def test_mdav_order_lists_mdav_groups_in_turn():
    Z = zscore(np.random.default_rng(8).normal(size=(31, 2)))
    order = mdav_order(Z, k=4)
    labels = mdav_labels(Z, 4)
    runs = labels[order]
    assert np.all(np.diff(runs) >= 0)  # group 0 first, then group 1, ...


def test_npn_goes_to_the_nearest_unvisited_record():
    Z = np.random.default_rng(9).normal(size=(25, 2))
    order = npn_order(Z)
    assert order[0] == int(np.argmax(((Z - Z.mean(0)) ** 2).sum(1)))
    for t in range(1, 25):
        rest = order[t:]
        dist = ((Z[rest] - Z[order[t - 1]]) ** 2).sum(1)
        assert dist[0] == dist.min()


def test_pca_order_sorts_along_a_line():
    t = np.random.default_rng(1).permutation(20).astype(float)
    Z = np.column_stack([t, 2 * t + 1])
    steps = np.diff(t[pca_order(Z)])
    assert np.all(steps == 1) or np.all(steps == -1)


# --- compression ---------------------------------------------------------------------------

@pytest.mark.parametrize("within", ["centroid", "index", "path"])
@pytest.mark.parametrize("c", [2, 3, 5])
def test_compressed_path_keeps_each_group_together(c, within):
    Z = zscore(np.random.default_rng(c).normal(size=(53, 3)))
    order, info = compressed_tsp_path(Z, compression=c, within=within, rng=0, return_info=True)
    assert _is_perm(order, 53)
    labels = mdav_labels(Z, c)
    runs = labels[order]
    changes = np.count_nonzero(np.diff(runs))
    assert changes == labels.max()  # each group is one contiguous run
    assert info["n_centroids"] == labels.max() + 1
    for g in range(labels.max() + 1):
        members = order[runs == g]
        if within == "index":
            assert np.all(np.diff(members) > 0)
        elif within == "centroid":
            dist = ((Z[members] - Z.mean(0)) ** 2).sum(1)
            assert np.all(np.diff(dist) >= 0)


def test_compression_one_is_the_plain_path():
    Z = zscore(np.random.default_rng(6).normal(size=(40, 3)))
    np.testing.assert_array_equal(compressed_tsp_path(Z, compression=1, rng=4, iterations=50),
                                  tsp_path(Z, rng=4, iterations=50))


# --- methods ---------------------------------------------------------------------------------

@pytest.mark.parametrize("method,options", [
    ("tsp-mhm", {}),
    ("mhm", {"ordering": "pca"}),
    ("mhm", {"ordering": "tsp"}),
    ("compress-tsp-mhm", {"compression": 1}),
])
@pytest.mark.parametrize("k", [2, 3, 4])
def test_one_dimensional_data_get_the_optimal_partition(method, options, k):
    """On 1-D data the TSP path / first component is the sorted order, along which optimal
    univariate grouping is optimal over all k-partitions."""
    rng = np.random.default_rng(10 + k)
    X = rng.exponential(size=(11, 1)) * 10
    res = microaggregate(X, k, method=method, rng=0, **options)
    best, _ = brute_force_optimum(zscore(X), k)
    assert res.sse == pytest.approx(best, abs=1e-9)


def test_identity_ordering_on_sorted_1d_data_is_optimal():
    x = np.sort(np.random.default_rng(3).normal(size=12))[:, None]
    res = microaggregate(x, 3, method="mhm", ordering=lambda Z, ctx: np.arange(Z.shape[0]))
    assert res.sse == pytest.approx(brute_force_optimum(zscore(x), 3)[0], abs=1e-12)


def test_callable_ordering_is_used():
    X = np.random.default_rng(2).normal(size=(30, 3))
    rev = lambda Z, ctx: np.arange(Z.shape[0])[::-1]  # noqa: E731
    res = microaggregate(X, 3, method="mhm", ordering=rev)
    labels, cost = optimal_runs(zscore(X), np.arange(30)[::-1], 3)
    assert res.sse == pytest.approx(cost)
    assert res.info["ordering"] == "<lambda>"


@pytest.mark.parametrize("bad", [lambda Z, ctx: np.zeros(Z.shape[0], dtype=int),
                                 lambda Z, ctx: np.arange(Z.shape[0] - 1),
                                 lambda Z, ctx: np.arange(Z.shape[0]) * 1.0])
def test_callable_ordering_must_return_a_permutation(bad):
    with pytest.raises(InvalidInputError, match="`ordering` must return a permutation"):
        microaggregate(np.random.default_rng(0).normal(size=(12, 2)), 3, method="mhm", ordering=bad)


@pytest.mark.parametrize("method,options,match", [
    ("mhm", {"ordering": "tps"}, "`ordering` must be one of .* Did you mean 'tsp'"),
    ("tsp-mhm", {"solver": "lkh"}, "`solver` must be one of"),
    ("tsp-mhm", {"iterations": -1}, "`iterations` must be an integer >= 0; got -1"),
    ("compress-tsp-mhm", {"compression": 0}, "`compression` must be an integer >= 1; got 0"),
    ("compress-tsp-mhm", {"within": "random"}, "`within` must be one of"),
])
def test_bad_options(method, options, match):
    with pytest.raises(InvalidInputError, match=match):
        microaggregate(np.random.default_rng(0).normal(size=(12, 2)), 3, method=method, **options)


@pytest.mark.parametrize("ordering", ["mdav", "npn", "pca", "tsp"])
def test_circular_grouping_is_never_worse_along_the_same_order(ordering):
    X = np.random.default_rng(12).normal(size=(45, 3))
    lin = microaggregate(X, 4, method="mhm", ordering=ordering, rng=0, iterations=0)
    circ = microaggregate(X, 4, method="mhm", ordering=ordering, rng=0, iterations=0, circular=True)
    if ordering != "tsp":  # a TSP ordering shortens the closed tour instead: another order
        assert circ.sse <= lin.sse + 1e-9
    assert_k_partition(circ.labels, 45, 4, max_size=7)
    assert circ.info["circular"] is True


def test_report_carries_path_length():
    X = np.random.default_rng(3).normal(size=(40, 3))
    for method in ("tsp-mhm", "compress-tsp-mhm", "mhm"):
        res = microaggregate(X, 3, method=method, rng=0, iterations=30)
        Z = zscore(X)
        order = None
        report = res.to_dict()
        assert report["path_length"] > 0
        assert res.sse == pytest.approx(naive_sse(Z, res.labels))
        del order


def test_time_limit_returns_incumbent_with_limit_status():
    X = np.random.default_rng(3).normal(size=(300, 4))
    res = microaggregate(X, 3, method="tsp-mhm", rng=0, time_limit=1e-6)
    assert res.status == "limit"
    assert_k_partition(res.labels, 300, 3)


def test_public_functions_are_exported():
    for name in ("mhm", "tsp_mhm", "compress_tsp_mhm"):
        assert name in pysdcmicro.__all__
    assert {"mhm", "tsp-mhm", "compress-tsp-mhm"} <= set(pysdcmicro.methods())


@pytest.mark.slow
def test_tarragona_path_within_one_percent_of_concorde(casc):
    """Maya-Lopez et al. 2022, Table 3: Concorde's path over Tarragona has length 772.62."""
    from pysdcmicro import standardize

    Z = standardize(casc("tarragona").to_numpy(float))[0]
    order = tsp_path(Z, rng=0)
    assert path_length(Z, order) <= 1.01 * 772.62


def test_deadline_during_candidate_lists_falls_back_to_a_valid_order():
    Z = np.random.default_rng(1).normal(size=(1100, 3))  # three blocks of the k-NN search
    ctx = Context(0)
    answers = iter([False])  # not expired at entry, expired at the first block boundary
    ctx.expired = lambda: next(answers, True)
    order, info = tsp_path(Z, ctx, return_info=True)
    assert _is_perm(order, 1100)
    assert info["stopped"] is True and info["fallback"].startswith("pca")


hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra.numpy import arrays  # noqa: E402


@given(Z=arrays(np.float64, st.tuples(st.integers(4, 30), st.integers(1, 3)),
                elements=st.floats(-100, 100, allow_nan=False, width=32)),
       closed=st.booleans(), seed=st.integers(0, 2**16))
def test_property_search_returns_a_permutation_no_longer_than_its_start(Z, closed, seed):
    """Any points (duplicates, collinear, tiny n): a permutation, never longer than the start,
    and grouping along it is a valid k-partition with the SSE the prefix sums claim."""
    n = Z.shape[0]
    start = np.random.default_rng(seed).permutation(n)
    order, _ = improve_order(Z, start, closed=closed, kicks=30, rng=seed, neighbours=5)
    assert _is_perm(order, n)
    tol = 1e-9 * (1 + path_length(Z, start, closed=closed))
    assert path_length(Z, order, closed=closed) <= path_length(Z, start, closed=closed) + tol
    labels, cost = optimal_runs(Z, order, 2, circular=closed)
    assert_k_partition(labels, n, 2, max_size=3 if n >= 4 else n)
    assert cost == pytest.approx(naive_sse(Z, labels), rel=1e-7, abs=1e-6)
