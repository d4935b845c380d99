"""Plots for reports and vignettes (matplotlib, an optional extra: ``pip install "pysdcmicro[plot]"``).

Every function returns a :class:`matplotlib.figure.Figure` (made without pyplot, so no GUI
backend and no global state is touched) or draws on the ``ax`` it is given. Save with
``fig.savefig("name.png")``. The core of pysdcmicro never imports this module.
"""

from __future__ import annotations

import io
import math
from typing import Any

import numpy as np
import pandas as pd

from .._errors import InvalidInputError, InvalidTypeError
from .._result import MicroaggregationResult

__all__ = [
    "plot_group_sizes",
    "plot_original_vs_masked",
    "plot_distributions",
    "plot_tradeoff",
    "plot_bounds",
    "figure_png",
]

_ORIGINAL = "#4c72b0"
_MASKED = "#dd8452"
_BAD = "#c44e52"


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


def figure_png(fig: Any, *, dpi: int = 110) -> bytes:
    """The figure as PNG bytes (for embedding in HTML)."""
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
    from ._report import Report

    if isinstance(data, Report):
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
        ax.annotate(f"{c}", (v, c), ha="center", va="bottom", fontsize=8, xytext=(0, 2), textcoords="offset points")
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
    ax.set_title(title or f"{default_title} ({int(sizes.sum())} records, {sizes.size} groups)")
    return fig


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
        note = f", random {max_points} of {n} records"
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
    ax.set_title(title or f"Original and released values ({x}, {y}{note})")
    return fig


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
    ax.set_xticklabels([str(v) for v in names], rotation=30 if p > 5 else 0, ha="right" if p > 5 else "center")
    ax.set_ylabel("z-score (original mean and sd)")
    ax.legend([b1["boxes"][0], b2["boxes"][0]], ["original", "released"], frameon=False, loc="best")
    ax.set_title(title or "Distributions before and after")
    return fig


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
    return fig


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
    ax.set_yticklabels([str(v) for v in frame[label]])
    ax.set_xlabel("share of the IL reached (%)" if relative else "information loss IL (%)")
    ax.set_xlim(0, float(np.nanmax(ils * scale)) * 1.6)
    ax.legend(frameon=False, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncols=2)
    ax.set_title(title or "Information loss and proven lower bounds")
    return fig
