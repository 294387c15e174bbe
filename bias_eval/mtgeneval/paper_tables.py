"""The compact LaTeX table of an MT-GenEval report, set before the full one in ``report.tex``: per language (and the
mean), BLEU, the BLEU gap and the accuracy gap, their 95% intervals on the line under them, in four columns at their
own width in small type, so that it fits one column of a two-column paper where the full eleven-column table is
scaled to about 4 pt."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bias_eval.core import latex

HEADER = ("Language", "BLEU", "BLEU gap", "Acc. gap")
NOTE = (
    "Gaps are masculine \u2212 feminine (above 0: the masculine sentences score higher), each with its 95% interval "
    "on the line below: the BLEU gap in BLEU points with its paired bootstrap interval, the accuracy gap in points "
    "with Newcombe's interval. Every figure: the full table."
)


def figure_plain(value: float | None, scale: float = 1.0, signed: bool = False) -> str:
    """A figure times ``scale`` with one decimal (signed for a gap), a minus sign; ``n/a`` when undefined."""
    return "n/a" if value is None else f"{scale * value:{'+' if signed else ''}.1f}".replace("-", "\u2212")


def figure_text(value: float | None, scale: float = 1.0, signed: bool = False) -> str:
    """:func:`figure_plain` as LaTeX."""
    return latex.escape(figure_plain(value, scale, signed))


def _interval(ci: Sequence[float] | None, scale: float = 1.0) -> str:
    """``[low, high]`` of a gap's interval, on the line under the gap; empty without one."""
    return "" if ci is None else f"[{figure_text(ci[0], scale, True)}, {figure_text(ci[1], scale, True)}]"


def compact_table(metrics: Mapping[str, Any], title: str, layout: latex.Layout, label: str) -> list[str]:
    """The lines of the compact table of ``metrics`` (a report's ``metrics.json``): one row of figures per language
    (and the mean), its gaps' intervals on the row under it; the caption ``title`` and :data:`NOTE`, labelled
    ``label``."""
    scopes = list(metrics["languages"].items())
    scopes += [("mean", metrics["macro"])] if len(scopes) > 1 else []
    rows: list[list[str] | None] = []
    for scope, m in scopes:
        rows += [None] if rows else []
        rows.append([latex.escape(scope), figure_text(m.get("bleu")), figure_text(m.get("bleu_gap"), signed=True),
                     figure_text(m.get("accuracy_gap"), 100, True)])  # fmt: skip
        rows.append(["", "", _interval(m.get("bleu_gap_ci95")), _interval(m.get("accuracy_gap_ci95"), 100)])
    caption = layout.caption(f"{title}. {NOTE}")
    return latex.table(HEADER, rows, caption=caption, label=label, fit=False, wide=layout.wide)
