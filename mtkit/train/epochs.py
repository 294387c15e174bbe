"""Epoch checkpoints and their mean (``--keep_last_epochs``, ``--average_last_epochs``), as fairseq keeps
``checkpoint<N>.pt`` and averages the last of them (``average_checkpoints.py --num-epoch-checkpoints``).

An epoch checkpoint is an ordinary ``step-<N>/`` checkpoint written at the update that finishes an epoch; the
run's :class:`~mtkit.train.checkpoint.TrainerState` lists the last ones as ``[epoch, update]`` in ``epoch_steps``,
which ``--save_total_limit``'s rotation leaves alone and ``scripts/average_checkpoints.py --last_epochs N`` reads.
With ``--average_last_epochs N`` the end of the run loads the element-wise mean of the last N into the model, which
``final/`` then holds and the test split scores: their weights alone, read and averaged as
``scripts/average_checkpoints.py`` reads and averages them (:func:`mtkit.train.weights.mean_weights`).
"""

from __future__ import annotations

from pathlib import Path

import torch
from accelerate import Accelerator

from mtkit.config import RunConfig
from mtkit.data.batching import TokenBatchSampler
from mtkit.distributed.deepspeed import unwrapped, zero_stage
from mtkit.distributed.fsdp import uses_fsdp
from mtkit.errors import UserError
from mtkit.train.checkpoint import TrainerState, problem_with, step_folder
from mtkit.train.weights import load_weights_strictly, mean_weights


def epoch_end(state: TrainerState, sampler: TokenBatchSampler, accumulation: int) -> int | None:
    """The epoch (counted from 1) that the update just made finished, or None. The batch loop moves to the next epoch
    when it is asked for the batch after the last: an update that ends on an epoch's last batch leaves ``state`` at
    that epoch with all of its batches, one whose micro-batches run into the next epoch leaves it there."""
    if state.batches_in_epoch == sampler.skip + len(sampler):  # skip: the batches trained before a resume
        return state.epoch + 1
    if 0 < state.batches_in_epoch < accumulation:
        return state.epoch
    return None


class EpochCheckpoints:
    """Which updates end an epoch and are checkpointed and kept, and the mean of the last ones at the end."""

    def __init__(self, cfg: RunConfig, accelerator: Accelerator) -> None:
        t = cfg.train
        if t.average_last_epochs and (zero_stage(accelerator) is not None or uses_fsdp(accelerator)):
            raise UserError(
                f"--average_last_epochs {t.average_last_epochs}: the run averages whole weights (one process or "
                "DDP); under DeepSpeed or FSDP keep them with --keep_last_epochs and average after the run with "
                "scripts/average_checkpoints.py RUN OUT --last_epochs N"
            )
        self.accelerator, self.average = accelerator, t.average_last_epochs
        self.keep, self.accumulation = max(t.keep_last_epochs, t.average_last_epochs), t.gradient_accumulation_steps

    def ended(self, state: TrainerState, sampler: TokenBatchSampler) -> bool:
        """After an update: whether it finished an epoch whose checkpoint is to be kept (then listed in ``state``)."""
        epoch = epoch_end(state, sampler, self.accumulation) if self.keep else None
        if epoch is None:
            return False
        state.epoch_steps = [*state.epoch_steps, [epoch, state.step]][-self.keep :]
        return True

    def load_mean(self, model: torch.nn.Module, root: Path, state: TrainerState) -> dict:
        """With ``--average_last_epochs N``: load the mean of the last N epoch checkpoints under ``root`` into
        ``model`` (every process) and return ``{"averaged_epochs": [...], "averaged_steps": [...]}``; else ``{}``."""
        acc = self.accelerator
        chosen = [(e, s) for e, s in state.epoch_steps[-self.average :] if problem_with(step_folder(root, s)) is None]
        if not self.average or not chosen:
            if self.average:
                acc.print(f"warning: --average_last_epochs {self.average}: no epoch checkpoint; final/ as without it")
            return {}
        if len(chosen) < self.average:
            acc.print(f"warning: --average_last_epochs {self.average}: {len(chosen)} epoch checkpoint(s) to average")
        mean = mean_weights([step_folder(root, step) for _, step in chosen])  # the weights alone, on every process
        load_weights_strictly(unwrapped(acc, model), mean, f"--average_last_epochs {self.average}")
        epochs, steps = [e for e, _ in chosen], [s for _, s in chosen]
        acc.print(f"final/: the mean of epochs {', '.join(map(str, epochs))} (updates {', '.join(map(str, steps))})")
        return {"averaged_epochs": epochs, "averaged_steps": steps}
