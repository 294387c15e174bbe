"""Compare two gender-bias reports: ``python scripts/compare_reports.py BEFORE AFTER [--out DIR]``."""

from mtkit.cli.compare_reports import main

if __name__ == "__main__":
    main()
