"""scripts/bias_study.py --help: its description is whole sentences, as a user reads them first."""

from __future__ import annotations

import re

from mtkit.cli.bias_study import build_parser


def test_help_begins_with_a_whole_sentence() -> None:
    parser = build_parser()
    description = parser.description
    assert description == description.strip() and description[0].isupper() and description.endswith(".")
    said = " ".join(parser.format_help().split())
    assert re.search(r"\] " + re.escape(" ".join(description.split())), said), said[:400]  # after the usage line
