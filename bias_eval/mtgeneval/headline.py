"""What a reader sees first in a report: the title (model and data), the one-sentence takeaway, the warnings and
the compact main table, all from a report's ``metrics.json`` content."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bias_eval.core.bootstrap import significant
from bias_eval.mtgeneval.accuracy import MIN_BLEU, MIN_COVERAGE, low_signal
from bias_eval.mtgeneval.balance import below_zero, infinite_ratio, mf_ratio_text

MINUS = "\u2212"
ARROW = "\u2192"


def percent(share: float) -> str:
    """A share as a percentage as measured: one decimal, more when one would round it to 0% or 100% (99.96% is
    ``99.96%``, not ``100.0%``); exactly 0 and 1 as ``0%`` and ``100%``."""
    if share in (0, 1):
        return f"{share:.0%}"
    for digits in range(1, 7):
        text = f"{share:.{digits}%}"
        if text not in (f"{0:.{digits}%}", f"{1:.{digits}%}"):
            return text
    return f"{share:%}"


def data_label(config: Mapping[str, Any]) -> str:
    """The data set in a few words: ``MT-GenEval dev, EN->de, es`` or ``gendered.csv, into de``."""
    langs = ", ".join(config.get("languages", []))
    name = str(config.get("data", "?"))
    if config.get("split"):  # MT-GenEval: English sources; its name ends with the folder or hub id in brackets
        return f"{name.split(' (', 1)[0]}, EN{ARROW}{langs}"
    return f"{Path(name).name}, into {langs}"


def system_label(config: Mapping[str, Any]) -> str:
    """The translation system: the report's ``name`` (``--name``), else the model's folder or hub id, else the
    hypothesis folder."""
    if config.get("name"):
        return str(config["name"])
    hypotheses = config.get("hypotheses", {})
    if hypotheses.get("model"):
        return str(hypotheses["model"])
    return f"the hypotheses in {hypotheses.get('hyp_dir', '?')}"


def title(config: Mapping[str, Any]) -> str:
    """``Gender bias of runs/demo/final on MT-GenEval dev, EN->es``."""
    return f"Gender bias of {system_label(config)} on {data_label(config)}"


def _direction(gap: float) -> str:
    if gap > 0:
        return f"the masculine sentences score {gap:.2f} BLEU above the feminine ones"
    if gap < 0:
        return f"the feminine sentences score {-gap:.2f} BLEU above the masculine ones"
    return "the feminine and the masculine sentences score the same BLEU"


def signed(value: float) -> str:
    """``+1.70`` / ``-0.40`` with a typographic minus."""
    return f"{value:+.2f}".replace("-", MINUS)


def min_effect(metrics: Mapping[str, Any]) -> float:
    """The report's ``--min_effect`` (points; 0 for a report made before it existed)."""
    return float((metrics.get("config") or {}).get("min_effect") or 0.0)


def is_finding(points: float, ci: Sequence[float] | None, smallest: float) -> bool:
    """Whether a gap of ``points`` (BLEU points, or percentage points) with interval ``ci`` is a finding: its
    interval excludes 0 and it is at least ``smallest`` points."""
    return bool(significant(ci)) and abs(points) >= smallest


def _said(points: float, ci: Sequence[float], smallest: float) -> str:
    if not significant(ci):
        return "not significant, the interval contains 0"
    if abs(points) < smallest:
        return f"beyond noise, but below the minimum effect of {smallest:g} points: not a finding"
    return "significant, the interval excludes 0"


def _verdict(gap: float, ci: Sequence[float] | None, smallest: float = 0.0) -> str:
    if ci is None:
        return f"gap masculine {MINUS} feminine {signed(gap)}; no confidence interval (bootstrap off), so no test"
    where = _said(gap, ci, smallest)
    return f"gap masculine {MINUS} feminine {signed(gap)}, 95% CI [{signed(ci[0])}, {signed(ci[1])}]; {where}"


def _points(share: float) -> str:
    """A difference of shares in percentage points, ``+4.0`` / ``-1.5`` with a typographic minus."""
    return f"{100 * share:+.1f}".replace("-", MINUS)


def accuracy_clause(figures: Mapping[str, Any], smallest: float = 0.0) -> str | None:
    """The accuracy gap in words: ``gender accuracy is 4.0 points lower on the feminine sentences (92.6% against
    96.6%; gap masculine - feminine +4.0 points, 95% CI [+1.2, +6.8]; significant, the interval excludes 0)``,
    saying over-correction when the interval lies below 0; ``None`` without accuracies."""
    gap = figures.get("accuracy_gap")
    if gap is None:
        return None
    f, m = figures["accuracy_feminine"], figures["accuracy_masculine"]
    strict = [figures.get(f"strict_accuracy_{g}") for g in ("feminine", "masculine")]
    if gap == 0:
        said = "gender accuracy is the same on the feminine and the masculine sentences"
    else:
        side = "lower" if gap > 0 else "higher"
        said = f"gender accuracy is {100 * abs(gap):.1f} points {side} on the feminine sentences"
    ci = figures.get("accuracy_gap_ci95")
    detail = f"{percent(f)} against {percent(m)}"
    if None not in strict:
        detail += f", strictly (a word of the right gender, none of the other) {percent(strict[0])} against " \
            f"{percent(strict[1])}"  # fmt: skip
    detail += f"; gap masculine {MINUS} feminine {_points(gap)} points"
    if ci is None:
        return f"{said} ({detail}; no confidence interval (bootstrap off), so no test)"
    where = _said(100 * gap, ci, smallest)
    if below_zero(ci):
        where += ": feminine favoured beyond noise, over-correction if the model was tuned against bias"
    return f"{said} ({detail}, 95% CI [{_points(ci[0])}, {_points(ci[1])}]; {where})"


def takeaway(metrics: Mapping[str, Any]) -> str:
    """One sentence: the BLEU gap (masculine - feminine), its 95% CI, whether it is significant (the CI excludes 0),
    the accuracy gap likewise (:func:`accuracy_clause`) and the coverage (share of hypotheses with a gendered word);
    over several languages, the macro figures and in how many languages the BLEU gap is significant."""
    languages = metrics["languages"]
    if len(languages) == 1:
        ((lang, figures),) = languages.items()
        subject = f"In {lang}"
    else:
        figures, subject = metrics["macro"], f"Averaged over {len(languages)} languages"
    gap = figures.get("bleu_gap")
    if gap is None:
        return f"{subject}, the BLEU gap could not be computed."
    smallest = min_effect(metrics)
    sentence = f"{subject}, {_direction(gap)} ({_verdict(gap, figures.get('bleu_gap_ci95'), smallest)})"
    cis = [(m.get("bleu_gap"), m.get("bleu_gap_ci95")) for m in languages.values()]
    if len(languages) > 1 and all(ci is not None for _, ci in cis):
        count = sum(is_finding(g, ci, smallest) for g, ci in cis)
        sentence += f"; the gap is significant in {count} of {len(languages)} languages"
    accuracy = accuracy_clause(figures, smallest)
    if accuracy is not None:
        sentence += f"; {accuracy}"
    coverage = figures.get("coverage")
    if coverage is not None:
        sentence += f", and {percent(coverage)} of the hypotheses contain a gendered word (coverage)"
    ratio = mf_ratio_text(figures, any(map(infinite_ratio, languages.values())) or None)
    if ratio != "n/a":
        sentence += f"; the M:F prediction ratio is {ratio}"
    neutral, pairs = figures.get("neutral_pairs"), pair_count(metrics, figures)
    if neutral:
        sentence += (
            f"; {neutral:,} of {pairs:,} pairs have references that do not differ by gender: the accuracy counts "
            "them correct, strict accuracy and coverage leave them out"
        )
    return sentence + "."


def pair_count(metrics: Mapping[str, Any], figures: Mapping[str, Any]) -> int | None:
    """The sentence pairs a language (or the macro row) holds: its feminine sentences when the data is paired, its
    sentences when not (each with its counterfactual)."""
    paired = (metrics.get("config") or {}).get("paired", True)
    return figures.get("n_feminine") if paired else figures.get("n")


def warnings(metrics: Mapping[str, Any]) -> list[str]:
    """The report's warnings, one line per language whose coverage or BLEU is too low for the figures to say much
    (:func:`bias_eval.mtgeneval.accuracy.low_signal`); empty when there is none."""
    flagged = (low_signal(metrics["languages"]) or {}).get("languages", {})
    return [f"{lang}: the accuracies say little: {' and '.join(f['reasons'])}" for lang, f in flagged.items()]


def over_correction_lines(metrics: Mapping[str, Any]) -> list[str]:
    """One line per scope (language, macro) whose accuracy gap lies below 0 beyond noise, as the report's
    ``over_correction`` flag (:func:`bias_eval.mtgeneval.balance.over_correction`) records them; empty when there is
    none."""
    flagged = (metrics.get("over_correction") or {}).get("scopes", {})
    return [
        f"{scope}: " + ", ".join(f"{k.replace('_', ' ')} {_points(v['gap'])} points, 95% CI [{_points(v['ci95'][0])}, "
                                 f"{_points(v['ci95'][1])}]" for k, v in gaps.items())
        for scope, gaps in flagged.items()
    ]  # fmt: skip


#: The headings of the report's two warnings, on the markdown and the HTML page alike.
WARNING_HEADING = "Read with care: these figures say little."
OVER_CORRECTION_HEADING = "Over-correction: feminine sentences get their gender right more often, beyond noise."
OVER_CORRECTION_NOTE = (
    "The accuracy gap (masculine - feminine) lies below 0 with its whole 95% interval: after a bias mitigation, this "
    "is over-correction, not success (see over_correction in the Definitions)."
)
THRESHOLDS = f"coverage below {MIN_COVERAGE:.0%} or corpus BLEU below {MIN_BLEU:g}"


MAIN_HEADER = (
    "Language",
    "BLEU feminine",
    "BLEU masculine",
    f"Gap, masculine {MINUS} feminine [95% CI]",
    "Accuracy feminine",
    "Accuracy masculine",
    "Strict accuracy feminine",
    "Strict accuracy masculine",
    "M:F",
    "Coverage",
    "Neutral pairs",
)


MAIN_NOTE = (
    "Gap above 0: the masculine sentences score higher; in bold when its 95% interval excludes 0. Accuracy: share of "
    "hypotheses without a word of the other gender (MT-GenEval's, lenient: a hypothesis with no gendered word counts "
    "correct). Strict accuracy: share with a word of their own gender and none of the other, over the pairs whose "
    "references differ. M:F: hypotheses saying masculine over those saying feminine (\u221e with the two counts when "
    "none says feminine). Coverage: share of hypotheses with a gendered word at all. Neutral pairs: pairs whose two "
    "references do not differ by gender, which the accuracy counts correct."
)


def _share(value: float | None) -> str:
    return "n/a" if value is None else percent(value)


def _gap_cell(figures: Mapping[str, Any]) -> str:
    gap, ci = figures.get("bleu_gap"), figures.get("bleu_gap_ci95")
    if gap is None:
        return "n/a"
    return signed(gap) + ("" if ci is None else f" [{signed(ci[0])}, {signed(ci[1])}]")


def main_header(metrics: Mapping[str, Any]) -> list[str]:
    """The main table's header (:data:`MAIN_HEADER`, and the contextual subset's accuracy when it was scored)."""
    return [*MAIN_HEADER, *(["Accuracy in context"] if _with_context(metrics) else [])]


def _with_context(metrics: Mapping[str, Any]) -> bool:
    return metrics["macro"].get("accuracy_context") is not None


def main_rows(metrics: Mapping[str, Any]) -> list[tuple[list[str], bool | None]]:
    """The main table's rows (one per language, then the macro mean when there are several; cells as in
    :func:`main_header`), each with whether its gap is significant."""
    named = [(lang, m, infinite_ratio(m)) for lang, m in metrics["languages"].items()]
    if len(named) > 1:
        named.append(("macro (mean)", metrics["macro"], any(infinite for _, _, infinite in named)))
    rows = []
    for lang, m, infinite in named:
        bleu = ["n/a" if m.get(k) is None else f"{m[k]:.2f}" for k in ("bleu_feminine", "bleu_masculine")]
        shares = ("accuracy_feminine", "accuracy_masculine", "strict_accuracy_feminine", "strict_accuracy_masculine")
        cells = [lang, *bleu, _gap_cell(m), *(_share(m.get(k)) for k in shares), mf_ratio_text(m, infinite)]
        neutral, pairs = m.get("neutral_pairs"), pair_count(metrics, m)
        cells += [_share(m.get("coverage")), "n/a" if neutral is None else f"{neutral:,} of {pairs:,}"]
        if _with_context(metrics):
            cells.append(_share(m.get("accuracy_context")))
        rows.append((cells, is_finding(m.get("bleu_gap") or 0.0, m.get("bleu_gap_ci95"), min_effect(metrics))))
    return rows
