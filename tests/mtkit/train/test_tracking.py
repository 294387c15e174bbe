import json

import pytest
from accelerate import Accelerator
from accelerate.tracking import get_available_trackers
from accelerate.utils import LoggerType
from testing_utils import FAST_RUN, train_in_process

from mtkit.errors import UserError
from mtkit.train.tracking import MetricsLog, plot_curves, read_metrics, tracker_names, validation_records


def test_tracker_names():
    assert tracker_names("tensorboard, wandb") == ["tensorboard", "wandb"]
    assert tracker_names("none") == [] and tracker_names("") == []


def test_a_tracker_accelerate_does_not_know_is_refused_in_one_line(multi30k_small, tmp_path):
    """A misspelt tracker (accelerate's own check would end the run in a traceback when the Accelerator is built):
    one line naming every tracker accelerate knows, exit status 2, nothing written."""
    out = tmp_path / "run"
    res = train_in_process("--data_dir", str(multi30k_small), *FAST_RUN, "--output_dir", str(out),
                           "--report_to", "tensorboard,tensorbaord")  # fmt: skip
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1, res.stderr[-3000:]
    assert lines[0].startswith("error: --report_to: unknown tracker 'tensorbaord'; accelerate knows ")
    assert all(name in lines[0] for name in LoggerType.list()) and not out.exists()


def test_a_tracker_that_is_not_installed_is_refused():
    """accelerate drops a tracker it knows but cannot import without a word: the run would log nowhere."""
    missing = [name for name in LoggerType.list() if name != "all" and name not in get_available_trackers()]
    if not missing:
        pytest.skip("every tracker accelerate knows is installed here")
    with pytest.raises(UserError, match=f"--report_to: tracker '{missing[0]}' is not installed"):
        tracker_names(f"tensorboard,{missing[0]}")


def test_metrics_log_resumes_after_its_checkpoint_and_plots(tmp_path):
    acc = Accelerator(cpu=True)
    log = MetricsLog(tmp_path, acc, resume_step=0)
    for step in (10, 20, 30):
        log.log({"loss": 5.0 - step / 10}, step)
    log.log({"valid_loss": 3.0, "valid_bleu": 12.5}, 20)
    MetricsLog(tmp_path, acc, resume_step=20)  # a run resumed from the update-20 checkpoint
    records = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [10, 20, 20]
    assert read_metrics(tmp_path) == records and read_metrics(tmp_path / "missing") == []
    assert validation_records(records) == {20: records[2]}
    png = plot_curves(tmp_path, tmp_path / "curves.png")
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert plot_curves(tmp_path / "missing", tmp_path / "none.png") is None
