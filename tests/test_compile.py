"""The progress line says when a call compiles numba kernels first."""

import numpy as np
import pytest

from pysdcmicro import _compile, microaggregate
from pysdcmicro.datasets import make_synthetic


def test_kernels_for_names_the_families_a_call_uses():
    assert _compile.kernels_for("auto") == ("icsm", "tour", "two-swap")
    assert _compile.kernels_for("mdav") == ()
    assert _compile.kernels_for("mdav", steps=("two-swap",)) == ("two-swap",)
    assert _compile.kernels_for("auto", blocked=True) == ("mdav", "blocked")
    assert _compile.kernels_for("icsm", blocked=True) == ("icsm", "tour", "mdav", "blocked")


def test_a_kernel_compiled_in_this_process_is_not_cold():
    pytest.importorskip("numba")
    X = make_synthetic(60, 3, rng=1)
    microaggregate(X, 3, method="mdav", improve="two-swap")  # compiles or loads two-swap's kernels
    assert _compile.cold_kernels(("two-swap",)) == []


def test_cold_kernels_put_compiling_on_the_progress_line(monkeypatch):
    pytest.importorskip("numba")
    monkeypatch.setattr(_compile, "_cold", lambda fn: True)
    events = []
    X = make_synthetic(60, 3, rng=1)
    microaggregate(X, 3, method="mdav", improve="two-swap", progress=events.append)
    stages = [e.stage for e in events]
    assert _compile.COMPILING in stages
    assert stages.index(_compile.COMPILING) < len(stages) - 1  # said before the work, not after
    first = events[stages.index(_compile.COMPILING)]
    assert first.extra == {"kernels": 2}


def test_warm_kernels_say_nothing(monkeypatch):
    monkeypatch.setattr(_compile, "_cold", lambda fn: False)
    events = []
    microaggregate(make_synthetic(60, 3, rng=1), 3, method="auto", progress=events.append)
    assert _compile.COMPILING not in [e.stage for e in events]
    assert np.isfinite(events[-1].elapsed)
