"""The verdict's WinoMT section (mtkit.evaluation.verdict_winomt): each change's figures and its McNemar test on the
same sentences, against the exact two-sided binomial test computed directly (every outcome at most as likely as the
one seen, as scipy.stats.binomtest sums them), and the page's table."""

from __future__ import annotations

import json
import math
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from mtkit.evaluation.verdict_page import winomt_table
from mtkit.evaluation.verdict_winomt import decisions, winomt_section


def _metrics(right: list[bool], delta_g: float, delta_s: float) -> dict:
    return {"accuracy": 100.0 * sum(right) / len(right), "accuracy_ci95": [1.0, 99.0], "delta_g": delta_g,
            "delta_s": delta_s, "n": len(right)}  # fmt: skip


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
    right = {"start": {"de": start}, "control": {"de": control}, "mitigated": {"de": mitigated}}
    reports = {"start": {"de": _metrics(start, 10.0, 20.0)}, "control": {"de": _metrics(control, 8.0, 15.0)},
               "mitigated": {"de": _metrics(mitigated, 2.5, 5.0)}}  # fmt: skip
    section = winomt_section(reports, right)
    for name, before in (("mitigated_vs_control", control), ("mitigated_vs_start", start)):
        change = section[name]["de"]
        assert abs(change["accuracy_test"]["p_value"] - _direct_p(before, mitigated)) < 1e-9
        assert abs(change["accuracy"] - 100.0 * (sum(mitigated) - sum(before)) / len(rows)) < 1e-9
    assert section["mitigated_vs_start"]["de"]["delta_g"] == -7.5
    assert section["mitigated_vs_control"]["de"]["delta_s"] == -10.0


def test_without_a_control_and_on_the_page(tmp_path: Path) -> None:
    """No control arm: no change against it; decisions read from a report's details, the page's table."""
    rows = [{"line": i, "correct": i % 3 == 0} for i in range(1, 10)]
    (tmp_path / "de.details.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    start = decisions(tmp_path, "de")
    assert start == [i % 3 == 0 for i in range(1, 10)]
    mitigated = [True] * 9
    reports = {"start": {"de": _metrics(start, 12.0, 3.0)}, "mitigated": {"de": _metrics(mitigated, 0.0, 0.0)}}
    section = winomt_section(reports, {"start": {"de": start}, "mitigated": {"de": mitigated}})
    assert section["mitigated_vs_control"] is None and list(section["models"]) == ["start", "mitigated"]
    assert section["mitigated_vs_start"]["de"]["accuracy_test"]["after_only"] == 6
    page = "\n".join(winomt_table(section))
    assert "### de (9 sentences)" in page
    assert f"| mitigated vs start | +66.7 (McNemar p = {binomial_p(0, 6):.3g}; 0 sentences lost, 6 won) |" in page
    assert winomt_table(None) == []
