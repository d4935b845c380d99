"""Repository-wide pytest configuration: modules that need an optional dependency are not
collected for doctests when it is absent (their tests in tests/ skip with the reason)."""

import importlib.util

collect_ignore = []
if importlib.util.find_spec("numba") is None:  # the optional `fast` extra
    collect_ignore += ["pysdcmicro/constructive/_mdav_numba.py", "pysdcmicro/univariate/_hm_numba.py",
                       "tests/_mdav_reference_numba.py"]
