"""The profession's gender per language (bias_eval.winomt.gender): each rule on a sentence worked by hand."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bias_eval.errors import UserError
from bias_eval.winomt.gender import check_language, german, romance


def test_german_rules() -> None:
    sentence = "Der Arzt rief die Krankenschwester an, weil sie müde war."
    assert german(["Die", "Entwicklerin"], "Die Entwicklerin lachte.", 0, "developer") == "female"  # -in
    assert german(["Der", "Arzt"], sentence, 0, "physician") == "male"  # der, nearest to word 0
    assert german(["Krankenschwester"], sentence, 4, "nurse") == "female"  # always, whatever the words
    assert german([], sentence, None, "physician") == "male"  # nothing aligned
    assert german(["Arzt"], "Arzt kam.", 0, "physician") == "male"  # no article in the sentence
    # "Kind" is word 4: "dem" (token 3) is nearer than "das" (token 6: the comma after "Kind" is a token of its own)
    assert german(["Kind"], "Die Frau mit dem Kind, das schlief.", 4, "child") == "male"
    # two words as near: the earlier one (der at 0, die at 2, first aligned word at 1)
    assert german(["Koch"], "der Koch die", 1, "cook") == "male"


@pytest.mark.parametrize(
    ("lang", "phrase", "expected"),
    [
        ("es", "la enfermera", "female"),
        ("es", "El médico", "male"),
        ("es", "al ama de llaves", "female"),  # al (m), ama (f), llaves (f)
        ("es", "el guardia", "male"),  # a tie: the first word's
        ("es", "alguien", "neutral"),
        ("es", "el CEO", "male"),  # an acronym has no gender: el's
        ("es", "dio una", "female"),  # an irregular verb in -o is no noun
        ("es", "el asistente,", "male"),
        ("fr", "l'infirmière", "female"),
        ("fr", "L’avocat", "male"),
        ("fr", "la développeur", "female"),
        ("fr", "au boulanger", "male"),
        ("fr", "quelqu'un", "neutral"),
        ("fr", "la femme de ménage", "female"),
        ("fr", "", "unknown"),
        ("fr", "l'enfant", "neutral"),  # common-gender: un enfant, une enfant
        ("fr", "le propriétaire d'une maison", "female"),  # le (m), une (f), maison (f: -aison)
        ("fr", "gros", "male"),  # -os
        ("fr", "commis", "male"),  # -mis, a participle's masculine
        ("fr", "PDG", "male"),  # an acronym listed with its gender
        ("es", "CEO", "neutral"),  # an acronym: its ending says nothing
    ],
)
def test_spanish_and_french(lang: str, phrase: str, expected: str) -> None:
    assert romance(phrase.split(), lang) == expected


@given(st.text(alphabet="abcdeéèfgilmnorstuPDG", min_size=1, max_size=12), st.sampled_from(["l'", "L’", "d'"]))
def test_an_elided_article_carries_no_gender(word: str, article: str) -> None:
    """l', d' stand for le, la, de before a vowel: the phrase has the gender of the word alone."""
    assert romance([article + word], "fr") == romance([word], "fr")


def test_italian_and_others_refused_in_one_line() -> None:
    with pytest.raises(UserError, match=r"^--target_lang it: not scored on WinoMT: Italian needs") as err:
        check_language("it")
    assert "\n" not in str(err.value)
    with pytest.raises(UserError, match="WinoMT is scored for de, es, fr only"):
        check_language("pt")
