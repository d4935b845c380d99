# %% [markdown]
# # Working alongside sdcMicro
#
# Agencies already on R's sdcMicro can use pysdcmicro's methods on their `sdcMicroObj`
# objects, and anyone can cross-check pysdcmicro against R. This vignette needs R, rpy2
# (`pip install "pysdcmicro[r]"`) and the CRAN package sdcMicro; without them it stops
# with the reason. Every number below comes from running it.

# %%
import time

import numpy as np
import pandas as pd

import pysdcmicro
from pysdcmicro import metrics
from pysdcmicro.bridges import sdcmicro as sb

try:
    r_info = sb.check_r(sdcmicro=True)
except sb.RUnavailableError as exc:
    print(str(exc))
    raise SystemExit(0)   # nothing below can run without it

import rpy2.robjects as ro
from rpy2.robjects.packages import importr

sdc = importr("sdcMicro")
print(r_info)

# %% [markdown]
# ## sdcMicro's data, as pandas
#
# `load_dataset` reads a data set bundled with sdcMicro. Tarragona is one of the three
# CASC reference sets of the microaggregation literature: 834 companies, 13 numeric variables.

# %%
tarragona = sb.load_dataset("Tarragona")
variables = list(tarragona.columns)
tarragona.iloc[:4, :6]

# %% [markdown]
# ## The same MDAV on both sides
#
# `to_sdcmicro` builds an `sdcMicroObj` (an rpy2 S4 object: it goes straight into any
# sdcMicro function). The data is purely numeric, and `createSdcObj` needs a categorical key
# variable, so a constant key `pysdcmicro_key` (one level, "all") is added: it identifies
# nobody and changes no numeric risk or utility.
#
# Then the same object is microaggregated twice: by sdcMicro's own `microaggregation()`,
# and by pysdcmicro's MDAV through `sb.microaggregation`, which stores our groups the way
# sdcMicro does and lets sdcMicro recompute the risk (`dRisk`) and utility (`dUtility`).

# %%
k = 3
obj = sb.to_sdcmicro(tarragona, num_vars=variables)
t0 = time.perf_counter()
native = sdc.microaggregation(obj, aggr=k, method="mdav")
t_native = time.perf_counter() - t0
t0 = time.perf_counter()
ours = sb.microaggregation(obj, aggr=k, method="mdav")
t_ours = time.perf_counter() - t0
same_object = list(ro.r("function(a, b) isTRUE(all.equal(a, b, tolerance = 1e-12))")(native, ours))[0]
print("objects equal slot by slot (all.equal, tolerance 1e-12):", same_object)
view_native, view_ours = sb.from_sdcmicro(native), sb.from_sdcmicro(ours)
print("numeric risk  (sdcMicro, ours):", view_native.numeric_risk, view_ours.numeric_risk)
print("utility il1   (sdcMicro, ours):", view_native.utility.get("il1"), view_ours.utility.get("il1"))

# %%
g_native = sb.groups_from_masked(view_native.numeric[variables].to_numpy())
g_ours = sb.groups_from_masked(view_ours.numeric[variables].to_numpy())
Z = pysdcmicro.standardize(tarragona[variables].to_numpy(float))[0]
il_native = 100 * pysdcmicro.sse(Z, g_native) / pysdcmicro.sst(Z)
il_ours = 100 * pysdcmicro.sse(Z, g_ours) / pysdcmicro.sst(Z)
print(f"IL of sdcMicro's groups {il_native:.10f} %, of ours {il_ours:.10f} %")
print("identical groups:", bool(np.array_equal(g_native, g_ours)))

# %% [markdown]
# Both give IL {{ il_ours:.4f }} % on Tarragona at *k* = {{ k }}; the two ILs differ by
# {{ abs(il_ours - il_native):.1e }}. The groups are
# {{ "identical" if np.array_equal(g_native, g_ours) else "NOT identical" }}, and so are the
# objects, slot by slot (`all.equal` says {{ same_object }}).
#
# `undolast` is sdcMicro's own: it restores the object as it was before our step.

# %%
back = sdc.undolast(ours)
print("undolast restores the original object:",
      list(ro.r("function(a, b) isTRUE(all.equal(a, b))")(back, obj))[0])

# %% [markdown]
# ## Better groups, in the object sdcMicro users already have
#
# Any pysdcmicro method runs the same way, with its options: here V-MDAV and mu-Approx
# (constructive), C-MHM (optimal groups along a short path through all records), MDAV
# followed by two-swap, and ICSM with restarts for ten seconds. The risk and utility slots
# are recomputed by sdcMicro itself.

# %%
candidates = [("vmdav", {}), ("mu-approx", {"rng": 0}), ("tsp-mhm", {"rng": 0}),
              ("mdav", {"improve": "two-swap"}), ("icsm", {"rng": 0, "max_restarts": None, "time_limit": 10})]
rows = []
for method, options in candidates:
    t0 = time.perf_counter()
    out = sb.microaggregation(obj, aggr=k, method=method, **options)
    seconds = time.perf_counter() - t0
    view = sb.from_sdcmicro(out)
    groups = sb.groups_from_masked(view.numeric[variables].to_numpy())
    rows.append({"method": method + ("+" + options["improve"] if "improve" in options else ""),
                 "IL %": 100 * pysdcmicro.sse(Z, groups) / pysdcmicro.sst(Z),
                 "numeric risk (dRisk)": view.numeric_risk,
                 "il1 (dUtility)": view.utility.get("il1"),
                 "seconds": seconds})
better = pd.DataFrame(rows).set_index("method")
better.round(4)

# %% [markdown]
# ## One comparison table
#
# `compare` runs sdcMicro's methods and ours on the same data and reports IL (always
# pysdcmicro's definition, on the groups each method made), seconds, group sizes, and which
# methods made identical groups (our methods get `time_limit=10` seconds, which only the
# restarting ICSM uses up). A method sdcMicro cannot run on the data keeps its row,
# with R's error in `message`.

# %%
methods = ["sdcMicro:mdav", "sdcMicro:rmd", "sdcMicro:pca", "sdcMicro:clustpppca",
           "mdav", "vmdav", "mu-approx", "tsp-mhm", ("icsm", {"max_restarts": None})]
table = sb.compare(tarragona, variables, k, methods=methods, seed=0, time_limit=10)
table[["IL", "seconds", "n_groups", "min_group_size", "max_group_size", "identical_groups_to", "message"]].round(4)

# %%
from matplotlib.figure import Figure

ok = table[table["IL"].notna()].sort_values("IL")
fig = Figure(figsize=(6.5, 3.4), layout="constrained")
ax = fig.add_subplot()
colors = ["#888888" if label.startswith("sdcMicro:") else "#1f77b4" for label in ok.index]
ax.barh(list(ok.index), ok["IL"], color=colors)
ax.invert_yaxis()
ax.set_xlabel(f"information loss IL (%), Tarragona, k = {k}")
ax.set_title("sdcMicro's methods (grey) and pysdcmicro's (blue)")
fig

# %% [markdown]
# sdcMicro's `mdav` and ours made {{ "identical" if "mdav" in str(table.loc["sdcMicro:mdav", "identical_groups_to"]) else "different" }}
# groups. The best method in this table is {{ ok.index[0] }} with IL {{ ok["IL"].iloc[0]:.2f }} %.
#
# ## The utility and risk measures agree too
#
# pysdcmicro's `metrics` implement sdcMicro's `dUtility` (IL1s, IL1, eigen) and `dRisk`
# (interval disclosure) from their definitions. On the masked Tarragona file:

# %%
masked = pysdcmicro.microaggregate(tarragona, k).data
x, xm = sb._session().to_r(tarragona.astype(float)), sb._session().to_r(masked)
d_utility = ro.r("function(x, xm, m) sdcMicro::dUtility(x, xm = xm, method = m)")
d_risk = ro.r("function(x, xm, k) sdcMicro::dRisk(x, xm = xm, k = k)")
check = pd.DataFrame({
    "sdcMicro": [float(d_utility(x, xm, "IL1s")[0]), float(d_utility(x, xm, "IL1")[0]),
                 float(d_utility(x, xm, "eigen")[0]), float(d_risk(x, xm, 0.05)[0])],
    "pysdcmicro": [metrics.il1s(tarragona, masked), metrics.il1(tarragona, masked),
                   metrics.eigen_utility(tarragona, masked),
                   metrics.interval_disclosure_risk(tarragona, masked, sd_fraction=0.05)],
}, index=["IL1s", "IL1", "eigen", "dRisk (k = 0.05)"])
check["relative difference"] = (check["pysdcmicro"] - check["sdcMicro"]).abs() / check["sdcMicro"].abs()
check

# %% [markdown]
# The largest relative difference is {{ check["relative difference"].max():.1e }}.
#
# Two caveats when comparing (see the README): sdcMicro's `mdav` treats the value -999 as
# missing, and with `strata_variables` it standardizes each stratum on its own (our
# `strata_scaling="stratum"`, the bridge's default, does the same).
