"""Spanish, French and Italian (bias_eval.winomt.romance): each rule on a phrase worked by hand."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bias_eval.winomt.romance import romance


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
        ("it", "l'infermiera", "female"),  # elided article: the noun's ending
        ("it", "Il medico", "male"),
        ("it", "lo scrittore", "male"),  # -ore
        ("it", "la direttrice", "female"),  # -trice
        ("it", "l'insegnante", "neutral"),  # common-gender -ante after an elided article: no gender
        ("it", "all'autista", "neutral"),  # -ista: common-gender
        ("it", "all'ispettore", "neutral"),  # after all' no gender, as the benchmark's tagger read it
        ("it", "al barista", "neutral"),  # al: no gender, as the tagger read it
        ("it", "al pedone", "male"),  # the tagger read it as feminine; the rules keep grammar (-one: masculine)
        ("it", "allo specialista", "male"),  # allo: masculine
        ("it", "lo studente", "male"),
        ("it", "dell'autista", "male"),  # dell': masculine, as the benchmark's Italian scorer reads it
        ("it", "un'avvocata", "female"),  # un' is feminine
        ("it", "qualcuno", "male"),  # a masculine pronoun
        ("it", "al parrucchiere", "male"),  # al (none), -iere (m)
        ("it", "la guardia", "female"),
        ("it", "il CEO", "male"),  # an acronym has no gender: il's
        ("it", "", "unknown"),
    ],
)
def test_spanish_and_french(lang: str, phrase: str, expected: str) -> None:
    assert romance(phrase.split(), lang) == expected


@given(st.text(alphabet="abcdeéèfgilmnorstuPDG", min_size=1, max_size=12), st.sampled_from(["l'", "L’", "d'"]))
def test_an_elided_article_carries_no_gender(word: str, article: str) -> None:
    """l', d' stand for le, la, de before a vowel: the phrase has the gender of the word alone."""
    assert romance([article + word], "fr") == romance([word], "fr")
