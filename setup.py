"""Package list for setuptools (everything else is in pyproject.toml).

The bridges' source lives in the top-level ``bridges/`` folder and is installed as the
subpackage ``pysdcmicro.bridges``; pyproject.toml alone cannot both discover the
``pysdcmicro*`` packages and add a mapped one, hence this file.
"""

from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["pysdcmicro", "pysdcmicro.*"]) + ["pysdcmicro.bridges"],
    package_dir={"pysdcmicro.bridges": "bridges"},
    # the console script's entry (pyproject.toml [project.scripts]): imports nothing heavy, so
    # Ctrl-C during the package's import is one line, not a traceback
    py_modules=["_pysdcmicro_start"],
)
