#!/usr/bin/python3
"""posenc benchmark and accuracy history: every run kept in SQLite, compared with statistics, change points found.

    scripts/history.py import RESULTS_DIR [--mode M]      # a results directory (out/results/, out/bench/<run>/)
    scripts/history.py import-git [--repo .]              # every committed version of reports/latest/data/
    scripts/history.py list
    scripts/history.py compare previous latest [--format md|json] [--threshold 0.05] [--alpha 0.01]
    scripts/history.py changes [--filter REGEX]
    scripts/history.py page --out DIR

Default database: out/history.sqlite (or $POSENC_HISTORY_DB, or --db PATH). Needs numpy and scipy (Debian's
python3-numpy / python3-scipy, hence /usr/bin/python3). See reports/posenc_history/README.md."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "reports"))

try:
    from posenc_history.cli import main  # noqa: E402
except ImportError as e:  # numpy / scipy missing under this interpreter
    print(f"history.py: error: cannot import the history package under {sys.executable} ({e}); run it with "
          "/usr/bin/python3 (Debian's python3-numpy and python3-scipy)", file=sys.stderr)
    sys.exit(2)

if __name__ == "__main__":
    sys.exit(main())
