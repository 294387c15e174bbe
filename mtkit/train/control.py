"""The control arm of a gender-bias mitigation (``--control replay``): the same start trained for as many updates on
the replay alone, with the same schedule, seed, pulls, budgets and checkpoint rule, so that the verdict can tell the
mitigation's own share from what further training on the general data does. It is the one
:class:`~mtkit.train.trainer.Trainer`, given a config derived from the run's (:func:`control_config`), and it trains
on every process of the launch, into ``<output_dir>/control/`` (its own ``final/``, checkpoints and
``metrics.jsonl``; a relaunch resumes it as any run)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import torch.distributed as dist
from accelerate.state import AcceleratorState, GradientState, PartialState

from mtkit.config import RunConfig
from mtkit.train.trainer import Trainer

#: the control arm's run folder, under the mitigation's
CONTROL_DIR = "control"


def control_config(cfg: RunConfig) -> RunConfig:
    """The control arm's config: ``cfg`` with ``<output_dir>/control`` as its run folder, the replay alone to train on
    (``--tuning_pairs false``), no control of its own and nothing uploaded."""
    out = str(Path(cfg.train.output_dir) / CONTROL_DIR)
    train = replace(cfg.train, output_dir=out, push_to_hub=False, hub_model_id=None)
    return replace(cfg, train=train, mitigation=replace(cfg.mitigation, tuning_pairs=False, control="none"))


def fresh_accelerate_state(timeout: timedelta) -> None:
    """accelerate's per-run state cleared for the next run in this process. The run before ended its process group
    (:meth:`Trainer.export`): with several processes, a new one is started here with the backend the launch chose, its
    rendezvous keys under a prefix of their own (the ended group's are still in the launcher's store, and a process
    that read them would wait for a peer that has gone); accelerate then takes it as it is."""
    launch = PartialState()  # kept: which processes, which backend
    if launch.num_processes > 1 and not dist.is_initialized():
        store, rank, size = next(dist.rendezvous("env://"))
        store = dist.PrefixStore(CONTROL_DIR, store)
        dist.init_process_group(launch.backend, store=store, rank=rank, world_size=size, timeout=timeout)
    AcceleratorState._reset_state()
    GradientState._reset_state()


def train_control(cfg: RunConfig) -> Trainer:
    """Train the control arm of the mitigation ``cfg`` on every process; its trainer (its record written to its
    ``results.json`` by the main process)."""
    fresh_accelerate_state(timedelta(seconds=cfg.train.ddp_timeout))
    trainer = Trainer(control_config(cfg))
    record = trainer.fit()
    if trainer.accelerator.is_main_process:
        record.write(trainer.out)
    return trainer
