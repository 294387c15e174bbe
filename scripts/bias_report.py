"""Gender-bias report of a translation model: ``python scripts/bias_report.py --help``."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # runnable from a checkout, not installed

from bias_eval.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
