"""mtkit/train/preemption.py: with several processes the stop signal is agreed on by a host collective every
StopSignal.EVERY updates (and after a checkpoint), not at every update; one process asks nobody."""

from __future__ import annotations

import signal

import pytest
import torch.distributed as dist

from mtkit.train.preemption import StopSignal


@pytest.fixture
def process_group(tmp_path):
    store = dist.FileStore(str(tmp_path / "store"), 1)
    dist.init_process_group("gloo", store=store, rank=0, world_size=1)
    yield
    dist.destroy_process_group()


def test_processes_agree_every_few_updates_and_after_a_checkpoint(process_group, monkeypatch):
    calls = []
    original = dist.all_reduce
    monkeypatch.setattr(dist, "all_reduce", lambda *a, **k: calls.append(1) or original(*a, **k))
    stop = StopSignal(world_size=2)  # as a launcher's process sees it: a gloo group beside the training's
    try:
        for step in range(1, 33):
            assert stop.agreed(step) is None
        assert len(calls) == 32 // StopSignal.EVERY
        stop.received = "SIGTERM"
        assert stop.agreed(StopSignal.EVERY + 1) is None  # not an agreement step: the others are not asked yet
        assert stop.agreed(StopSignal.EVERY + 1, now=True) == "SIGTERM"  # after a checkpoint: asked
        assert stop.agreed(2 * StopSignal.EVERY) == "SIGTERM"
    finally:
        stop.restore()


def test_one_process_answers_at_once_without_a_collective(monkeypatch):
    monkeypatch.setattr(dist, "all_reduce", lambda *a, **k: pytest.fail("no collective with one process"))
    stop = StopSignal(world_size=1)
    try:
        stop._note(signal.SIGTERM, None)
        assert stop.agreed(3) == "SIGTERM"
    finally:
        stop.restore()
