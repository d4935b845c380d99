"""The vignettes run: every one in the fast setting, into a temporary folder (the checked-in
full-setting pages are never overwritten), and the checked-in pages are those of the current
sources. The runner itself (cells, templates, the last-line display) is tested on toys."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
VIGNETTES = REPO / "vignettes"
PNG = b"\x89PNG\r\n\x1a\n"


def _runner():
    spec = importlib.util.spec_from_file_location("vignette_runner", VIGNETTES / "run.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


runner = _runner()
NAMES = [p.name for p in runner.vignettes()]


def test_there_are_vignettes():
    assert "01_getting_started.py" in NAMES


@pytest.mark.subprocess
@pytest.mark.parametrize("name", NAMES)
def test_vignette_runs_in_the_fast_setting(name, tmp_path):
    pytest.importorskip("matplotlib")
    env = dict(os.environ, PYSDCMICRO_VIGNETTE_FAST="1", MPLBACKEND="Agg")
    casc = REPO.parent / "shared" / "data"
    if "PYSDCMICRO_CASC_DIR" not in env and casc.is_dir():
        env["PYSDCMICRO_CASC_DIR"] = str(casc)
    proc = subprocess.run([sys.executable, str(VIGNETTES / "run.py"), name, "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    if proc.stdout.startswith("skipped"):
        pytest.skip(proc.stdout.strip())
    page = tmp_path / name.replace(".py", ".md")
    text = page.read_text()
    assert "fast setting" in text.splitlines()[0]
    assert "Traceback" not in text and "{{" not in text
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert images, "a vignette shows at least one plot"
    for image in images:
        assert (tmp_path / image).read_bytes().startswith(PNG), image


@pytest.mark.parametrize("name", NAMES)
def test_checked_in_page_is_from_the_current_source(name):
    source = VIGNETTES / name
    page = source.with_suffix(".md")
    assert page.exists(), f"run `python vignettes/run.py {name[:2]}` and commit {page.name}"
    first = page.read_text().splitlines()[0]
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    assert digest in first, f"{page.name} is stale: run `python vignettes/run.py {name[:2]}` and commit it"
    if "skipped" not in page.read_text():
        assert "full setting" in first
    for image in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", page.read_text()):
        assert (VIGNETTES / image).read_bytes().startswith(PNG), image


@pytest.mark.parametrize("name", NAMES)
def test_code_uses_nothing_the_runner_would_provide(name):
    """The code as shown runs when pasted into a fresh session: every name it reads is
    defined by the vignette itself, an import, or a builtin (no FAST, show, skip, OUT)."""
    import builtins
    import symtable

    code = "\n".join(c.source for c in runner.parse((VIGNETTES / name).read_text()) if c.kind == "code")
    top = symtable.symtable(code, name, "exec")

    def looked_up_globally(table):
        names = set()
        for sym in table.get_symbols():
            if not sym.is_referenced():
                continue
            if table is top and not (sym.is_assigned() or sym.is_imported()):
                names.add(sym.get_name())
            elif table is not top and sym.is_global():
                names.add(sym.get_name())
        for child in table.get_children():
            names |= looked_up_globally(child)
        return names

    bound = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported()}
    missing = sorted(n for n in looked_up_globally(top) if n not in bound and not hasattr(builtins, n))
    assert not missing, f"{name} uses names it never defines: {missing}"


@pytest.mark.parametrize("name", NAMES)
def test_no_number_is_typed_into_the_prose(name):
    cells = runner.parse((VIGNETTES / name).read_text())
    typed = [(c.line, n) for c in cells if c.kind == "markdown" for n in runner.typed_numbers(c.source)]
    assert not typed, f"decimal numbers typed into the prose (compute them with {{{{ }}}}): {typed}"


def test_runner_cells_templates_and_display(tmp_path):
    (tmp_path / "99_toy.py").write_text(
        "# %% [markdown]\n# # Toy\n# Before: no value yet.\n\n"
        "# %%\nimport os\nFAST = os.environ.get('PYSDCMICRO_VIGNETTE_FAST', '') not in ('', '0')\n"
        "x = 21\nprint('printed', x)\nx * 2\n\n"
        "# %% [markdown]\n# Twice x is {{ 2 * x }}, a third is {{ x / 3:.3f }}, fast={{ FAST }}.\n\n"
        "# %%\nimport pandas as pd\npd.DataFrame({'a': [1, 2]})\n"
    )
    outcome = runner.run_vignette(tmp_path / "99_toy.py", tmp_path / "out", fast=True)
    assert outcome.error is None and outcome.skipped is None
    text = outcome.markdown.read_text()
    assert "printed 21\n42" in text                       # print output, then the last line's value
    assert "Twice x is 42, a third is 7.000, fast=True." in text
    assert "   a\n0  1\n1  2" in text                        # a DataFrame as a table


def test_runner_saves_a_figure_left_as_a_cells_value(tmp_path):
    pytest.importorskip("matplotlib")
    (tmp_path / "96_fig.py").write_text(
        "# %%\nfrom matplotlib.figure import Figure\nfig = Figure()\nfig.add_subplot().plot([1, 2])\nfig\n")
    outcome = runner.run_vignette(tmp_path / "96_fig.py", tmp_path, fast=True)
    assert outcome.error is None
    assert "![fig1](96_fig-fig1.png)" in outcome.markdown.read_text()
    assert (tmp_path / "96_fig-fig1.png").read_bytes().startswith(PNG)
    assert runner.typed_numbers("IL is 5.77 % but {{ il:.2f }} and `v1.2` and 2004") == ["5.77"]


def test_runner_reports_a_failing_cell_and_a_skip(tmp_path):
    (tmp_path / "98_bad.py").write_text("# %%\nx = 1\n\n# %%\nraise RuntimeError('boom')\n")
    outcome = runner.run_vignette(tmp_path / "98_bad.py", tmp_path, fast=True)
    assert outcome.error and "98_bad.py:5" in outcome.error and "boom" in outcome.error
    assert not (tmp_path / "98_bad.md").exists()
    (tmp_path / "97_skip.py").write_text("# %%\nprint('R is not installed')\nraise SystemExit(0)\n")
    outcome = runner.run_vignette(tmp_path / "97_skip.py", tmp_path, fast=True)
    assert outcome.skipped == "R is not installed"
    assert "Skipped here:** R is not installed" in (tmp_path / "97_skip.md").read_text()
