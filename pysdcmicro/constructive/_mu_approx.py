"""mu-Approx: the polynomial-time approximation of Domingo-Ferrer, Sebe and Solanas (2008).

The algorithm (their Section 3), on the records as vertices of a graph with no edges:

1. FOREST (their Procedure 1, from Aggarwal et al. 2005): while some component has fewer
   than k vertices, pick such a component T; its one vertex u without an outgoing edge
   gets an edge to a vertex v outside T among u's k-1 nearest neighbours (T has at most
   k-2 other vertices, so one of them lies outside). The result is a forest of
   in-trees, every tree with at least k vertices, every vertex with out-degree <= 1.
2. DECOMPOSE-COMPONENT (their Procedure 2): while a tree has s > M = max(2k-1, 3k-5)
   real vertices, pick a candidate vertex u; root the tree at u; let phi be the weight of
   the heaviest subtree, rooted at v. If s - phi < k-1, move to v and repeat (step 5).
   Otherwise split the tree in two pieces of at least k real vertices each:

   (a) phi >= k and s - phi >= k: cut the edge u-v;
   (b) s - phi = k-1: v joins the rest (k real vertices); the subtrees of v's children
       stay together, joined by a *Steiner* copy v' of v that counts for nothing;
   (c) phi = k-1: u joins v's subtree (k real vertices); a Steiner copy u' joins u's
       other subtrees;
   (d) otherwise every subtree has at most k-2: subtrees are added to a first piece until
       it has at least k-1; the others form a second piece; u goes to the piece with
       exactly k-1 (else to the first) and a Steiner copy u' to the other one.

   Taking the trees as groups gives a k-partition P with k..M records per group.
3. A group of more than 2k-1 records (possible for k >= 5) is split by the MDAV
   bipartition: the record farthest from the group centroid and its k-1 nearest
   neighbours form one group, the other k..2k-5 records the second one. This is one MDAV
   round, computed with :func:`~pysdcmicro.constructive.mdav_labels` on the group.

Where the paper leaves a gap, and what we do
--------------------------------------------
Procedure 2 counts only real vertices, but its cases (b), (c) and (d) need the vertex
that changes sides (v in (b), u in (c) and (d)) to be *real*. Once a piece holds a
Steiner vertex, a later split can stop exactly there. It happens on FOREST outputs: for
k = 3, a hub u with four two-record chains (s = 9) splits by (b) or (c) into {u, a1, a2}
and a Steiner hub u' with three two-record chains (s = 6 > 5), and *no* split of that
tree into two connected pieces of >= 3 real records exists. We therefore extend the
procedure (and count every use in ``cases``):

* ``"vertex-split"``: when the paper's case would move a Steiner vertex, we search every
  vertex y of the tree (the stop vertex first) for a grouping of y's subtrees into two
  pieces of at least k real records each (subset sums over the subtree weights), with y
  real in one piece and a Steiner copy in the other. Every edge stays in exactly one
  tree, as in the paper's cases, so the forest's total edge length still bounds the
  trees' (their Lemma 2).
* ``"tour-split"``: if no vertex admits such a split, the first k real records of a
  depth-first discovery order from the stop vertex (every vertex after its parent, so
  the prefix is connected) are split off and the rest is reconnected
  through Steiner copies of their ancestors; the edges on that path are then used by
  both pieces and Lemma 2's premise fails for that run (``info["edges_used_once"]``
  says so).

The paper's Theorem 2 factor 2(2k-1)M^2 is reported as information. We did not re-prove
it: its Lemma 4 (eq. 17) charges each tree's edges to the tree's own records, which an
edge out of a Steiner copy does not satisfy even in the paper's own cases. The tests check
the Lemma 2 chain (total tree length <= sum of distances to the (k-1)-th neighbour) and
SSE(P) <= factor x SSE_opt against exact optima on small sets.

Steiner vertices left as leaves (degree <= 1) connect nothing and are removed, so every
leaf is real and every subtree holds at least one real record.

Choices (the paper leaves them open: "random or some prescribed rule"):

* FOREST visits the records in an order and extends the component of each visited record
  until it has k vertices; the order is the row order (fixed rule) or a uniformly random
  permutation (randomized, the paper's Section 6 version). v is always u's nearest
  neighbour outside T (ties as the KD-tree returns them). Picking v at random among the
  k-1 neighbours outside T instead gives clearly worse IL than the paper's Table 5
  (Census k=10: 21.7 against 17.01), so we link to the nearest one.
* DECOMPOSE-COMPONENT's first candidate is a uniformly random real record of the tree
  (randomized) or the tree's centroid, the vertex whose heaviest subtree is lightest
  (fixed rule; then the walk of step 5 never moves and a long path is halved, which keeps
  the fixed rule fast on the giant trees that row order can make on sorted data). Case
  (d) adds the subtrees in random order (randomized) or by increasing record number of
  their root. The heaviest subtree's ties go to the lowest record number. The order in
  which trees are decomposed does not change them (trees are independent).

Complexity: the k-1 nearest neighbours of every record come from a KD-tree (scipy's
``cKDTree``), O(n log n) expected time for low d, O(n k) memory; FOREST is near-linear
(union-find); DECOMPOSE costs O(s) per split of a tree of s records, so O(s^2 / k) per tree
at worst (a hub with many small subtrees; FOREST trees have at most a few hundred records
on the CASC sets); step 3 is O(k^2 d) per split group. No n x n matrix is ever built.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from .._context import Context
from .._registry import register_method
from .._result import Solution
from .._validation import _fmt
from .._errors import InvalidTypeError
from ._mdav import mdav_labels

__all__ = ["mu_approx_structure", "MuApproxStructure", "SteinerTree", "max_tree_size", "approximation_factor"]

_CASES = ("a", "b", "c", "d", "vertex-split", "tour-split")


def max_tree_size(k: int) -> int:
    """Largest tree DECOMPOSE-COMPONENT leaves: ``max(2k - 1, 3k - 5)``.

    Examples
    --------
    >>> [max_tree_size(k) for k in (2, 3, 4, 5, 10)]
    [3, 5, 7, 10, 25]
    """
    return max(2 * k - 1, 3 * k - 5)


def approximation_factor(k: int, criterion: str = "sse") -> int:
    """Worst-case approximation factor of the step-2 partition P (Domingo-Ferrer et al. 2008).

    ``"sse"``: Theorem 2, ``SSE(P) <= 2 (2k-1) max(2k-1, 3k-5)^2 SSE_opt``.
    ``"euclidean"``: Theorem 1, ``SDE(P) <= (2k-1) max(2k-1, 3k-5) SDE_opt`` (sums of
    Euclidean distances to the centroids).

    Examples
    --------
    >>> approximation_factor(3), approximation_factor(3, "euclidean")
    (250, 25)
    """
    m = max_tree_size(k)
    if criterion == "sse":
        return 2 * (2 * k - 1) * m * m
    if criterion == "euclidean":
        return (2 * k - 1) * m
    raise ValueError(f"`criterion` must be 'sse' or 'euclidean'; got {criterion!r}.")


# --------------------------------------------------------------------------- neighbours
def nearest_neighbours(Z: np.ndarray, m: int) -> np.ndarray:
    """Row positions of the ``m`` nearest other records of every record, nearest first.

    A KD-tree (``scipy.spatial.cKDTree``) answers the queries: O(n log n) expected time in
    low dimension, O(n m) memory. With exact duplicates the record itself may not be among
    the returned points (all at distance 0); then the farthest returned point is dropped.

    Examples
    --------
    >>> Z = np.array([[0.0], [1.0], [3.0], [7.0]])
    >>> nearest_neighbours(Z, 2).tolist()
    [[1, 2], [0, 2], [1, 0], [2, 1]]
    """
    from scipy.spatial import cKDTree

    n = Z.shape[0]
    if m <= 0:
        return np.empty((n, 0), dtype=np.int64)
    tree = cKDTree(Z)
    _, idx = tree.query(Z, k=m + 1)
    idx = np.asarray(idx, dtype=np.int64).reshape(n, m + 1)
    rows = np.arange(n)[:, None]
    is_self = idx == rows
    # Drop the record itself where it was returned, else the last (farthest) neighbour.
    drop = np.where(is_self.any(axis=1), is_self.argmax(axis=1), m)
    keep = np.ones_like(idx, dtype=bool)
    keep[np.arange(n), drop] = False
    return idx[keep].reshape(n, m)


# --------------------------------------------------------------------------- FOREST
def forest(neighbours: np.ndarray, k: int, rng: np.random.Generator | None = None) -> np.ndarray:
    """Procedure FOREST: the out-neighbour of every record (-1 for a tree's root).

    Parameters
    ----------
    neighbours : ndarray (n, k-1)
        The k-1 nearest other records of every record, nearest first.
    k : int
    rng : Generator or None
        The records are visited in order (``None``: by row number; a Generator: in a
        uniformly random order) and the component of each visited record is extended
        until it has k vertices. So the component extended next is the one of the first
        record, in that order, whose component is still smaller than k.

    Returns
    -------
    out : ndarray of int64, shape (n,)
        ``out[u] = v`` for the edge (u, v); -1 for the one vertex of each tree without an
        outgoing edge. Edges never close a cycle; every tree has at least k vertices when
        n >= k.

    Examples
    --------
    >>> nb = nearest_neighbours(np.array([[0.0], [1.0], [2.0], [10.0], [11.0], [12.0]]), 2)
    >>> forest(nb, 3).tolist()
    [1, 2, -1, 4, 5, -1]
    """
    n = neighbours.shape[0]
    out = np.full(n, -1, dtype=np.int64)
    if n < k:
        raise ValueError(f"FOREST needs at least k={k} records; got {n}")
    parent = list(range(n))      # union-find
    size = [1] * n               # by representative
    root = list(range(n))        # by representative: the vertex without an outgoing edge
    nb = neighbours.tolist()

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def target(c: int) -> int:
        """Nearest neighbour of component c's root outside c."""
        for w in nb[root[c]]:
            if find(w) != c:
                return w
        raise RuntimeError("FOREST found no neighbour outside a component smaller than k")

    def union(c: int, c2: int) -> int:
        """Merge c (whose root now points into c2) into c2; the root of c2 stays root."""
        if size[c] < size[c2]:
            parent[c] = c2
            size[c2] += size[c]
            return c2
        parent[c2] = c
        size[c] += size[c2]
        root[c] = root[c2]
        return c

    for i in (range(n) if rng is None else rng.permutation(n).tolist()):
        c = find(i)
        while size[c] < k:
            v = target(c)
            out[root[c]] = v
            c = union(c, find(v))
    return out


# --------------------------------------------------------------------------- DECOMPOSE
@dataclass
class SteinerTree:
    """One tree left by DECOMPOSE-COMPONENT (a group of the step-2 partition P).

    Attributes
    ----------
    records : ndarray of int64
        Row positions of the real records of the tree (its group), ascending.
    steiner : ndarray of int64
        Row positions of the records of which the tree holds a Steiner copy (a vertex
        that connects the tree but belongs to another group).
    edges : ndarray of int64, shape (m, 2)
        The tree's edges as pairs of row positions (each endpoint is one of ``records`` or
        ``steiner``). Each is a FOREST edge (u, v) of the records, written (u, v).
    """

    records: np.ndarray
    steiner: np.ndarray
    edges: np.ndarray

    @property
    def size(self) -> int:
        return int(self.records.size)


class _Decomposer:
    """Trees with real and Steiner vertices, split by Procedure 2 (and our extension).

    Vertices are integer ids: 0..n-1 the records, n.. the Steiner copies (``rec`` gives
    the record a vertex stands for). Pieces stay disconnected from each other in ``adj``,
    so a tree is the connected component of any of its vertices.
    """

    def __init__(self, n: int, edges, k: int, rng: np.random.Generator | None,
                 steiner: dict | None = None):
        self.n = n
        self.k = k
        self.M = max_tree_size(k)
        self.rng = rng
        self.rec: list[int] = list(range(n))
        self.adj: list[set] = [set() for _ in range(n)]
        for node, record in sorted((steiner or {}).items()):  # given Steiner vertices (tests)
            if node != len(self.rec):
                raise ValueError("Steiner vertices must be numbered n, n+1, ...")
            self.rec.append(int(record))
            self.adj.append(set())
        # Edges by (min id, max id) -> the FOREST edge (u, v) of records it stands for.
        self.origin: dict[tuple[int, int], tuple[int, int]] = {}
        for u, v in edges:
            u, v = int(u), int(v)
            self.adj[u].add(v)
            self.adj[v].add(u)
            self.origin[(min(u, v), max(u, v))] = (self.rec[u], self.rec[v])
        self.cases: Counter = Counter()
        self.splits: list[dict] = []
        self.duplicated_edges = 0

    # -- helpers ---------------------------------------------------------------------
    def real(self, x: int) -> bool:
        return x < self.n

    def _move_edge(self, a: int, b: int, a_new: int) -> None:
        """Replace edge a-b by a_new-b (a_new a copy of a)."""
        self.adj[a].discard(b)
        self.adj[b].discard(a)
        self.adj[a_new].add(b)
        self.adj[b].add(a_new)
        key = (min(a, b), max(a, b))
        self.origin[(min(a_new, b), max(a_new, b))] = self.origin.pop(key)

    def _copy(self, x: int) -> int:
        """A new Steiner vertex standing for record rec[x]."""
        self.rec.append(self.rec[x])
        self.adj.append(set())
        return len(self.rec) - 1

    def _prune(self, x: int) -> None:
        """Remove Steiner leaves (degree <= 1) starting at x, walking inwards."""
        while x >= self.n and len(self.adj[x]) <= 1:
            nxt = next(iter(self.adj[x]), None)
            if nxt is not None:
                self.adj[nxt].discard(x)
                del self.origin[(min(x, nxt), max(x, nxt))]
            self.adj[x] = set()
            if nxt is None:
                return
            x = nxt

    def component(self, x: int) -> list[int]:
        seen = {x}
        stack = [x]
        out = []
        while stack:
            y = stack.pop()
            out.append(y)
            for z in self.adj[y]:
                if z not in seen:
                    seen.add(z)
                    stack.append(z)
        return out

    def _rooted(self, r: int):
        """Rooted at r: vertices in depth-first discovery order (each after its parent),
        parent of each, and the number of real vertices of each subtree."""
        parent = {r: -1}
        order = [r]
        stack = [r]
        while stack:
            y = stack.pop()
            for z in sorted(self.adj[y]):
                if z not in parent:
                    parent[z] = y
                    order.append(z)
                    stack.append(z)
        sub = {}
        for y in reversed(order):
            sub[y] = sub.get(y, 0) + (1 if y < self.n else 0)
            p = parent[y]
            if p >= 0:
                sub[p] = sub.get(p, 0) + sub[y]
        return order, parent, sub

    @staticmethod
    def _branches(x: int, s: int, parent: dict, sub: dict, adj: set) -> list[tuple[int, int]]:
        """(weight, root) of every subtree hanging at x when the tree is rooted at x."""
        out = []
        for y in adj:
            out.append((s - sub[x], y) if y == parent[x] else (sub[y], y))
        return out

    def _key(self, y: int) -> tuple[int, int]:
        return (self.rec[y], y)

    # -- the split primitive -----------------------------------------------------------
    def _vertex_split(self, x: int, group: set, x_with_group: bool) -> int:
        """Split the tree at x: the subtrees rooted at ``group`` (neighbours of x) form one
        piece, the other subtrees the other piece. x stays itself on one side (with the
        group if ``x_with_group``) and a Steiner copy x' joins the other side. Returns x'."""
        xc = self._copy(x)
        movers = group if not x_with_group else (self.adj[x] - group)
        for y in sorted(movers):
            self._move_edge(x, y, xc)
        self._prune(xc)
        self._prune(x)
        return xc

    # -- Procedure 2 -----------------------------------------------------------------
    def decompose(self, starts) -> None:
        """Split every tree holding one of ``starts`` until all have <= M real vertices."""
        stack = []
        for x in starts:
            nodes = self.component(x)
            stack.append((x, sum(1 for y in nodes if y < self.n)))
        while stack:
            x, s = stack.pop()
            if s <= self.M:
                continue
            a, wa, b, wb = self.split(x, s)
            stack.append((b, wb))
            stack.append((a, wa))

    def centroid(self, s: int, order, parent, sub) -> int:
        """The vertex whose heaviest subtree is lightest (ties: lowest record number)."""
        best, best_key = -1, None
        for y in order:
            heaviest = s - sub[y]
            for z in self.adj[y]:
                if z != parent[y] and sub[z] > heaviest:
                    heaviest = sub[z]
            key = (heaviest, self.rec[y], y)
            if best_key is None or key < best_key:
                best, best_key = y, key
        return best

    def split(self, start: int, s: int, candidate: int | None = None):
        """One iteration of Procedure 2 on the tree holding ``start`` (s > M real vertices).

        Returns (vertex of piece 1, its real weight, vertex of piece 2, its real weight);
        both weights are >= k."""
        k = self.k
        nodes = self.component(start)
        reals = sorted(y for y in nodes if y < self.n)
        if candidate is not None:
            u = candidate
        elif self.rng is not None:   # randomized: a uniformly random real vertex
            u = reals[int(self.rng.integers(len(reals)))]
        else:
            u = -1                   # fixed rule: the centroid, found below
        order, parent, sub = self._rooted(u if u >= 0 else reals[0])
        if sub[order[0]] != s:
            raise RuntimeError(f"tree weight {sub[order[0]]} != {s}")
        if u < 0:
            u = self.centroid(s, order, parent, sub)
        anyreal = {}
        for y in reversed(order):  # a real vertex in every subtree (every leaf is real)
            if y < self.n:
                anyreal[y] = y
            p = parent[y]
            if p >= 0 and y in anyreal and p not in anyreal:
                anyreal[p] = anyreal[y]

        def inside(y: int, at: int) -> int:
            """A real vertex of the subtree rooted at neighbour y of ``at``."""
            if y == parent[at]:  # the side of the root: any real vertex outside at's subtree
                return next(z for z in order if z < self.n and not self._below(z, at, parent))
            return anyreal[y]

        # Steps 3 and 5: walk towards the heaviest subtree until s - phi >= k - 1.
        x, walk = u, 0
        while True:
            br = self._branches(x, s, parent, sub, self.adj[x])
            phi, v = min(br, key=lambda t: (-t[0], self._key(t[1])))
            if s - phi >= k - 1:
                break
            x, walk = v, walk + 1
        log = {"candidate": self.rec[u], "walk": walk, "stop": self.rec[x], "stop_real": self.real(x),
               "phi": phi, "s": s}
        if phi >= k and s - phi >= k:                       # (a) cut the edge x-v
            case, h1 = "a", inside(v, x)
            self._vertex_split(x, {v}, x_with_group=False)
        elif s - phi == k - 1 and self.real(v):             # (b) v joins the rest, v' its children
            case, h1 = "b", v
            self._vertex_split(v, self.adj[v] - {x}, x_with_group=False)
        elif phi == k - 1 and self.real(x):                 # (c) x joins v's subtree, x' the rest
            case, h1 = "c", x
            self._vertex_split(x, {v}, x_with_group=True)
        elif phi <= k - 2 and s - phi >= k and self.real(x):  # (d) group the small subtrees
            case = "d"
            if self.rng is None:
                br.sort(key=lambda t: self._key(t[1]))
            else:
                br = [br[i] for i in self.rng.permutation(len(br))]
            first, g1 = set(), 0
            for w, y in br:
                if g1 >= k - 1:
                    break
                first.add(y)
                g1 += w
            g2 = s - 1 - g1
            with_first = g2 != k - 1   # x joins the piece with exactly k-1, else the first
            log["groups"] = (g1, g2)
            weight_of = {r: w for w, r in br}
            h1 = x if with_first else inside(max(first, key=weight_of.get), x)
            self._vertex_split(x, first, x_with_group=with_first)
        else:
            # The paper's case would move a Steiner vertex: our extension (module notes).
            log["paper_case"] = "b" if s - phi == k - 1 else ("c" if phi == k - 1 else "d")
            found = self._general_vertex_split(x, s, order, parent, sub)
            if found is not None:
                case, h1 = "vertex-split", found
            else:
                case, h1 = "tour-split", self._tour_split(x, s)
        log["case"] = case
        return self._pieces(nodes, h1, s, case, log)

    @staticmethod
    def _below(z: int, at: int, parent: dict) -> bool:
        """Whether z lies in the subtree of ``at`` (rooted tree given by ``parent``)."""
        while z >= 0:
            if z == at:
                return True
            z = parent[z]
        return False

    def _pieces(self, nodes, h1: int, s: int, case: str, log: dict):
        piece1 = set(self.component(h1))
        w1 = sum(1 for y in piece1 if y < self.n)
        rest = [y for y in nodes if y < self.n and y not in piece1]
        w2 = len(rest)
        if w1 < self.k or w2 < self.k or w1 + w2 != s or \
                sum(1 for y in self.component(rest[0]) if y < self.n) != w2:
            raise RuntimeError(f"DECOMPOSE case {case} produced pieces of {w1} and {w2} records from {s}")
        log["sizes"] = (w1, w2)
        self.cases[case] += 1
        self.splits.append(log)
        return h1, w1, rest[0], w2

    def _general_vertex_split(self, x: int, s: int, order, parent, sub) -> int | None:
        """Search every vertex y (x first, then the others in discovery order)
        for a grouping of y's subtrees into two pieces of >= k real vertices; y real joins
        one piece and a Steiner copy the other. Splits and returns a real vertex of the
        smaller piece, or returns None when no vertex admits such a split."""
        k = self.k
        for y in [x] + [z for z in order if z != x]:
            br = sorted(self._branches(y, s, parent, sub, self.adj[y]), key=lambda t: self._key(t[1]))
            w = 1 if y < self.n else 0
            # reachable subset sums of the branch weights, with one witness subset each
            reach = {0: ()}
            for i, (bw, _) in enumerate(br):
                for t, items in list(reach.items()):
                    if t + bw not in reach:
                        reach[t + bw] = items + (i,)
            best = None
            for t, items in reach.items():
                for with_group in ((True, False) if w else (False,)):
                    g = t + (w if with_group else 0)
                    if g >= k and s - g >= k and 0 < len(items) < len(br):
                        key = (min(g, s - g), t)
                        if best is None or key < best[0]:
                            best = (key, items, with_group, g)
            if best is None:
                continue
            _, items, with_group, g = best
            group = {br[i][1] for i in items}
            if with_group and w:
                handle = y
            else:
                bw, root = br[items[0]]
                handle = self._real_in(root, y)
            self._vertex_split(y, group, x_with_group=with_group)
            return handle
        return None

    def _real_in(self, root: int, at: int) -> int:
        """A real vertex in the subtree rooted at ``root`` away from its neighbour ``at``."""
        seen = {at, root}
        stack = [root]
        while stack:
            y = stack.pop()
            if y < self.n:
                return y
            for z in self.adj[y]:
                if z not in seen:
                    seen.add(z)
                    stack.append(z)
        raise RuntimeError("a subtree without a real vertex")

    def _tour_split(self, x: int, s: int) -> int:
        """Last resort: root at x, split off the depth-first preorder prefix holding the
        first k real vertices (connected); reconnect the rest through Steiner copies of the
        prefix vertices on the path from x to the prefix's last vertex."""
        k = self.k
        order, parent, _ = self._rooted(x)
        prefix, count = [], 0
        for y in order:
            prefix.append(y)
            count += y < self.n
            if count == k:
                break
        in_prefix = set(prefix)
        rest = [y for y in order if y not in in_prefix]
        need = set()
        for z in rest:  # the prefix vertices the rest hangs from, and their ancestors
            p = parent[z]
            while p >= 0 and p in in_prefix and p not in need:
                need.add(p)
                p = parent[p]
        copy = {a: self._copy(a) for a in sorted(need)}
        for z in rest:
            p = parent[z]
            if p in in_prefix:
                self._move_edge(p, z, copy[p])
        for a in sorted(need):
            p = parent[a]
            if p >= 0:  # duplicate the edge a-p for the rest's piece
                key = self.origin[(min(a, p), max(a, p))]
                ca, cp = copy[a], copy[p]
                self.adj[ca].add(cp)
                self.adj[cp].add(ca)
                self.origin[(min(ca, cp), max(ca, cp))] = key
        for a in sorted(need):
            self._prune(copy[a])
        copies = set(copy.values())
        self.duplicated_edges += sum(1 for c in copies for b in self.adj[c] if b in copies and b > c)
        for a in prefix:
            if a >= self.n:
                self._prune(a)
        return next(y for y in prefix if y < self.n)

    # -- output ------------------------------------------------------------------------
    def trees(self) -> list[SteinerTree]:
        """The trees, in order of their lowest record."""
        out = []
        seen = set()
        for x in range(self.n):
            if x in seen:
                continue
            nodes = self.component(x)
            seen.update(nodes)
            recs = np.array(sorted(z for z in nodes if z < self.n), dtype=np.int64)
            stein = np.array(sorted(self.rec[z] for z in nodes if z >= self.n), dtype=np.int64)
            edges = sorted(self.origin[(a, b)] for a in nodes for b in self.adj[a] if a < b)
            out.append(SteinerTree(recs, stein, np.array(edges, dtype=np.int64).reshape(-1, 2)))
        return out


# --------------------------------------------------------------------------- the algorithm
@dataclass
class MuApproxStructure:
    """Every intermediate result of mu-Approx, for inspection and tests.

    Attributes
    ----------
    k, max_tree_size : int
        k and M = max(2k-1, 3k-5), the largest tree DECOMPOSE-COMPONENT leaves.
    neighbours : ndarray of int64, shape (n, k-1)
        The k-1 nearest other records of each record, nearest first (the only edge
        targets FOREST may use).
    forest_edges : ndarray of int64, shape (m, 2)
        FOREST's directed edges (u, v), one per record with an outgoing edge, by u.
    forest_labels : ndarray of int64, shape (n,)
        Tree of each record after FOREST (trees numbered by their lowest record).
    trees : list of SteinerTree
        The trees after DECOMPOSE-COMPONENT (with their Steiner vertices and edges).
    tree_labels : ndarray of int64, shape (n,)
        The step-2 k-partition P (the trees as groups), groups of k..M records.
    labels : ndarray of int64, shape (n,)
        The final k-partition P' (step 3), groups of k..2k-1 records.
    cases : dict
        How many splits each case of DECOMPOSE-COMPONENT made: ``"a"``, ``"b"``,
        ``"c"``, ``"d"`` (the paper's) and ``"vertex-split"``, ``"tour-split"`` (our
        extension where the paper would move a Steiner vertex; see the module notes).
    splits : list of dict
        One entry per split: the first candidate, walk length, stop vertex (and whether
        it is real), phi, s, the case and the two piece sizes.
    duplicated_edges : int
        Edges used by two trees (only after a ``"tour-split"``).
    seconds : dict
        Wall time of each step: ``neighbours`` (KD-tree), ``forest``, ``decompose``,
        ``step3``.
    """

    k: int
    max_tree_size: int
    neighbours: np.ndarray
    forest_edges: np.ndarray
    forest_labels: np.ndarray
    trees: list
    tree_labels: np.ndarray
    labels: np.ndarray
    cases: dict = field(default_factory=dict)
    splits: list = field(default_factory=list)
    duplicated_edges: int = 0
    seconds: dict = field(default_factory=dict)

    @property
    def forest_sizes(self) -> np.ndarray:
        """Number of records of each FOREST tree."""
        return np.bincount(self.forest_labels)

    @property
    def tree_sizes(self) -> np.ndarray:
        """Group sizes of the step-2 partition P (before the step-3 split)."""
        return np.bincount(self.tree_labels)

    @property
    def group_sizes(self) -> np.ndarray:
        """Group sizes of the final partition P'."""
        return np.bincount(self.labels)

    @property
    def edges_used_once(self) -> bool:
        """Whether every FOREST edge lies in at most one tree (false only after a tour
        split), the premise of the paper's Lemma 2 behind Theorems 1 and 2."""
        return self.duplicated_edges == 0 and not self.cases.get("tour-split", 0)


def _forest_labels(out: np.ndarray) -> np.ndarray:
    """Tree of every record, from the out-neighbours (roots have -1); trees numbered by
    their lowest record."""
    n = out.size
    root = np.full(n, -1, dtype=np.int64)
    nxt = out.tolist()
    for i in range(n):
        path = []
        x = i
        while root[x] < 0 and nxt[x] >= 0:
            path.append(x)
            x = nxt[x]
        r = root[x] if root[x] >= 0 else x
        root[x] = r
        for y in path:
            root[y] = r
    from .._partition import canonical_labels

    return canonical_labels(root)


def _run(Z: np.ndarray, k: int, rng: np.random.Generator | None) -> MuApproxStructure:
    """mu-Approx on standardized data; ``rng=None`` is the fixed rule."""
    import scipy.spatial  # noqa: F401  (imported before the clock starts: ~0.3 s once)

    n = Z.shape[0]
    M = max_tree_size(k)
    clock = [time.perf_counter()]

    def lap() -> float:
        clock.append(time.perf_counter())
        return clock[-1] - clock[-2]

    nb = nearest_neighbours(Z, k - 1)
    t_nb = lap()
    out = forest(nb, k, rng)
    t_forest = lap()
    src = np.flatnonzero(out >= 0)
    edges = np.column_stack([src, out[src]]).astype(np.int64).reshape(-1, 2)
    forest_labels = _forest_labels(out)
    dec = _Decomposer(n, edges.tolist(), k, rng)
    dec.decompose(np.flatnonzero(out < 0).tolist())
    trees = dec.trees()
    t_dec = lap()
    tree_labels = np.empty(n, dtype=np.int64)
    for g, t in enumerate(trees):
        tree_labels[t.records] = g
    # Step 3: the MDAV bipartition of every group above 2k-1 (k >= 5 only).
    labels = tree_labels.copy()
    nxt = len(trees)
    for t in trees:
        if t.size > 2 * k - 1:
            sub = mdav_labels(np.ascontiguousarray(Z[t.records]), k)
            for j in range(1, int(sub.max()) + 1):
                labels[t.records[sub == j]] = nxt
                nxt += 1
    from .._partition import canonical_labels

    t_step3 = lap()
    return MuApproxStructure(
        k=k, max_tree_size=M, neighbours=nb, forest_edges=edges, forest_labels=forest_labels,
        trees=trees, tree_labels=tree_labels, labels=canonical_labels(labels),
        cases={c: int(dec.cases.get(c, 0)) for c in _CASES}, splits=dec.splits,
        duplicated_edges=int(dec.duplicated_edges),
        seconds={"neighbours": t_nb, "forest": t_forest, "decompose": t_dec, "step3": t_step3},
    )


def _check_randomized(randomized) -> bool:
    if not isinstance(randomized, (bool, np.bool_)):
        raise InvalidTypeError(f"`randomized` must be True or False; got {_fmt(randomized)}.")
    return bool(randomized)


@register_method("mu-approx", summary="mu-Approx: FOREST + DECOMPOSE-COMPONENT (Steiner trees) + MDAV split; "
                 "a worst-case SSE factor 2(2k-1)max(2k-1,3k-5)^2 (Domingo-Ferrer, Sebe, Solanas 2008)", randomized=True)
def _mu_approx_solver(Z: np.ndarray, k: int, ctx: Context, *, randomized: bool = True) -> Solution:
    randomized = _check_randomized(randomized)
    st = _run(Z, k, ctx.rng if randomized else None)
    sizes_p = st.tree_sizes
    info = {
        "randomized": randomized,
        "max_tree_size": st.max_tree_size,
        "forest_trees": int(st.forest_sizes.size),
        "max_forest_tree": int(st.forest_sizes.max()),
        "step2_group_sizes": {int(s): int(c) for s, c in zip(*np.unique(sizes_p, return_counts=True))},
        "step3_groups_split": int(np.count_nonzero(sizes_p > 2 * k - 1)),
        "decompose_cases": dict(st.cases),
        "approximation_factor_sse": approximation_factor(k, "sse"),
        "approximation_factor_euclidean": approximation_factor(k, "euclidean"),
        "edges_used_once": st.edges_used_once,
        "seconds_by_step": {key: round(value, 6) for key, value in st.seconds.items()},
    }
    ctx.report(stage="mu-approx", groups=int(st.labels.max()) + 1)
    return Solution(labels=st.labels, status="done", info=info)


def _prepare(X, k, variables, scaling):
    from .._standardize import SCALINGS, standardization
    from .._validation import as_dataset, check_choice, check_k

    ds = as_dataset(X, variables, None)
    k = check_k(k, ds.n)
    scaling = check_choice(scaling, "scaling", SCALINGS)
    st = standardization(ds.X)
    Z = st.Z if scaling == "standardize" else st.raw_centered(ds.X)
    return Z, k


def mu_approx_structure(X, k, *, randomized=True, rng=None, variables=None,
                        scaling="standardize") -> MuApproxStructure:
    """Run mu-Approx and return every intermediate result (forest, trees, partitions).

    Same input rules and the same partition as :func:`mu_approx` with the same ``rng``.

    Parameters
    ----------
    X : DataFrame or array_like of shape (n, p)
    k : int
    randomized : bool, default True
        The paper's randomized version (choices drawn from ``rng``) or the fixed rule.
    rng : None, int or numpy.random.Generator
    variables, scaling
        As in :func:`pysdcmicro.microaggregate`.

    Returns
    -------
    MuApproxStructure

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0], [10.0], [11.0], [12.0], [30.0], [31.0]])
    >>> st = mu_approx_structure(X, 3, randomized=False)
    >>> st.forest_edges.tolist()
    [[0, 1], [1, 2], [3, 2], [4, 5], [5, 6], [7, 8], [8, 6]]
    >>> st.tree_sizes.tolist(), st.labels.tolist()
    ([4, 5], [0, 0, 0, 0, 1, 1, 1, 1, 1])
    """
    randomized = _check_randomized(randomized)
    Z, k = _prepare(X, k, variables, scaling)
    gen = np.random.default_rng(rng) if randomized else None
    return _run(Z, k, gen)
