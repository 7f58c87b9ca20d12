#!/usr/bin/env python3
"""ctest reports.figures (label mainjob): runs posenc_figures (argv[1]) into a fresh directory and renders every
scheme's figures from that output with test_scheme_figures.py."""
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent

with tempfile.TemporaryDirectory(prefix="posenc-figures.") as out:
    proc = subprocess.run([sys.argv[1], "--out", out])
    if proc.returncode != 0:
        sys.exit(f"posenc_figures exited {proc.returncode}")
    os.environ["POSENC_FIGURES_DIR"] = out
    sys.path.insert(0, str(HERE))
    suite = unittest.defaultTestLoader.loadTestsFromName("test_scheme_figures")
    sys.exit(0 if unittest.TextTestRunner(verbosity=1).run(suite).wasSuccessful() else 1)
