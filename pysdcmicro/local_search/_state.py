"""Incremental group statistics of a partition, and the closed-form SSE change of every
local-search move (swap of two records, migration of one record, replacement).

Notation: group ``A`` has ``a`` records, sum ``S_A`` and centroid ``c_A = S_A / a``;
``SSE(A) = sum_{z in A} |z|^2 - |S_A|^2 / a``. For a record ``x``, ``e(x, A) = |x - c_A|^2``.

* Adding ``x`` to ``A`` (``x`` not in ``A``):      ``+ a / (a + 1) * e(x, A)``
  (ICSM's R2, Mortazavi and Jalili 2015, eq. 5).
* Removing ``x`` from ``A`` (``x`` in ``A``):       ``- a / (a - 1) * e(x, A)``  (R3, eq. 6).
* Replacing ``x`` in ``A`` by ``y`` (``y`` not in ``A``):
  ``e(y, A) - e(x, A) - |x - y|^2 / a``  (R1, eq. 3). Derivation: the new sum is
  ``S_A + (y - x)``, so ``SSE(A') = SSE(A) + |y|^2 - |x|^2 - (2 S_A.(y - x) + |y - x|^2) / a``
  and ``|y|^2 - |x|^2 - 2 c_A.(y - x) = e(y, A) - e(x, A)``.
* Swapping ``x`` in ``A`` with ``y`` in ``B``: the two replacements,
  ``D(x, y) = f(x, B) + f(y, A) - (1/a + 1/b) |x - y|^2`` with ``f(x, B) = e(x, B) - e(x, A)``,
  O(d) per pair once the centroids are known.

A migration of ``x`` from ``A`` to ``B`` costs ``b/(b+1) e(x, B) - a/(a-1) e(x, A)``.

Rows of these quantities for a block of records against every record (or every group)
are matrix products, so a sweep over all ``n^2 / 2`` pairs costs O(n^2 d) flops in blocks
of ``block`` rows: the memory stays O(block * n), never n x n.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Partition", "tolerance"]

#: Rows per block in the all-pairs sweeps (memory ~ 6 * block * n floats).
BLOCK = 256


def tolerance(P: "Partition") -> float:
    """A move must lower the SSE by more than this to count: the rounding noise of the
    expanded closed forms is about 1e-16 * |z|^2 per term, far below it, and a gain this
    small is invisible in IL (SST is about n * d)."""
    return 1e-10 * max(1.0, float(P.z2.sum()) / max(P.n, 1)) * max(1.0, P.d)


class Partition:
    """A partition of the rows of ``Z`` with the group statistics local search needs.

    Group ids are ``0..g-1`` (the input labels are renumbered); they are stable under
    swaps and migrations (a migration never empties a group of at least ``k >= 2``
    records). ``own[i] = e(z_i, group(i))`` and ``SSE = own.sum()``.

    Parameters
    ----------
    Z : ndarray of shape (n, d), float64
    labels : array of int, shape (n,)
    """

    def __init__(self, Z: np.ndarray, labels: np.ndarray):
        self.Z = Z
        self.n, self.d = Z.shape
        self.z2 = np.einsum("ij,ij->i", Z, Z)
        _, lab = np.unique(np.asarray(labels), return_inverse=True)
        self.labels = lab.astype(np.int64).reshape(-1)
        self.g = int(self.labels.max()) + 1 if self.n else 0
        self.sizes = np.bincount(self.labels, minlength=self.g).astype(np.int64)
        order = np.argsort(self.labels, kind="stable")
        bounds = np.concatenate([[0], np.cumsum(self.sizes)])
        self.members = [order[bounds[h]:bounds[h + 1]].tolist() for h in range(self.g)]
        self.cent = np.zeros((self.g, self.d))
        self.cnorm = np.zeros(self.g)
        self.own = np.zeros(self.n)
        self._factors = None
        self._refresh_all()

    # -- statistics -----------------------------------------------------------
    def _refresh_all(self) -> None:
        """Every group's centroid and every record's own distance at once (O(n d))."""
        Z, lab = self.Z, self.labels
        sums = np.zeros((self.g, self.d))
        np.add.at(sums, lab, Z)
        self.cent = sums / np.maximum(self.sizes, 1)[:, None]
        self.cnorm = np.einsum("ij,ij->i", self.cent, self.cent)
        diff = Z - self.cent[lab]
        self.own = np.einsum("ij,ij->i", diff, diff)
        self._factors = None

    def set_labels(self, labels: np.ndarray) -> None:
        """Take the group ids ``labels`` (in 0..g-1, every group kept non-empty) and
        recompute members, sizes and statistics."""
        self.labels[:] = labels
        self.sizes = np.bincount(self.labels, minlength=self.g).astype(np.int64)
        order, starts = self.csr()
        self.members = [order[starts[h]:starts[h + 1]].tolist() for h in range(self.g)]
        self._refresh_all()

    def csr(self) -> tuple[np.ndarray, np.ndarray]:
        """``(order, starts)``: group ``h`` holds ``order[starts[h]:starts[h + 1]]``, by
        increasing record index."""
        order = np.argsort(self.labels, kind="stable").astype(np.int64, copy=False)
        starts = np.zeros(self.g + 1, dtype=np.int64)
        np.cumsum(self.sizes, out=starts[1:])
        return order, starts

    def refresh(self, groups) -> None:
        """Recompute centroid, |centroid|^2 and own distances of ``groups`` from their members."""
        Z = self.Z
        touched = []
        for h in groups:
            rows = self.members[h]
            G = Z[rows]
            c = G.mean(axis=0)
            self.cent[h] = c
            self.cnorm[h] = c @ c
            diff = G - c
            self.own[rows] = np.einsum("ij,ij->i", diff, diff)
            touched.extend(rows)
        if self._factors is not None:
            self._update_factors(np.asarray(touched, dtype=np.int64))

    def sse(self) -> float:
        return float(self.own.sum())

    def group_sse(self, h: int) -> float:
        return float(self.own[self.members[h]].sum())

    def copy_labels(self) -> np.ndarray:
        return self.labels.copy()

    # -- scalar move costs (used to apply and to test the vectorized rows) -----
    def e(self, i: int, h: int) -> float:
        diff = self.Z[i] - self.cent[h]
        return float(diff @ diff)

    def swap_delta(self, i: int, j: int) -> float:
        """SSE change of swapping records ``i`` and ``j`` (different groups)."""
        A, B = self.labels[i], self.labels[j]
        a, b = self.sizes[A], self.sizes[B]
        diff = self.Z[i] - self.Z[j]
        dist = float(diff @ diff)
        return (self.e(i, B) - self.own[i]) + (self.e(j, A) - self.own[j]) - (1.0 / a + 1.0 / b) * dist

    def replace_delta(self, i: int, j: int) -> float:
        """SSE change of group(j) when ``i`` (another group's record) takes ``j``'s place (R1)."""
        B = self.labels[j]
        diff = self.Z[i] - self.Z[j]
        return self.e(i, B) - self.own[j] - float(diff @ diff) / self.sizes[B]

    def add_delta(self, i: int, h: int) -> float:
        """SSE change of group ``h`` when record ``i`` joins it (R2)."""
        b = self.sizes[h]
        return b / (b + 1.0) * self.e(i, h)

    def remove_delta(self, i: int) -> float:
        """SSE change of record ``i``'s group when ``i`` leaves it (R3); +inf for a singleton."""
        a = self.sizes[self.labels[i]]
        return np.inf if a <= 1 else -a / (a - 1.0) * self.own[i]

    def migrate_delta(self, i: int, h: int) -> float:
        """SSE change of moving record ``i`` to group ``h``."""
        return self.add_delta(i, h) + self.remove_delta(i)

    # -- vectorized rows ------------------------------------------------------
    def e_rows(self, rows: np.ndarray) -> np.ndarray:
        """``e(z_r, h)`` for r in rows and every group h: shape (m, g)."""
        E = self.Z[rows] @ self.cent.T
        E *= -2.0
        E += self.z2[rows, None]
        E += self.cnorm[None, :]
        np.maximum(E, 0.0, out=E)
        return E

    def dist_rows(self, rows: np.ndarray) -> np.ndarray:
        """Squared distances from the records ``rows`` to every record: shape (m, n)."""
        D = self.Z[rows] @ self.Z.T
        D *= -2.0
        D += self.z2[rows, None]
        D += self.z2[None, :]
        np.maximum(D, 0.0, out=D)
        return D

    def _update_factors(self, rows: np.ndarray) -> None:
        L, R = self._factors
        Z, d = self.Z[rows], self.d
        z2 = self.z2[rows]
        lab = self.labels[rows]
        a = 1.0 / self.sizes[lab]
        C = self.cent[lab]
        u = z2 * (1.0 - a) + self.cnorm[lab] - self.own[rows]
        W = 2.0 * a[:, None] * Z - 2.0 * C
        L[rows, d:2 * d] = W
        L[rows, 2 * d + 1] = u
        L[rows, 2 * d + 3] = a
        R[rows, :d] = W
        R[rows, 2 * d] = u
        R[rows, 2 * d + 2] = -a

    def _swap_factors(self) -> tuple[np.ndarray, np.ndarray]:
        """Matrices ``L`` (n, 2d+4) and ``R`` (n, 2d+4) with ``D(i, j) = L_i . R_j`` for
        records in different groups (see :meth:`swap_rows`); cached until the partition
        changes."""
        if self._factors is not None:
            return self._factors
        Z, z2, lab = self.Z, self.z2, self.labels
        d = self.d
        a = 1.0 / self.sizes[lab]
        C = self.cent[lab]
        u = z2 * (1.0 - a) + self.cnorm[lab] - self.own
        L = np.empty((self.n, 2 * d + 4))
        R = np.empty((self.n, 2 * d + 4))
        L[:, :d] = Z
        L[:, d:2 * d] = 2.0 * a[:, None] * Z - 2.0 * C
        L[:, 2 * d] = 1.0
        L[:, 2 * d + 1] = u
        L[:, 2 * d + 2] = z2
        L[:, 2 * d + 3] = a
        R[:, :d] = 2.0 * a[:, None] * Z - 2.0 * C
        R[:, d:2 * d] = Z
        R[:, 2 * d] = u
        R[:, 2 * d + 1] = 1.0
        R[:, 2 * d + 2] = -a
        R[:, 2 * d + 3] = -z2
        self._factors = (L, R)
        return self._factors

    def swap_rows(self, rows: np.ndarray) -> np.ndarray:
        """``D(r, j)`` = SSE change of swapping ``r`` and ``j`` for r in rows and every
        record j; +inf where both are in the same group. Shape (m, n).

        Expanding ``D(i, j) = e(i, B) - own_i + e(j, A) - own_j - (1/a + 1/b)|z_i - z_j|^2``
        (``A``, ``B`` the groups of ``i``, ``j``) gives a bilinear form
        ``z_i.(2 z_j / b - 2 c_B) + (2 z_i / a - 2 c_A).z_j`` plus
        ``u_i + u_j - |z_i|^2 / b - |z_j|^2 / a`` with ``u = |z|^2 (1 - 1/size) + |c|^2 - own``,
        i.e. one matrix product with inner dimension 2d + 4 per block.
        """
        rows = np.asarray(rows, dtype=np.int64)
        L, R = self._swap_factors()
        out = L[rows] @ R.T
        mates = [self.members[h] for h in self.labels[rows]]
        counts = np.fromiter((len(m) for m in mates), dtype=np.int64, count=rows.size)
        out[np.repeat(np.arange(rows.size), counts), np.fromiter(
            (j for m in mates for j in m), dtype=np.int64, count=int(counts.sum()))] = np.inf
        return out

    def swap_rows_direct(self, rows: np.ndarray) -> np.ndarray:
        """Same as :meth:`swap_rows` from the unexpanded formula (reference for tests)."""
        rows = np.asarray(rows, dtype=np.int64)
        lab = self.labels
        gR = lab[rows]
        out = self.e_rows(rows)[:, lab] - self.own[rows, None]
        diff = self.Z[None, :, :] - self.cent[gR][:, None, :]
        out += np.einsum("mnd,mnd->mn", diff, diff) - self.own[None, :]
        dd = self.Z[rows][:, None, :] - self.Z[None, :, :]
        inv = 1.0 / self.sizes
        out -= (inv[gR][:, None] + inv[lab][None, :]) * np.einsum("mnd,mnd->mn", dd, dd)
        out[lab[None, :] == gR[:, None]] = np.inf
        return out

    def migrate_rows(self, rows: np.ndarray, k: int, max_size: int, E: np.ndarray | None = None) -> np.ndarray:
        """SSE change of moving record r (in rows) to each group h: shape (m, g); +inf
        where the move is not allowed (own group, source at k records or fewer,
        target at ``max_size`` or more)."""
        rows = np.asarray(rows, dtype=np.int64)
        if E is None:
            E = self.e_rows(rows)
        s = self.sizes.astype(np.float64)
        out = E * (s / (s + 1.0))[None, :]
        gR = self.labels[rows]
        a = s[gR]
        with np.errstate(divide="ignore", invalid="ignore"):
            rem = np.where(a > k, -a / (a - 1.0) * self.own[rows], np.inf)
        out += rem[:, None]
        out[:, self.sizes >= max_size] = np.inf
        out[np.arange(rows.size), gR] = np.inf
        return out

    def migrate_col(self, h: int, k: int, max_size: int) -> np.ndarray:
        """SSE change of moving every record to group ``h``: shape (n,)."""
        b = float(self.sizes[h])
        if b >= max_size:
            return np.full(self.n, np.inf)
        e = self.Z @ self.cent[h]
        e *= -2.0
        e += self.z2
        e += self.cnorm[h]
        np.maximum(e, 0.0, out=e)
        a = self.sizes[self.labels].astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            rem = np.where(a > k, -a / (a - 1.0) * self.own, np.inf)
        out = e * (b / (b + 1.0)) + rem
        out[self.labels == h] = np.inf
        return out

    # -- applying moves -------------------------------------------------------
    def apply_swap(self, i: int, j: int) -> tuple[int, int]:
        A, B = int(self.labels[i]), int(self.labels[j])
        self.members[A].remove(i)
        self.members[B].remove(j)
        self.members[A].append(j)
        self.members[B].append(i)
        self.labels[i], self.labels[j] = B, A
        self.refresh((A, B))
        return A, B

    def apply_migrate(self, i: int, h: int) -> tuple[int, int]:
        A = int(self.labels[i])
        self.members[A].remove(i)
        self.members[h].append(i)
        self.labels[i] = h
        self.sizes[A] -= 1
        self.sizes[h] += 1
        self.refresh((A, h))
        return A, int(h)

    def apply_assignment(self, records, groups) -> list[int]:
        """Move each ``records[t]`` to ``groups[t]`` at once (a cyclic exchange); returns
        the groups touched."""
        touched = set()
        for i, h in zip(records, groups):
            i, h = int(i), int(h)
            A = int(self.labels[i])
            if A == h:
                continue
            self.members[A].remove(i)
            self.members[h].append(i)
            self.labels[i] = h
            self.sizes[A] -= 1
            self.sizes[h] += 1
            touched.update((A, h))
        self.refresh(sorted(touched))
        return sorted(touched)
