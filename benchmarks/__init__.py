"""Benchmark runner: ``python -m benchmarks --suite NAME``.

Each suite (``benchmarks/suites/NAME.py``) lists cases; every case runs in a fresh child
process (so its peak memory is its own) and the runner writes a table of data set, k,
method, IL, the published reference with its source, seconds and peak memory to
``benchmarks/results/NAME.md`` (and ``.json``). Speed is measured here, never asserted in
tests.
"""
