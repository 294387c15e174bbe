"""Generate the built-in English→Spanish demo corpus that ``make demo`` trains on:
``python scripts/demo_corpus.py runs/demo_corpus [--seed 0] [--n-train 40000]`` (also ``--n-valid``, ``--n-test``,
``--n-gender-pairs``; ``--feminine-scale 0.02``: feminine forms rare in the training split, as
``make demo-mitigate``'s corpus has them)."""

from mtkit.cli.demo_corpus import main
from mtkit.errors import cli_entry

if __name__ == "__main__":
    cli_entry(main)()
