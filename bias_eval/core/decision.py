"""The one rule that calls a change a finding, shared by the report comparison and the mitigation verdict: a change is
a finding when its p-value, Holm-adjusted over the table's tests (``--p_adjust holm``, the default) or raw
(``none``), is below 0.05 and its size is at least ``--min_effect`` points; every interval shown beside it is the
unadjusted 95% interval of the same test, which excludes 0 exactly when the raw p is below 0.05."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bias_eval.core.errors import UserError

LEVEL = 0.05
#: the ways p-values of one table are adjusted for its number of tests (``--p_adjust``), the default first
P_ADJUSTS = ("holm", "none")
#: the smallest change called a finding, in points (``--min_effect``): percentage points for shares and their gaps,
#: BLEU or chrF points for those
MIN_EFFECT = 0.0
#: key prefixes of the figures on the 0-1 scale, whose points are hundredths
SHARE_PREFIXES = ("accuracy", "strict_accuracy", "coverage")

RULE_DEFINITION = (
    "A change is a finding when its p-value, Holm-adjusted over every test of its table (--p_adjust holm, the "
    "default; none: raw), is below 0.05 and its size is at least --min_effect points (points of percent for "
    "accuracies and their gaps, BLEU or chrF points for those; 0 by default); the 95% interval beside it is the raw "
    "test's, which excludes 0 exactly when the raw p is below 0.05."
)


@dataclass(frozen=True)
class Rule:
    """How p-values are adjusted (:data:`P_ADJUSTS`) and the smallest change called a finding, in points."""

    p_adjust: str = P_ADJUSTS[0]
    min_effect: float = MIN_EFFECT
    level: float = LEVEL

    def __post_init__(self) -> None:
        if self.p_adjust not in P_ADJUSTS:
            raise UserError(f"--p_adjust: expected one of {', '.join(P_ADJUSTS)}, got {self.p_adjust!r}")
        if not self.min_effect >= 0:
            raise UserError(f"--min_effect: expected a number of points >= 0, got {self.min_effect!r}")

    def describe(self) -> dict[str, Any]:
        """The rule as ``comparison.json`` and ``verdict.json`` record it."""
        return {"level": self.level, "p_adjust": self.p_adjust, "min_effect_points": self.min_effect}


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given: the i-th smallest of m is multiplied by m - i + 1,
    made non-decreasing along that order and capped at 1."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [1.0] * len(p_values)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def points(figure: str, change: float) -> float:
    """A change in points: a share's (or its gap's) in percentage points, a score's in its own points."""
    return 100 * change if figure.startswith(SHARE_PREFIXES) else change


def decide(rows: Sequence[dict[str, Any]], rule: Rule) -> None:
    """Give every tested row of one table (``figure``, ``change``, ``p_value``; rows with ``missing`` are not tests)
    its ``p_adjusted`` and whether it is a finding (``significant``) by ``rule``, in place."""
    tested = [r for r in rows if not r.get("missing")]
    raw = [r["p_value"] for r in tested]
    adjusted = holm(raw) if rule.p_adjust == "holm" else list(raw)
    for row, p in zip(tested, adjusted):
        row["p_adjusted"] = p
        row["significant"] = finding(row, rule)


def holm_samples(samples: int, tests: int, rule: Rule) -> int:
    """Resamples for a paired bootstrap among ``tests`` tests: ``samples``, or under Holm's adjustment enough that the
    bootstrap's smallest p, 2 / (B + 1), times ``tests`` stays at half the level (else a change far beyond noise,
    every resample on one side of 0, could never be a finding beside many other tests)."""
    if rule.p_adjust != "holm":
        return samples
    return max(samples, math.ceil(4 * tests / rule.level) - 1)


def resample_note(samples: int, tests: int, rule: Rule) -> str | None:
    """A sentence when Holm's adjustment over ``tests`` tests takes a paired bootstrap's smallest p, 2 / (B + 1), to
    the level or above, so that a bootstrap row is a finding only when most other tests rank below it; ``None``
    otherwise."""
    if rule.p_adjust != "holm" or not samples or 2 * tests / (samples + 1) < rule.level:
        return None
    need = math.floor(2 * tests / rule.level)
    return (
        f"With {samples} bootstrap resamples the paired bootstrap's smallest p is {2 / (samples + 1):.2g}, and Holm's "
        f"adjustment over {tests} tests multiplies the smallest p by {tests}: a bootstrap-tested change (a gap's size, "
        f"BLEU) is a finding only when most other tests rank before it; reports made with --bootstrap_samples {need} "
        "or more lift that floor."
    )


def finding(row: Mapping[str, Any], rule: Rule) -> bool:
    """Whether a decided row (:func:`decide`) is a finding: adjusted p below the level, size at least the minimum."""
    p = row.get("p_adjusted", row.get("p_value", 1.0))
    big = abs(points(row["figure"], row.get("change") or 0.0)) >= rule.min_effect
    return p < rule.level and big
