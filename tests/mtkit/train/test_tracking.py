import json

from accelerate import Accelerator

from mtkit.train.tracking import MetricsLog, plot_curves, tracker_names


def test_tracker_names():
    assert tracker_names("tensorboard, wandb") == ["tensorboard", "wandb"]
    assert tracker_names("none") == [] and tracker_names("") == []


def test_metrics_log_resumes_after_its_checkpoint_and_plots(tmp_path):
    acc = Accelerator(cpu=True)
    log = MetricsLog(tmp_path, acc, resume_step=0)
    for step in (10, 20, 30):
        log.log({"loss": 5.0 - step / 10}, step)
    log.log({"valid_loss": 3.0, "valid_bleu": 12.5}, 20)
    MetricsLog(tmp_path, acc, resume_step=20)  # a run resumed from the update-20 checkpoint
    records = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [10, 20, 20]
    png = plot_curves(tmp_path / "metrics.jsonl", tmp_path / "curves.png")
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert plot_curves(tmp_path / "missing.jsonl", tmp_path / "none.png") is None
