"""``scripts/train.py``: train a translation model from a recipe and flags (see :mod:`mtkit.config`)."""

from __future__ import annotations

from mtkit.config import parse_config
from mtkit.errors import cli_entry
from mtkit.pipeline import run


@cli_entry
def main(argv: list[str] | None = None) -> None:
    run(parse_config(argv))
