"""Compiled sweeps of the border-repair local search (numba). See :func:`pysdcmicro.large.batch_local_search` for the moves and their exact
SSE changes.

Unlike the numpy rounds (which apply a batch of non-conflicting moves per round), a sweep
visits the records one after the other and applies the best improving move or swap of each
record at once, updating the two groups' sizes, sums and centroids: every later record sees
the current partition (Gauss-Seidel rather than Jacobi), so a sweep does the work of many
rounds. A record x of group A is compared with the members y of A's ``L`` nearest groups B
(by centroid); the changes are exact for the current centroids, so the SSE never rises
(up to rounding, which the caller's final check covers). Each sweep starts with a pass that
tries to dissolve every group into its neighbours (the only way to make groups larger than
k when every group has exactly k records, as after MDAV).

Work is skipped where nothing changed: every change stamps the two groups with a clock
value, and a record (or a group, in the dissolve pass) is evaluated again only when its
group or one of its neighbour groups changed since its last evaluation; a record's
distance to its own centroid is cached under its group's stamp.

Without numba (or with ``PYSDCMICRO_NO_NUMBA``) this same source runs as plain Python
(:func:`pysdcmicro.large._local._plain_kernels`): the same operations in the same order on
IEEE doubles (no fast-math, no fused multiply-add here), so the same partition bit for bit,
only slower.
"""

from __future__ import annotations

import numpy as np

try:  # the interpreted copy (see _local._plain_kernels) is loaded with _PLAIN = True
    _PLAIN  # noqa: B018
except NameError:
    _PLAIN = False
if _PLAIN:
    def njit(*args, **kwargs):
        """No compilation: the same functions run as plain Python (same arithmetic)."""
        if args and callable(args[0]):
            return args[0]
        return lambda fn: fn
else:
    from numba import njit

__all__ = ["sweeps", "nearest_groups"]


@njit(cache=True, nogil=True, fastmath=False)
def _dist2(Z, i, C, a, d):
    s = 0.0
    for j in range(d):
        t = Z[i, j] - C[a, j]
        s += t * t
    return s


@njit(cache=True, nogil=True)
def _dist2_rows(Z, i, y, d):
    s = 0.0
    for j in range(d):
        t = Z[i, j] - Z[y, j]
        s += t * t
    return s


@njit(cache=True, nogil=True)
def nearest_groups(C, L):
    """Each row's ``L`` nearest other rows of ``C`` (g x d), nearest first, ties to the lower
    row: exact squared distances summed over the columns in order (the same numbers as
    :func:`pysdcmicro.large._local._nearest_numpy`). Brute force, O(g^2 d), but with the
    columns outermost so the inner loop runs over contiguous rows (vectorised): at g = 2000,
    d = 10 about 2x faster than a k-d tree on uniform data and as fast on clustered data."""
    g, d = C.shape
    # np.empty and loops: each other numpy constructor is one more implementation for
    # numba to compile on a fresh install
    CT = np.empty((d, g))
    nb = np.empty((g, L), dtype=np.int64)
    for a in range(g):
        for t in range(d):
            CT[t, a] = C[a, t]
        for q in range(L):
            nb[a, q] = -1
    acc = np.empty(g)
    D = np.empty(L)
    for a in range(g):
        for j in range(g):
            acc[j] = 0.0
        for t in range(d):
            ca = C[a, t]
            row = CT[t]
            for j in range(g):
                q = row[j] - ca
                acc[j] += q * q
        for l in range(L):
            D[l] = np.inf
        worst = np.inf
        for j in range(g):
            s = acc[j]
            if s < worst and j != a:
                p = L - 1
                while p > 0 and D[p - 1] > s:
                    D[p] = D[p - 1]
                    nb[a, p] = nb[a, p - 1]
                    p -= 1
                D[p] = s
                nb[a, p] = j
                worst = D[L - 1]
    return nb


@njit(cache=True, nogil=True)
def _refresh(Z, labels, size, sums, C):
    """Exact group sums and centroids from the labels (no drift from incremental updates)."""
    n, d = Z.shape
    sums[:, :] = 0.0
    for i in range(n):
        a = labels[i]
        for j in range(d):
            sums[a, j] += Z[i, j]
    for a in range(size.size):
        if size[a] > 0:
            for j in range(d):
                C[a, j] = sums[a, j] / size[a]


@njit(cache=True, nogil=True)
def _set_centroid(sums, size, C, a, d):
    for j in range(d):
        C[a, j] = sums[a, j] / size[a]


@njit(cache=True, nogil=True)
def _stale(a, nb, stamp, since):
    """True when group ``a`` or one of its neighbours changed after clock ``since``."""
    if stamp[a] > since:
        return True
    for l in range(nb.shape[1]):
        b = nb[a, l]
        if b >= 0 and stamp[b] > since:
            return True
    return False


@njit(cache=True, nogil=True)
def _dissolve_pass(Z, labels, max_size, nb, members, count, where, size, sums, C, tol, tb, ts, tC,
                   choice, stamp, devald, clock):
    """Try to dissolve each group: its members inserted one by one, each into the neighbour
    group with room and the least exact insertion cost ``|B|/(|B|+1) ||x - c_B||^2`` at the
    groups' current (simulated) state; applied when the insertion costs add up to less than
    the group's own SSE. Returns (SSE change, groups dissolved, clock)."""
    d = Z.shape[1]
    g = size.size
    L = nb.shape[1]
    change = 0.0
    dissolved = 0
    for a in range(g):
        sa = count[a]
        if sa == 0 or not _stale(a, nb, stamp, devald[a]):
            continue
        devald[a] = clock
        own = 0.0
        for t in range(sa):
            own += _dist2(Z, members[a, t], C, a, d)
        if own <= tol:
            continue
        touched = 0
        cost = 0.0
        ok = True
        for t in range(sa):
            x = members[a, t]
            best = np.inf
            best_b = -1
            for l in range(L):
                b = nb[a, l]
                if b < 0 or b == a or size[b] == 0:
                    continue
                slot = -1
                for u in range(touched):
                    if tb[u] == b:
                        slot = u
                        break
                if slot >= 0:
                    sb = ts[slot]
                    if sb >= max_size:
                        continue
                    s = 0.0
                    for j in range(d):
                        q = Z[x, j] - tC[slot, j]
                        s += q * q
                else:
                    sb = size[b]
                    if sb >= max_size:
                        continue
                    s = _dist2(Z, x, C, b, d)
                c = sb / (sb + 1.0) * s
                if c < best:
                    best = c
                    best_b = b
            if best_b < 0:
                ok = False
                break
            cost += best
            if cost >= own - tol:
                ok = False
                break
            choice[t] = best_b
            slot = -1
            for u in range(touched):
                if tb[u] == best_b:
                    slot = u
                    break
            if slot < 0:
                slot = touched
                touched += 1
                tb[slot] = best_b
                ts[slot] = size[best_b]
                for j in range(d):
                    tC[slot, j] = C[best_b, j]
            sb = ts[slot]
            for j in range(d):
                tC[slot, j] = (tC[slot, j] * sb + Z[x, j]) / (sb + 1.0)
            ts[slot] = sb + 1
        if not ok:
            continue
        clock += 1
        for t in range(sa):  # apply the simulated insertions, in the same order
            x = members[a, t]
            b = choice[t]
            members[b, count[b]] = x
            where[x] = count[b]
            count[b] += 1
            labels[x] = b
            size[b] += 1
            stamp[b] = clock
            for j in range(d):
                sums[b, j] += Z[x, j]
            _set_centroid(sums, size, C, np.int64(b), d)
        count[a] = 0
        size[a] = 0
        stamp[a] = clock
        for j in range(d):
            sums[a, j] = 0.0
        change += cost - own
        dissolved += 1
    return change, dissolved, clock


@njit(cache=True, nogil=True)
def sweeps(Z, labels, k, max_size, nb, max_sweeps, rel_tol, members, count, where, size, sums, C, out,
           dissolve, stamp, devald, evald, clock):
    """Up to ``max_sweeps`` sweeps over the records; ``labels``, ``members`` (g x width, the
    first ``count[g]`` entries used), ``where`` (a record's slot in its group's row),
    ``size``, ``sums`` and ``C`` are updated in place. ``nb`` (g x L) holds each group's
    neighbour groups (-1 = none). Stops after a sweep that changes nothing, or that lowers
    the SSE by less than ``rel_tol`` times the SSE at its start. ``out`` receives sweeps,
    moves, swaps, the SSE change, groups dissolved, records evaluated and the clock.

    ``stamp`` (per group: clock of its last change), ``devald`` (per group: clock of its last
    dissolve check) and ``evald`` (per record: clock of its last evaluation), with the
    ``clock`` they count from, are the caller's, so one call continues where the last one
    stopped: a record (or a group, in the dissolve pass) is evaluated again only when its
    group or one of its neighbour groups changed since. The caller marks a group (and its
    records) for evaluation with -1, e.g. when its neighbour list changed."""
    n, d = Z.shape
    g = size.size
    L = nb.shape[1]
    n_moves = 0
    n_swaps = 0
    done = 0
    total_change = 0.0
    evaluated = 0
    _refresh(Z, labels, size, sums, C)
    current = 0.0
    scale = 0.0
    for i in range(n):
        current += _dist2(Z, i, C, labels[i], d)
        for j in range(d):
            scale += Z[i, j] * Z[i, j]
    tol = 1e-12 * (scale / max(n, 1) + 1.0)
    width = members.shape[1]
    tb = np.empty(width, dtype=np.int64)
    ts = np.empty(width, dtype=np.int64)
    tC = np.empty((width, d))
    choice = np.empty(width, dtype=np.int64)
    down = np.empty(n)
    dver = np.empty(n, dtype=np.int64)
    for i in range(n):
        dver[i] = -1
    n_dissolved = 0
    for sweep in range(max_sweeps):
        change = 0.0
        if dissolve:
            dchange, dn, clock = _dissolve_pass(Z, labels, max_size, nb, members, count, where, size, sums, C,
                                                tol, tb, ts, tC, choice, stamp, devald, clock)
            change += dchange
            n_dissolved += dn
        for x in range(n):
            a = labels[x]
            if not _stale(a, nb, stamp, evald[x]):
                continue
            evaluated += 1
            evald[x] = clock
            sa = size[a]
            dA = _dist2(Z, x, C, a, d)
            best = -tol
            kind = 0
            best_b = -1
            best_y = -1
            inv_a = 1.0 / sa
            can_leave = sa > k
            out_gain = sa / (sa - 1.0) * dA if can_leave else 0.0
            for l in range(L):
                b = nb[a, l]
                if b < 0 or b == a or size[b] == 0:
                    continue
                sb = size[b]
                dxB = _dist2(Z, x, C, b, d)
                if can_leave and sb < max_size:
                    delta = sb / (sb + 1.0) * dxB - out_gain
                    if delta < best:
                        best = delta
                        kind = 1
                        best_b = b
                        best_y = -1
                f = inv_a + 1.0 / sb
                base = dxB - dA
                sb_stamp = stamp[b]
                for t in range(count[b]):
                    y = members[b, t]
                    if dver[y] != sb_stamp:
                        down[y] = _dist2(Z, y, C, b, d)
                        dver[y] = sb_stamp
                    dyA = _dist2(Z, y, C, a, d)
                    dxy = _dist2_rows(Z, x, y, d)
                    delta = base + dyA - down[y] - f * dxy
                    if delta < best:
                        best = delta
                        kind = 2
                        best_b = b
                        best_y = y
            if kind == 0:
                continue
            b = best_b
            clock += 1
            if kind == 1:  # move x from a to b
                p = where[x]
                last = members[a, count[a] - 1]
                members[a, p] = last
                where[last] = p
                count[a] -= 1
                members[b, count[b]] = x
                where[x] = count[b]
                count[b] += 1
                labels[x] = b
                size[a] -= 1
                size[b] += 1
                for j in range(d):
                    sums[a, j] -= Z[x, j]
                    sums[b, j] += Z[x, j]
                n_moves += 1
            else:  # swap x (in a) and y (in b)
                y = best_y
                px = where[x]
                py = where[y]
                members[a, px] = y
                members[b, py] = x
                where[x] = py
                where[y] = px
                labels[x] = b
                labels[y] = a
                for j in range(d):
                    t = Z[x, j] - Z[y, j]
                    sums[a, j] -= t
                    sums[b, j] += t
                dver[y] = -1
                n_swaps += 1
            dver[x] = -1
            stamp[a] = clock
            stamp[b] = clock
            _set_centroid(sums, size, C, np.int64(a), d)
            _set_centroid(sums, size, C, np.int64(b), d)
            change += best
        done = sweep + 1
        total_change += change
        current += change
        if sweep + 1 < max_sweeps:
            # exact sums again (no drift); the centroids hardly move, so the cached own
            # distances stay keyed to the stamps (a refresh changes values by rounding only)
            _refresh(Z, labels, size, sums, C)
        if change == 0.0 or not change < -rel_tol * max(current - change, 0.0):
            break
    out[0] = done
    out[1] = n_moves
    out[2] = n_swaps
    out[3] = total_change
    out[4] = n_dissolved
    out[5] = evaluated
    out[6] = clock
    return done
