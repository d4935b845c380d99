"""The release report (Python side) and the plots."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

import pysdcmicro
from pysdcmicro import Solution, metrics
from pysdcmicro.datasets import make_demo_data, make_synthetic

QI = ["employees", "turnover", "wages", "assets", "profit"]
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def demo():
    df = make_demo_data(150, rng=3)
    res = pysdcmicro.microaggregate(df, 3, variables=QI, method="mdav")
    return df, res


def test_report_numbers_are_the_metrics(demo):
    df, res = demo
    rep = pysdcmicro.report(res, df)
    assert rep.k_anonymous is True and rep.k == 3 and rep.n == 150 and rep.variables == QI
    assert rep.information_loss == res.information_loss and rep.sse == res.sse
    assert rep.class_sizes.min() >= 3
    assert sorted(rep.class_sizes.tolist()) == sorted(res.group_sizes.tolist())  # continuous: no two groups coincide
    u, r = rep.utility, rep.risk
    assert u["il1s"] == metrics.il1s(df, res.data, variables=QI)
    assert u["il1s_per_cell"] == pytest.approx(u["il1s"] / (150 * 5))
    assert u["eigen"] == metrics.eigen_utility(df, res.data, variables=QI)
    assert u["il1"] == metrics.il1(df, res.data, variables=QI)
    assert r["interval_disclosure"] == metrics.interval_disclosure_risk(df, res.data, variables=QI)
    assert r["records_at_risk"] == round(150 * r["interval_disclosure"]) and r["sd_fraction"] == 0.05
    assert list(rep.changes["variable"]) == QI
    d = json.loads(json.dumps(rep.to_dict()))  # strictly JSON
    assert d["k_anonymous"] is True and d["utility"]["il1s"] == u["il1s"]
    assert d["risk"]["interval_disclosure"] == r["interval_disclosure"]
    assert d["k_anonymity"]["min_class_size"] == int(rep.class_sizes.min())
    assert sum(s * c for s, c in map(lambda kv: (int(kv[0]), kv[1]), d["k_anonymity"]["class_size_counts"].items())) == 150
    assert d["method"] == "mdav" and d["status"] == "done"
    assert d["settings"]["k"] == 3 and d["settings"] == json.loads(json.dumps(res.to_dict()))["settings"]
    assert repr(rep).startswith("Report(method='mdav', n=150, variables=5, k=3, k_anonymous=True, information_loss=")


def test_report_text(demo):
    df, res = demo
    text = pysdcmicro.report(res, df).to_text()
    for phrase in ("3-anonymous:", "interval disclosure risk:", "information loss", "IL1s (sdcMicro)",
                   "eigen (sdcMicro)", "Per variable", "largest correlation change", "#"):
        assert phrase in text, phrase
    assert max(len(line) for line in text.splitlines()) <= 110


def test_report_without_original(demo):
    _, res = demo
    rep = pysdcmicro.report(res)
    assert rep.utility is None and rep.risk is None and rep.changes is None
    assert rep.k_anonymous is True
    assert "need the original data" in rep.to_text()
    assert rep.to_dict()["utility"] is None


def test_lower_bound_and_gap_are_shown():
    def bounded(Z, k, ctx):
        from pysdcmicro.constructive import mdav_labels

        labels = mdav_labels(Z, k)
        return Solution(labels=labels, lower_bound=0.5 * pysdcmicro.sse(Z, labels))

    X = make_synthetic(30, 2, rng=0)
    res = pysdcmicro.microaggregate(X, 3, method=bounded)
    rep = pysdcmicro.report(res, X)
    assert rep.lower_bound == pytest.approx(res.information_loss / 2) and rep.gap == pytest.approx(50.0)
    assert "lower bound" in rep.to_text() and "gap 50.00 %" in rep.to_text()
    assert rep.to_dict()["gap"] == pytest.approx(50.0)  # percent, as IL
    assert res.gap == pytest.approx(50.0) and res.to_dict()["gap"] == pytest.approx(50.0)
    assert "(gap 50.00 %)" in res.summary()
    assert "50.00 %" in rep.to_html()


def test_wrong_original_is_refused(demo):
    df, res = demo
    other = make_demo_data(150, rng=4)
    with pytest.raises(ValueError, match="`original` does not match `result`"):
        pysdcmicro.report(res, other)
    with pytest.raises(TypeError, match="`result` must be a MicroaggregationResult"):
        pysdcmicro.report(df, df)
    with pytest.raises(ValueError, match="`released` must have 150 records"):
        pysdcmicro.report(res, df, released=res.data.iloc[:10])


def test_report_on_released_data_that_breaks_k_anonymity(demo):
    df, res = demo
    released = res.data.copy()
    released.loc[0, "employees"] += 1e-9  # one record no longer equals its group
    rep = pysdcmicro.report(res, df, released=released, checked_on="a tampered copy")
    assert rep.k_anonymous is False and rep.class_sizes.min() == 1
    text = rep.to_text()
    assert re.search(r"^3-anonymous: +NO$", text, re.M) and "a tampered copy" in " ".join(text.split())


def test_compare_picks_the_changed_columns_and_checks_k():
    df = make_demo_data(90, rng=1)
    res = pysdcmicro.microaggregate(df, 4, variables=["turnover", "wages"], method="mdav")
    rep = pysdcmicro.compare(df, res.data)
    assert rep.variables == ["turnover", "wages"] and rep.k is None and rep.k_anonymous is None
    assert rep.information_loss == pytest.approx(res.information_loss, rel=1e-10)
    assert pysdcmicro.compare(df, res.data, k=4).k_anonymous is True
    assert pysdcmicro.compare(df, res.data, k=5).k_anonymous is False
    everything = pysdcmicro.compare(df, df)  # nothing changed: every shared numeric column
    assert everything.variables == QI and everything.information_loss == 0.0


def test_html_page(tmp_path, demo):
    pytest.importorskip("matplotlib")
    df, res = demo
    rep = pysdcmicro.report(res, df)
    path = tmp_path / "r.html"
    page = rep.to_html(path)
    assert path.read_text(encoding="utf-8") == page
    assert page.startswith("<!DOCTYPE html>") and page.count("data:image/png;base64,") == 3
    for phrase in ("3-anonymous", "interval disclosure risk", "IL1s", "eigen", "Per variable"):
        assert phrase in page, phrase
    assert rep.to_html(plots=False).count("<img") == 0
    assert pysdcmicro.report(res).to_html().count("<img") == 1  # group sizes only, without the original


def test_plots_are_figures_that_save_as_png(tmp_path, demo):
    pytest.importorskip("matplotlib")
    from pysdcmicro import reporting

    df, res = demo
    rep = pysdcmicro.report(res, df)
    figures = {
        "groups": rep.plot_group_sizes(),
        "groups_result": reporting.plot_group_sizes(res),
        "scatter": rep.plot_scatter(scale="log"),
        "dist": rep.plot_distributions(),
        "tradeoff": reporting.plot_tradeoff([
            {"dataset": d, "method": m, "k": k, "information_loss": k * f, "seconds": 0.01 * k / f}
            for d in ("a", "b") for m, f in (("x", 1.0), ("y", 1.1)) for k in (3, 5, 10)]),
        "bounds": reporting.plot_bounds(pd.DataFrame({"label": ["a", "b"], "information_loss": [5.0, 1.0],
                                                      "lower_bound": [4.5, None]}), relative=True),
    }
    for name, fig in figures.items():
        path = tmp_path / f"{name}.png"
        fig.savefig(path)
        assert path.read_bytes().startswith(PNG), name
    assert len(figures["tradeoff"].axes) == 2  # one panel per data set


def test_group_size_plot_marks_sizes_below_k_in_red():
    pytest.importorskip("matplotlib")
    from matplotlib.colors import to_hex

    from pysdcmicro.reporting import plot_group_sizes

    ax = plot_group_sizes(np.array([2, 3, 3, 4]), k=3).axes[0]
    colors = [to_hex(p.get_facecolor()) for p in ax.patches]
    assert colors[0] != colors[1] == colors[2]
    assert [p.get_height() for p in ax.patches] == [1, 2, 1]


def test_plot_input_errors():
    pytest.importorskip("matplotlib")
    from pysdcmicro.reporting import plot_bounds, plot_tradeoff

    with pytest.raises(ValueError, match="`table` needs a column 'seconds'"):
        plot_tradeoff([{"dataset": "a", "method": "m", "k": 3, "information_loss": 1.0}])
    with pytest.raises(ValueError, match="`table` must have at least one row"):
        plot_bounds(pd.DataFrame(columns=["label", "information_loss", "lower_bound"]))
    with pytest.raises(ValueError, match="needs the original data"):
        pysdcmicro.report(pysdcmicro.microaggregate(make_synthetic(12, 2, rng=0), 3, method="mdav")).plot_scatter()


@pytest.mark.subprocess
def test_core_never_imports_matplotlib_and_works_without_it():
    script = textwrap.dedent("""
        import sys
        sys.modules["matplotlib"] = None          # as if it were not installed
        import pysdcmicro
        df = pysdcmicro.datasets.make_demo_data(60, rng=0)
        res = pysdcmicro.microaggregate(df, 3, variables=["employees", "turnover"])
        rep = pysdcmicro.report(res, df)
        assert "k-anonymity" in rep.to_text() and rep.to_dict()["k_anonymous"] is True
        page = rep.to_html()
        assert "Plots need matplotlib" in page and "<img" not in page, page
        try:
            rep.to_html(plots=True)
        except ImportError as exc:
            assert 'pip install "pysdcmicro[plot]"' in str(exc), exc
        else:
            raise AssertionError("plots=True without matplotlib must raise")
        print("ok")
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr
    probe = ("import sys, pysdcmicro; r = pysdcmicro.microaggregate(pysdcmicro.datasets.make_synthetic(20, 2, rng=0), 3);"
             "pysdcmicro.report(r).to_text(); print('matplotlib' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip() == "False", proc.stderr


def test_report_has_record_linkage_and_a_headline_first(demo):
    from pysdcmicro import metrics

    df, res = demo
    rep = pysdcmicro.report(res, df)
    link = rep.to_dict()["risk"]["record_linkage"]
    expected = metrics.record_linkage_risk(df, res.data, variables=res.variables, top=5)
    assert link["linked"] == pytest.approx(expected.linked) and link["within_top"] == pytest.approx(expected.within_top)
    assert link["linked"] <= 1 / res.k + 1e-12          # k-anonymous: at most 1/k are linked
    keys = [item["key"] for item in rep.headline()]
    assert keys == ["k_anonymous", "information_loss", "record_linkage", "interval_disclosure", "unmasked"]
    text = rep.to_text()
    lines = text.splitlines()
    assert lines[2].startswith("3-anonymous:") and "yes" in lines[2]
    assert text.index("record-linkage risk:") < text.index("records x variables")
    page = rep.to_html(plots=False)
    assert page.index("id='headline'") < page.index("<h2>")


def test_tables_use_one_number_format(demo):
    df, res = demo
    text = pysdcmicro.report(res, df).to_text()
    assert not re.search(r"\d[eE][+-]\d", text), "no scientific notation in the text report"
    page = pysdcmicro.report(res, df).to_html(plots=False)
    assert not re.search(r"<td>[^<]*\d[eE][+-]\d", page)
    from pysdcmicro.reporting import format_number

    assert format_number(1155790.3) == "1,155,790" and format_number(546958) == "546,958"


HOSTILE = ["$x^2$", "a$b", "$", "\\frac{1}{0}", "_{", "^^", "50% $$", "tab\tname", "émile ü", "a\\b$c$"]


def test_hostile_column_names_are_drawn_as_plain_text(tmp_path):
    pytest.importorskip("matplotlib")
    from matplotlib.text import Text

    from pysdcmicro import reporting

    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.lognormal(size=(60, len(HOSTILE))), columns=HOSTILE)
    res = pysdcmicro.microaggregate(df, 3)
    rep = pysdcmicro.report(res, df)
    page = rep.to_html(tmp_path / "r.html")                        # renders every plot: nothing raises
    assert page.count("data:image/png;base64,") == 3
    for fig in (reporting.plot_variables(df, res.data), rep.plot_distributions(),
                rep.plot_scatter(HOSTILE[0], HOSTILE[1])):
        fig.savefig(tmp_path / "f.png")
        texts = [t for t in fig.findobj(Text) if t.get_text()]
        # as typed, with math parsing off (titles, labels), or with `$` escaped (tick labels)
        plain = [t for t in texts if "$x^2$" in t.get_text() and not t.get_parse_math() and not t.get_usetex()]
        escaped = [t for t in texts if r"\$x^2\$" in t.get_text() and not t.get_usetex()]
        assert plain or escaped, "the name $x^2$ is not drawn as plain text"


def test_risk_utility_plot_of_several_runs(demo):
    pytest.importorskip("matplotlib")
    from pysdcmicro import reporting

    df, _ = demo
    qi = ["employees", "turnover", "wages"]
    reps = [pysdcmicro.report(pysdcmicro.microaggregate(df, k, variables=qi), df) for k in (3, 5, 10)]
    fig = reporting.plot_risk_utility(reps)
    ax = fig.axes[0]
    xs, ys = ax.lines[0].get_data()
    assert list(xs) == sorted(xs)
    assert ys[0] >= ys[-1]                                # more IL, less linkage risk
    with pytest.raises(Exception, match="labels"):
        reporting.plot_risk_utility(reps, labels=["a"])


# -- what the report says, once, in full -------------------------------------------------

UNMASKED = [{"column": "firm_no", "reason": "numeric, not in `variables`", "option": "variables"},
            {"column": "region", "reason": "categorical: 4 values", "option": None}]


def test_a_yes_with_columns_left_unmasked_holds_for_the_masked_columns_only(demo):
    pytest.importorskip("matplotlib")
    df, res = demo
    rep = pysdcmicro.report(res, df)
    rep.unmasked = []
    assert rep.headline()[0]["value"] == "yes" and "columns_left_unmasked" not in rep.to_dict()["k_anonymity"]
    rep.unmasked = list(UNMASKED)
    first = rep.headline()[0]
    assert first["value"] == "yes, for the masked columns only: 2 columns left unmasked", first
    assert first["verdict"] == "info" and "The 2 columns left unmasked" in first["reading"]
    unmasked = next(h for h in rep.headline() if h["key"] == "unmasked")
    assert "'firm_no'" in unmasked["reading"] and "Name the numeric ones in `variables`" in unmasked["reading"]
    lines = rep.to_text().splitlines()
    assert lines[2] == "3-anonymous:              yes, for the masked columns only: 2 columns left unmasked"
    data = json.loads(rep.to_json())
    assert data["headline"][0]["value"] == first["value"] and data["k_anonymity"]["columns_left_unmasked"] == 2
    assert data["k_anonymous"] is True              # the verdict itself is about the masked columns
    page = rep.to_html(plots=False)
    headline = page[:page.index("</section>")]
    assert "yes, for the masked columns only: 2 columns left unmasked" in headline
    rep.unmasked = UNMASKED[:1]
    assert rep.headline()[0]["value"].endswith("1 column left unmasked")
    assert "was not checked" in rep.headline()[0]["reading"]
    assert "Name them in `variables`" in rep.headline()[-1]["reading"]


def test_each_verdict_is_said_once_in_the_text(demo):
    df, res = demo
    text = " ".join(pysdcmicro.report(res, df).to_text().split())
    assert text.count("3-anonymous") == 1 and "k-anonymity " not in text and "Protection" not in text
    assert text.count("% linked") == 1 and text.count("within the 5 nearest") == 1
    assert text.count("standard deviations of its released value") == 1 and "interval risk" not in text


def test_long_column_lists_wrap_in_full_or_say_how_many_more():
    names = [f"QUITE.LONG.VARIABLE.NAME.{i}" for i in range(13)]
    X = pd.DataFrame(make_synthetic(30, 13, rng=0), columns=names)
    rep = pysdcmicro.report(pysdcmicro.microaggregate(X, 3, method="mdav"), X)
    text = rep.to_text()
    flat = " ".join(text.split())
    assert "...." not in text and "..." not in text
    assert ", ".join(repr(n) for n in names) + "." in flat           # the headline: every name
    assert "(" + ", ".join(names) + ")" in flat                      # the data line: every name
    top = text[:text.index("Records per released combination")]     # the headline and the data
    assert max(len(line) for line in top.splitlines()) <= 100
    wide = pd.DataFrame(make_synthetic(90, 40, rng=0), columns=[f"v{i}" for i in range(40)])
    reading = pysdcmicro.report(pysdcmicro.microaggregate(wide, 3, method="mdav"), wide).headline()[0]["reading"]
    assert "'v11' and 28 more." in reading and "'v12'" not in reading


def test_status_shows_the_message_and_nothing_else_when_there_is_none(demo):
    df, res = demo
    rep = pysdcmicro.report(res, df)
    rep.message = ""
    text = rep.to_text()
    assert re.search(r"^status {16}done$", text, re.M), text
    assert "<tr><td>status</td><td>done</td></tr>" in rep.to_html(plots=False)
    rep.message = ("blocked (auto: more than 50000 records): 11 blocks of 9090..9093 records, auto in each, on 2 "
                   "worker processes; border repair: 2 passes over 36 windows, IL 2.3852 -> 2.3842 %")
    lines = rep.to_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("status"))
    block = [lines[start]] + [line for line in lines[start + 1:start + 4] if line.startswith(" " * 22)]
    assert len(block) > 1 and all(len(line) <= 100 for line in block)
    assert " ".join(" ".join(block).split()) == f"status done ({rep.message})"
    assert "2.3842 %" in " ".join(block)                              # a number keeps its unit on its line
    assert f"<td>done ({html.escape(rep.message)})</td>" in rep.to_html(plots=False)


def test_html_percentages_carry_their_unit(demo):
    df, res = demo
    rep = pysdcmicro.report(res, df)
    rep.lower_bound, rep.gap = 0.5 * rep.information_loss, 50.0
    page = rep.to_html(plots=False)
    cells = dict(re.findall(r"<tr><td>([^<]*)</td><td>([^<]*)</td></tr>", page))
    for label in ("information loss IL = 100 SSE/SST", "proven lower bound on the optimal IL",
                  "gap (IL - bound) / IL"):
        assert cells[label].endswith(" %"), (label, cells[label])
    assert cells["gap (IL - bound) / IL"] == "50.00 %"
    assert re.search(r"IL1 per cell[^<]*</td><td>[0-9.,]+ %</td>", page)


def test_wide_tables_scroll_inside_their_own_box(demo):
    names = [f"VARIABLE.NAMED.{i}" for i in range(12)]
    X = pd.DataFrame(make_synthetic(40, 12, rng=1), columns=names)
    page = pysdcmicro.report(pysdcmicro.microaggregate(X, 3, method="mdav"), X).to_html(plots=False)
    assert page.count("<div class='wide'><table class='matrix'>") == 2   # both correlation matrices
    assert re.search(r"\.wide \{[^}]*overflow-x: auto", page)


def _texts_cut_off(fig) -> list[str]:
    """The texts of ``fig`` drawn (partly) outside the figure: cut off in the PNG."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Text

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    width, height = fig.bbox.width, fig.bbox.height
    hidden = set()  # tick labels beyond the axis limits are not drawn
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            low, high = sorted(axis.get_view_interval())
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if not low - 1e-9 * abs(high - low) <= tick.get_loc() <= high + 1e-9 * abs(high - low):
                    hidden.update((id(tick.label1), id(tick.label2)))
    out = []
    for text in fig.findobj(Text):
        if not text.get_visible() or not text.get_text().strip() or id(text) in hidden:
            continue
        box = text.get_window_extent(renderer)
        if box.x0 < -1 or box.y0 < -1 or box.x1 > width + 1 or box.y1 > height + 1:
            out.append(text.get_text())
    return out


def test_pca_plot_is_linear_zooms_on_skewed_data_and_cuts_no_text_off():
    pytest.importorskip("matplotlib")
    from pysdcmicro.reporting import plot_group_sizes, plot_pca, plot_variables

    rng = np.random.default_rng(0)
    skewed = pd.DataFrame(rng.lognormal(0, 2, size=(5000, 11)),
                          columns=[f"REVENUE.OF.KIND.{i}" for i in range(11)])
    masked = skewed.round(-1)
    fig = plot_pca(skewed, masked)
    assert len(fig.axes) == 2                                    # every record, and the zoom
    assert all(ax.get_xscale() == ax.get_yscale() == "linear" for ax in fig.axes)
    full, zoom = fig.axes
    assert full.patches and zoom.get_xlim()[1] - zoom.get_xlim()[0] < 0.5 * (full.get_xlim()[1] - full.get_xlim()[0])
    assert "random 3,000 of 5,000 records" in fig._suptitle.get_text()
    assert re.search(r"\(\d[\d,]* of 3,000 records reach outside it\)", " ".join(zoom.get_title().split()))
    assert _texts_cut_off(fig) == []
    normal = pd.DataFrame(rng.normal(size=(400, 3)), columns=list("abc"))
    one = plot_pca(normal, normal + 0.1)
    assert len(one.axes) == 1 and one.axes[0].get_xscale() == "linear"
    with pytest.raises(ValueError, match="`zoom=True`"):
        plot_pca(skewed, masked, ax=one.axes[0], zoom=True)
    sizes = np.repeat([3, 4, 5], [26784, 3867, 836])
    for figure in (plot_variables(skewed, masked), plot_group_sizes(sizes, k=3), one):
        assert _texts_cut_off(figure) == []
