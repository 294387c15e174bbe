"""Report figures as PNG bytes (matplotlib's object API with the Agg canvas; no pyplot state)."""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

FEMININE_COLOUR = "#c4457a"
MASCULINE_COLOUR = "#3b6fb6"
PAIR_COLOUR = "#6b6b6b"


def _png(fig: Figure) -> bytes:
    FigureCanvasAgg(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    return buffer.getvalue()


def _columns(metrics: Mapping[str, Any]) -> tuple[list[str], list[Mapping[str, Any]]]:
    labels = list(metrics["languages"])
    rows = [metrics["languages"][lang] for lang in labels]
    if len(labels) > 1:
        labels.append("macro")
        rows.append(metrics["macro"])
    return labels, rows


Series = tuple[str, list[float | None], str]  # name, one value per column, colour


def _error_bars(values: list[float | None], cis: list[list[float] | None]) -> np.ndarray | None:
    """``2 x n`` distances from each value to its CI bounds (0 where there is none); ``None`` without any CI."""
    if not any(cis):
        return None
    low = [v - c[0] if c and v is not None else 0.0 for v, c in zip(values, cis)]
    high = [c[1] - v if c and v is not None else 0.0 for v, c in zip(values, cis)]
    return np.array([low, high])


def _grouped_bars(
    ax: Axes, labels: list[str], series: list[Series], cis: list[list[list[float] | None]] | None = None
) -> None:
    x = np.arange(len(labels))
    width = 0.8 / len(series)
    for k, (name, values, colour) in enumerate(series):
        heights = [np.nan if v is None else v for v in values]
        errors = _error_bars(values, cis[k]) if cis else None
        bars = ax.bar(
            x + (k - (len(series) - 1) / 2) * width,
            heights,
            width,
            label=name,
            color=colour,
            yerr=errors,
            capsize=3 if errors is not None else 0,
            error_kw={"elinewidth": 0.8},
        )
        ax.bar_label(bars, fmt="%.1f" if max(np.nan_to_num(heights)) > 1.5 else "%.2f", fontsize=7, padding=1)
    ax.set_xticks(x, labels)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))


def bleu_by_gender(metrics: Mapping[str, Any]) -> bytes:
    """Corpus BLEU of the feminine and the masculine sentences, per language."""
    labels, rows = _columns(metrics)
    fig = Figure(figsize=(1.4 + 1.1 * len(labels), 3.4))
    ax = fig.add_subplot()
    _grouped_bars(
        ax,
        labels,
        [
            ("feminine", [r["bleu_feminine"] for r in rows], FEMININE_COLOUR),
            ("masculine", [r["bleu_masculine"] for r in rows], MASCULINE_COLOUR),
        ],
    )
    ax.set_ylabel("BLEU")
    ax.set_title("Corpus BLEU by gender")
    return _png(fig)


def gaps_with_ci(metrics: Mapping[str, Any]) -> bytes:
    """BLEU and chrF gaps (masculine - feminine) with their bootstrap 95% intervals."""
    labels, rows = _columns(metrics)
    fig = Figure(figsize=(1.4 + 1.1 * len(labels), 3.4))
    ax = fig.add_subplot()
    x = np.arange(len(labels))
    for offset, name, colour in ((-0.15, "bleu", "#333333"), (0.15, "chrf", "#999999")):
        gaps = np.array([r[f"{name}_gap"] for r in rows], dtype=float)
        cis = [r.get(f"{name}_gap_ci95") for r in rows]
        low = np.array([g - c[0] if c else 0.0 for g, c in zip(gaps, cis)])
        high = np.array([c[1] - g if c else 0.0 for g, c in zip(gaps, cis)])
        label = "BLEU gap" if name == "bleu" else "chrF gap"
        ax.errorbar(x + offset, gaps, yerr=[low, high], fmt="o", color=colour, capsize=4, label=label)
    ax.axhline(0.0, color="black", linewidth=0.8)
    ax.set_xlim(-0.5, len(labels) - 0.5)  # room around the points (one language would put them on the frame)
    ax.set_xticks(x, labels)
    ax.set_ylabel("masculine - feminine")
    ax.set_title("Gender gap with 95% bootstrap CI (> 0 favours masculine)")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _png(fig)


def accuracy_by_gender(metrics: Mapping[str, Any]) -> bytes | None:
    """MT-GenEval gender accuracy per gender and per pair; ``None`` when no language has it."""
    labels, rows = _columns(metrics)
    if all(r["accuracy_feminine"] is None and r["accuracy_masculine"] is None for r in rows):
        return None
    fig = Figure(figsize=(1.4 + 1.3 * len(labels), 3.4))
    ax = fig.add_subplot()
    keys = ("accuracy_feminine", "accuracy_masculine", "accuracy_pair")
    colours = (FEMININE_COLOUR, MASCULINE_COLOUR, PAIR_COLOUR)
    series = [(key.split("_")[1], [r[key] for r in rows], c) for key, c in zip(keys, colours)]
    _grouped_bars(ax, labels, series, [[r.get(f"{key}_ci95") for r in rows] for key in keys])
    ax.set_ylim(0, 1.12)
    ax.set_ylabel("accuracy")
    ax.set_title("Gender accuracy (MT-GenEval definition) with 95% bootstrap CI")
    return _png(fig)


def make_figures(metrics: Mapping[str, Any]) -> dict[str, bytes]:
    """All figures of the report, by name."""
    figures = {"bleu_by_gender": bleu_by_gender(metrics), "gaps": gaps_with_ci(metrics)}
    accuracy = accuracy_by_gender(metrics)
    if accuracy is not None:
        figures["accuracy"] = accuracy
    return figures
