"""How the two genders compare beyond MT-GenEval's accuracy: strict accuracy, the accuracy gaps, the
masculine:feminine prediction ratio, and over-correction (a gap whose interval lies below 0).

Every figure is computed from the accuracy decisions of :mod:`bias_eval.mtgeneval.metrics`, and its replicates from the
same resample counts as the language's other CIs (:func:`bias_eval.mtgeneval.accuracy.accuracy_figures`), so an accuracy
gap's interval is made exactly as the BLEU gap's."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bias_eval.core.bootstrap import replicate_shares
from bias_eval.core.intervals import difference_interval, paired_difference_interval, wilson
from bias_eval.mtgeneval.accuracy import Counts, Decisions, counted_items, share, share_interval
from bias_eval.mtgeneval.gendered import GENDERS
from bias_eval.mtgeneval.metrics import GenderDecision

OTHER = {"feminine": "masculine", "masculine": "feminine"}

BALANCE_KEYS = (
    "strict_accuracy_feminine",
    "strict_accuracy_feminine_ci95",
    "strict_accuracy_masculine",
    "strict_accuracy_masculine_ci95",
    "accuracy_gap",
    "accuracy_gap_ci95",
    "strict_accuracy_gap",
    "strict_accuracy_gap_ci95",
    "predicted_masculine",
    "predicted_feminine",
    "mf_ratio",
    "mf_ratio_ci95",
    "neutral_pairs",
)
PREDICTION_COUNTS = frozenset({"predicted_masculine", "predicted_feminine", "neutral_pairs"})
#: The gaps whose interval, entirely below 0, flags over-correction (gender choice, not general quality).
OVER_CORRECTION_GAPS = ("accuracy_gap", "strict_accuracy_gap")

STRICT_ACCURACY_DEFINITION = (
    "strict_accuracy_feminine (and _masculine): share of hypotheses that contain a word of their own gender (a word "
    "of the correct reference that the counterfactual lacks, after the accuracy normalisation) and none of the other "
    "gender's, over the sentences whose two references differ in some word. Unlike MT-GenEval's accuracy, a "
    "hypothesis with no gendered word at all (empty, another language, a rephrasing) is not counted correct. "
    "CIs: Wilson score intervals, as the other accuracies'"
)
NEUTRAL_PAIRS_DEFINITION = (
    "neutral_pairs: the sentence pairs whose feminine and masculine references have the same words (after the "
    "accuracy normalisation), so the target language does not mark the gender there (Spanish 'su'); for data not "
    "paired across genders, the sentences whose reference and counterfactual are alike. MT-GenEval's accuracy counts "
    "every hypothesis of such a pair correct, whatever it says; coverage and strict accuracy leave them out"
)
ACCURACY_GAP_DEFINITION = (
    "accuracy_gap = accuracy_masculine - accuracy_feminine and strict_accuracy_gap = strict_accuracy_masculine - "
    "strict_accuracy_feminine (shares, 0-1; > 0 favours masculine); their 95% CIs are Newcombe's hybrid score "
    "intervals of a difference of shares, for paired data over the pairs counted for both genders (see "
    "paired_difference in the Definitions), so they hold at every n and at 0% and 100%"
)
MF_RATIO_DEFINITION = (
    "masculine:feminine prediction ratio (M:F, as reported in WinoMT-based work): the number of hypotheses of both "
    "genders whose gendered words are masculine (a word only the masculine reference of their sentence has, and "
    "none only the feminine one has) over the number whose gendered words are feminine; hypotheses with no gendered "
    "word, or words of both genders, are neither (predicted_masculine and predicted_feminine give the two counts). "
    "On a test set with as many feminine as masculine sentences a model that follows the source scores 1; above 1 "
    "it says masculine more often. Infinite when no hypothesis is feminine and some are masculine: metrics.json holds "
    "null there (strict JSON has no infinity) and the pages show \u221e with the two counts; null and n/a when no "
    "hypothesis says either. mf_ratio_ci95: Wilson's 95% interval of the masculine share of the gendered "
    "predictions, M / (M + F), mapped to the ratio p / (1 - p) (an interval on the log-odds scale, so it holds at "
    "every count); an infinite upper bound (no feminine prediction) is null in metrics.json and \u221e on the pages; "
    "macro: the MOVER interval of the mean of the languages' ratios"
)
OVER_CORRECTION_DEFINITION = (
    "over_correction: set when the 95% CI of accuracy_gap or strict_accuracy_gap lies entirely below 0 in a language "
    "(or in the macro mean): feminine sentences get their gender right more often than masculine ones, beyond "
    "sampling noise. After a bias mitigation this is over-correction, not success; the flagged gaps and their CIs "
    "are listed per scope"
)


def strict_correct(decision: GenderDecision) -> bool | None:
    """A word of the right gender and none of the other; ``None`` for a gender-neutral pair (references alike)."""
    if not decision.gendered:
        return None
    return bool(decision.matching_words) and not decision.counterfactual_words


def predicted_gender(decision: GenderDecision, gender: str) -> str | None:
    """The gender a hypothesis of a ``gender`` sentence says: its own when only its gender's words occur, the other
    one when only the other's do, ``None`` when neither or both occur."""
    if decision.matching_words and not decision.counterfactual_words:
        return gender
    if decision.counterfactual_words and not decision.matching_words:
        return OTHER[gender]
    return None


def _gap(figures: Mapping[str, Any], name: str) -> float | None:
    m, f = figures.get(f"{name}_masculine"), figures.get(f"{name}_feminine")
    return None if m is None or f is None else m - f


def gap_interval(feminine: Sequence[bool | None], masculine: Sequence[bool | None], paired: bool) -> list[float] | None:
    """The 95% interval of ``share(masculine) - share(feminine)`` of per-sentence decisions (``None``: not counted):
    Newcombe's paired interval over the pairs when ``paired`` and both genders count the same pairs, else the same
    interval of two independent shares (:data:`bias_eval.core.intervals.PAIRED_DIFFERENCE_DEFINITION`)."""
    alike = len(feminine) == len(masculine) and all((f is None) == (m is None) for f, m in zip(feminine, masculine))
    if paired and alike:
        table = [(m, f) for f, m in zip(feminine, masculine) if f is not None]
        counts = [sum(1 for m, f in table if (m, f) == cell) for cell in ((1, 1), (1, 0), (0, 1), (0, 0))]
        return paired_difference_interval(*counts)
    f, m = ([x for x in side if x is not None] for side in (feminine, masculine))
    if not f or not m:
        return None
    share_f, share_m = sum(f) / len(f), sum(m) / len(m)
    low, high = difference_interval(share_f, wilson(sum(f), len(f)), share_m, wilson(sum(m), len(m)))  # type: ignore
    return [max(-1.0, low), min(1.0, high)]


def ratio_interval(masculine: int, feminine: int) -> list[float | None] | None:
    """The 95% interval of the M:F ratio: Wilson's interval ``[l, u]`` of the masculine share of the gendered
    predictions, ``M / (M + F)``, mapped to ``l / (1 - l)`` and ``u / (1 - u)`` (a log-odds interval); an infinite
    bound is ``None`` (strict JSON has no infinity); ``None`` when nothing was predicted."""
    share = wilson(masculine, masculine + feminine)
    if share is None:
        return None
    return [None if p >= 1 else p / (1 - p) for p in share]


def ratio_bounds_text(ci: Sequence[float | None] | None) -> str:
    """`` [2.09, \u221e]``: an M:F interval as a reader sees it, an infinite bound as \u221e (empty without one)."""
    if not ci:
        return ""
    return " [" + ", ".join("\u221e" if b is None or math.isinf(b) else f"{b:.2f}" for b in ci) + "]"


def balance_figures(
    decisions: Decisions,
    counts: Counts | None,
    accuracy: Mapping[str, Any],
    replicates: Mapping[str, np.ndarray],
    paired: bool = True,
) -> tuple[dict[str, Any], dict[str, np.ndarray], dict[str, float]]:
    """The :data:`BALANCE_KEYS` figures, their replicates and the n of each strict accuracy's Wilson interval, given
    the accuracy figures and replicates of :func:`bias_eval.mtgeneval.accuracy.accuracy_figures` (made with the same
    ``counts``); ``paired``: line i of both genders is one pair (its neutral pair counted once)."""
    have = [g for g in GENDERS if decisions[g]]
    figures: dict[str, Any] = dict.fromkeys(BALANCE_KEYS)
    reps: dict[str, np.ndarray] = {}
    sizes: dict[str, float] = {}
    for g in have:
        strict = [strict_correct(d) for d in decisions[g]]
        hits = {g: np.array([s is True for s in strict], dtype=float)}
        counted = {g: np.array([s is not None for s in strict], dtype=float)}
        name = f"strict_accuracy_{g}"
        figures[name], sizes[name] = share(hits, counted), counted_items(hits, counted)
        if counts is not None and figures[name] is not None:
            reps[name] = replicate_shares(counts, hits, counted)
            figures[f"{name}_ci95"] = share_interval(hits, counted)
    if have:
        sides = have[:1] if paired and len(have) == 2 else have
        figures["neutral_pairs"] = sum(not d.gendered for g in sides for d in decisions[g])
    known, pool = {**accuracy, **figures}, {**replicates, **reps}
    per = {"accuracy": lambda d, g: d.correct, "strict_accuracy": lambda d, g: strict_correct(d)}
    for name in ("accuracy", "strict_accuracy"):
        gap = figures[f"{name}_gap"] = _gap(known, name)
        if gap is not None and f"{name}_masculine" in pool and f"{name}_feminine" in pool:
            reps[f"{name}_gap"] = pool[f"{name}_masculine"] - pool[f"{name}_feminine"]
            said = [[per[name](d, g) for d in decisions[g]] for g in GENDERS]
            figures[f"{name}_gap_ci95"] = gap_interval(*said, paired)
    if have:
        said = [predicted_gender(d, g) for g in have for d in decisions[g]]
        figures["predicted_masculine"] = said.count("masculine")
        figures["predicted_feminine"] = said.count("feminine")
        if figures["predicted_feminine"]:
            figures["mf_ratio"] = figures["predicted_masculine"] / figures["predicted_feminine"]
        if counts is not None:
            figures["mf_ratio_ci95"] = ratio_interval(figures["predicted_masculine"], figures["predicted_feminine"])
    return figures, reps, sizes


def infinite_ratio(figures: Mapping[str, Any]) -> bool:
    """Whether a language's M:F ratio is infinite: no hypothesis feminine, some masculine."""
    return figures.get("predicted_feminine") == 0 and bool(figures.get("predicted_masculine"))


def mf_ratio_text(figures: Mapping[str, Any], infinite: bool | None = None) -> str:
    """The M:F prediction ratio as a reader sees it: ``1.25``, ``\u221e (2,140 : 0)`` when no hypothesis is feminine
    and some are masculine, ``n/a`` when it is unknown. ``infinite`` overrides the counts' say (a macro mean is
    infinite when one of its languages is; its counts are shown only when none of its hypotheses is feminine)."""
    if infinite if infinite is not None else infinite_ratio(figures):
        m, f = figures.get("predicted_masculine"), figures.get("predicted_feminine")
        return f"\u221e ({m:,} : {f:,})" if f == 0 and m is not None else "\u221e"
    ratio = figures.get("mf_ratio")
    return "n/a" if ratio is None else f"{ratio:.2f}"


def below_zero(ci: Sequence[float] | None) -> bool:
    """Whether an interval lies entirely below 0."""
    return ci is not None and ci[1] < 0


def _stated(name: str, gap: Mapping[str, Any]) -> str:
    low, high = gap["ci95"]
    return f"{name} {gap['gap']:+.3f} [{low:+.3f}, {high:+.3f}]"


def over_correction(metrics: Mapping[str, Any]) -> dict[str, Any] | None:
    """``metrics.json``'s ``over_correction`` (see :data:`OVER_CORRECTION_DEFINITION`) for a report's ``languages``
    and ``macro`` (the macro mean counts only over several languages); ``None`` when no gap is flagged."""
    scopes = dict(metrics["languages"])
    if len(scopes) > 1:
        scopes["macro"] = metrics["macro"]
    flagged: dict[str, dict[str, Any]] = {}
    for scope, figures in scopes.items():
        gaps = {k: {"gap": figures.get(k), "ci95": figures.get(f"{k}_ci95")} for k in OVER_CORRECTION_GAPS}
        gaps = {k: v for k, v in gaps.items() if below_zero(v["ci95"])}
        if gaps:
            flagged[scope] = gaps
    if not flagged:
        return None
    said = "; ".join(f"{scope}: " + ", ".join(_stated(k, v) for k, v in g.items()) for scope, g in flagged.items())
    message = (
        f"feminine sentences get their gender right more often than masculine ones beyond noise ({said}): "
        "after a bias mitigation this is over-correction, not success"
    )
    return {"message": message, "scopes": flagged}
