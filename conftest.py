"""Repository-wide pytest configuration: modules that need an optional dependency are not
collected for doctests when it is absent (their tests in tests/ skip with the reason), and
the `fast` marker."""

import importlib.util

import pytest

collect_ignore = []
if importlib.util.find_spec("numba") is None:  # the optional `fast` extra
    collect_ignore += ["pysdcmicro/constructive/_mdav_numba.py", "pysdcmicro/univariate/_hm_numba.py",
                       "tests/_mdav_reference_numba.py"]

_NOT_FAST = ("slow", "subprocess", "r")


@pytest.hookimpl(tryfirst=True)  # before `-m` selects
def pytest_collection_modifyitems(config, items):
    """The fast profile (`python -m pytest -m fast -n auto`): every test, doctests included,
    that is marked neither `slow`, `subprocess` nor `r`."""
    for item in items:
        if not any(item.get_closest_marker(name) for name in _NOT_FAST):
            item.add_marker(pytest.mark.fast)
