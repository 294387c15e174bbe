"""Checkpoints of the whole training state, with ``checkpoint_last``/``checkpoint_best`` and rotation.

Layout under ``<output_dir>/checkpoints``: ``step-<N>/`` folders written by ``accelerator.save_state``
plus ``trainer_state.json``, and two links, ``checkpoint_last`` and ``checkpoint_best``, pointing at
them. A folder becomes visible under its final name only once completely written.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from accelerate import Accelerator

STATE_FILE = "trainer_state.json"


class _TiedWeightsNotice(logging.Filter):
    """accelerate warns at every save that tied embeddings (BART/T5 share four) were stored once.

    That is what tying means, and reloading restores the tie (the resume test checks bit-exact weights).
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return "Removed shared tensor" not in record.getMessage()


logging.getLogger("accelerate.utils.other").addFilter(_TiedWeightsNotice())


@dataclass
class TrainerState:
    """Where training stands: what is needed, besides accelerate's state, to continue exactly."""

    step: int = 0
    epoch: int = 0
    batches_in_epoch: int = 0
    best_metric: float | None = None  # the best value of --metric_for_best_model so far
    best_valid_loss: float | None = None
    best_step: int | None = None
    skipped_updates: int = 0  # fp16 overflows: batches consumed, no update applied, not counted in ``step``
    world_size: int = 1  # processes that wrote the state; batches_in_epoch is per process in their dealing
    epoch_segments: list[list[int]] = dataclasses.field(default_factory=list)  # [processes, rounds] of this
    # epoch trained before a resume on another world size (see mtkit.batching.TokenBatchSampler)

    def resume_on(self, processes: int) -> bool:
        """Continue the epoch on ``processes`` processes; True if that differs from the ones that saved it."""
        changed = processes != self.world_size
        if changed:
            self.epoch_segments.append([self.world_size, self.batches_in_epoch])
            self.batches_in_epoch = 0
        self.world_size = processes
        return changed


class CheckpointManager:
    """Saves and finds checkpoints of one run."""

    def __init__(self, output_dir: str | Path, accelerator: Accelerator, keep_last: int = 3) -> None:
        self.root = Path(output_dir) / "checkpoints"
        self.accelerator = accelerator
        self.keep_last = keep_last

    @property
    def last(self) -> Path | None:
        link = self.root / "checkpoint_last"
        return link.resolve() if link.exists() else None

    @property
    def best(self) -> Path | None:
        link = self.root / "checkpoint_best"
        return link.resolve() if link.exists() else None

    def save(self, state: TrainerState, *, is_best: bool = False) -> Path:
        """Save model, optimizer, scheduler, RNG and ``state``; update the links; rotate old ones."""
        acc = self.accelerator
        final = self.root / f"step-{state.step:07d}"
        tmp = self.root / f".tmp-step-{state.step:07d}"
        if acc.is_main_process and tmp.exists():
            shutil.rmtree(tmp)
        acc.wait_for_everyone()
        acc.save_state(str(tmp))
        acc.wait_for_everyone()  # every process has written its part before the folder is renamed
        if acc.is_main_process:
            (tmp / STATE_FILE).write_text(json.dumps(dataclasses.asdict(state), indent=2))
            if final.exists():
                shutil.rmtree(final)
            os.replace(tmp, final)
            self._link("checkpoint_last", final)
            if is_best:
                self._link("checkpoint_best", final)
            self._rotate()
        acc.wait_for_everyone()
        return final

    def load(self, path: Path) -> TrainerState:
        """Restore the accelerate state from ``path`` and return its :class:`TrainerState`."""
        self.accelerator.load_state(str(path))
        return self.read_state(path)

    @staticmethod
    def read_state(path: Path) -> TrainerState:
        """The :class:`TrainerState` saved in ``path``, without restoring anything."""
        return TrainerState(**json.loads((path / STATE_FILE).read_text()))

    def _link(self, name: str, target: Path) -> None:
        tmp = self.root / f".{name}.tmp"
        tmp.unlink(missing_ok=True)
        tmp.symlink_to(target.name)
        os.replace(tmp, self.root / name)

    def _rotate(self) -> None:
        keep = {self.last, self.best}
        steps = sorted(self.root.glob("step-*"))
        for old in steps[: max(0, len(steps) - self.keep_last)]:
            if old.resolve() not in keep:
                shutil.rmtree(old)
