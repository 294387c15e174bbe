"""Two systems' WinoMT translations for tests: Google's published German outputs, and a degraded copy in which the
lines of female gold gender are made masculine (die -> der, eine -> ein, a noun's -in dropped), on a stratified
subset."""

from __future__ import annotations

import re

from testing_utils import WINOMT

from bias_eval.winomt.data import Translations, WinoMT, load_winomt, pair_translations, subset

GOOGLE = WINOMT / "translations" / "google"
_MASCULINE = {"die": "der", "Die": "Der", "eine": "ein", "Eine": "Ein"}


def degrade(line: str) -> str:
    """``line`` made masculine: feminine articles swapped, the feminine suffix -in of capitalised nouns dropped."""
    line = re.sub(r"\b(" + "|".join(_MASCULINE) + r")\b", lambda m: _MASCULINE[m.group(1)], line)
    return re.sub(r"\b([A-ZÄÖÜ]\w+?)in\b", r"\1", line)


def google_lines(lang: str) -> dict[str, str]:
    """Google's translation of each source sentence into ``lang``."""
    pairs = (line.split(" ||| ") for line in (GOOGLE / f"en-{lang}.txt").read_text(encoding="utf-8").splitlines())
    return {source.strip(): target.strip() for source, target in pairs}


def systems(size: int, seed: int = 3) -> tuple[WinoMT, Translations, Translations, list[str]]:
    """A stratified subset of ``size`` sentences, Google's German translations of it, the degraded copy (its
    female-gold lines made masculine), and the degraded copy's lines (one per sentence, in order)."""
    data = subset(load_winomt(WINOMT), size, seed)
    google = google_lines("de")
    sources = [item.sentence for item in data.items]
    good = [google[s] for s in sources]
    bad = [degrade(t) if item.gold == "female" else t for item, t in zip(data.items, good)]
    return (data, pair_translations(data, sources, good, "google"), pair_translations(data, sources, bad, "degraded"),
            bad)  # fmt: skip
