#!/usr/bin/env python3
"""posenc report generator (Python 3 standard library + gnuplot).

    python3 reports/generate.py --results DIR --out reports/latest [--repo .]

See reports/README.md for the input schemas and what each page contains."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from posenc_report.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
