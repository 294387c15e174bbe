"""Checkpoints of the whole training state, with ``checkpoint_last``/``checkpoint_best`` and rotation.

Layout under ``<output_dir>/checkpoints``: ``step-<N>/`` folders written by ``accelerator.save_state``
plus ``trainer_state.json`` and, last, ``manifest.json`` (every file with its size), and two links,
``checkpoint_last`` and ``checkpoint_best``, pointing at them. A folder becomes visible under its final name only
once completely written. The links are a convenience: copies to S3 or some file systems drop them, so the
checkpoint to resume from is the newest folder whose manifest checks out (newer ones that do not are skipped with
a warning), and the best one is named in its ``trainer_state.json``.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import torch
from accelerate import Accelerator

from bias_eval.core.textio import follow_umask_tree
from mtkit.distributed.reshard import load_state
from mtkit.errors import UserError

STATE_FILE = "trainer_state.json"
MANIFEST_FILE = "manifest.json"  # written last: a checkpoint without it, or whose files differ from it, is incomplete


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
    # epoch trained before a resume on another world size (see mtkit.data.batching.TokenBatchSampler)
    # [metric, valid_loss, step] of the evaluation at the end of a run whose last update is no multiple of
    # --eval_steps, when it beat best_*: it chooses that run's final/ and checkpoint_best, but training never saw
    # it, so a relaunch that trains further drops it (best_* stay what a run straight to --max_steps has)
    end_best: list | None = None
    evaluations_since_best: int = 0  # scheduled evaluations in a row without a new best (--early_stopping_patience)
    epoch_steps: list[list[int]] = dataclasses.field(default_factory=list)  # [epoch, update] of the epoch
    # checkpoints kept (mtkit.train.epochs), oldest first: rotation leaves them, averaging reads them
    evaluations: list[dict] = dataclasses.field(default_factory=list)  # a mitigation's scheduled evaluations
    # (their scores, metrics.jsonl's rows), which its checkpoint choice (mtkit.evaluation.selection) reads

    @property
    def chosen(self) -> tuple[float | None, float | None, int | None]:
        """``(metric, valid_loss, step)`` of the evaluation the run exports as best: ``end_best`` or ``best_*``."""
        return (*self.end_best,) if self.end_best else (self.best_metric, self.best_valid_loss, self.best_step)

    def set_best(self, metric: float, valid_loss: float, *, scheduled: bool) -> None:
        """This update's evaluation is the best so far: one of training's (every ``--eval_steps``), or the one at
        the end of the run (``scheduled`` False), which goes to ``end_best`` and leaves ``best_*`` alone."""
        if scheduled:
            self.best_metric, self.best_valid_loss, self.best_step = metric, valid_loss, self.step
        else:
            self.end_best = [metric, valid_loss, self.step]

    def train_on(self) -> bool:
        """Before training beyond a finished run: forget its end-of-run best; True if there was one."""
        dropped, self.end_best = self.end_best is not None, None
        return dropped

    def resume_on(self, processes: int) -> bool:
        """Continue the epoch on ``processes`` processes; True if that differs from the ones that saved it."""
        changed = processes != self.world_size
        if changed:
            self.epoch_segments.append([self.world_size, self.batches_in_epoch])
            self.batches_in_epoch = 0
        self.world_size = processes
        return changed


def step_folder(root: Path, step: int) -> Path:
    """The checkpoint folder of update ``step`` under ``root`` (``step-0001234``; sorted by name, by update)."""
    return root / f"step-{step:07d}"


def step_folders(root: Path) -> list[Path]:
    """The step folders under ``root``, complete or not, oldest first (none when ``root`` is missing)."""
    return sorted(p for p in root.glob("step-*") if p.is_dir()) if root.is_dir() else []


def step_of(folder: Path) -> int:
    """The update whose checkpoint ``folder`` (a :func:`step_folder`) holds."""
    return int(folder.name.removeprefix("step-"))


def write_manifest(folder: Path) -> None:
    """Record every file of ``folder`` with its size, as the last file written into it."""
    files = {
        str(p.relative_to(folder)): p.stat().st_size
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p != folder / MANIFEST_FILE
    }
    (folder / MANIFEST_FILE).write_text(json.dumps({"files": files}, indent=1))


def problem_with(folder: Path) -> str | None:
    """What makes ``folder`` unusable as a checkpoint (missing, truncated or unreadable files), or None."""
    try:
        files = json.loads((folder / MANIFEST_FILE).read_text())["files"]
    except FileNotFoundError:
        return f"no {MANIFEST_FILE} (incomplete)"
    except (OSError, ValueError, KeyError, TypeError):
        return f"{MANIFEST_FILE} is unreadable"
    for name, size in files.items():
        path = folder / name
        if not path.is_file():
            return f"{name} is missing"
        if path.stat().st_size != size:
            return f"{name} has {path.stat().st_size} bytes, {size} were written"
    try:
        CheckpointManager.read_state(folder)
    except (OSError, ValueError, TypeError):
        return f"{STATE_FILE} is unreadable"
    return None


def newest_complete(root: Path, warn=None) -> Path | None:
    """The newest complete step folder under ``root``; newer incomplete ones are reported to ``warn``. Raises a
    :class:`UserError` when there are step folders but none is complete (nothing to resume from, and
    starting afresh would overwrite them)."""
    folders = step_folders(root)[::-1]
    skipped = []
    for folder in folders:
        problem = problem_with(folder)
        if problem is None:
            for name, why in skipped if warn else ():
                warn(f"warning: skipping checkpoint {name}: {why}; resuming from {folder.name}")
            return folder
        skipped.append((folder.name, problem))
    if skipped:
        name, why = skipped[0]
        raise UserError(
            f"--output_dir {root.parent}: none of its {len(skipped)} checkpoint(s) can be read ({name}: {why}); "
            "pass --overwrite_output_dir to start afresh and delete them"
        )
    return None


def best_complete(root: Path) -> Path | None:
    """The checkpoint ``checkpoint_best`` points at or, without the link, the one the newest names as best."""
    link = root / "checkpoint_best"
    if link.exists() and problem_with(link.resolve()) is None:
        return link.resolve()
    last = newest_complete(root)
    step = CheckpointManager.read_state(last).chosen[2] if last else None
    folder = step_folder(root, step) if step is not None else None
    return folder if folder is not None and folder.is_dir() and problem_with(folder) is None else None


class CheckpointManager:
    """Saves and finds checkpoints of one run."""

    def __init__(self, output_dir: str | Path, accelerator: Accelerator, keep_last: int = 3) -> None:
        self.root = Path(output_dir) / "checkpoints"
        self.accelerator = accelerator
        self.keep_last = keep_last

    @property
    def last(self) -> Path | None:
        """The newest complete checkpoint (see the module doc), or None."""
        return newest_complete(self.root, warn=self.accelerator.print)

    @property
    def best(self) -> Path | None:
        return best_complete(self.root)

    def discard_unreadable(self) -> None:
        """Delete every step folder and link (``--overwrite_output_dir`` on checkpoints that cannot be read)."""
        if self.accelerator.is_main_process and self.root.is_dir():
            shutil.rmtree(self.root)
        self.accelerator.wait_for_everyone()

    def save(self, state: TrainerState, *, is_best: bool = False) -> Path:
        """Save model, optimizer, scheduler, RNG and ``state``; update the links; rotate old ones. If any process
        cannot write (disk full, read-only), all raise one :class:`UserError` and the folder is removed: the
        previous checkpoints are untouched."""
        acc = self.accelerator
        final = step_folder(self.root, state.step)
        tmp = self.root / f".tmp-{final.name}"
        if acc.is_main_process and tmp.exists():
            shutil.rmtree(tmp)
        acc.wait_for_everyone()
        self._agree(self._attempt(lambda: acc.save_state(str(tmp))), tmp)
        sealed = self._attempt(lambda: self._seal(tmp, state)) if acc.is_main_process else None  # written last
        self._agree(sealed, tmp)
        if acc.is_main_process:
            follow_umask_tree(tmp)  # every process has written its part; safetensors writes private files
            if final.exists():
                shutil.rmtree(final)
            os.replace(tmp, final)
            self._link("checkpoint_last", final)
            if is_best:
                self._link("checkpoint_best", final)
            self._rotate(state)
        acc.wait_for_everyone()
        return final

    def point_best_at(self, step: int | None) -> None:
        """``checkpoint_best`` to the checkpoint of update ``step`` (None: no best yet, no link)."""
        if self.accelerator.is_main_process:
            if step is None:
                (self.root / "checkpoint_best").unlink(missing_ok=True)
            else:
                self._link("checkpoint_best", step_folder(self.root, step))
        self.accelerator.wait_for_everyone()

    @staticmethod
    def _attempt(write) -> OSError | None:
        try:
            write()
        except OSError as err:
            return err
        return None

    @staticmethod
    def _seal(tmp: Path, state: TrainerState) -> None:
        (tmp / STATE_FILE).write_text(json.dumps(dataclasses.asdict(state), indent=2))
        write_manifest(tmp)

    def _agree(self, failure: OSError | None, tmp: Path) -> None:
        """A collective: if any process failed to write, all raise (none is left waiting at a barrier) and the
        partial folder goes."""
        acc = self.accelerator
        failed = acc.reduce(torch.tensor([float(failure is not None)], device=acc.device), reduction="sum")
        if failed.item():
            if acc.is_main_process:
                shutil.rmtree(tmp, ignore_errors=True)
            why = (failure.strerror or str(failure)) if failure else "another process could not write its part"
            raise UserError(f"--output_dir: cannot write checkpoint {tmp.name} ({why}); the previous ones are intact")

    def load(self, path: Path) -> TrainerState:
        """Restore the accelerate state from ``path``, resharded if another number of processes wrote it
        (:mod:`mtkit.distributed.reshard`), and return its :class:`TrainerState`."""
        state = self.read_state(path)
        load_state(self.accelerator, path, written_by=state.world_size)
        return state

    @staticmethod
    def read_state(path: Path) -> TrainerState:
        """The :class:`TrainerState` saved in ``path``, without restoring anything."""
        return TrainerState(**json.loads((path / STATE_FILE).read_text()))

    def _link(self, name: str, target: Path) -> None:
        tmp = self.root / f".{name}.tmp"
        try:
            tmp.unlink(missing_ok=True)
            tmp.symlink_to(target.name)
            os.replace(tmp, self.root / name)
        except OSError as err:  # a file system without links (an S3 mount): the manifests are enough
            self.accelerator.print(f"warning: no {name} link ({err.strerror or err}); resume finds the newest anyway")

    def _rotate(self, state: TrainerState) -> None:
        keep = {newest_complete(self.root), self.best}
        if state.best_step is not None:  # training's own best too: a relaunch that trains on may export it
            keep.add(step_folder(self.root, state.best_step).resolve())
        keep.update(step_folder(self.root, step).resolve() for _, step in state.epoch_steps)
        steps = step_folders(self.root)
        for old in steps[: max(0, len(steps) - self.keep_last)]:
            if old.resolve() not in keep:
                shutil.rmtree(old)
