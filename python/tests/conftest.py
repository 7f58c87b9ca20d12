"""python/tests: the posenc module's suite (ctest python.module runs it with PYTHONPATH=build/python and POSENC_CLI
set to the program, which the bitwise comparisons run)."""
import os
import shutil

import pytest


@pytest.fixture(scope="session")
def posenc_cli():
    path = os.environ.get("POSENC_CLI") or shutil.which("posenc")
    if not path:
        pytest.fail("POSENC_CLI is not set (ctest python.module sets it to the built program)")
    return path
