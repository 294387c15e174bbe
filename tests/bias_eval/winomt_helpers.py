"""Two systems' WinoMT translations for tests: Google's published outputs, and a degraded copy in which the lines of
female gold gender are made masculine (German die -> der, a noun's -in dropped; Spanish la -> el, -ora -> -or), on a
stratified subset."""

from __future__ import annotations

import re

from testing_utils import WINOMT

from bias_eval.winomt.data import Translations, WinoMT, load_winomt, pair_translations, subset

GOOGLE = WINOMT / "translations" / "google"
#: per language, feminine articles -> masculine ones, and the feminine ending of a capitalised or any noun dropped
_MASCULINE = {
    "de": ({"die": "der", "Die": "Der", "eine": "ein", "Eine": "Ein"}, r"\b([A-ZÄÖÜ]\w+?)in\b"),
    "es": ({"la": "el", "La": "El", "una": "un", "Una": "Un"}, r"\b(\w+?or)a\b"),
}


def degrade(line: str, lang: str = "de") -> str:
    """``line`` made masculine: feminine articles swapped, a feminine noun ending dropped (German -in, Spanish
    -ora)."""
    articles, ending = _MASCULINE[lang]
    line = re.sub(r"\b(" + "|".join(articles) + r")\b", lambda m: articles[m.group(1)], line)
    return re.sub(ending, r"\1", line)


def google_lines(lang: str) -> dict[str, str]:
    """Google's translation of each source sentence into ``lang``."""
    pairs = (line.split(" ||| ") for line in (GOOGLE / f"en-{lang}.txt").read_text(encoding="utf-8").splitlines())
    return {source.strip(): target.strip() for source, target in pairs}


def systems(size: int, seed: int = 3, lang: str = "de") -> tuple[WinoMT, Translations, Translations, list[str]]:
    """A stratified subset of ``size`` sentences, Google's translations of it into ``lang``, the degraded copy (its
    female-gold lines made masculine), and the degraded copy's lines (one per sentence, in order)."""
    data = subset(load_winomt(WINOMT), size, seed)
    google = google_lines(lang)
    sources = [item.sentence for item in data.items]
    good = [google[s] for s in sources]
    bad = [degrade(t, lang) if item.gold == "female" else t for item, t in zip(data.items, good)]
    return (data, pair_translations(data, sources, good, "google"), pair_translations(data, sources, bad, "degraded"),
            bad)  # fmt: skip
