"""The gender of the translated profession, per target language, by rules.

German follows WinoMT's own German scorer: a profession WinoMT counts as female in every translation (``nurse``), a
word ending in ``-in`` among the aligned words (``Entwicklerin``), else the gendered article or pronoun of the
sentence nearest to the first aligned word. Spanish and French read the aligned words alone, as the benchmark's
scorer for them does with spaCy's morphology: each word's gender from a short list of articles, determiners and
nouns whose ending misleads (French ``enfant`` is common-gender, ``maison`` feminine), else from its ending
(``-a``/``-o``, ``-euse``/``-eur``; an acronym has none), and the gender most of the words have (the first one's on a
tie). A prediction is ``male``, ``female``, ``neutral`` (the words carry no gender) or ``unknown`` (no word was
aligned to the profession), as in the benchmark's published figures.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence

from bias_eval.errors import UserError

MALE, FEMALE, NEUTRAL, UNKNOWN = "male", "female", "neutral", "unknown"
PREDICTIONS = (MALE, FEMALE, NEUTRAL, UNKNOWN)

#: the words of spaCy-like tokens: a word (with inner hyphens, apostrophes or dots) or one punctuation mark
TOKEN = re.compile(r"\w+(?:[-'’.]\w+)*|[^\w\s]")


def _words(gender: str, text: str) -> dict[str, str]:
    return dict.fromkeys(text.split(), gender)


# German: the articles and pronouns of WinoMT's German scorer, and the gender it reads from each
GERMAN_WORDS = {
    **_words(MALE, "der ein dem einen des er seiner ihn seinen ihm ihren seinem ihrem sein"),
    **_words(FEMALE, "die eine einer sie seine ihrer"),
    **_words(NEUTRAL, "ihr ihre das jemanden"),
}
#: professions whose German translation WinoMT's scorer counts as female whatever it is
GERMAN_ALWAYS_FEMALE = frozenset({"nurse", "the nurse"})


def german(phrase: Sequence[str], sentence: str, first: int | None, profession: str) -> str:
    """The gender of a German translation's profession: its aligned words ``phrase``, the sentence, the position of
    the first aligned word among the sentence's whitespace-separated words (``None``: nothing aligned)."""
    if profession.lower() in GERMAN_ALWAYS_FEMALE:
        return FEMALE
    if first is None:
        return MALE
    if any(token.endswith("in") for token in TOKEN.findall(" ".join(phrase))):
        return FEMALE
    tokens = TOKEN.findall(sentence)
    found = [(position, GERMAN_WORDS[t.lower()]) for position, t in enumerate(tokens) if t.lower() in GERMAN_WORDS]
    if not found:
        return MALE
    return min(found, key=lambda hit: abs(hit[0] - first))[1]  # the earlier of two as near


# Spanish and French: a word's gender
_ES = {
    **_words(MALE, "el al del un los unos este ese aquel estos esos otro ningún algún nuestro vuestro mismo"),
    **_words(FEMALE, "la las una unas esta esa aquella estas esas otra ninguna alguna nuestra vuestra misma"),
    # nouns in -e, whose ending says nothing
    **_words(FEMALE, "llave calle noche gente clase parte muerte suerte fuente mente leche carne sangre nieve torre"),
    **_words(FEMALE, "nave base frase tarde madre"),
    **_words(MALE, "jefe sastre padre hombre coche viaje traje nombre informe"),
    # function words and verbs (irregular past tenses in -o) that an ending would take for a noun
    **_words("", "a de para con en se que por su sus y o dio vio tuvo fue hizo dijo puso vino quiso pudo supo"),
    **_words("", "estuvo trajo"),
}
_ES_ENDINGS = {
    **_words("", "ista nte ía aba ó ió"),  # common-gender nouns (-ista, -nte) and verb endings
    **_words(FEMALE, "a as ora oras ión dad triz"),
    **_words(MALE, "o os or ores ón és ero án ín"),
}
_FR = {
    **_words(MALE, "le un du au ce cet celui"),
    **_words(FEMALE, "la une cette celle femme personne"),
    **_words("", "quelqu'un à de a en pour que les des aux parce vers est son sa ses nos vos"),
    **_words("", "enfant"),  # a common-gender noun in -ant: un enfant, une enfant
    **_words(MALE, "pdg"),  # président-directeur général, masculine without an article
}
_FR_ENDINGS = {
    **_words(FEMALE, "euse rice ière ienne enne ère ée ante ente elle esse ine ive aise oise ure ate otte ette ue"),
    **_words(FEMALE, "aison sion tion xion"),  # maison, profession, direction: feminine, unlike other -on
    **_words(MALE, "eur teur ier ien er é ant ent if ais ois in ard ain on ef ic eux at ot os mis"),
}
_ELIDED = ("l'", "d'", "s'", "qu'", "j'", "n'", "c'")


def _by_ending(word: str, endings: dict[str, str]) -> str:
    """The gender of the longest ending of ``word`` in ``endings`` (``""``: none); words under 3 letters and acronyms
    (``CEO``) have none."""
    if len(word) < 3 or word.isupper():
        return ""
    for size in range(min(len(word), 5), 0, -1):
        if word[-size:] in endings:
            return endings[word[-size:]]
    return ""


def _spanish_word(word: str) -> str:
    lower = word.lower()
    plural = lower[:-1] if lower.endswith("es") else ""  # llaves: llave
    found = _ES.get(lower, _ES.get(plural))
    return found if found is not None else _by_ending(word if word.isupper() else lower, _ES_ENDINGS)


def _french_word(word: str) -> str:
    word = word.replace("’", "'")
    if word.lower() not in _FR and word.lower().startswith(_ELIDED):
        word = word.split("'", 1)[1]
    return _FR.get(word.lower(), _by_ending(word if word.isupper() else word.lower(), _FR_ENDINGS))


_WORD_GENDER: dict[str, Callable[[str], str]] = {"es": _spanish_word, "fr": _french_word}
_STRIP = ".,;:!?¡¿\"'()«»"


def romance(phrase: Sequence[str], lang: str) -> str:
    """The gender most words of ``phrase`` (the aligned words) have, the first one's on a tie."""
    if not phrase:
        return UNKNOWN
    words = [w.strip(_STRIP) for w in phrase]
    genders = [_WORD_GENDER[lang](w) for w in words if w]
    counted = Counter(g for g in genders if g)
    return counted.most_common(1)[0][0] if counted else NEUTRAL


#: the target languages scored, and why the others are not
LANGUAGES = ("de", "es", "fr")
REFUSED = {
    "it": "Italian needs a morphological analyser that agrees with WinoMT's published Italian figures; no rule "
    "set or analyser installable from PyPI does yet",
}


def check_language(lang: str, flag: str = "--target_lang") -> None:
    """Refuse, in one line, a language this module has no gender rules for."""
    if lang in REFUSED:
        raise UserError(f"{flag} {lang}: not scored on WinoMT: {REFUSED[lang]}")
    if lang not in LANGUAGES:
        raise UserError(f"{flag} {lang}: WinoMT is scored for {', '.join(LANGUAGES)} only")


def predict(lang: str, phrase: Sequence[str], sentence: str, first: int | None, profession: str) -> str:
    """The predicted gender of the profession in a ``lang`` translation (``phrase``: its aligned words)."""
    if lang == "de":
        return german(phrase, sentence, first, profession)
    check_language(lang)
    return romance(phrase, lang)
