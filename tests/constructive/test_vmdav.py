"""V-MDAV: published IL values (with the gamma that reproduces each), equality with a
literal reference implementation, brute-force sanity, gamma = 0, group sizes, options.

Published V-MDAV values and what reproduces them (our ``vmdav``: whole-data centroid
computed once, one group per step, ``d_in`` = least distance to any member, Euclidean
test ``d_in < gamma * d_out``, left-overs to the nearest group centroid). The gamma
intervals were found by an exact sweep: the partition only changes where gamma crosses
one of the ratios ``d_in / d_out`` met on the way, so every distinct result for gamma in
[0, 1.5] was visited (README, "V-MDAV details").

[M] = shared/papers/001_1005f369078eb542.txt (Maya-Lopez, Martinez-Balleste, Casino 2022),
      Tables 2-4, row "V-MDAV" (4 decimals).
[C] = shared/papers/000_d082fbfb414cb0a2.txt (Castro, Gentile, Spagnolo-Arrizabalaga
      2022), Tables 1-4, column "Step 2" where Alg = VMDAV (2 decimals).

Reproduced (tested below):
  Census k=3  5.6619 [M] and 5.66 [C]   gamma in [0, 0.2989)   (0.2 used)
  Census k=5  9.0070 [M]                gamma in [0, 0.3995)
  Census k=6  10.2666 [M]               gamma in [0.4973, 0.5063) only (0.5 used)
  Census k=9  13.3368 [M]               gamma in [0, 0.3041)
  Census k=10 14.0730 [M]               gamma in [0, 0.3041)
  Census k=5  8.98 [C]                  gamma in [0.4439, 0.4837) (0.45 used): the lowest
                                        IL of any gamma for this instance
  Census k=10 14.04 [C]                 gamma in [0.4439, 0.5405) (0.45 used): lowest of any gamma
  Tarragona k=3 15.85 [C]               gamma in [0.5039, 0.6738) (0.55 used), around the
                                        lowest IL of any gamma (15.8454)
  [C] reports MDAV, not VMDAV, as the better of the two for Tarragona k=5 and k=10: our
  V-MDAV is worse than MDAV (22.46, 33.19) there for every gamma (tested on a grid).
  So [C]'s VMDAV column is consistent with "the best gamma per instance"; [M]'s Census
  values with a fixed small gamma such as the paper's 0.2 (k = 3, 5, 9, 10).

Not reproduced (no gamma in [0, 1.5] gives the value; NOT_REPRODUCED below pins the
closest IL we get and the gamma giving it):
  [M] Census k=4 7.4947 (closest 7.5006, +0.0059), k=7 11.5999 (11.6003, +0.0004),
      k=8 12.2985 (12.3046, +0.0061). 7.4947 is exactly MDAV's IL (sdcMicro 5.8.1).
  [M] Tarragona k=3 16.6603 (closest 16.5397, -0.1206; 16.9630 at gamma 0.2).
  [M] Tarragona k=4..10 (19.5460 ... 33.1929) are exactly MDAV's IL; our V-MDAV never
      yields MDAV's partition on Tarragona; its best IL over gamma is above MDAV's for
      k=4, 5, 6, 7, 9, 10 (by +0.149, +0.410, +0.086, +0.727, +0.391, +0.058) and below it for
      k=8 (29.3045); the closest to 29.6929 is 29.6766.
  [M] EIA k=3..10 (0.4829 ... 2.7478): not reproduced on a gamma grid of step 0.01 over
      [0, 1.5]; closest: k=3 0.4815 (-0.0014), k=4 0.6715 (+0.0002), k=5 1.2727 (-0.0044),
      k=6 1.2532 (+0.0212), k=7 2.2043 (+0.0005), k=8 2.9207 (+0.0014), k=9 3.2838
      (+0.0003), k=10 2.7316 (-0.0162). [M]'s EIA k=3, 4 values equal MDAV's, and their
      MDAV values for EIA k >= 6 differ from sdcMicro 5.8.1's MDAV (e.g. k=10: 3.5474 vs
      3.8397), so their EIA figures likely come from a different handling of EIA's many
      duplicate records.
  [M]'s pattern (V-MDAV == MDAV on all of Tarragona k >= 4) suggests their V-MDAV was an
  MDAV-based variant (two groups per step, centroid of the remaining records) whose
  extension rarely fired; that variant reproduces their Tarragona k=4..10 and Census k=4
  values with a small gamma but then misses their Census k=3, 5, 9, 10 values (it gives
  MDAV's 5.6922, 9.0884, ...), so no one variant explains all of [M]'s column; we did not
  add it as an option.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pysdcmicro import InvalidInputError, InvalidTypeError, mdav, microaggregate, vmdav
from pysdcmicro._context import Context
from pysdcmicro._registry import get_method
from pysdcmicro.constructive._vmdav import DEFAULT_GAMMA, _vmdav_solver, vmdav_labels

from .._helpers import assert_k_partition, brute_force_optimum, naive_sse, zscore

M = "shared/papers/001_1005f369078eb542.txt (Maya-Lopez et al. 2022)"
C = "shared/papers/000_d082fbfb414cb0a2.txt (Castro et al. 2022)"

# (data set, k, gamma, published IL, decimals published, source)
PUBLISHED = [
    ("census", 3, 0.2, 5.6619, 4, f"{M} Table 2, V-MDAV"),
    ("census", 3, 0.2, 5.66, 2, f"{C} Tables 3-4, Step 2 (VMDAV)"),
    ("census", 5, 0.2, 9.0070, 4, f"{M} Table 2, V-MDAV"),
    ("census", 6, 0.5, 10.2666, 4, f"{M} Table 2, V-MDAV"),
    ("census", 9, 0.2, 13.3368, 4, f"{M} Table 2, V-MDAV"),
    ("census", 10, 0.2, 14.0730, 4, f"{M} Table 2, V-MDAV"),
    ("census", 5, 0.45, 8.98, 2, f"{C} Tables 3-4, Step 2 (VMDAV)"),
    ("census", 10, 0.45, 14.04, 2, f"{C} Tables 3-4, Step 2 (VMDAV)"),
    ("tarragona", 3, 0.55, 15.85, 2, f"{C} Tables 1-2, Step 2 (VMDAV)"),
]

# Published values we do not reproduce: (data set, k, published, source, gamma giving our
# closest IL, that IL). The test below pins our side of the README's findings table.
NOT_REPRODUCED = [
    ("census", 4, 7.4947, f"{M} Table 2", 0.375, 7.5006),
    ("census", 7, 11.5999, f"{M} Table 2", 0.564, 11.6003),
    ("census", 8, 12.2985, f"{M} Table 2", 0.497, 12.3046),
    ("tarragona", 3, 16.6603, f"{M} Table 3", 1.017, 16.5397),
]


def _il(frame, k, gamma):
    return vmdav(frame, k, gamma=gamma, variables=list(frame.columns)).information_loss


@pytest.mark.parametrize("dataset,k,gamma,value,decimals,source", PUBLISHED,
                         ids=[f"{d}-k{k}-g{g}-{v}" for d, k, g, v, _, _ in PUBLISHED])
def test_published_values(casc, dataset, k, gamma, value, decimals, source):
    il = _il(casc(dataset), k, gamma)
    assert round(il, decimals) == value, f"{source}: published {value}, got {il:.6f}"


@pytest.mark.parametrize("dataset,k,published,source,gamma,closest", NOT_REPRODUCED,
                         ids=[f"{d}-k{k}" for d, k, *_ in NOT_REPRODUCED])
def test_closest_to_unreproduced_values(casc, dataset, k, published, source, gamma, closest):
    il = _il(casc(dataset), k, gamma)
    assert round(il, 4) == closest
    assert round(il, 4) != published


@pytest.mark.parametrize("k,mdav_il", [(5, 22.46), (10, 33.19)])
def test_castro_chose_mdav_on_tarragona(casc, k, mdav_il):
    # [C] Tables 1-2: for Tarragona k=5 and k=10 Step 2 kept MDAV (22.46, 33.19), i.e. their
    # VMDAV was worse; so is ours for every gamma of a grid over [0, 1.2].
    frame = casc("tarragona")
    assert mdav(frame, k).information_loss == pytest.approx(mdav_il, abs=0.005)
    for gamma in np.round(np.arange(0.0, 1.2001, 0.05), 2):
        assert _il(frame, k, float(gamma)) > mdav_il


# ----------------------------------------------------------------------------------------
# A literal, deliberately naive V-MDAV: Python loops over records, direct differences.


def _naive_vmdav(Z, k, gamma):
    Z = np.asarray(Z, dtype=float)
    n = len(Z)
    lab = np.full(n, -1)
    c = Z.mean(axis=0)
    far = [float(((z - c) ** 2).sum()) for z in Z]
    order = sorted(range(n), key=lambda i: (-far[i], i))

    def d2(i, j):
        return float(((Z[i] - Z[j]) ** 2).sum())

    g = 0
    while (lab < 0).sum() >= k:
        e = next(i for i in order if lab[i] < 0)
        free = sorted((i for i in range(n) if lab[i] < 0 and i != e), key=lambda i: (d2(i, e), i))
        members = [e] + free[: k - 1]
        lab[members] = g
        while gamma > 0 and len(members) < 2 * k - 1:
            free = [i for i in range(n) if lab[i] < 0]
            if not free:
                break
            x = min(free, key=lambda i: (min(d2(i, j) for j in members), i))
            d_in2 = min(d2(x, j) for j in members)
            others = [i for i in free if i != x]
            d_out2 = min(d2(x, o) for o in others) if others else math.inf
            if not d_in2 < gamma * gamma * d_out2:
                break
            lab[x] = g
            members.append(x)
        g += 1
    rest = [i for i in range(n) if lab[i] < 0]
    if rest:
        cents = [Z[lab == h].mean(axis=0) for h in range(g)]
        for r in rest:
            lab[r] = int(np.argmin([((cent - Z[r]) ** 2).sum() for cent in cents]))
    return lab


def _random_data(rng, n, d, kind):
    """Test data (already scaled; ``vmdav_labels`` takes it as it is)."""
    if kind == "normal":
        X = rng.normal(size=(n, d))
    elif kind == "grid":
        # Many exact ties and duplicates. Integer data with an exactly zero mean (rows and
        # their negatives), left unscaled: every distance used for a decision is then an
        # exact integer, whatever the order of summation, so ties are ties for both
        # implementations.
        half = rng.integers(-2, 3, size=(max(2, n // 2), d)).astype(float)
        return np.vstack([half, -half])
    elif kind == "clusters":
        X = np.repeat(rng.normal(size=(n // 4 + 1, d)) * 5, 4, axis=0)[:n] + 0.1 * rng.normal(size=(n, d))
    else:
        X = rng.lognormal(size=(n, d)) * 1000
    return zscore(X)


KINDS = ["normal", "grid", "clusters", "lognormal"]
GAMMAS = [0.0, 0.2, 0.5, 1.1, 3.0]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("gamma", GAMMAS)
def test_equals_literal_implementation(kind, gamma):
    rng = np.random.default_rng([KINDS.index(kind), GAMMAS.index(gamma)])
    for _ in range(6):
        n = int(rng.integers(6, 60))
        d = int(rng.integers(1, 5))
        k = int(rng.integers(2, 6))
        Z = np.ascontiguousarray(_random_data(rng, n, d, kind))
        k = min(k, len(Z))
        labels, _ = vmdav_labels(Z, k, gamma=gamma)
        np.testing.assert_array_equal(labels, _naive_vmdav(Z, k, gamma))


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["normal", "grid"])
def test_equals_literal_implementation_larger(kind):
    # Exercises the compaction of the working arrays and both extension paths.
    rng = np.random.default_rng(5)
    for d, k, gamma in [(2, 3, 0.5), (6, 4, 1.1), (9, 2, 0.8)]:
        Z = np.ascontiguousarray(_random_data(rng, 240, d, kind))
        labels, _ = vmdav_labels(Z, k, gamma=gamma)
        np.testing.assert_array_equal(labels, _naive_vmdav(Z, k, gamma))


def test_hypothesis_equals_literal_implementation():
    hyp = pytest.importorskip("hypothesis")
    st = pytest.importorskip("hypothesis.strategies")

    @hyp.given(st.integers(0, 2**31 - 1), st.integers(4, 30), st.integers(1, 3), st.integers(2, 4),
               st.sampled_from([0.0, 0.3, 0.7, 1.5]), st.sampled_from(["normal", "grid", "clusters"]))
    def check(seed, n, d, k, gamma, kind):
        Z = np.ascontiguousarray(_random_data(np.random.default_rng(seed), n, d, kind))
        kk = min(k, len(Z))
        labels, _ = vmdav_labels(Z, kk, gamma=gamma)
        np.testing.assert_array_equal(labels, _naive_vmdav(Z, kk, gamma))

    check()


# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("gamma", [0.0, 0.5, 1.1])
def test_never_below_brute_force_optimum(seed, gamma):
    rng = np.random.default_rng(seed)
    n, k = (9, 2) if seed % 2 else (10, 3)
    X = rng.normal(size=(n, 2)) if seed < 3 else np.repeat(rng.normal(size=(n // 3 + 1, 2)), 3, axis=0)[:n]
    res = vmdav(X, k, gamma=gamma)
    opt, _ = brute_force_optimum(zscore(X), k)
    assert res.sse >= opt - 1e-9
    assert res.sse == pytest.approx(naive_sse(zscore(X), res.labels), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("n,k", [(30, 3), (31, 3), (47, 5), (20, 4), (23, 2)])
def test_gamma_zero_never_extends(n, k):
    X = np.random.default_rng(n).normal(size=(n, 3))
    res = vmdav(X, k, gamma=0)
    sizes = res.group_sizes
    assert res.n_groups == n // k
    assert sizes.min() >= k and sizes.max() <= 2 * k - 1
    assert int((sizes - k).sum()) == n % k   # only the n mod k left-overs enlarge groups
    assert res.info["extended_groups"] == 0 and res.info["left_over"] == n % k
    # The first group: the record farthest from the centroid and its k-1 nearest records.
    Z = zscore(X)
    e = int(np.argmax(((Z - Z.mean(axis=0)) ** 2).sum(axis=1)))
    first = np.argsort(((Z - Z[e]) ** 2).sum(axis=1), kind="stable")[:k]
    assert set(np.flatnonzero(res.labels == res.labels[e])) >= set(first.tolist())


def test_gamma_zero_is_not_mdav():
    # One group per step from a fixed seed order (not MDAV's two groups per round).
    X = np.random.default_rng(3).normal(size=(60, 3))
    assert not np.array_equal(vmdav(X, 3, gamma=0).labels, mdav(X, 3).labels)


def test_left_overs_can_make_a_group_of_3k_minus_2():
    # k=2: a tight triple (extended to 2k-1 = 3), a far pair, and one left-over record
    # nearest to the triple's centroid -> a group of 4 = 3k-2.
    X = np.array([[0.0, 10.0], [0.1, 10.0], [10.0, 0.0], [10.1, 0.0], [10.0, 0.1], [6.0, 0.0]])
    res = vmdav(X, 2, gamma=0.5)
    assert sorted(res.group_sizes.tolist()) == [2, 4]
    assert res.labels.tolist() == [0, 0, 1, 1, 1, 1]
    assert {key: res.info[key] for key in ("extended_groups", "left_over", "stopped_extending")} == \
        {"extended_groups": 1, "left_over": 1, "stopped_extending": None}


@pytest.mark.parametrize("gamma", [0.3, 1.0, 5.0])
@pytest.mark.parametrize("k", [2, 3, 5])
def test_group_sizes_are_k_to_3k_minus_2(gamma, k):
    X = np.random.default_rng(k).normal(size=(97, 4))
    res = vmdav(X, k, gamma=gamma)
    assert_k_partition(res.labels, 97, k, max_size=3 * k - 2)
    # Before the left-overs join, groups have at most 2k-1 records: at most left_over
    # records sit in groups above 2k-1.
    assert int(np.maximum(res.group_sizes - (2 * k - 1), 0).sum()) <= res.info["left_over"] < k


def test_large_gamma_extends_every_group_it_can():
    X = np.random.default_rng(1).normal(size=(60, 2))
    res = vmdav(X, 3, gamma=1e6)
    assert res.info["extended_groups"] == res.n_groups - (res.group_sizes[-1] < 5)
    assert (res.group_sizes[:-1] >= 5).all()


def test_expired_deadline_stops_extending_and_says_so():
    Z = np.ascontiguousarray(zscore(np.random.default_rng(2).normal(size=(50, 3))))
    sol = _vmdav_solver(Z, 3, Context(time_limit=0.0), gamma=1.1)   # expired at entry
    assert sol.status == "limit" and "without extension" in sol.message
    # no group built before the limit: every record in principal-axis runs of k
    from pysdcmicro.constructive._mdav import _fill_rest

    runs = np.full(Z.shape[0], -1, dtype=np.int64)
    _fill_rest(Z, runs, 3)
    np.testing.assert_array_equal(sol.labels, runs)
    done = _vmdav_solver(Z, 3, Context(), gamma=1.1)
    assert done.status == "done" and done.info["extended_groups"] > 0


def test_duplicates_join_the_group_of_their_copy():
    # An exact copy of a member is at distance 0 < gamma * d_out: always added (gamma > 0).
    base = np.random.default_rng(4).normal(size=(12, 2)) * 10
    X = np.vstack([base, base[:4]])
    res = vmdav(X, 2, gamma=0.01)
    for i in range(4):
        assert res.labels[12 + i] == res.labels[i]


def test_memory_is_linear(monkeypatch):
    tracemalloc = pytest.importorskip("tracemalloc")
    n = 3000
    Z = np.ascontiguousarray(zscore(np.random.default_rng(0).normal(size=(n, 3))))
    tracemalloc.start()
    try:
        vmdav_labels(Z, 3, gamma=0.5)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < n * n * 8 / 20, f"peak {peak / 2**20:.1f} MiB looks like an n x n structure"


# ----------------------------------------------------------------------------------------


def test_default_gamma_is_documented():
    assert get_method("vmdav").options["gamma"].default == DEFAULT_GAMMA == 0.5
    assert "gamma : float, default 0.5" in vmdav.__doc__


@pytest.mark.parametrize("bad,error,match", [
    (-1, InvalidInputError, r"`gamma` must be >= 0; got -1\."),
    (-0.5, InvalidInputError, r"`gamma` must be >= 0; got -0\.5\."),
    ("0.5", InvalidTypeError, r"`gamma` must be a finite number; got '0\.5'\."),
    (float("nan"), InvalidTypeError, r"`gamma` must be a finite number; got nan\."),
    (float("inf"), InvalidTypeError, r"`gamma` must be a finite number; got inf\."),
    (True, InvalidTypeError, r"`gamma` must be a finite number; got True\."),
    (None, InvalidTypeError, r"`gamma` must be a finite number; got None\."),
])
def test_bad_gamma(bad, error, match):
    X = np.random.default_rng(0).normal(size=(12, 2))
    with pytest.raises(error, match=match):
        vmdav(X, 3, gamma=bad)
    with pytest.raises(error, match=match):
        microaggregate(X, 3, method="vmdav", gamma=bad)


def test_unknown_option_and_cli_coercion():
    X = np.random.default_rng(0).normal(size=(12, 2))
    with pytest.raises(InvalidInputError, match="has no option 'gama'.*Did you mean 'gamma'"):
        microaggregate(X, 3, method="vmdav", gama=0.2)
    spec = get_method("vmdav")
    assert spec.options["gamma"].coerce("0.25", "vmdav") == 0.25
    with pytest.raises(InvalidInputError, match="option `gamma` of vmdav must be float"):
        spec.options["gamma"].coerce("big", "vmdav")


def test_settings_record_gamma():
    X = np.random.default_rng(0).normal(size=(12, 2))
    assert vmdav(X, 3).settings["options"] == {"gamma": 0.5}
    assert vmdav(X, 3, gamma=1.1).settings["options"] == {"gamma": 1.1}


# ---------------------------------------------------------------------------------------- float32 screening
from pysdcmicro.constructive import _mdav as _mdav_mod  # noqa: E402
from pysdcmicro.constructive import _vmdav as _vmdav_mod  # noqa: E402

_needs_numba = pytest.mark.skipif(_mdav_mod._kernels() is None, reason="numba not installed")


@_needs_numba
@pytest.mark.parametrize("kind", KINDS)
def test_screened_path_equals_literal_implementation(kind):
    nb = _mdav_mod._kernels()
    rng = np.random.default_rng(KINDS.index(kind) + 40)
    for gamma in GAMMAS:
        for _ in range(3):
            n, d, k = int(rng.integers(6, 60)), int(rng.integers(1, 5)), int(rng.integers(2, 6))
            Z = np.ascontiguousarray(_random_data(rng, n, d, kind))
            k = min(k, len(Z))
            labels, _ = _vmdav_mod._screened_labels(nb, Z, k, gamma, None)
            np.testing.assert_array_equal(labels, _naive_vmdav(Z, k, gamma))


@_needs_numba
@pytest.mark.parametrize("kind", KINDS)
def test_screened_path_equals_numpy_path_on_larger_sets(kind):
    """Labels and info equal to the numpy rounds (n up to 1500, d up to 10, duplicates)."""
    nb = _mdav_mod._kernels()
    rng = np.random.default_rng(KINDS.index(kind) + 50)
    for gamma in (0.0, 0.5, 1.1, 3.0):
        n, d, k = int(rng.integers(200, 1500)), int(rng.integers(1, 11)), int(rng.integers(2, 8))
        Z = np.ascontiguousarray(_random_data(rng, n, d, kind))
        if gamma == 3.0:
            Z = Z[rng.integers(0, len(Z) // 3, size=len(Z))]  # duplicates
        a = _vmdav_mod._screened_labels(nb, Z, k, gamma, None)
        b = _vmdav_mod._numpy_labels(Z, k, gamma, None)
        np.testing.assert_array_equal(a[0], b[0])
        assert a[1] == b[1]


@_needs_numba
def test_screened_path_equals_numpy_path_with_duplicated_rows():
    """The compiled rounds' shortened d_out search (radius min(sqrt(ub), d_in / gamma), first
    failing block ends it) decides as the numpy rounds' exhaustive one, ties included."""
    nb = _mdav_mod._kernels()
    rng = np.random.default_rng(61)
    for k, gamma, d in [(2, 0.2, 3), (3, 0.5, 10), (5, 1.1, 4), (4, 3.0, 6)]:
        base = rng.normal(size=(80, d))
        Z = np.ascontiguousarray(zscore(base[rng.integers(0, 80, size=180)]))  # duplicated rows
        a = _vmdav_mod._screened_labels(nb, Z, k, gamma, None)
        b = _vmdav_mod._numpy_labels(Z, k, gamma, None)
        np.testing.assert_array_equal(a[0], b[0])
        assert a[1] == b[1]


@pytest.mark.slow
@_needs_numba
def test_compiled_rounds_on_two_threads_equal_one_thread():
    """The scans split over threads (the seed pass with its k-th smallest, the e_min
    candidates, the d_out search) give the one-thread labels bit for bit, ties included:
    with every round on two threads (``par_min=0``), with only the first rounds
    (``par_min=n/2``), and with the numpy rounds as the reference."""
    nb = _mdav_mod._kernels()
    rng = np.random.default_rng(67)
    for n, k, gamma, d in [(1500, 2, 0.2, 10), (1400, 3, 0.5, 10), (1300, 5, 1.1, 4), (1200, 4, 3.0, 6),
                           (1100, 5, 0.0, 10)]:
        base = np.round(rng.normal(size=(n // 2, d)), 1)
        Z = np.ascontiguousarray(zscore(base[rng.integers(0, n // 2, size=n)]))  # duplicated rows
        one = _vmdav_mod._screened_labels(nb, Z, k, gamma, None, threads=1)
        np.testing.assert_array_equal(one[0], _vmdav_mod._numpy_labels(Z, k, gamma, None)[0])
        for par_min in (0, n // 2):
            two = _vmdav_mod._screened_labels(nb, Z, k, gamma, None, threads=2, par_min=par_min)
            np.testing.assert_array_equal(two[0], one[0])
            assert two[1] == one[1]


@_needs_numba
def test_screened_path_stops_extending_at_the_deadline():
    nb = _mdav_mod._kernels()
    Z = np.ascontiguousarray(zscore(np.random.default_rng(2).normal(size=(50, 3))))
    labels, info = _vmdav_mod._screened_labels(nb, Z, 3, 1.1, Context(time_limit=0.0))
    assert info["stopped_extending"] == 0
    # expired at entry: no group built, every record in principal-axis runs of k
    from pysdcmicro.constructive._mdav import _fill_rest

    runs = np.full(Z.shape[0], -1, dtype=np.int64)
    _fill_rest(Z, runs, 3)
    np.testing.assert_array_equal(labels, runs)


@_needs_numba
def test_compiled_exact_distance_is_einsums_bit_for_bit():
    """The compiled rounds' exact distances are numpy's einsum values (same summation order)."""
    from pysdcmicro.constructive._vmdav_numba import _sqd

    rng = np.random.default_rng(3)
    for d in range(1, 25):
        A = rng.normal(size=(50, d)) * rng.uniform(0.1, 10.0, size=d)
        B = rng.normal(size=(1, d))
        ref = np.einsum("ij,ij->i", A - B[0], A - B[0])
        got = np.array([_sqd(A, i, B, 0) for i in range(len(A))])
        assert np.array_equal(got, ref), d


@_needs_numba
@pytest.mark.parametrize("dataset", ["tarragona"])
def test_compiled_rounds_equal_numpy_rounds_on_casc(casc, dataset):
    nb = _mdav_mod._kernels()
    Z = np.ascontiguousarray(zscore(casc(dataset).to_numpy(dtype=float)))
    for k, gamma in [(3, 0.2), (5, 0.5), (4, 1.1)]:
        a = _vmdav_mod._screened_labels(nb, Z, k, gamma, None)
        b = _vmdav_mod._numpy_labels(Z, k, gamma, None)
        np.testing.assert_array_equal(a[0], b[0])
        assert a[1] == b[1]
