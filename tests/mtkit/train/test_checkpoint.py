import errno
import json
import os
from pathlib import Path

import pytest
import torch
from accelerate import Accelerator

from mtkit.errors import UserError
from mtkit.train.checkpoint import CheckpointManager, TrainerState, problem_with


@pytest.fixture
def parts():
    acc = Accelerator(cpu=True)
    model = torch.nn.Linear(3, 2)
    opt = torch.optim.AdamW(model.parameters(), lr=0.1)
    model, opt = acc.prepare(model, opt)
    return acc, model, opt


def test_links_rotation_and_reload(parts, tmp_path):
    acc, model, opt = parts
    manager = CheckpointManager(tmp_path, acc, keep_last=2)
    assert manager.last is None and manager.best is None
    saved = {}
    for step in range(1, 6):
        with torch.no_grad():
            model.weight.add_(1.0)
        saved[step] = model.weight.detach().clone()
        manager.save(TrainerState(step=step, best_metric=float(step == 2)), is_best=step == 2)
    names = sorted(p.name for p in (tmp_path / "checkpoints").iterdir())
    assert names == ["checkpoint_best", "checkpoint_last", "step-0000002", "step-0000004", "step-0000005"]
    assert manager.last.name == "step-0000005" and manager.best.name == "step-0000002"
    assert json.loads((manager.best / "trainer_state.json").read_text())["step"] == 2

    state = manager.load(manager.best)
    assert state.step == 2 and state.best_metric == 1.0
    assert torch.equal(model.weight, saved[2])


def test_saving_the_same_step_again_replaces_it(parts, tmp_path):
    acc, _, _ = parts
    manager = CheckpointManager(tmp_path, acc, keep_last=3)
    manager.save(TrainerState(step=7, epoch=0))
    manager.save(TrainerState(step=7, epoch=1))
    assert json.loads((manager.last / "trainer_state.json").read_text())["epoch"] == 1
    assert not list((tmp_path / "checkpoints").glob(".tmp*"))


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS])
def test_a_save_that_cannot_be_written_leaves_the_previous_checkpoint(parts, tmp_path, monkeypatch, code):
    """Disk full or a read-only file system half-way through a save (injected: the tests run as root, whom
    permissions do not stop): one clear error, no partial folder, the previous checkpoint still the one to resume."""
    acc, _, _ = parts
    manager = CheckpointManager(tmp_path, acc)
    manager.save(TrainerState(step=1))
    files = {p: p.read_bytes() for p in (tmp_path / "checkpoints").rglob("*") if p.is_file()}
    real_save = acc.save_state

    def fails_half_way(folder):
        real_save(folder)
        raise OSError(code, os.strerror(code), str(Path(folder) / "optimizer.bin"))

    monkeypatch.setattr(acc, "save_state", fails_half_way)
    with pytest.raises(UserError, match=f"cannot write checkpoint .tmp-step-0000002 \\({os.strerror(code)}\\)"):
        manager.save(TrainerState(step=2))
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == ["checkpoint_last", "step-0000001"]
    assert {p: p.read_bytes() for p in (tmp_path / "checkpoints").rglob("*") if p.is_file()} == files
    assert manager.last.name == "step-0000001" and problem_with(manager.last) is None


def test_manifest_finds_missing_and_truncated_files(parts, tmp_path):
    acc, _, _ = parts
    folder = CheckpointManager(tmp_path, acc).save(TrainerState(step=3))
    assert problem_with(folder) is None
    weights = next(p for p in folder.iterdir() if p.name.startswith("model"))
    weights.write_bytes(weights.read_bytes()[:-1])
    assert (
        problem_with(folder)
        == f"{weights.name} has {weights.stat().st_size} bytes, {weights.stat().st_size + 1} were written"
    )
    weights.unlink()
    assert problem_with(folder) == f"{weights.name} is missing"
