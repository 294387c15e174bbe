"""The target languages WinoMT is scored for, how each reads the translated profession's gender, and why the others
of the benchmark's eight are refused: German by the benchmark's own rules (:mod:`~bias_eval.winomt.gender`), Spanish,
French and Italian by word rules (:mod:`~bias_eval.winomt.romance`), Russian and Ukrainian by pymorphy3
(:mod:`~bias_eval.winomt.slavic`)."""

from __future__ import annotations

from collections.abc import Sequence

from bias_eval.errors import UserError
from bias_eval.langtag import LanguageTag
from bias_eval.winomt.gender import german
from bias_eval.winomt.romance import romance
from bias_eval.winomt.slavic import SLAVIC, slavic

#: the target languages scored, and why the benchmark's other two are not
LANGUAGES = ("de", "es", "fr", "it", "ru", "uk")
REFUSED = {
    "he": "the benchmark reads Hebrew by a word's last letter, and no Hebrew analyser on PyPI works offline "
    "(hebpipe and stanza fetch their models at run time)",
    "ar": "the benchmark reads Arabic by a word's last letter, and no Arabic analyser on PyPI works offline "
    "(camel-tools and stanza fetch their data at run time)",
}


def check_language(lang: str, flag: str = "--target_lang") -> str:
    """``lang`` as the language code WinoMT is scored for (``DE`` and ``deu`` are ``de``); a language without gender
    rules is refused in one line."""
    code = LanguageTag.parse(lang, flag).base
    if code in REFUSED:
        raise UserError(f"{flag} {lang}: not scored on WinoMT: {REFUSED[code]}")
    if code not in LANGUAGES:
        raise UserError(f"{flag} {lang}: WinoMT is scored for {', '.join(LANGUAGES)} only")
    return code


def predict(lang: str, phrase: Sequence[str], sentence: str, first: int | None, profession: str) -> str:
    """The predicted gender of the profession in a ``lang`` translation (``phrase``: its aligned words, ``first``:
    the position of the first of them among the sentence's words)."""
    if lang == "de":
        return german(phrase, sentence, first, profession)
    return slavic(phrase, lang) if lang in SLAVIC else romance(phrase, lang)
