"""The target languages WinoMT is scored for, the benchmark's eight, and how each reads the translated profession's
gender: German by the benchmark's own rules (:mod:`~bias_eval.winomt.gender`), Spanish, French and Italian by word
rules (:mod:`~bias_eval.winomt.romance`), Russian and Ukrainian by pymorphy3 (:mod:`~bias_eval.winomt.slavic`),
Hebrew and Arabic by letters, as the benchmark does (:mod:`~bias_eval.winomt.semitic`)."""

from __future__ import annotations

from collections.abc import Sequence

from bias_eval.core.errors import UserError
from bias_eval.core.langtag import LanguageTag
from bias_eval.winomt.gender import german
from bias_eval.winomt.romance import romance
from bias_eval.winomt.semitic import SEMITIC, semitic
from bias_eval.winomt.slavic import SLAVIC, slavic

#: the target languages scored: the benchmark's eight
LANGUAGES = ("de", "es", "fr", "it", "ru", "uk", "he", "ar")


def check_language(lang: str, flag: str = "--target_lang") -> str:
    """``lang`` as the language code WinoMT is scored for (``DE`` and ``deu`` are ``de``); another language is
    refused in one line."""
    code = LanguageTag.parse(lang, flag).base
    if code not in LANGUAGES:
        raise UserError(f"{flag} {lang}: WinoMT is scored for {', '.join(LANGUAGES)} only")
    return code


def predict(lang: str, phrase: Sequence[str], sentence: str, first: int | None, profession: str) -> str:
    """The predicted gender of the profession in a ``lang`` translation (``phrase``: its aligned words, ``first``:
    the position of the first of them among the sentence's words)."""
    if lang == "de":
        return german(phrase, sentence, first, profession)
    if lang in SEMITIC:
        return semitic(phrase, lang)
    return slavic(phrase, lang) if lang in SLAVIC else romance(phrase, lang)
