"""A self-contained HTML page for a :class:`~pysdcmicro.Report` (plots embedded as PNG)."""

from __future__ import annotations

import base64
import html
import json
import math
from typing import Any

import numpy as np

from ._format import cell as _cell, format_number

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 960px; margin: 2em auto;
       padding: 0 1em; color: #222; line-height: 1.45; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; } h2 { font-size: 1.15em; margin-top: 1.6em;
     border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.92em; }
td, th { padding: 0.25em 0.7em; border-bottom: 1px solid #eee; text-align: right; }
th { background: #f6f6f6; } td:first-child, th:first-child { text-align: left; }
.ok { color: #1a7f37; font-weight: 600; } .bad { color: #c0392b; font-weight: 600; }
.note { color: #666; font-size: 0.88em; } img { max-width: 100%; }
.figs { display: flex; flex-wrap: wrap; gap: 1em; } .figs figure { margin: 0; }
pre { background: #f6f6f6; padding: 0.8em; overflow-x: auto; font-size: 0.82em; }
#headline { border: 1px solid #ccd; border-radius: 6px; padding: 0.4em 1.2em 0.8em; background: #fafbff; }
#headline dl { display: grid; grid-template-columns: minmax(9em, max-content) 1fr; gap: 0.35em 1.2em; margin: 0.6em 0 0; }
#headline dt { font-weight: 600; } #headline dd { margin: 0; }
#headline .value { font-size: 1.1em; font-weight: 600; } #headline .reading { color: #555; font-size: 0.9em; }
.figs figure { margin: 0 0 1.2em; } figcaption { margin-top: 0.3em; }
table.facts td { text-align: left; } table.facts td:first-child { white-space: nowrap; }
.wide { overflow-x: auto; max-width: 100%; margin: 0.6em 0; } .wide table { margin: 0; }
table.matrix { font-size: 0.8em; } table.matrix td, table.matrix th { padding: 0.2em 0.5em; }
table.matrix th:first-child, table.matrix td:first-child { position: sticky; left: 0; background: #fff;
     box-shadow: 1px 0 0 #ddd; } table.matrix tr:first-child th:first-child { background: #f6f6f6; }
"""


def _e(value: Any) -> str:
    return html.escape(str(value))


def _fmt(value: Any, digits: int = 4) -> str:
    """Every number of the page in the reports' one format (:func:`format_number`)."""
    if value is None:
        return "&ndash;"
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return _e(format_number(value, digits=digits))
    return _e(value)


def _corr(value: Any) -> str:
    """A correlation: four decimals, the same on every cell of a table (1.0000, 0.1235)."""
    v = float(value)
    return f"{v:.4f}" if np.isfinite(v) else "undefined"


def _rows(pairs: list[tuple[str, str]]) -> str:
    return "".join(f"<tr><td>{_e(k)}</td><td>{v}</td></tr>" for k, v in pairs)


def _wide(table: str) -> str:
    """A table that may be wider than the page's column: it scrolls sideways in its own box
    (its first column stays in view) instead of being clipped or widening the page."""
    return f"<div class='wide'>{table}</div>"


def _percent(value: Any) -> str:
    """A number in percent, with its unit (as the headline writes IL and the gap)."""
    text = _fmt(value)
    return text if text in ("&ndash;", "undefined") else f"{text} %"


def _plots(rep) -> list[tuple[str, str]]:
    from ._plots import figure_png

    from ._plots import plot_pca, plot_variables

    figures = []
    if rep.original is not None:
        pca = plot_pca(rep.original, rep.released, variables=rep.variables)
        zoomed = len(pca.axes) > 1
        figures.append(("All variables at once: each original record (dot) joined to its released record "
                        "(diamond) in the plane of the first two principal components of the original, on linear "
                        "axes. Short lines: little was changed."
                        + (" A few records lie far out, so the right panel zooms on the others (the dashed box "
                           "on the left); lines leaving it continue outside." if zoomed else ""), pca))
        figures.append(("One panel per variable: original value against released value; points on the dashed "
                        "diagonal are unchanged. Skewed variables are on log axes.",
                        plot_variables(rep.original, rep.released, variables=rep.variables)))
    figures.append(("Records per released combination: every bar left of the dashed line would break "
                    "k-anonymity.", rep.plot_group_sizes()))
    return [(caption, base64.b64encode(figure_png(fig)).decode("ascii")) for caption, fig in figures]


def _headline(rep, title: str) -> str:
    rows = []
    for item in rep.headline():
        cls = {"good": "ok", "bad": "bad"}.get(item["verdict"], "")
        rows.append(f"<dt>{_e(item['label'])}</dt><dd><span class='value {cls}'>{_e(item['value'])}</span><br>"
                    f"<span class='reading'>{_e(item['reading'])}</span></dd>")
    return f"<section id='headline'><h1>{_e(title)}</h1><dl>{''.join(rows)}</dl></section>"


def render_body(rep, *, plots: bool | None = None) -> str:
    parts: list[str] = []
    title = (f"Release report: {rep.n:,} records, k = {rep.k}, {len(rep.variables)} variables"
             + (f", method {rep.method}" if rep.method else ""))
    parts.append(_headline(rep, title))
    parts.append("<h2>The data</h2>")
    facts = [("records x variables", f"{rep.n:,} x {len(rep.variables)}"),
             ("variables", _e(", ".join(map(str, rep.variables))))]
    if rep.k is not None:
        facts.append(("k", _e(rep.k)))
    if rep.status is not None:
        facts.append(("status", _e(rep.status + (f" ({rep.message})" if rep.message else ""))))
    if rep.seconds is not None:
        facts.append(("seconds", f"{rep.seconds:.3f}"))
    parts.append(f"<table class='facts'>{_rows(facts)}</table>")

    want = plots
    if want is not False:
        try:
            figures = _plots(rep)
        except ImportError:
            if want:
                raise
            figures = None
        if figures is None:
            parts.append("<p class='note'>Plots need matplotlib: <code>pip install \"pysdcmicro[plot]\"</code>.</p>")
        else:
            parts.append("<h2>Plots</h2><div class='figs'>")
            for caption, data in figures:
                parts.append(f"<figure><img alt='{_e(caption)}' src='data:image/png;base64,{data}'>"
                             f"<figcaption class='note'>{_e(caption)}</figcaption></figure>")
            parts.append("</div>")

    parts.append("<h2>Utility</h2>")
    util = []
    if rep.information_loss is not None:
        util.append(("information loss IL = 100 SSE/SST", _percent(rep.information_loss)))
    if rep.lower_bound is not None:
        util.append(("proven lower bound on the optimal IL", _percent(rep.lower_bound)))
        util.append(("gap (IL - bound) / IL", _percent(rep.gap)))
    if rep.utility is not None:
        u = rep.utility
        cells = rep.n * len(rep.variables)
        util += [("IL1s (sdcMicro dUtility, sum over cells)", _fmt(u["il1s"])),
                 ("IL1s per cell (Mateo-Sanz et al. 2004): mean |original - released| in units of sqrt(2) sd; "
                  "0 = unchanged", _fmt(u["il1s_per_cell"])),
                 ("eigen (sdcMicro dUtility): relative change of the correlation matrix's eigenvalues; "
                  f"0 = correlations kept (sdcMicro prints {100 * u['eigen']:.2f} %)" if u["eigen"] is not None
                  and math.isfinite(u["eigen"]) else "eigen (sdcMicro dUtility)", _fmt(u["eigen"])),
                 ("IL1 (sdcMicro dUtility, sum over cells)", _fmt(u["il1"])),
                 ("IL1 per cell: mean 100 |original - released| / |original|; 0 = unchanged",
                  _percent(None if u["il1"] is None else u["il1"] / cells))]
    parts.append(_wide(f"<table>{_rows(util)}</table>"))
    if rep.changes is not None:
        head = "".join(f"<th>{_e(h)}</th>" for h in ("variable", "mean before", "mean after", "sd before",
                                                       "sd after", "variance ratio"))
        body = "".join(
            f"<tr><td>{_e(r.variable)}</td><td>{_fmt(r.mean_original)}</td><td>{_fmt(r.mean_masked)}</td>"
            f"<td>{_fmt(r.sd_original)}</td><td>{_fmt(r.sd_masked)}</td><td>{_fmt(r.variance_ratio)}</td></tr>"
            for r in rep.changes.itertuples())
        parts.append(f"<h2>Per variable</h2>" + _wide(f"<table><tr>{head}</tr>{body}</table>"))
    if rep.correlations is not None and rep.correlations["pair"] is not None:
        c = rep.correlations
        a, b = c["pair"]
        parts.append(f"<p>Largest change of a correlation: {_corr(c['max_abs_change'])} ({_e(a)} ~ {_e(b)}: "
                     f"{_corr(_cell(c['original'], a, b))} &rarr; {_corr(_cell(c['masked'], a, b))}).</p>")
        if len(rep.variables) <= 12:
            for which in ("original", "masked"):
                m = c[which]
                head = "".join(f"<th>{_e(v)}</th>" for v in m.columns)
                body = "".join(f"<tr><td>{_e(i)}</td>" + "".join(f"<td>{_corr(v)}</td>" for v in row) + "</tr>"
                               for i, row in zip(m.index, m.to_numpy()))
                parts.append(f"<p class='note'>Correlations, {which}:</p>"
                             + _wide(f"<table class='matrix'><tr><th></th>{head}</tr>{body}</table>"))
    if rep.settings:
        parts.append("<details><summary>Settings (everything that made the result)</summary>"
                     f"<pre>{_e(json.dumps(rep.settings, indent=2, default=str))}</pre></details>")
    if rep.utility is not None:
        parts.append(f"<p class='note'>Definitions: {_e(rep.utility['definitions'])}; {_e(rep.risk['definition'])}; "
                     "record linkage: distance-based record linkage (Pagliuca &amp; Seri 1999; Domingo-Ferrer &amp; "
                     "Torra 2001), both files standardized with the original's means and standard deviations, ties "
                     "counted fractionally.</p>")
    return "\n".join(parts)


def render_html(rep, *, plots: bool | None = None) -> str:
    body = render_body(rep, plots=plots)
    title = "pysdcmicro release report" + (f" ({rep.method})" if rep.method else "")
    return (f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>{_e(title)}</title>"
            f"<style>{_STYLE}</style></head><body>\n{body}\n</body></html>\n")
