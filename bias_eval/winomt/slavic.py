"""The gender of a translated profession in Russian and Ukrainian, read as the benchmark's scorer reads it with
pymorphy: the aligned words split by pymorphy's tokenizer, each word's gender from all of pymorphy3's analyses of it
(feminine if any analysis is; else the gender most analyses give; none, ``neutral``, when no analysis gives one, as
for punctuation or a common-gender noun such as ``сирота``), and the phrase's the gender most of its words have (the
first one's on a tie); ``unknown`` when nothing was aligned. The dictionaries are the OpenCorpora (Russian) and
LanguageTool/VESUM (Ukrainian) ones of the ``pymorphy3-dicts-ru`` and ``pymorphy3-dicts-uk`` packages."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import cache

from bias_eval.winomt.gender import FEMALE, MALE, NEUTRAL, UNKNOWN

#: pymorphy's genders as WinoMT's predictions
GENDERS = {"masc": MALE, "femn": FEMALE, "neut": NEUTRAL}
#: the languages pymorphy3 reads
SLAVIC = ("ru", "uk")


@cache
def _analyzer(lang: str):
    import pymorphy3  # a dictionary of its own per language: loaded once, for the languages scored

    return pymorphy3.MorphAnalyzer(lang=lang)


@cache
def word_gender(word: str, lang: str) -> str:
    """The gender of one word by all of its analyses (see the module's docstring)."""
    found = [GENDERS[p.tag.gender] for p in _analyzer(lang).parse(word) if p.tag.gender is not None]
    if not found:
        return NEUTRAL
    return FEMALE if FEMALE in found else Counter(found).most_common(1)[0][0]


def slavic(phrase: Sequence[str], lang: str) -> str:
    """The gender of the aligned words ``phrase`` of a ``lang`` (``ru``, ``uk``) translation."""
    from pymorphy3.tokenizers import simple_word_tokenize

    words = simple_word_tokenize(" ".join(phrase))
    if not words:
        return UNKNOWN
    return Counter(word_gender(w, lang) for w in words).most_common(1)[0][0]
