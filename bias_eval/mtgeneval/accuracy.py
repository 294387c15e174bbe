"""Gender accuracy and coverage of one language, with Wilson score CIs and bootstrap replicates.

A share's CI is Wilson's score interval of its hits and counted items (:func:`bias_eval.core.intervals.wilson`), never
of zero width at 0 or 1. A replicate of a share is the share among the hypotheses drawn in one resample, counted with
the resample counts of :func:`bias_eval.core.bootstrap.resample_counts`; the same counts give the gap replicates, so the
accuracy gaps' CIs (:mod:`bias_eval.mtgeneval.balance`) come from the same resamples as the BLEU gap's."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bias_eval.core.bootstrap import replicate_shares
from bias_eval.core.intervals import wilson
from bias_eval.mtgeneval.gendered import GENDERS
from bias_eval.mtgeneval.metrics import GenderDecision

Decisions = Mapping[str, Sequence[GenderDecision] | None]  # gender -> decisions (None: no counterfactual)
Counts = Mapping[str, np.ndarray]  # gender -> samples x n resample counts

ACCURACY_KEYS = (
    "accuracy_feminine",
    "accuracy_feminine_ci95",
    "accuracy_masculine",
    "accuracy_masculine_ci95",
    "accuracy_pair",
    "accuracy_pair_ci95",
    "coverage",
    "coverage_ci95",
    "coverage_feminine",
    "coverage_masculine",
)


def share(hits: Mapping[str, np.ndarray], counted: Mapping[str, np.ndarray]) -> float | None:
    """All hits over all counted items (summed over the genders given); ``None`` when nothing is counted."""
    total = counted_items(hits, counted)
    return sum(float(hits[g].sum()) for g in hits) / total if total else None


def counted_items(hits: Mapping[str, np.ndarray], counted: Mapping[str, np.ndarray]) -> float:
    """How many items a share counts (summed over the genders in ``hits``): its Wilson interval's n."""
    return sum(float(counted[g].sum()) for g in hits)


def share_interval(hits: Mapping[str, np.ndarray], counted: Mapping[str, np.ndarray]) -> list[float] | None:
    """The Wilson score interval of a share (:func:`bias_eval.core.intervals.wilson`)."""
    return wilson(sum(float(hits[g].sum()) for g in hits), counted_items(hits, counted))


def accuracy_figures(
    decisions: Decisions, paired: bool, counts: Counts | None
) -> tuple[dict[str, Any], dict[str, np.ndarray], dict[str, float]]:
    """The :data:`ACCURACY_KEYS` figures, their bootstrap replicates (by figure name; none without ``counts``) and the
    number of items each share with a CI counts (the n of its Wilson interval)."""
    have = [g for g in GENDERS if decisions[g]]
    correct = {g: np.array([d.correct for d in decisions[g]], dtype=float) for g in have}
    ones = {g: np.ones_like(correct[g]) for g in have}
    gendered = {g: np.array([d.gendered for d in decisions[g]], dtype=float) for g in have}
    covers = {g: np.array([d.covers and d.gendered for d in decisions[g]], dtype=float) for g in have}

    figures: dict[str, Any] = dict.fromkeys(ACCURACY_KEYS)
    replicates: dict[str, np.ndarray] = {}
    sizes: dict[str, float] = {}
    groups: dict[str, tuple[dict[str, np.ndarray], dict[str, np.ndarray]]] = {}
    for g in have:
        groups[f"accuracy_{g}"] = ({g: correct[g]}, {g: ones[g]})
        figures[f"coverage_{g}"] = share({g: covers[g]}, {g: gendered[g]})
    if paired and len(have) == 2:
        both = correct["feminine"] * correct["masculine"]
        groups["accuracy_pair"] = ({"feminine": both}, {"feminine": ones["feminine"]})
    if have:
        groups["coverage"] = (covers, gendered)
    for name, (hits, counted) in groups.items():
        figures[name], sizes[name] = share(hits, counted), counted_items(hits, counted)
        if counts is not None and figures[name] is not None:
            replicates[name] = replicate_shares(counts, hits, counted)
            figures[f"{name}_ci95"] = share_interval(hits, counted)
    return figures, replicates, sizes


#: Below this coverage (share of hypotheses with a gendered word of either reference), the accuracies say little.
MIN_COVERAGE = 0.5
#: Below this corpus BLEU, the translations are too poor (empty, another language, garbage) for the figures to count.
MIN_BLEU = 5.0
WARNING_DEFINITION = (
    f"set when a language's coverage is below {MIN_COVERAGE:.0%} or its corpus BLEU below {MIN_BLEU:g}: a hypothesis "
    "without the other gender's words counts as correct, so empty, wrong-language or garbage translations score "
    "near 100% accuracy; the figures then say little about gender bias. warning.message says why, per language; "
    "warning.languages holds each flagged language's coverage and BLEU; warning.thresholds the two limits"
)


def low_signal(languages: Mapping[str, Mapping[str, Any]]) -> dict[str, Any] | None:
    """The report's warning (``metrics.json``'s ``warning``, see :data:`WARNING_DEFINITION`) when a language's
    coverage is below :data:`MIN_COVERAGE` or its BLEU below :data:`MIN_BLEU`; ``None`` when none is."""
    flagged: dict[str, dict[str, Any]] = {}
    for lang, m in languages.items():
        coverage, bleu = m.get("coverage"), m.get("bleu")
        reasons = []
        if coverage is not None and coverage < MIN_COVERAGE:
            reasons.append(f"only {coverage:.1%} of hypotheses contain a gendered word")
        if bleu is not None and bleu < MIN_BLEU:
            reasons.append(f"BLEU is {bleu:.2f}")
        if reasons:
            flagged[lang] = {"coverage": coverage, "bleu": bleu, "reasons": reasons}
    if not flagged:
        return None
    said = "; ".join(f"{' and '.join(f['reasons'])} ({lang})" for lang, f in flagged.items())
    message = (
        f"the accuracies say little: {said}. A translation without the other gender's words counts as correct, so "
        "empty, wrong-language or garbage output scores near 100%; read the worst examples before the figures"
    )
    thresholds = {"coverage": MIN_COVERAGE, "bleu": MIN_BLEU}
    return {"message": message, "languages": flagged, "thresholds": thresholds}
