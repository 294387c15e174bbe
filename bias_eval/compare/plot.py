"""The comparison's one figure: both systems on shared axes, per language (and the macro mean when both reports have
the same languages): the accuracy gap, masculine - feminine, with its 95% interval (left), and the accuracy of each
gender with its Wilson interval (right). Each gender keeps the report's colour (:mod:`bias_eval.mtgeneval.plots`); the
systems differ in marker, hollow circles for the first and filled squares for the second, so the figure needs no colour
to be read, and both panels put the two systems on one axis, so that their figures can be set against each other."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from bias_eval.core.plots import FEMININE_COLOUR, INK, MASCULINE_COLOUR, categories, gap_limits, render

#: how each system is drawn: (marker, filled)
SYSTEM_MARKERS = (("o", False), ("s", True))
CAPTION = (
    "Both systems on shared axes. Left: the accuracy gap, masculine \u2212 feminine, in points, with its 95% Newcombe "
    "interval (above 0 the masculine sentences get their gender right more often). Right: accuracy per gender with "
    "its 95% Wilson interval. Hollow circles: {before}; filled squares: {after}."
)


def scopes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any], Mapping]]:
    """(label, figures of the first, of the second) per common language, then macro when both have the same
    languages (more than one)."""
    common = sorted(set(before["languages"]) & set(after["languages"]))
    out = [(lang, before["languages"][lang], after["languages"][lang]) for lang in common]
    if len(common) > 1 and set(before["languages"]) == set(after["languages"]):
        out.append(("macro", before["macro"], after["macro"]))
    return out


def _points(value: Any) -> float:
    return float("nan") if value is None else 100.0 * float(value)


def draw_point(
    ax: Axes, x: float, value: Any, ci: Sequence[float] | None, colour: str, system: int, label: str
) -> None:
    """One figure of one system: a point in the system's marker (hollow or filled) with its interval."""
    marker, filled = SYSTEM_MARKERS[system]
    y = _points(value)
    if np.isnan(y):
        return
    yerr = None if ci is None else [[y - _points(ci[0])], [_points(ci[1]) - y]]
    ax.errorbar([x], [y], yerr=yerr, fmt=marker, color=colour, markerfacecolor=colour if filled else "white",
                markersize=6, capsize=3, linewidth=1.1, label=label)  # fmt: skip


def comparison_figure(before: Mapping[str, Any], after: Mapping[str, Any], names: Sequence[str]) -> Figure:
    """The figure described above, for the reports ``before`` and ``after`` (their ``metrics.json``)."""
    rows = scopes(before, after)
    labels = [label for label, _, _ in rows]
    fig = Figure(figsize=(max(7.5, 3.0 + 1.9 * len(labels)), 3.9), layout="constrained")
    gap_ax, acc_ax = fig.subplots(1, 2)
    x = categories(gap_ax, labels)
    gaps = [_points(m.get("accuracy_gap")) for _, *pair in rows for m in pair]
    cis = [
        [_points(b) for b in m["accuracy_gap_ci95"]] for _, *pair in rows for m in pair if m.get("accuracy_gap_ci95")
    ]
    gap_ax.set_ylim(*gap_limits(gaps, cis))
    gap_ax.axhline(0.0, color=INK, linewidth=0.9)
    for xi, (_, *pair) in zip(x, rows):
        for system, m in enumerate(pair):
            label = names[system] if xi == 0 else None
            where = xi + (system - 0.5) * 0.3
            draw_point(gap_ax, where, m.get("accuracy_gap"), m.get("accuracy_gap_ci95"), INK, system, label)
    gap_ax.set_ylabel("accuracy gap, masculine \u2212 feminine (points)")
    gap_ax.set_title("Accuracy gap with 95% CI", fontsize=10)
    if gap_ax.get_legend_handles_labels()[0]:  # a report without accuracies has no points
        gap_ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncols=2, frameon=False)

    x = categories(acc_ax, labels)
    series = [(g, colour, system) for g, colour in (("feminine", FEMININE_COLOUR), ("masculine", MASCULINE_COLOUR))
              for system in (0, 1)]  # fmt: skip
    lows = []
    for k, (gender, colour, system) in enumerate(series):
        for xi, (_, *pair) in zip(x, rows):
            m = pair[system]
            label = f"{gender}, {names[system]}" if xi == 0 else None
            ci = m.get(f"accuracy_{gender}_ci95")
            draw_point(acc_ax, xi + (k - 1.5) * 0.17, m.get(f"accuracy_{gender}"), ci, colour, system, label)
            lows.append(_points(ci[0] if ci else m.get(f"accuracy_{gender}")))
    low = np.nanmin(lows) if not np.all(np.isnan(lows)) else 0.0
    acc_ax.set_ylim(max(-3.0, low - 0.15 * max(100.0 - low, 2.0)), 102.0)
    acc_ax.set_ylabel("gender accuracy, %" + (" (axis not from 0)" if acc_ax.get_ylim()[0] > 0 else ""))
    acc_ax.set_title("Accuracy per gender with 95% CI", fontsize=10)
    if acc_ax.get_legend_handles_labels()[0]:  # a report without accuracies has no points
        acc_ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncols=2, frameon=False)
    return fig


def comparison_figures(before: Mapping[str, Any], after: Mapping[str, Any], names: Sequence[str]) -> dict[str, bytes]:
    """:func:`comparison_figure` as SVG, PDF and PNG (:func:`bias_eval.core.plots.render`)."""
    return render(comparison_figure(before, after, names))
