"""Writing a suite's own table: ``results/NAME.md`` (the suite's docstring, the command and
the machine, the table) and ``results/NAME.json`` (the raw records)."""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[1] / "results"


def write_results(name: str, doc: str, command: str, lines: list[str], records: list) -> None:
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    text = (f"# Benchmark suite `{name}`\n\n{doc.strip()}\n\nRun: `{command}` on {stamp} ({machine}).\n\n"
            + "\n".join(lines) + "\n")
    (RESULTS / f"{name}.md").write_text(text)
    (RESULTS / f"{name}.json").write_text(json.dumps(records, indent=1) + "\n")
    print(f"\nwrote benchmarks/results/{name}.md", file=sys.stderr)
