import json

import pytest
import torch
from accelerate import Accelerator

from mtkit.checkpoint import CheckpointManager, TrainerState


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
