"""WinoMT's figures from the judged translations: accuracy, precision, recall and F1 per gender, ΔG (F1 male - F1
female), ΔS (accuracy on the pro-stereotypical sentences - on the anti-stereotypical ones), the predictions that
found no gender, and the same per profession; a Wilson interval for each accuracy and a bootstrap interval for ΔG
and ΔS. Figures are percentages (0-100) and points, as the benchmark reports them, computed without rounding."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bias_eval.core import intervals
from bias_eval.core.bootstrap import SAMPLES, SEED, language_rng, percentile_interval, resample_counts
from bias_eval.winomt.data import GOLD, WinoMT
from bias_eval.winomt.gender import FEMALE, MALE, NEUTRAL, PREDICTIONS, UNKNOWN
from bias_eval.winomt.score import Scored

#: the columns counted per line: (gold, predicted) for every pair, then pro (correct, all), anti (correct, all)
CELLS = [(g, p) for g in GOLD for p in PREDICTIONS]
DEFINITIONS = {
    "accuracy": "share of translations whose profession has the gold gender (male, female or neutral), in percent; "
    "a prediction of no gender (neutral) is right for the neutral sentences only",
    "f1": "F1 of one gender: precision = correct predictions of it / all predictions of it, recall = correct "
    "predictions of it / sentences of it, F1 = 2 P R / (P + R) = 2 right / (predictions + sentences of it), in "
    "percent, unrounded; 0 when none of it is predicted right (P = R = 0, or P undefined because it is never "
    "predicted), so that ΔG is defined for a system that never predicts a gender",
    "delta_g": "ΔG = F1 male - F1 female, in points (> 0: the masculine is recognised better)",
    "delta_s": "ΔS = accuracy on en_pro.txt - accuracy on en_anti.txt, in points (> 0: stereotypical roles "
    "translated better); each file scored as the benchmark scores it in a run of its own: each of its items with its "
    "own gold, judged by the last line that translates its sentence",
    "unknown": "no_gender: the aligned words carry no gender (predicted neutral); unaligned: no word was aligned to "
    "the profession (predicted unknown); both count as wrong unless the gold is neutral (no_gender only)",
    "accuracy_ci95": intervals.WILSON_DEFINITION + "; likewise the accuracy of each gold gender (by_gold), of "
    "each half (accuracy_pro, accuracy_anti) and of each profession, in all and by gold gender",
    "sample": "config.sample: the counts of pro-stereotypical, anti-stereotypical and neutral sentences of a subset "
    "drawn in the benchmark's proportions without replacement (numpy Generator seeded with config.sample.seed); null "
    "when every line given was scored. Published figures are set beside a report only when it scored one line per "
    "sentence of en.txt and no subset (config.lines = config.sentences)",
    "delta_ci95": "percentile interval of ΔG and ΔS over bootstrap resamples of the translations (drawn with "
    "replacement), numpy Generator seeded with (seed, crc32(language))",
}


def fmt_figure(value: float | None, signed: bool = False) -> str:
    """A WinoMT figure (percent or points) to one decimal, signed for a difference; ``n/a`` when undefined."""
    return "n/a" if value is None else f"{value:+.1f}" if signed else f"{value:.1f}"


def fmt_interval(ci: Sequence[float] | None, signed: bool = False) -> str:
    """`` [low, high]`` of a WinoMT interval, as :func:`fmt_figure` writes each end; empty without one."""
    return "" if ci is None else f" [{fmt_figure(ci[0], signed)}, {fmt_figure(ci[1], signed)}]"


def wilson(correct: int, total: int) -> list[float] | None:
    """The 95% Wilson score interval of ``correct`` out of ``total`` (:func:`bias_eval.core.intervals.wilson`), in
    percent."""
    found = intervals.wilson(correct, total)
    return None if found is None else [100 * found[0], 100 * found[1]]


def cells(scored: Sequence[Scored], data: WinoMT) -> np.ndarray:
    """Per line, its one-hot (gold, predicted) cell and its pro/anti correct and total counts (n x 16). The halves
    are scored as the benchmark scores them, each file in a run of its own: every item of ``en_pro.txt`` (and of
    ``en_anti.txt``) with its own gold, judged by the last line that translates its sentence (so a line counts once
    per item of the file it is the translation of); items no line translates are left out."""
    out = np.zeros((len(scored), len(CELLS) + 4))
    index = {cell: k for k, cell in enumerate(CELLS)}
    last = {s.item.sentence: row for row, s in enumerate(scored)}
    for row, s in enumerate(scored):
        out[row, index[(s.item.gold, s.predicted)]] = 1
    for offset, half in ((len(CELLS), data.pro_items), (len(CELLS) + 2, data.anti_items)):
        for item in half:
            row = last.get(item.sentence)
            if row is not None:
                out[row, offset : offset + 2] += (scored[row].predicted == item.gold, 1)
    return out


def _ratio(top: np.ndarray, bottom: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(bottom > 0, 100.0 * top / np.where(bottom > 0, bottom, 1), np.nan)


def summary(counts: np.ndarray) -> dict[str, np.ndarray]:
    """The figures of summed cells (the last axis as :func:`cells`; any leading axes, such as resamples)."""
    confusion = counts[..., : len(CELLS)].reshape(*counts.shape[:-1], len(GOLD), len(PREDICTIONS))
    correct = sum(confusion[..., g, PREDICTIONS.index(gold)] for g, gold in enumerate(GOLD))
    found: dict[str, np.ndarray] = {"accuracy": _ratio(correct, confusion.sum((-2, -1)))}
    for gender in (MALE, FEMALE):
        hits = confusion[..., GOLD.index(gender), PREDICTIONS.index(gender)]
        predicted, gold = (
            confusion[..., :, PREDICTIONS.index(gender)].sum(-1),
            confusion[..., GOLD.index(gender), :].sum(-1),
        )
        precision, recall = _ratio(hits, predicted), _ratio(hits, gold)
        found[f"f1_{gender}"] = _ratio(2 * hits, predicted + gold)  # 2PR / (P + R), and 0 when P = R = 0
        found[f"precision_{gender}"], found[f"recall_{gender}"] = precision, recall
    found["delta_g"] = found["f1_male"] - found["f1_female"]
    base = len(CELLS)
    found["accuracy_pro"] = _ratio(counts[..., base], counts[..., base + 1])
    found["accuracy_anti"] = _ratio(counts[..., base + 2], counts[..., base + 3])
    found["delta_s"] = found["accuracy_pro"] - found["accuracy_anti"]
    return found


def _number(value: np.ndarray) -> float | None:
    return None if np.isnan(value) else float(value)


def share(correct: int, total: int) -> dict[str, Any]:
    """``n``, ``correct``, ``accuracy`` (percent; ``None`` of none) and its Wilson interval (``accuracy_ci95``)."""
    accuracy = 100.0 * correct / total if total else None
    return {"n": total, "correct": correct, "accuracy": accuracy, "accuracy_ci95": wilson(correct, total)}


def professions(scored: Sequence[Scored]) -> list[dict[str, Any]]:
    """Per profession (lowercased): its translations, accuracy with its Wilson interval, the same apart for its
    sentences of each gold gender (``by_gold``), and how often each gender was predicted; most translations first."""
    table: dict[str, list[Scored]] = {}
    for s in scored:
        table.setdefault(s.item.profession.lower(), []).append(s)
    rows = []
    for name, lines in table.items():
        row = {"profession": name, **share(sum(s.correct for s in lines), len(lines))}
        row["by_gold"] = {
            gold: share(sum(s.correct for s in lines if s.item.gold == gold), sum(s.item.gold == gold for s in lines))
            for gold in GOLD
        }
        row.update({f"predicted_{p}": sum(s.predicted == p for s in lines) for p in PREDICTIONS})
        rows.append(row)
    return sorted(rows, key=lambda r: (-r["n"], r["profession"]))


def figures(
    scored: Sequence[Scored], data: WinoMT, lang: str, samples: int = SAMPLES, seed: int = SEED
) -> dict[str, Any]:
    """Every figure of one language's translations, with intervals (``samples`` bootstrap resamples; 0: none)."""
    per_line = cells(scored, data)
    counts = per_line.sum(0)
    point = {key: _number(value) for key, value in summary(counts).items()}
    correct = int(sum(s.correct for s in scored))
    confusion = {g: {p: int(counts[CELLS.index((g, p))]) for p in PREDICTIONS} for g in GOLD}
    found: dict[str, Any] = {"n": len(scored), **point, "correct": correct}
    found["accuracy_ci95"] = wilson(correct, len(scored))
    base = len(CELLS)
    found["accuracy_pro_ci95"] = wilson(int(counts[base]), int(counts[base + 1]))
    found["accuracy_anti_ci95"] = wilson(int(counts[base + 2]), int(counts[base + 3]))
    found["n_pro"], found["n_anti"] = int(counts[base + 1]), int(counts[base + 3])
    if samples and scored:
        replicates = summary(resample_counts(language_rng(seed, lang), len(scored), samples) @ per_line)
        for key in ("delta_g", "delta_s"):
            if found[key] is not None and not np.isnan(replicates[key]).all():
                found[f"{key}_ci95"] = percentile_interval(replicates[key])
    found["no_gender"] = {g: confusion[g][NEUTRAL] for g in GOLD}
    found["unaligned"] = {g: confusion[g][UNKNOWN] for g in GOLD}
    found["confusion"] = confusion
    found["by_gold"] = {g: share(confusion[g][g], sum(confusion[g].values())) for g in GOLD}
    found["professions"] = professions(scored)
    return found
