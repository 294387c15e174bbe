"""The verdict's pairs told apart by their gendered words (:func:`mtkit.data.pairs.gendered_words`): *seen*, every
one of them in the tuning pairs' references, or *unseen*, at least one that the tuning pairs lack (a profession never
tuned on); and the verdict's paired comparisons of each part (:func:`part_comparisons`), from the reports'
per-sentence details (``bias_eval``'s own paired tests, on the part's pairs)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bias_eval.compare.mtgeneval_tests import Sentences, language_tests, macro_tests, sentences
from bias_eval.core.bootstrap import resampling
from bias_eval.core.decision import Rule, decide
from bias_eval.core.intervals import mean_interval
from bias_eval.core.report import Report
from bias_eval.mtgeneval.balance import gap_interval
from bias_eval.mtgeneval.gendered import GENDERS
from mtkit.data.pairs import TextWords, gendered_words
from mtkit.evaluation.outcome import COMPARISONS, overall, scope

#: the two parts of the verdict's pairs
PARTS = ("seen", "unseen")


def tuned_words(tuning: Sequence[Mapping[str, Any]]) -> TextWords:
    """Every word of the tuning pairs' references, as the accuracy reads words (spans of the text in a language
    written without spaces)."""
    return TextWords.of(tuning)


def unseen_units(verdict: Sequence[Mapping[str, Any]], tuned: TextWords) -> set[str]:
    """The verdict's units (``pair_id``) with a row whose gendered words are not all in ``tuned``."""
    return {r["pair_id"] for r in verdict if tuned.lacks(gendered_words(r))}


def _subset(s: Sentences, lines: Sequence[int]) -> Sentences:
    """The sentences of the pairs on ``lines``."""
    return Sentences(
        s.paired, {g: {k: [v[i] for i in lines] for k, v in cols.items()} for g, cols in s.columns.items()}
    )


#: the gaps of a part given their own intervals, and the per-sentence decision each is of
GAP_DECISIONS = {"accuracy_gap": "correct", "strict_accuracy_gap": "strict_correct"}


def _figures(rows: Sequence[Mapping[str, Any]], lang: str, when: str) -> dict[str, Any]:
    """One model's figures of a language (``before`` or ``after``) as the paired tests' rows give them."""
    return {r["figure"]: r.get(when) for r in rows if r["lang"] == lang}


def gap_intervals(s: Sentences) -> dict[str, list[float] | None]:
    """One model's accuracy gaps' 95% intervals on these sentences, as its report makes them
    (:func:`bias_eval.mtgeneval.balance.gap_interval`), so that over-correction is tested on a part too."""
    return {f"{gap}_ci95": gap_interval(*(s.columns[g][key] for g in GENDERS), s.paired)
            for gap, key in GAP_DECISIONS.items()}  # fmt: skip


def _macro_intervals(figures: Mapping[str, Mapping[str, Any]]) -> dict[str, list[float] | None]:
    """The macro gaps' intervals: the MOVER interval of the mean of the languages' (as a report's macro)."""
    out: dict[str, list[float] | None] = {}
    for gap in GAP_DECISIONS:
        values, cis = [f.get(gap) for f in figures.values()], [f.get(f"{gap}_ci95") for f in figures.values()]
        ok = all(v is not None for v in values) and all(c is not None for c in cis)
        out[f"{gap}_ci95"] = mean_interval(values, cis) if ok else None  # type: ignore[arg-type]
    return out


def compare_sentences(
    pairs: Mapping[str, Sequence[Sentences]], samples: int, seed: int, measure: str, rule: Rule = Rule()
) -> dict[str, Any]:
    """Two models' sentences by language (``before``, ``after``) compared by ``bias_eval``'s paired tests, decided by
    ``rule``, as :func:`mtkit.evaluation.outcome.compare_models` compares two reports (the macro rows over several
    languages; each model's gaps with their own intervals; ``measure``'s gap judged)."""
    rows: list[dict[str, Any]] = []
    kept: dict[str, dict] = {lang: {} for lang in pairs}
    for lang, (before, after) in pairs.items():
        rows += language_tests(lang, before, after, samples=samples, seed=seed, keep=kept[lang])
    rows += macro_tests(kept) if len(pairs) > 1 else []
    decide(rows, rule)
    figures = {when: {lang: _figures(rows, lang, when) | gap_intervals(pairs[lang][i]) for lang in pairs}
               for i, when in enumerate(("before", "after"))}  # fmt: skip
    scopes = {x: scope(x, figures["before"][x], figures["after"][x], rows, measure) for x in pairs}
    macro = None
    if len(pairs) > 1:
        both = [_figures(rows, "macro", when) | _macro_intervals(figures[when]) for when in ("before", "after")]
        macro = scope("macro", *both, rows, measure)
    return {"languages": scopes, "overall": overall(scopes, macro), "paired_refused": None}


def part_comparisons(
    reports: Mapping[str, Report],
    order: Mapping[str, Sequence[str]],
    unseen: set[str],
    metrics: Mapping[str, Any],
    measure: str,
    rule: Rule = Rule(),
) -> dict[str, Any]:
    """Per part (:data:`PARTS`): its number of pairs and, for every comparison of two models in ``reports`` (by model
    name), the part's figures, paired tests and outcome (:func:`compare_sentences`); ``None`` for a
    part without pairs. ``order`` lists each language's verdict units line by line (the reports' order), ``metrics``
    is one report's ``metrics.json`` (its bootstrap settings are used), ``measure`` the accuracy whose gap is judged,
    ``rule`` how a change is decided."""
    config = metrics.get("config") or {}
    samples, seed = resampling(config)
    read = {name: {lang: sentences(r, lang, name) for lang in order} for name, r in reports.items()}
    out: dict[str, Any] = {}
    for part in PARTS:
        lines = {lang: [i for i, u in enumerate(units) if (u in unseen) == (part == "unseen")] for lang, units in
                 order.items() if any((u in unseen) == (part == "unseen") for u in units)}  # fmt: skip
        if not lines:
            out[part] = None
            continue
        out[part] = {"pairs": sum(len(v) for v in lines.values())}
        for name, (b, a) in COMPARISONS.items():
            if b not in reports or a not in reports:
                out[part][name] = None
                continue
            pairs = {lang: [_subset(read[n][lang], idx) for n in (b, a)] for lang, idx in lines.items()}
            out[part][name] = compare_sentences(pairs, samples, seed, measure, rule)
    return out
