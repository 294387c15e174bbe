"""A quick look at a gendered test set: the balanced share training's evaluation decodes
(:func:`mtkit.evaluation.scores.balanced_subset`: languages in turn, whole feminine/masculine pairs), taken of a bias
report's data (``bias_report.py --max_samples``)."""

from __future__ import annotations

from dataclasses import replace

from datasets import Dataset

from bias_eval.mtgeneval.gendered import GENDERS, GenderedData, LanguageData, Side
from mtkit.errors import UserError
from mtkit.evaluation.scores import balanced_subset


def _sentences(side: Side, keep: list[int]) -> Side:
    def pick(values: list | None) -> list | None:
        return None if values is None else [values[i] for i in keep]

    return replace(
        side,
        sources=pick(side.sources),
        references=pick(side.references),
        counterfactuals=pick(side.counterfactuals),
        keywords=pick(side.keywords),
    )


def gendered_subset(data: GenderedData, n: int | None, flag: str = "--max_samples") -> GenderedData:
    """About ``n`` sentences of ``data`` (a pair more where the last one is whole), each language in turn: whole
    pairs of paired data, feminine and masculine sentences alternately otherwise; each language keeps its first
    ones, in dataset order (its contextual subset as many lines). ``None`` or ``n`` at least the whole: ``data``."""
    total = sum(len(ld.side(g).sources) for ld in data.languages.values() for g in GENDERS)
    if n is None or n >= total:
        return data
    if n < 2 * len(data.languages):
        needed = 2 * len(data.languages)
        raise UserError(f"{flag} {n}: fewer than one feminine and one masculine sentence per language "
                        f"({len(data.languages)} languages need at least {needed})")  # fmt: skip
    rows: dict[str, list] = {"lang": [], "pair_id": [], "gender": [], "index": []}
    for lang, ld in sorted(data.languages.items()):
        longest = max(len(ld.side(g).sources) for g in GENDERS)
        for i in range(longest):  # unpaired: f0, m0, f1, m1 ... so that a few rows hold both genders
            for gender in GENDERS:
                if i < len(ld.side(gender).sources):
                    rows["lang"].append(lang)
                    rows["pair_id"].append(f"{lang}:{i}" if ld.paired else "")
                    rows["gender"].append(gender)
                    rows["index"].append(i)
    chosen = balanced_subset(Dataset.from_dict(rows), n)
    kept: dict[str, dict[str, list[int]]] = {lang: {g: [] for g in GENDERS} for lang in data.languages}
    for lang, gender, index in zip(chosen["lang"], chosen["gender"], chosen["index"]):
        kept[lang][gender].append(index)
    languages = {}
    for lang, ld in data.languages.items():
        side = {g: _sentences(ld.side(g), kept[lang][g]) for g in GENDERS}
        context = ld.context
        if context is not None:
            m = len(kept[lang]["feminine"])
            context = replace(context, sources=context.sources[:m], original=context.original[:m],
                              flipped=context.flipped[:m])  # fmt: skip
        languages[lang] = LanguageData(lang, side["feminine"], side["masculine"], ld.paired, context)
    return replace(data, languages=languages)
