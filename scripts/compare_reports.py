"""Compare two gender-bias reports: ``python scripts/compare_reports.py BEFORE AFTER [--out DIR]``."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # runnable from a checkout, not installed

from bias_eval.compare import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
