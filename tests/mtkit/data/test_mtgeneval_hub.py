"""The hub copy of MT-GenEval (:mod:`mtkit.data.mtgeneval_hub`): conversion of its records."""

from __future__ import annotations

import pytest

from mtkit.data.mtgeneval_hub import language_from_hub_records
from mtkit.errors import UserError


def test_hub_records_conversion() -> None:
    rows = [
        {
            "orig_id": 0,
            "source_feminine": "She is a doctor.",
            "reference_feminine": "Sie ist Ärztin.",
            "source_masculine": "He is a doctor.",
            "reference_masculine": "Er ist Arzt.",
            "reference_feminine_annotated": "<F>Sie</F> ist <F>Ärztin</F>.",
            "reference_masculine_annotated": "<M>Er</M> ist <M>Arzt</M>.",
        }
    ]
    context = [
        {
            "context": "Ann works.",
            "source": "The doctor came.",
            "reference_original": "Die Ärztin kam.",
            "reference_flipped": "Der Arzt kam.",
        }
    ]
    ld = language_from_hub_records("de", rows, context, "hub")
    assert ld.feminine.counterfactuals == ["Er ist Arzt."]
    assert ld.masculine.keywords == [["Er", "Arzt"]]
    assert ld.context.sources == ["Ann works. <sep> The doctor came."]
    with pytest.raises(UserError, match="lack the column 'source_feminine'"):
        language_from_hub_records("de", [{"x": "y"}], None, "hub")
