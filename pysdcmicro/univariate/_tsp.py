"""Short Hamiltonian paths and tours over records: our own local search.

The TSP-based orderings (C-MHM, Compress-TSP-MHM) need a *short* path: the paper's
Concorde paths are optimal, and the information loss of the grouping made along the path
is very sensitive to the path length. OR-Tools' routing search (``pysdcmicro._ortools``)
stays 2.5-3 % above the optimum on the CASC sets after a minute; this module closes the
gap with an iterated local search written for this purpose:

* **candidate lists**: the ``neighbours`` nearest records of each record, computed in
  blocks of rows (O(n * neighbours) memory, never an n x n matrix);
* **2-opt and Or-opt** (moving a run of 1..3 records elsewhere, in either orientation)
  with neighbour lists and a work queue of "dirty" records (don't-look bits), on an array
  tour with a position index; a reversal always flips the shorter side;
* **iterated local search** (Martin, Otto and Felten's large-step Markov chains): a
  random *segment swap* ("double bridge", the move 2-opt and Or-opt cannot undo) among
  nearby tour positions, local search from the touched records, and the result kept
  when it is no longer than before, else undone.

An open path is a tour through a *dummy* record at distance 0 from every record; the
path is the tour cut at the dummy. Distances are Euclidean, computed on demand
(``math.dist`` on tuples), so memory stays O(n (d + neighbours)).

The search is deterministic for a given ``rng`` and a given number of kicks; a deadline
stops it early with the best tour so far.
"""

from __future__ import annotations

import math
import time
from collections import deque

import numpy as np

__all__ = ["knn", "path_length", "greedy_edge_order", "improve_order", "local_search_order", "exact_order",
           "EXACT_MAX_NODES"]

#: Up to this many records the shortest path / tour is found by enumeration (n! / 2 orders).
EXACT_MAX_NODES = 7

_EPS = 1e-10


def path_length(Z: np.ndarray, order: np.ndarray, *, closed: bool = False) -> float:
    """Euclidean length of the path visiting the rows of ``Z`` in ``order`` (and back to the
    first when ``closed``).

    Examples
    --------
    >>> import numpy as np
    >>> Z = np.array([[0.0, 0.0], [3.0, 4.0], [3.0, 0.0]])
    >>> path_length(Z, np.array([0, 2, 1])), path_length(Z, np.array([0, 2, 1]), closed=True)
    (7.0, 12.0)
    """
    order = np.asarray(order, dtype=np.int64)
    if order.size < 2:
        return 0.0
    P = Z[order]
    total = float(np.sqrt(((P[1:] - P[:-1]) ** 2).sum(axis=1)).sum())
    if closed:
        total += float(np.sqrt(((P[0] - P[-1]) ** 2).sum()))
    return total


def exact_order(Z: np.ndarray, *, closed: bool = False) -> np.ndarray:
    """Shortest open path (or closed tour) by enumerating all orders; n <= EXACT_MAX_NODES.
    Ties: the lexicographically first order.

    Examples
    --------
    >>> import numpy as np
    >>> exact_order(np.array([[0.0], [5.0], [1.0]])).tolist()
    [0, 2, 1]
    """
    import itertools

    n = Z.shape[0]
    if n > EXACT_MAX_NODES:
        raise ValueError(f"exact_order enumerates n! orders; n must be <= {EXACT_MAX_NODES}; got {n}.")
    if n <= 2:
        return np.arange(n, dtype=np.int64)
    D = np.sqrt(((Z[:, None, :] - Z[None, :, :]) ** 2).sum(axis=2))
    perms = np.array(list(itertools.permutations(range(n))), dtype=np.int64)
    lengths = D[perms[:, :-1], perms[:, 1:]].sum(axis=1)
    if closed:
        lengths = lengths + D[perms[:, -1], perms[:, 0]]
    best = lengths.min()
    # Exact ties (within rounding) go to the first order in lexicographic order.
    i = int(np.flatnonzero(lengths <= best + 1e-12 * max(1.0, best))[0])
    return perms[i]


def knn(Z: np.ndarray, n_neighbors: int, *, block: int | None = None, deadline=None) -> np.ndarray | None:
    """Indices of the ``n_neighbors`` nearest other rows of each row, nearest first.

    Computed in blocks of ``block`` rows (default: at most 2^21 distances, 16 MiB, per
    block): memory O(block * n + n * n_neighbors), never an n x n matrix; time O(n^2 d).
    Ties are broken by the lower row index. Returns None when ``deadline()`` becomes True
    between two blocks.
    """
    n = Z.shape[0]
    if block is None:
        block = max(1, min(512, (1 << 21) // max(n, 1)))
    K = min(int(n_neighbors), n - 1)
    out = np.empty((n, max(K, 0)), dtype=np.int64)
    if K <= 0:
        return out
    sq = np.einsum("ij,ij->i", Z, Z)
    cols = np.arange(n)
    for s in range(0, n, block):
        if deadline is not None and s and deadline():
            return None
        e = min(n, s + block)
        D = sq[s:e, None] - 2.0 * (Z[s:e] @ Z.T) + sq[None, :]
        np.maximum(D, 0.0, out=D)
        D[np.arange(e - s), np.arange(s, e)] = np.inf
        if K < n - 1:
            idx = np.argpartition(D, K - 1, axis=1)[:, :K]
        else:
            idx = np.broadcast_to(cols, D.shape).copy()
            idx = idx[~np.eye(e - s, n, s, dtype=bool)].reshape(e - s, n - 1)
        dd = np.take_along_axis(D, idx, axis=1)
        # Sort by distance, ties by index (lexsort: last key is primary).
        order = np.lexsort((idx, dd), axis=1)
        out[s:e] = np.take_along_axis(idx, order, axis=1)
    return out


def greedy_edge_order(Z: np.ndarray, nbrs: np.ndarray) -> np.ndarray:
    """Greedy-edge construction: take candidate edges (from the neighbour lists) shortest
    first when both ends have degree < 2 and no cycle is closed; then join the resulting
    fragments end to end, each time to the nearest free end of another fragment.

    Returns a permutation (an open path). Time O(n K log(n K) + f^2 d) for f fragments.
    """
    n = Z.shape[0]
    if n <= 2:
        return np.arange(n, dtype=np.int64)
    K = nbrs.shape[1]
    a = np.repeat(np.arange(n), K)
    b = nbrs.ravel()
    keep = a < b
    a, b = a[keep], b[keep]
    w = np.sqrt(((Z[a] - Z[b]) ** 2).sum(axis=1))
    # Mutual pairs appear once; pairs listed only by the larger index are added too.
    a2 = np.repeat(np.arange(n), K)
    b2 = nbrs.ravel()
    one_way = a2 > b2
    a = np.concatenate([a, b2[one_way]])
    b = np.concatenate([b, a2[one_way]])
    w = np.concatenate([w, np.sqrt(((Z[a2[one_way]] - Z[b2[one_way]]) ** 2).sum(axis=1))])
    order = np.lexsort((b, a, w))
    deg = [0] * n
    parent = list(range(n))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    adj: list[list[int]] = [[] for _ in range(n)]
    seen = set()
    for e in order.tolist():
        u, v = int(a[e]), int(b[e])
        if (u, v) in seen:
            continue
        seen.add((u, v))
        if deg[u] >= 2 or deg[v] >= 2:
            continue
        ru, rv = find(u), find(v)
        if ru == rv:
            continue
        parent[ru] = rv
        deg[u] += 1
        deg[v] += 1
        adj[u].append(v)
        adj[v].append(u)
    # Walk fragments from their ends.
    visited = [False] * n
    frags = []
    for s in range(n):
        if visited[s] or deg[s] == 2:
            continue
        path = [s]
        visited[s] = True
        prev, cur = -1, s
        while True:
            nxt = [x for x in adj[cur] if x != prev]
            if not nxt:
                break
            prev, cur = cur, nxt[0]
            visited[cur] = True
            path.append(cur)
        frags.append(path)
    # Join fragments: start from the first, repeatedly attach the fragment whose end is
    # nearest to the current path's tail.
    if len(frags) == 1:
        return np.array(frags[0], dtype=np.int64)
    heads = np.array([f[0] for f in frags])
    tails = np.array([f[-1] for f in frags])
    alive = np.ones(len(frags), dtype=bool)
    result = list(frags[0])
    alive[0] = False
    H, T = Z[heads], Z[tails]
    for _ in range(len(frags) - 1):
        x = Z[result[-1]]
        dh = ((H - x) ** 2).sum(axis=1)
        dt = ((T - x) ** 2).sum(axis=1)
        dh[~alive] = np.inf
        dt[~alive] = np.inf
        ih, it = int(np.argmin(dh)), int(np.argmin(dt))
        if dh[ih] <= dt[it]:
            result.extend(frags[ih])
            alive[ih] = False
        else:
            result.extend(reversed(frags[it]))
            alive[it] = False
    return np.array(result, dtype=np.int64)


class _Search:
    """2-opt + Or-opt local search and segment-swap kicks on an array tour.

    Node ``n`` is the dummy of an open path (distance 0 to every record) when ``closed``
    is False.
    """

    def __init__(self, Z: np.ndarray, nbrs: np.ndarray, order: np.ndarray, closed: bool):
        n = Z.shape[0]
        self.n = n
        self.closed = closed
        self.N = -1 if closed else n  # the dummy record of an open path
        self.P = [tuple(row) for row in Z.tolist()]
        dist = math.dist
        P = self.P
        NB = []
        for i, row in enumerate(nbrs.tolist()):
            pi = P[i]
            NB.append([(j, dist(pi, P[j])) for j in row])
        if not closed:
            for lst in NB:
                lst.insert(0, (n, 0.0))
            NB.append([])
            self.P.append(None)
        self.NB = NB
        tour = [int(v) for v in order]
        if not closed:
            tour.append(n)
        self.tour = tour
        self.m = len(tour)
        pos = [0] * self.m
        for i, v in enumerate(tour):
            pos[v] = i
        self.pos = pos
        self.length = self.exact_length()

    # -- geometry ---------------------------------------------------------------
    def d(self, a: int, b: int) -> float:
        n = self.n
        if a == n or b == n:
            return 0.0
        return math.dist(self.P[a], self.P[b])

    def exact_length(self) -> float:
        tour, m = self.tour, self.m
        return math.fsum(self.d(tour[i - 1], tour[i]) for i in range(m))

    # -- tour operations ------------------------------------------------------
    def _reverse(self, i: int, j: int) -> None:
        """Reverse the tour between positions i..j (cyclic, inclusive), or equivalently its
        complement when that is shorter."""
        tour, pos, m = self.tour, self.pos, self.m
        L = (j - i) % m + 1
        if 2 * L > m:
            i, j = (j + 1) % m, (i - 1) % m
            L = m - L
        if L < 2:
            return
        if i <= j:
            seg = tour[i:j + 1]
            seg.reverse()
            tour[i:j + 1] = seg
            for p in range(i, j + 1):
                pos[tour[p]] = p
        else:
            for _ in range(L // 2):
                a, b = tour[i], tour[j]
                tour[i] = b
                pos[b] = i
                tour[j] = a
                pos[a] = j
                i += 1
                if i == m:
                    i = 0
                j -= 1
                if j < 0:
                    j = m - 1

    def flip(self, a: int, b: int, c: int, d: int) -> None:
        """Replace edges (a, b) and (c, d) by (a, c) and (b, d), where b follows a and d
        follows c in one direction of travel (whichever the array uses)."""
        pos, tour, m = self.pos, self.tour, self.m
        if tour[pos[a] + 1 - m] == b:
            self._reverse(pos[b], pos[c])
        else:
            self._reverse(pos[c], pos[b])

    # -- local search -----------------------------------------------------------
    def improve_node(self, a: int, push) -> bool:
        """Try 2-opt then Or-opt moves involving ``a``; apply the first improving one.

        (Distances are written inline, ``dist(P[u], P[v])`` with the dummy ``N`` at
        distance 0: this loop is the hot spot of the whole search.)"""
        tour, pos, m, NB, P, N = self.tour, self.pos, self.m, self.NB, self.P, self.N
        dist = math.dist
        nb = NB[a]
        if not nb or m < 5:
            return False
        pa = pos[a]
        an = tour[pa + 1 - m]
        ap = tour[pa - 1]
        pA = P[a]
        # 2-opt, successor side: (a, an), (c, cn) -> (a, c), (an, cn)
        dan = dist(pA, P[an]) if a != N and an != N else 0.0
        for c, dac in nb:
            g = dan - dac
            if g <= _EPS:
                break
            cn = tour[pos[c] + 1 - m]
            if c == an or cn == a:
                continue
            if c == N or cn == N:
                delta = g - (dist(P[an], P[cn]) if an != N and cn != N else 0.0)
            else:
                delta = g + dist(P[c], P[cn]) - (dist(P[an], P[cn]) if an != N else 0.0)
            if delta > _EPS:
                self.flip(a, an, c, cn)
                self.length -= delta
                push(a, an, c, cn)
                return True
        # 2-opt, predecessor side: (ap, a), (cp, c) -> (c, a), (cp, ap)
        dap = dist(pA, P[ap]) if a != N and ap != N else 0.0
        for c, dac in nb:
            g = dap - dac
            if g <= _EPS:
                break
            cp = tour[pos[c] - 1]
            if c == ap or cp == a:
                continue
            if c == N or cp == N:
                delta = g - (dist(P[ap], P[cp]) if ap != N and cp != N else 0.0)
            else:
                delta = g + dist(P[c], P[cp]) - (dist(P[ap], P[cp]) if ap != N else 0.0)
            if delta > _EPS:
                self.flip(cp, c, ap, a)
                self.length -= delta
                push(a, ap, c, cp)
                return True
        if m < 8:
            return False
        # Or-opt: a run s1..s2 (1..3 records, a at one end) moved between c and e.
        d = self.d
        insert = self._insert_segment
        for forward in (True, False):
            seg = [a]
            x = a
            for _ in range(3):
                if forward:
                    s1, s2 = a, x
                else:
                    s1, s2 = x, a
                p = tour[pos[s1] - 1]
                nx = tour[pos[s2] + 1 - m]
                if p in seg or nx in seg or p == nx:
                    break
                g0 = d(p, s1) + d(s2, nx) - d(p, nx)
                if g0 > _EPS and insert(s1, s2, p, nx, g0, seg, push):
                    return True
                x = tour[pos[x] + 1 - m] if forward else tour[pos[x] - 1]
                if x in seg:
                    break
                seg.append(x)
        return False

    def _insert_segment(self, s1, s2, p, nx, g0, seg, push) -> bool:
        tour, pos, m, NB, P, N = self.tour, self.pos, self.m, self.NB, self.P, self.N
        dist = math.dist
        lim = g0 - _EPS
        for x, y in ((s1, s2), (s2, s1)):
            pY = P[y] if y != N else None
            for c, dxc in NB[x]:
                if dxc >= lim:
                    break
                if c in seg:
                    continue
                pC = P[c] if c != N else None
                # (i) between c and its successor e, x next to c: c x .. y e
                e = tour[pos[c] + 1 - m]
                if e not in seg:
                    if e == N:
                        added = dxc
                    else:
                        pE = P[e]
                        added = dxc + (dist(pY, pE) if pY is not None else 0.0) - (
                            dist(pC, pE) if pC is not None else 0.0)
                    if g0 - added > _EPS:
                        self._apply_oropt(s1, s2, p, nx, c, e, first=x)
                        self.length -= g0 - added
                        push(p, nx, c, e, s1, s2)
                        return True
                # (ii) between its predecessor cp and c, x next to c: cp y .. x c
                cp = tour[pos[c] - 1]
                if cp not in seg:
                    if cp == N:
                        added = dxc
                    else:
                        pP = P[cp]
                        added = dxc + (dist(pY, pP) if pY is not None else 0.0) - (
                            dist(pP, pC) if pC is not None else 0.0)
                    if g0 - added > _EPS:
                        self._apply_oropt(s1, s2, p, nx, cp, c, first=y)
                        self.length -= g0 - added
                        push(p, nx, c, cp, s1, s2)
                        return True
        return False

    def _apply_oropt(self, s1, s2, p, nx, c, e, first) -> None:
        """Move the run s1..s2 (p before it, nx after it, in the array's direction of
        travel or its reverse) between c and e, so that ``first`` follows c."""
        # In the direction where s1 follows p: p s1..s2 nx ... c e ... (c, e on the rest).
        # Orientation bookkeeping: if the array runs the other way, flip() handles it.
        self.flip(p, s1, c, e)      # p c ... nx s2 ... s1 e
        self.flip(p, c, nx, s2)     # p nx ... c s2 ... s1 e
        if first == s1:
            self.flip(c, s2, s1, e)  # c s1 ... s2 e

    def run_queue(self, queue: deque, inq: list, deadline=None) -> None:
        improve = self.improve_node

        def push(*nodes):
            for v in nodes:
                if not inq[v]:
                    inq[v] = True
                    queue.append(v)

        count = 0
        while queue:
            a = queue.popleft()
            inq[a] = False
            while improve(a, push):
                pass
            count += 1
            if deadline is not None and (count & 255) == 0 and deadline():
                break

    # -- perturbation -------------------------------------------------------------
    def segment_swap(self, i: int, l1: int, l2: int) -> tuple:
        """Swap the adjacent runs tour[i+1 .. i+l1] and tour[i+l1+1 .. i+l1+l2] (no wrap);
        returns the touched records."""
        tour, pos = self.tour, self.pos
        a = tour[i]
        b0, b1 = tour[i + 1], tour[i + l1]
        c0, c1 = tour[i + l1 + 1], tour[i + l1 + l2]
        z = tour[(i + l1 + l2 + 1) % self.m]
        d = self.d
        delta = (d(a, c0) + d(c1, b0) + d(b1, z)) - (d(a, b0) + d(b1, c0) + d(c1, z))
        B = tour[i + 1:i + l1 + 1]
        C = tour[i + l1 + 1:i + l1 + l2 + 1]
        tour[i + 1:i + l1 + l2 + 1] = C + B
        for p in range(i + 1, i + l1 + l2 + 1):
            pos[tour[p]] = p
        self.length += delta
        return (a, b0, b1, c0, c1, z)

    def order(self) -> np.ndarray:
        """The tour as an open path (cut at the dummy) or as a cycle starting anywhere."""
        tour = self.tour
        if self.closed:
            return np.array(tour, dtype=np.int64)
        k = self.pos[self.n]
        return np.array(tour[k + 1:] + tour[:k], dtype=np.int64)


def local_search_order(Z: np.ndarray, order: np.ndarray, *, closed: bool = False,
                       neighbours: int = 10, nbrs: np.ndarray | None = None) -> np.ndarray:
    """2-opt + Or-opt local optimum reached from ``order`` (no kicks)."""
    return improve_order(Z, order, closed=closed, neighbours=neighbours, nbrs=nbrs, kicks=0)[0]


def improve_order(Z: np.ndarray, order: np.ndarray, *, closed: bool = False, neighbours: int = 10,
                  nbrs: np.ndarray | None = None, kicks: int = 0, rng=None, deadline=None,
                  max_segment: int = 50, report=None, checkpoint=None,
                  checkpoints: int = 10) -> tuple[np.ndarray, dict]:
    """Shorten the path (or tour when ``closed``) ``order`` by 2-opt + Or-opt local search,
    then ``kicks`` rounds of iterated local search.

    Parameters
    ----------
    Z : ndarray (n, d)
    order : permutation of range(n)
    closed : bool
        Optimise the closed tour instead of the open path.
    neighbours : int
        Length of the candidate lists (ignored when ``nbrs`` is given).
    kicks : int
        Number of segment-swap perturbations (0: plain local search).
    rng : numpy Generator, seed or None
        Source of the kicks.
    deadline : callable or None
        ``deadline()`` is True when the search must stop (checked between kicks and
        every 256 queue items).
    max_segment : int
        Longest run moved by a kick.
    report : callable or None
        ``report(kicks_done, best_length)``, about once a second.
    checkpoint : callable or None
        ``checkpoint(order)`` is called with the best path after the first local search,
        then every ``kicks / checkpoints`` kicks when the best path has changed, and at
        the end: a caller can score the paths visited by another criterion (the methods
        keep the path whose optimal grouping has the least SSE).

    Returns
    -------
    order : ndarray of int64
        The best path found (a permutation of range(n)).
    info : dict
        ``kicks_done``, ``accepted``, ``stopped`` (True when the deadline cut it short).
    """
    n = Z.shape[0]
    order = np.asarray(order, dtype=np.int64)
    info = {"kicks_done": 0, "accepted": 0, "stopped": False}
    if n < 4:
        return order.copy(), info
    if nbrs is None:
        nbrs = knn(Z, neighbours)
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    S = _Search(Z, nbrs, order, closed)
    m = S.m
    queue = deque(range(m))
    inq = [True] * m
    S.run_queue(queue, inq, deadline)
    S.length = S.exact_length()
    if checkpoint is not None:
        checkpoint(S.order())
    if deadline is not None and deadline():
        info["stopped"] = True
        return S.order(), info
    best_tour = S.tour[:]
    best_pos = S.pos[:]
    best_len = S.length
    max_seg = max(1, min(int(max_segment), (m - 2) // 3))
    if m < 8:
        kicks = 0
    # Draw the random numbers in batches (faster than one call per kick).
    batch = 4096
    done = 0
    accepted = 0
    last_report = time.monotonic()
    every = max(1, -(-kicks // max(1, int(checkpoints)))) if kicks else 0
    last_cp = best_tour[:]

    def call_checkpoint():
        nonlocal last_cp
        if checkpoint is not None and best_tour != last_cp:
            last_cp = best_tour[:]
            if closed:
                checkpoint(np.array(best_tour, dtype=np.int64))
            else:
                k = best_pos[n]
                checkpoint(np.array(best_tour[k + 1:] + best_tour[:k], dtype=np.int64))

    while done < kicks:
        nb = min(batch, kicks - done)
        L1 = rng.integers(1, max_seg + 1, size=nb).tolist()
        L2 = rng.integers(1, max_seg + 1, size=nb).tolist()
        U = rng.random(nb).tolist()
        for t in range(nb):
            l1, l2 = L1[t], L2[t]
            i = int(U[t] * (m - l1 - l2 - 1))
            touched = S.segment_swap(i, l1, l2)
            for v in touched:
                if not inq[v]:
                    inq[v] = True
                    queue.append(v)
            S.run_queue(queue, inq)
            done += 1
            if S.length <= best_len + 1e-12:
                if S.length < best_len - 1e-12:
                    accepted += 1
                best_len = S.length
                best_tour[:] = S.tour
                best_pos[:] = S.pos
            else:
                S.tour[:] = best_tour
                S.pos[:] = best_pos
                S.length = best_len
            if done % every == 0:
                call_checkpoint()
            if (done & 63) == 0:
                if deadline is not None and deadline():
                    info["stopped"] = True
                    break
                if report is not None and time.monotonic() - last_report > 1.0:
                    last_report = time.monotonic()
                    report(done, best_len)
        if info["stopped"]:
            break
    call_checkpoint()
    S.tour[:] = best_tour
    S.pos[:] = best_pos
    info["kicks_done"] = done
    info["accepted"] = accepted
    return S.order(), info
