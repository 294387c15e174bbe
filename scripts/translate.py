"""Translate with a trained model: ``python scripts/translate.py --model runs/demo/final --text "..."``,
``--input FILE --output FILE`` (batched), or no text for an interactive prompt (``q`` quits)."""

from mtkit.cli.translate import main
from mtkit.errors import cli_entry

if __name__ == "__main__":
    cli_entry(main)()
