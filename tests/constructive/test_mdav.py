"""MDAV against sdcMicro 5.8.1 and against brute force."""

from __future__ import annotations

import numpy as np
import pytest

from pysdcmicro import mdav, microaggregate
from pysdcmicro.constructive import mdav_labels

from .._helpers import assert_k_partition, brute_force_optimum, naive_sse, zscore

# Source: ../shared/data/README.md, "Reference values measured with sdcMicro 5.8.1
# (method "mdav")": sdcMicro 5.8.1 microaggregation(obj, method = "mdav", aggr = k) on the
# CASC sets (EIA with its 11 published columns), IL = 100*SSE/SST on standardized columns.
SDCMICRO_581_MDAV = {
    "tarragona": {3: 16.9326, 4: 19.5460, 5: 22.4619, 10: 33.1929},
    "census": {3: 5.6922, 4: 7.4947, 5: 9.0884, 10: 14.1559},
    "eia": {3: 0.4829, 4: 0.6713, 5: 1.6667, 10: 3.8397},
}


@pytest.mark.parametrize("dataset", sorted(SDCMICRO_581_MDAV))
@pytest.mark.parametrize("k", [3, 4, 5, 10])
def test_matches_sdcmicro_581(casc, dataset, k):
    frame = casc(dataset)
    res = mdav(frame, k, variables=list(frame.columns))  # EIA's UTILITYID too
    assert abs(res.information_loss - SDCMICRO_581_MDAV[dataset][k]) <= 1e-4 + 5e-5  # 4 decimals published
    n = len(frame)
    sizes = res.group_sizes
    assert_k_partition(res.labels, n, k, max_size=2 * k - 1)
    # Every group has exactly k records except the last one (k..2k-1).
    assert np.count_nonzero(sizes != k) <= 1
    # SSE of the library equals the pairwise formula on independently standardized data.
    Z = zscore(frame.to_numpy(float))
    assert res.sse == pytest.approx(naive_sse(Z, res.labels), rel=1e-10)


def test_hand_computed_toy():
    # Six points on a line, k=3: the centroid is 3.5; the farthest record is 0 (value 0,
    # tie with 7 broken by the lowest position); its 3 nearest are 0, 1, 2 -> {0, 1, 2};
    # 3k > 6 so only one group is built by the loop and the rest {3, 4, 5} is the last group.
    X = np.array([[0.0], [1.0], [2.0], [5.0], [6.0], [7.0]])
    res = mdav(X, 3)
    assert res.labels.tolist() == [0, 0, 0, 1, 1, 1]
    # SSE on z-scores: each group has within sum of squares 2 (raw), sd^2 of the data = 8.3
    sd2 = np.var(X, ddof=1)
    assert res.sse == pytest.approx(4.0 / sd2)


def test_tie_rule_for_duplicates():
    # Record 0 is farthest from the centroid; at distance 0 from it are records 0, 1, 2, 3
    # (duplicates). The nearest-neighbour step takes the highest positions first (mu-ARGUS /
    # sdcMicro order), so with k=3 the first group is {1, 2, 3}.
    X = np.array([[10.0, 10.0]] * 4 + [[0.0, 0.0], [0.1, 0.0], [0.0, 0.1], [0.2, 0.1], [0.1, 0.2], [0.3, 0.3]])
    labels = mdav_labels(zscore(X), 3)
    first = labels[1]
    assert set(np.flatnonzero(labels == first)) == {1, 2, 3}



def _both_rounds(Z, k):
    """Labels of the numpy rounds, checked equal to the compiled ones where numba is installed."""
    from pysdcmicro.constructive import _mdav as m

    want = m._dense_labels(Z, k)
    nb = m._kernels()
    if nb is not None:
        assert np.array_equal(m._compiled_labels(nb, Z, k), want)
    return want


@pytest.mark.parametrize("delta,tie", [(1e-13, True), (1e-6, False)])
def test_nearest_distances_equal_up_to_rounding_are_ties(delta, tie):
    # r = row 0 is farthest from the centroid; rows 1 and 2 are at the same distance from it
    # in exact arithmetic when delta -> 0. Equal once rounded to single precision, they tie
    # and the highest row (2) joins r, as in sdcMicro; a clearly larger distance (1e-6)
    # leaves row 1 nearer.
    Z = np.array([[10.0, 0.0], [9.0, 0.5], [9.0, -0.5 * (1 + delta)], [0.0, 0.0], [0.0, 0.1], [0.0, -0.1]])
    labels = _both_rounds(Z, 2)
    assert labels[0] == labels[2 if tie else 1]


@pytest.mark.parametrize("delta,tie", [(1e-13, True), (1e-6, False)])
def test_farthest_distances_equal_up_to_rounding_are_ties(delta, tie):
    # Rows 0 and 1 are (almost) equally far from the centroid; row 1 by delta more. Equal in
    # single precision, the lowest row (0) is the farthest record and heads the first group.
    Z = np.array([[-1.0, 0.0], [1.0 + delta, 0.0], [0.0, 0.1], [0.0, -0.1], [0.0, 0.05], [0.0, -0.05]])
    labels = _both_rounds(Z, 2)
    assert labels[0 if tie else 1] == 0

def _f32_distance(Z, y):
    """sdcMicro's compared distance, written out: each squared difference rounded to
    float32, added in float32 in column order."""
    acc = np.float32(0.0)
    for t in range(Z.shape[0]):
        acc = np.float32(acc + np.float32((Z[t] - y[t]) ** 2))
    return float(acc)


def _reference_mdav(X, k):
    """MDAV as docs/guide/parity.md states sdcMicro's rules, plainly: population z-scores,
    single-precision distances, the centroid summed afresh in record order each round,
    farthest = lowest row among equal distances, nearest = highest rows among equal ones."""
    X = np.asarray(X, dtype=float)
    sd = X.std(axis=0)
    Z = np.where(sd > 0, (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0), 0.0)
    rem = list(range(len(Z)))
    labels = np.full(len(Z), -1)
    g = 0

    def nearest(center, pool):
        d = {i: _f32_distance(Z[i], Z[center]) for i in pool}
        return sorted(pool, key=lambda i: (d[i], -i))[:k]

    def farthest(y, pool):
        d = {i: _f32_distance(Z[i], y) for i in pool}
        return min(pool, key=lambda i: (-d[i], i))

    while len(rem) >= 2 * k:
        c = np.zeros(Z.shape[1])
        for i in rem:
            c = c + Z[i]
        r = farthest(c / len(rem), rem)
        s = farthest(Z[r], rem) if len(rem) >= 3 * k else None
        for group_center in (r, s):
            if group_center is None:
                break
            grp = nearest(group_center, rem)
            labels[grp] = g
            g += 1
            rem = [i for i in rem if labels[i] < 0]
    labels[rem] = g
    return labels


def _harness_input(seed):
    """The parity harness's random tie-heavy input (validation/parity.py) for ``seed``."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "validation" / "parity.py"
    spec = importlib.util.spec_from_file_location("pysdcmicro_validation_parity", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.random_input(seed, missing=False)


def _same_partition(a, b):
    pairs = {(x, y) for x, y in zip(a.tolist(), b.tolist())}
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


def test_single_precision_distances_decide_ties_as_sdcmicro():
    # Rows 1 and 2 are at distances from row 0 that differ in double precision (4e-9
    # relative) but are equal once rounded to single precision: a tie, so the highest row
    # (2) joins row 0; a double-precision comparison would take row 1.
    Z = np.array([[10.0, 0.0], [9.0, 0.5], [9.0, -0.5 * (1 + 1e-8)], [0.0, 0.0], [0.0, 0.1], [0.0, -0.1]])
    d1, d2 = _f32_distance(Z[1], Z[0]), _f32_distance(Z[2], Z[0])
    assert d1 == d2 and ((Z[1] - Z[0]) ** 2).sum() != ((Z[2] - Z[0]) ** 2).sum()
    labels = _both_rounds(Z, 2)
    assert labels[0] == labels[2] != labels[1]


@pytest.mark.parametrize("seed", [*range(0, 100, 7), 429, 530, 655, 1264, 2114, 2220, 2608, 2697])
def test_public_mdav_equals_the_documented_rules_record_for_record(seed):
    """microaggregate(method="mdav") (sample z-scores in, rescaled to population ones) groups
    exactly as the plain statement of sdcMicro's rules, on the parity harness's tie-heavy
    inputs (among them some with many-way ties that only single-precision distances decide
    as sdcMicro does)."""
    X, k = _harness_input(seed)
    res = microaggregate(X, k, method="mdav", variables=list(range(X.shape[1])))
    assert _same_partition(res.labels, _reference_mdav(X, k))


def test_mdav_order_is_a_permutation_grouped_in_runs():
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(50, 3))
    order: list = []
    labels = mdav_labels(Z, 4, order=order)
    assert sorted(order) == list(range(50))
    runs = labels[np.array(order)]
    assert np.all(np.diff(runs) >= 0)  # groups appear as consecutive runs in creation order


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("k", [2, 3])
def test_never_below_brute_force_optimum(seed, k):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(9, 2))
    res = microaggregate(X, k)
    opt, _ = brute_force_optimum(zscore(X), k)
    assert res.sse >= opt - 1e-9
    assert naive_sse(zscore(X), res.labels) == pytest.approx(res.sse)


# --------------------------------------------------------------------------- compiled rounds
from pysdcmicro.constructive import _mdav as _mdav_mod  # noqa: E402

_needs_numba = pytest.mark.skipif(_mdav_mod._kernels() is None, reason="numba not installed")


@_needs_numba
@pytest.mark.parametrize("kind", ["gaussian", "duplicates", "grid", "clustered"])
@pytest.mark.parametrize("seed", range(8))
def test_compiled_rounds_equal_numpy_rounds(kind, seed):
    """Same groups as the numpy rounds (which equal sdcMicro's), ties included."""
    rng = np.random.default_rng(seed)
    n, d, k = int(rng.integers(12, 700)), int(rng.integers(1, 7)), int(rng.integers(2, 6))
    Z = rng.normal(size=(n, d))
    if kind == "duplicates":
        Z = Z[rng.integers(0, max(n // 3, 1), size=n)]
    elif kind == "grid":
        Z = np.round(Z * 2) / 2
    elif kind == "clustered":
        Z = rng.normal(size=(5, d))[rng.integers(0, 5, size=n)] * 10 + Z * 0.1
    dense = _mdav_mod._dense_labels(Z, k)
    compiled = _mdav_mod._compiled_labels(_mdav_mod._kernels(), Z, k)
    assert np.array_equal(dense, compiled)


@_needs_numba
def test_compiled_rounds_stop_early():
    import threading

    Z = np.random.default_rng(0).normal(size=(3000, 4))
    ev = threading.Event()
    ev.set()
    labels = _mdav_mod._compiled_labels(_mdav_mod._kernels(), Z, 3, stop=ev)
    assert (labels == -1).any()
    grouped = labels[labels >= 0]
    if grouped.size:
        assert np.bincount(grouped).min() >= 3


@_needs_numba
def test_compiled_mdav_honours_an_expired_deadline_with_a_valid_partition():
    from pysdcmicro._context import Context

    Z = np.random.default_rng(1).normal(size=(60_000, 2))
    sol = _mdav_mod._compiled_solve(_mdav_mod._kernels(), Z, 5, Context(0, 1e-9))
    assert sol.status == "limit" and "records left" in sol.message
    assert_k_partition(sol.labels, 60_000, 5)


# --------------------------------------------------------------------------- float32 screening
def _kinds(rng, n, d, kind):
    Z = rng.normal(size=(n, d))
    if kind == "duplicates":
        return Z[rng.integers(0, max(n // 4, 1), size=n)]
    if kind == "grid":  # many exactly equal distances
        return np.round(Z * 2) / 2
    if kind == "one-value":  # every record identical
        return np.zeros((n, d)) + 0.3
    if kind == "two-scales":  # a tight cluster far from a spread one: rounding at two magnitudes
        return np.vstack([Z[: n // 2] * 1e-6 + 50.0, Z[n // 2:]])
    return Z


@_needs_numba
@pytest.mark.parametrize("kind", ["gaussian", "duplicates", "grid", "one-value", "two-scales"])
def test_screened_rounds_equal_numpy_rounds_ties_and_scales(kind):
    """The float32 screening computes the compared distance of every candidate that can
    win, so ties and near-ties resolve as in the numpy rounds; exact power-of-two rescaling
    (both rounds bring the data to one scale first) changes nothing."""
    nb = _mdav_mod._kernels()
    rng = np.random.default_rng(["gaussian", "duplicates", "grid", "one-value", "two-scales"].index(kind))
    for n, d, k in [(40, 2, 3), (301, 5, 4), (1200, 10, 5), (257, 1, 2)]:
        Z = _kinds(rng, n, d, kind)
        got = _mdav_mod._compiled_labels(nb, Z, k)
        # Two scales: inside the tight cluster many distances to far records are equal in
        # single precision; both rounds compute the same fixed numbers (column-order
        # float32 sums, row-order centroid sums), so they agree even there.
        want = _mdav_mod._dense_labels(Z, k)
        assert np.array_equal(got, want)
        for e in (200, -200):
            assert np.array_equal(_mdav_mod._compiled_labels(nb, np.ldexp(Z, e), k), want)


@_needs_numba
@pytest.mark.slow
def test_screened_rounds_equal_the_rounds_before_screening():
    """Group for group equal to the numpy rounds on 40 random sets with duplicates, grids,
    one value and clusters (n up to 3000, d up to 11); on the sets without ties (Gaussian),
    also equal to the compiled rounds as they were before the screening (kept verbatim in
    tests/_mdav_reference_numba.py; they compare double-precision distances, which on
    such data decide as the single-precision ones)."""
    from .. import _mdav_reference_numba as ref

    nb = _mdav_mod._kernels()
    for seed in range(40):
        rng = np.random.default_rng(seed)
        n, d, k = int(rng.integers(12, 3000)), int(rng.integers(1, 12)), int(rng.integers(2, 11))
        kind = ["gaussian", "duplicates", "grid", "one-value"][seed % 4]
        Z = _kinds(rng, n, d, kind)
        if seed % 5 == 4:
            Z = rng.normal(size=(5, d))[rng.integers(0, 5, size=n)] * 10 + Z * 0.1
        got = _mdav_mod._compiled_labels(nb, Z, k)
        assert np.array_equal(got, _mdav_mod._dense_labels(Z, k)), seed
        if kind == "gaussian" and seed % 5 != 4:
            X = np.array(Z, dtype=np.float64, order="C")
            old = np.empty(n, dtype=np.int64)
            ref.mdav_rounds(X, np.einsum("ij,ij->i", X, X), k, old, np.zeros(1, dtype=np.int64))
            assert np.array_equal(got, old), seed


def test_small_inputs_take_the_compiled_rounds_from_the_second_call(monkeypatch):
    """Loading the compiled rounds costs about half a second in a process that has not used
    numba; the first small call takes the numpy rounds, later ones the cached compiled ones."""
    monkeypatch.setenv("PYSDCMICRO_NO_AOT", "1")  # numba's JIT rounds (without the built ones)
    class Rounds:
        signatures: list = []

    class Kernels:
        mdav_rounds = Rounds()

        @staticmethod
        def warm():
            return True

    fake = Kernels()
    monkeypatch.setattr(_mdav_mod, "_kernels", lambda: fake)
    monkeypatch.setattr(_mdav_mod, "_NB", fake)
    monkeypatch.setattr(_mdav_mod, "_SMALL_CALLS", 0)
    Z = np.zeros((50, 2))
    assert _mdav_mod._compiled_for(Z) is None  # the first small call: numpy rounds
    assert _mdav_mod._compiled_for(Z) is fake  # then the cached compiled rounds
    monkeypatch.setattr(fake, "warm", lambda: False)
    assert _mdav_mod._compiled_for(Z) is None  # small inputs never compile
    assert _mdav_mod._compiled_for(np.zeros((_mdav_mod._COMPILED_MIN_WORK, 1))) is fake  # large ones do
    monkeypatch.setattr(Rounds, "signatures", ["loaded"])
    assert _mdav_mod._compiled_for(Z) is fake  # loaded in this process: always


def test_the_built_rounds_serve_every_input_without_loading_numba(monkeypatch):
    """With the rounds compiled when the package was built, even the first small call takes
    them: there is nothing to load."""
    from pysdcmicro import _aot

    built = _aot.family("mdav")
    if built is None:
        pytest.skip("the package was installed without its compiled kernels (pysdcmicro._aot)")
    monkeypatch.setattr(_mdav_mod, "_SMALL_CALLS", 0)
    monkeypatch.setattr(_mdav_mod, "_ELSEWHERE", True)
    for shape in ((10, 2), (_mdav_mod._COMPILED_MIN_WORK, 1)):
        assert _mdav_mod._compiled_for(np.zeros(shape)).mdav_rounds is built.mdav_rounds
    assert _mdav_mod._compiled_for(np.zeros((0, 2))) is None


def test_while_another_process_compiles_the_rounds_large_inputs_take_numpy(monkeypatch):
    """A worker told that another worker compiles the rounds (a fresh install) takes the
    numpy rounds for large inputs until the disk cache holds the compiled ones."""
    monkeypatch.setenv("PYSDCMICRO_NO_AOT", "1")  # numba's JIT rounds (without the built ones)
    class Rounds:
        signatures: list = []

    class Kernels:
        mdav_rounds = Rounds()
        cached = False

        def warm(self):
            return self.cached

    fake = Kernels()
    monkeypatch.setattr(_mdav_mod, "_kernels", lambda: fake)
    monkeypatch.setattr(_mdav_mod, "_NB", fake)
    big = np.zeros((_mdav_mod._COMPILED_MIN_WORK, 1))
    assert _mdav_mod._compiled_for(big) is fake  # compiles here
    monkeypatch.setattr(_mdav_mod, "_ELSEWHERE", False)
    _mdav_mod.compiled_elsewhere(True)
    assert _mdav_mod._compiled_for(big) is None  # another worker compiles them
    fake.cached = True
    assert _mdav_mod._compiled_for(big) is fake  # now in the disk cache


def test_numpy_fallback_without_numba(monkeypatch):
    """PYSDCMICRO_NO_NUMBA (or numba absent): the numpy rounds, same groups."""
    Z = np.random.default_rng(3).normal(size=(400, 3))
    want = mdav_labels(Z, 3)
    monkeypatch.setattr(_mdav_mod, "_NB", False)
    assert _mdav_mod._kernels() is None
    assert np.array_equal(mdav_labels(Z, 3), want)


def test_ctrl_c_while_the_compiled_rounds_still_load_leaves_every_record_ungrouped():
    """A Ctrl-C that comes while the rounds' thread is still loading (or compiling) the
    kernels: the records are reported as not grouped (-1), never as the thread's unwritten
    memory, and the caller does not wait for the loading to end."""
    import _thread
    import threading
    import time
    import types

    from pysdcmicro._context import Context

    def slow_rounds(*args):
        time.sleep(1.0)  # the kernels still loading: labels not written yet

    fake = types.SimpleNamespace(mdav_rounds=slow_rounds)
    args = (np.zeros((40, 2)),)
    timer = threading.Timer(0.2, _thread.interrupt_main)
    timer.start()
    started = time.monotonic()
    labels, why = _mdav_mod._rounds_in_thread(fake, args, 3, Context(0, time_limit=60).deadline)
    assert why == "interrupted (Ctrl-C)" and (labels == -1).all()
    assert time.monotonic() - started < 1.0
