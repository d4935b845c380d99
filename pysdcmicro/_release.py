"""The release: group values computed without overflow or cancellation, the information
loss of the values actually released, and the final check run before anything is written.

The reported information loss is always that of the released values against the original
(IL = 100 * SSE / SST on the original's z-scores, :func:`release_sse_sst`), not of an
idealised partition: for ordinary data the two agree to the last digits, but where float64
cannot hold a group mean exactly (a column ``1e12 + N(0, 1)`` rounds group means to steps
of 1.2e-4) the report says what the file holds.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ._errors import ReleaseCheckError
from ._standardize import power_of_two_factors
from ._threads import ordered_map

__all__ = ["group_values", "release_sse_sst", "row_classes", "verify_release", "verify_release_values", "wildcard_frequencies"]

#: Relative tolerance between the reported IL and the IL recomputed from released values
#: read back from a file (a CSV written with ``repr`` floats round-trips exactly, so the
#: two agree to summation order).
IL_RTOL = 1e-9


def group_values(X: np.ndarray, labels: np.ndarray, n_groups: int) -> np.ndarray:
    """Mean of each group, shape ``(g, p)``, overflow-free for any finite input: summed on
    ``X / 2**e`` (exact power-of-two scaling, values in (-2, 2)), then scaled back.

    For ordinary data this is bit for bit ``sum / count`` (the power-of-two scaling is
    exact), the group mean sdcMicro computes: its released values, and the measures it
    derives from them (some, like the ``eigen`` utility, change with the last bit), stay
    equal. No refinement is applied: where float64 cannot hold a mean exactly the release is
    still honest, because the reported IL is computed from the released values.

    Missing cells (NaN) are left out of their group's mean; a group with no observed value
    in a column gets NaN there.

    Examples
    --------
    >>> X = np.array([[1.7e308], [1.6e308], [1.5e308], [1.0], [2.0], [3.0]])
    >>> group_values(X, np.array([0, 0, 0, 1, 1, 1]), 2)[:, 0].tolist()   # no overflow
    [1.6e+308, 2.0]
    """
    X = np.asarray(X, dtype=np.float64)
    labels = np.asarray(labels)
    factor = power_of_two_factors(X)
    out = np.empty((n_groups, X.shape[1]))

    def column(j: int) -> None:
        x = X[:, j] / factor[j]
        observed = ~np.isnan(x)
        if observed.all():
            lab, xo = labels, x
        else:
            lab, xo = labels[observed], x[observed]
        counts = np.bincount(lab, minlength=n_groups).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            m = np.bincount(lab, weights=xo, minlength=n_groups) / counts
        out[:, j] = m * factor[j]

    _each_column(column, X.shape)
    return out


def _each_column(fn: Any, shape: tuple) -> list:
    """``[fn(j) for j in range(p)]``, on threads for large arrays (:func:`~._threads.ordered_map`:
    each column's result is the same whichever thread makes it, and the caller combines them
    in column order, so the results are bit for bit those of the plain loop)."""
    n, p = shape
    return ordered_map(fn, range(p), n * p)


def release_sse_sst(X: np.ndarray, R: np.ndarray) -> tuple[float, float]:
    """``(SSE, SST)`` of released values ``R`` against original values ``X`` (both
    ``(n, p)``), on the original's z-scores (mean and sample sd of each column of ``X``).

    Overflow-free for any finite input (each column divided by the same exact power of two
    first). Constant columns of ``X`` contribute nothing; cells missing in either are
    skipped, and the mean and sd use the observed values of ``X``.
    """
    X = np.asarray(X, dtype=np.float64)
    R = np.asarray(R, dtype=np.float64)
    factors = power_of_two_factors(X)  # per column, all at once

    def column(j: int) -> tuple[float, float] | None:  # O(n) extra memory per column
        factor = factors[j]
        x = X[:, j] / factor
        r = R[:, j] / factor
        missing = np.isnan(x)
        xo = x[~missing] if missing.any() else x
        if xo.size < 2 or xo.min() == xo.max():
            return None
        # Sum of squares about the exact mean: the float mean m may not be representable
        # exactly (1e12 + 0.185), so subtract the residual term n * delta**2 with
        # delta = mean(x - m) (computed where subtraction of nearby values is exact).
        m = xo.mean()
        dev = xo - m
        delta = dev.mean()
        ss = float(np.dot(dev, dev)) - xo.size * delta * delta
        if not (ss > 0 and math.isfinite(ss)):
            return None
        var = ss / (xo.size - 1)  # the sample variance: z-scores have sum of squares n - 1
        d = np.subtract(x, r, out=r)
        np.multiply(d, d, out=d)
        total = float(np.sum(d))  # as nansum when no cell is missing (the same sum, bit for bit)
        if total != total:
            total = float(np.nansum(d))
        return total / var, ss / var

    sse = sst = 0.0
    for part in _each_column(column, X.shape):  # added in column order: the same sums as one loop
        if part is not None:
            sse += part[0]
            sst += part[1]
    return float(sse), float(sst)  # Python floats (numpy 2 prints np.float64(...) in reports and doctests)


def wildcard_frequencies(R: Any) -> np.ndarray:
    """For each record, how many records (itself included) it cannot be told apart from,
    with a missing cell matching any value (sdcMicro's convention for missing key values):
    records i and j match when they agree on every column where both are observed.

    Without missing cells this is the ordinary sample frequency (exact equality of all
    released values), O(n p). With missing cells the distinct released rows (u of them,
    about n / k after microaggregation) are compared pairwise in blocks: O(u^2 p) time,
    O(u p) memory per block of 256 rows.

    Examples
    --------
    >>> R = np.array([[1.0, 2.0], [1.0, np.nan], [1.0, 3.0], [np.nan, np.nan]])
    >>> wildcard_frequencies(R).tolist()
    [3, 4, 3, 4]
    """
    if isinstance(R, pd.DataFrame):
        R = _float_array(R)
    if isinstance(R, np.ndarray) and R.dtype == np.float64 and R.ndim == 2 and R.shape[1] \
            and not _has_missing(R, range(R.shape[1])):
        # No missing cell: rows equal bit for bit (as _value_codes compares floats), counted
        # by exact row classes (hashed, then verified), O(n p) time and O(n) extra memory.
        codes, n_classes = row_classes(R)
        return np.bincount(codes, minlength=n_classes)[codes].astype(np.int64)
    frame = R if isinstance(R, pd.DataFrame) else pd.DataFrame(np.asarray(R))
    C = _value_codes(frame)  # equal codes = the same value as written (bit for bit for floats); NaN = missing
    codes = pd.DataFrame(C).groupby(list(range(C.shape[1])), sort=False, dropna=False).ngroup().to_numpy()
    counts = np.bincount(codes)
    if not np.isnan(C).any():
        return counts[codes].astype(np.int64)
    first = np.unique(codes, return_index=True)[1]
    U = C[first]  # distinct rows, in code order
    miss = np.isnan(U)
    patterns = np.unique(miss, axis=0)
    # pairwise: u^2 p cell comparisons (~3 ns each); by patterns: m^2 group-bys (~2 ms each)
    if patterns.shape[0] ** 2 * 2e-3 < U.shape[0] ** 2 * U.shape[1] * 3e-9:
        return _wildcard_by_patterns(U, miss, patterns, counts)[codes]
    freq_u = np.zeros(U.shape[0], dtype=np.int64)
    block = 256
    for start in range(0, U.shape[0], block):
        a, ma = U[start:start + block, None, :], miss[start:start + block, None, :]
        match = ((a == U[None, :, :]) | ma | miss[None, :, :]).all(axis=2)
        freq_u[start:start + block] = match.astype(np.int64) @ counts
    return freq_u[codes]


def _float_array(frame: pd.DataFrame) -> Any:
    """``frame`` as a float64 array when every column is a float column (one n x p copy,
    cheaper than a group-by), else ``frame`` unchanged."""
    if frame.shape[1] and all(pd.api.types.is_float_dtype(dt) for dt in frame.dtypes):
        return frame.to_numpy(dtype=np.float64, na_value=np.nan)
    return frame


_ROW_CHUNK = 1 << 16  # rows per slice: a slice of a few columns stays in the CPU cache
_CHECK_CELLS = 1 << 18  # cells compared at a time against their class's first row
_SEED = np.uint64(0x243F6A8885A308D3)
_MIX = np.uint64(0x9E3779B97F4A7C15)
_SHIFT = np.uint64(29)


def _has_missing(R: np.ndarray, cols: Any) -> bool:
    """Whether any cell of the columns ``cols`` of ``R`` is NaN (one column at a time:
    O(n) extra memory)."""
    return any(bool(np.isnan(R[:, j]).any()) for j in cols)


def _row_hashes(B: np.ndarray, cols: list) -> np.ndarray:
    """A 64-bit hash of each row of the bit patterns ``B[:, cols]`` (uint64), computed on
    slices of rows (cache-friendly on a C-ordered n x p array); O(n) extra memory."""
    n = B.shape[0]
    h = np.empty(n, dtype=np.uint64)
    tmp = np.empty(min(n, _ROW_CHUNK), dtype=np.uint64)
    for start in range(0, n, _ROW_CHUNK):
        hc = h[start:start + _ROW_CHUNK]
        tc = tmp[:hc.size]
        hc.fill(_SEED)
        for j in cols:
            np.bitwise_xor(hc, B[start:start + _ROW_CHUNK, j], out=hc)
            np.multiply(hc, _MIX, out=hc)  # wraps modulo 2**64
            np.right_shift(hc, _SHIFT, out=tc)
            np.bitwise_xor(hc, tc, out=hc)
    return h


def row_classes(R: np.ndarray, cols: Any = None) -> tuple[np.ndarray, int]:
    """Classes of rows of ``R[:, cols]`` that are equal bit for bit (0.0 and -0.0 differ,
    as they are written differently): ``(codes, n_classes)``, codes numbered in order of
    first appearance. ``R`` is a float64 2-D array; ``cols`` column positions (default all).

    Exact, in O(n p) time and O(n) extra memory (no n x p copy, no sort of rows): each row
    is hashed to 64 bits, rows are grouped by hash (a hash table), and every row is then
    compared, bit for bit, with the first row of its group. Only if two different rows
    share a hash (a collision: never seen in practice) are the rows grouped by an exact
    sort of the n x p bit patterns instead; a collision can cost time, never a wrong class.

    Examples
    --------
    >>> codes, g = row_classes(np.array([[1.0, 2.0], [0.0, 1.0], [1.0, 2.0], [-0.0, 1.0]]))
    >>> codes.tolist(), g
    ([0, 1, 0, 2], 3)
    """
    R = np.asarray(R)
    if R.dtype != np.float64 or R.ndim != 2:
        raise TypeError("row_classes needs a float64 2-D array")
    cols = list(range(R.shape[1])) if cols is None else [int(c) for c in cols]
    n = R.shape[0]
    if n == 0 or not cols:
        return np.zeros(n, dtype=np.int64), int(n > 0)
    B = R.view(np.uint64)
    codes, uniques = pd.factorize(_row_hashes(B, cols))
    n_classes = len(uniques)
    first = np.empty(n_classes, dtype=np.intp)
    first[codes] = np.arange(n)  # a row of each class (which one does not matter)
    step = max(1024, _CHECK_CELLS // len(cols))  # rows compared at a time: O(n) memory whatever p is
    for start in range(0, n, step):
        rows = first[codes[start:start + step]]
        here = B[start:start + step][:, cols] if len(cols) < B.shape[1] else B[start:start + step]
        there = B[rows][:, cols] if len(cols) < B.shape[1] else B[rows]
        if not np.array_equal(here, there):  # a hash collision: group exactly instead
            return _row_classes_exact(B, cols)
    return codes.astype(np.int64, copy=False), n_classes


def _row_classes_exact(B: np.ndarray, cols: list) -> tuple[np.ndarray, int]:
    """:func:`row_classes` by a sort of the rows' bit patterns (O(n p) extra memory)."""
    rows = np.ascontiguousarray(B[:, cols]).view(np.dtype((np.void, 8 * len(cols)))).ravel()
    _, first, inverse = np.unique(rows, return_index=True, return_inverse=True)
    order = np.empty(first.size, dtype=np.int64)
    order[np.argsort(first, kind="stable")] = np.arange(first.size)  # renumber by first appearance
    return order[inverse.ravel()], int(first.size)


def _value_codes(frame: pd.DataFrame) -> np.ndarray:
    """Each column's values as small integer codes (float64, NaN for a missing cell):
    floats by their bit pattern (0.0 and -0.0 are written differently, so they differ),
    other dtypes by equality."""
    out = np.empty(frame.shape, dtype=np.float64)
    for j in range(frame.shape[1]):
        s = frame.iloc[:, j]
        if pd.api.types.is_float_dtype(s.dtype):
            x = s.to_numpy(dtype=np.float64, na_value=np.nan)
            miss = np.isnan(x)
            codes = pd.factorize(np.where(miss, 0.0, x).view(np.int64))[0].astype(np.float64)
            codes[miss] = np.nan
        else:
            codes = pd.factorize(s, use_na_sentinel=True)[0].astype(np.float64)
            codes[codes < 0] = np.nan
        out[:, j] = codes
    return out


def _wildcard_by_patterns(U: np.ndarray, miss: np.ndarray, patterns: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Wildcard frequencies of the distinct rows ``U`` (multiplicities ``counts``), one
    group-by per pair of missing patterns (a, b): rows of b matching a row of a are those
    equal to it on the columns both observe. O(m^2) group-bys over O(m u) rows in all."""
    code_of = {tuple(pat): i for i, pat in enumerate(patterns)}
    pattern = np.array([code_of[tuple(row)] for row in miss])
    members = [np.flatnonzero(pattern == a) for a in range(len(patterns))]
    freq = np.zeros(U.shape[0], dtype=np.int64)
    for a, rows_a in enumerate(members):
        for b, rows_b in enumerate(members):
            shared = np.flatnonzero(~patterns[a] & ~patterns[b])
            if shared.size == 0:  # nothing both observe: every row of b matches every row of a
                freq[rows_a] += int(counts[rows_b].sum())
                continue
            keys_b = pd.DataFrame(U[np.ix_(rows_b, shared)])
            totals = pd.Series(counts[rows_b]).groupby([keys_b[c] for c in keys_b.columns], sort=False).sum()
            keys_a = U[np.ix_(rows_a, shared)]
            index = pd.MultiIndex.from_arrays(list(keys_a.T)) if shared.size > 1 else pd.Index(keys_a[:, 0])
            freq[rows_a] += totals.reindex(index).fillna(0).to_numpy(dtype=np.int64)
    return freq


def _smallest_class(R: np.ndarray, cols: list, k: int) -> tuple[int, int, np.ndarray | None]:
    """``(smallest frequency, records matched by fewer than k, class sizes)`` of the rows of
    ``R[:, cols]``. Without missing cells: exact row classes (:func:`row_classes`, O(n p)
    time, O(n) extra memory), their sizes in order of first appearance; with them, the
    wildcard rule (:func:`wildcard_frequencies`) and None for the sizes."""
    if not R.shape[0]:
        return k, 0, None
    if _has_missing(R, cols):
        sizes = wildcard_frequencies(np.ascontiguousarray(R[:, cols]))
        return int(sizes.min()), int((sizes < k).sum()), None
    codes, n_classes = row_classes(R, cols)
    counts = np.bincount(codes, minlength=n_classes)
    return int(counts.min()), int(counts[counts < k].sum()), counts.astype(np.int64, copy=False)


def verify_release_values(X: np.ndarray, R: np.ndarray, k: int, information_loss: float, *,
                          what: str = "the release", names: list | None = None,
                          groups: list | None = None, sse_sst: tuple[float, float] | None = None) -> None:
    """Raise :class:`~pysdcmicro.ReleaseCheckError` unless the released values ``R`` are
    k-anonymous (every record matched by >= ``k`` records; a missing cell matches any
    value, see :func:`wildcard_frequencies`) and their information loss against ``X`` is
    ``information_loss`` (relative tolerance 1e-9).

    ``groups`` (lists of column positions, groups of variables microaggregated
    separately): each group is checked for k-anonymity on its own columns. ``sse_sst``: the
    release's :func:`release_sse_sst`, when the caller has just computed it from these same
    arrays (it is then not computed twice)."""
    _check_release_values(X, R, k, information_loss, what=what, names=names, groups=groups, sse_sst=sse_sst)


def _check_release_values(X: np.ndarray, R: np.ndarray, k: int, information_loss: float, *,
                          what: str = "the release", names: list | None = None,
                          groups: list | None = None,
                          sse_sst: tuple[float, float] | None = None) -> np.ndarray | None:
    """:func:`verify_release_values`, returning the sizes of the release's equivalence
    classes (those :func:`~pysdcmicro.metrics.equivalence_class_sizes` gives, group after
    group) when no cell is missing, else None: the command line's report reuses them."""
    X = np.asarray(X, dtype=np.float64)
    R = np.asarray(R, dtype=np.float64)
    if R.shape != X.shape:
        raise ReleaseCheckError(f"{what} has shape {R.shape}; the original's chosen columns have {X.shape}.")
    all_sizes: list | None = []
    for cols in (groups if groups else [list(range(R.shape[1]))]):
        smallest, below, sizes = _smallest_class(R, list(cols), k)
        all_sizes = None if all_sizes is None or sizes is None else all_sizes + [sizes]
        if smallest < k:
            part = "" if not groups else " on the variable group " + ", ".join(
                str(names[c]) if names is not None else str(c) for c in cols)
            raise ReleaseCheckError(
                f"{what} is not {k}-anonymous{part}: {below} record(s) match fewer than {k} "
                f"records (a missing cell matches any value; smallest: {smallest}); nothing was written."
            )
    sse, sst = release_sse_sst(X, R) if sse_sst is None else sse_sst
    il = 100.0 * sse / sst if sst > 0 else math.nan
    if not math.isclose(il, information_loss, rel_tol=IL_RTOL, abs_tol=1e-12):
        raise ReleaseCheckError(
            f"{what} loses IL {il:.12g} % against the original, but the result reports "
            f"{information_loss:.12g} %; nothing was written."
        )
    return np.concatenate(all_sizes) if all_sizes else None


def verify_release(original: Any, released: Any, result: Any, *, what: str = "the release") -> None:
    """Final check of a release before it is written: ``released`` (the masked data, e.g.
    as written and read back) must be k-anonymous and lose exactly ``result``'s information
    loss against ``original`` (the data given to :func:`~pysdcmicro.microaggregate`).

    Both are DataFrames (columns by label) or 2-D arrays (columns by position) holding at
    least ``result.variables``. Raises :class:`~pysdcmicro.ReleaseCheckError` with one line
    saying why; returns None when the release is what the result says.

    Examples
    --------
    >>> import numpy as np, pysdcmicro
    >>> X = np.array([[0.0], [1.0], [2.0], [10.0], [11.0], [12.0]])
    >>> res = pysdcmicro.microaggregate(X, 3, method="mdav")
    >>> verify_release(X, res.data, res)        # passes silently
    >>> verify_release(X, X, res)               # the original is not a 3-anonymous release
    Traceback (most recent call last):
    ...
    pysdcmicro._errors.ReleaseCheckError: the release is not 3-anonymous: 6 record(s) match fewer than 3 records (a missing cell matches any value; smallest: 1); nothing was written.
    """
    _check_release(original, released, result, what=what)


def _check_release(original: Any, released: Any, result: Any, *, what: str = "the release") -> np.ndarray | None:
    """:func:`verify_release`, returning the class sizes (see :func:`_check_release_values`)."""
    variables = list(result.variables)
    settings = getattr(result, "settings", None) or {}
    groups = None
    if settings.get("variable_groups"):
        index = {v: j for j, v in enumerate(variables)}
        groups = [[index[v] for v in group] for group in settings["variable_groups"]]
    return _check_release_values(_columns_of(original, variables), _columns_of(released, variables),
                                 int(result.k), float(result.information_loss), what=what, names=variables,
                                 groups=groups)


def _columns_of(data: Any, variables: list) -> np.ndarray:
    if isinstance(data, pd.DataFrame):
        return data[variables].to_numpy(dtype=np.float64, na_value=np.nan)
    arr = np.asarray(data, dtype=np.float64)
    return arr[:, variables]


def across_groups(released: Any, k: int, names: list | None = None) -> dict:
    """How identifiable the records are on every variable group's columns together.

    With groups of variables each group's columns are k-anonymous, but the combination of
    the groups' released values can be shared by fewer than ``k`` records: a record an
    intruder singles out by values of two groups. ``released`` holds the columns of every
    group (a missing cell matches any value, as :func:`wildcard_frequencies`). Returns
    ``{"variables", "records_below_k", "smallest_frequency"}``.
    """
    freq = wildcard_frequencies(released)
    if names is None:
        names = list(released.columns) if isinstance(released, pd.DataFrame) else list(range(np.shape(released)[1]))
    return {"variables": [v if isinstance(v, (int, np.integer)) else str(v) for v in names],
            "records_below_k": int(np.count_nonzero(freq < k)), "smallest_frequency": int(freq.min())}


def across_groups_message(across: dict, k: int) -> str:
    """The warning for :func:`across_groups`' count, when it is not 0."""
    below = across["records_below_k"]
    return (f"variable groups: {below} record{'s' if below != 1 else ''} can be singled out across the groups: "
            f"the combination of their released values over every group's columns is shared by fewer than k = {k} "
            f"records (smallest: {across['smallest_frequency']}), although each group alone is {k}-anonymous; "
            "put the columns an intruder may know together in one group (`variables`, --variables 'a,b,c') to "
            "protect their combination.")
