"""Compute every figure of the report for each language, and their macro average."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bias_eval.core.bootstrap import gap_replicates, language_rng, percentile_interval, resample_counts
from bias_eval.core.intervals import mean_interval, mean_wilson
from bias_eval.mtgeneval.accuracy import ACCURACY_KEYS, accuracy_figures
from bias_eval.mtgeneval.balance import (
    BALANCE_KEYS,
    PREDICTION_COUNTS,
    balance_figures,
    predicted_gender,
    strict_correct,
)
from bias_eval.mtgeneval.gendered import GENDERS, SEP, GenderedData, LanguageData
from bias_eval.mtgeneval.metrics import (
    GenderDecision,
    bleu_from_stats,
    bleu_stats,
    chrf_from_stats,
    chrf_stats,
    fair_bleu,
    gender_decision,
    notebook_sentence_bleu,
    sentence_bleu_from_stats,
    whitespace_bleu_stats,
)

Hypotheses = Mapping[str, Mapping[str, Sequence[str]]]  # lang -> "feminine"/"masculine"/"context" -> lines
Decisions = dict[str, list[GenderDecision] | None]  # gender -> accuracy decisions (None: no counterfactual)

METRIC_KEYS = (
    "n",
    "n_feminine",
    "n_masculine",
    "bleu",
    "bleu_feminine",
    "bleu_masculine",
    "bleu_gap",
    "bleu_gap_ci95",
    "chrf",
    "chrf_feminine",
    "chrf_masculine",
    "chrf_gap",
    "chrf_gap_ci95",
    *ACCURACY_KEYS,
    "fair_bleu",
    *BALANCE_KEYS,
)
CONTEXT_KEYS = ("n_context", "accuracy_context")
COUNT_KEYS = frozenset({"n", "n_feminine", "n_masculine", "n_context", *PREDICTION_COUNTS})


@dataclass
class LanguageResult:
    """All figures of one language, its per-sentence details and its bootstrap replicates."""

    lang: str
    paired: bool
    metrics: dict[str, Any]
    details: list[dict[str, Any]]
    context_details: list[dict[str, Any]] | None = None
    worst: list[int] = field(default_factory=list)  # detail indices, largest |feminine - masculine| first
    replicates: dict[str, np.ndarray] = field(default_factory=dict)
    sizes: dict[str, float] = field(default_factory=dict)  # share -> the items it counts (its Wilson interval's n)


def _mean(values: Sequence[bool]) -> float:
    return float(np.mean(values)) if len(values) else float("nan")


def context_hypothesis(line: str) -> str:
    """The part of a contextual hypothesis after its last ``<sep>`` (the whole line without one)."""
    return line.rsplit(SEP, 1)[-1].strip() if SEP in line else line


def score_language(
    data: LanguageData,
    hyps: Mapping[str, Sequence[str]],
    *,
    samples: int,
    seed: int,
    examples: int = 10,
) -> LanguageResult:
    """Score one language's hypotheses (already checked to match the data line for line)."""
    sides = {g: data.side(g) for g in GENDERS}
    hyp = {g: list(hyps[g]) for g in GENDERS}
    bstats = {g: bleu_stats(hyp[g], sides[g].references, data.lang) for g in GENDERS}
    cstats = {g: chrf_stats(hyp[g], sides[g].references) for g in GENDERS}
    wstats = {g: whitespace_bleu_stats(hyp[g], sides[g].references) for g in GENDERS}
    sent = {g: [sentence_bleu_from_stats(row) for row in bstats[g]] for g in GENDERS}
    nb = {g: [notebook_sentence_bleu(row) for row in wstats[g]] for g in GENDERS}

    bleu = {g: bleu_from_stats(bstats[g].sum(axis=0)) for g in GENDERS}
    chrf = {g: chrf_from_stats(cstats[g].sum(axis=0)) for g in GENDERS}
    decisions: Decisions = {
        g: [gender_decision(*hrc, data.lang) for hrc in zip(hyp[g], sides[g].references, sides[g].counterfactuals)]
        if sides[g].counterfactuals is not None
        else None
        for g in GENDERS
    }

    replicates: dict[str, np.ndarray] = {}
    ci: dict[str, list[float] | None] = {"bleu": None, "chrf": None}
    counts = None
    if samples > 0:
        rng = language_rng(seed, data.lang)
        counts_f = resample_counts(rng, len(hyp["feminine"]), samples)
        counts_m = counts_f if data.paired else resample_counts(rng, len(hyp["masculine"]), samples)
        counts = {"feminine": counts_f, "masculine": counts_m}
        for name, stats, scorer in (("bleu", bstats, bleu_from_stats), ("chrf", cstats, chrf_from_stats)):
            reps = gap_replicates(stats["feminine"], stats["masculine"], scorer, counts_f, counts_m)
            replicates[f"{name}_gap"] = reps
            ci[name] = percentile_interval(reps)
    accuracy, accuracy_replicates, sizes = accuracy_figures(decisions, data.paired, counts)
    replicates.update(accuracy_replicates)
    balance, balance_replicates, strict_sizes = balance_figures(
        decisions, counts, accuracy, accuracy_replicates, data.paired
    )
    replicates.update(balance_replicates)
    sizes.update(strict_sizes)

    metrics: dict[str, Any] = {
        "n": len(hyp["feminine"]) + len(hyp["masculine"]),
        "n_feminine": len(hyp["feminine"]),
        "n_masculine": len(hyp["masculine"]),
        "bleu": bleu_from_stats(bstats["feminine"].sum(axis=0) + bstats["masculine"].sum(axis=0)),
        "bleu_feminine": bleu["feminine"],
        "bleu_masculine": bleu["masculine"],
        "bleu_gap": bleu["masculine"] - bleu["feminine"],
        "bleu_gap_ci95": ci["bleu"],
        "chrf": chrf_from_stats(cstats["feminine"].sum(axis=0) + cstats["masculine"].sum(axis=0)),
        "chrf_feminine": chrf["feminine"],
        "chrf_masculine": chrf["masculine"],
        "chrf_gap": chrf["masculine"] - chrf["feminine"],
        "chrf_gap_ci95": ci["chrf"],
        **accuracy,
        "fair_bleu": fair_bleu(nb["feminine"], nb["masculine"]),
        **balance,
    }

    details = (
        _paired_details(data, hyp, sent, nb, decisions)
        if data.paired
        else _unpaired_details(data, hyp, sent, nb, decisions)
    )
    _attach_stats(details, data.paired, bstats, cstats)
    worst: list[int] = []
    if data.paired:
        order = sorted(range(len(details)), key=lambda i: (-abs(details[i]["sentence_bleu_diff"]), i))
        worst = order[:examples]

    result = LanguageResult(data.lang, data.paired, metrics, details, worst=worst, replicates=replicates, sizes=sizes)
    if data.context is not None:
        _score_context(result, data, list(hyps["context"]))
    return result


def _attach_stats(
    details: list[dict[str, Any]], paired: bool, bstats: dict[str, np.ndarray], cstats: dict[str, np.ndarray]
) -> None:
    """Each sentence's sacreBLEU BLEU and chrF statistics in its detail row (``bleu_stats``, ``chrf_stats``; suffixed
    by gender when paired), so that a comparison of two reports resamples them without tokenising again."""
    for row in details:
        for g in GENDERS if paired else (row["gender"],):
            suffix = f"_{g}" if paired else ""
            row[f"bleu_stats{suffix}"] = [int(x) for x in bstats[g][row["index"]]]
            row[f"chrf_stats{suffix}"] = [int(x) for x in cstats[g][row["index"]]]


def _decision_fields(decision: GenderDecision | None, gender: str, suffix: str) -> dict[str, Any]:
    """Accuracy decision, the counterfactual-only and correct-only words used, coverage, strict accuracy and the
    gender the hypothesis says (None: neutral)."""
    keys = ("correct", "counterfactual_words", "matching_words", "covers", "strict_correct", "predicted_gender")
    if decision is None:
        return {f"{key}{suffix}": None for key in keys}
    return {
        f"correct{suffix}": decision.correct,
        f"counterfactual_words{suffix}": decision.counterfactual_words,
        f"matching_words{suffix}": decision.matching_words,
        f"covers{suffix}": decision.covers if decision.gendered else None,
        f"strict_correct{suffix}": strict_correct(decision),
        f"predicted_gender{suffix}": predicted_gender(decision, gender),
    }


def _sentence_fields(
    data: LanguageData,
    g: str,
    i: int,
    hyp: dict[str, list[str]],
    sent: dict[str, list[float]],
    nb: dict[str, list[float]],
    decisions: Decisions,
    suffix: str,
) -> dict[str, Any]:
    """Source, hypothesis, reference, scores and accuracy decision of sentence ``i`` of gender ``g``."""
    side = data.side(g)
    fields: dict[str, Any] = {
        f"source{suffix}": side.sources[i],
        f"hypothesis{suffix}": hyp[g][i],
        f"reference{suffix}": side.references[i],
    }
    if side.keywords is not None:
        fields[f"gendered_words{suffix}"] = side.keywords[i]
    fields[f"sentence_bleu{suffix}"] = sent[g][i]
    fields[f"notebook_bleu{suffix}"] = nb[g][i]
    fields.update(_decision_fields(decisions[g][i] if decisions[g] else None, g, suffix))
    return fields


def _paired_details(
    data: LanguageData,
    hyp: dict[str, list[str]],
    sent: dict[str, list[float]],
    nb: dict[str, list[float]],
    decisions: Decisions,
) -> list[dict[str, Any]]:
    rows = []
    for i in range(len(hyp["feminine"])):
        row: dict[str, Any] = {"index": i}
        for g in GENDERS:
            row.update(_sentence_fields(data, g, i, hyp, sent, nb, decisions, suffix=f"_{g}"))
        row["sentence_bleu_diff"] = row["sentence_bleu_masculine"] - row["sentence_bleu_feminine"]
        f, m = row["correct_feminine"], row["correct_masculine"]
        row["correct_pair"] = None if f is None or m is None else bool(f and m)
        rows.append(row)
    return rows


def _unpaired_details(
    data: LanguageData,
    hyp: dict[str, list[str]],
    sent: dict[str, list[float]],
    nb: dict[str, list[float]],
    decisions: Decisions,
) -> list[dict[str, Any]]:
    rows = []
    for g in GENDERS:
        for i in range(len(hyp[g])):
            rows.append({"index": i, "gender": g, **_sentence_fields(data, g, i, hyp, sent, nb, decisions, suffix="")})
    return rows


def _score_context(result: LanguageResult, data: LanguageData, lines: list[str]) -> None:
    ctx = data.context
    assert ctx is not None
    rows = []
    for i, (src, line, orig, flip) in enumerate(zip(ctx.sources, lines, ctx.original, ctx.flipped)):
        scored = context_hypothesis(line)
        decision = gender_decision(scored, orig, flip, data.lang)
        rows.append(
            {
                "index": i,
                "source": src,
                "hypothesis": line,
                "scored_hypothesis": scored,
                "reference_original": orig,
                "reference_flipped": flip,
                "correct": decision.correct,
                "counterfactual_words": decision.counterfactual_words,
            }
        )
    result.context_details = rows
    result.metrics["n_context"] = len(rows)
    result.metrics["accuracy_context"] = _mean([r["correct"] for r in rows])


def _macro_value(values: list[Any]) -> Any:
    if any(v is None for v in values):
        return None
    return float(np.mean(values))


#: the figures whose macro interval is the MOVER interval of the mean of the languages' own (not a bootstrap's)
MOVER_MEANS = ("accuracy_gap", "strict_accuracy_gap", "mf_ratio")


def _mean_of_intervals(values: Sequence[Any], intervals: Sequence[Any]) -> list[float | None] | None:
    """:func:`bias_eval.core.intervals.mean_interval` of the languages' figures; a ``None`` bound (infinite) stays
    one."""
    if any(v is None for v in values) or any(ci is None for ci in intervals):
        return None
    bounds = [[math.inf if b is None else b for b in ci] for ci in intervals]
    low, high = mean_interval(values, bounds)
    return [low, None if math.isinf(high) or math.isnan(high) else high]


def macro_average(results: Sequence[LanguageResult]) -> dict[str, Any]:
    """Unweighted mean over languages of every figure; ``n`` is summed.

    A share's CI (accuracies, coverage) is Wilson's interval of the mean (:func:`bias_eval.core.intervals.mean_wilson`).
    An accuracy gap's and the M:F ratio's CI is the MOVER interval of the mean of the languages' own intervals
    (:func:`bias_eval.core.intervals.mean_interval`). Every other CI (BLEU and chrF gaps) is the percentile interval of
    the per-replicate mean: each language is resampled on
    its own (languages are independent test sets), and replicate b of a macro figure is the mean of the languages'
    replicate b. Averaging the languages' bounds would not give a valid interval.
    """
    macro: dict[str, Any] = {}
    keys = list(METRIC_KEYS)
    if all("accuracy_context" in r.metrics for r in results):
        keys += list(CONTEXT_KEYS)
    for key in keys:
        values = [r.metrics[key] for r in results]
        if key in COUNT_KEYS:
            macro[key] = None if any(v is None for v in values) else int(sum(values))
        elif key.endswith("_ci95"):
            name = key.removesuffix("_ci95")
            if all(r.metrics[key] is not None and name in r.sizes for r in results):
                macro[key] = mean_wilson([r.metrics[name] for r in results], [r.sizes[name] for r in results])
            elif name in MOVER_MEANS:
                macro[key] = _mean_of_intervals([r.metrics[name] for r in results], [r.metrics[key] for r in results])
            elif all(name in r.replicates for r in results):
                joint = np.mean([r.replicates[name] for r in results], axis=0)
                macro[key] = percentile_interval(joint)
            else:
                macro[key] = None
        else:
            macro[key] = _macro_value(values)
    return macro


def score_dataset(
    data: GenderedData, hypotheses: Hypotheses, *, samples: int, seed: int, examples: int = 10
) -> tuple[list[LanguageResult], dict[str, Any]]:
    """Score every language of ``data`` and return the per-language results and their macro average."""
    results = [
        score_language(data.languages[lang], hypotheses[lang], samples=samples, seed=seed, examples=examples)
        for lang in sorted(data.languages)
    ]
    return results, macro_average(results)
