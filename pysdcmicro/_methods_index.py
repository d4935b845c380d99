"""Import every module that registers a method or an improvement step.

One line per module: the registry imports this file the first time it is read.
"""

from .constructive import _mdav  # noqa: F401  mdav
from .optimization import _column_generation  # noqa: F401  column-generation
from .optimization import _decomposition  # noqa: F401  decomposition
from .optimization import _auto  # noqa: F401  auto
from .constructive import _vmdav  # noqa: F401  vmdav
from .constructive import _mu_approx  # noqa: F401  mu-approx
from .univariate import _mhm  # noqa: F401  mhm, tsp-mhm, compress-tsp-mhm
from .local_search import _icsm, _two_swap  # noqa: F401  icsm (method and improvement), two-swap
