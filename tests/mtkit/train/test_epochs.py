"""Epoch checkpoints kept through ``--save_total_limit``'s rotation, and final/ as the mean of the last of them."""

import json

import pytest
import torch
from safetensors.torch import load_file
from testing_utils import FAST_RUN, as_written, train_in_process

from mtkit.errors import UserError
from mtkit.export.averaging import average_checkpoints


def mean_of(folders) -> dict[str, torch.Tensor]:
    """The element-wise mean of the checkpoints' saved weights, computed here in float64."""
    loaded = [load_file(f / "model.safetensors") for f in folders]
    return {k: torch.stack([w[k].double() for w in loaded]).mean(0).float() for k in loaded[0]}


@pytest.fixture(scope="module")
def epoch_run(multi30k_small, tmp_path_factory):
    out = tmp_path_factory.mktemp("epochs") / "run"
    res = train_in_process(
        "--data_dir", str(multi30k_small), *FAST_RUN, "--output_dir", str(out), "--max_train_samples", "150",
        "--max_steps", "16", "--logging_steps", "1", "--eval_steps", "100", "--save_steps", "100",
        "--save_total_limit", "1", "--keep_last_epochs", "3", "--average_last_epochs", "2",
        "--eval_max_samples", "4", "--max_new_tokens", "4", "--test_split", "none",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    return out


def test_epoch_checkpoints_are_the_updates_that_end_an_epoch_and_survive_rotation(epoch_run):
    rows = [json.loads(line) for line in (epoch_run / "metrics.jsonl").read_text().splitlines()]
    logged = {r["step"]: r["epoch"] for r in rows if "epoch" in r}
    assert sorted(logged) == list(range(1, 17))
    # the training log's epoch (counted from 0) moves on at the update after the one that finished the epoch
    ends = [[logged[s + 1], s] for s in sorted(logged) if s + 1 in logged and logged[s + 1] > logged[s]]
    assert len(ends) >= 3
    state = json.loads((epoch_run / "checkpoints" / "step-0000016" / "trainer_state.json").read_text())
    assert state["epoch_steps"] == ends[-3:]
    kept = sorted(p.name for p in (epoch_run / "checkpoints").glob("step-*"))
    assert kept == sorted({f"step-{s:07d}" for _, s in ends[-3:]} | {"step-0000016"})  # save_total_limit 1


def test_final_is_the_mean_of_the_last_epoch_checkpoints(epoch_run, tmp_path):
    state = json.loads((epoch_run / "checkpoints" / "step-0000016" / "trainer_state.json").read_text())
    steps = [s for _, s in state["epoch_steps"][-2:]]
    results = json.loads((epoch_run / "results.json").read_text())
    assert results["averaged_steps"] == steps
    folders = [epoch_run / "checkpoints" / f"step-{s:07d}" for s in steps]
    expected, got = mean_of(folders), load_file(epoch_run / "final" / "model.safetensors")
    assert got.keys() <= expected.keys() and len(got) > 10
    for key, value in got.items():  # the weights alone, averaged: exactly the mean computed here
        assert value.dtype == expected[key].dtype and torch.equal(value, as_written(expected[key], value)), key
    last = load_file(folders[-1] / "model.safetensors")
    assert not torch.equal(
        got["model.shared.weight"], as_written(last["model.shared.weight"], got["model.shared.weight"])
    )
    assert "mean of the last 2 epoch checkpoints" in (epoch_run / "final" / "README.md").read_text()

    chosen = average_checkpoints(epoch_run, tmp_path / "three", last_epochs=3, log=lambda _: None)
    assert [p.name for p in chosen] == [f"step-{s:07d}" for _, s in state["epoch_steps"]]
    for key, value in load_file(tmp_path / "three" / "model.safetensors").items():
        torch.testing.assert_close(value, as_written(mean_of(chosen)[key], value), rtol=1e-6, atol=1e-9)
    with pytest.raises(UserError, match="3 epoch checkpoints, 4 asked for"):
        average_checkpoints(epoch_run, tmp_path / "four", last_epochs=4, log=lambda _: None)


def test_an_epoch_ending_inside_an_accumulated_update_and_across_a_resume(epoch_run, multi30k_small, tmp_path):
    # the run above updates once per batch, so its epoch checkpoints give each epoch's batches: with 2 batches per
    # update, epoch k ends in update ceil(batches of epochs 1..k / 2), inside an update when that count is odd
    ends = json.loads((epoch_run / "checkpoints" / "step-0000016" / "trainer_state.json").read_text())["epoch_steps"]
    expected = [[epoch, -(-batches // 2)] for epoch, batches in ends]
    assert any(batches % 2 for _, batches in ends)
    out = tmp_path / "run"
    args = [
        "--data_dir", str(multi30k_small), *FAST_RUN, "--output_dir", str(out), "--max_train_samples", "150",
        "--gradient_accumulation_steps", "2", "--eval_steps", "100", "--save_steps", "100", "--keep_last_epochs", "3",
        "--eval_max_samples", "4", "--max_new_tokens", "4", "--test_split", "none",
    ]  # fmt: skip
    for steps in (4, expected[-1][1]):  # stopped inside epoch 2, then relaunched to the end of epoch 3
        res = train_in_process(*args, "--max_steps", str(steps))
        assert res.returncode == 0, res.stderr[-3000:]
    state = json.loads((out / "checkpoints" / f"step-{expected[-1][1]:07d}" / "trainer_state.json").read_text())
    assert state["epoch_steps"] == expected


def test_two_ddp_processes_average_their_epoch_checkpoints(ddp_run):
    """The shared 2-process run (tests/conftest.py: ``ddp_run``) averages its last two epochs into final/."""
    steps = json.loads((ddp_run / "results.json").read_text())["averaged_steps"]
    assert len(steps) == 2
    folders = [ddp_run / "checkpoints" / f"step-{s:07d}" for s in steps]
    expected, last = mean_of(folders), load_file(folders[-1] / "model.safetensors")
    got = load_file(ddp_run / "final" / "model.safetensors")
    assert got.keys() <= expected.keys() and len(got) > 10
    assert all(torch.equal(v, as_written(expected[k], v)) for k, v in got.items())  # read on every process, unwrapped
    assert any(not torch.equal(v, as_written(last[k], v)) for k, v in got.items())  # not the last epoch's weights
