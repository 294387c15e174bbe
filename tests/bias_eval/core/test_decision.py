"""The rule that calls a change a finding: Holm's adjustment against its step-down definition written out here, the
minimum effect in points, and bad flag values refused in one line."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bias_eval.core.decision import Rule, decide, holm, resample_note
from bias_eval.core.errors import UserError


def holm_by_definition(p: list[float]) -> list[float]:
    """Holm (1979): reject the i-th smallest when every j-th smallest, j <= i, is below level / (m - j + 1); the
    adjusted p of the i-th smallest is the largest (m - j + 1) p_(j) over j <= i, capped at 1."""
    m = len(p)
    ranked = sorted(p)
    out = []
    for x in p:
        i = ranked.index(x)
        out.append(min(1.0, max((m - j) * ranked[j] for j in range(i + 1))))
    return out


@given(st.lists(st.floats(0, 1), min_size=1, max_size=30))
def test_holm_equals_its_step_down_definition(p: list[float]) -> None:
    assert holm(p) == pytest.approx(holm_by_definition(p))
    assert all(a >= x for a, x in zip(holm(p), p))


def test_a_change_below_the_minimum_effect_is_not_a_finding() -> None:
    """A BLEU gap of -0.01 [-0.02, -0.00] with p 0.001 and an accuracy change of 3 points, p 0.01: with
    --min_effect 0.5 the BLEU gap is no finding and the accuracy's is; Holm over the two multiplies the smaller p by
    2; with --p_adjust none the raw p decides."""
    rows = [
        {"figure": "bleu_gap", "change": -0.01, "p_value": 0.001},
        {"figure": "accuracy_feminine", "change": 0.03, "p_value": 0.01},
        {"figure": "bleu", "missing": True},
    ]
    decide(rows, Rule(min_effect=0.5))
    assert [r.get("significant") for r in rows] == [False, True, None]
    assert rows[0]["p_adjusted"] == pytest.approx(0.002) and rows[1]["p_adjusted"] == pytest.approx(0.01)
    decide(rows, Rule(p_adjust="none"))
    assert [r["p_adjusted"] for r in rows[:2]] == [0.001, 0.01] and rows[0]["significant"]


@pytest.mark.parametrize(
    ("kwargs", "flag"), [({"p_adjust": "bonferroni"}, "--p_adjust"), ({"min_effect": -1}, "--min_effect")]
)
def test_bad_rule_values_are_one_line_errors(kwargs: dict, flag: str) -> None:
    with pytest.raises(UserError, match=f"^{flag}: "):
        Rule(**kwargs)


def test_the_note_says_when_holm_lifts_the_bootstrap_floor_to_the_level() -> None:
    """1000 resamples: floor 2/1001; over 15 tests Holm keeps it below 0.05 (0.03), over 45 it does not (0.09): the
    note names the resamples that would (2 x 45 / 0.05 = 1800); no note without Holm."""
    assert resample_note(1000, 15, Rule()) is None and resample_note(1000, 45, Rule(p_adjust="none")) is None
    said = resample_note(1000, 45, Rule())
    assert said is not None and "--bootstrap_samples 1800 or more" in said
    assert 2 * 45 / (1800 + 1) < 0.05 <= 2 * 45 / (1799 + 1)
