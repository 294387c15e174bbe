"""The control arm of a gender-bias mitigation (``--control replay``): the same start trained for as many updates on
the replay alone, with the same schedule, seed, pulls, budgets and checkpoint rule, so that the verdict can tell the
mitigation's own share from what further training on the general data does. It is the one
:class:`~mtkit.train.trainer.Trainer`, given a config derived from the run's (:func:`control_config`), and it trains
on every process of the launch, into ``<output_dir>/control/`` (its own ``final/``, checkpoints and
``metrics.jsonl``; a relaunch resumes it as any run)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from accelerate.state import AcceleratorState, GradientState

from mtkit.config import RunConfig
from mtkit.train.record import RunRecord
from mtkit.train.trainer import Trainer

#: the control arm's run folder, under the mitigation's
CONTROL_DIR = "control"


def control_config(cfg: RunConfig) -> RunConfig:
    """The control arm's config: ``cfg`` with ``<output_dir>/control`` as its run folder, the replay alone to train on
    (``--tuning_pairs false``), no control of its own and nothing uploaded."""
    out = str(Path(cfg.train.output_dir) / CONTROL_DIR)
    train = replace(cfg.train, output_dir=out, push_to_hub=False, hub_model_id=None)
    return replace(cfg, train=train, mitigation=replace(cfg.mitigation, tuning_pairs=False, control="none"))


def fresh_accelerate_state() -> None:
    """accelerate's process-wide state cleared, as a new process has it: the run before ended its process group
    (:meth:`Trainer.export`), and the next run's accelerator starts one again."""
    AcceleratorState._reset_state(reset_partial_state=True)
    GradientState._reset_state()


def train_control(cfg: RunConfig) -> tuple[Trainer, RunRecord]:
    """Train the control arm of the mitigation ``cfg`` on every process; its trainer and its record (written to its
    ``results.json`` by the main process)."""
    fresh_accelerate_state()
    trainer = Trainer(control_config(cfg))
    record = trainer.fit()
    if trainer.accelerator.is_main_process:
        record.write(trainer.out)
    return trainer, record
