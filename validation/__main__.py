"""``python -m validation``: see :mod:`validation.run`."""

import sys

from validation.run import main

sys.exit(main())
