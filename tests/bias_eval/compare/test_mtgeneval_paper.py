"""The comparison's first paragraph counts the findings of the decision rule: Holm-adjusted p-values by default, the
raw ones with --p_adjust none, and no change below --min_effect called a finding."""

from __future__ import annotations

import re

from bias_eval.compare.mtgeneval_paper import summary
from bias_eval.core.decision import Rule, decide


def _paired(rule: Rule) -> dict:
    """Three paired tests with raw p 0.01, 0.03 and 0.04 (Holm: 0.03, 0.06, 0.06); the last a 0.1-point BLEU gap."""
    rows = [
        {"lang": "de", "figure": "accuracy_gap_size", "title": "acc gap size", "test": "paired bootstrap",
         "before": 0.10, "after": 0.05, "change": -0.05, "ci95": [-0.08, -0.01], "p_value": 0.01},
        {"lang": "de", "figure": "accuracy_feminine", "title": "acc f", "test": "McNemar exact",
         "before": 0.80, "after": 0.85, "change": 0.05, "ci95": [0.01, 0.09], "p_value": 0.03},
        {"lang": "de", "figure": "bleu_gap_size", "title": "BLEU gap size", "test": "paired bootstrap",
         "before": 0.2, "after": 0.1, "change": -0.1, "ci95": [-0.2, -0.01], "p_value": 0.04},
    ]  # fmt: skip
    decide(rows, rule)
    return {"refused": None, "level": 0.05, "rows": rows, "rule": rule.describe()}


def _count(text: str) -> int:
    return int(re.search(r"(\d+) of the 3 paired tests", text).group(1))


def test_the_paragraph_counts_holm_adjusted_findings_by_default() -> None:
    holm, raw = (summary(_paired(rule), ["a", "b"]) for rule in (Rule(), Rule(p_adjust="none")))
    assert _count(holm) == 1 and "Holm-adjusted p < 0.05" in holm and "p = 0.01, adjusted = 0.03" in holm
    assert "narrows the accuracy gap" in holm and "feminine accuracy" not in holm  # adjusted p 0.06: no finding
    assert _count(raw) == 3 and "raises feminine accuracy" in raw and "adjusted" not in raw


def test_a_change_below_the_minimum_effect_is_not_called_a_finding() -> None:
    """--min_effect 1 (point): the 0.1-point BLEU gap change is beyond noise (raw p 0.04) but no finding."""
    said = summary(_paired(Rule(p_adjust="none", min_effect=1.0)), ["a", "b"])
    assert _count(said) == 2 and "the BLEU gap" not in said and "at least 1 points" in said
