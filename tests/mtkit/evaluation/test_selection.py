import pytest

from bias_eval.headline import warnings
from mtkit.config import parse_config
from mtkit.errors import UserError
from mtkit.evaluation.selection import check_selection, describe, low_signal_note, raw_value, selection_value

SCORES = {"valid_loss": 2.0, "valid_bleu": 30.0, "valid_chrf": 55.0, "valid_bleu_gap": -3.0, "valid_fair_bleu": 0.2}


def test_larger_is_better_after_orientation():
    assert selection_value(SCORES, "bleu") == 30.0
    assert selection_value(SCORES, "loss") == -2.0  # a lower loss compares larger
    assert raw_value(SCORES, "bleu_gap_abs") == 3.0 and selection_value(SCORES, "bleu_gap_abs") == -3.0
    smaller_gap = {**SCORES, "valid_bleu_gap": 1.0}
    assert selection_value(smaller_gap, "bleu_gap_abs") > selection_value(SCORES, "bleu_gap_abs")


def test_gender_metrics_need_gendered_validation_data():
    cfg = parse_config(["--metric_for_best_model", "fair_bleu"])
    with pytest.raises(UserError, match="^--metric_for_best_model fair_bleu: the validation data has no gender"):
        check_selection(cfg, ["source", "target", "lang"])
    check_selection(cfg, ["source", "target", "lang", "gender"])
    check_selection(parse_config([]), ["source", "target"])  # bleu needs nothing more


def test_paper_bleu_selects_only_when_it_is_scored():
    with pytest.raises(UserError, match="^--metric_for_best_model paper_bleu: needs --paper_bleu"):
        check_selection(parse_config(["--metric_for_best_model", "paper_bleu"]), ["source", "target"])
    cfg = parse_config(["--metric_for_best_model", "paper_bleu", "--paper_bleu", "tokenized"])
    check_selection(cfg, ["source", "target"])
    better = {**SCORES, "valid_paper_bleu": 33.0}
    assert selection_value(better, "paper_bleu") > selection_value({**SCORES, "valid_paper_bleu": 31.0}, "paper_bleu")


def test_progress_line_names_languages_and_gender_figures():
    scores = {**SCORES, "valid_de_bleu": 31.0, "valid_es_bleu": 29.0, "valid_accuracy_pair": 0.5}
    line = describe(scores, "fair_bleu", 0.2, 10)
    assert "BLEU 30.00 (de 31.0 es 29.0)" in line and "gap m-f -3.00" in line and "acc pair 50.0%" in line
    assert "fair BLEU 0.200" in line and line.endswith("best fair_bleu 0.2 at 10")


def test_progress_line_marks_low_coverage_as_the_bias_report_does():
    """acc f 100% with 2.1% coverage (garbage output) is marked, at the bias report's own thresholds."""
    de = {"coverage": 0.021, "bleu": 31.0}
    es = {"coverage": 0.9, "bleu": 29.0}
    scores = {**SCORES, "valid_accuracy_feminine": 1.0, "valid_coverage": 0.46, "valid_de_bleu": 31.0,
              "valid_de_coverage": 0.021, "valid_es_bleu": 29.0, "valid_es_coverage": 0.9}  # fmt: skip
    line = describe(scores, "bleu", 30.0, 10)
    assert "acc f 100.0%" in line and "coverage 46.0%" in line
    caveat = line.split("; read with care: ", 1)[1]
    assert "2.1% of hypotheses contain a gendered word (de)" in caveat and "(es)" not in caveat
    report = warnings({"languages": {"de": de, "es": es}})  # what the bias report says of the same figures
    assert len(report) == 1 and report[0].startswith("de: ")
    assert low_signal_note(scores) == {"valid_warning": caveat}  # metrics.jsonl's record says the same
    fine = {**scores, "valid_de_coverage": 0.6}
    assert "read with care" not in describe(fine, "bleu", 30.0, 10) and low_signal_note(fine) == {}


def test_one_language_and_data_without_gender():
    assert "only 30.0% of hypotheses" in describe({**SCORES, "valid_coverage": 0.3}, "bleu", None, None)
    assert low_signal_note({**SCORES, "valid_bleu": 0.5}) == {}  # no gender figures: nothing to caution
