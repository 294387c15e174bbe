"""Gender accuracy and coverage of one language, with bootstrap CIs from the resamples of the gap CIs.

A replicate of a share (accuracy, coverage) is the share among the hypotheses drawn in one resample, counted
with the resample counts of :func:`bias_eval.bootstrap.resample_counts`; the same counts give the gap
replicates, so every CI of a language comes from one set of resamples.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bias_eval.bootstrap import percentile_interval
from bias_eval.metrics import GenderDecision
from mtkit.data.gendered import GENDERS

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


def _share(hits: Mapping[str, np.ndarray], counted: Mapping[str, np.ndarray]) -> float | None:
    """All hits over all counted items (summed over the genders given); ``None`` when nothing is counted."""
    total = sum(float(counted[g].sum()) for g in hits)
    return sum(float(hits[g].sum()) for g in hits) / total if total else None


def _replicate_shares(counts: Counts, hits: Mapping[str, np.ndarray], counted: Mapping[str, np.ndarray]) -> np.ndarray:
    """Per resample: hits over counted items, summed over the genders in ``hits`` (NaN where none is counted)."""
    numerator = sum(counts[g] @ hits[g] for g in hits)
    denominator = sum(counts[g] @ counted[g] for g in hits)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(numerator, dtype=float) / np.asarray(denominator, dtype=float)


def accuracy_figures(
    decisions: Decisions, paired: bool, counts: Counts | None
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The :data:`ACCURACY_KEYS` figures and their bootstrap replicates (by figure name; none without ``counts``)."""
    have = [g for g in GENDERS if decisions[g]]
    correct = {g: np.array([d.correct for d in decisions[g]], dtype=float) for g in have}
    ones = {g: np.ones_like(correct[g]) for g in have}
    gendered = {g: np.array([d.gendered for d in decisions[g]], dtype=float) for g in have}
    covers = {g: np.array([d.covers and d.gendered for d in decisions[g]], dtype=float) for g in have}

    figures: dict[str, Any] = dict.fromkeys(ACCURACY_KEYS)
    replicates: dict[str, np.ndarray] = {}
    groups: dict[str, tuple[dict[str, np.ndarray], dict[str, np.ndarray]]] = {}
    for g in have:
        groups[f"accuracy_{g}"] = ({g: correct[g]}, {g: ones[g]})
        figures[f"coverage_{g}"] = _share({g: covers[g]}, {g: gendered[g]})
    if paired and len(have) == 2:
        both = correct["feminine"] * correct["masculine"]
        groups["accuracy_pair"] = ({"feminine": both}, {"feminine": ones["feminine"]})
    if have:
        groups["coverage"] = (covers, gendered)
    for name, (hits, counted) in groups.items():
        figures[name] = _share(hits, counted)
        if counts is not None and figures[name] is not None:
            replicates[name] = _replicate_shares(counts, hits, counted)
            figures[f"{name}_ci95"] = percentile_interval(replicates[name])
    return figures, replicates


LOW_COVERAGE = 0.5  # below this share of hypotheses with a gendered word, the accuracies say little
LOW_BLEU = 5.0  # below this corpus BLEU the translations barely match the references
WARNING_DEFINITION = (
    f"a language is flagged at the top of the report (and on the console) when its coverage is below "
    f"{LOW_COVERAGE:.0%} (the accuracies say little: a hypothesis without a gendered word counts as correct, so "
    f"empty, garbled or wrong-language output scores near 100%) or its corpus BLEU is below {LOW_BLEU:g} (the "
    "translations barely match the references, so neither the gap nor the accuracies describe how the model "
    "handles gender)"
)


def percent(share: float) -> str:
    """A share as a percentage: whole percent, one decimal below 10% (so that 0.4% does not read 0%)."""
    return f"{share:.0%}" if share >= 0.1 or share == 0 else f"{share:.1%}"


def reliability_warnings(metrics: Mapping[str, Any]) -> list[str]:
    """One line per language of a report's ``metrics.json`` (``{"languages": {lang: figures}}``) whose figures
    say little: coverage below :data:`LOW_COVERAGE`, corpus BLEU below :data:`LOW_BLEU` (see
    :data:`WARNING_DEFINITION`). Empty when every language is fine."""
    lines = []
    for lang, figures in metrics["languages"].items():
        coverage, bleu = figures.get("coverage"), figures.get("bleu")
        if coverage is not None and coverage < LOW_COVERAGE:
            lines.append(
                f"{lang}: the accuracies say little: only {percent(coverage)} of hypotheses contain a gendered word "
                f"(below {LOW_COVERAGE:.0%})"
            )
        if bleu is not None and bleu < LOW_BLEU:
            lines.append(
                f"{lang}: corpus BLEU {bleu:.2f} (both genders) is below {LOW_BLEU:g}: the translations barely match "
                "the references, so the gap and the accuracies say little about gender"
            )
    return lines
