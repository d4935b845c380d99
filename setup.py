"""The build: the package, plus its ahead-of-time compiled kernels when numba can make them.

``pysdcmicro/_aot.py`` says what is compiled and why. If compiling fails (no C compiler,
a numba without ``numba.pycc``), the package installs without the extension and numba
compiles the kernels at first use instead. ``PYSDCMICRO_NO_AOT=1`` skips it;
``PYSDCMICRO_AOT_CPU=host`` tunes the machine code for the building machine (the default is
the platform's generic CPU, so that the wheel runs on every machine of the platform).
"""

import importlib.util
import os

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))


class BuildWithKernels(build_py):
    def run(self):
        super().run()
        if os.environ.get("PYSDCMICRO_NO_AOT"):
            return
        try:
            spec = importlib.util.spec_from_file_location("_pysdcmicro_aot_build",
                                                          os.path.join(HERE, "pysdcmicro", "_aot.py"))
            aot = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(aot)
            path = aot.build(self.build_lib, os.path.join(HERE, "pysdcmicro"),
                             cpu=os.environ.get("PYSDCMICRO_AOT_CPU", ""))
            self.announce(f"compiled kernels: {path}", level=2)
        except Exception as exc:  # the package works without them (numba compiles at first use)
            self.warn(f"ahead-of-time kernels not built ({type(exc).__name__}: {exc}); "
                      "numba will compile them at first use")


class PlatformDistribution(Distribution):
    """The wheel holds machine code: tag it for the platform."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithKernels}, distclass=PlatformDistribution)
