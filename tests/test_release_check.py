"""The release check's row classes: exact k-anonymity in O(n p) time and O(n)
extra memory, by 64-bit row hashes verified row by row against a representative.

The hash only makes it fast: a collision must never merge two different rows into one
class (that could let a non-anonymous release pass). These tests compare the classes with
an independent count (Python tuples of bit patterns) and force collisions."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pysdcmicro import ReleaseCheckError
from pysdcmicro import _release
from pysdcmicro._release import release_sse_sst, row_classes, verify_release_values, wildcard_frequencies


def _independent_counts(R: np.ndarray, cols=None) -> list[int]:
    """Per row, how many rows have the same bit patterns on ``cols`` (plain Python)."""
    cols = list(range(R.shape[1])) if cols is None else list(cols)
    keys = [tuple(R[i, cols].view(np.uint64).tolist()) for i in range(R.shape[0])]
    counts = Counter(keys)
    return [counts[key] for key in keys]


def _counts_from_classes(codes: np.ndarray, n_classes: int) -> list[int]:
    assert codes.min(initial=0) >= 0 and (codes.size == 0 or codes.max() < n_classes)
    return np.bincount(codes, minlength=n_classes)[codes].tolist()


@settings(max_examples=60, deadline=None, derandomize=True)
@given(n=st.integers(1, 60), p=st.integers(1, 4), distinct=st.integers(1, 6), seed=st.integers(0, 2**32 - 1))
def test_row_classes_equal_an_independent_count(n, p, distinct, seed):
    rng = np.random.default_rng(seed)
    pool = np.array([0.0, -0.0, 1.0, 1e-300, -2.5, 1e300, 3.0])  # 0.0 and -0.0 are different rows
    R = pool[rng.integers(0, min(distinct, pool.size), size=(n, p))]
    codes, g = row_classes(R)
    assert _counts_from_classes(codes, g) == _independent_counts(R)
    first_seen = list(dict.fromkeys(codes.tolist()))
    assert first_seen == list(range(g))  # numbered in order of first appearance
    cols = [p - 1] if p > 1 else [0]
    codes, g = row_classes(R, cols)
    assert _counts_from_classes(codes, g) == _independent_counts(R, cols)


def test_every_hash_colliding_still_gives_exact_classes(monkeypatch):
    """All rows given one hash: the row-by-row comparison finds the collision and the exact
    path decides; a non-anonymous release is still refused."""
    monkeypatch.setattr(_release, "_row_hashes", lambda B, cols: np.zeros(B.shape[0], dtype=np.uint64))
    R = np.array([[1.0, 2.0], [1.0, 2.0], [1.0, 2.0], [5.0, 6.0], [5.0, 6.0], [7.0, 8.0]])
    codes, g = row_classes(R)
    assert (codes.tolist(), g) == ([0, 0, 0, 1, 1, 2], 3)
    assert wildcard_frequencies(R).tolist() == [3, 3, 3, 2, 2, 1]
    X = R + np.arange(6)[:, None]
    with pytest.raises(ReleaseCheckError, match="not 2-anonymous: 1 record"):
        verify_release_values(X, R, 2, 100.0 * np.divide(*release_sse_sst(X, R)))


def test_a_collision_between_two_rows_is_found(monkeypatch):
    """Only two different rows share a hash (the rest are distinct): their classes stay apart."""
    real = _release._row_hashes

    def colliding(B, cols):
        h = real(B, cols)
        h[1] = h[0]
        return h

    monkeypatch.setattr(_release, "_row_hashes", colliding)
    R = np.array([[1.0], [2.0], [2.0], [1.0]])
    assert _counts_from_classes(*row_classes(R)) == [2, 2, 2, 2]
    R = np.array([[1.0], [2.0], [3.0], [3.0]])  # rows 0 and 1 each alone, though hashed alike
    assert _counts_from_classes(*row_classes(R)) == [1, 1, 2, 2]


def test_verify_checks_each_variable_group_on_its_own_columns():
    R = np.array([[1.0, 5.0], [1.0, 5.0], [2.0, 5.0], [2.0, 6.0]])
    X = R.copy()
    il = 100.0 * np.divide(*release_sse_sst(X, R))
    verify_release_values(X, R, 2, il, groups=[[0]])  # column 0 alone: classes of 2
    with pytest.raises(ReleaseCheckError, match="variable group b: 1 record"):
        verify_release_values(X, R, 2, il, groups=[[0], [1]], names=["a", "b"])


def test_check_uses_no_copy_of_the_whole_matrix():
    """O(n) extra memory: peak allocation of the check well below one n x p copy."""
    import tracemalloc

    rng = np.random.default_rng(1)
    n, p, k = 100_000, 30, 3
    labels = np.minimum(np.arange(n) // k, n // k - 1)
    X = rng.normal(size=(n, p))
    R = _release.group_values(X, labels, n // k)[labels]
    il = 100.0 * np.divide(*release_sse_sst(X, R))
    tracemalloc.start()
    verify_release_values(X, R, k, il)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 0.5 * X.nbytes, (peak, X.nbytes)


def test_writer_formats_each_distinct_value_once_and_writes_pandas_bytes(tmp_path):
    """Columns of repeated values (a release) take the deduplicated path of the CSV writer:
    the bytes are still those of ``to_csv`` (0.0 and -0.0 apart, NaN empty, odd magnitudes)."""
    from pysdcmicro import _csvio

    if not _csvio.fast_writer_available():
        pytest.skip("pyarrow is not installed: pandas writes")
    rng = np.random.default_rng(5)
    pool = np.array([0.0, -0.0, np.nan, 1e-7, 123456.0, 1e16, -2.5, 0.1, 5e-324, 1.7976931348623157e308])
    n = 3 * _csvio._DEDUP_MIN
    frame = pd.DataFrame({"a": pool[rng.integers(0, pool.size, n)], "b": rng.normal(size=n // 3).repeat(3),
                          "t": rng.integers(0, 9, n).astype(str)})
    path = tmp_path / "w.csv"
    _csvio.write_csv(frame, path)
    assert path.read_bytes() == frame.to_csv(index=False).encode()


def test_writer_formats_each_distinct_row_once_round_trip_exact(tmp_path):
    """A release (rows repeated by group, as ``values[labels]``) takes the row-deduplicated
    path of the CSV writer: the bytes are those of ``to_csv``, and the floats read back
    (pyarrow's reader and Python's ``float``) are the written ones bit for bit."""
    from pysdcmicro import _csvio
    from pysdcmicro.cli import _NA_CELLS

    if not _csvio.fast_writer_available():
        pytest.skip("pyarrow is not installed: pandas writes")
    rng = np.random.default_rng(7)
    n = 3 * _csvio._DEDUP_MIN
    values = rng.normal(size=(n // 3, 3)) * 10.0 ** rng.uniform(-310, 308, (n // 3, 3))
    values[::50, 0] = np.nan
    values[1::50, 1] = -0.0
    values[2::50, 2] = 0.0
    frame = pd.DataFrame(values[rng.integers(0, n // 3, n)], columns=["a", "b", "c"])
    assert _csvio._row_classes(frame) is not None  # the repeated-rows path is the one taken
    path = tmp_path / "r.csv"
    _csvio.write_csv(frame, path)
    assert path.read_bytes() == frame.to_csv(index=False).encode()
    back = _csvio.read_float_columns(str(path), ["a", "b", "c"], _NA_CELLS, n).to_numpy()
    X = frame.to_numpy()
    assert np.array_equal(np.isnan(back), np.isnan(X))
    assert np.array_equal(np.nan_to_num(back).view(np.int64), np.nan_to_num(X).view(np.int64))
    exact = np.array([[float(c) if c else np.nan for c in line.split(",")]
                      for line in path.read_text().splitlines()[1:]])
    assert np.array_equal(np.nan_to_num(exact).view(np.int64), np.nan_to_num(X).view(np.int64))
