"""mu-Approx (Domingo-Ferrer, Sebe, Solanas 2008; paper 002 in shared/papers): the SME running
example, the invariants after each step, exact optima on small sets, the API.

DECOMPOSE-COMPONENT's cases one by one: tests/constructive/test_mu_approx_decompose.py.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pysdcmicro
from pysdcmicro import InvalidTypeError, microaggregate, mu_approx, mu_approx_structure, sse, standardize
from pysdcmicro.constructive._mu_approx import approximation_factor, max_tree_size

from .._exact_dp import exact_optimum_dp
from .._helpers import assert_k_partition, brute_force_optimum, naive_sse, naive_sst, zscore

# --------------------------------------------------------------------------- SME example
# Paper 002, Table 1 ("Running example: SME data"): surface (m2), employees, turnover, net
# profit of 11 companies A&A Ltd .. K&K Sarl. Quasi-identifiers: surface and employees.
SME = pd.DataFrame({
    "company": ["A&A Ltd", "B&B SpA", "C&C Inc", "D&D BV", "E&E SL", "F&F GmbH", "G&G AG", "H&H SA",
                "I&I LLC", "J&J Co", "K&K Sarl"],
    "surface": [790, 710, 730, 810, 950, 510, 400, 330, 510, 760, 50],
    "employees": [55, 44, 32, 17, 3, 25, 45, 50, 5, 52, 12],
    "turnover": [3212334, 2283340, 1989233, 984983, 194232, 119332, 3012444, 4233312, 159999, 5333442,
                 645223],
    "net_profit": [313250, 299876, 200213, 143211, 51233, 20333, 501233, 777882, 60388, 1001233, 333010],
})
QI = ["surface", "employees"]
# Paper 002, Example 3 / Table 4 / Fig. 1: mu-Approx groups (1-based rows) {1,2,10},
# {3,4,5}, {6,7,8,9,11}; SSE/SST = 8.682/22 = 0.394.
SME_MU_APPROX = [{0, 1, 9}, {2, 3, 4}, {5, 6, 7, 8, 10}]
# Paper 002, Example 2 / Table 3 / Fig. 2: the optimal 3-partition {1,2,3,10}, {4,5,9},
# {6,7,8,11}; SSE_opt = 7.484, SSE_opt/SST = 0.34.
SME_OPTIMUM = [{0, 1, 2, 9}, {3, 4, 8}, {5, 6, 7, 10}]


def _partition(labels):
    labels = np.asarray(labels)
    return sorted(sorted(np.flatnonzero(labels == g).tolist()) for g in np.unique(labels))


def _labels(groups, n):
    out = np.empty(n, dtype=np.int64)
    for g, rows in enumerate(groups):
        out[sorted(rows)] = g
    return out


def test_sme_example_fixed_rule_gives_the_papers_partition():
    res = mu_approx(SME, 3, variables=QI, randomized=False)
    assert _partition(res.labels) == sorted(sorted(g) for g in SME_MU_APPROX)
    # Paper: SSE/SST = 8.682 / 22 = 0.394. The paper standardizes with the population
    # standard deviation (its SST = sum of squared z-scores = n p = 22); we use ddof=1
    # (SST = (n-1) p = 20). The ratio is the same; the paper's SSE is ours times 22/20.
    assert res.sst == pytest.approx(20.0)
    assert res.sse * 22 / 20 == pytest.approx(8.682, abs=1e-3)
    assert res.information_loss / 100 == pytest.approx(0.3947, abs=1e-4)
    # Table 4: released surface 753.3 / 830 / 360 and employees 50 / 17 / 27 (rounded).
    out = res.data
    assert out.loc[[0, 2, 5], "surface"].round(1).tolist() == [753.3, 830.0, 360.0]
    assert out.loc[[0, 2, 5], "employees"].round().tolist() == [50.0, 17.0, 27.0]
    pd.testing.assert_frame_equal(out[["company", "turnover", "net_profit"]],
                                  SME[["company", "turnover", "net_profit"]])


def test_sme_example_forest_is_one_tree_and_the_optimum_is_table_3():
    Z = standardize(SME[QI].to_numpy(float))[0]
    st_ = mu_approx_structure(SME, 3, variables=QI, randomized=False)
    # Fig. 1 (top): FOREST links the 11 companies into a single tree.
    assert st_.forest_sizes.tolist() == [11]
    assert _partition(st_.tree_labels) == _partition(st_.labels)  # P' = P (Example 3)
    # Example 2: exhaustive search gives SSE_opt/SST = 0.34 with the groups of Table 3.
    best, part = brute_force_optimum(Z, 3)
    assert sorted(sorted(b) for b in part) == sorted(sorted(g) for g in SME_OPTIMUM)
    assert best * 22 / 20 == pytest.approx(7.484, abs=1e-3)
    assert best / 20 == pytest.approx(0.34, abs=5e-3)
    # Table 3's released values: 747.5 / 756.67 / 322.5 and (rounded) 46 / 8 / 33.
    means = SME[QI].groupby(_labels(SME_OPTIMUM, 11)).mean()
    assert means["surface"].round(2).tolist() == [747.5, 756.67, 322.5]
    assert means["employees"].round().tolist() == [46.0, 8.0, 33.0]


def test_sme_example_randomized_most_often_gives_the_papers_partition():
    Z = standardize(SME[QI].to_numpy(float))[0]
    best, _ = brute_force_optimum(Z, 3)
    seen = Counter()
    for seed in range(40):
        st_ = mu_approx_structure(SME, 3, variables=QI, rng=seed)
        assert sse(Z, st_.labels) >= best - 1e-9
        seen[tuple(map(tuple, _partition(st_.labels)))] += 1
    top, count = seen.most_common(1)[0]
    assert [set(g) for g in top] == sorted(SME_MU_APPROX, key=min)
    assert count >= 20


# --------------------------------------------------------------------------- invariants
def _pairwise(Z):
    return np.sqrt(((Z[:, None, :] - Z[None, :, :]) ** 2).sum(axis=2))


def _check_structure(Z, k, s):
    n = Z.shape[0]
    M = max_tree_size(k)
    D = _pairwise(Z)
    # neighbours: k-1 distinct other records, and no other record strictly nearer.
    nb = s.neighbours
    assert nb.shape == (n, k - 1)
    for u in range(n):
        row = nb[u].tolist()
        assert u not in row and len(set(row)) == k - 1
        others = np.setdiff1d(np.arange(n), row + [u])
        if others.size and row:
            assert D[u, row].max() <= D[u, others].min() + 1e-12
    # FOREST: out-degree <= 1, targets among the k-1 nearest, no cycle, trees of >= k.
    edges = s.forest_edges
    assert len(set(edges[:, 0].tolist())) == len(edges)
    for u, v in edges.tolist():
        assert v in nb[u].tolist()
    parent = list(range(n))

    def find(x):
        while parent[x] != x:
            x = parent[x]
        return x

    for u, v in edges.tolist():
        ru, rv = find(u), find(v)
        assert ru != rv, "FOREST closed a cycle"
        parent[ru] = rv
    comps = np.array([find(i) for i in range(n)])
    assert len(edges) == n - np.unique(comps).size
    assert np.bincount(np.unique(comps, return_inverse=True)[1]).min() >= k
    assert _partition(s.forest_labels) == _partition(comps)
    # DECOMPOSE: trees partition the records, k..M real records, shape of a tree, edges
    # are FOREST edges (direction kept), used once unless a tour split happened.
    forest_set = set(map(tuple, edges.tolist()))
    allrec = np.concatenate([t.records for t in s.trees])
    assert sorted(allrec.tolist()) == list(range(n))
    used = []
    for t in s.trees:
        assert k <= t.size <= M
        verts = set(t.records.tolist()) | set(t.steiner.tolist())
        assert len(verts) == t.size + t.steiner.size
        assert t.edges.shape[0] == len(verts) - 1
        for e in map(tuple, t.edges.tolist()):
            assert e in forest_set
            assert set(e) <= verts
        used += list(map(tuple, t.edges.tolist()))
        if t.edges.size:
            deg = Counter(t.edges.ravel().tolist())
            assert all(deg[v] >= 2 for v in t.steiner.tolist()), "Steiner leaf"
    if s.edges_used_once:
        assert len(used) == len(set(used))
        # Lemma 2's chain: total tree length <= sum of distances to the (k-1)-th neighbour.
        length = sum(D[a, b] for a, b in used)
        kth = np.sort(D, axis=1)[:, k - 1] if n > k - 1 else np.zeros(n)
        assert length <= kth.sum() + 1e-9
    sizes_p = s.tree_sizes
    assert sizes_p.min() >= k and sizes_p.max() <= M
    # Step 3: P' refines P, groups of k..2k-1, groups of P up to 2k-1 kept.
    assert_k_partition(s.labels, n, k, max_size=2 * k - 1)
    for g in np.unique(s.tree_labels):
        rows = np.flatnonzero(s.tree_labels == g)
        inner = np.unique(s.labels[rows])
        assert np.isin(np.flatnonzero(np.isin(s.labels, inner)), rows).all()
        if rows.size <= 2 * k - 1:
            assert inner.size == 1
        else:
            # The paper's bipartition: the record farthest from the centroid and its k-1
            # nearest records of the group, the other rows as the second group.
            assert inner.size == 2
            G = Z[rows]
            r = int(np.argmax(((G - G.mean(axis=0)) ** 2).sum(axis=1)))
            near = np.argsort(((G - G[r]) ** 2).sum(axis=1), kind="stable")[:k]
            first = set(rows[near].tolist())
            assert first in [set(rows[s.labels[rows] == lab].tolist()) for lab in inner]
    assert sse(Z, s.labels) <= sse(Z, s.tree_labels) + 1e-9


@given(seed=st.integers(0, 2**31 - 1), k=st.integers(2, 7), n_extra=st.integers(0, 45),
       d=st.integers(1, 4), dup=st.integers(0, 6), randomized=st.booleans())
def test_invariants_after_each_step(seed, k, n_extra, d, dup, randomized):
    rng = np.random.default_rng(seed)
    n = k + n_extra
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 5, d)
    if rng.random() < 0.5:  # clustered data, as in Tables 7-8
        X += 6 * rng.integers(0, 4, size=(n, 1))
    dup = min(dup, n // 2)
    if dup:
        X[-dup:] = X[:dup]
    s = mu_approx_structure(X, k, randomized=randomized, rng=seed)
    Z = standardize(X)[0]
    _check_structure(Z, k, s)


def _naive_forest(nb, k, order):
    """Procedure FOREST written plainly: components as sets, in the given visiting order."""
    n = len(nb)
    comp = {i: {i} for i in range(n)}
    out = [-1] * n
    for i in order:
        while len(comp[i]) < k:
            T = comp[i]
            u = next(x for x in T if out[x] < 0)  # the one vertex without an outgoing edge
            v = next(w for w in nb[u] if w not in T)
            out[u] = v
            merged = T | comp[v]
            for x in merged:
                comp[x] = merged
    return out


@pytest.mark.parametrize("k", [2, 3, 5])
@pytest.mark.parametrize("seed", range(5))
def test_forest_matches_a_plain_implementation(k, seed):
    from pysdcmicro.constructive._mu_approx import forest, nearest_neighbours

    X = np.random.default_rng(seed).standard_t(3, size=(70, 3))
    nb = nearest_neighbours(X, k - 1)
    assert forest(nb, k).tolist() == _naive_forest(nb.tolist(), k, range(70))
    order = np.random.default_rng(seed).permutation(70).tolist()
    assert forest(nb, k, np.random.default_rng(seed)).tolist() == _naive_forest(nb.tolist(), k, order)


def test_every_paper_case_occurs_on_data():
    """Over a few data sets, DECOMPOSE uses each of the paper's cases (a)-(d)."""
    seen = Counter()
    for seed in range(30):
        rng = np.random.default_rng(seed)
        X = rng.standard_t(2, size=(150, 3))  # heavy tails: hubs and long chains
        for k in (3, 4, 6):
            seen.update(mu_approx_structure(X, k, rng=seed).cases)
    for case in ("a", "b", "c", "d"):
        assert seen[case] > 0, seen


@pytest.mark.parametrize("k", [2, 3, 4, 5, 8])
def test_structure_matches_result_and_info(k):
    X = np.random.default_rng(k).normal(size=(90, 3))
    res = mu_approx(X, k, rng=5)
    s = mu_approx_structure(X, k, rng=5)
    np.testing.assert_array_equal(res.labels, s.labels)
    info = res.info
    M = max_tree_size(k)
    assert info["max_tree_size"] == M
    assert info["approximation_factor_sse"] == 2 * (2 * k - 1) * M * M  # Theorem 2
    assert info["approximation_factor_euclidean"] == (2 * k - 1) * M    # Theorem 1
    assert info["step2_group_sizes"] == {int(a): int(b) for a, b in zip(*np.unique(s.tree_sizes, return_counts=True))}
    assert sum(info["decompose_cases"].values()) == len(s.splits)
    assert info["step3_groups_split"] == int((s.tree_sizes > 2 * k - 1).sum())
    res.to_json()  # info is JSON-serializable


def test_approximation_factors():
    # Theorem 2: 2(2k-1) max(2k-1, 3k-5)^2; Theorem 1: (2k-1) max(2k-1, 3k-5).
    assert [approximation_factor(k) for k in (2, 3, 4, 5, 10)] == [54, 250, 686, 1800, 23750]
    assert [approximation_factor(k, "euclidean") for k in (3, 10)] == [25, 475]


def test_fixed_rule_ignores_rng_and_randomized_follows_it():
    X = np.random.default_rng(0).normal(size=(120, 4))
    a = mu_approx(X, 3, randomized=False, rng=1)
    b = mu_approx(X, 3, randomized=False, rng=2)
    np.testing.assert_array_equal(a.labels, b.labels)
    c = [mu_approx(X, 3, rng=s).labels for s in range(6)]
    assert len({tuple(x) for x in c}) > 1
    np.testing.assert_array_equal(mu_approx(X, 3, rng=4).labels, c[4])
    assert a.settings["options"] == {"randomized": False}


def test_option_errors_follow_the_grammar():
    X = np.random.default_rng(0).normal(size=(20, 2))
    with pytest.raises(InvalidTypeError, match=r"`randomized` must be True or False; got 'yes'\."):
        microaggregate(X, 3, method="mu-approx", randomized="yes")
    with pytest.raises(InvalidTypeError, match="`randomized`"):
        mu_approx_structure(X, 3, randomized=1)


def test_registered_and_exported():
    assert "mu-approx" in pysdcmicro.methods()
    assert pysdcmicro.methods()["mu-approx"].randomized
    assert "mu_approx" in pysdcmicro.__all__ and "mu_approx_structure" in pysdcmicro.__all__


def test_giant_forest_tree_is_decomposed_quickly():
    # Sorted data with growing gaps: every record's nearest neighbour is the previous one,
    # so FOREST in row order makes one path of n records (the fixed rule's worst case).
    X = np.cumsum(1.001 ** np.arange(3000))[:, None]
    s = mu_approx_structure(X, 3, randomized=False, scaling="none")
    assert s.forest_sizes.tolist() == [3000]
    assert s.tree_sizes.max() <= 5 and s.tree_sizes.min() >= 3


# --------------------------------------------------------------------------- exact optima
@pytest.mark.parametrize("k", [2, 3, 4])
@pytest.mark.parametrize("seed", range(4))
def test_never_below_brute_force_optimum(k, seed):
    rng = np.random.default_rng(100 * k + seed)
    n = int(rng.integers(2 * k, 12 if k > 2 else 11))
    X = rng.normal(size=(n, 3))
    if seed % 2:  # clustered, as in Tables 7-8
        X += 4 * rng.integers(0, 3, size=(n, 1))
    Z = zscore(X)
    best, _ = brute_force_optimum(Z, k)
    for randomized in (False, True):
        s = mu_approx_structure(X, k, randomized=randomized, rng=seed)
        p_prime = naive_sse(Z, s.labels)
        p = naive_sse(Z, s.tree_labels)
        assert p_prime >= best - 1e-9
        assert p_prime <= p + 1e-9
        if s.edges_used_once:  # Theorem 2 for the step-2 partition P (worst case, very loose)
            assert p <= approximation_factor(k) * best + 1e-9


def test_exact_dp_matches_brute_force():
    for n, k in [(8, 2), (10, 3), (11, 4), (12, 3)]:
        Z = np.random.default_rng(n + k).normal(size=(n, 4))
        assert exact_optimum_dp(Z, k) == pytest.approx(brute_force_optimum(Z, k)[0], abs=1e-9)


def _table_sets(kind, seed):
    """Simulated sets of paper 002, Section 6 (n = 16, p = 13): N(0,1) values (Table 6);
    clusters of sizes 2,2,3,4,5 around 0,3,6,9,12 (Table 7); 3,4,4,5 around 0,4,8,12 (Table 8)."""
    rng = np.random.default_rng(seed)
    if kind == "table6":
        return rng.normal(size=(16, 13))
    sizes, means = ([2, 2, 3, 4, 5], [0, 3, 6, 9, 12]) if kind == "table7" else ([3, 4, 4, 5], [0, 4, 8, 12])
    return np.vstack([rng.normal(m, 1, size=(s, 13)) for s, m in zip(sizes, means)])


@pytest.mark.slow
@pytest.mark.parametrize("kind,k", [("table7", 3), ("table8", 5)])
def test_n16_never_below_exact_optimum(kind, k):
    # Raw values, as the paper's Tables 6-8 (SSE in the units of the simulated data).
    X = _table_sets(kind, 1)
    best = exact_optimum_dp(X, k)
    for seed in range(5):
        s = mu_approx_structure(X, k, rng=seed, scaling="none")
        assert naive_sse(X, s.labels) >= best - 1e-9


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["table6", "table7", "table8"])
def test_tables_6_to_8_never_below_exact_optimum(kind):
    # One set per table and k = 2..6 (the full five-set replication with MDAV and the
    # paper's numbers side by side: python -m benchmarks.mu_approx_tables6_8).
    X = _table_sets(kind, 2)
    for k in range(2, 7):
        best = exact_optimum_dp(X, k)
        for randomized in (False, True):
            for seed in range(3):
                s = mu_approx_structure(X, k, randomized=randomized, rng=seed, scaling="none")
                assert naive_sse(X, s.labels) >= best - 1e-9


def test_sse_and_sst_independent_on_casc_like_data(casc):
    df = casc("census")
    res = mu_approx(df, 3, rng=0)
    Z = zscore(df.to_numpy(float))
    assert res.sse == pytest.approx(naive_sse(Z, res.labels), rel=1e-9)
    assert res.sst == pytest.approx(naive_sst(Z), rel=1e-12)
