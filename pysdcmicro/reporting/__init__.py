"""Release reports and plots: :func:`report`, :func:`compare`, :class:`Report`, and the
plotting helpers (matplotlib, an optional extra; imported only when a plot is asked for)."""

from ._format import format_number
from ._plots import (
    figure_png,
    plain_text,
    plot_bounds,
    plot_distributions,
    plot_group_sizes,
    plot_original_vs_masked,
    plot_pca,
    plot_risk_utility,
    plot_tradeoff,
    plot_variables,
)
from ._report import Report, compare, report

__all__ = [
    "Report",
    "report",
    "compare",
    "plot_group_sizes",
    "plot_pca",
    "plot_variables",
    "plot_risk_utility",
    "plot_original_vs_masked",
    "plot_distributions",
    "plot_tradeoff",
    "plot_bounds",
    "figure_png",
    "plain_text",
    "format_number",
]
