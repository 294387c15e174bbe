"""The verdict's pairs told apart by their gendered words (:func:`mtkit.data.pairs.gendered_words`): *seen*, every
one of them in the tuning pairs' references, or *unseen*, at least one that the tuning pairs lack (a profession never
tuned on); and the verdict's paired comparisons of each part (:func:`part_comparisons`), from the reports'
per-sentence details (``bias_eval``'s own paired tests, on the part's pairs)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bias_eval.compare_paired import (
    DEFAULT_SAMPLES,
    DEFAULT_SEED,
    Sentences,
    language_tests,
    macro_tests,
    read_sentences,
)
from bias_eval.metrics import accuracy_words
from mtkit.data.pairs import gendered_words
from mtkit.evaluation.outcome import COMPARISONS, scope

#: the two parts of the verdict's pairs
PARTS = ("seen", "unseen")


def tuned_words(tuning: Sequence[Mapping[str, Any]]) -> set[str]:
    """Every word of the tuning pairs' references, as the accuracy reads words."""
    return set().union(*(accuracy_words(r["target"]) for r in tuning)) if tuning else set()


def unseen_units(verdict: Sequence[Mapping[str, Any]], tuned: set[str]) -> set[str]:
    """The verdict's units (``pair_id``) with a row whose gendered words are not all in ``tuned``."""
    return {r["pair_id"] for r in verdict if gendered_words(r) - tuned}


def _subset(s: Sentences, lines: Sequence[int]) -> Sentences:
    """The sentences of the pairs on ``lines``."""
    return Sentences(
        s.paired, {g: {k: [v[i] for i in lines] for k, v in cols.items()} for g, cols in s.columns.items()}
    )


def _figures(rows: Sequence[Mapping[str, Any]], lang: str, when: str) -> dict[str, Any]:
    """One model's figures of a language (``before`` or ``after``) as the paired tests' rows give them."""
    return {r["figure"]: r.get(when) for r in rows if r["lang"] == lang}


def compare_sentences(
    pairs: Mapping[str, Sequence[Sentences]], samples: int, seed: int, measure: str
) -> dict[str, Any]:
    """Two models' sentences by language (``before``, ``after``) compared by ``bias_eval``'s paired tests, as
    :func:`mtkit.evaluation.outcome.compare_models` compares two reports (the macro rows over several languages;
    ``measure``'s gap judged)."""
    rows: list[dict[str, Any]] = []
    kept: dict[str, dict] = {lang: {} for lang in pairs}
    for lang, (before, after) in pairs.items():
        rows += language_tests(lang, before, after, samples=samples, seed=seed, keep=kept[lang])
    rows += macro_tests(kept) if len(pairs) > 1 else []
    names = [*pairs, *(["macro"] if len(pairs) > 1 else [])]
    scopes = {x: scope(x, _figures(rows, x, "before"), _figures(rows, x, "after"), rows, measure) for x in names}
    return {"languages": {x: scopes[x] for x in pairs}, "overall": scopes[names[-1]], "paired_refused": None}


def part_comparisons(
    folders: Mapping[str, Path],
    order: Mapping[str, Sequence[str]],
    unseen: set[str],
    metrics: Mapping[str, Any],
    measure: str,
) -> dict[str, Any]:
    """Per part (:data:`PARTS`): its number of pairs and, for every comparison of two models in ``folders`` (report
    folders by model name), the part's figures, paired tests and outcome (:func:`compare_sentences`); ``None`` for a
    part without pairs. ``order`` lists each language's verdict units line by line (the reports' order), ``metrics``
    is one report's ``metrics.json`` (its bootstrap settings are used), ``measure`` the accuracy whose gap is judged."""
    config = metrics.get("config") or {}
    samples = config.get("bootstrap_samples") or DEFAULT_SAMPLES
    seed = config.get("seed") if isinstance(config.get("seed"), int) else DEFAULT_SEED
    read = {name: {lang: read_sentences(Path(f), lang, name) for lang in order} for name, f in folders.items()}
    out: dict[str, Any] = {}
    for part in PARTS:
        lines = {lang: [i for i, u in enumerate(units) if (u in unseen) == (part == "unseen")] for lang, units in
                 order.items() if any((u in unseen) == (part == "unseen") for u in units)}  # fmt: skip
        if not lines:
            out[part] = None
            continue
        out[part] = {"pairs": sum(len(v) for v in lines.values())}
        for name, (b, a) in COMPARISONS.items():
            if b not in folders or a not in folders:
                out[part][name] = None
                continue
            pairs = {lang: [_subset(read[n][lang], idx) for n in (b, a)] for lang, idx in lines.items()}
            out[part][name] = compare_sentences(pairs, samples, seed, measure)
    return out
