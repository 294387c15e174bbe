"""The run record of a real run (``tiny_run``: 40 updates, a test split, a CTranslate2 conversion): ``results.json``
holds what the trainer and the end-of-run steps put into it, in their order, each value checked against the run's
other files read here, written once as JSON with nothing else."""

import json

from testing_utils import rows

from mtkit.config import parse_config
from mtkit.evaluation.scores import scoring
from mtkit.train.record import RunRecord


def test_results_json_is_the_record_of_a_real_run(tiny_run):
    text = (tiny_run / "results.json").read_text(encoding="utf-8")
    results = json.loads(text)
    log = rows(tiny_run / "metrics.jsonl")
    test = next(r for r in log if "test_bleu" in r)  # the test scores, logged at the end
    test_keys = [k for k in test if k.startswith("test_")]
    assert test_keys[:2] == ["test_bleu", "test_chrf"]
    assert list(results) == [
        *("step", "metric_for_best_model", "best_step", "best_valid_bleu"),  # the trainer's
        *test_keys,
        *("scoring", "environment", "ct2_model"),  # the end-of-run steps'
    ]
    state = json.loads((tiny_run / "checkpoints" / "checkpoint_last" / "trainer_state.json").read_text())
    valid = {r["step"]: r["valid_bleu"] for r in log if "valid_bleu" in r}
    assert results["step"] == state["step"] == 40 and results["metric_for_best_model"] == "bleu"
    assert results["best_step"] == state["best_step"] and results["best_valid_bleu"] == valid[state["best_step"]]
    assert {k: results[k] for k in test_keys} == {k: test[k] for k in test_keys}
    cfg = parse_config(["--config", str(tiny_run / "config.yaml")])
    assert results["scoring"] == scoring(cfg.data.languages(), cfg.eval.paper_bleu)
    env = results["environment"]
    assert env["pairs"] == {"train": 3000, "validation": 64, "test": 48}
    assert (env["distributed_type"], env["num_processes"], env["zero_stage"]) == ("NO", 1, None)
    assert results["ct2_model"] == str(tiny_run / "final_ct2") and (tiny_run / "final_ct2" / "model.bin").is_file()
    assert text == json.dumps(results, indent=2)  # as it always was: indented JSON, no trailing newline

    record = RunRecord.read(tiny_run)  # what a model made after the fact reads back
    assert record.results == results and record.bias is None
    assert record.counts == json.loads((tiny_run / "data_counts.json").read_text())
    assert record.counts["train"] == {"de": 3000}
