"""Heuristic pricing for the set-partitioning model: negative reduced-cost groups grown
greedily around each record among its nearest neighbours, then improved by swaps. Cheap and
vectorised; it proves nothing (exact pricing does, see :mod:`._anchored_pricing`)."""

from __future__ import annotations

import numpy as np

from ._lagrangian import _BLOCK_ELEMS

__all__ = ["heuristic_pricing"]


def _candidate_block(Z: np.ndarray, nbr_idx: np.ndarray) -> np.ndarray:
    """Squared distances among the L candidates of each seed in the block: (b, L, L)."""
    P = Z[nbr_idx]  # (b, L, d)
    sq = np.einsum("bld,bld->bl", P, P)
    D = sq[:, :, None] + sq[:, None, :] - 2.0 * np.einsum("bld,bmd->blm", P, P)
    np.maximum(D, 0.0, out=D)
    return D


def heuristic_pricing(Z: np.ndarray, nbr_idx: np.ndarray, pi: np.ndarray, k: int, *,
                      seeds: np.ndarray | None = None, swap_rounds: int = 3,
                      tol: float = 1e-9, deadline=None) -> list[tuple[np.ndarray, float]]:
    """Negative reduced-cost groups found greedily around each seed record.

    For each seed, its ``L`` nearest records are the candidates; starting from the seed,
    the candidate that least increases ``rc`` is added until ``2k-1`` records, and the group
    at every size ``s`` in ``k..2k-1`` is then improved by best-improvement swaps (one
    member out, one candidate in) for up to ``swap_rounds`` rounds. Returns
    ``(rows, rc)`` for every distinct group with ``rc < -tol``, best first. With a
    ``deadline``, seeds are taken in blocks and the blocks left when it expires are skipped
    (a heuristic: fewer columns, nothing to prove).

    Time O(n L^2 (d + k)) per call; memory O(block L^2).
    """
    n = Z.shape[0]
    L = nbr_idx.shape[1]
    smax = min(2 * k - 1, n)
    if seeds is None:
        seeds = np.arange(n)
    found: dict[bytes, tuple[np.ndarray, float]] = {}
    step = max(1, (_BLOCK_ELEMS // 4) // (L * L))
    if deadline is not None:
        step = max(1, min(step, 64))  # a block of 64 seeds: well under a second at k = 10
    for start in range(0, seeds.size, step):
        if deadline is not None and start > 0 and deadline.expired():
            break
        sb = seeds[start:start + step]
        cand = nbr_idx[sb]  # (b, L) candidate record ids, seed first
        D = _candidate_block(Z, cand)
        P = pi[cand]  # (b, L)
        b = sb.size
        ar = np.arange(b)
        chosen = np.zeros((b, L), dtype=bool)
        chosen[:, 0] = True
        acc = D[:, 0, :].copy()  # sum of distances from each candidate to the members
        for m in range(1, smax):
            score = acc - (m + 1) * P
            score[chosen] = np.inf
            j = np.argmin(score, axis=1)
            chosen[ar, j] = True
            acc += D[ar, j, :]
            s = m + 1
            if s >= k:
                cols = _improve_swaps(D, P, chosen.copy(), acc.copy(), s, swap_rounds)
                _collect(cols, D, P, cand, s, found, tol)
    out = sorted(found.values(), key=lambda t: t[1])
    return out


def _improve_swaps(D, P, chosen, acc, s, rounds):
    """Best-improvement swaps on a batch of groups (indicator ``chosen`` over candidates)."""
    b, L = chosen.shape
    ar = np.arange(b)
    for _ in range(rounds):
        # delta(l out, j in) = (acc_j - D_jl - acc_l)/s + P_l - P_j
        acc_in = np.where(chosen, np.inf, acc - s * P)  # candidates j not in C: acc_j - s P_j
        acc_out = np.where(chosen, acc - s * P, np.nan)  # members l: acc_l - s P_l
        # delta * s = acc_j - s P_j - D_jl - (acc_l - s P_l)
        delta = acc_in[:, None, :] - D - acc_out[:, :, None]  # (b, l, j)
        delta = np.where(chosen[:, :, None], delta, np.inf)
        flat = delta.reshape(b, -1)
        best = np.argmin(flat, axis=1)
        val = flat[ar, best]
        improve = val < -1e-12
        if not improve.any():
            break
        rows = ar[improve]
        lo, jin = np.divmod(best[improve], L)
        chosen[rows, lo] = False
        chosen[rows, jin] = True
        acc[rows] += D[rows, jin, :] - D[rows, lo, :]
    return chosen, acc


def _collect(cols, D, P, cand, s, found, tol):
    chosen, acc = cols
    # rc = (1/2 sum_{l in C} acc_l)/s - sum P_l
    pair_sum = 0.5 * np.where(chosen, acc, 0.0).sum(axis=1)
    rc = pair_sum / s - np.where(chosen, P, 0.0).sum(axis=1)
    for r in np.flatnonzero(rc < -tol):
        rows = np.sort(cand[r][chosen[r]])
        key = rows.tobytes()
        if key not in found:
            found[key] = (rows, float(rc[r]))
