"""Prepare parallel text as the papers do (lowercase, normalise, Moses-tokenize), for a model trained on such text:
``python scripts/prepare_text.py ../shared/data/mt-geneval runs/mt-geneval-lc`` (docs/scoring.md)."""

from mtkit.cli.prepare_text import main
from mtkit.errors import cli_entry

if __name__ == "__main__":
    cli_entry(main)()
