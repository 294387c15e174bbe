"""Early stopping with patience on a run whose validation scores cannot improve: a learning rate of 1e-30 moves no
float32 weight, so every evaluation after the first repeats it and none is a new best."""

import json

from testing_utils import FAST_RUN, train_in_process


def test_patience_stops_a_run_that_stopped_improving_and_a_relaunch_does_not_train_on(multi30k_small, tmp_path):
    out = tmp_path / "run"
    args = [
        "--data_dir", str(multi30k_small), *FAST_RUN, "--output_dir", str(out), "--max_train_samples", "200",
        "--learning_rate", "1e-30", "--warmup_steps", "0", "--eval_steps", "2", "--save_steps", "100",
        "--eval_max_samples", "4", "--max_new_tokens", "4", "--metric_for_best_model", "loss",
        "--early_stopping_patience", "2",
    ]  # fmt: skip
    res = train_in_process(*args, "--max_steps", "20")
    assert res.returncode == 0, res.stderr[-3000:]
    # evaluations at 2 (the first: best), 4 and 6 (no new best): the second without one stops the run at 6
    assert "--early_stopping_patience 2: 2 evaluations in a row without a new best validation loss" in res.stdout
    results = json.loads((out / "results.json").read_text())
    assert results["step"] == 6 and results["best_step"] == 2
    valid = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    losses = [r["valid_loss"] for r in valid if "valid_loss" in r]
    assert len(losses) == 3 and len(set(losses)) == 1  # the metric could not improve
    assert (out / "checkpoints" / "step-0000006").is_dir() and (out / "final" / "model.safetensors").is_file()
    assert "test_bleu" in results  # exported as a finished run is
    before = (out / "metrics.jsonl").read_text()

    again = train_in_process(*args, "--max_steps", "30")  # even with more updates allowed
    assert again.returncode == 0, again.stderr[-3000:]
    assert "the run stopped early at update 6; not training on" in again.stdout
    assert json.loads((out / "results.json").read_text())["step"] == 6
    steps = [json.loads(x)["step"] for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert max(steps) == 6 and (out / "metrics.jsonl").read_text().startswith(before)
    assert sorted(p.name for p in (out / "checkpoints").glob("step-*")) == ["step-0000002", "step-0000006"]
