"""The verdict's WinoMT section (mtkit.evaluation.verdict_winomt): each change's figures and its McNemar test on the
same sentences, against the exact two-sided binomial test computed directly (every outcome at most as likely as the
one seen, as scipy.stats.binomtest sums them), and the page's table."""

from __future__ import annotations

import math
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from bias_eval.compare.winomt_tests import Judged
from mtkit.evaluation.verdict_page import winomt_table
from mtkit.evaluation.verdict_winomt import winomt_section


def _metrics(right: list[bool], delta_g: float, delta_s: float) -> dict:
    return {"accuracy": 100.0 * sum(right) / len(right), "accuracy_ci95": [1.0, 99.0], "delta_g": delta_g,
            "delta_s": delta_s, "n": len(right)}  # fmt: skip


def _judged(right: list[bool]) -> Judged:
    """Sentences of alternating gold genders, each predicted as its gold gender where ``right`` and as the other
    where not."""
    gold = ["male" if i % 2 else "female" for i in range(len(right))]
    other = {"male": "female", "female": "male"}
    return Judged.of([{"gold": g, "predicted": g if r else other[g]} for g, r in zip(gold, right)])


def binomial_p(k: int, n: int) -> float:
    """The two-sided exact test of ``k`` of ``n`` at 1/2: the mass of the outcomes no likelier than ``k``."""
    pmf = [math.comb(n, i) / 2**n for i in range(n + 1)]
    return min(1.0, sum(p for p in pmf if p <= pmf[k] * (1 + 1e-9)))


def _direct_p(before: list[bool], after: list[bool]) -> float:
    lost = sum(b and not a for b, a in zip(before, after))
    won = sum(a and not b for b, a in zip(before, after))
    return binomial_p(lost, lost + won)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans(), st.booleans()), min_size=1, max_size=60))
def test_changes_and_mcnemar_against_a_direct_binomial_test(rows: list[tuple[bool, bool, bool]]) -> None:
    start, control, mitigated = ([r[i] for r in rows] for i in range(3))
    judged = {
        "start": {"de": _judged(start)},
        "control": {"de": _judged(control)},
        "mitigated": {"de": _judged(mitigated)},
    }
    reports = {"start": {"de": _metrics(start, 10.0, 20.0)}, "control": {"de": _metrics(control, 8.0, 15.0)},
               "mitigated": {"de": _metrics(mitigated, 2.5, 5.0)}}  # fmt: skip
    section = winomt_section(reports, judged)
    for name, before in (("mitigated_vs_control", control), ("mitigated_vs_start", start)):
        change = section[name]["de"]
        assert abs(change["accuracy_test"]["p_value"] - _direct_p(before, mitigated)) < 1e-9
        assert abs(change["accuracy"] - 100.0 * (sum(mitigated) - sum(before)) / len(rows)) < 1e-9
    assert section["mitigated_vs_start"]["de"]["delta_g"] == -7.5
    assert section["mitigated_vs_control"]["de"]["delta_s"] == -10.0


def test_without_a_control_and_on_the_page(tmp_path: Path) -> None:
    """No control arm: no change against it; the page's table."""
    start = [i % 3 == 0 for i in range(1, 10)]
    mitigated = [True] * 9
    reports = {"start": {"de": _metrics(start, 12.0, 3.0)}, "mitigated": {"de": _metrics(mitigated, 0.0, 0.0)}}
    section = winomt_section(reports, {"start": {"de": _judged(start)}, "mitigated": {"de": _judged(mitigated)}})
    assert section["mitigated_vs_control"] is None and list(section["models"]) == ["start", "mitigated"]
    assert section["mitigated_vs_start"]["de"]["accuracy_test"]["after_only"] == 6
    page = "\n".join(winomt_table(section))
    assert "### de (9 sentences)" in page
    assert f"| mitigated vs start | +66.7 (McNemar p = {binomial_p(0, 6):.3g}; 0 sentences lost, 6 won) |" in page
    assert winomt_table(None) == []


def _f1(judged: list[tuple[str, str]], gender: str) -> float:
    """F1 of one gender in percent, counted here: 2 right / (predictions of it + sentences of it)."""
    right = sum(g == p == gender for g, p in judged)
    return 100 * 2 * right / (sum(p == gender for _, p in judged) + sum(g == gender for g, _ in judged))


def test_delta_g_outcomes_narrowed_widened_and_over_corrected() -> None:
    """200 sentences, half male and half female. Start: every profession masculine (ΔG +66.7, F1 female 0, not n/a).
    Mitigated right everywhere: ΔG narrowed. Masculine for 70% of the female sentences instead of all: against a
    start that got them right, widened. Feminine everywhere, with its own ΔG interval below 0: over-corrected."""
    gold = ["male" if i % 2 else "female" for i in range(200)]
    start = [(g, "male") for g in gold]
    right = [(g, g) for g in gold]
    mostly = [(g, "male" if g == "female" and i % 10 < 7 else g) for i, g in enumerate(gold)]
    feminine = [(g, "female") for g in gold]

    def section(before, after, after_ci=None) -> dict:
        def metrics(judged):
            correct = [g == p for g, p in judged]
            return _metrics(correct, _f1(judged, "male") - _f1(judged, "female"), 0.0)

        reports = {"start": {"de": metrics(before)}, "mitigated": {"de": metrics(after) | {"delta_g_ci95": after_ci}}}
        judged = {n: {"de": Judged.of([{"gold": g, "predicted": p} for g, p in j])}
                  for n, j in (("start", before), ("mitigated", after))}  # fmt: skip
        return winomt_section(reports, judged)["mitigated_vs_start"]["de"]

    narrowed = section(start, right)
    size = next(t for t in narrowed["gap_tests"] if t["figure"] == "f1_gap_size")
    assert abs(size["before"] - (_f1(start, "male") - 0.0)) < 1e-9 and size["after"] == 0.0
    assert narrowed["gap_outcome"] == "narrowed" and "p_adjusted" in size
    assert section(right, mostly)["gap_outcome"] == "widened"
    assert section(start, feminine, [-70.0, -60.0])["gap_outcome"] == "over-corrected"
    page = "\n".join(winomt_table({"languages": ["de"], "n": {"de": 200}, "models": {},
                                   "mitigated_vs_start": {"de": narrowed}}))  # fmt: skip
    assert "narrowed beyond noise" in page
