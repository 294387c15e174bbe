"""Hebrew and Arabic (bias_eval.winomt.semitic), read by letters as the benchmark reads them: each rule on a phrase
worked by hand."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bias_eval.winomt.semitic import semitic


@pytest.mark.parametrize(
    ("lang", "phrase", "expected"),
    [
        ("he", "האחות", "female"),  # ends in tav
        ("he", "הרופאה,", "female"),  # ends in he once the comma is a token of its own
        ("he", "הרופא", "male"),
        ("he", "את הרופא", "male"),  # the object marker, which ends in tav, is left out
        ("he", "את", "male"),  # nothing left: masculine, the default
        ("he", "", "unknown"),
        ("ar", "الممرضة", "female"),  # tāʾ marbūṭa
        ("ar", "الطبيب", "male"),
        ("ar", "ﺍﻟﻤﻤﺮﺿﺔ", "female"),  # the presentation form of tāʾ marbūṭa
        ("ar", "  ", "unknown"),
    ],
)
def test_phrases_by_hand(lang: str, phrase: str, expected: str) -> None:
    assert semitic(phrase.split(), lang) == expected


@given(st.lists(st.text(alphabet="אבגדהוזחטיכלמנסעפצקרשת", min_size=1, max_size=6), min_size=1, max_size=4))
def test_hebrew_is_feminine_exactly_when_a_word_ends_in_tav_or_he(words: list[str]) -> None:
    kept = [w for w in words if w != "את"]
    assert semitic(words, "he") == ("female" if any(w[-1] in "תה" for w in kept) else "male")
