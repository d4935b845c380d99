"""DECOMPOSE-COMPONENT (Procedure 2 of Domingo-Ferrer, Sebe, Solanas 2008, paper 002, Section 2)
driven case by case on hand-built trees, plus our extension where the paper would move a
Steiner vertex.

Trees are given as edge lists over vertex ids; ids 0..n-1 are real records, ids >= n are
Steiner vertices (copies of the record given in ``steiner``). ``split`` runs one
iteration of the procedure from a given candidate vertex and logs the case it used.
"""

from __future__ import annotations

import numpy as np
import pytest

from pysdcmicro.constructive._mu_approx import _Decomposer, max_tree_size


def _dec(n, edges, k, steiner=None, rng=None):
    return _Decomposer(n, edges, k, rng, steiner=steiner)


def _pieces(dec):
    """Trees as (sorted real records, sorted Steiner records)."""
    return sorted((t.records.tolist(), t.steiner.tolist()) for t in dec.trees())


def _check_tree(dec, tree):
    """Connected, acyclic, every edge an original edge, every leaf real."""
    verts = set(tree.records.tolist()) | set(tree.steiner.tolist())
    assert len(verts) == tree.records.size + tree.steiner.size  # a record at most once per tree
    assert tree.edges.shape[0] == len(verts) - 1
    adj = {v: set() for v in verts}
    for a, b in tree.edges.tolist():
        assert a in verts and b in verts
        adj[a].add(b)
        adj[b].add(a)
    seen, stack = {next(iter(verts))}, [next(iter(verts))]
    while stack:
        for z in adj[stack.pop()]:
            if z not in seen:
                seen.add(z)
                stack.append(z)
    assert seen == verts
    for v in tree.steiner.tolist():
        assert len(adj[v]) >= 2, "a Steiner leaf was left"


def test_case_a_cuts_the_edge_to_the_heaviest_subtree():
    # k=3, M=5: path 0-1-2-3-4-5 (s=6). Rooted at 2: subtrees {0,1} (2) and {3,4,5} (3).
    dec = _dec(6, [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)], 3)
    dec.split(0, 6, candidate=2)
    log = dec.splits[-1]
    assert (log["case"], log["walk"], log["phi"]) == ("a", 0, 3)
    assert _pieces(dec) == [([0, 1, 2], []), ([3, 4, 5], [])]


def test_case_b_moves_v_and_leaves_a_steiner_copy():
    # k=3: 1-0-2, and 2 has the subtrees 3-4 and 5-6 (s=7 > 5). From 0: phi=5 (v=2), s-phi=2=k-1.
    dec = _dec(7, [(1, 0), (0, 2), (2, 3), (3, 4), (2, 5), (5, 6)], 3)
    dec.split(0, 7, candidate=0)
    assert dec.splits[-1]["case"] == "b"
    assert _pieces(dec) == [([0, 1, 2], []), ([3, 4, 5, 6], [2])]
    for t in dec.trees():
        _check_tree(dec, t)
    # The Steiner copy of 2 keeps the original edges 2-3 and 2-5.
    steiner_tree = [t for t in dec.trees() if t.steiner.size][0]
    assert sorted(map(tuple, steiner_tree.edges.tolist())) == [(2, 3), (2, 5), (3, 4), (5, 6)]


def test_case_c_moves_u_into_the_subtree_of_size_k_minus_1():
    # k=3: 0 with three chains 0-1-2, 0-3-4, 0-5-6 (s=7): phi=2=k-1 at u=0.
    dec = _dec(7, [(1, 0), (2, 1), (3, 0), (4, 3), (5, 0), (6, 5)], 3)
    dec.split(0, 7, candidate=0)
    assert dec.splits[-1]["case"] == "c"
    assert _pieces(dec) == [([0, 1, 2], []), ([3, 4, 5, 6], [0])]
    for t in dec.trees():
        _check_tree(dec, t)


@pytest.mark.parametrize("extra,expected", [
    # k=4 (M=7): u=0 with four chains of 2 (s=9): first piece = two chains (4) + u, second 4 + u'.
    ([(7, 0), (8, 7)], [([0, 1, 2, 3, 4], []), ([5, 6, 7, 8], [0])]),
    # s=8 with chains 2,2,2 and a leaf: first = 4, second = 3 = k-1, so u joins the second.
    ([(7, 0)], [([0, 5, 6, 7], []), ([1, 2, 3, 4], [0])]),
])
def test_case_d_groups_small_subtrees_and_places_u(extra, expected):
    edges = [(1, 0), (2, 1), (3, 0), (4, 3), (5, 0), (6, 5)] + extra
    n = 1 + max(max(e) for e in edges)
    dec = _dec(n, edges, 4)
    dec.split(0, n, candidate=0)
    log = dec.splits[-1]
    assert log["case"] == "d"
    assert _pieces(dec) == expected
    for t in dec.trees():
        _check_tree(dec, t)


def test_step_5_walks_towards_the_heaviest_subtree():
    # k=3: path 0-1-...-7 from the end 0: s-phi=1 < k-1, so the candidate moves to 1.
    # There s-phi = 2 = k-1: case (b) with v=2; the copy 2' would be a Steiner leaf and goes.
    dec = _dec(8, [(i, i + 1) for i in range(7)], 3)
    dec.split(0, 8, candidate=0)
    log = dec.splits[-1]
    assert (log["walk"], log["stop"], log["case"]) == (1, 1, "b")
    assert _pieces(dec) == [([0, 1, 2], []), ([3, 4, 5, 6, 7], [])]


def test_steiner_hub_with_small_subtrees_needs_a_vertex_split():
    # k=3: Steiner hub h (copy of record 9) with six leaves, s=6 > 5: the paper's case (d)
    # would move h, which counts for nothing. The hub is split instead: 3 + 3 leaves.
    n = 10
    h = n
    dec = _dec(n, [(i, h) for i in range(6)], 3, steiner={h: 9})
    dec.split(0, 6, candidate=0)
    log = dec.splits[-1]
    assert log["case"] == "vertex-split" and log["paper_case"] == "d"
    trees = [t for t in dec.trees() if t.records.size and t.records.max() < 6]
    assert sorted(t.size for t in trees) == [3, 3]
    assert all(t.steiner.tolist() == [9] for t in trees)


def test_steiner_v_in_case_b_is_resolved_at_another_vertex():
    # k=3: 1-0-h, h a Steiner hub (copy of record 8) with chains 2-3, 4-5, 6-7 (s=8 > 5).
    # From 0: phi=6 at v=h, s-phi=2=k-1: case (b) would move h. The split happens at h.
    n, h = 9, 9
    edges = [(1, 0), (0, h), (h, 2), (2, 3), (h, 4), (4, 5), (h, 6), (6, 7)]
    dec = _dec(n, edges, 3, steiner={h: 8})
    dec.split(0, 8, candidate=0)
    log = dec.splits[-1]
    assert log["case"] == "vertex-split" and log["paper_case"] == "b"
    sizes = sorted(t.size for t in dec.trees() if t.records.min() < 8)
    assert sizes == [4, 4]
    for t in dec.trees():
        if t.records.min() < 8:
            _check_tree(dec, t)
            assert t.steiner.tolist() == [8]


def test_paper_gap_no_vertex_split_exists_so_tour_split():
    # The gap of Procedure 2 (see the module notes): k=3, Steiner hub h with three chains
    # of two records (s=6 > M=5). Every split into two connected pieces sharing at most one
    # vertex leaves a piece with fewer than 3 records, so the tour split is used.
    n, h = 7, 7
    edges = [(0, h), (0, 1), (2, h), (2, 3), (4, h), (4, 5)]
    dec = _dec(n, edges, 3, steiner={h: 6})
    dec.split(0, 6, candidate=0)
    log = dec.splits[-1]
    assert log["case"] == "tour-split"
    trees = [t for t in dec.trees() if t.records.min() < 6]
    assert sorted(t.size for t in trees) == [3, 3]
    for t in trees:
        _check_tree(dec, t)
    assert dec.duplicated_edges >= 1


def test_the_gap_arises_from_a_forest_tree_of_real_records():
    # Hub 0 with four chains of two (k=3, s=9): the paper's (b)/(c) leave a Steiner hub with
    # three chains (s=6), which no connected split can handle (previous test). The whole
    # procedure still ends with trees of 3..5 records.
    edges = [(1, 0), (2, 1), (3, 0), (4, 3), (5, 0), (6, 5), (7, 0), (8, 7)]
    dec = _dec(9, edges, 3)
    dec.decompose([0])
    sizes = sorted(t.size for t in dec.trees())
    assert sum(sizes) == 9 and min(sizes) >= 3 and max(sizes) <= max_tree_size(3)
    assert dec.cases["tour-split"] + dec.cases["vertex-split"] >= 1


@pytest.mark.parametrize("k", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("seed", range(12))
def test_decompose_random_trees_keeps_sizes_and_shapes(k, seed):
    rng = np.random.default_rng(1000 * k + seed)
    n = int(rng.integers(max_tree_size(k) + 1, 80))
    parents = [int(rng.integers(0, i)) if rng.random() < 0.6 else int(rng.integers(max(0, i - 3), i))
               for i in range(1, n)]
    edges = [(i, p) for i, p in zip(range(1, n), parents)]
    for randomized in (False, True):
        dec = _dec(n, edges, k, rng=np.random.default_rng(seed) if randomized else None)
        dec.decompose([0])
        trees = dec.trees()
        assert sorted(np.concatenate([t.records for t in trees]).tolist()) == list(range(n))
        original = {tuple(sorted(e)) for e in edges}
        used = []
        for t in trees:
            assert k <= t.size <= max_tree_size(k)
            _check_tree(dec, t)
            used += [tuple(sorted(e)) for e in t.edges.tolist()]
        assert set(used) <= original
        if not dec.cases["tour-split"]:
            assert len(used) == len(set(used)), "an edge in two trees without a tour split"
