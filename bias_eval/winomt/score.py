"""WinoMT's method, line by line: every source aligned with its translation (fast_align's model trained on the lines
being scored, source to translation, as the benchmark runs ``fast_align -d -o -v`` on its translation file), the
profession's translated words found through the alignment (the profession's word and the article before it), and
their gender predicted by the language's rules (:mod:`bias_eval.winomt.gender`)."""

from __future__ import annotations

from dataclasses import dataclass

from bias_eval.winomt.align import align
from bias_eval.winomt.data import Item, Translations
from bias_eval.winomt.languages import check_language, predict

#: a source word before the profession that is taken with it, as the benchmark does
ARTICLES = ("the", "a", "an")


@dataclass(frozen=True)
class Scored:
    """One translation judged: its item, the translated profession (aligned words and the position of the first
    of them) and the gender predicted."""

    item: Item
    translation: str
    profession_words: tuple[str, ...]
    first: int | None
    predicted: str

    @property
    def correct(self) -> bool:
        """Whether the predicted gender is the gold one."""
        return self.predicted == self.item.gold


def source_positions(item: Item) -> list[int]:
    """The source words of the profession: its word, and the article before it (first) when there is one."""
    words = item.sentence.split(" ")
    before = [item.index - 1] if item.index > 0 and words[item.index - 1].lower() in ARTICLES else []
    return [*before, item.index]


def score_translations(translations: Translations, lang: str) -> list[Scored]:
    """Judge every translation of ``translations`` into ``lang`` (one of :data:`~bias_eval.winomt.gender.LANGUAGES`)."""
    lang = check_language(lang)
    targets = [t.split() for t in translations.targets]
    links = align([(s.split(), t) for s, t in zip(translations.sources, targets)])
    scored = []
    for item, translation, words, found in zip(translations.items, translations.targets, targets, links):
        by_source: dict[int, list[int]] = {}
        for i, j in found:
            by_source.setdefault(i, []).append(j)
        positions = [j for i in source_positions(item) for j in by_source.get(i, [])]
        first = min(positions) if positions else None
        phrase = tuple(words[j] for j in positions)
        gender = predict(lang, phrase, translation, first, item.profession)
        scored.append(Scored(item, translation, phrase, first, gender))
    return scored
