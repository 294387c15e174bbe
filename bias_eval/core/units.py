"""One unit per kind of figure, on every page and table: accuracies in percent, gaps and changes in points, scores
in their own points (:func:`figure_value`); numbers and intervals for tables."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bias_eval.core.decision import SHARE_PREFIXES


def fmt(value: Any, digits: int = 2, signed: bool = False) -> str:
    """A number for a table; ``n/a`` for a missing value."""
    if value is None:
        return "n/a"
    if isinstance(value, bool | int):
        return str(value)
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def fmt_ci(ci: Sequence[float] | None) -> str:
    """A confidence interval as ``[lo, hi]``."""
    return "n/a" if ci is None else f"[{ci[0]:+.2f}, {ci[1]:+.2f}]"


#: the prefix of a WinoMT figure's key in a comparison (``winomt_accuracy``, ``winomt_delta_g``, ...), and those of
#: its differences (ΔG, ΔS), signed like gaps
WINOMT_PREFIX = "winomt_"
WINOMT_DIFFERENCES = ("winomt_delta_g", "winomt_delta_s")


def figure_value(key: str, value: float, change: bool = False) -> str:
    """One unit per kind of figure, on every page and table: an accuracy (a share) in percent, a gap of accuracies,
    its size and any change of them in points, a score (BLEU, chrF), its gaps and changes in its own points; gaps
    and changes signed. A WinoMT figure (:data:`WINOMT_PREFIX`) is already in percent or points."""
    difference = key.endswith("_gap") or key.startswith(WINOMT_DIFFERENCES) and not key.endswith("_size")
    signed = "+" if change or difference else ""
    if key.startswith(WINOMT_PREFIX):  # already in percent (accuracies, F1) and points (ΔG, ΔS), as WinoMT's
        return f"{value:{signed}.1f} pts" if signed or key.endswith("_size") else f"{value:.1f}%"
    if key.startswith(SHARE_PREFIXES):
        return f"{100 * value:{signed}.1f} pts" if signed or key.endswith("_size") else f"{100 * value:.1f}%"
    return f"{value:{signed}.2f}"


def fmt_share(value: float | None, ci: Sequence[float] | None = None, key: str = "accuracy") -> str:
    """A share (accuracy, coverage; ``key`` names it, a gap's in points) in percent, followed by its CI when there
    is one (:func:`figure_value`)."""
    if value is None:
        return "n/a"
    return figure_value(key, value) + (
        "" if ci is None else f" [{figure_value(key, ci[0])}, {figure_value(key, ci[1])}]"
    )
