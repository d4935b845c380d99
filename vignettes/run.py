"""Run the vignettes: execute each ``NN_name.py`` and write ``NN_name.md`` with its outputs.

A vignette is a plain Python file in the "percent" cell format (the one jupytext and
VS Code read as a notebook)::

    # %% [markdown]
    # # A title
    # Prose. A number in the prose is computed: MDAV loses {{ res.information_loss:.2f }} %.

    # %%
    res = pysdcmicro.microaggregate(df, 3)
    print(res.summary())
    fig = res_report.plot_group_sizes()
    fig                             # a figure as a cell's last value: saved as PNG and embedded

Every code cell runs, in order, in one fresh namespace holding nothing but what the
vignette's own code defines, so that the code as shown runs when pasted into a Python
session (and ``python vignettes/NN_name.py`` runs it as it stands). What a cell prints, and
the value of its last line (as in a notebook; a matplotlib figure is saved as
``NN_name-figN.png`` and embedded), is written below its code. ``{{ expr }}`` and
``{{ expr:format }}`` in the prose are replaced by the value of ``expr`` at that point, so
that no number in a vignette is ever typed in. The fast setting (CI, the docs build:
``--fast``) sets the environment variable ``PYSDCMICRO_VIGNETTE_FAST=1``, which the
vignettes read in visible code. A vignette that cannot run here (no R, no data) prints the
reason and raises ``SystemExit(0)``: the page then says it was skipped, and why.

Usage::

    python vignettes/run.py                      # every vignette, full setting, into vignettes/
    python vignettes/run.py 01 --fast --out /tmp/v

Exit status: 0 when every vignette ran (or skipped itself), 1 when one failed.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import hashlib
import io
import os
import re
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
CELL = re.compile(r"^# %%(.*)$")
TEMPLATE = re.compile(r"\{\{(.+?)\}\}")
FORMAT_SPEC = re.compile(r"^[<>^=+\- #0-9,._%a-zA-Z]*$")
FAST_ENV = "PYSDCMICRO_VIGNETTE_FAST"


@dataclass
class Cell:
    kind: str  # "markdown" or "code"
    source: str
    line: int  # first line of the cell in the file (1-based)


@dataclass
class Outcome:
    name: str
    markdown: Path
    images: list = field(default_factory=list)
    seconds: float = 0.0
    skipped: str | None = None
    error: str | None = None


def vignettes() -> list[Path]:
    """The vignette files, in order."""
    return sorted(p for p in HERE.glob("[0-9][0-9]_*.py"))


def parse(text: str) -> list[Cell]:
    """Split a percent-format file into markdown and code cells (text before the first
    marker is a code cell, e.g. a module docstring or imports)."""
    cells: list[Cell] = []
    kind, lines, start = "code", [], 1
    for number, line in enumerate(text.splitlines(), start=1):
        match = CELL.match(line)
        if match:
            cells.append(Cell(kind, "\n".join(lines), start))
            kind = "markdown" if "[markdown]" in match.group(1) else "code"
            lines, start = [], number + 1
        else:
            lines.append(line)
    cells.append(Cell(kind, "\n".join(lines), start))
    out = []
    for cell in cells:
        if cell.kind == "markdown":
            body = "\n".join(re.sub(r"^# ?", "", ln) for ln in cell.source.splitlines())
            cell = Cell("markdown", body.strip("\n"), cell.line)
        else:
            cell = Cell("code", cell.source.strip("\n"), cell.line)
        if cell.source.strip():
            out.append(cell)
    return out


def _split_template(inner: str) -> tuple[str, str]:
    """``"expr:spec"`` -> (expr, spec) when the tail is a format spec and the head parses."""
    if ":" in inner:
        head, spec = inner.rsplit(":", 1)
        if FORMAT_SPEC.match(spec.strip()):
            try:
                ast.parse(head.strip(), mode="eval")
                return head.strip(), spec.strip()
            except SyntaxError:
                pass
    return inner.strip(), ""


def render_markdown(text: str, namespace: dict) -> str:
    """Replace every ``{{ expr[:spec] }}`` by ``format(eval(expr), spec)``."""
    def substitute(match: re.Match) -> str:
        expr, spec = _split_template(match.group(1))
        return format(eval(expr, namespace), spec)  # noqa: S307 - the vignette's own code
    return TEMPLATE.sub(substitute, text)


def typed_numbers(text: str) -> list[str]:
    """Decimal numbers written in prose (outside ``{{ }}`` and `code`): they must be computed."""
    bare = TEMPLATE.sub("", text)
    bare = re.sub(r"`[^`]*`", "", bare)
    bare = re.sub(r"\]\([^)]*\)", "]", bare)  # link targets
    return re.findall(r"(?<![\w.])\d+\.\d+(?![\w.])", bare)


class _Display:
    """Collects what a code cell shows, in order: printed text and figures."""

    def __init__(self, out_dir: Path, stem: str):
        self.out_dir = out_dir
        self.stem = stem
        self.pieces: list[tuple[str, str]] = []
        self.buffer = io.StringIO()
        self.images: list[Path] = []

    def flush(self) -> None:
        text = self.buffer.getvalue()
        if text:
            self.pieces.append(("text", text))
        self.buffer = io.StringIO()

    def show(self, fig, name: str | None = None, caption: str = "") -> Path:
        if name is None:
            name = f"fig{len(self.images) + 1}"
        if not re.fullmatch(r"[A-Za-z0-9_\-]+", name):
            raise ValueError(f"figure name must be letters, digits, '-' or '_'; got {name!r}")
        self.flush()
        path = self.out_dir / f"{self.stem}-{name}.png"
        fig.savefig(path, dpi=100)
        self.images.append(path)
        self.pieces.append(("image", f"![{caption or name}]({path.name})"
                                     + (f"\n\n*{caption}*" if caption else "")))
        return path


def _run_code(code: str, filename: str, namespace: dict, display: "_Display | None" = None) -> None:
    tree = ast.parse(code, filename=filename)
    last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    if last is not None:
        tree.body = tree.body[:-1]
    exec(compile(tree, filename, "exec"), namespace)  # noqa: S102 - the vignette's own code
    if last is not None:
        value = eval(compile(ast.Expression(last.value), filename, "eval"), namespace)  # noqa: S307
        if display is not None and type(value).__name__ == "Figure" and hasattr(value, "savefig"):
            display.show(value)
        elif value is not None:
            print(value.to_string() if hasattr(value, "to_string") and hasattr(value, "columns") else repr(value))


def run_vignette(path: Path, out_dir: Path, *, fast: bool) -> Outcome:
    """Execute one vignette and write its markdown page (and PNG files) into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    source = path.read_text(encoding="utf-8")
    digest = hashlib.sha256(source.encode("utf-8")).hexdigest()
    md_path = out_dir / (path.stem + ".md")
    outcome = Outcome(path.stem, md_path)
    display = _Display(out_dir, path.stem)

    namespace = {"__name__": "__vignette__"}
    if fast:
        os.environ[FAST_ENV] = "1"
    else:
        os.environ.pop(FAST_ENV, None)
    setting = "fast" if fast else "full"
    parts = [f"<!-- Generated by vignettes/run.py from {path.name} (sha256 {digest}), {setting} setting. "
             f"Do not edit: edit {path.name} and run `python vignettes/run.py {path.stem[:2]}`. -->"]
    started = time.perf_counter()
    os.environ.setdefault("MPLBACKEND", "Agg")
    for cell in parse(source):
        if cell.kind == "markdown":
            try:
                parts.append(render_markdown(cell.source, namespace))
            except Exception:  # noqa: BLE001 - report which template failed
                outcome.error = f"{path.name}:{cell.line}: a {{{{ }}}} template failed\n{traceback.format_exc()}"
                break
            continue
        parts.append(f"```python\n{cell.source}\n```")
        display.pieces, display.buffer = [], io.StringIO()
        try:
            with contextlib.redirect_stdout(display.buffer):
                _run_code("\n" * (cell.line - 1) + cell.source, str(path), namespace, display)
        except SystemExit as exc:
            printed = display.buffer.getvalue().strip().splitlines()
            reason = str(exc.code) if exc.code not in (None, 0) else (printed[-1] if printed else "stopped")
            if exc.code not in (None, 0) and not isinstance(exc.code, str):
                outcome.error = f"{path.name}:{cell.line}: exit status {exc.code}"
                break
            outcome.skipped = reason
            display.flush()
            parts += _pieces(display.pieces)
            parts.append(f"> **Skipped here:** {reason}")
            break
        except Exception:  # noqa: BLE001 - a failing vignette is reported, not hidden
            display.flush()
            outcome.error = f"{path.name}:{cell.line}: cell failed\n{traceback.format_exc()}"
            break
        display.flush()
        parts += _pieces(display.pieces)
    outcome.seconds = time.perf_counter() - started
    outcome.images = display.images
    if outcome.error is None:
        import pysdcmicro

        parts.append(f"---\n*Generated by running `{path.name}` ({setting} setting) with pysdcmicro "
                     f"{pysdcmicro.__version__}, Python {sys.version.split()[0]}, in {outcome.seconds:.1f} s.*")
        md_path.write_text("\n\n".join(parts) + "\n", encoding="utf-8")
    return outcome


def _pieces(pieces: list[tuple[str, str]]) -> list[str]:
    out = []
    for kind, content in pieces:
        if kind == "text":
            out.append(f"```text\n{content.rstrip()}\n```")
        else:
            out.append(content)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python vignettes/run.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="vignettes to run (file names or their number prefixes)")
    parser.add_argument("--fast", action="store_true", default=os.environ.get(FAST_ENV, "") not in ("", "0"),
                        help=f"the fast setting (also ${FAST_ENV}=1)")
    parser.add_argument("--out", type=Path, default=HERE, help="output folder (default: beside the vignettes)")
    args = parser.parse_args(argv)
    chosen = vignettes()
    if args.names:
        chosen = [p for p in chosen if any(p.name.startswith(n) or p.stem == n for n in args.names)]
        if not chosen:
            print(f"no vignette matches {args.names}", file=sys.stderr)
            return 1
    failed = False
    for path in chosen:
        outcome = run_vignette(path, args.out, fast=args.fast)
        if outcome.error:
            failed = True
            print(f"FAILED {path.name}\n{outcome.error}", file=sys.stderr)
        elif outcome.skipped:
            print(f"skipped {path.name}: {outcome.skipped} -> {outcome.markdown}")
        else:
            print(f"ok {path.name} ({outcome.seconds:.1f} s) -> {outcome.markdown}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
