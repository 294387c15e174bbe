"""Russian and Ukrainian (bias_eval.winomt.slavic): the benchmark has no Google outputs of them in the toolkit's data,
so the reader is tested on constructed phrases, against pymorphy3's analyses read directly."""

from __future__ import annotations

from collections import Counter

import pymorphy3
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bias_eval.winomt.slavic import slavic, word_gender

ANALYZERS = {lang: pymorphy3.MorphAnalyzer(lang=lang) for lang in ("ru", "uk")}


@pytest.mark.parametrize(
    ("lang", "phrase", "expected"),
    [
        ("ru", "Врач", "male"),
        ("ru", "медсестра", "female"),
        ("ru", "Учительница,", "female"),  # the comma is a word of no gender; the noun's is the first
        ("ru", "сирота", "neutral"),  # common gender (ms-f): no gender
        ("ru", "", "unknown"),
        ("ru", "новый врач", "male"),
        ("uk", "лікар", "male"),
        ("uk", "медсестра", "female"),
        ("uk", "вчителька", "female"),
    ],
)
def test_constructed_phrases(lang: str, phrase: str, expected: str) -> None:
    assert slavic(phrase.split(), lang) == expected


def _by_hand(word: str, lang: str) -> str:
    """The benchmark's rule written out: every analysis's gender; feminine if any, else the most frequent; none:
    neutral."""
    found = [p.tag.gender for p in ANALYZERS[lang].parse(word) if p.tag.gender]
    names = {"masc": "male", "femn": "female", "neut": "neutral"}
    if not found:
        return "neutral"
    return "female" if "femn" in found else names[Counter(found).most_common(1)[0][0]]


WORDS = {
    "ru": "врач медсестра учитель учительница программист уборщица повар бухгалтер секретарь сирота стекло".split(),
    "uk": "лікар медсестра вчитель вчителька програміст прибиральниця кухар бухгалтер секретарка дитя".split(),
}


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["ru", "uk"]).flatmap(lambda lang: st.tuples(st.just(lang), st.lists(st.sampled_from(
    WORDS[lang]), min_size=1, max_size=4))))  # fmt: skip
def test_a_phrase_has_its_words_most_common_gender(case) -> None:
    """For any phrase of dictionary words: each word's gender by all of its analyses, the phrase's the most common
    one (the first word's on a tie)."""
    lang, words = case
    genders = [_by_hand(w, lang) for w in words]
    assert [word_gender(w, lang) for w in words] == genders
    assert slavic(words, lang) == Counter(genders).most_common(1)[0][0]
