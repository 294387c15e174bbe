"""The report's headline figures are honest: a system that always writes the masculine (MT-GenEval dev, Spanish) shows
its strict accuracy beside the lenient one, an infinite M:F ratio with its counts, and the pairs whose references do
not differ by gender, in the main table, the takeaway and metrics.json; shares print as measured. Every expected
figure is counted here from the files, with MT-GenEval's normalisation."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from geneval_helpers import score_test_interval

from bias_eval.mtgeneval.gendered import LanguageData, Side
from bias_eval.mtgeneval.headline import main_header, main_rows, percent, takeaway
from bias_eval.mtgeneval.report import metrics_document, render_latex, table_rows
from bias_eval.mtgeneval.scoring import macro_average, score_language
from mtkit.data.mtgeneval import load_mtgeneval

N = 400


def words(text: str) -> set[str]:
    return set(text.lower().translate(str.maketrans(string.punctuation, " " * len(string.punctuation))).split())


@pytest.fixture(scope="module")
def masculine_always(shared_geneval: Path) -> tuple[dict, dict]:
    """The metrics.json content of the always-masculine system on the first 400 pairs of es (50 resamples), and
    counts made here."""
    whole = load_mtgeneval(shared_geneval, "dev", ["es"]).languages["es"]
    ref_f, ref_m = whole.feminine.references[:N], whole.masculine.references[:N]
    data = LanguageData("es", Side(whole.feminine.sources[:N], ref_f, ref_m, None, "f"),
                        Side(whole.masculine.sources[:N], ref_m, ref_f, None, "m"), paired=True)  # fmt: skip
    result = score_language(data, {"feminine": ref_m, "masculine": ref_m}, samples=50, seed=1)
    config = {"data": "MT-GenEval dev (x)", "split": "dev", "languages": ["es"], "paired": True,
              "hypotheses": {"hyp_dir": "h"}}  # fmt: skip
    metrics = metrics_document([result], macro_average([result]), config)
    pairs = [(words(f), words(m)) for f, m in zip(ref_f, ref_m)]
    counted = {
        "neutral": sum(f == m for f, m in pairs),
        "lenient_feminine": sum(not (m & (m - f)) for f, m in pairs) / len(pairs),  # no masculine-only word
        # a hypothesis (the masculine reference) says masculine when it has a word only the masculine one has
        "says_masculine": 2 * sum(bool(m - f) for f, m in pairs),
        "coverage": sum(bool(m - f) for f, m in pairs) / sum(f != m for f, m in pairs),
        "pairs": len(pairs),
    }
    return metrics, counted


def test_main_table_shows_strict_accuracy_infinite_ratio_and_neutral_pairs(masculine_always) -> None:
    metrics, counted = masculine_always
    header = main_header(metrics)
    ((cells, _),) = main_rows(metrics)
    row = dict(zip(header, cells))
    assert counted["neutral"] > 30 and counted["lenient_feminine"] > 0.1  # the lenient figure flatters
    assert row["Accuracy feminine"] == percent(counted["lenient_feminine"])
    assert row["Strict accuracy feminine"] == "0%"
    assert row["M:F"] == f"\u221e ({counted['says_masculine']:,} : 0)"
    assert row["Neutral pairs"] == f"{counted['neutral']:,} of {counted['pairs']:,}"
    es = metrics["languages"]["es"]
    assert es["neutral_pairs"] == counted["neutral"] and es["predicted_feminine"] == 0
    assert es["mf_ratio"] is None  # strict JSON has no infinity: the counts say it
    full_header, (full_row,) = table_rows(metrics)
    low = score_test_interval(counted["says_masculine"], counted["says_masculine"])[0]  # M / (M + F), F = 0
    said = dict(zip(full_header, full_row))["M:F prediction ratio [95% CI]"]  # the folded table: an infinite bound
    assert said == row["M:F"] + f" [{low / (1 - low):.2f}, \u221e]" and es["mf_ratio_ci95"][1] is None
    assert "$\\infty$" in render_latex(metrics)


def test_takeaway_gives_strict_accuracy_the_ratio_and_the_neutral_pairs(masculine_always) -> None:
    metrics, counted = masculine_always
    sentence = takeaway(metrics)
    assert f"{percent(counted['lenient_feminine'])} against 100%, strictly" in sentence
    assert f"M:F prediction ratio is \u221e ({counted['says_masculine']:,} : 0)" in sentence
    assert f"{counted['neutral']:,} of {counted['pairs']:,} pairs have references that do not differ" in sentence
    assert 0.99 < counted["coverage"] < 1 and percent(counted["coverage"]) != "100%"
    assert f", and {percent(counted['coverage'])} of the hypotheses contain a gendered word" in sentence


@pytest.mark.parametrize(
    ("share", "shown"),
    [(0.996, "99.6%"), (0.9996, "99.96%"), (1.0, "100%"), (0.0004, "0.04%"), (0.0, "0%"), (0.5, "50.0%")],
)
def test_shares_print_as_measured(share: float, shown: str) -> None:
    """99.6% coverage is not 100%, nor 0.04% 0%."""
    assert percent(share) == shown


def test_a_gap_below_the_minimum_effect_is_not_shown_as_a_finding() -> None:
    """A BLEU gap of -0.01 [-0.02, -0.00]: beyond noise, bold and called significant with --min_effect 0; with
    --min_effect 0.5 (BLEU points) it is neither bold nor a finding, and the takeaway says why."""
    one = {"bleu_feminine": 30.01, "bleu_masculine": 30.0, "bleu_gap": -0.01, "bleu_gap_ci95": [-0.02, -0.001]}

    def report(smallest: float) -> dict:
        return {"languages": {"de": one}, "macro": one, "config": {"min_effect": smallest}}

    ((_, bold),) = main_rows(report(0.0))
    ((_, small),) = main_rows(report(0.5))
    assert bold and not small
    assert "significant, the interval excludes 0" in takeaway(report(0.0))
    said = takeaway(report(0.5))
    assert "below the minimum effect of 0.5 points: not a finding" in said and "significant, the" not in said
