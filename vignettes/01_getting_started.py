# %% [markdown]
# # Getting started: microaggregating a pandas DataFrame
#
# This vignette takes a survey of firms, masks its numeric quasi-identifiers with
# microaggregation, and checks the result the way an agency does before a release:
# is it k-anonymous, how much information was lost, how much disclosure risk is left,
# what happened to each variable. Every number on this page comes from running
# `01_getting_started.py` (see `vignettes/run.py`); none is typed in.
#
# **Microaggregation** puts the records into groups of at least *k* similar records and
# replaces each record's quasi-identifiers by its group's mean. Every released combination
# of values is then shared by at least *k* records (*k*-anonymity). The price is
# information loss, IL = 100 SSE / SST on the standardized variables: the share of the
# total variation that the grouping removes.

# %%
import os

import numpy as np
import pandas as pd

import pysdcmicro
from pysdcmicro import metrics, reporting

FAST = os.environ.get("PYSDCMICRO_VIGNETTE_FAST", "") not in ("", "0")   # quick setting (CI, docs)
n = 200 if FAST else 600          # the fast setting (CI) uses fewer records
df = pysdcmicro.datasets.make_demo_data(n, rng=0)
df.head()

# %% [markdown]
# The demo data is a generated business survey (nothing is downloaded): an identifier,
# two categorical columns, and five skewed, correlated numeric variables. These five are the
# quasi-identifiers: an intruder who knows a firm's size and turnover could find it in the
# file. How many firms are unique on them before masking?

# %%
qi = ["employees", "turnover", "wages", "assets", "profit"]
fk = metrics.frequency_counts(df, variables=qi)        # records sharing each record's values
print(f"records: {len(df)}, unique on the quasi-identifiers: {int((fk == 1).sum())}")
print("3-anonymous before masking?", metrics.is_k_anonymous(df, 3, variables=qi))

# %% [markdown]
# ## Microaggregate
#
# `microaggregate` takes the DataFrame, *k* and the columns to mask, and returns a result
# whose `data` is a new DataFrame: same index, same columns, the chosen ones replaced by
# their group means, every other column untouched. MDAV (the default method, the one
# sdcMicro and mu-ARGUS use) builds groups of *k* records (the last one up to 2*k*-1).

# %%
res = pysdcmicro.microaggregate(df, 3, variables=qi, method="mdav")
print(res.summary())

# %%
res.data.head().round(2)

# %% [markdown]
# MDAV made {{ res.n_groups }} groups (the largest has {{ int(res.group_sizes.max()) }}
# records, the smallest {{ int(res.group_sizes.min()) }}) and lost
# {{ res.information_loss:.2f }} % of the information. The identifier, region and sector columns are unchanged; only the five
# quasi-identifiers now hold group means.

# %% [markdown]
# ## The release report
#
# `pysdcmicro.report(result, original)` gathers what an agency checks before a release. It
# opens with a headline: k-anonymity verified on the released values themselves (not on
# the grouping), IL, the record-linkage risk (the share of records an intruder who knows
# the original values finds by taking the nearest released record) and the interval
# disclosure risk of sdcMicro's `dRisk`, each with a one-line reading. Then come the group
# sizes, sdcMicro's utility measures IL1s and eigen (the eigenvalues of the correlation
# matrix), and what happened to each
# variable's mean, spread and correlations. It prints as text, serializes to JSON
# (`rep.to_dict()`), and writes an HTML page with the plots below (`rep.to_html(path)`).

# %%
rep = pysdcmicro.report(res, df)
print(rep.to_text())

# %% [markdown]
# Reading it: the released file is k-anonymous ({{ "yes" if rep.k_anonymous else "NO" }}); the
# means are kept exactly while each standard deviation shrinks a little (the variance ratio
# is the share of the variance that survives); and {{ 100 * rep.risk["interval_disclosure"]:.1f }} %
# of the firms still have every original value within {{ rep.risk["sd_fraction"] }} standard
# deviations of their released values; linking each firm to the nearest released record finds
# {{ 100 * rep.risk["record_linkage"]["linked"]:.1f }} % of them (at most 1/*k* after
# microaggregation). Those at interval risk are small firms in tight groups: their group
# mean is almost their own value. The interval risk is sdcMicro's definition, computed here
# from it (the formulas are in the docstrings of `pysdcmicro.metrics`).

# %% [markdown]
# ## Plots
#
# The group sizes: every bar must stand right of the dashed line at *k*.

# %%
fig = rep.plot_group_sizes()
fig

# %% [markdown]
# Each original firm (dot) joined to its released values (diamond), on log scales because
# the variables are skewed: the masked points sit in the middle of their groups.

# %%
fig = rep.plot_scatter("employees", "turnover", scale="log")
fig

# %% [markdown]
# All five variables at once: the records in the plane of the first two principal
# components of the original (the HTML report's first plot), each firm joined to its
# released record.

# %%
fig = reporting.plot_pca(df, res.data, variables=qi)
fig

# %% [markdown]
# One panel per variable, original value against released value (the dashed diagonal means
# unchanged), on log axes for the skewed ones: the large firms move most, which is what
# protects them.

# %%
fig = reporting.plot_variables(df, res.data, variables=qi)
fig

# %% [markdown]
# ## Choosing k
#
# A larger *k* means more protection and more information loss. The table runs MDAV for
# several *k* and reports IL, IL1s per cell, the record-linkage risk (the share of firms an
# intruder would find by linking each to the nearest released record) and the interval
# disclosure risk; the plot shows the trade-off: as IL falls, risk rises.

# %%
rows, reports = [], []
for k in ([3, 5, 10] if FAST else [2, 3, 4, 5, 7, 10]):
    r = pysdcmicro.report(pysdcmicro.microaggregate(df, k, variables=qi), df)
    reports.append(r)
    rows.append({"k": k, "IL %": r.information_loss, "IL1s per cell": r.utility["il1s_per_cell"],
                 "eigen": r.utility["eigen"], "record linkage %": 100 * r.risk["record_linkage"]["linked"],
                 "interval risk %": 100 * r.risk["interval_disclosure"], "k-anonymous": r.k_anonymous})
by_k = pd.DataFrame(rows)
by_k.round(3)

# %%
fig = reporting.plot_risk_utility(reports, labels=[f"k={k}" for k in by_k["k"]])
fig

# %% [markdown]
# From *k* = {{ by_k["k"].min() }} to *k* = {{ by_k["k"].max() }} the information loss grows
# from {{ by_k["IL %"].iloc[0]:.2f }} % to {{ by_k["IL %"].iloc[-1]:.2f }} % while the interval
# risk falls from {{ by_k["interval risk %"].iloc[0]:.1f }} % to
# {{ by_k["interval risk %"].iloc[-1]:.1f }} % and the record-linkage risk from
# {{ by_k["record linkage %"].iloc[0]:.1f }} % to {{ by_k["record linkage %"].iloc[-1]:.1f }} %
# (never above 1/*k*: a record shares its released point with at least *k* - 1 others).

# %% [markdown]
# ## Within strata
#
# Groups can be kept within strata (sdcMicro's `strata_variables`), here the region, so
# that no group mixes firms of two regions. Records are still standardized over the whole
# file, so the IL is comparable with the run above.

# %%
by_region = pysdcmicro.microaggregate(df, 3, variables=qi, strata="region")
print(by_region.summary())
print("groups within one region:", all(df["region"].iloc[g].nunique() == 1 for g in by_region.groups))

# %% [markdown]
# Stratifying costs {{ by_region.information_loss - res.information_loss:.2f }} points of IL
# here ({{ by_region.information_loss:.2f }} % against {{ res.information_loss:.2f }} %).
#
# ## The same from the command line
#
# The package installs a `pysdcmicro` command. These two lines write the generated data, its
# masked version, the JSON report and the HTML page with the plots:
#
# ```bash
# pysdcmicro demo --original demo.csv --output masked.csv --report report.json --html report.html
# pysdcmicro report demo.csv masked.csv --k 3          # check any masked file against its original
# ```
#
# and on your own file: `pysdcmicro microaggregate data.csv --k 3 --variables a,b,c --output
# masked.csv --report report.json --html report.html`. The JSON report holds
# `k_anonymous` (checked on the written file, read back), `utility` (`il1s`, `eigen`) and
# `risk` (`interval_disclosure`).
