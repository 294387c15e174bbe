"""The WinoMT report's figures (matplotlib's object API), each rendered as SVG, PDF and PNG by
:func:`bias_eval.core.plots.render`: accuracy by gold gender and by stereotype, and accuracy per profession apart for
its male-gold and female-gold sentences, every point with its Wilson 95% interval. Colours as the MT-GenEval report's
(Okabe-Ito: feminine orange, masculine bluish green), each series with its own marker too."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from bias_eval.core.plots import FEMININE_COLOUR, INK, MASCULINE_COLOUR, PAIR_COLOUR, render

#: each gold gender's colour and marker
STYLE = {"male": (MASCULINE_COLOUR, "s"), "female": (FEMININE_COLOUR, "o"), "neutral": (PAIR_COLOUR, "D")}
CAPTIONS = {
    "accuracy": "Accuracy (%) of the translations by the gold gender of the profession (left) and on the pro- and "
    "anti-stereotypical sentences (right), each with its Wilson 95% interval.",
    "professions": "Accuracy (%) per profession on its sentences whose gold gender is male (square) and female "
    "(circle), each with its Wilson 95% interval; from the top, the professions whose male-gold sentences are "
    "translated best against their female-gold ones.",
}


def _points(ax: Axes, y: Sequence[float], values: Sequence[Mapping[str, Any]], style: tuple[str, str], label: str):
    """Horizontal points with their intervals at heights ``y`` (a value without accuracy is left out)."""
    kept = [(yi, v) for yi, v in zip(y, values) if v.get("accuracy") is not None]
    if not kept:
        return
    ys = np.array([yi for yi, _ in kept])
    x = np.array([v["accuracy"] for _, v in kept])
    low = np.array([v["accuracy_ci95"][0] for _, v in kept])
    high = np.array([v["accuracy_ci95"][1] for _, v in kept])
    colour, marker = style
    ax.errorbar(x, ys, xerr=[x - low, high - x], fmt=marker, color=colour, ecolor=colour, capsize=2.5,
                markersize=5, linewidth=1.0, label=label)  # fmt: skip


def _frame(ax: Axes, labels: Sequence[str]) -> None:
    ax.set_yticks(np.arange(len(labels)), labels)
    ax.set_ylim(-0.7, len(labels) - 0.3)
    ax.set_xlim(0, 100)
    ax.set_xlabel("accuracy (%)")
    ax.grid(axis="x", color="#dddddd", linewidth=0.6)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


def accuracy_figure(metrics: Mapping[str, Any]) -> Figure:
    """Accuracy by gold gender and by stereotype."""
    fig = Figure(figsize=(7.0, 2.2))
    by_gold, by_half = fig.subplots(1, 2)
    golds = [g for g in STYLE if metrics["by_gold"][g]["n"]]
    for k, gold in enumerate(golds):
        _points(by_gold, [k], [metrics["by_gold"][gold]], STYLE[gold], gold)
    _frame(by_gold, golds)
    by_gold.set_title("by gold gender", fontsize=9)
    halves = [{"accuracy": metrics[f"accuracy_{h}"], "accuracy_ci95": metrics[f"accuracy_{h}_ci95"]} for h in
              ("pro", "anti")]  # fmt: skip
    _points(by_half, [0, 1], halves, (INK, "o"), "")
    _frame(by_half, ["pro-stereotypical", "anti-stereotypical"])
    by_half.set_title("by stereotype", fontsize=9)
    fig.tight_layout()
    return fig


def profession_figure(metrics: Mapping[str, Any]) -> Figure:
    """Per profession, the accuracy of its male-gold and its female-gold sentences."""
    rows = [r for r in metrics["professions"] if r["by_gold"]["male"]["n"] or r["by_gold"]["female"]["n"]]

    def gap(row: Mapping[str, Any]) -> float:
        male, female = (row["by_gold"][g]["accuracy"] for g in ("male", "female"))
        return -1e9 if male is None or female is None else male - female

    rows.sort(key=gap)
    fig = Figure(figsize=(6.0, 1.0 + 0.2 * len(rows)))
    ax = fig.subplots()
    y = np.arange(len(rows), dtype=float)
    for gold, shift in (("male", 0.15), ("female", -0.15)):
        _points(ax, y + shift, [r["by_gold"][gold] for r in rows], STYLE[gold], f"gold {gold}")
    _frame(ax, [r["profession"] for r in rows])
    ax.tick_params(axis="y", labelsize=7)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, fontsize=8, frameon=False)
    fig.tight_layout()
    return fig


def make_figures(metrics: Mapping[str, Any]) -> dict[str, dict[str, bytes]]:
    """Each figure of a WinoMT report by name, in every format (none for a report of no translations)."""
    if not metrics["n"]:
        return {}
    return {"accuracy": render(accuracy_figure(metrics)), "professions": render(profession_figure(metrics))}
