"""pysdcmicro on R's sdcMicro objects, through rpy2.

For agencies already working with sdcMicro, and for anyone cross-checking pysdcmicro's
results against R. sdcMicro objects (``sdcMicroObj``) are plain rpy2 S4 objects
(:class:`rpy2.robjects.methods.RS4`) in and out, so they pass straight to any sdcMicro
function through rpy2 (``undolast``, ``report``, ``localSuppression``, ...).

Public functions
----------------
:func:`to_sdcmicro`
    pandas DataFrame -> sdcMicroObj (``sdcMicro::createSdcObj``).
:func:`from_sdcmicro`
    sdcMicroObj -> pandas: original data, current manipulated numeric variables, roles,
    numeric risk and utility.
:func:`microaggregation`
    Any pysdcmicro method on an sdcMicroObj, sdcMicro-style (``variables``, ``aggr``,
    ``method``, ``strata_variables``, options). Returns a new sdcMicroObj whose
    ``manipNumVars`` hold our result, with the numeric risk and utility recomputed by
    sdcMicro itself (``nextSdcObj``, ``set.sdcMicroObj``, ``dRisk``, ``dUtility``), so
    ``undolast()`` restores the previous state, exactly as after sdcMicro's own
    ``microaggregation()``.
:func:`compare`
    sdcMicro's methods and ours on the same data: one table of IL, seconds, group sizes
    and which methods made identical groups.
:func:`load_dataset`
    sdcMicro's bundled data sets (``Tarragona``, ``CASCrefmicrodata``, ``EIA``,
    ``testdata``, ...) as pandas DataFrames.

Requirements
------------
R, rpy2 and, for everything but the conversions, the CRAN package sdcMicro::

    pip install "pysdcmicro[r]"            # rpy2 >= 3.5.17, < 3.6
    R -e 'install.packages("sdcMicro")'   # from CRAN

rpy2 is pinned below 3.6 because rpy2 3.6 calls R C-API entry points (``R_getVar``) that
R 4.2 (Debian 12's R) does not have; rpy2 3.5.17 works with R 4.2 and pandas 2 and 3.
Nothing here is imported by ``import pysdcmicro``; rpy2 and R are loaded on the first
call, and each missing piece raises :class:`RUnavailableError` (an ``ImportError``) that
says what to install.

rpy2 is used the modern way: conversions happen inside ``localconverter(...)`` blocks;
no global ``pandas2ri.activate()`` ever changes the caller's rpy2 conversion rules.

Purely numeric data
-------------------
``sdcMicro::createSdcObj`` needs at least one categorical key variable. When
:func:`to_sdcmicro` gets no ``key_vars`` it adds a constant factor column
:data:`DUMMY_KEY` (``"pysdcmicro_key"``, one level ``"all"``) and makes it the key
variable. It identifies nobody (every record shares its value), so it changes neither
the numeric risk nor the utility; sdcMicro's categorical risk is then that of a single
cell of n records. :func:`from_sdcmicro` drops it again.

Caveats for users comparing results with sdcMicro
-------------------------------------------------
* sdcMicro runs its method separately in each stratum and so standardizes per stratum
  (its MDAV weighs each variable by 1/variance within the data it receives). Through
  :func:`microaggregation` with strata, pysdcmicro does the same by default
  (``strata_scaling="stratum"``); ``microaggregate(..., strata=...)`` itself defaults to
  whole-data z-scores (``strata_scaling="global"``).
* Missing values: both keep a missing cell missing in the output. With ``method="mdav"``
  :func:`microaggregation` groups records with missing cells as sdcMicro 5.8.1's ``mdav``
  does (``missing_distance="sdcmicro"``, a rule found by black-box experiments; pass
  ``missing_distance="imputed"`` for pysdcmicro's grouping on mean-imputed z-scores, which
  usually has a much lower IL). That includes sdcMicro's treatment of a genuine ``-999`` as
  missing (warned once per column). Measured on the CASC sets with 5 % and 20 % of three
  columns blanked, k = 3 and 5: the same groups as sdcMicro's own call. One known
  difference in the released values: sdcMicro's *last* group (the k..2k-1 records left at
  the end) releases, in a column where some of its members are missing, the sum of the
  observed values divided by the whole group size (missing counted as 0); every other
  group, and pysdcmicro everywhere, releases the mean over the members observed there.
* sdcMicro's ``microaggregation()`` on an sdcMicroObj ignores its ``strata_variables``
  argument (it uses the object's ``strataVar`` slot, and of several strata variables only
  the last). Our :func:`microaggregation` uses ``strata_variables`` when given, else every
  variable of the ``strataVar`` slot.
* With one variable sdcMicro switches to ``mafast`` whatever ``method`` says; we always run
  the method asked for.
* sdcMicro's information-loss measures (``dUtility``: ``il1``, ``il1s``, ``eigen``) are not
  pysdcmicro's IL = 100 * SSE / SST on z-scores. :func:`compare` reports our IL for every
  method, computed on the groups each method made.
* ``measure``: sdcMicro's ``mdav`` ignores it (sdcMicro issue #266: always the mean); ours
  releases each group's median or trimmed mean when asked, with every method.
* Weights: by default as sdcMicro computes them on an sdcMicroObj: its sorting methods
  (``simple``, ``single``, ``onedims``, ``pca``) release the group mean or median weighted
  by the object's ``weightVar``; its ``mdav`` (and pysdcmicro's own methods) unweighted
  ones. ``weights=True`` uses the ``weightVar`` with any method (weighted group means,
  weighted totals kept), ``weights=False`` none. sdcMicro's weighted ``single``,
  ``onedims`` and ``pca`` pair the weights with the records by position in the sorted
  data, not record by record; pysdcmicro weights each record by its own weight, so those
  results differ.
"""

from __future__ import annotations

import difflib
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from pysdcmicro._api import microaggregate
from pysdcmicro._errors import InvalidInputError, InvalidTypeError, PysdcmicroError
from pysdcmicro._partition import canonical_labels, group_means, sse, sst
from pysdcmicro._standardize import standardize
from pysdcmicro._validation import as_dataset, check_k

__all__ = [
    "to_sdcmicro",
    "from_sdcmicro",
    "microaggregation",
    "compare",
    "load_dataset",
    "SdcMicroData",
    "RUnavailableError",
    "SdcMicroNotInstalledError",
    "check_r",
    "DUMMY_KEY",
    "SDCMICRO_METHODS",
    "DEFAULT_COMPARE_METHODS",
    "groups_from_masked",
]

#: Name of the constant categorical key variable that :func:`to_sdcmicro` adds to purely
#: numeric data (sdcMicro's ``createSdcObj`` needs at least one key variable).
DUMMY_KEY = "pysdcmicro_key"

#: The ``method`` values of sdcMicro 5.8.1's ``microaggregation()``.
SDCMICRO_METHODS = ("mdav", "rmd", "pca", "mcdpca", "pppca", "clustmcdpca", "clustpppca", "clustpca",
                    "influence", "onedims", "single", "simple")

#: sdcMicro's methods whose group mean or median it weights by an sdcMicroObj's ``weightVar``
#: (its ``mdav`` computes unweighted means).
SDCMICRO_WEIGHTED = ("simple", "single", "onedims", "pca")

#: Methods :func:`compare` runs by default.
DEFAULT_COMPARE_METHODS = ("sdcMicro:mdav", "sdcMicro:rmd", "sdcMicro:pca", "mdav")

_PIP_HINT = 'pip install "pysdcmicro[r]" (rpy2>=3.5.17,<3.6)'


class RUnavailableError(PysdcmicroError, ImportError):
    """R, rpy2 or sdcMicro is missing or does not load; the message says what to install."""


class SdcMicroNotInstalledError(RUnavailableError):
    """R and rpy2 work, but the R package sdcMicro is not installed."""


# --------------------------------------------------------------------------------------
# The R session (started lazily, once per process)
# --------------------------------------------------------------------------------------

# Small R helpers: calls of sdcMicro's public API and data-frame plumbing, nothing more.
_R_HELPERS = {
    # Values of a data.frame made safe for conversion to pandas: integer columns holding
    # NA become double (rpy2 would turn NA_integer_ into -2147483648), row names dropped.
    "frame_out": """function(x) {
        x <- as.data.frame(x)
        for (j in seq_along(x)) {
            v <- x[[j]]
            if (is.integer(v) && !is.factor(v) && anyNA(v)) x[[j]] <- as.double(v)
        }
        rownames(x) <- NULL
        x
    }""",
    "is_sdcmicroobj": """function(obj) isS4(obj) && methods::is(obj, "sdcMicroObj")""",
    "roles": """function(obj) {
        cn <- colnames(obj@origData)
        nm <- function(i) if (is.null(i)) character(0) else cn[i]
        u <- obj@utility
        num <- function(v) if (is.null(v) || length(v) == 0) NA_real_ else as.double(v[[1]])
        list(key = nm(obj@keyVars), num = nm(obj@numVars), pram = nm(obj@pramVars),
             weight = nm(obj@weightVar), hh = nm(obj@hhId), strata = nm(obj@strataVar),
             sensible = nm(obj@sensibleVar), can_undo = !is.null(obj@prev),
             numeric_risk = num(obj@risk$numeric),
             il1 = num(u$il1), il1s = num(u$il1s), eigen = num(u$eigen))
    }""",
    "orig_data": """function(obj) obj@origData""",
    "manip_num": """function(obj) {
        x <- sdcMicro::get.sdcMicroObj(obj, type = "manipNumVars")
        x[] <- lapply(x, as.double)
        x
    }""",
    # What sdcMicro's own microaggregation() does to an sdcMicroObj after computing the
    # masked values: keep the previous state for undolast(), store the new numeric
    # values, recompute the numeric risk and utility.
    "store_manip": """function(obj, mx, variables) {
        x <- sdcMicro::get.sdcMicroObj(obj, type = "manipNumVars")
        obj <- sdcMicro::nextSdcObj(obj)
        for (v in variables) x[[v]] <- mx[[v]]
        x <- as.data.frame(x[, colnames(obj@origData)[obj@numVars], drop = FALSE])
        obj <- sdcMicro::set.sdcMicroObj(obj, type = "manipNumVars", input = list(x))
        obj <- sdcMicro::dRisk(obj)
        sdcMicro::dUtility(obj)
    }""",
    # sdcMicro's microaggregation() on a data.frame, timed in R; R errors and warnings
    # come back as text instead of being printed on the console.
    "run_sdcmicro": """function(x, variables, aggr, method, seed) {
        notes <- character(0)
        out <- withCallingHandlers(tryCatch({
            if (!is.null(seed)) set.seed(seed)
            t0 <- proc.time()[["elapsed"]]
            m <- sdcMicro::microaggregation(x, variables = variables, aggr = aggr, method = method)
            t1 <- proc.time()[["elapsed"]]
            mx <- as.matrix(m$mx[, variables, drop = FALSE])
            storage.mode(mx) <- "double"
            list(mx = mx, seconds = t1 - t0, error = "")
        }, error = function(e) list(mx = NULL, seconds = NA_real_, error = conditionMessage(e))),
        warning = function(w) {
            notes <<- c(notes, conditionMessage(w))
            invokeRestart("muffleWarning")
        })
        out$warnings <- paste(unique(notes), collapse = "; ")
        out
    }""",
    "datasets": """function() as.character(utils::data(package = "sdcMicro")$results[, "Item"])""",
    "load_dataset": """function(name) {
        e <- new.env()
        utils::data(list = name, package = "sdcMicro", envir = e)
        as.data.frame(e[[name]])
    }""",
    "has_sdcmicro": """function() requireNamespace("sdcMicro", quietly = TRUE)""",
    "sdcmicro_version": """function() as.character(utils::packageVersion("sdcMicro"))""",
    "installed_version": """function() {
        d <- suppressWarnings(utils::packageDescription("sdcMicro"))
        if (is.list(d)) as.character(d$Version) else character(0)
    }""",
    "lib_paths": """function() .libPaths()""",
    "r_version": """function() R.version.string""",
}


def _dist_version(name: str) -> str:
    try:
        from importlib.metadata import version

        return version(name)
    except Exception:  # pragma: no cover - metadata missing
        return "?"


def _r_version_from_shell() -> str:
    try:
        out = subprocess.run(["R", "--version"], capture_output=True, text=True, timeout=30)
        first = out.stdout.splitlines()[0] if out.stdout else ""
        return first.split(" -- ")[0] or "the installed R"
    except Exception:
        return "the installed R"


class _Session:
    """rpy2 modules, the pandas converter and our R helper functions."""

    def __init__(self):
        if not os.environ.get("R_HOME") and shutil.which("R") is None:
            raise RUnavailableError(
                "R not found: the sdcMicro bridge needs R (R_HOME is not set and there is no `R` on PATH). "
                "Install R (Debian/Ubuntu: apt-get install r-base-core), then " + _PIP_HINT + "."
            )
        try:
            import rpy2  # noqa: F401
        except ImportError as exc:
            raise RUnavailableError(
                f"rpy2 not importable: {exc}. Install the R extra: {_PIP_HINT}."
            ) from exc
        # Starting embedded R makes rpy2 put R's library path (R's `etc/ldpaths`) into this
        # process's LD_LIBRARY_PATH. R's libraries are loaded by then, but every child process
        # started afterwards inherits it: a spawned Python (multiprocessing, Dask workers, the
        # CLI in a subprocess) may then load the system's libpython instead of its own and
        # fail (seen: pyenv's Python picking Debian's libpython3.11). So put it back.
        saved_ld_path = os.environ.get("LD_LIBRARY_PATH")
        try:
            import rpy2.robjects as ro
            from rpy2.robjects import pandas2ri
            from rpy2.robjects.conversion import localconverter
            from rpy2.robjects.methods import RS4
        except Exception as exc:  # without R home: ValueError; a C-API mismatch: ffi/OSError, ...
            raise RUnavailableError(
                f"rpy2 not importable: rpy2 {_dist_version('rpy2')} does not load against "
                f"{_r_version_from_shell()} ({type(exc).__name__}: {exc}). rpy2 >= 3.6 needs a newer R than "
                f"Debian 12's 4.2 (it calls R_getVar); with R 4.2 use rpy2 3.5.17: {_PIP_HINT}."
            ) from exc
        finally:
            if saved_ld_path is None:
                os.environ.pop("LD_LIBRARY_PATH", None)
            else:
                os.environ["LD_LIBRARY_PATH"] = saved_ld_path
        self.ro = ro
        self.RS4 = RS4
        self.localconverter = localconverter
        self.converter = ro.default_converter + pandas2ri.converter
        self.fn = {name: ro.r(code) for name, code in _R_HELPERS.items()}
        self.r_version = str(self.fn["r_version"]()[0])
        self.sdcmicro_version: str | None = None

    def require_sdcmicro(self) -> None:
        if self.sdcmicro_version is not None:
            return
        if not bool(self.fn["has_sdcmicro"]()[0]):
            paths = ", ".join(self.fn["lib_paths"]())
            raise SdcMicroNotInstalledError(
                "sdcMicro not installed in R: install.packages('sdcMicro') from CRAN "
                f"(in R; the R libraries searched are: {paths}; set R_LIBS_USER to add one)."
            )
        self.sdcmicro_version = str(self.fn["sdcmicro_version"]()[0])

    # conversions, always inside localconverter (never a global activate())
    def to_r(self, frame: pd.DataFrame):
        with self.localconverter(self.converter):
            return self.ro.conversion.get_conversion().py2rpy(_r_safe_frame(frame))

    def to_py(self, robj) -> pd.DataFrame:
        robj = self.fn["frame_out"](robj)
        with self.localconverter(self.converter):
            frame = self.ro.conversion.get_conversion().rpy2py(robj)
        return _clean_frame(frame)

    def strings(self, values) -> Any:
        return self.ro.StrVector([str(v) for v in values])


_SESSION: _Session | None = None


def _session(*, sdcmicro: bool = True) -> _Session:
    global _SESSION
    if _SESSION is None:
        _SESSION = _Session()
    if sdcmicro:
        _SESSION.require_sdcmicro()
    return _SESSION


def check_r(*, sdcmicro: bool = True) -> dict:
    """Start R through rpy2 (once) and report versions; raise what is missing.

    Parameters
    ----------
    sdcmicro : bool, default True
        Also require the R package sdcMicro.

    Returns
    -------
    dict
        ``{"R": ..., "rpy2": ..., "sdcMicro": ...}``: versions; ``"sdcMicro"`` is None
        when it is not installed (possible only with ``sdcmicro=False``).

    Raises
    ------
    RUnavailableError
        With a message starting "R not found", "rpy2 not importable: ..." or
        "sdcMicro not installed in R: install.packages('sdcMicro') from CRAN".
    """
    s = _session(sdcmicro=sdcmicro)
    installed = s.sdcmicro_version
    if installed is None:  # without loading it: the version of an installed copy, if any
        found = s.fn["installed_version"]()
        installed = str(found[0]) if len(found) else None
    return {"R": s.r_version, "rpy2": _dist_version("rpy2"), "sdcMicro": installed}


def _r_safe_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy whose integer columns fit R's 32-bit integers (else float64), index 1..n."""
    out = frame.copy()
    for col in out.columns:
        dtype = out[col].dtype
        if pd.api.types.is_integer_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype):
            values = out[col].to_numpy(dtype=np.float64, na_value=np.nan)
            finite = values[np.isfinite(values)]
            if finite.size and np.abs(finite).max() > 2**31 - 1:  # R's NA_integer_ is -2^31
                out[col] = values
    out.index = pd.RangeIndex(1, len(out) + 1)
    return out


def _clean_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Positional index; rpy2's NA singletons in text / logical columns become missing values."""
    from rpy2.rinterface import NA_Character, NA_Logical

    frame = frame.reset_index(drop=True)
    for col in frame.columns:
        s = frame[col]
        if s.dtype == object:
            na = s.map(lambda v: v is NA_Character or v is NA_Logical)
            if na.any():
                rest = s[~na]
                if len(rest) and rest.map(lambda v: isinstance(v, (bool, np.bool_))).all():
                    frame[col] = pd.array([None if m else bool(v) for v, m in zip(s, na)], dtype="boolean")
                else:
                    frame[col] = s.where(~na, None)
    return frame


def _session_for(obj: Any) -> _Session:
    """The R session, after checking that ``obj`` is an sdcMicroObj (rejecting anything
    that is not an rpy2 S4 object before sdcMicro is needed)."""
    s = _session(sdcmicro=False)
    if isinstance(obj, s.RS4):
        s.require_sdcmicro()
        if bool(s.fn["is_sdcmicroobj"](obj)[0]):
            return s
        kind = "an S4 object of class " + "/".join(s.ro.r("class")(obj))
    else:
        kind = type(obj).__name__
    raise InvalidTypeError(
        "`obj` must be an sdcMicroObj (an rpy2 RS4 object, e.g. from to_sdcmicro() or "
        f"sdcMicro::createSdcObj); got {kind}."
    )


def _column_list(value: Any, name: str, columns: list, *, allow_empty: bool = True) -> list[str]:
    if value is None:
        return []
    items = [value] if isinstance(value, str) else list(value)
    for item in items:
        if not isinstance(item, str):
            raise InvalidTypeError(f"`{name}` must be column names (strings); got {item!r}.")
        if item not in columns:
            close = difflib.get_close_matches(item, [str(c) for c in columns], n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise InvalidInputError(f"unknown column {item!r} in `{name}`.{hint}")
    if len(set(items)) != len(items):
        raise InvalidInputError(f"`{name}` lists a column more than once; got {items!r}.")
    if not items and not allow_empty:
        raise InvalidInputError(f"`{name}` must name at least one column; got an empty list.")
    return items


# --------------------------------------------------------------------------------------
# pandas <-> sdcMicroObj
# --------------------------------------------------------------------------------------

def to_sdcmicro(frame: pd.DataFrame, num_vars: Any, key_vars: Any = None, *, weight_var: str | None = None,
                strata_var: Any = None, hh_id: str | None = None, pram_vars: Any = None,
                sensible_var: Any = None, exclude_vars: Any = None, seed: int | None = None,
                **options: Any):
    """Build an sdcMicroObj from a pandas DataFrame (``sdcMicro::createSdcObj``).

    Parameters
    ----------
    frame : DataFrame
        The microdata; never modified. Column names must be strings. Text columns used as
        key variables become R factors.
    num_vars : str or list of str
        Continuous key variables (sdcMicro's ``numVars``): what microaggregation masks.
    key_vars : str or list of str, optional
        Categorical key variables (``keyVars``). sdcMicro needs at least one: without them
        a constant factor column :data:`DUMMY_KEY` is added and used (see the module notes).
    weight_var, strata_var, hh_id, pram_vars, sensible_var, exclude_vars
        sdcMicro's ``weightVar``, ``strataVar``, ``hhId``, ``pramVars``, ``sensibleVar``,
        ``excludeVars``.
    seed : int, optional
        sdcMicro's ``seed``.
    **options
        Further ``createSdcObj`` arguments by their R names (``randomizeRecords``,
        ``alpha``, ``options``).

    Returns
    -------
    rpy2.robjects.methods.RS4
        The sdcMicroObj, usable with any sdcMicro function through rpy2.

    Notes
    -----
    Integer columns whose values do not fit R's 32-bit integers are sent as doubles (rpy2
    would turn them into text). The rows keep their order; the pandas index is not kept.
    """
    if not isinstance(frame, pd.DataFrame):
        raise InvalidTypeError(f"`frame` must be a pandas DataFrame; got {type(frame).__name__}.")
    bad = [c for c in frame.columns if not isinstance(c, str)]
    if bad:
        raise InvalidTypeError(f"column names must be strings for R; got {bad[0]!r}.")
    columns = list(frame.columns)
    nums = _column_list(num_vars, "num_vars", columns, allow_empty=False)
    for col in nums:
        s = frame[col]
        if not pd.api.types.is_numeric_dtype(s.dtype) or pd.api.types.is_bool_dtype(s.dtype):
            raise InvalidTypeError(f"column {col!r} in `num_vars` must be numeric; got dtype {s.dtype}.")
    keys = _column_list(key_vars, "key_vars", columns)
    roles = {
        "weightVar": _column_list(weight_var, "weight_var", columns),
        "strataVar": _column_list(strata_var, "strata_var", columns),
        "hhId": _column_list(hh_id, "hh_id", columns),
        "pramVars": _column_list(pram_vars, "pram_vars", columns),
        "sensibleVar": _column_list(sensible_var, "sensible_var", columns),
        "excludeVars": _column_list(exclude_vars, "exclude_vars", columns),
    }
    both = [c for c in keys if c in nums]
    if both:
        raise InvalidInputError(f"column {both[0]!r} is both in `key_vars` and `num_vars`; it can be only one of them.")
    s = _session()
    data = frame
    if not keys:
        if DUMMY_KEY in columns:
            raise InvalidInputError(
                f"`key_vars` is empty and `frame` already has a column {DUMMY_KEY!r}, the name used for the "
                "constant key variable sdcMicro needs; pass `key_vars` or rename that column."
            )
        data = frame.assign(**{DUMMY_KEY: pd.Categorical(["all"] * len(frame))})
        keys = [DUMMY_KEY]
    args: dict[str, Any] = {"dat": s.to_r(data), "keyVars": s.strings(keys), "numVars": s.strings(nums)}
    for name, cols in roles.items():
        if cols:
            args[name] = s.strings(cols)
    if seed is not None:
        args["seed"] = s.ro.IntVector([int(seed)])
    args.update(options)
    create = s.ro.r("sdcMicro::createSdcObj")
    return create(**args)


@dataclass(frozen=True)
class SdcMicroData:
    """An sdcMicroObj read into pandas (see :func:`from_sdcmicro`).

    Attributes
    ----------
    original : DataFrame
        ``origData``: the data as given to ``createSdcObj`` (without :data:`DUMMY_KEY`).
    numeric : DataFrame
        ``manipNumVars``: the current (masked) values of the numeric key variables, as
        float64.
    data : DataFrame
        ``original`` with the numeric key variables replaced by their current values.
    key_vars, num_vars, pram_vars, strata_var, sensible_var : list of str
        Roles of the columns (sdcMicro's ``keyVars``, ``numVars``, ...).
    weight_var, hh_id : str or None
    numeric_risk : float or None
        ``risk$numeric`` (sdcMicro's ``dRisk``: share of masked records within an interval
        of their original values).
    utility : dict
        ``utility``'s ``il1``, ``il1s`` and ``eigen`` (sdcMicro's ``dUtility``); None where
        sdcMicro has not computed them.
    can_undo : bool
        Whether a previous state is stored (``undolast()`` can restore it).
    dummy_key : bool
        Whether the key variable was the constant :data:`DUMMY_KEY` added by
        :func:`to_sdcmicro` (it is left out of ``original``, ``data`` and ``key_vars``).
    """

    original: pd.DataFrame
    numeric: pd.DataFrame
    data: pd.DataFrame
    key_vars: list
    num_vars: list
    pram_vars: list = field(default_factory=list)
    strata_var: list = field(default_factory=list)
    sensible_var: list = field(default_factory=list)
    weight_var: str | None = None
    hh_id: str | None = None
    numeric_risk: float | None = None
    utility: dict = field(default_factory=dict)
    can_undo: bool = False
    dummy_key: bool = False


def _roles(s: _Session, obj) -> dict:
    res = s.fn["roles"](obj)
    out = {}
    for name in res.names:
        values = list(res.rx2(name))
        out[name] = values
    num = {key: (None if np.isnan(out[key][0]) else float(out[key][0]))
           for key in ("numeric_risk", "il1", "il1s", "eigen")}
    return {
        "key_vars": [str(v) for v in out["key"]], "num_vars": [str(v) for v in out["num"]],
        "pram_vars": [str(v) for v in out["pram"]], "strata_var": [str(v) for v in out["strata"]],
        "sensible_var": [str(v) for v in out["sensible"]],
        "weight_var": str(out["weight"][0]) if out["weight"] else None,
        "hh_id": str(out["hh"][0]) if out["hh"] else None,
        "can_undo": bool(out["can_undo"][0]), **num,
    }


def from_sdcmicro(obj) -> SdcMicroData:
    """Read an sdcMicroObj into pandas: original data, current numeric values, roles.

    Parameters
    ----------
    obj : rpy2 RS4
        An sdcMicroObj (from :func:`to_sdcmicro`, :func:`microaggregation` or any sdcMicro
        function called through rpy2).

    Returns
    -------
    SdcMicroData
        Frames with a positional index (row order of ``origData``).
    """
    s = _session_for(obj)
    roles = _roles(s, obj)
    original = s.to_py(s.fn["orig_data"](obj))
    numeric = s.to_py(s.fn["manip_num"](obj))
    dummy = roles["key_vars"] == [DUMMY_KEY] and DUMMY_KEY in original.columns \
        and original[DUMMY_KEY].nunique(dropna=False) == 1
    if dummy:
        original = original.drop(columns=[DUMMY_KEY])
        roles["key_vars"] = []
    data = original.copy()
    for col in numeric.columns:
        data[col] = numeric[col].to_numpy()
    utility = {key: roles.pop(key) for key in ("il1", "il1s", "eigen")}
    return SdcMicroData(original=original, numeric=numeric, data=data, utility=utility, dummy_key=dummy, **roles)


# --------------------------------------------------------------------------------------
# pysdcmicro methods on sdcMicroObj
# --------------------------------------------------------------------------------------

def microaggregation(obj, variables: Any = None, aggr: int = 3, method: Any = "mdav", strata_variables: Any = None,
                     *, measure: str = "mean", trim: float = 0.0, weights: Any = None, return_result: bool = False,
                     **options: Any):
    """Microaggregate an sdcMicroObj with a pysdcmicro method, sdcMicro-style.

    The counterpart of sdcMicro's ``microaggregation(obj, variables, aggr, method, ...)``:
    the current values of the numeric key variables (``manipNumVars``) are
    microaggregated by :func:`pysdcmicro.microaggregate`, and a new sdcMicroObj is
    returned whose ``manipNumVars`` hold the result and whose numeric risk and utility
    are recomputed by sdcMicro itself (``nextSdcObj``, ``set.sdcMicroObj``, ``dRisk``,
    ``dUtility``, in the order its own ``microaggregation()`` calls them), so that
    ``sdcMicro::undolast()`` restores the previous state.

    Parameters
    ----------
    obj : rpy2 RS4
        An sdcMicroObj with numeric key variables. Not modified (R objects are values).
    variables : str or list of str, optional
        Numeric key variables microaggregated jointly; default all of them.
    aggr : int, default 3
        Group size k (sdcMicro's ``aggr``).
    method : str or callable, default "mdav"
        A pysdcmicro method (``pysdcmicro.methods()``) or a callable core.
    strata_variables : str or list of str, optional
        Microaggregate within each combination of these columns of the original data.
        Default: the object's ``strataVar`` slot (all of its variables), as sdcMicro.
    measure : {"mean", "median", "trim", "onestep"}, default "mean"
        sdcMicro's ``measure``: the released value of each group (``trim``: trimmed mean
        with proportion ``trim``; ``onestep``: sdcMicro's one-step robust mean).
    trim : float, default 0
        sdcMicro's ``trim``, with ``measure="trim"``.
    weights : None, bool or str, default None
        None: as sdcMicro on an sdcMicroObj: the ``weightVar`` for its sorting methods
        (``simple``, ``single``, ``onedims``, ``pca``; measure mean or median), unweighted
        for ``mdav`` and pysdcmicro's own methods. True: the object's ``weightVar`` as
        sampling weights (weighted means). False: unweighted. A column name of the original
        data: that column.
    return_result : bool, default False
        Also return pysdcmicro's :class:`~pysdcmicro.MicroaggregationResult`.
    **options
        Passed to :func:`pysdcmicro.microaggregate`: method options, ``improve``,
        ``rng``, ``time_limit``, ``strata_scaling`` (default ``"stratum"`` here: each
        stratum standardized on its own, as sdcMicro does), ...

    Returns
    -------
    rpy2 RS4, or (RS4, MicroaggregationResult) with ``return_result=True``

    Raises
    ------
    StratumTooSmallError
        A stratum holds fewer than ``aggr`` records (the message names it).
    InvalidInputError, InvalidTypeError
        Bad arguments. Missing values in the numeric variables are kept missing (pass
        ``missing="error"`` to refuse them).
    """
    if not isinstance(return_result, bool):
        raise InvalidTypeError(f"`return_result` must be True or False; got {return_result!r}.")
    s = _session_for(obj)
    roles = _roles(s, obj)
    nums = roles["num_vars"]
    if not nums:
        raise InvalidInputError("`obj` has no numeric key variables (numVars); there is nothing to microaggregate.")
    current = s.to_py(s.fn["manip_num"](obj))
    chosen = _column_list(variables, "variables", nums, allow_empty=False) if variables is not None else list(nums)
    if strata_variables is None:
        strata = roles["strata_var"]
    else:
        original_columns = list(s.ro.r("function(o) colnames(o@origData)")(obj))
        strata = _column_list(strata_variables, "strata_variables", original_columns)
    check_k(aggr, len(current), name="aggr")
    work = current[chosen].copy()
    if strata:
        clash = [c for c in strata if c in chosen]
        if clash:
            raise InvalidInputError(
                f"column {clash[0]!r} is both in `variables` and in `strata_variables`; it can be only one of them."
            )
        original = s.to_py(s.fn["orig_data"](obj))
        for col in strata:
            work[col] = original[col].to_numpy()
        options = {"strata_scaling": "stratum", **options}
    w = None
    if weights is None and isinstance(method, str) and method.strip().lower() in SDCMICRO_WEIGHTED \
            and measure in ("mean", "median") and roles["weight_var"]:
        weights = True  # sdcMicro's sorting methods weight by the object's weightVar
    if weights is True:
        if not roles["weight_var"]:
            raise InvalidInputError("`weights=True` needs the object's weightVar; this sdcMicroObj has none.")
        weights = roles["weight_var"]
    if weights is not None and weights is not False:
        if not isinstance(weights, str):
            raise InvalidTypeError(f"`weights` must be None, True or a column name; got {weights!r}.")
        original = s.to_py(s.fn["orig_data"](obj))
        column = _column_list(weights, "weights", list(original.columns), allow_empty=False)[0]
        w = pd.Series(original[column].to_numpy(dtype=np.float64, na_value=np.nan), name=column)
    if isinstance(method, str) and method.strip().lower() == "mdav" and "missing_distance" not in options:
        options = {**options, "missing_distance": "sdcmicro"}  # group as sdcMicro's mdav does with NA / -999
    result = microaggregate(work, aggr, variables=chosen, method=method, strata=strata or None, measure=measure,
                            trim=trim, weights=w, **options)
    masked = result.data[chosen].astype(np.float64)
    new = s.fn["store_manip"](obj, s.to_r(masked), s.strings(chosen))
    return (new, result) if return_result else new


# --------------------------------------------------------------------------------------
# sdcMicro and pysdcmicro side by side
# --------------------------------------------------------------------------------------

def groups_from_masked(masked: np.ndarray) -> np.ndarray:
    """Partition recovered from masked values: rows with identical masked vectors share a group.

    Two groups whose means are exactly equal (e.g. groups of duplicate records) merge into
    one; that never changes the SSE (the union of groups with equal centroids has the sum
    of their SSEs), so IL computed on the recovered partition is exact.

    Examples
    --------
    >>> groups_from_masked(np.array([[1.0, 2.0], [5.0, 5.0], [1.0, 2.0]])).tolist()
    [0, 1, 0]
    """
    masked = np.asarray(masked, dtype=np.float64)
    _, inverse = np.unique(masked, axis=0, return_inverse=True)
    return canonical_labels(np.asarray(inverse).ravel())


def _method_items(methods: Any) -> list[tuple[str, str, Any, dict]]:
    """(label, kind, name, options) per requested method; kind is "sdcMicro" or "pysdcmicro"."""
    if isinstance(methods, str):
        methods = [methods]
    items = []
    for item in methods:
        options: dict = {}
        if isinstance(item, tuple):
            if len(item) != 2 or not isinstance(item[1], dict):
                raise InvalidTypeError(f"a method given as a tuple must be (name, options_dict); got {item!r}.")
            item, options = item
        if callable(item) and not isinstance(item, str):
            label = getattr(item, "__name__", "custom")
            items.append((label, "pysdcmicro", item, options))
            continue
        if not isinstance(item, str):
            raise InvalidTypeError(f"`methods` must hold method names, callables or (name, options) tuples; got {item!r}.")
        if item.startswith("sdcMicro:"):
            name = item.split(":", 1)[1]
            if name not in SDCMICRO_METHODS:
                close = difflib.get_close_matches(name, SDCMICRO_METHODS, n=1)
                hint = f" Did you mean 'sdcMicro:{close[0]}'?" if close else ""
                raise InvalidInputError(
                    f"unknown sdcMicro method {name!r}; sdcMicro's microaggregation() offers: "
                    f"{', '.join(SDCMICRO_METHODS)}.{hint}"
                )
            if options:
                raise InvalidInputError(f"options are not supported for sdcMicro methods; got {options!r} for {item!r}.")
            items.append((item, "sdcMicro", name, {}))
        else:
            from pysdcmicro._methods import get_method

            spec = get_method(item)  # raises with the list of methods and a suggestion
            spec.check_options(options)
            label = item if not options else item + "(" + ", ".join(f"{k}={v!r}" for k, v in options.items()) + ")"
            items.append((label, "pysdcmicro", item, options))
    labels = [it[0] for it in items]
    if len(set(labels)) != len(labels):
        raise InvalidInputError(f"`methods` lists a method more than once; got {labels!r}.")
    if not items:
        raise InvalidInputError("`methods` must name at least one method; got none.")
    return items


def compare(frame: pd.DataFrame, variables: Any, k: int, methods: Any = DEFAULT_COMPARE_METHODS, *,
            reference: str | None = None, seed: int | None = 0, time_limit: float | None = None) -> pd.DataFrame:
    """Run sdcMicro's methods and pysdcmicro's on the same data; one comparison table.

    Parameters
    ----------
    frame : DataFrame
        The records (complete, finite numeric ``variables``).
    variables : list of str
        Columns microaggregated jointly.
    k : int
        Group size (sdcMicro's ``aggr``).
    methods : sequence
        ``"sdcMicro:NAME"`` for sdcMicro's ``microaggregation(method = NAME)`` (see
        :data:`SDCMICRO_METHODS`), a pysdcmicro method name, or ``(name, options)``.
        Default: :data:`DEFAULT_COMPARE_METHODS`.
    reference : str, optional
        Label of the method the ``same_groups_as_reference`` column compares with
        (default: the first method).
    seed : int or None, default 0
        ``set.seed(seed)`` in R before each sdcMicro method (``rmd`` and the robust
        methods draw random subsamples) and ``rng`` of pysdcmicro's methods.
    time_limit : float, optional
        ``time_limit`` of pysdcmicro's methods.

    Returns
    -------
    DataFrame indexed by method label, with columns

    * ``IL``: pysdcmicro's IL = 100 * SSE / SST on z-scores of ``variables``, of the groups
      the method made (recovered from its masked values, see :func:`groups_from_masked`);
      for a method whose output is not a partition with group means (``onedims``
      aggregates each variable on its own) the IL of the masked values themselves,
      100 * sum((z - z_masked)^2) / SST, and ``il_basis`` says which;
    * ``seconds``: the method's own time (sdcMicro: measured in R, without data transfer;
      ours: the whole ``microaggregate`` call);
    * ``n_groups``, ``min_group_size``, ``max_group_size`` of the recovered groups;
    * ``identical_groups_to``: the other methods (comma-separated) whose recovered groups
      are identical to this one's ("" when none);
    * ``same_groups_as_reference``: bool;
    * ``il_basis``: ``"groups"`` or ``"masked values"``;
    * ``message``: "R error: ..." when an sdcMicro method failed on this data (e.g. ``rmd``
      on data with a singular covariance matrix, as Census and EIA: the row's numbers are
      then missing), "R warnings: ..." when R warned, pysdcmicro's status
      message when a method stopped at ``time_limit``, else "".

    ``attrs`` holds ``reference``, ``k``, ``n``, ``variables`` and the versions used.
    """
    items = _method_items(methods)
    ds = as_dataset(frame, variables)
    if not ds.is_frame:
        raise InvalidTypeError(f"`frame` must be a pandas DataFrame; got {type(frame).__name__}.")
    k = check_k(k, ds.n)
    labels_all = [it[0] for it in items]
    if reference is None:
        reference = labels_all[0]
    elif reference not in labels_all:
        raise InvalidInputError(f"`reference` must be one of the compared methods {labels_all!r}; got {reference!r}.")
    X = ds.X
    Z, center, scale, constant = standardize(X)
    total = sst(Z)
    if total == 0:
        raise InvalidInputError("every chosen variable is constant; information loss is undefined.")
    versions = {"pysdcmicro": _pysdcmicro_version()}
    rframe = None
    rows, partitions = [], {}
    for label, kind, name, options in items:
        if kind == "sdcMicro":
            s = _session()
            versions.update({"R": s.r_version, "sdcMicro": s.sdcmicro_version, "rpy2": _dist_version("rpy2")})
            if rframe is None:
                rframe = s.to_r(pd.DataFrame(X, columns=[str(v) for v in ds.variables]))
            out = s.fn["run_sdcmicro"](rframe, s.strings(ds.variables), s.ro.IntVector([k]), s.ro.StrVector([name]),
                                       s.ro.NULL if seed is None else s.ro.IntVector([int(seed)]))
            error = " ".join(str(out.rx2("error")[0]).split())
            warned = " ".join(str(out.rx2("warnings")[0]).split())
            if error:  # sdcMicro failed on this data: a row of missing numbers with R's message
                partitions[label] = None
                rows.append({"method": label, "IL": np.nan, "seconds": np.nan, "n_groups": pd.NA,
                             "min_group_size": pd.NA, "max_group_size": pd.NA, "il_basis": "",
                             "message": f"R error: {error}" + (f" (R warnings: {warned})" if warned else "")})
                continue
            message = f"R warnings: {warned}" if warned else ""
            masked = np.asarray(out.rx2("mx"), dtype=np.float64)
            if masked.shape != (ds.n, len(ds.variables)):  # pragma: no cover - a change in sdcMicro
                raise RuntimeError(f"sdcMicro's {name!r} returned masked data of shape {masked.shape}; "
                                   f"expected {(ds.n, len(ds.variables))}.")
            seconds = float(out.rx2("seconds")[0])
        else:
            started = time.perf_counter()
            res = microaggregate(ds.source, k, variables=list(ds.variables), method=name, rng=seed,
                                 time_limit=time_limit, **options)
            seconds = time.perf_counter() - started
            masked = np.asarray(res.data[list(ds.variables)], dtype=np.float64)
            message = "" if res.status == "done" else f"status {res.status}: {res.message}"
        labels = groups_from_masked(masked)
        means = group_means(X, labels)
        tol = 1e-9 * (np.abs(masked) + scale)
        if np.all(np.abs(means[labels] - masked) <= tol):
            il, basis = 100.0 * sse(Z, labels) / total, "groups"
        else:
            Zm = (masked - center) / scale
            Zm[:, constant] = 0.0
            il, basis = 100.0 * float(np.sum((Z - Zm) ** 2)) / total, "masked values"
        sizes = np.bincount(labels)
        partitions[label] = labels
        rows.append({"method": label, "IL": il, "seconds": seconds, "n_groups": int(sizes.size),
                     "min_group_size": int(sizes.min()), "max_group_size": int(sizes.max()), "il_basis": basis,
                     "message": message})
    ref_labels = partitions[reference]
    for row in rows:
        mine = partitions[row["method"]]
        same = [other for other in labels_all if other != row["method"] and mine is not None
                and partitions[other] is not None and np.array_equal(partitions[other], mine)]
        row["identical_groups_to"] = ", ".join(same)
        row["same_groups_as_reference"] = (mine is not None and ref_labels is not None
                                           and bool(np.array_equal(ref_labels, mine)))
    table = pd.DataFrame(rows).set_index("method")[
        ["IL", "seconds", "n_groups", "min_group_size", "max_group_size", "identical_groups_to",
         "same_groups_as_reference", "il_basis", "message"]]
    table.attrs.update({"reference": reference, "k": k, "n": ds.n, "variables": list(ds.variables),
                        "versions": versions})
    return table


def _pysdcmicro_version() -> str:
    from pysdcmicro import __version__

    return __version__


# --------------------------------------------------------------------------------------
# sdcMicro's data sets
# --------------------------------------------------------------------------------------

def load_dataset(name: str) -> pd.DataFrame:
    """One of sdcMicro's bundled data sets as a pandas DataFrame.

    Parameters
    ----------
    name : str
        As in R's ``data(package = "sdcMicro")``: ``"Tarragona"``, ``"CASCrefmicrodata"``
        (the CASC Census set), ``"EIA"``, ``"testdata"``, ``"testdata2"``, ``"casc1"``,
        ``"francdat"``, ``"free1"``, ``"microData"``.

    Returns
    -------
    DataFrame
        Positional index; R factors become pandas categoricals; integer columns with
        missing values become float64.
    """
    if not isinstance(name, str):
        raise InvalidTypeError(f"`name` must be a data set name (str); got {name!r}.")
    s = _session()
    available = [str(v) for v in s.fn["datasets"]()]
    if name not in available:
        close = difflib.get_close_matches(name, available, n=1)
        if not close:
            lowered = {a.lower(): a for a in available}
            close = [lowered[name.lower()]] if name.lower() in lowered else []
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise InvalidInputError(
            f"`name` must be one of sdcMicro's data sets ({', '.join(available)}); got {name!r}.{hint}"
        )
    return s.to_py(s.fn["load_dataset"](name))
