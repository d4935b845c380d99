"""Hostile input: the release is what the report says, or nothing is written.

Three parts:

* property tests (Hypothesis) of the numerics: random scales from 1e-300 to 1e300,
  duplicates, integers up to and beyond 2**53, constant and near-constant columns; the
  release is re-read from CSV text and verified *independently*: k-anonymity by counting
  identical rows in plain Python, and the information loss against an exact rational
  reference (``fractions.Fraction``; on z-scores IL = 100 * mean_j SSE_j / SST_j over the
  non-constant columns, because each column's variance cancels, so no square root or
  rounding is involved);
* every registered method on hostile data sets, its written release verified the same way;
* the table of hostile cases tried through the command line (``CASES``): each row states
  the input and the outcome it must have; the page ``docs/guide/hostile-input.md`` holds
  the same table, checked here to be current (rewrite it with
  ``python -m tests.cli.test_hostile --write-docs``).
"""

from __future__ import annotations

import io
import math
import sys
import warnings
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pysdcmicro
from pysdcmicro import InvalidInputError, microaggregate

from .._helpers import partitions_of
from ..method_budgets import budget

ROOT = Path(__file__).resolve().parents[2]
DOCS_PAGE = ROOT / "docs" / "guide" / "hostile-input.md"


# -- independent verification ------------------------------------------------------------

def exact_il(X: np.ndarray, R: np.ndarray) -> float | None:
    """IL of released ``R`` against original ``X`` in exact rational arithmetic; None when
    every column is constant (IL undefined). Independent of the library's float code."""
    ratios = []
    for j in range(X.shape[1]):
        x = [Fraction(float(v)) for v in X[:, j]]
        if all(v == x[0] for v in x):
            continue
        r = [Fraction(float(v)) for v in R[:, j]]
        mean = sum(x) / len(x)
        sst = sum((v - mean) ** 2 for v in x)
        sse = sum((a - b) ** 2 for a, b in zip(x, r))
        ratios.append(sse / sst)
    if not ratios:
        return None
    return float(100 * sum(ratios) / len(ratios))


def smallest_class(R: np.ndarray) -> int:
    return min(Counter(tuple(float(v).hex() for v in row) for row in R).values())


def csv_round_trip(data: pd.DataFrame, variables: list) -> np.ndarray:
    """The released values as a reader of the written CSV sees them."""
    text = data.to_csv(index=False)
    back = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    return np.array([[float(v) for v in back[str(c)]] for c in variables]).T


def check_release(X: np.ndarray, res, k: int) -> None:
    """The written release is k-anonymous and loses exactly the reported IL."""
    frame = pd.DataFrame(X, columns=[f"v{j}" for j in range(X.shape[1])])
    data = res.data if isinstance(res.data, pd.DataFrame) else pd.DataFrame(res.data, columns=frame.columns)
    variables = list(frame.columns)
    R = csv_round_trip(data, variables)
    assert np.isfinite(R).all(), "non-finite value written"
    for cols, _ in partitions_of(res):  # all columns, or each on its own (a per-variable method)
        assert smallest_class(R[:, cols]) >= k
    constant = np.all(X == X[:1], axis=0)
    assert np.array_equal(R[:, constant], X[:, constant]), "a constant column was changed"
    reference = exact_il(X, R)
    assert reference is not None
    assert math.isclose(res.information_loss, reference, rel_tol=1e-9, abs_tol=1e-12), \
        (res.information_loss, reference)


# -- property tests of the numerics ------------------------------------------------------

def _column(draw, n: int) -> np.ndarray:
    kind = draw(st.sampled_from(["scaled", "duplicates", "near-constant", "constant", "integers", "wide"]))
    exponent = draw(st.integers(-300, 300))
    scale = 10.0 ** exponent
    if kind == "scaled":
        base = draw(st.lists(st.floats(-1, 1, allow_nan=False), min_size=n, max_size=n))
        return np.array(base) * scale
    if kind == "duplicates":
        values = draw(st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=1, max_size=3))
        picks = draw(st.lists(st.integers(0, len(values) - 1), min_size=n, max_size=n))
        return np.array([values[i] for i in picks]) * scale
    if kind == "near-constant":
        offset = draw(st.sampled_from([1.0, 1e12, -3e15, 7e200]))
        step = draw(st.sampled_from([1e-15, 1e-9, 1.0]))
        return offset + step * offset * np.arange(n) if step < 1 else offset + np.arange(n) * 0.37
    if kind == "constant":
        return np.full(n, draw(st.floats(-1e300, 1e300, allow_nan=False)))
    if kind == "integers":
        return np.array(draw(st.lists(st.integers(-(2 ** 53), 2 ** 53), min_size=n, max_size=n)), dtype=np.float64)
    # "wide": one column spanning 600 orders of magnitude
    signs = np.array(draw(st.lists(st.sampled_from([-1.0, 1.0]), min_size=n, max_size=n)))
    exps = np.array(draw(st.lists(st.integers(-300, 300), min_size=n, max_size=n)), dtype=np.float64)
    return signs * 10.0 ** exps


@st.composite
def hostile_data(draw):
    k = draw(st.integers(2, 4))
    n = draw(st.integers(k, 18))
    p = draw(st.integers(1, 3))
    X = np.column_stack([_column(draw, n) for _ in range(p)])
    return X, k


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile_data())
def test_property_release_is_what_the_report_says(data):
    X, k = data
    constant = np.all(X == X[:1], axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pysdcmicro.ConstantColumnWarning)
        if constant.all():
            with pytest.raises(InvalidInputError, match="constant"):
                microaggregate(X, k, method="mdav")
            return
        before = X.copy()
        names = [f"v{j}" for j in range(X.shape[1])]  # all named: the default leaves key-like columns out
        res = microaggregate(pd.DataFrame(X, columns=names), k, method="mdav", variables=names)
    assert np.array_equal(X, before)  # never mutated
    check_release(X, res, k)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2 ** 62), st.integers(2, 20), st.booleans())
def test_property_integers_beyond_2_53_are_refused(offset, n, negative):
    values = (2 ** 53 + 1 + offset + np.arange(n, dtype=np.int64))
    if negative:
        values = -values
    frame = pd.DataFrame({"big": values, "x": np.arange(n, dtype=float)})
    with pytest.raises(InvalidInputError, match=r"column 'big' has the integer .* beyond 2\*\*53"):
        microaggregate(frame, 2, method="mdav")


def test_integers_at_2_53_are_exact():
    values = 2 ** 53 - np.arange(12, dtype=np.int64)  # every value exactly representable
    res = microaggregate(values[:, None], 3, method="mdav")
    check_release(values.astype(np.float64)[:, None], res, 3)


# -- every registered method on hostile data --------------------------------------------

def _hostile_sets() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(20261123)
    n = 24
    return {
        "huge-1e300": np.column_stack([rng.uniform(-1, 1, n) * 1e300, rng.uniform(-1, 1, n) * 1e300]),
        "near-max-1.7e308": np.column_stack([rng.uniform(-1, 1, n) * 1.7e308, rng.normal(size=n)]),
        "tiny-spread-1e12": np.column_stack([1e12 + rng.normal(size=n), 1 + 1e-15 * np.arange(n)]),
        "subnormal": np.column_stack([rng.integers(1, 50, n) * 5e-324, rng.normal(size=n)]),
        "duplicates": np.column_stack([np.repeat([1.0, 2.0, 3.0], n // 3), np.tile([5.0, 5.0, 9.0], n // 3)]),
        "wide-1e-300-1e300": np.column_stack([10.0 ** rng.integers(-300, 300, n), rng.normal(size=n)]),
    }


HOSTILE_SETS = _hostile_sets()


@pytest.mark.parametrize("name", sorted(HOSTILE_SETS))
@pytest.mark.parametrize("method", sorted(pysdcmicro.methods()))
def test_every_method_releases_what_it_reports(method, name):
    X = HOSTILE_SETS[name]
    k = 3
    res = microaggregate(X, k, method=method, rng=0, **budget(method))
    pysdcmicro.check_partition(res.labels, X.shape[0], k)
    check_release(X, res, k)


# -- the table of hostile cases (command line) ------------------------------------------

@dataclass
class Case:
    name: str            # short id
    input: str           # what the input is, in words (goes in the docs table)
    outcome: str         # "release" or "refused"
    outcome_text: str    # what happens, in words (goes in the docs table)
    make: Callable[[], pd.DataFrame]
    args: tuple = ()
    expect_in_error: str = ""


def _frame(**columns) -> pd.DataFrame:
    return pd.DataFrame(columns)


_N = 30
_RNG = np.random.default_rng(7)

CASES = [
    Case("int-beyond-2^53", "an integer column `2**60 + arange(30)` (collapses in float64)", "refused",
         "one error line naming the column, the value and the `2**53` rule; nothing written",
         lambda: _frame(big=2 ** 60 + np.arange(_N), x=np.arange(_N) * 1.5), expect_in_error="beyond 2**53"),
    Case("uint64-beyond-2^63", "a uint64 column above `2**63`", "refused",
         "one error line (the `2**53` rule); nothing written",
         lambda: _frame(big=(np.uint64(2 ** 63) + np.arange(_N, dtype=np.uint64)), x=np.arange(_N) * 1.0),
         expect_in_error="beyond 2**53"),
    Case("huge-1e300", "two columns of values near ±1e300", "release",
         "k-anonymous release; IL exact",
         lambda: _frame(a=_RNG.uniform(-1, 1, _N) * 1e300, b=_RNG.uniform(-1, 1, _N) * 1e300)),
    Case("near-max-1.7e308", "values near ±1.7e308 (group sums overflow)", "release",
         "finite group means written, IL exact",
         lambda: _frame(a=_RNG.uniform(-1, 1, _N) * 1.7e308, b=_RNG.normal(size=_N))),
    Case("tiny-spread", "`1e12 + N(0,1)` and `1 + 1e-15 i` (tiny spread for their size)", "release",
         "release written with the IL of the values as written",
         lambda: _frame(a=1e12 + _RNG.normal(size=_N), b=1 + 1e-15 * np.arange(_N))),
    Case("subnormal", "subnormal values (multiples of 5e-324)", "release", "k-anonymous release, IL exact",
         lambda: _frame(a=_RNG.integers(1, 50, _N) * 5e-324, b=_RNG.normal(size=_N))),
    Case("wide-range", "one column spanning 1e-300 to 1e300", "release", "k-anonymous release, IL exact",
         lambda: _frame(a=10.0 ** _RNG.integers(-300, 300, _N), b=_RNG.normal(size=_N))),
    Case("constant-column", "a constant column next to a varying one", "release",
         "the constant column written unchanged, a warning names it; IL from the other columns",
         lambda: _frame(c=np.full(_N, 96), x=_RNG.normal(size=_N))),
    Case("signed-zero", "a column of 0.0 and -0.0 (equal as numbers, written differently)", "release",
         "released as group values, so no record is told apart by the sign of zero (a column of "
         "signed zeros is not constant)",
         lambda: _frame(z=np.where(np.arange(_N) % 2 == 0, 0.0, -0.0), x=_RNG.normal(size=_N))),
    Case("all-constant", "every chosen column constant", "refused",
         "one error line: IL undefined, nothing to microaggregate", lambda: _frame(c=np.full(_N, 3.0)),
         expect_in_error="every chosen variable is constant"),
    Case("infinite", "an infinite value", "refused",
         "one error line naming the column, the cell as written and its row in the file (the header is row 1)",
         lambda: _frame(a=np.r_[np.arange(2.0), np.inf, np.arange(_N - 3.0)], b=np.arange(_N * 1.0)),
         expect_in_error="column 'a' has an infinite value ('inf') at row 4 of the file (the header is row 1)"),
    Case("k-above-n", "k larger than the number of records", "refused", "one error line (k <= n)",
         lambda: _frame(a=np.arange(5.0)), args=("--k", "9", "--variables", "a"), expect_in_error="`k` must be <="),
]


def _run_case(case: Case, tmp_path: Path):
    from pysdcmicro.cli import main

    frame = case.make()
    src = tmp_path / f"{case.name}.csv"
    frame.to_csv(src, index=False)
    out = tmp_path / f"{case.name}.out.csv"
    args = ["microaggregate", str(src), "-o", str(out), "--method", "mdav", "--quiet"]
    args += list(case.args) if case.args else ["--k", "3"]
    err = io.StringIO()
    old = sys.stderr
    sys.stderr = err
    try:
        code = main(args)
    finally:
        sys.stderr = old
    return frame, out, code, err.getvalue()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_case_through_the_cli(case, tmp_path):
    frame, out, code, err = _run_case(case, tmp_path)
    if case.outcome == "refused":
        assert code == 2, err
        lines = [line for line in err.splitlines() if line.startswith("pysdcmicro: error:")]
        assert len(lines) == 1 and case.expect_in_error in lines[0], err
        assert "Traceback" not in err
        assert not out.exists()
        return
    assert code == 0, err
    released = pd.read_csv(out, dtype=str, keep_default_na=False)
    X = frame.to_numpy(dtype=np.float64)
    R = np.array([[float(v) for v in released[c]] for c in frame.columns]).T
    assert np.isfinite(R).all()
    assert smallest_class(R) >= 3
    constant = np.all(X == X[:1], axis=0)
    for j in np.flatnonzero(constant):  # constant columns: the same text as read
        assert (released[frame.columns[j]] == frame[frame.columns[j]].astype(str)).all() or \
            np.array_equal(R[:, j], X[:, j])


def render_table() -> str:
    rows = ["| case | input | outcome | what happens |", "|---|---|---|---|"]
    for c in CASES:
        rows.append(f"| `{c.name}` | {c.input} | {c.outcome} | {c.outcome_text} |")
    return "\n".join(rows) + "\n"


_BEGIN = "<!-- hostile-cases: generated by `python -m tests.cli.test_hostile --write-docs`; do not edit -->\n"
_END = "<!-- end hostile-cases -->\n"


def test_docs_table_is_current():
    text = DOCS_PAGE.read_text()
    assert _BEGIN in text and _END in text, f"{DOCS_PAGE} lacks the generated table markers"
    table = text.split(_BEGIN, 1)[1].split(_END, 1)[0]
    assert table == render_table(), "docs/guide/hostile-input.md is stale: run python -m tests.cli.test_hostile --write-docs"


def _write_docs() -> None:
    text = DOCS_PAGE.read_text()
    head, rest = text.split(_BEGIN, 1)
    tail = rest.split(_END, 1)[1]
    DOCS_PAGE.write_text(head + _BEGIN + render_table() + _END + tail)


if __name__ == "__main__":  # pragma: no cover
    if "--write-docs" in sys.argv:
        _write_docs()
        print(f"wrote {DOCS_PAGE}")


def test_interrupt_before_any_partition_still_releases():
    """Ctrl-C before a method has offered any partition: a valid k-partition is released
    (runs of k along the first principal axis) with status "limit", never a traceback."""
    def interrupted(Z, k, ctx):
        raise KeyboardInterrupt

    X = np.random.default_rng(3).normal(size=(50, 3))
    res = microaggregate(X, 4, method=interrupted)
    assert res.status == "limit" and "interrupted" in res.message
    pysdcmicro.check_partition(res.labels, 50, 4)
    check_release(X, res, 4)


@pytest.mark.subprocess
@pytest.mark.slow
def test_ctrl_c_during_autos_portfolio_writes_the_whole_data_incumbent(tmp_path):
    """SIGINT to the process group (as a terminal sends it) while method auto's portfolio
    runs restarts on parts in worker processes: exit 0 within seconds, the release written
    and verified, status limit, no traceback (a part's labels once leaked as the incumbent)."""
    import json
    import os
    import signal
    import subprocess
    import time

    rng = np.random.default_rng(11)
    src = tmp_path / "in.csv"
    pd.DataFrame(rng.normal(size=(900, 4)) * [1, 10, 100, 1000], columns=list("abcd")).to_csv(src, index=False)
    out, rep = tmp_path / "out.csv", tmp_path / "rep.json"
    proc = subprocess.Popen([sys.executable, "-m", "pysdcmicro.cli", "microaggregate", str(src), "--k", "3",
                             "--time-limit", "60", "-o", str(out), "--report", str(rep), "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    # Wait until the portfolio's worker processes exist (a fixed sleep raced the imports on a
    # loaded machine: the signal then landed in `import pandas`), then a little longer.
    children = f"/proc/{proc.pid}/task/{proc.pid}/children"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with open(children) as fh:
                if fh.read().split():
                    break
        except OSError:
            pytest.skip("no /proc children file on this system")
        time.sleep(0.2)
    assert proc.poll() is None, "the run ended before its worker processes started"
    assert time.monotonic() < deadline, "no worker process started within 240 s"
    time.sleep(3)
    sent = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    waited = time.monotonic() - sent
    assert proc.returncode == 0, err.decode()
    assert b"Traceback" not in err
    assert waited < 30, waited  # behaviour, not speed: the interrupt is honoured (48 s of the limit were left)
    assert json.loads(rep.read_text())["status"] == "limit"
    released = pd.read_csv(out)
    assert smallest_class(released.to_numpy(dtype=float)) >= 3
