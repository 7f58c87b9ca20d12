#!/usr/bin/python3
"""ctest's reports.history: the history's tests (unittest discovery in this directory), or exit 77 (ctest's
SKIP_RETURN_CODE) with one line saying why when numpy or scipy cannot be imported by this interpreter."""
import sys
import unittest
from pathlib import Path

SKIP = 77

try:
    import numpy  # noqa: F401
    import scipy.stats  # noqa: F401
except ImportError as e:
    print(f"reports.history: skipped: {sys.executable} cannot import numpy/scipy ({e}); install Debian's "
          "python3-numpy and python3-scipy (scripts/install-deps.sh does)")
    sys.exit(SKIP)

here = Path(__file__).resolve().parent
suite = unittest.defaultTestLoader.discover(str(here), top_level_dir=str(here))
result = unittest.TextTestRunner(verbosity=1).run(suite)
sys.exit(0 if result.wasSuccessful() else 1)
