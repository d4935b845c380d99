"""MDAV: Maximum Distance to Average Vector, fixed group size k.

The variant run by sdcMicro (``microaggregation(method = "mdav")``; Domingo-Ferrer and
Mateo-Sanz 2002; Domingo-Ferrer and Torra 2005):

while at least 2k records remain:
    c = centroid of the remaining records
    r = remaining record farthest from c
    group r with its k-1 nearest remaining records (the k nearest to r, r included)
    if at least 3k records remained at the start of this round:
        s = remaining record farthest from r (measured before r's group was removed)
        group s with its k-1 nearest records among those still remaining
the last k..2k-1 records form the last group.

Distances and ties, as sdcMicro 5.8.1 computes them (found by black-box experiments, see
docs/guide/parity.md; the groups equal sdcMicro's record for record on data full of ties):

* the compared distance is the squared Euclidean distance in which every coordinate's
  squared difference (computed in double precision) is rounded to single precision and the
  terms are added in single precision in column order. Distances that differ by less than
  that rounding (about 1e-7 relative) are often equal, and equal distances decide ties;
* the :func:`mdav` solver scales the z-scores to sdcMicro's (divisor n, not n - 1) first,
  so that the rounding happens at the same values;
* *farthest* record: among equal distances, the lowest row position;
* *nearest* records: those nearer than the k-th smallest distance, then those at that
  distance, highest row positions first (r itself is not forced in: with more than k-1
  exact duplicates, r's group is the duplicates with the highest rows).

The data are first multiplied by the power of two that brings their largest absolute value
into [1, 2) (:func:`distance_scale`): exact, so it changes no comparison (short of float32
underflow), and no squared distance can overflow single precision. Every distance is one fixed number per record,
whatever its position, and every sum of records is taken in record order, so the numpy rounds
here and the compiled rounds of :mod:`._mdav_numba` (numba) give the same groups bit for bit,
and the answer never depends on whether numba is installed, compiled or cached in the process
that runs it. Time O(n^2 d / k), memory O(n d): no n x n matrix. Removed records are masked
and the working arrays compacted once a quarter of them are gone.
"""

from __future__ import annotations

import threading
import types

import numpy as np

from .._context import Context
from .._errors import InvalidInputError
from .._registry import MissingCode, register_method
from .._result import Solution

__all__ = ["mdav_labels"]


def distance_scale(Z: np.ndarray) -> float:
    """The power of two that brings the largest absolute value of ``Z`` into [1, 2): the
    rounds compare distances of the data times this factor, so no squared distance can
    overflow single precision, and the groups do not change when the data are multiplied by
    a power of two. Exact: float32 rounding commutes with it (away from float32's underflow,
    terms below about 1e-38 of the largest), so on z-scores the compared distances are
    sdcMicro's, scaled."""
    big = float(np.max(np.abs(Z))) if Z.size else 0.0
    if not np.isfinite(big) or big == 0.0:
        return 1.0
    return float(np.ldexp(1.0, -int(np.floor(np.log2(big)))))


def _scaled(Z: np.ndarray) -> np.ndarray:
    """``Z`` times :func:`distance_scale` (``Z`` itself when that is 1)."""
    f = distance_scale(Z)
    return Z if f == 1.0 else np.ldexp(Z, int(np.log2(f)))


def _dist32(RT: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Squared distances of the records (columns of ``RT``) to ``y``, as sdcMicro compares them:
    each coordinate's squared difference rounded to single precision and summed in single
    precision in column order (returned as float64 holding those float32 values)."""
    d, m = RT.shape
    if d * m <= 65536:  # few calls on small data (one d x m temporary) ...
        U = RT - y[:, None]
        np.multiply(U, U, out=U)
        U32 = U.astype(np.float32)  # each term rounded to float32 ...
        acc = U32[0]
        for t in range(1, d):
            acc += U32[t]           # ... and added in float32, column by column
        return acc.astype(np.float64)
    acc = np.zeros(m, dtype=np.float32)  # ... one column at a time on large data
    u = np.empty(m)
    u32 = np.empty(m, dtype=np.float32)
    for t in range(d):
        np.subtract(RT[t], y[t], out=u)
        np.multiply(u, u, out=u)
        np.copyto(u32, u, casting="same_kind")
        acc += u32
    return acc.astype(np.float64)


def _farthest(v: np.ndarray) -> int:
    """Position of the largest entry of ``v`` (-inf for grouped records); among equal
    entries, the lowest position."""
    return int(np.argmax(v))


def _nearest(dist: np.ndarray, k: int) -> np.ndarray:
    """Positions of the k smallest entries (+inf for grouped records): those below the k-th
    smallest value, then those equal to it, highest positions first."""
    m = dist.shape[0]
    if m <= k:
        return np.arange(m)
    part = np.argpartition(dist, k - 1)[:k]
    t = float(dist[part].max())
    band = dist == t
    if np.count_nonzero(band) == np.count_nonzero(band[part]):
        return part
    below = np.flatnonzero(dist < t)
    ties = np.flatnonzero(band)
    return np.concatenate([below, ties[ties.size - (k - below.size):]])


#: Records x columns from which the compiled rounds (numba, when installed) are used even
#: when they still have to be compiled (a one-time cost of several seconds, cached on disk
#: afterwards): where they pay even counting that. Below it they are used once compiled (in
#: this process or in numba's on-disk cache): 1-2 ms on Tarragona/Census against 30-90 ms.
_COMPILED_MIN_WORK = 100_000
#: Below this many records x columns the compiled rounds run in the calling thread (tens of
#: milliseconds at most, e.g. EIA's 4092 x 11: about 20-40 ms), not in a stoppable helper.
_INLINE_MAX_WORK = 100_000
_NB = None


_NB_LOCK = threading.Lock()


def _kernels():
    """The compiled rounds (numba), or None. Thread-safe: a thread that asks while another
    imports them waits for that import (it used to see "unavailable" and take the numpy
    rounds; harmless now that both give the same groups, but it cost the compiled speed)."""
    global _NB
    if _NB is None:
        with _NB_LOCK:
            if _NB is None:
                import os

                found = False
                if not os.environ.get("PYSDCMICRO_NO_NUMBA"):
                    try:
                        from . import _mdav_numba
                        found = _mdav_numba
                    except Exception:  # numba missing or unusable: the numpy rounds serve
                        pass
                _NB = found
    return _NB or None


def _ahead_of_time():
    """The rounds compiled when the package was built (:mod:`pysdcmicro._aot`), with the
    attributes of :mod:`._mdav_numba` that this module uses, or None."""
    from .. import _aot

    fam = _aot.family("mdav")
    if fam is None:
        return None
    from ._mdav_arrays import prepare

    return types.SimpleNamespace(mdav_rounds=fam.mdav_rounds, prepare=prepare, warm=lambda: True)


def _loaded(nb) -> bool:
    """Whether ``nb``'s rounds run without loading or compiling anything in this process."""
    return bool(getattr(nb.mdav_rounds, "signatures", True))


#: Calls on small inputs so far in this process (see :func:`_compiled_for`).
_SMALL_CALLS = 0
#: Set in a worker process while another worker compiles the rounds (see compiled_elsewhere).
_ELSEWHERE = False


def compiled_elsewhere(flag: bool) -> None:
    """Tell this process that another process is compiling the rounds (a fresh install):
    until numba's disk cache holds them, MDAV here takes the numpy rounds (the same groups)
    instead of compiling them a second time."""
    global _ELSEWHERE
    _ELSEWHERE = bool(flag)


def _compiled_for(Z: np.ndarray, deadline=None):
    """The compiled kernels when they should run on ``Z``, else None (see _COMPILED_MIN_WORK).

    Small inputs take the compiled rounds once they are loaded in this process. Loading them
    from numba's disk cache costs about half a second in a process that has not used numba
    yet (numba sets up its compiler the first time), against tens of milliseconds for the
    numpy rounds on Tarragona or EIA. So the first small call in a process takes the numpy
    rounds, and the second loads the compiled ones when the disk cache has them: a session
    that calls MDAV again and again (as from R) runs every later call several times faster,
    and a single call (a script, a first call from R) is not slowed. The rounds compiled when
    the package was built (:mod:`pysdcmicro._aot`) need no loading: they serve every input. Under a time limit
    (``deadline``) small inputs take the numpy rounds until the compiled ones are loaded."""
    global _SMALL_CALLS
    if Z.shape[0] == 0 or Z.shape[1] == 0:
        return None
    aot = _ahead_of_time()
    if aot is not None:  # machine code from the build: nothing to load or compile
        return aot
    small = Z.size < _COMPILED_MIN_WORK
    if small and not (_NB and _NB.mdav_rounds.signatures):  # not loaded in this process
        _SMALL_CALLS += 1
        if _SMALL_CALLS == 1 or (deadline is not None and deadline.limited):
            return None  # numba not even imported
    nb = _kernels()
    if nb is None:
        return None
    if nb.mdav_rounds.signatures:
        return nb
    if small or _ELSEWHERE:
        return nb if nb.warm() else None
    return nb


def mdav_labels(Z: np.ndarray, k: int, *, order: list | None = None, stop=None, deadline=None) -> np.ndarray:
    """Group labels of fixed-size MDAV on ``Z`` (rows = records, already scaled).

    With numba installed and no ``order`` requested, large inputs run the compiled rounds
    (:mod:`._mdav_numba`: fused passes, about 3-5x faster); they return the same groups as
    the numpy rounds, ties included (tested on random, duplicated, grid and two-scale data).
    ``stop`` (a ``threading.Event``, compiled rounds only) ends the rounds early; the
    records not grouped by then get the label -1. ``deadline`` (a
    :class:`~pysdcmicro._context.Deadline`), checked once per round (the compiled rounds:
    every 50 ms, by a watching thread): the records not grouped when it expires are grouped
    in runs of k along their first principal axis (and appended to ``order`` in that order);
    ``deadline.expired()`` then tells that the run was cut short.

    Parameters
    ----------
    Z : ndarray of shape (n, d), float64
    k : int
        Group size; the last group has k..2k-1 records.
    order : list or None
        If a list is given, the record positions are appended to it in the order MDAV
        puts them into groups (the "MDAV ordering" used by the univariate methods).

    Returns
    -------
    labels : ndarray of int64, groups numbered in order of creation.
    """
    nb = _compiled_for(Z, deadline) if order is None else None
    if nb is not None and deadline is not None and stop is None:
        labels, _ = _rounds_in_thread(nb, nb.prepare(_scaled(Z)), k, deadline)
        _fill_rest(Z, labels, k)
        return labels
    if nb is not None:
        return _compiled_labels(nb, Z, k, stop)
    labels = _dense_labels(Z, k, order=order, deadline=deadline)
    if labels.min(initial=0) < 0:
        rest = np.flatnonzero(labels < 0)
        _fill_rest(Z, labels, k)
        if order is not None:
            order.extend(rest[np.argsort(labels[rest], kind="stable")].tolist())
    return labels


def _compiled_labels(nb, Z, k, stop=None):
    args = nb.prepare(_scaled(Z))
    labels = np.empty(Z.shape[0], dtype=np.int64)
    flag = np.zeros(1, dtype=np.int64)
    if stop is None:
        nb.mdav_rounds(*args, k, labels, flag)
        return labels
    import threading

    done = threading.Event()

    def watch():
        while not done.is_set():
            if stop.wait(0.05):
                flag[0] = 1
                return

    w = threading.Thread(target=watch, daemon=True)
    w.start()
    try:
        nb.mdav_rounds(*args, k, labels, flag)  # nogil: the watcher runs alongside
    finally:
        done.set()
    return labels


def _ordered_sum(R: np.ndarray) -> np.ndarray:
    """Column sums of R added in row order (numpy's ``sum`` adds pairwise when a column is
    contiguous, e.g. one column; a running sum is sequential by definition)."""
    if R.shape[0] == 0:
        return np.zeros(R.shape[1])
    return np.cumsum(R, axis=0)[-1].copy()


def _dense_labels(Z: np.ndarray, k: int, *, order: list | None = None, deadline=None) -> np.ndarray:
    """The numpy rounds (see the module docstring); ``order`` as in :func:`mdav_labels`.
    When ``deadline`` expires, the records not yet grouped are labelled -1."""
    n = Z.shape[0]
    labels = np.empty(n, dtype=np.int64)
    idx = np.arange(n)
    R = np.array(Z, dtype=np.float64, order="C", copy=True)
    R *= distance_scale(R)
    RT = np.array(R.T, order="C")  # columns contiguous, for the column-order distances
    pen = np.zeros(n)  # 0 for remaining records, +inf for grouped ones (until compaction)
    total = _ordered_sum(R)
    m = n
    g = 0

    def take(sel: np.ndarray) -> None:
        nonlocal g, m, total
        labels[idx[sel]] = g
        if order is not None:
            # Within a group: nearest first (the ordering methods read groups as runs).
            order.extend(idx[sel].tolist())
        g += 1
        pen[sel] = np.inf
        total = total - _ordered_sum(R[sel])
        m -= sel.size

    while m >= 2 * k:
        if deadline is not None and deadline.expired():
            labels[idx[pen == 0]] = -1
            return labels
        three = m >= 3 * k
        c = total / m
        r = _farthest(_dist32(RT, c) - pen)
        base = _dist32(RT, R[r])
        s = _farthest(base - pen) if three else -1
        near = base + pen
        sel = _nearest(near, k)
        sel = sel[np.argsort(near[sel], kind="stable")]
        take(sel)
        if three:
            near = _dist32(RT, R[s]) + pen
            sel = _nearest(near, k)
            sel = sel[np.argsort(near[sel], kind="stable")]
            take(sel)
        if m and 4 * (pen.size - m) > pen.size:
            keep = pen == 0
            idx, R, RT, pen = idx[keep], R[keep], RT[:, keep], pen[keep]
            total = _ordered_sum(R)
    if m:
        rest = np.flatnonzero(pen == 0)
        labels[idx[rest]] = g
        if order is not None:
            order.extend(idx[rest].tolist())
    return labels


def _fill_rest(Z: np.ndarray, labels: np.ndarray, k: int) -> None:
    """Group the records still labelled -1 (an interrupted run) in runs of k along their first
    principal axis (the last run takes the remainder; fewer than 2k left: one group)."""
    rest = np.flatnonzero(labels < 0)
    if rest.size == 0:
        return
    g = int(labels.max()) + 1
    if rest.size < 2 * k:
        labels[rest] = g
        return
    R = Z[rest] - Z[rest].mean(axis=0)
    _, _, vt = np.linalg.svd(R[:: max(1, rest.size // 20000)], full_matrices=False)
    order = np.argsort(R @ vt[0], kind="stable")
    runs = np.minimum(np.arange(rest.size) // k, rest.size // k - 1)
    labels[rest[order]] = g + runs


#: Seconds after the stop flag is raised past which the compiled rounds' thread is left to
#: itself: a round stops within milliseconds of the flag, so a thread still busy then is
#: loading the kernels (numba's cache, or a first compilation), which cannot be stopped.
_LEAVE_AFTER = 0.1


def _rounds_in_thread(nb, args, k: int, deadline) -> tuple[np.ndarray, str]:
    """The compiled rounds in a helper thread (they release the GIL) while this thread
    watches ``deadline`` (and Ctrl-C): labels with -1 for the records not grouped when it
    expired, and why the rounds stopped ("" when they finished). A thread still loading the
    kernels when the deadline expires is left behind (it stops at its first round), and
    every record is left ungrouped."""
    import threading
    import time

    n = args[0].shape[0]
    labels = np.full(n, -1, dtype=np.int64)  # "not grouped" until the rounds say otherwise
    flag = np.zeros(1, dtype=np.int64)
    errors: list = []

    def work():
        try:
            nb.mdav_rounds(*args, k, labels, flag)
        except BaseException as exc:  # pragma: no cover  (a kernel bug)
            errors.append(exc)

    t = threading.Thread(target=work, daemon=True, name="pysdcmicro-mdav")
    t.start()
    why = ""
    flagged = None
    try:
        while t.is_alive():
            t.join(0.05)
            if not t.is_alive():
                break
            if flagged is None and deadline.expired():
                flag[0] = 1
                why = "time limit reached"
                flagged = time.monotonic()
            elif flagged is not None and time.monotonic() - flagged > _LEAVE_AFTER:
                return np.full(n, -1, dtype=np.int64), why  # its own labels array stays its own
    except KeyboardInterrupt:
        flag[0] = 1
        why = "interrupted (Ctrl-C)"
        t.join(_LEAVE_AFTER)
        if t.is_alive():  # still loading or compiling the kernels: leave it, nothing grouped
            return np.full(n, -1, dtype=np.int64), why
    if errors:  # pragma: no cover
        raise errors[0]
    return labels, why


def _compiled_solve(nb, Z: np.ndarray, k: int, ctx: Context) -> Solution:
    """The compiled rounds in a helper thread (they release the GIL), so that this thread
    stays responsive: Ctrl-C or the deadline stops the rounds within one round, and the
    records not yet grouped are split quickly (status "limit")."""
    args = nb.prepare(_scaled(Z))
    X = args[0]
    if Z.size < _INLINE_MAX_WORK and _loaded(nb):  # milliseconds: no helper thread
        labels = np.empty(X.shape[0], dtype=np.int64)
        nb.mdav_rounds(*args, k, labels, np.zeros(1, dtype=np.int64))
        return Solution(labels=labels, status="done")
    labels, why = _rounds_in_thread(nb, args, k, ctx.deadline)
    if (labels < 0).any():
        left = int((labels < 0).sum())
        _fill_rest(X, labels, k)
        return Solution(labels=labels, status="limit",
                        message=f"{why}: MDAV stopped with {left} records left, grouped by a quick "
                                "principal-axis split")
    return Solution(labels=labels, status="done")


@register_method("mdav", summary="MDAV, fixed group size k: sdcMicro's mdav groups, ties included "
                 "(with missing cells: missing_distance='sdcmicro', the bridges' default)",
                 missing_code=MissingCode("missing_distance", "sdcmicro", -999.0, "sdcMicro"))  # its NA code
def _mdav_solver(Z: np.ndarray, k: int, ctx: Context, *, missing_distance: str = "imputed") -> Solution:
    if missing_distance not in ("imputed", "sdcmicro"):
        raise InvalidInputError(
            f'`missing_distance` must be "imputed" or "sdcmicro"; got {missing_distance!r}.')
    mask = getattr(ctx, "missing_cells", None)
    if missing_distance == "sdcmicro" and mask is not None and mask.any():
        from ._mdav_missing import mdav_missing_labels, observed_zscores

        Zn = np.where(mask, np.nan, Z)  # the core's z-scores, missing cells blanked again
        return Solution(labels=mdav_missing_labels(observed_zscores(Zn), k), status="done")
    n = Z.shape[0]
    if n > 1:  # z-scores with divisor n (sdcMicro's) from the sample ones: distances as sdcMicro rounds them
        Z = Z * np.sqrt(n / (n - 1))
    nb = _compiled_for(Z, ctx.deadline)
    if nb is not None:
        return _compiled_solve(nb, Z, k, ctx)
    labels = _dense_labels(Z, k, deadline=ctx.deadline)
    if labels.min(initial=0) < 0:  # the deadline came first
        left = int((labels < 0).sum())
        _fill_rest(Z, labels, k)
        return Solution(labels=labels, status="limit",
                        message=f"time limit reached: MDAV stopped with {left} records left, grouped by a quick "
                                "principal-axis split")
    return Solution(labels=labels, status="done")
