"""The release report: what an agency checks before it publishes masked data.

:func:`report` builds it from a :class:`~pysdcmicro.MicroaggregationResult` (and the
original data, for the utility and risk measures); :func:`compare` from any original and
masked data sets. A :class:`Report` prints as text (``to_text``), serializes to JSON
(``to_dict``), and writes an HTML page with plots (``to_html``, needs matplotlib).
"""

from __future__ import annotations

import json
import math
import textwrap
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._errors import InvalidInputError, InvalidTypeError
from .._phases import phase
from .._release import across_groups
from .._result import MicroaggregationResult, _jsonable
from .._columns import unmasked_columns
from .._validation import check_k, is_column_label
from ..metrics import equivalence_class_sizes
from ..metrics._linkage import _record_linkage
from ..metrics._pairs import _as_table, check_fraction, paired_values
from ..metrics._risk import _at_risk
from ._format import cell as _cell, format_number
from ..metrics._utility import _correlation_changes, _eigen, _il1, _il1s, _sse_sst, _variable_changes, sse_sst

__all__ = ["Report", "report", "compare"]

#: How many nearest released records count for the record-linkage share "within the top".
LINKAGE_TOP = 5


def _counts(sizes: np.ndarray) -> dict[int, int]:
    values, counts = np.unique(np.asarray(sizes, dtype=np.int64), return_counts=True)
    return {int(v): int(c) for v, c in zip(values, counts)}


def _name(label: Any) -> Any:
    return int(label) if isinstance(label, (int, np.integer)) and not isinstance(label, bool) else str(label)


@dataclass
class Report:
    """Release report of a masked data set (see :func:`report` and :func:`compare`).

    Attributes
    ----------
    variables : list
        The masked variables (quasi-identifiers) the report is about.
    n : int
        Number of records.
    k : int or None
        The k of k-anonymity asked for (None when unknown).
    k_anonymous : bool or None
        Whether every combination of released values of ``variables`` is shared by at
        least ``k`` records, checked on the released values (None when ``k`` is unknown).
        With groups of variables (``settings["variable_groups"]``, and a method that runs
        once per variable such as ``onedims``) each group is checked on its own columns:
        see ``scope``.
    scope : {"joint", "per variable group", "per variable"}
        What ``k_anonymous`` is about: the combination of all ``variables``, or each
        variable group (each variable) on its own columns only.
    joint_smallest : int or None
        With groups of variables: the smallest number of records sharing a combination of
        the released values of all ``variables`` (the joint check, which such a release
        does not promise to pass).
    class_sizes : ndarray
        Size of each equivalence class (distinct combination of released values).
    checked_on : str
        Which data the k-anonymity check read ("result.data", or a written file).
    information_loss, sse, sst : float or None
        IL = 100 * SSE / SST on z-scores.
    lower_bound, gap : float or None
        Proven lower bound on the optimal IL (percent) and the gap, (IL - lower bound) / IL
        in percent, when the method gives one.
    group_sizes : ndarray or None
        Sizes of the partition's groups (from a result).
    utility : dict or None
        sdcMicro's utility measures ``il1s`` (sum, as sdcMicro), ``il1s_per_cell``, ``il1``
        and ``eigen`` (see :mod:`pysdcmicro.metrics`); None without the original data.
    risk : dict or None
        ``interval_disclosure`` (share of records at risk, sdcMicro ``dRisk``),
        ``records_at_risk``, ``sd_fraction`` and ``record_linkage`` (the fields of
        :class:`~pysdcmicro.metrics.RecordLinkageRisk`: ``linked``, ``within_top``,
        ``top``, ...; None with a ``record_linkage_note`` when the data have missing
        values); None without the original data.
    changes : DataFrame or None
        Per-variable means, standard deviations and variance ratio (before / after).
    correlations : dict or None
        Correlation matrices before and after, the largest absolute change and its pair.
    method, status, message, seconds, settings, info
        From the result, when the report was made from one.
    measures_note : str or None
        Why the utility and risk measures were left out although the original data were
        given (the command line after a Ctrl-C writes its outputs at once without them).
    unmasked : list of dict
        Columns released unmasked that could identify or single out records (identifier-like
        text, numeric columns left out, categories), each ``{"column", "reason", "option"}``
        (``option`` None where no option masks it): k-anonymity was not checked on them.
        :func:`report` fills it from the original data (the command line reads numbers held
        as text in the file's format); the headline names them, its k-anonymity line says
        that the verdict holds for the masked columns only and how many were left unmasked, and
        ``to_dict()["k_anonymity"]["columns_left_unmasked"]`` counts them.
    across_groups : dict or None
        With groups of variables: ``records_below_k``, the records whose combination of
        released values over every group's columns is shared by fewer than ``k`` records
        (each group alone is k-anonymous), and ``smallest_frequency``; checked on the
        released data. None with one group of variables.
    """

    variables: list
    n: int
    k: int | None
    k_anonymous: bool | None
    class_sizes: np.ndarray
    checked_on: str
    information_loss: float | None = None
    sse: float | None = None
    sst: float | None = None
    lower_bound: float | None = None
    gap: float | None = None
    group_sizes: np.ndarray | None = None
    utility: dict | None = None
    risk: dict | None = None
    changes: pd.DataFrame | None = None
    correlations: dict | None = None
    method: str | None = None
    status: str | None = None
    message: str = ""
    seconds: float | None = None
    settings: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)
    original: Any = field(default=None, repr=False)
    released: Any = field(default=None, repr=False)
    measures_note: str | None = None
    unmasked: list = field(default_factory=list)
    scope: str = "joint"
    joint_smallest: int | None = None
    across_groups: dict | None = None

    # -- machine-readable ------------------------------------------------------
    def to_dict(self) -> dict:
        """JSON-serializable report (non-finite numbers become None). ``k_anonymous`` is the
        verdict on all ``variables`` together; with groups of variables (``scope`` not
        ``"joint"``) ``k_anonymity`` also holds ``within_each_group``, the verdict group by
        group that the release promises."""
        out: dict[str, Any] = {
            "n": self.n,
            "variables": [_name(v) for v in self.variables],
            "k": self.k,
            # with groups of variables: whether the whole release is (jointly); each group's
            # own verdict is k_anonymity.within_each_group
            "k_anonymous": self.k_anonymous if self.scope == "joint" or self.k is None
            else bool(self.joint_smallest >= self.k),
            "k_anonymity": {
                "k": self.k,
                "min_class_size": int(self.class_sizes.min()),
                "n_classes": int(self.class_sizes.size),
                "class_size_counts": _counts(self.class_sizes),
                "checked_on": self.checked_on,
                "scope": self.scope,
                # the verdict holds for `variables` only: these columns were released unmasked
                **({"columns_left_unmasked": len(self.unmasked)} if self.unmasked else {}),
                **({} if self.scope == "joint" else {
                    "variable_groups": [[_name(v) for v in g] for g in self.settings.get("variable_groups", [])],
                    "within_each_group": self.k_anonymous,
                    "jointly": None if self.k is None else bool(self.joint_smallest >= self.k),
                    "joint_min_class_size": self.joint_smallest}),
            },
            "information_loss": self.information_loss,
            "sse": self.sse,
            "sst": self.sst,
            "lower_bound": self.lower_bound,
            "gap": self.gap,
            "utility": self.utility,
            "risk": self.risk,
            "headline": self.headline(),
        }
        if self.measures_note:
            out["measures_note"] = self.measures_note
        if self.unmasked:
            out["unmasked"] = list(self.unmasked)
        if self.across_groups is not None:
            out["across_groups"] = dict(self.across_groups)
        if self.group_sizes is not None:
            out["group_size_counts"] = _counts(self.group_sizes)
        if self.changes is not None:
            rows = self.changes.to_dict("records")
            for row in rows:
                row["variable"] = _name(row["variable"])
            out["variable_changes"] = rows
        if self.correlations is not None:
            c = self.correlations
            out["correlations"] = {
                "max_abs_change": c["max_abs_change"],
                "pair": None if c["pair"] is None else [_name(v) for v in c["pair"]],
                "original": c["original"].to_numpy().tolist(),
                "masked": c["masked"].to_numpy().tolist(),
            }
        if self.method is not None:
            out.update({"method": self.method, "status": self.status, "message": self.message,
                        "seconds": self.seconds, "settings": self.settings})
        return _jsonable(out)

    def _scope_words(self) -> str:
        return ("each variable on its own (checked on its own column)" if self.scope == "per variable" else
                "each variable group on its own (checked on its own columns)")

    def headline(self) -> list[dict]:
        """The four answers a reader wants first, each with a one-line plain reading.

        Returns a list of dicts with ``key`` (``k_anonymous``, ``information_loss``,
        ``record_linkage``, ``interval_disclosure``), ``label``, ``value`` (text),
        ``reading`` (one plain sentence) and ``verdict`` (``"good"``, ``"bad"`` or
        ``"info"``, for colouring).
        """
        items: list[dict] = []
        smallest = int(self.class_sizes.min())
        checked = _listed([repr(_name(v)) for v in self.variables])
        groups = (self.settings or {}).get("variable_groups") or []
        if len(groups) > 1:  # checked group by group, not on the combination
            checked = ("of each variable group on its own: "
                       + " | ".join(", ".join(repr(_name(v)) for v in group) for group in groups))
        # Columns released unmasked were never part of the check: a "yes" holds for the
        # masked columns only, and says so in its value, not only in the "left unmasked" line.
        n_unmasked = len(self.unmasked)
        columns = f"{n_unmasked} column{'s' if n_unmasked != 1 else ''} left unmasked"
        caveat = f"for the masked columns only: {columns}" if n_unmasked else ""
        not_checked = (f" The {columns} (see \"left unmasked\") {'was' if n_unmasked == 1 else 'were'} not "
                       f"checked: a record may still be singled out through {'it' if n_unmasked == 1 else 'them'}."
                       if n_unmasked else "")
        combinations = self.class_sizes.size
        if self.k_anonymous is None:
            items.append(dict(key="k_anonymous", label="k-anonymous",
                              value="not checked (k not given" + (f"; {columns})" if n_unmasked else ")"),
                              verdict="info",
                              reading=f"k was not given; every released combination of values is shared by at "
                                      f"least {smallest} records (checked on {self.checked_on}, columns "
                                      f"{checked})." + not_checked))
        elif self.k_anonymous and self.scope != "joint":
            jointly = self.joint_smallest >= self.k
            items.append(dict(key="k_anonymous", label=f"{self.k}-anonymous",
                              value=f"{self.scope} only" + (f", {caveat}" if caveat else ""),
                              verdict="good" if jointly and not caveat else "info",
                              reading=f"checked {checked if len(groups) > 1 else self._scope_words()}: its released "
                                      f"values are shared by at least "
                                      f"{self.k} records (smallest: {smallest}); the combination of all columns "
                                      + ("is k-anonymous too" if jointly else
                                         f"is NOT (smallest: {self.joint_smallest})")
                                      + f"; checked on {self.checked_on}." + not_checked))
        elif self.k_anonymous:
            items.append(dict(key="k_anonymous", label=f"{self.k}-anonymous",
                              value="yes" + (f", {caveat}" if caveat else ""), verdict="info" if caveat else "good",
                              reading=f"{'all ' if combinations > 1 else ''}{combinations:,} released "
                                      f"combination{'s' if combinations != 1 else ''} of values "
                                      f"{'are' if combinations != 1 else 'is'} shared by at least {self.k} records "
                                      f"each (smallest: {smallest}); checked on {self.checked_on}, "
                                      f"columns {checked}." + not_checked))
        else:
            below = int(np.sum(self.class_sizes[self.class_sizes < self.k]))
            items.append(dict(key="k_anonymous", label=f"{self.k}-anonymous", value="NO", verdict="bad",
                              reading=f"{below} records are in combinations shared by fewer than {self.k} "
                                      f"records (smallest: {smallest}; checked on {self.checked_on}, columns "
                                      f"{checked}): do not release this file."))
        if self.across_groups is not None:
            items.append(_across_item(self.across_groups, self.k))
        if self.information_loss is not None and math.isfinite(self.information_loss):
            value = f"{self.information_loss:.2f} %"
            reading = ("share of the variation of the standardized variables removed by the grouping "
                       "(0 % = nothing lost, 100 % = every record replaced by the overall mean).")
            if self.lower_bound is not None:
                value += f" (proven lower bound {self.lower_bound:.2f} %"
                value += ")" if self.gap is None else f", gap {self.gap:.2f} %)"
                reading += (" No partition into groups of k to 2k-1 records can lose less than the bound, "
                            "so the gap is the most that a better method could still gain.")
            items.append(dict(key="information_loss", label="information loss", value=value, verdict="info",
                              reading=reading))
        link = None if self.risk is None else self.risk.get("record_linkage")
        if link is not None:
            k_part = (f"at most 1/k = {100 / self.k:.1f} % when every released combination has k or more records; "
                      if self.k else "")
            items.append(dict(key="record_linkage", label="record-linkage risk",
                              value=f"{100 * link['linked']:.2f} % linked "
                                    f"({100 * link['within_top']:.2f} % within the {link['top']} nearest)",
                              verdict="info",
                              reading="an intruder who knows a record's original values and takes the nearest "
                                      f"released record is right for this share of the records ({k_part}"
                                      "100 % for an unmasked file). Distances on the original's z-scores; ties "
                                      "counted fractionally."))
        elif self.risk is not None:
            items.append(dict(key="record_linkage", label="record-linkage risk", value="not computed",
                              verdict="info", reading=self.risk.get("record_linkage_note", "")))
        if self.risk is not None:
            r = self.risk
            items.append(dict(key="interval_disclosure", label="interval disclosure risk",
                              value=f"{100 * r['interval_disclosure']:.2f} % ({r['records_at_risk']:,} records)",
                              verdict="info",
                              reading=f"records whose every original value lies within {r['sd_fraction']:g} "
                                      "standard deviations of its released value: an intruder would recognise "
                                      "their values (lower is better). sdcMicro's dRisk, which sdcMicro prints "
                                      "as the upper end of \"disclosure risk between [0 %; x %]\"."))
        else:
            items.append(dict(key="risk", label="disclosure risk", value="not computed",
                              verdict="info", reading=self.measures_note or "the risk measures need the original "
                                                                            "data: report(result, original)."))
        if self.unmasked:
            names = ", ".join(f"{u['column']!r} ({u['reason']})" for u in self.unmasked[:12])
            more = f", and {len(self.unmasked) - 12} more" if len(self.unmasked) > 12 else ""
            options = list(dict.fromkeys(u.get("option") for u in self.unmasked if u.get("option")))
            where = " or ".join(o if o.startswith("-") else f"`{o}`" for o in options)
            todo = ""
            if options:  # a column without an option holds no numbers: its reason says what to do
                which = "them" if all(u.get("option") for u in self.unmasked) else "the numeric ones"
                todo = f" Name {which} in {where} to microaggregate them."
            items.append(dict(key="unmasked", label="left unmasked",
                              value=f"{len(self.unmasked)} column{'s' if len(self.unmasked) != 1 else ''}",
                              verdict="bad",
                              reading=f"released unchanged and not checked for k-anonymity, although they could "
                                      f"identify or single out records: {names}{more}.{todo}"))
        return items

    def to_json(self, **kwargs: Any) -> str:
        kwargs.setdefault("indent", 2)
        return json.dumps(self.to_dict(), **kwargs)

    # -- terminal --------------------------------------------------------------
    def to_text(self, *, width: int = 40) -> str:
        """The report as plain text for a terminal (a histogram of group sizes included)."""
        lines: list[str] = []
        names = _listed([str(v) for v in self.variables], limit=100)  # the line wraps
        head = "pysdcmicro release report"
        if self.method:
            head += f": {self.method}"
        lines += [head, "=" * len(head)]
        for item in self.headline():
            lines.append(f"{item['label'] + ':':<26}{item['value']}")
            lines += _wrap(item["reading"], " " * 26, " " * 26)
        lines.append("")
        lines += _field("records x variables", f"{self.n:,} x {len(self.variables)} ({names})")
        if self.k is not None:
            lines += _field("k", str(self.k))
        if self.status is not None:
            lines += _field("status", self.status + (f" ({self.message})" if self.message else ""))
        if self.seconds is not None:
            lines += _field("seconds", f"{self.seconds:.3f}")

        # k-anonymity and both risks are in the headline; here only what it leaves out.
        details = _agency_lines(self.info or {}, self.k)
        if details:
            lines += ["", "Details"] + details

        lines += ["", "Records per released combination (group sizes)"]
        lines += _histogram(self.class_sizes, width)

        lines += ["", "Utility"]
        if self.information_loss is not None:
            lines.append(f"  information loss    {self.information_loss:.4f} %   (IL = 100 SSE/SST on z-scores; "
                         f"SSE {_num(self.sse)}, SST {_num(self.sst)})")
        if self.lower_bound is not None:
            gap = "" if self.gap is None else f"   (gap {self.gap:.2f} %)"
            lines.append(f"  lower bound         {self.lower_bound:.4f} %{gap}")
        if self.utility is not None:
            u = self.utility
            cells = self.n * len(self.variables)
            lines.append(f"  IL1s (sdcMicro)     {_num(u['il1s'])}   (per cell {_num(u['il1s_per_cell'])})")
            lines.append("                      per cell: mean |original - released| in units of sqrt(2) sd; "
                         "0 = unchanged")
            if u["eigen"] is not None and math.isfinite(u["eigen"]):
                lines.append(f"  eigen (sdcMicro)    {_num(u['eigen'])}   (sdcMicro prints {_pct(u['eigen'])})")
            else:  # sdcMicro: NA for a constant column, rounding noise for dependent columns
                lines.append(f"  eigen (sdcMicro)    undefined   (a constant or linearly dependent column; "
                             "sdcMicro gives NA or a rounding-level number)")
            lines.append("                      relative change of the correlation matrix's eigenvalues; "
                         "0 = correlations kept")
            lines.append(f"  IL1 (sdcMicro)      {_num(u['il1'])}   (per cell {_num(u['il1'] / cells)})")
            lines.append("                      per cell: mean 100 |original - released| / |original| (%); "
                         "0 = unchanged")
        else:
            lines.append(f"  ({self.measures_note or 'utility and risk measures need the original data: report(result, original)'})")
        if self.changes is not None:
            lines += ["", "Per variable"]
            table = self.changes.rename(columns={
                "mean_original": "mean before", "mean_masked": "mean after", "sd_original": "sd before",
                "sd_masked": "sd after", "variance_ratio": "var ratio"}).drop(columns=["mean_change"])
            text = table.to_string(index=False, float_format=format_number)
            lines += ["  " + row for row in text.splitlines()]
        if self.correlations is not None and self.correlations["pair"] is not None:
            a, b = self.correlations["pair"]
            ro = _cell(self.correlations["original"], a, b)
            rm = _cell(self.correlations["masked"], a, b)
            lines.append(f"  largest correlation change: {_num(self.correlations['max_abs_change'])} "
                         f"({a} ~ {b}: {ro:.4f} -> {rm:.4f})")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        il = "None" if self.information_loss is None else f"{self.information_loss:.4f}"
        method = f"method={self.method!r}, " if self.method else ""
        return (f"Report({method}n={self.n}, variables={len(self.variables)}, k={self.k}, "
                f"k_anonymous={self.k_anonymous}, information_loss={il})")

    # -- plots and HTML ----------------------------------------------------------
    def plot_group_sizes(self, **kwargs: Any):
        """Bar chart of records per released combination (see :func:`plot_group_sizes`)."""
        from ._plots import plot_group_sizes

        return plot_group_sizes(self, **kwargs)

    def plot_scatter(self, x: Any = None, y: Any = None, **kwargs: Any):
        """Original against released values of two variables (default: the first two)."""
        from ._plots import plot_original_vs_masked

        self._need_original("plot_scatter")
        x = self.variables[0] if x is None else x
        if y is None:
            y = self.variables[1] if len(self.variables) > 1 else self.variables[0]
        return plot_original_vs_masked(self.original, self.released, x, y, **kwargs)

    def plot_distributions(self, **kwargs: Any):
        """Box plots of each variable before and after, on the original z-score scale."""
        from ._plots import plot_distributions

        self._need_original("plot_distributions")
        return plot_distributions(self.original, self.released, variables=self.variables, **kwargs)

    def _need_original(self, what: str) -> None:
        if self.original is None:
            raise InvalidInputError(f"`{what}` needs the original data; make the report with report(result, original).")

    def to_html(self, path: Any = None, *, plots: bool | None = None) -> str:
        """A self-contained HTML page (plots embedded as PNG); written to ``path`` if given.

        ``plots=None`` includes the plots when matplotlib is installed (the page says how to
        get them otherwise), ``True`` requires matplotlib, ``False`` leaves them out.
        """
        from ._html import render_html

        page = render_html(self, plots=plots)
        if path is not None:
            from pathlib import Path

            Path(path).write_text(page, encoding="utf-8")
        return page

    def _repr_html_(self) -> str:  # Jupyter
        from ._html import render_body

        return render_body(self, plots=False)


def _across_item(across: dict, k: Any) -> dict:
    """The headline's line on groups of variables: records unique across the groups."""
    below = across["records_below_k"]
    if below:
        return dict(key="across_groups", label="across variable groups", value=f"{below} record(s) below k",
                    verdict="bad",
                    reading=f"{below} records have a combination of released values over every group's columns "
                            f"that fewer than k = {k} records share (smallest: {across['smallest_frequency']}); each "
                            "group alone is k-anonymous, but an intruder who knows values from several groups can "
                            "single these records out: put the columns an intruder may know together in one group.")
    return dict(key="across_groups", label="across variable groups", value="k-anonymous too", verdict="good",
                reading=f"every combination of released values over every group's columns is shared by at least "
                        f"k = {k} records (smallest: {across['smallest_frequency']}).")


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-7, abs_tol=1e-9)


def _listed(names: list[str], limit: int = 16) -> str:
    """Names joined with commas; more than ``limit`` of them: the first ``limit - 4`` and how
    many more (never "and 1 more" where the name itself would fit)."""
    if len(names) <= limit:
        return ", ".join(names)
    return ", ".join(names[:limit - 4]) + f" and {len(names) - (limit - 4)} more"


def _pct(share: float | None) -> str:
    if share is None or not math.isfinite(share):
        return "undefined"
    return f"{100 * share:.2f} %"


def _num(value: float | None) -> str:
    return format_number(value)


def _wrap(text: str, first: str, rest: str) -> list[str]:
    """``text`` wrapped at 100 characters, never between a number and its "%" and never at a
    hyphen inside a name."""
    lines = textwrap.wrap(text.replace(" %", "\0%"), width=100, initial_indent=first, subsequent_indent=rest,
                          break_on_hyphens=False)
    return [line.replace("\0", " ") for line in lines]


def _field(label: str, value: str) -> list[str]:
    """``label`` in a column of 22 characters and ``value`` beside it, wrapped at 100."""
    return _wrap(value, f"{label:<22}", " " * 22) or [label]


def _agency_lines(info: dict, k: Any) -> list[str]:
    """Missing cells, groups of variables and weighted totals, from result.info."""
    lines = []
    if info.get("missing_cells"):
        lines.append(f"  missing cells       {info['missing_cells']} (kept missing; in the k-anonymity check a missing "
                     "cell matches any value, as sdcMicro)")
    for g, group in enumerate(info.get("variable_groups") or [], start=1):
        verdict = "k-anonymous" if group["k_anonymous"] else "NOT k-anonymous"
        lines.append(f"  variable group {g:<4} {', '.join(group['variables'])}: IL {group['information_loss']:.4f} %, "
                     f"{group['n_groups']} groups, {verdict} (smallest {group['smallest_frequency']}, k = {k})")
    for name, t in (info.get("weighted_totals") or {}).items():
        lines.append(f"  weighted total      {name}: {t['before']:.10g} before, {t['after']:.10g} after "
                     f"(relative difference {t['relative_difference']:.2g})")
    return lines


def _histogram(sizes: np.ndarray, width: int) -> list[str]:
    counts = _counts(sizes)
    top = max(counts.values())
    lines = []
    for size, count in counts.items():
        bar = "#" * max(1, round(width * count / top))
        lines.append(f"  {size:>6} | {bar:<{width}} {count:,}")
    return lines


def _class_sizes(released: Any, variables: list) -> np.ndarray:
    return equivalence_class_sizes(released, variables=variables)


def _linkage(X: np.ndarray, Xm: np.ndarray, names: list) -> tuple[dict | None, str | None]:
    if np.isnan(X).any() or np.isnan(Xm).any():
        return None, "record linkage needs complete data; the compared columns have missing values."
    try:
        return _record_linkage(X, Xm, names, LINKAGE_TOP).to_dict(), None
    except InvalidInputError as exc:  # every column constant
        return None, str(exc)


def _measures(original: Any, released: Any, variables: list, sd_fraction: float,
              linkage_skipped: str | None = None) -> dict:
    with phase("report: paired values"):
        X, Xm, names = paired_values(original, released, variables)  # extracted once for every measure
    with phase("report: interval risk"):
        at_risk = _at_risk(X, Xm, sd_fraction)
    with phase("report: il1s"):
        il1s_sum = _il1s(X, Xm)
    with phase("report: record linkage"):
        link, link_note = (None, linkage_skipped) if linkage_skipped else _linkage(X, Xm, names)
    risk_extra = {"record_linkage": link}
    if link_note:
        risk_extra["record_linkage_note"] = link_note
    with phase("report: sse/sst"):
        sse_sst_pair = _sse_sst(X, Xm)
    with phase("report: il1"):
        il1 = _il1(X, Xm)
    with phase("report: eigen"):
        eigen = _eigen(X, Xm)
    with phase("report: variable changes"):
        changes = _variable_changes(X, Xm, names)
    with phase("report: correlations"):
        correlations = _correlation_changes(X, Xm, names)
    return {
        "sse_sst": sse_sst_pair,
        "utility": {
            "il1s": il1s_sum,
            "il1s_per_cell": il1s_sum / X.size,
            "il1": il1,
            "eigen": eigen,
            "definitions": "sdcMicro 5.8.1 dUtility(x, xm, method = 'IL1s' | 'eigen' | 'IL1'); "
                           "il1s_per_cell = il1s / (n p) as Mateo-Sanz et al. 2004",
        },
        "risk": {
            "interval_disclosure": float(at_risk.mean()),
            "records_at_risk": int(at_risk.sum()),
            "sd_fraction": sd_fraction,
            "definition": "sdcMicro 5.8.1 dRisk(x, xm, k = sd_fraction): share of records whose every "
                          "original value lies within sd_fraction * sd(masked) of the released value",
            **risk_extra,
        },
        "changes": changes,
        "correlations": correlations,
    }


def report(result: MicroaggregationResult, original: Any = None, *, released: Any = None,
           sd_fraction: float = 0.05, checked_on: str | None = None,
           linkage_skipped: str | None = None, measures_skipped: str | None = None,
           class_sizes: np.ndarray | None = None) -> Report:
    """The release report of a microaggregation result.

    Parameters
    ----------
    result : MicroaggregationResult
        What :func:`~pysdcmicro.microaggregate` (or a method function) returned.
    original : DataFrame or array, optional
        The data given to ``microaggregate``. Needed for the utility measures (IL1s,
        eigen), the interval disclosure risk, and the per-variable changes. It is checked
        against the result: the IL of the released values against it must be the result's.
    released : DataFrame or array, optional
        The data as released, e.g. re-read from the written CSV file (default:
        ``result.data``). The k-anonymity check and every measure read it.
    sd_fraction : float, default 0.05
        Interval half-width of the disclosure risk, in standard deviations of the masked
        data (sdcMicro ``dRisk``'s ``k``).
    checked_on : str, optional
        How to name ``released`` in the report (default "result.data" or "the released data").
    linkage_skipped : str, optional
        Leave out the record-linkage risk (the slowest measure) and give
        this reason in its place.
    measures_skipped : str, optional
        Leave out every utility and risk measure and the check of ``original`` against the
        result, and give this reason in their place (``measures_note``). The command line
        does after a Ctrl-C, having checked the written release against the original itself.
    class_sizes : ndarray, optional
        The sizes of the equivalence classes of ``released`` (as
        :func:`~pysdcmicro.metrics.equivalence_class_sizes` gives them, variable group after
        variable group) when the caller has computed them already: the command line's
        release check finds them on the file read back. Default: computed here.

    Returns
    -------
    Report
        Its ``unmasked`` lists the columns of ``result.data`` passed through unmasked that
        could identify or single out records (identifier-like, numeric, categorical; not
        constant, stratum or weight columns), most dangerous first, with the reason
        (:func:`pysdcmicro._columns.unmasked_columns`).

    Notes
    -----
    The measures are defined in :mod:`pysdcmicro.metrics` (formulas, sources, sdcMicro's
    conventions). Time O(n p^2 + p^3) (correlations and their eigenvalues) plus a hash
    grouping of the released rows for k-anonymity; memory a few copies of the n x p chosen
    columns (a 1e6 x 10 report took 4.4 s and 420 MiB peak on a loaded 2-core machine).

    Examples
    --------
    >>> import pandas as pd, pysdcmicro
    >>> df = pd.DataFrame({"income": [10.0, 11.0, 12.0, 50.0, 52.0, 54.0],
    ...                    "age": [30, 31, 33, 60, 61, 62]})
    >>> res = pysdcmicro.microaggregate(df, 3)
    >>> rep = pysdcmicro.report(res, df)
    >>> rep.k_anonymous, int(rep.class_sizes.min()), round(rep.information_loss, 4)
    (True, 3, 0.4487)
    >>> sorted(rep.to_dict()["utility"])
    ['definitions', 'eigen', 'il1', 'il1s', 'il1s_per_cell']
    """
    if not isinstance(result, MicroaggregationResult):
        raise InvalidTypeError(
            f"`result` must be a MicroaggregationResult (use compare(original, masked) for two data sets); "
            f"got {type(result).__name__}."
        )
    sd_fraction = check_fraction(sd_fraction, "sd_fraction")
    variables = list(result.variables)
    if released is None:
        released = result.data
        checked_on = checked_on or "result.data"
    else:
        table = _as_table(released, "released")
        if table.shape[0] != result.n:
            raise InvalidInputError(f"`released` must have {result.n} records like the result; got {table.shape[0]}.")
        checked_on = checked_on or "the released data"
    groups = (result.settings or {}).get("variable_groups") or [variables]  # each group on its own columns
    if class_sizes is None:
        with phase("report: class sizes"):
            class_sizes = np.concatenate([_class_sizes(released, list(group)) for group in groups])
    scope, joint_smallest = "joint", None
    if (result.settings or {}).get("variable_groups"):  # k-anonymous per group: say so, and what the whole is
        scope = "per variable" if all(len(group) == 1 for group in groups) else "per variable group"
        with phase("report: joint class sizes"):
            joint_smallest = int(_class_sizes(released, variables).min())
    rep = Report(
        variables=variables, n=result.n, k=result.k, k_anonymous=bool(class_sizes.min() >= result.k),
        class_sizes=class_sizes, checked_on=checked_on, information_loss=result.information_loss,
        sse=result.sse, sst=result.sst, lower_bound=result.lower_bound, gap=result.gap,
        group_sizes=result.group_sizes, method=result.method, status=result.status, message=result.message,
        seconds=result.seconds, settings=result.settings, info=result.info, released=released, scope=scope,
        joint_smallest=joint_smallest,
    )
    with phase("report: unmasked columns"):  # released as they were: named when they could single out records
        data = result.data if isinstance(result.data, pd.DataFrame) else pd.DataFrame(np.asarray(result.data))
        exact = list((result.settings or {}).get("strata") or [])  # groups lie within strata: k-anonymous with them
        weight = (result.info or {}).get("weight_column", (result.settings or {}).get("weights"))
        if isinstance(weight, (str, int, tuple)) and is_column_label(weight, data.columns):
            exact.append(weight)
        rep.unmasked = unmasked_columns(data, variables, exclude=exact, option="variables",
                                        suffix="not in `variables`")
    if len(groups) > 1:  # each group is k-anonymous; their combination may not be
        with phase("report: across groups"):
            flat = [v for group in groups for v in group]
            table = released[flat] if isinstance(released, pd.DataFrame) else \
                np.asarray(released, dtype=np.float64)[:, flat]
            rep.across_groups = across_groups(table, result.k, flat)
    if measures_skipped:
        rep.measures_note = measures_skipped
    elif original is not None:
        with phase("report: original against result"):
            sse, sst = sse_sst(original, result.data, variables=variables)
        il = 100.0 * sse / sst if sst > 0 else math.nan
        if not _close(il, result.information_loss):
            raise InvalidInputError(
                f"`original` does not match `result`: the result's values lose {il:.6g} % against it, "
                f"the result says {result.information_loss:.6g} %; pass the data given to microaggregate()."
            )
        m = _measures(original, released, variables, sd_fraction, linkage_skipped)
        if released is not result.data:
            sse, sst = m["sse_sst"]
            il = 100.0 * sse / sst if sst > 0 else math.nan
            if not _close(il, result.information_loss):
                note = (f"the released data differ from the result: IL {il:.6g} % as released, "
                        f"{result.information_loss:.6g} % in the result")
                rep.message = f"{rep.message}; {note}" if rep.message else note
                rep.information_loss, rep.sse = il, sse
        rep.utility, rep.risk, rep.changes, rep.correlations = m["utility"], m["risk"], m["changes"], m["correlations"]
        rep.original = original
    return rep


def compare(original: Any, masked: Any, *, variables: Any = None, k: int | None = None,
            sd_fraction: float = 0.05, checked_on: str = "the masked data") -> Report:
    """The release report of any masked data set against its original.

    For data masked elsewhere (another tool, an earlier run, a file): k-anonymity on the
    masked values, IL = 100 SSE/SST (:func:`~pysdcmicro.metrics.il_sse`), sdcMicro's IL1s
    and eigen measures and interval disclosure risk, per-variable changes.

    Parameters
    ----------
    original, masked : DataFrame or 2-D array
        Row-aligned data sets (the masked file keeps the original's row order).
    variables : list, optional
        The masked variables. Default: the numeric columns whose values differ between the
        two data sets (every shared numeric column if none differs).
    k : int, optional
        The k to verify; without it the report gives the smallest class size only.
    sd_fraction : float, default 0.05
        See :func:`report`.
    checked_on : str
        How to name ``masked`` in the report (e.g. its file name).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0], [2.0], [3.0], [10.0], [11.0], [12.0]])
    >>> M = np.array([[2.0], [2.0], [2.0], [11.0], [11.0], [11.0]])
    >>> rep = compare(X, M, k=3)
    >>> rep.k_anonymous, round(rep.information_loss, 4), rep.risk["records_at_risk"]
    (True, 3.1873, 2)
    """
    sd_fraction = check_fraction(sd_fraction, "sd_fraction")
    if variables is None:
        X, Xm, shared = paired_values(original, masked, None)
        differs = [label for j, label in enumerate(shared)
                   if not np.array_equal(X[:, j], Xm[:, j], equal_nan=True)]
        variables = differs or shared
    else:
        _, _, variables = paired_values(original, masked, variables)
    if k is not None:
        k = check_k(k)
    class_sizes = _class_sizes(masked, variables)
    m = _measures(original, masked, variables, sd_fraction)
    sse, sst = m["sse_sst"]
    return Report(
        variables=list(variables), n=int(_as_table(masked, "masked").shape[0]), k=k,
        k_anonymous=None if k is None else bool(class_sizes.min() >= k), class_sizes=class_sizes,
        checked_on=checked_on, information_loss=100.0 * sse / sst if sst > 0 else math.nan, sse=sse, sst=sst,
        utility=m["utility"], risk=m["risk"], changes=m["changes"], correlations=m["correlations"],
        original=original, released=masked,
    )
