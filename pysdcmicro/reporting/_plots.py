"""Plots for reports and vignettes (matplotlib, an optional extra: ``pip install "pysdcmicro[plot]"``).

Every function returns a :class:`matplotlib.figure.Figure` (made without pyplot, so no GUI
backend and no global state is touched) or draws on the ``ax`` it is given. Save with
``fig.savefig("name.png")``. The core of pysdcmicro never imports this module.
"""

from __future__ import annotations

import io
import math
import re
from typing import Any

import numpy as np
import pandas as pd

from .._errors import InvalidInputError, InvalidTypeError
from .._result import MicroaggregationResult

__all__ = [
    "plot_group_sizes",
    "plot_pca",
    "plot_variables",
    "plot_risk_utility",
    "plot_original_vs_masked",
    "plot_distributions",
    "plot_tradeoff",
    "plot_bounds",
    "figure_png",
]

_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")  # control characters but the newline (a line break)
_ORIGINAL = "#4c72b0"
_MASKED = "#dd8452"
_BAD = "#c44e52"


def _is_report(obj: Any) -> bool:
    """A :class:`~pysdcmicro.reporting.Report`, recognised by its fields: the report draws
    with this module, so this module does not import it."""
    return hasattr(obj, "class_sizes") and hasattr(obj, "k_anonymous") and hasattr(obj, "risk")


def _figure_class():
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
        raise ImportError(
            "plotting needs matplotlib, an optional extra: pip install \"pysdcmicro[plot]\" "
            "(or pip install matplotlib)."
        ) from exc
    return Figure


def _axes(ax: Any, figsize: tuple[float, float]):
    if ax is not None:
        return ax.figure, ax
    fig = _figure_class()(figsize=figsize, layout="constrained")
    return fig, fig.add_subplot()


def plain_text(fig: Any) -> Any:
    """Draw every text of ``fig`` as plain text: no TeX, no mathtext.

    Column names come from the data: ``$x^2$`` must print as typed, and no name may make
    matplotlib's math parser raise. Called by every plotting function of this module on the
    figure it made (and by :func:`figure_png`).
    """
    from matplotlib.text import Text

    # Tick labels are left alone: matplotlib's own formatters write mathtext (log axes:
    # 10^2); tick labels holding names are escaped where they are set (see _escape).
    ticks = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            ticks.add(id(axis.offsetText))
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                ticks.update((id(tick.label1), id(tick.label2)))
    for text in fig.findobj(Text):
        if id(text) not in ticks:
            text.set_usetex(False)
            text.set_parse_math(False)
            raw = text.get_text()
            if _CONTROL.search(raw):  # tabs and other control characters have no glyph; "\n" breaks the line
                text.set_text(_CONTROL.sub(" ", raw))
    return fig


def _escape(name: Any) -> str:
    """A name as a plain tick label: ``$`` escaped so mathtext prints it as typed."""
    return _CONTROL.sub(" ", str(name)).replace("$", r"\$")


def figure_png(fig: Any, *, dpi: int = 110) -> bytes:
    """The figure as PNG bytes (for embedding in HTML); its text is drawn as plain text."""
    plain_text(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def plot_group_sizes(data: Any, *, k: int | None = None, ax: Any = None, title: str | None = None):
    """Bar chart: how many groups (released combinations) have each size.

    Parameters
    ----------
    data : Report, MicroaggregationResult or array_like of int
        A :class:`~pysdcmicro.Report` (its equivalence classes of released values), a
        result (its groups), or the sizes themselves.
    k : int, optional
        Drawn as a dashed line; sizes below it are drawn in red. Default: the report's or
        result's ``k``.
    ax : matplotlib Axes, optional
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    if _is_report(data):
        sizes, k = data.class_sizes, data.k if k is None else k
        default_title = "Records per released combination"
    elif isinstance(data, MicroaggregationResult):
        sizes, k = data.group_sizes[data.group_sizes > 0], data.k if k is None else k
        default_title = "Group sizes"
    else:
        sizes = np.asarray(data)
        if sizes.ndim != 1 or sizes.size == 0 or sizes.dtype.kind not in "iu":
            raise InvalidTypeError("`data` must be a Report, a MicroaggregationResult or a 1-D array of group sizes.")
        default_title = "Group sizes"
    values, counts = np.unique(sizes, return_counts=True)
    fig, ax = _axes(ax, (6.0, 3.6))
    colors = [_BAD if (k is not None and v < k) else _ORIGINAL for v in values]
    ax.bar(values, counts, width=0.7, color=colors)
    for v, c in zip(values, counts):
        ax.annotate(f"{c:,}", (v, c), ha="center", va="bottom", fontsize=8, xytext=(0, 2), textcoords="offset points")
    low = min(int(values.min()), k if k is not None else int(values.min())) - 1
    high = int(values.max()) + 1
    ax.set_xlim(low, high)
    ax.margins(y=0.15)
    if k is not None:
        ax.axvline(k - 0.5, color="0.3", linestyle="--", linewidth=1)
        ax.annotate(f"k = {k}", (k - 0.5, 1.0), xycoords=("data", "axes fraction"), ha="right", va="top",
                    fontsize=9, xytext=(-3, -3), textcoords="offset points")
    if values.size <= 25:
        ax.set_xticks(values)
    ax.set_xlabel("records in the group")
    ax.set_ylabel("number of groups")
    ax.set_title(_fit(title or f"{default_title} ({int(sizes.sum()):,} records, {sizes.size:,} groups)",
                      ax.figure.get_figwidth() - 0.8, 12))
    return plain_text(fig)


def plot_original_vs_masked(original: Any, masked: Any, x: Any, y: Any, *, ax: Any = None,
                            max_points: int = 3000, rng: Any = 0, scale: str = "linear",
                            title: str | None = None):
    """Scatter plot of two variables: original records, their released values, and a line
    from each record to its released point (its group mean for microaggregation).

    Parameters
    ----------
    original, masked : DataFrame or 2-D array
        Row-aligned data sets.
    x, y : column label (or position for arrays)
    max_points : int, default 3000
        Larger data sets are drawn as a random sample of this many records (seeded by
        ``rng``; the title says so).
    scale : str, default "linear"
        Axis scale for both axes ("linear", "log", "symlog"), e.g. "log" for skewed
        positive variables.
    """
    from ..metrics._pairs import paired_values

    X, Xm, _ = paired_values(original, masked, [x, y])
    n = X.shape[0]
    note = ""
    if n > max_points:
        keep = np.sort(np.random.default_rng(rng).choice(n, size=max_points, replace=False))
        X, Xm = X[keep], Xm[keep]
        note = f", random {max_points:,} of {n:,} records"
    fig, ax = _axes(ax, (6.0, 5.0))
    from matplotlib.collections import LineCollection

    segments = np.stack([X, Xm], axis=1)
    ax.add_collection(LineCollection(segments, colors="0.6", linewidths=0.5, alpha=0.6, zorder=1))
    ax.scatter(X[:, 0], X[:, 1], s=9, color=_ORIGINAL, alpha=0.7, label="original", zorder=2, linewidths=0)
    ax.scatter(Xm[:, 0], Xm[:, 1], s=28, color=_MASKED, marker="D", label="released", zorder=3,
               edgecolors="white", linewidths=0.5)
    ax.set_xscale(scale)
    ax.set_yscale(scale)
    ax.autoscale_view()
    ax.set_xlabel(str(x))
    ax.set_ylabel(str(y))
    ax.legend(loc="best", frameon=False)
    ax.set_title(_fit(title or f"Original and released values ({x}, {y}{note})", ax.figure.get_figwidth() - 0.8, 12))
    return plain_text(fig)


def plot_distributions(original: Any, masked: Any, *, variables: Any = None, ax: Any = None,
                       title: str | None = None):
    """Box plots of each variable before and after masking, on the original's z-score
    scale (so that variables of different units share one axis).

    Means are kept by microaggregation; the boxes and whiskers show how much the spread and
    the extremes shrink.
    """
    from ..metrics._pairs import paired_values
    from ..metrics._utility import _mean_sd

    X, Xm, names = paired_values(original, masked, variables)
    mean, sd = _mean_sd(X)
    sd = np.where(np.isfinite(sd) & (sd > 0), sd, 1.0)
    Z, Zm = (X - mean) / sd, (Xm - mean) / sd
    p = len(names)
    fig, ax = _axes(ax, (max(5.0, 1.3 * p + 2), 4.0))
    pos = np.arange(p) * 3.0
    common = dict(widths=0.9, patch_artist=True, showfliers=True, medianprops={"color": "black"},
                  flierprops={"markersize": 2, "alpha": 0.5})
    b1 = ax.boxplot([c[~np.isnan(c)] for c in Z.T], positions=pos - 0.5, **common)
    b2 = ax.boxplot([c[~np.isnan(c)] for c in Zm.T], positions=pos + 0.5, **common)
    for box in b1["boxes"]:
        box.set_facecolor(_ORIGINAL)
    for box in b2["boxes"]:
        box.set_facecolor(_MASKED)
    ax.set_xticks(pos)
    ax.set_xticklabels([_escape(v) for v in names], rotation=30 if p > 5 else 0, ha="right" if p > 5 else "center",
                       usetex=False)
    ax.set_ylabel("z-score (original mean and sd)")
    ax.legend([b1["boxes"][0], b2["boxes"][0]], ["original", "released"], frameon=False, loc="best")
    ax.set_title(title or "Distributions before and after")
    return plain_text(fig)


def _table(table: Any, needed: list[str]) -> pd.DataFrame:
    if isinstance(table, pd.DataFrame):
        frame = table
    else:
        try:
            frame = pd.DataFrame(list(table))
        except TypeError:
            raise InvalidTypeError(f"`table` must be a DataFrame or a list of dicts; got {type(table).__name__}.") from None
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise InvalidInputError(
            f"`table` needs a column {missing[0]!r}; it has: {', '.join(map(str, frame.columns))}."
        )
    if frame.empty:
        raise InvalidInputError("`table` must have at least one row; got none.")
    return frame


def plot_tradeoff(table: Any, *, x: str = "information_loss", y: str = "seconds", series: str = "method",
                  label: str | None = "k", panel: str | None = "dataset", logy: bool = True,
                  title: str | None = None):
    """Trade-off between information loss and running time, one line per method.

    Like Fig. 5 of Maya-Lopez, Martinez-Balleste & Casino (Expert Systems with
    Applications, 2022): for each data set (one panel each), each method is a line through
    its points for increasing ``k`` (left to right: IL grows with k). The lower-left
    corner is best.

    Parameters
    ----------
    table : DataFrame or list of dicts
        One row per run, with the columns named by ``x``, ``y``, ``series`` and, when
        given, ``label`` and ``panel``; e.g. the rows of a benchmark run.
    x, y : str
        Columns on the axes (default IL in percent and seconds).
    series : str
        Column giving one line per value (default the method).
    label : str or None
        Column written next to the first and last point of each line (default ``k``).
    panel : str or None
        Column giving one panel per value (default the data set); None for one panel.
    logy : bool, default True
        Seconds on a log scale.

    Returns
    -------
    matplotlib.figure.Figure
    """
    needed = [x, y, series] + [c for c in (label, panel) if c is not None]
    frame = _table(table, needed)
    panels = list(dict.fromkeys(frame[panel])) if panel is not None else [None]
    Figure = _figure_class()
    fig = Figure(figsize=(4.6 * len(panels), 4.0), layout="constrained")
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    names = list(dict.fromkeys(frame[series]))
    markers = "osD^v<>phX*"
    for ax, value in zip(axes, panels):
        sub = frame if value is None else frame[frame[panel] == value]
        for i, name in enumerate(names):
            rows = sub[sub[series] == name]
            if rows.empty:
                continue
            rows = rows.sort_values(label if label is not None else x)
            ax.plot(rows[x], rows[y], marker=markers[i % len(markers)], markersize=5, linewidth=1.2,
                    label=str(name), color=f"C{i % 10}")
            if label is not None:
                for _, row in rows.iloc[[0, -1]].iterrows() if len(rows) > 1 else rows.iterrows():
                    ax.annotate(f"{label}={row[label]}", (row[x], row[y]), fontsize=7, color=f"C{i % 10}",
                                xytext=(3, 3), textcoords="offset points")
        if logy:
            from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

            ax.set_yscale("log")
            ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("information loss IL (%)" if x == "information_loss" else x)
        ax.set_ylabel("seconds" if y == "seconds" else y)
        if value is not None:
            ax.set_title(str(value))
        ax.grid(True, which="major", alpha=0.3)
    axes[0].legend(frameon=False, fontsize=8, loc="best")
    if title:
        fig.suptitle(title)
    return plain_text(fig)


def plot_bounds(table: Any, *, label: str = "label", il: str = "information_loss",
                lower_bound: str = "lower_bound", relative: bool = False, ax: Any = None,
                title: str | None = None):
    """How good is good enough: each run's IL with its proven lower bound and the gap.

    One horizontal bar per row: the bar is the IL reached, the dark part the proven lower
    bound on the optimal IL (no method can do better than it), and the text the relative
    gap ``(IL - LB) / IL``. Rows without a bound show the IL alone.

    Parameters
    ----------
    table : DataFrame or list of dicts
        Columns named by ``label``, ``il`` and ``lower_bound`` (None / NaN when unknown).
    relative : bool, default False
        Draw every bar as 100 % of its own IL and the bound as a share of it, so that gaps
        of data sets with very different IL levels can be compared on one axis.
    """
    frame = _table(table, [label, il, lower_bound])
    fig, ax = _axes(ax, (7.0, 0.45 * len(frame) + 1.8))
    pos = np.arange(len(frame))[::-1]
    ils = frame[il].astype(float).to_numpy()
    lbs = pd.to_numeric(frame[lower_bound], errors="coerce").to_numpy(dtype=float)
    scale = np.where(ils > 0, 100.0 / np.where(ils > 0, ils, 1.0), 1.0) if relative else np.ones_like(ils)
    ax.barh(pos, ils * scale, color=_MASKED, alpha=0.55, label="IL reached")
    has = np.isfinite(lbs)
    ax.barh(pos[has], (lbs * scale)[has], color=_ORIGINAL, label="lower bound (proven)")
    for p_, value, bound, f in zip(pos, ils, lbs, scale):
        if math.isfinite(bound):
            gap = (value - bound) / value if value > 0 else 0.0
            text = f"IL {value:.3f}, LB {bound:.3f}, gap {100 * gap:.2f} %"
        else:
            text = f"IL {value:.3f}, no bound"
        ax.annotate(text, (value * f, p_), va="center", fontsize=8, xytext=(4, 0), textcoords="offset points")
    ax.set_yticks(pos)
    ax.set_yticklabels([_escape(v) for v in frame[label]], usetex=False)
    ax.set_xlabel("share of the IL reached (%)" if relative else "information loss IL (%)")
    ax.set_xlim(0, float(np.nanmax(ils * scale)) * 1.6)
    ax.legend(frameon=False, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncols=2)
    ax.set_title(title or "Information loss and proven lower bounds")
    return plain_text(fig)


# -- views that stay readable for any number of variables ---------------------------------


def _axis_scale(values: np.ndarray) -> tuple[str, dict]:
    """("log", {}) for skewed positive values, ("symlog", {linthresh}) for skewed values of
    both signs, ("linear", {}) otherwise. Skewed: the largest magnitude is over 20 times the
    median magnitude."""
    v = values[np.isfinite(values)]
    if v.size < 3:
        return "linear", {}
    mag = np.abs(v)
    med = float(np.median(mag))
    top = float(mag.max())
    if med <= 0:
        nz = mag[mag > 0]
        if nz.size == 0:
            return "linear", {}
        med = float(np.median(nz))
    if top <= 20 * med:
        return "linear", {}
    if v.min() > 0:
        return "log", {}
    return "symlog", {"linthresh": _decade(med)}


def _set_scale(ax: Any, which: str, scale: str, kw: dict, values: np.ndarray) -> None:
    """Set one axis' scale; a symmetric log axis gets a few decade ticks (0, +-1e3, ...)
    that never crowd around 0."""
    axis = ax.xaxis if which == "x" else ax.yaxis
    (ax.set_xscale if which == "x" else ax.set_yscale)(scale, **kw)
    if scale != "symlog":
        return
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    v = np.abs(values[np.isfinite(values)])
    top = float(v.max()) if v.size else 1.0
    lo = int(round(math.log10(kw["linthresh"]))) + 1
    hi = max(lo, math.floor(math.log10(top)) if top > 0 else lo)
    # at most 3 decades on a one-signed axis, 2 a side on a two-signed one: 5 labels at most
    step = max(1, math.ceil((hi - lo + 1) / (2 if (values > 0).any() and (values < 0).any() else 3)))
    decades = list(range(hi, lo - 1, -step))
    ticks = [0.0]
    if (values > 0).any():
        ticks += [10.0 ** j for j in decades]
    if (values < 0).any():
        ticks += [-(10.0 ** j) for j in decades]
    axis.set_major_locator(FixedLocator(sorted(ticks)))
    axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(FuncFormatter(_decade_label))


def _decade_label(t: float, _pos: Any = None) -> str:
    """0, 1, 10, 100, 1,000, 1e4, ...; negative alike."""
    if t == 0:
        return "0"
    e = int(round(math.log10(abs(t))))
    body = f"{10.0 ** e:,.{max(0, -e)}f}" if -3 <= e <= 3 else f"1e{e}"
    return ("-" if t < 0 else "") + body


def _decade(value: float) -> float:
    """The power of 10 at or below ``value`` (symlog's linear range ends on a decade, so that
    its ticks do not crowd)."""
    return float(10.0 ** math.floor(math.log10(value))) if value > 0 else 1.0


def _sample(n: int, max_points: int, rng: Any) -> np.ndarray | None:
    if n <= max_points:
        return None
    return np.sort(np.random.default_rng(rng).choice(n, size=max_points, replace=False))


def _zoom_window(P: np.ndarray, Pm: np.ndarray) -> tuple[float, float, float, float] | None:
    """The box (x0, x1, y0, y1) around the central records when a few lie so far out that the
    rest would crowd into a small part of the plot: the 5th to 95th percentile of every
    point on each axis, padded; None when the full view is at most 3 times as wide and as
    tall as that box."""
    both = np.concatenate([P, Pm])
    lo, hi = np.percentile(both, [5, 95], axis=0)
    pad = 0.05 * np.maximum(hi - lo, 1e-12)
    lo, hi = lo - pad, hi + pad
    full = both.max(axis=0) - both.min(axis=0)
    if np.all(full <= 3 * (hi - lo)):
        return None
    return float(lo[0]), float(hi[0]), float(lo[1]), float(hi[1])


def _fit(text: str, inches: float, fontsize: float) -> str:
    """``text`` broken into lines that fit ``inches`` at ``fontsize`` points (titles and
    labels are not wrapped by matplotlib, and constrained layout cannot make room for a
    title wider than its figure)."""
    import textwrap

    chars = max(20, int(inches * 72 / (0.6 * fontsize)))
    return "\n".join(textwrap.wrap(text, width=chars, break_on_hyphens=False)) or text


def plot_pca(original: Any, masked: Any, *, variables: Any = None, max_points: int = 3000, rng: Any = 0,
             ax: Any = None, title: str | None = None, zoom: bool | None = None):
    """Original against released records in the plane of the first two principal components.

    Both files are standardized with the original's means and standard deviations and
    projected on the two leading eigenvectors of the original's correlation matrix (the
    plane where the records differ most), whatever the number of variables. Each original
    record (dot) is joined to its released record (diamond). The axes are linear, so the
    length of a line is how far the release moved the record in that plane: short lines,
    little changed. When a few records lie far out (skewed data), the others would crowd
    into a corner: a second panel then zooms on the central records (the dashed box of the
    first panel) and says how many records lie outside it.

    Parameters
    ----------
    original, masked : DataFrame or 2-D array
        Row-aligned data sets.
    variables : list, optional
        Columns (default: every numeric column of ``original`` in ``masked``).
    max_points : int, default 3000
        Larger data sets are drawn as a random sample of this many records (seeded by ``rng``).
    ax : matplotlib Axes, optional
        Draw the full view on it (no zoom panel).
    zoom : bool, optional
        Draw the zoom panel (default: when a few records lie far out and ``ax`` is not
        given). True without far-out records zooms on the 5th to 95th percentiles.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from ..metrics._pairs import paired_values
    from ..metrics._utility import _mean_sd

    X, Xm, names = paired_values(original, masked, variables)
    mean, sd = _mean_sd(X)
    keep = np.isfinite(sd) & (sd > 0)
    if not keep.any():
        raise InvalidInputError("`plot_pca` needs at least one non-constant column in `original`.")
    Z = np.nan_to_num((X[:, keep] - mean[keep]) / sd[keep])
    Zm = np.nan_to_num((Xm[:, keep] - mean[keep]) / sd[keep])
    C = (Z.T @ Z) / max(Z.shape[0] - 1, 1)
    w, V = np.linalg.eigh(C)
    order = np.argsort(w)[::-1]
    w, V = w[order], V[:, order]
    if V.shape[1] == 1:
        V = np.hstack([V, np.zeros((1, 1))])
        w = np.append(w, 0.0)
    share = 100 * w[:2] / w.sum() if w.sum() > 0 else np.zeros(2)
    pick = _sample(Z.shape[0], max_points, rng)
    P, Pm = Z @ V[:, :2], Zm @ V[:, :2]
    note = ""
    if pick is not None:
        P, Pm = P[pick], Pm[pick]
        note = f"random {max_points:,} of {Z.shape[0]:,} records"
    window = None
    if zoom or (zoom is None and ax is None):
        window = _zoom_window(P, Pm)
        if window is None and zoom:
            both = np.concatenate([P, Pm])
            (x0, y0), (x1, y1) = np.percentile(both, [5, 95], axis=0)
            window = float(x0), float(x1), float(y0), float(y1)
    if ax is not None:
        if window is not None:
            raise InvalidInputError("`plot_pca` draws the zoom panel on a figure of its own: pass `ax` or "
                                    "`zoom=True`, not both.")
        fig, panels = ax.figure, [ax]
    else:
        Figure = _figure_class()
        fig = Figure(figsize=(10.4, 5.0) if window is not None else (6.4, 5.2), layout="constrained")
        panels = list(fig.subplots(1, 2 if window is not None else 1, squeeze=False)[0])
    from matplotlib.collections import LineCollection

    for i, panel in enumerate(panels):
        panel.add_collection(LineCollection(np.stack([P, Pm], axis=1), colors="0.55", linewidths=0.6,
                                            alpha=0.7, zorder=1))
        panel.scatter(P[:, 0], P[:, 1], s=9, color=_ORIGINAL, alpha=0.7, label="original", zorder=2, linewidths=0)
        panel.scatter(Pm[:, 0], Pm[:, 1], s=24, color=_MASKED, marker="D", label="released", zorder=3,
                      edgecolors="white", linewidths=0.5)
        panel.autoscale_view()
        panel.set_xlabel(f"first principal component ({share[0]:.0f} % of the variance)")
        if i == 0:
            panel.set_ylabel(f"second principal component ({share[1]:.0f} % of the variance)")
        panel.grid(True, alpha=0.25)
    panels[0].legend(loc="best", frameon=False)
    head = title or f"Original and released records, {int(keep.sum())} variables"
    if window is None:
        width = panels[0].get_position().width * fig.get_figwidth()
        panels[0].set_title(_fit(head + (f"; {note}" if note else ""), width, 12))
        return plain_text(fig)
    from matplotlib.patches import Rectangle

    x0, x1, y0, y1 = window
    panels[0].add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, edgecolor="0.25", linestyle="--",
                                  linewidth=1, zorder=4))
    panels[0].set_title("every record", fontsize=10)
    inside = ((P[:, 0] >= x0) & (P[:, 0] <= x1) & (P[:, 1] >= y0) & (P[:, 1] <= y1)
              & (Pm[:, 0] >= x0) & (Pm[:, 0] <= x1) & (Pm[:, 1] >= y0) & (Pm[:, 1] <= y1))
    outside = int(P.shape[0] - inside.sum())
    panels[1].set_xlim(x0, x1)
    panels[1].set_ylim(y0, y1)
    panels[1].set_title(_fit(f"zoom on the dashed box ({outside:,} of {P.shape[0]:,} records reach outside it)",
                             fig.get_figwidth() / 2 - 0.6, 10), fontsize=10)
    fig.suptitle(_fit(head + (f"; {note}" if note else ""), fig.get_figwidth(), 12))
    return plain_text(fig)


def plot_variables(original: Any, masked: Any, *, variables: Any = None, max_variables: int = 24,
                   ncols: int = 4, max_points: int = 3000, rng: Any = 0, title: str | None = None):
    """Small multiples: one panel per variable, original value (x) against released value (y).

    Points on the diagonal are unchanged; microaggregation pulls each value towards its
    group's mean, so the cloud flattens along horizontal runs. Skewed variables are drawn on
    log axes (symmetric log when they also have zero or negative values); the panel's title
    says which. Any number of variables: panels wrap in rows of ``ncols``; beyond
    ``max_variables`` the ones whose variance shrank most are drawn and the title says so.

    Parameters
    ----------
    original, masked : DataFrame or 2-D array
        Row-aligned data sets.
    variables : list, optional
        Columns (default: every numeric column of ``original`` in ``masked``).
    max_variables : int, default 24
    ncols : int, default 4
    max_points : int, default 3000
        Larger data sets are drawn as a random sample of this many records (seeded by ``rng``).

    Returns
    -------
    matplotlib.figure.Figure
    """
    from ..metrics._pairs import paired_values
    from ..metrics._utility import _mean_sd

    X, Xm, names = paired_values(original, masked, variables)
    p = len(names)
    chosen = list(range(p))
    note = ""
    if p > max_variables:
        _, sd = _mean_sd(X)
        _, sdm = _mean_sd(Xm)
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = np.where(sd > 0, (sdm / sd) ** 2, 1.0)
        chosen = sorted(np.argsort(np.nan_to_num(ratio, nan=1.0), kind="stable")[:max_variables].tolist())
        note = f" ({max_variables} of {p} variables: those whose variance shrank most)"
    pick = _sample(X.shape[0], max_points, rng)
    if pick is not None:
        note += f"; random {max_points:,} of {X.shape[0]:,} records"
        X, Xm = X[pick], Xm[pick]
    ncols = max(1, min(ncols, len(chosen)))
    nrows = math.ceil(len(chosen) / ncols)
    Figure = _figure_class()
    fig = Figure(figsize=(2.6 * ncols + 0.4, 2.4 * nrows + 0.6), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for i, j in enumerate(chosen):
        ax = axes[i // ncols][i % ncols]
        x, y = X[:, j], Xm[:, j]
        ok = np.isfinite(x) & np.isfinite(y)
        x, y = x[ok], y[ok]
        scale, kw = _axis_scale(np.concatenate([x, y]))
        ax.scatter(x, y, s=5, color=_MASKED, alpha=0.6, linewidths=0)
        if x.size:
            lo, hi = float(min(x.min(), y.min())), float(max(x.max(), y.max()))
            if scale == "log":
                grid = np.geomspace(lo, hi, 50)
            else:
                grid = np.linspace(lo, hi, 50)
            ax.plot(grid, grid, color="0.4", linewidth=0.8, linestyle="--")
        both = np.concatenate([x, y])
        _set_scale(ax, "x", scale, kw, both)
        _set_scale(ax, "y", scale, kw, both)
        ax.set_title(_fit(str(names[j]) + {"linear": "", "log": " (log)", "symlog": " (signed log)"}[scale], 2.5, 9),
                     fontsize=9)
        ax.tick_params(labelsize=7)
        ax.grid(True, alpha=0.25)
    for i in range(len(chosen), nrows * ncols):
        axes[i // ncols][i % ncols].set_visible(False)
    fig.supxlabel("original value", fontsize=9)
    fig.supylabel("released value", fontsize=9)
    fig.suptitle(_fit(title or f"Each variable, original against released (dashed: unchanged){note}",
                      fig.get_figwidth() - 0.4, 10), fontsize=10)
    return plain_text(fig)


def plot_risk_utility(runs: Any, *, labels: Any = None, ax: Any = None, title: str | None = None):
    """Risk against utility for several runs: information loss (x) against the
    record-linkage and interval disclosure risks (y), one point per run.

    The usual picture: as IL falls, risk rises. The lower-left corner is best.

    Parameters
    ----------
    runs : list of Report, or DataFrame / list of dicts
        Reports made with the original data, or rows with the columns
        ``information_loss`` (%), ``record_linkage`` (share) and ``interval_disclosure``
        (share), and optionally ``label``.
    labels : list of str, optional
        One label per run (default: the reports' method and k, or the ``label`` column).

    Returns
    -------
    matplotlib.figure.Figure
    """
    if isinstance(runs, pd.DataFrame):
        rows = runs.to_dict("records")
    else:
        rows = []
        for run in list(runs):
            if _is_report(run):
                if run.risk is None:
                    raise InvalidInputError("`runs` must be reports made with the original data (they hold the risk).")
                link = run.risk.get("record_linkage") or {}
                rows.append({"information_loss": run.information_loss,
                             "record_linkage": link.get("linked", math.nan),
                             "interval_disclosure": run.risk["interval_disclosure"],
                             "label": f"{run.method or 'masked'}, k={run.k}" if run.k else (run.method or "")})
            elif isinstance(run, dict):
                rows.append(run)
            else:
                raise InvalidTypeError(f"`runs` must hold Reports or dicts; got {type(run).__name__}.")
    frame = _table(rows, ["information_loss", "record_linkage", "interval_disclosure"])
    if labels is not None:
        labels = [str(v) for v in labels]
        if len(labels) != len(frame):
            raise InvalidInputError(f"`labels` must have one label per run ({len(frame)}); got {len(labels)}.")
    else:
        labels = [str(v) for v in frame["label"]] if "label" in frame.columns else [str(i) for i in range(len(frame))]
    frame = frame.assign(_label=labels).sort_values("information_loss")
    fig, ax = _axes(ax, (6.4, 4.2))
    x = frame["information_loss"].astype(float)
    for column, name, color, marker in (("record_linkage", "record linkage (correct nearest links)", _BAD, "o"),
                                        ("interval_disclosure", "interval disclosure (sdcMicro dRisk)", _ORIGINAL, "s")):
        y = 100 * frame[column].astype(float)
        ax.plot(x, y, marker=marker, color=color, label=name, linewidth=1.2)
        for xi, yi, lab in zip(x, y, frame["_label"]):
            ax.annotate(lab, (xi, yi), fontsize=7, xytext=(4, 3), textcoords="offset points", color=color)
    ax.set_xlabel("information loss IL (%)  (lower: more utility)")
    ax.set_ylabel("disclosure risk (% of records)")
    ax.set_ylim(bottom=0)
    ax.margins(x=0.1)                      # room for the labels of the last points
    ax.grid(True, alpha=0.3)
    ax.legend(frameon=False, fontsize=8, loc="best")
    ax.set_title(title or "Risk against information loss")
    return plain_text(fig)
