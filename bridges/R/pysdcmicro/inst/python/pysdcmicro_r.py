"""The Python half of the R package pysdcmicro, called in process through reticulate.

R sends the numbers (records, strata codes, weights) as raw vectors of doubles in R's
column-major order, read here with ``numpy.frombuffer``, and gets the masked values back
the same way: no conversion through reticulate's NumPy support, which older reticulate
versions cannot do with NumPy 2. Everything else is plain values (status, warnings as text). Every exception
becomes an ``error`` entry (one line), so that R raises one condition of its own and no
Python traceback reaches the R user. The sdcMicroObj bookkeeping is done in R.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
import warnings

_READY = False


def setup(python_exe):
    """Make worker processes start the real Python.

    Under reticulate ``sys.executable`` may name the R program (it is the process that
    embeds Python); ``multiprocessing``'s spawn start method would then start R. Point it
    at the interpreter reticulate loaded.
    """
    global _READY
    if _READY:
        return True
    exe = sys.executable or ""
    if python_exe and (not exe or "python" not in os.path.basename(exe).lower() or not os.path.exists(exe)):
        multiprocessing.set_executable(python_exe)
    _READY = True
    return True


def import_core():
    """Import pysdcmicro and its numeric dependencies; the error text when that fails."""
    try:
        import pysdcmicro  # noqa: F401
        from pysdcmicro import _api  # noqa: F401
    except Exception as exc:  # ImportError, or a broken install
        return f"{type(exc).__name__}: {exc}"
    return ""


def methods():
    """The registered method names and their one-line summaries."""
    import pysdcmicro

    specs = pysdcmicro.methods()
    return {"method": list(specs), "summary": [spec.summary for spec in specs.values()],
            "options": [list(spec.options) for spec in specs.values()]}


def _library_path_for_workers():
    """LD_LIBRARY_PATH for worker processes: this interpreter's own library directory first.

    R puts its library directories (and the system's) first on LD_LIBRARY_PATH. A worker
    inheriting that may load another libpython than the one this process runs (a
    pyenv or conda Python then fails in its standard library). Its own comes first here.
    """
    import sysconfig

    current = os.environ.get("LD_LIBRARY_PATH")
    libdir = sysconfig.get_config_var("LIBDIR") if sysconfig.get_config_var("Py_ENABLE_SHARED") else None
    if not libdir or not os.path.isdir(libdir):
        return current
    rest = [p for p in (current or "").split(os.pathsep) if p and os.path.normpath(p) != os.path.normpath(libdir)]
    return os.pathsep.join([libdir, *rest])


def check_workers():
    """This Python's version and that of a worker process started as pysdcmicro starts them
    (multiprocessing's spawn, with the library path :func:`run` gives workers)."""
    import platform
    from concurrent.futures import ProcessPoolExecutor

    saved = os.environ.get("LD_LIBRARY_PATH")
    wanted = _library_path_for_workers()
    try:
        if wanted is None:
            os.environ.pop("LD_LIBRARY_PATH", None)
        else:
            os.environ["LD_LIBRARY_PATH"] = wanted
        with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
            child = pool.submit(platform.python_version).result(timeout=120)
    except Exception as exc:
        child = f"{type(exc).__name__}: {exc}"
    finally:
        if saved is None:
            os.environ.pop("LD_LIBRARY_PATH", None)
        else:
            os.environ["LD_LIBRARY_PATH"] = saved
    return {"parent": platform.python_version(), "worker": child}


def _progress_to(callback):
    if callback is None:
        return None
    import time

    main = threading.main_thread()
    started = time.monotonic()
    last = [started]

    def report(event):
        if threading.current_thread() is not main:  # R may be called from its own thread only
            return
        now = time.monotonic()
        if now - started < 1.0 or now - last[0] < 1.0:  # a line a second, none for a short run
            return
        last[0] = now
        try:
            text = "  ".join(part for _, part in event.fields())
        except Exception:
            text = f"{event.method}/{event.stage} {event.elapsed:.1f}s"
        callback(text)

    return report


def _warning_text(record):
    category = record.category.__name__
    return category, " ".join(str(record.message).split())


def _doubles(raw, n=None):
    import numpy as np

    values = np.frombuffer(raw, dtype=np.float64)
    return values if n is None else values.reshape(n, -1, order="F")


def _for_r(text):
    """An error text in R's terms: rows numbered from 1 as R numbers them (the frame's index
    is 1..n, so the core's ``row i (index j)`` names the R row ``j``), R's argument syntax."""
    import re

    text = re.sub(r"\brow \d+ \(index (-?\d+)\)", r"row \1", text)
    text = re.sub(r"\((-?)inf\)", r"(\1Inf)", text.replace("a missing value (NaN)", "a missing value (NA)"))
    return text.replace(' (CLI --missing keep)', "").replace('missing="keep"', 'missing = "keep"')


def _cells_sdcmicro_leaves_missing(X, labels_per_column):
    """Where sdcMicro's group statistic (no ``na.rm``) releases NA and pysdcmicro releases
    the statistic of the observed cells: the observed cells of every (group, column) with a
    missing cell, and the number of such (group, column) pairs."""
    import numpy as np

    cells = pairs = 0
    for c, labels in enumerate(labels_per_column):
        labels = np.asarray(labels, dtype=np.int64)
        gap = np.isnan(X[:, c])
        if not gap.any():
            continue
        hit = np.zeros(int(labels.max()) + 1, dtype=bool)
        hit[labels[gap]] = True
        cells += int((hit[labels] & ~gap).sum())
        pairs += int(hit.sum())
    return cells, pairs


def run(x, names, k, method, strata=None, weights=None, measure="mean", trim=0.0, decimals=None,
        missing="keep", time_limit=None, seed=None, options=None, progress=None, count_na=False):
    """Microaggregate the columns of ``x`` (rows = records); a dict of plain values.

    ``count_na``: also count the cells sdcMicro's group statistic would release as NA
    (``na_cells``, in ``na_groups`` group-columns), see :func:`_cells_sdcmicro_leaves_missing`."""
    import numpy as np
    import pandas as pd

    from pysdcmicro import _api

    out = {"error": "", "warnings": [], "mx": None, "status": "", "message": "", "interrupted": False,
           "na_cells": 0, "na_groups": 0}
    names = [str(v) for v in ([names] if isinstance(names, str) else list(names))]
    data = _doubles(x).reshape(-1, len(names), order="F")
    frame = pd.DataFrame(data, columns=names, index=pd.RangeIndex(1, data.shape[0] + 1))  # R's row numbers
    strata_column = None
    kwargs = dict(options or {})
    if strata is not None:
        strata_column = "__pysdcmicro_stratum__"
        frame[strata_column] = _doubles(strata).astype(np.int64)
        kwargs.setdefault("strata_scaling", "stratum")  # each stratum on its own, as sdcMicro does
    if isinstance(method, str) and method == "mdav":
        kwargs.setdefault("missing_distance", "sdcmicro")  # records with missing cells grouped as sdcMicro does
    if weights is not None:
        weights = _doubles(weights)
    if seed is not None:
        seed = int(seed)
    if decimals is not None:
        decimals = int(decimals)
    saved = os.environ.get("LD_LIBRARY_PATH")
    wanted = _library_path_for_workers()
    try:
        if wanted is None:
            os.environ.pop("LD_LIBRARY_PATH", None)
        else:
            os.environ["LD_LIBRARY_PATH"] = wanted
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            np_state = np.seterr(all="ignore")
            try:
                res = _api.microaggregate(
                    frame, int(k), variables=names, method=method, strata=strata_column, rng=seed,
                    time_limit=time_limit, progress=_progress_to(progress), missing=missing, measure=measure,
                    trim=float(trim), weights=weights, decimals=decimals, blocks=None, **kwargs)
            finally:
                np.seterr(**np_state)
    except KeyboardInterrupt:
        out["interrupted"] = True
        out["error"] = "interrupted before a partition was made"
        return out
    except Exception as exc:
        text = _for_r(" ".join(str(exc).split()))
        known = isinstance(exc, (ValueError, TypeError))
        out["error"] = text if known else f"{type(exc).__name__}: {text}"
        return out
    finally:
        if saved is None:
            os.environ.pop("LD_LIBRARY_PATH", None)
        else:
            os.environ["LD_LIBRARY_PATH"] = saved
    seen = set()
    for record in caught:
        if issubclass(record.category, RuntimeWarning) and not issubclass(record.category, UserWarning):
            continue  # numpy's arithmetic notes (division by zero on missing cells): not for the user
        item = _warning_text(record)
        if item not in seen:
            seen.add(item)
            out["warnings"].append(f"{item[0]}: {item[1]}")
    released = res.data[names].to_numpy(dtype=np.float64, na_value=np.nan)  # decimals=0 gives Int64 columns
    out["mx"] = bytearray(released.tobytes(order="F"))
    if count_na:
        per_variable = (res.info or {}).get("variable_groups")
        by_column = {group["variables"][0]: group["labels"] for group in per_variable or ()
                     if len(group.get("variables", ())) == 1 and "labels" in group}
        labels = [by_column.get(name, res.labels) for name in names]
        out["na_cells"], out["na_groups"] = _cells_sdcmicro_leaves_missing(data, labels)
    out["status"] = res.status
    out["message"] = res.message or ""
    out["n_groups"] = int(res.n_groups)
    out["il"] = float(res.information_loss) if getattr(res, "information_loss", None) is not None else float("nan")
    out["seconds"] = float(getattr(res, "seconds", float("nan")) or float("nan"))
    return out
