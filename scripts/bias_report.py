"""Gender-bias report of a translation model: ``python scripts/bias_report.py --help``."""

import sys

from mtkit.cli.bias_report import main

if __name__ == "__main__":
    sys.exit(main())
