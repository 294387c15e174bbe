"""The 'changed' rule of the report comparison and its rows, on crafted metrics."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bias_eval.compare import mtgeneval_paper, winomt_paper
from bias_eval.compare.rows import cells, changed_beyond_noise, compare
from bias_eval.core.bootstrap import language_rng, resample_counts
from bias_eval.core.decision import Rule, decide
from bias_eval.mtgeneval.accuracy import accuracy_figures
from bias_eval.mtgeneval.metrics import gender_decision
from mtkit.data.mtgeneval import load_mtgeneval
from mtkit.errors import UserError


@pytest.mark.parametrize(
    ("before", "before_ci", "after", "after_ci", "expected"),
    [  # the change's interval (MOVER), by hand: change - sqrt(...) to change + sqrt(...)
        (1.0, [0.5, 1.5], 2.0, [1.8, 2.2], True),  # low: 1 - sqrt(0.2^2 + 0.5^2) = 0.46 > 0
        (2.0, [1.8, 2.2], 1.0, [0.5, 1.5], True),  # high: -1 + sqrt(0.5^2 + 0.2^2) = -0.46 < 0
        (1.0, [0.5, 2.5], 2.0, [0.9, 3.1], False),  # low: 1 - sqrt(1.1^2 + 1.5^2) = -0.86
        (1.0, [0.9, 1.1], 1.5, [0.8, 2.2], False),  # low: 0.5 - sqrt(0.7^2 + 0.1^2) = -0.21
        (1.0, [0.9, 1.1], 1.3, [1.2, 1.4], True),  # low: 0.3 - sqrt(0.1^2 + 0.1^2) = 0.16
        (1.0, [0.9, 1.1], 1.12, [1.05, 1.2], False),  # each outside the other's interval, yet low: 0.12 - 0.122 < 0
        (1.0, None, 2.0, [1.8, 2.2], None),  # a figure without a CI
        (None, None, 2.0, [1.8, 2.2], None),
    ],
)
def test_changed_rule(before, before_ci, after, after_ci, expected) -> None:
    assert changed_beyond_noise(before, before_ci, after, after_ci) is expected


def _metrics(langs: dict[str, dict], **config) -> dict:
    return {"languages": langs, "macro": {"bleu": 1.0}, "config": config}


def test_rows_cells_and_notes() -> None:
    before = _metrics(
        {"de": {"n": 10, "accuracy_feminine": 0.8, "accuracy_feminine_ci95": [0.78, 0.82], "bleu_gap": 2.0}},
        seed=1,
    )
    after = _metrics(
        {"de": {"n": 12, "accuracy_feminine": 0.85, "accuracy_feminine_ci95": [0.7, 0.95], "bleu_gap": -1.5}},
        seed=2,
    )
    rows, notes = compare(before, after, ["a", "b"])
    by_key = {row.key: row for row in rows if row.scope == "de"}
    assert [row.scope for row in rows] == ["de"] * 13  # one language: no macro block repeating it
    accuracy = by_key["accuracy_feminine"]
    assert accuracy.change == pytest.approx(0.05) and accuracy.changed is False
    assert cells(accuracy) == ["de", "acc f", "80.0%", "[78.0%, 82.0%]", "85.0%", "[70.0%, 95.0%]", "+5.0 pts", "no"]
    assert cells(by_key["bleu_gap"]) == ["de", "BLEU gap", "+2.00", "n/a", "-1.50", "n/a", "-3.50", "n/a"]
    assert cells(by_key["coverage"])[2:] == ["n/a", "n/a", "n/a", "n/a", "n/a", "n/a"]  # an older report
    assert "The reports differ in seed: a 1, b 2." in notes  # a size differs: bias_eval.compare.comparability


def test_no_common_language() -> None:
    with pytest.raises(UserError, match=r"^AFTER: no language in common with BEFORE \(BEFORE: de; AFTER: es fr\)$"):
        compare(_metrics({"de": {}}), _metrics({"es": {}, "fr": {}}), ["a", "b"])


def test_a_share_of_one_has_an_interval_and_a_few_misses_are_not_a_change(shared_geneval: Path) -> None:
    """Coverage 1.000 against 0.993 (4 of 600 hypotheses of 300 German pairs without a gendered word; McNemar would
    give p = 0.125), 1,000 resamples: the 1.000 has an interval of positive width, and the comparison does not call
    the change beyond noise (a percentile interval of a share of 1 is [1, 1], which called it changed)."""
    whole = load_mtgeneval(shared_geneval, "dev", ["de"]).languages["de"]
    ref_f, ref_m = whole.feminine.references[:300], whole.masculine.references[:300]
    both = [f"{f} {m}" for f, m in zip(ref_f, ref_m)]  # every gendered word of the pair: covers
    missing = ["" if i in (3, 50, 100, 200) else line for i, line in enumerate(both)]
    rng = language_rng(12345, "de")
    counts = dict.fromkeys(("feminine", "masculine"), resample_counts(rng, 300, 1000))
    metrics = []
    for feminine in (both, missing):
        decisions = {
            "feminine": [gender_decision(h, f, m, "de") for h, f, m in zip(feminine, ref_f, ref_m)],
            "masculine": [gender_decision(h, m, f, "de") for h, f, m in zip(both, ref_f, ref_m)],
        }
        figures = accuracy_figures(decisions, True, counts)[0]
        metrics.append({"languages": {"de": figures}, "macro": {}, "config": {}})
    rows, _ = compare(*metrics, ["a", "b"])
    (coverage,) = [r for r in rows if r.scope == "de" and r.key == "coverage"]
    assert coverage.before == 1.0 and coverage.after == pytest.approx(1 - 4 / 600)
    assert coverage.before_ci[0] < 1.0 and coverage.changed is False


def test_macro_rows_only_over_several_languages() -> None:
    """Two languages in both reports: each language's rows, then the macro block; the accuracy gap in points."""
    one = {"accuracy_gap": 0.04, "accuracy_gap_ci95": [0.01, 0.07], "bleu": 20.0}
    rows, _ = compare(_metrics({"de": one, "es": one}), _metrics({"de": one, "es": one}), ["a", "b"])
    assert [row.scope for row in rows] == ["de"] * 13 + ["es"] * 13 + ["macro"] * 13
    gap = next(row for row in rows if row.key == "accuracy_gap")
    assert cells(gap)[2:4] == ["+4.0 pts", "[+1.0 pts, +7.0 pts]"]


def test_a_change_below_the_minimum_effect_is_not_marked_changed() -> None:
    """A BLEU gap of -0.01 whose two intervals are tight enough for MOVER to exclude 0: 'changed' (and highlighted)
    with --min_effect 0, not with --min_effect 0.5 BLEU points."""
    before = _metrics({"de": {"bleu_gap": 0.0, "bleu_gap_ci95": [-0.001, 0.001]}})
    after = _metrics({"de": {"bleu_gap": -0.01, "bleu_gap_ci95": [-0.011, -0.009]}})
    for smallest, expected in ((0.0, True), (0.5, False)):
        rows, _ = compare(before, after, ["a", "b"], smallest)
        gap = next(row for row in rows if row.key == "bleu_gap")
        assert gap.changed is expected and cells(gap)[-1] == ("yes" if expected else "no")


def _stated(change: float, ci: list[float], figure: str, floor: float | None = None) -> list[dict]:
    """One stated paired test, raw p 0.001 (at a bootstrap's floor of 0.001 when ``floor``), beside another of p
    0.004 that Holm's adjustment ranks after it: adjusted 0.002 (``p_floor``: the raw p is a bound)."""
    rows = [{"lang": "de", "figure": figure, "test": "paired bootstrap", "change": change, "ci95": ci,
             "p_value": 0.001, "p_floor": floor},
            {"lang": "de", "figure": "other", "test": "paired bootstrap", "change": 1.0, "ci95": [0.5, 1.5],
             "p_value": 0.004}]  # fmt: skip
    decide(rows, Rule())
    return rows


@settings(max_examples=40, deadline=None)
@given(st.floats(0.5, 40.0), st.floats(0.1, 0.45), st.floats(1.0, 2.0), st.sampled_from([-1, 1]), st.booleans())
def test_both_benchmarks_word_a_change_one_way(size: float, near: float, far: float, sign: int, bound: bool) -> None:
    """The same change in points (an MT-GenEval accuracy as a share, a WinoMT one in points) is said in the same
    words by both comparisons: its size with the interval of its size, in that order, and the p-values with '=' where
    exact and the adjusted one as a bound where the raw one is."""
    ci = sorted((sign * size * near, sign * size * far))
    floor = 0.001 if bound else None
    said = []
    for module, scale, figure in ((mtgeneval_paper, 100, "accuracy_feminine"), (winomt_paper, 1, "winomt_accuracy")):
        rows = _stated(sign * size / scale, [c / scale for c in ci], figure, floor)
        paired = {"refused": None, "level": 0.05, "rows": rows, "rule": Rule().describe()}
        said.append(
            re.search(r"(raises|lowers) \S+ accuracy by .*?\d(?=[;.](\s|$))", module.summary(paired, ["a", "b"]))
        )
    assert all(said), said
    mtgeneval, winomt = (s.group(0) for s in said)
    assert mtgeneval.split(" accuracy ", 1)[1] == winomt.split(" accuracy ", 1)[1], (mtgeneval, winomt)
    low, high = sorted(abs(c) for c in ci)
    verb = "raises" if sign > 0 else "lowers"
    p = "p < 0.0011, adjusted \u2264 0.002" if bound else "p = 0.001, adjusted = 0.002"
    assert winomt == f"{verb} the accuracy by {size:.1f} points [{low:.1f}, {high:.1f}], {p}"
