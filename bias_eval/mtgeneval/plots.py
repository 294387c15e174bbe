"""MT-GenEval's report figures, each rendered as SVG, PDF and PNG (:mod:`bias_eval.core.plots`). Axes show
differences where the report is about differences: the gap chart plots the gap with its CI around zero, the BLEU
chart puts the two genders' points on an axis fitted to them (not bars from 0).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from bias_eval.core.bootstrap import significant
from bias_eval.core.plots import (
    COVERAGE_COLOUR,
    FEMININE_COLOUR,
    INK,
    MASCULINE_COLOUR,
    PAIR_COLOUR,
    categories,
    gap_limits,
    render,
)


def _columns(metrics: Mapping[str, Any]) -> tuple[list[str], list[Mapping[str, Any]]]:
    labels = list(metrics["languages"])
    rows = [metrics["languages"][lang] for lang in labels]
    if len(labels) > 1:
        labels.append("macro")
        rows.append(metrics["macro"])
    return labels, rows


def _value(row: Mapping[str, Any], key: str) -> float:
    value = row.get(key)
    return float("nan") if value is None else float(value)


def _gap_panel(ax: Axes, labels: list[str], rows: list[Mapping[str, Any]], name: str, title: str) -> None:
    x = categories(ax, labels)
    gaps = [_value(r, f"{name}_gap") for r in rows]
    cis = [r.get(f"{name}_gap_ci95") for r in rows]
    low, high = gap_limits(gaps, cis)
    ax.set_ylim(low, high)
    ax.axhspan(0, high, color=MASCULINE_COLOUR, alpha=0.08, linewidth=0)
    ax.axhspan(low, 0, color=FEMININE_COLOUR, alpha=0.08, linewidth=0)
    ax.axhline(0.0, color=INK, linewidth=0.9)
    ax.text(0.01, 0.98, "favours masculine", transform=ax.transAxes, va="top", fontsize=8, color=INK)
    ax.text(0.01, 0.02, "favours feminine", transform=ax.transAxes, va="bottom", fontsize=8, color=INK)
    for xi, gap, ci in zip(x, gaps, cis):
        if np.isnan(gap):
            continue
        if ci is not None:
            ax.errorbar([xi], [gap], yerr=[[gap - ci[0]], [ci[1] - gap]], color=INK, capsize=4, linewidth=1.2)
        filled = significant(ci) is True
        ax.plot([xi], [gap], "o", markersize=7, color=INK, markerfacecolor=INK if filled else "white")
        ax.annotate(
            f"{gap:+.2f}".replace("-", "\u2212"),
            (xi, gap),
            xytext=(7, 0),
            textcoords="offset points",
            va="center",
            fontsize=8,
        )
    ax.set_ylabel(f"{title} gap, masculine \u2212 feminine")
    ax.set_title(f"{title} gap with 95% CI", fontsize=10)


def gap_figure(metrics: Mapping[str, Any]) -> Figure:
    """BLEU and chrF gaps (masculine - feminine) with their 95% bootstrap CIs around 0, per language and macro.

    A filled point is a significant gap (its CI excludes 0), a hollow one is not.
    """
    labels, rows = _columns(metrics)
    fig = Figure(figsize=(max(6.0, 2.0 + 1.6 * len(labels)), 3.6), layout="constrained")
    for ax, (name, title) in zip(fig.subplots(1, 2), (("bleu", "BLEU"), ("chrf", "chrF"))):
        _gap_panel(ax, labels, rows, name, title)
    return fig


#: how far (in categories) each gender's point of :func:`bleu_figure` sits beside its language
DODGE = 0.12


def bleu_figure(metrics: Mapping[str, Any]) -> Figure:
    """Corpus BLEU of the feminine and the masculine sentences per language: two points joined by a line, on an
    axis fitted to the points (a gap of one point stays visible next to BLEU 90); feminine a little left of the
    language, masculine a little right (:data:`DODGE`), so that equal scores show both points."""
    labels, rows = _columns(metrics)
    fig = Figure(figsize=(max(4.0, 2.4 + 0.9 * len(labels)), 3.8), layout="constrained")
    ax = fig.add_subplot()
    x = categories(ax, labels)
    f = np.array([_value(r, "bleu_feminine") for r in rows])
    m = np.array([_value(r, "bleu_masculine") for r in rows])
    for xi, fi, mi in zip(x, f, m):
        ax.plot([xi - DODGE, xi + DODGE], [fi, mi], color="#999999", linewidth=2)
    for values, name, colour, marker, side in (
        (f, "feminine", FEMININE_COLOUR, "o", -1),
        (m, "masculine", MASCULINE_COLOUR, "s", 1),
    ):
        ax.plot(x + side * DODGE, values, marker, markersize=8, color=colour, label=name, linestyle="none")
        for xi, v in zip(x + side * DODGE, values):
            if not np.isnan(v):
                ax.annotate(f"{v:.1f}", (xi, v), xytext=(side * 9, 0), textcoords="offset points", va="center",
                            ha="left" if side > 0 else "right", fontsize=8)  # fmt: skip
    finite = np.concatenate([f, m])
    finite = finite[~np.isnan(finite)]
    if finite.size:
        span = max(float(finite.max() - finite.min()), 2.0)
        top = float(finite.max())
        high = top + 0.3 * span if top + 0.3 * span <= 100 else max(top, 100.0) + 0.06 * span  # room for 100's marker
        ax.set_ylim(max(0.0, float(finite.min()) - 0.3 * span), high)
    ax.set_ylabel("corpus BLEU (axis not from 0)")
    ax.set_title("BLEU per gender", fontsize=10)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncols=2, frameon=False)
    return fig


def accuracy_figure(metrics: Mapping[str, Any]) -> Figure | None:
    """MT-GenEval accuracy per gender and per pair, and coverage, with 95% CIs; ``None`` when no language has it."""
    labels, rows = _columns(metrics)
    if all(r.get("accuracy_feminine") is None and r.get("accuracy_masculine") is None for r in rows):
        return None
    fig = Figure(figsize=(max(4.5, 2.6 + 0.9 * len(labels)), 3.8), layout="constrained")
    ax = fig.add_subplot()
    x = categories(ax, labels)
    series = (
        ("accuracy_feminine", "accuracy, feminine", FEMININE_COLOUR, "o"),
        ("accuracy_masculine", "accuracy, masculine", MASCULINE_COLOUR, "s"),
        ("accuracy_pair", "accuracy, both of a pair", PAIR_COLOUR, "D"),
        ("coverage", "coverage (has a gendered word)", COVERAGE_COLOUR, "^"),
    )
    for k, (key, name, colour, marker) in enumerate(series):
        offset = (k - (len(series) - 1) / 2) * 0.16
        points = [(xi, r[key], r.get(f"{key}_ci95")) for xi, r in zip(x, rows) if r.get(key) is not None]
        for n, (xi, value, ci) in enumerate(points):
            yerr = None if ci is None else [[100 * (value - ci[0])], [100 * (ci[1] - value)]]
            ax.errorbar([xi + offset], [100 * value], yerr=yerr, fmt=marker, color=colour, markersize=6, capsize=2,
                        label=name if n == 0 else None)  # fmt: skip
    ax.set_ylim(0, 105)
    ax.set_ylabel("% of hypotheses")
    ax.set_title("Gender accuracy (MT-GenEval) and coverage, 95% Wilson intervals", fontsize=10)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncols=2, frameon=False)
    return fig


def figure_objects(metrics: Mapping[str, Any]) -> dict[str, Figure]:
    """Every figure of the report, by name, in the order the page shows them."""
    figures = {"gap": gap_figure(metrics), "bleu_by_gender": bleu_figure(metrics)}
    accuracy = accuracy_figure(metrics)
    if accuracy is not None:
        figures["accuracy"] = accuracy
    return figures


def make_figures(metrics: Mapping[str, Any]) -> dict[str, dict[str, bytes]]:
    """Every figure of the report, by name, rendered in each of :data:`FORMATS`."""
    return {name: render(fig) for name, fig in figure_objects(metrics).items()}
