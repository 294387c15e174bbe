"""Which checkpoint is best: ``--metric_for_best_model`` read from the validation scores, a mitigation's rule
(:func:`keep_checkpoint`: the worse-served gender's strict or lenient accuracy raised, the better-served one's and
general BLEU kept within their budgets), and the progress line."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bias_eval.mtgeneval.accuracy import low_signal
from bias_eval.mtgeneval.gendered import GENDERS
from mtkit.errors import UserError
from mtkit.evaluation.scores import GENDER_KEYS

_LANG_BLEU = re.compile(r"^valid_([a-z]{2,3})_bleu$")  # valid_de_bleu, not valid_fair_bleu
#: the key of an evaluation's record (``metrics.jsonl``, the trackers) that says its gender figures say little
WARNING_KEY = "valid_warning"

#: Metrics where smaller is better; every other one is maximised.
LOWER_IS_BETTER = frozenset({"loss", "bleu_gap_abs"})
#: Metrics that exist only when the validation rows carry gender labels.
NEEDS_GENDER = frozenset({"fair_bleu", "accuracy_pair", "bleu_gap_abs"})


def check_selection(cfg, validation_columns: Iterable[str]) -> None:
    """Refuse a gender metric for validation data without gender labels, and paper_bleu without ``--paper_bleu``
    (before any training)."""
    metric = cfg.eval.metric_for_best_model
    if metric == "paper_bleu" and cfg.eval.paper_bleu == "none":
        raise UserError("--metric_for_best_model paper_bleu: needs --paper_bleu (moses-lc, moses or tokenized)")
    if metric in NEEDS_GENDER and "gender" not in set(validation_columns):
        raise UserError(
            f"--metric_for_best_model {metric}: the validation data has no gender labels "
            "(train from --mtgeneval_dir or a table with a gender column)"
        )


def raw_value(scores: dict[str, float], metric: str) -> float:
    """The metric's value among ``valid_*`` scores (``bleu_gap_abs`` is ``|valid_bleu_gap|``)."""
    if metric == "bleu_gap_abs":
        return abs(scores["valid_bleu_gap"])
    return scores[f"valid_{metric}"]


def oriented(value: float, metric: str) -> float:
    """``value`` turned so that larger is better."""
    return -value if metric in LOWER_IS_BETTER else value


def selection_value(scores: dict[str, float], metric: str) -> float:
    """The comparable (larger is better) value of ``metric`` in this evaluation's scores."""
    return oriented(raw_value(scores, metric), metric)


#: the accuracies a mitigation may keep its checkpoint by and judge its verdict by (``--mitigation_accuracy``), as the
#: prefixes of their figures: strict (a word of the sentence's gender and none of the other) or MT-GenEval's lenient
#: accuracy (no word of the other gender; an output without a gendered word counts as right)
MEASURES = {"strict": "strict_accuracy", "lenient": "accuracy"}


def keep_rule(measure: str) -> str:
    """The rule a mitigation keeps its checkpoint by (:func:`keep_checkpoint`) on ``measure``, as the verdict names
    it."""
    name = measure.replace("_", " ")
    return (
        f"the best {name} of the gender the start served worse on the selection pairs, among the evaluations (update "
        "0, the start, included) whose general validation BLEU is at most --max_bleu_drop below the start's and whose "
        f"{name} of the better-served gender is at most --max_accuracy_drop points below the start's; ties go to "
        "--metric_for_best_model, then the lower validation loss, then the earlier update"
    )


def within_budget(bleu: float, start: float, max_drop: float) -> bool:
    """Whether a general validation BLEU keeps a mitigation's budget: at most ``max_drop`` below the start's."""
    return bleu >= start - max_drop - 1e-9


@dataclass(frozen=True)
class Kept:
    """The checkpoint a mitigation keeps (:func:`keep_checkpoint`) and why."""

    step: int
    worse_served: str  # the gender the start served worse on the selection pairs (feminine on a tie)
    better_served: str
    eligible: list[int]  # the evaluations that kept both budgets, in order (the start always among them)


def served(start: Mapping[str, Any], measure: str) -> tuple[str, str]:
    """``(worse, better)``: the genders as the start's selection-pair ``measure`` ranks them (feminine worse on a
    tie)."""
    f, m = (start.get(f"valid_{measure}_{g}") for g in GENDERS)
    if f is None or m is None:
        raise ValueError(f"a mitigation's checkpoint choice needs the start's valid_{measure} of both genders")
    return ("feminine", "masculine") if f <= m else ("masculine", "feminine")


def keep_checkpoint(
    records: Sequence[Mapping[str, Any]],
    metric: str,
    max_bleu_drop: float,
    max_accuracy_drop: float,
    measure: str,
) -> Kept:
    """The evaluation a mitigation keeps (:func:`keep_rule` of ``measure``, a :data:`MEASURES` value) among
    ``records`` (``metrics.jsonl``'s evaluations: ``step``, ``valid_general_bleu``, ``valid_<measure>_<gender>``,
    ``valid_loss``; other rows are passed over): a checkpoint that closes the gap by lowering the better-served
    gender's ``measure`` more than ``max_accuracy_drop`` points below the start's is never kept, and the start
    (update 0) is kept when nothing else keeps both budgets and does better."""
    evaluations = [r for r in records if "valid_general_bleu" in r]
    start = next((r for r in evaluations if r["step"] == 0), None)
    if start is None:
        raise ValueError("a mitigation's checkpoint choice needs the start's evaluation (update 0)")
    worse, better = served(start, measure)

    def value(r: Mapping[str, Any], gender: str) -> float:
        found = r.get(f"valid_{measure}_{gender}")
        return float("-inf") if found is None else found  # none measured (no gendered pair): never better

    def keeps(r: Mapping[str, Any]) -> bool:
        fell = 100 * (value(start, better) - value(r, better))
        return within_budget(r["valid_general_bleu"], start["valid_general_bleu"], max_bleu_drop) and (
            fell <= max_accuracy_drop + 1e-9
        )

    eligible = [r for r in evaluations if keeps(r)]
    best = max(
        eligible, key=lambda r: (value(r, worse), selection_value(dict(r), metric), -r["valid_loss"], -r["step"])
    )
    return Kept(best["step"], worse, better, [r["step"] for r in eligible])


def describe(
    scores: dict[str, float],
    metric: str,
    best_metric: float | None,
    best_step: int | None,
    kept_by: str | None = None,
) -> str:
    """One progress line: loss, BLEU, chrF, per-language BLEU, the papers' BLEU, the gender figures, the best so far
    (a mitigation's: the update its rule keeps, ``kept_by`` naming the accuracy it keeps by), and whether the gender
    figures say little (:func:`low_signal_note`)."""
    bleu = f"BLEU {scores['valid_bleu']:.2f}"
    per_lang = sorted(m[1] for k in scores if (m := _LANG_BLEU.match(k)))
    if per_lang:
        bleu += " (" + " ".join(f"{lang} {scores[f'valid_{lang}_bleu']:.1f}" for lang in per_lang) + ")"
    parts = [f"valid loss {scores['valid_loss']:.3f}", bleu, f"chrF {scores['valid_chrf']:.2f}"]
    if "valid_paper_bleu" in scores:  # --paper_bleu: the papers' tokenized BLEU, beside sacreBLEU
        parts.append(f"paper BLEU {scores['valid_paper_bleu']:.2f}")
    for key, label, fmt in (
        ("bleu_gap", "gap m-f", "{:+.2f}"),
        ("accuracy_feminine", "acc f", "{:.1%}"),
        ("accuracy_masculine", "acc m", "{:.1%}"),
        ("accuracy_pair", "acc pair", "{:.1%}"),
        ("strict_accuracy_feminine", "strict f", "{:.1%}"),
        ("strict_accuracy_masculine", "strict m", "{:.1%}"),
        ("coverage", "coverage", "{:.1%}"),
        ("fair_bleu", "fair BLEU", "{:.3f}"),
    ):
        if f"valid_{key}" in scores and key in GENDER_KEYS:
            parts.append(f"{label} {fmt.format(scores[f'valid_{key}'])}")
    best = f"best {metric} {best_metric:.4g} at {best_step}" if best_metric is not None else ""
    if kept_by and best_step is not None:
        best = f"the mitigation's rule keeps update {best_step} (by {kept_by.replace('_', ' ')})"
    warning = low_signal_note(scores).get(WARNING_KEY)
    return ", ".join(parts) + (f"; {best}" if best else "") + (f"; read with care: {warning}" if warning else "")


def low_signal_note(scores: dict[str, float]) -> dict[str, str]:
    """``{WARNING_KEY: why}`` when a language's coverage or BLEU is below the bias report's thresholds
    (:func:`bias_eval.mtgeneval.accuracy.low_signal`, the one reader of them), else ``{}``; nothing without gender
    figures."""
    if "valid_coverage" not in scores:
        return {}
    langs = sorted(m[1] for k in scores if (m := _LANG_BLEU.match(k)))
    keys = {lang: f"valid_{lang}_" for lang in langs} or {"": "valid_"}  # one language: the plain keys
    figures = {lang: {k: scores.get(f"{prefix}{k}") for k in ("coverage", "bleu")} for lang, prefix in keys.items()}
    flagged = (low_signal(figures) or {}).get("languages", {})
    said = "; ".join(" and ".join(f["reasons"]) + (f" ({lang})" if lang else "") for lang, f in flagged.items())
    return {WARNING_KEY: f"the accuracies say little: {said}"} if said else {}
