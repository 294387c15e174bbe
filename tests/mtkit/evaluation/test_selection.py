import pytest

from mtkit.config import parse_config
from mtkit.errors import UserError
from mtkit.evaluation.selection import check_selection, describe, raw_value, selection_value

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


def test_progress_line_names_languages_and_gender_figures():
    scores = {**SCORES, "valid_de_bleu": 31.0, "valid_es_bleu": 29.0, "valid_accuracy_pair": 0.5}
    line = describe(scores, "fair_bleu", 0.2, 10)
    assert "BLEU 30.00 (de 31.0 es 29.0)" in line and "gap m-f -3.00" in line and "acc pair 50.0%" in line
    assert "fair BLEU 0.200" in line and line.endswith("best fair_bleu 0.2 at 10")
