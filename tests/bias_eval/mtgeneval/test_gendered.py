"""The shared helpers of the gendered test sets (:mod:`bias_eval.mtgeneval.gendered`)."""

from __future__ import annotations

import pytest

from bias_eval.mtgeneval.gendered import annotated_keywords, normalise_gender
from mtkit.errors import UserError


def test_small_helpers() -> None:
    assert annotated_keywords("<F>Die Lehrerin</F> sagte, <F>sie</F> komme.") == ["Die Lehrerin", "sie"]
    assert normalise_gender(" F ", "x") == "feminine"
    assert normalise_gender("Masculine", "x") == "masculine"
    with pytest.raises(UserError, match="gender 'n' is not feminine/masculine"):
        normalise_gender("n", "file.csv: line 3")
