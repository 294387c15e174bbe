"""Loading a checkpoint that another number of processes wrote (a preempted cluster back smaller or larger).

* **DDP and one process**: the weights and the optimizer state are whole in the checkpoint; accelerate loads them.
* **FSDP** (FSDP2, sharded state): accelerate saves and loads through ``torch.distributed.checkpoint``, whose
  files describe every tensor's global shape and each saved piece: loading reshards the weights and the optimizer
  moments onto any number of processes, exactly.
* **DeepSpeed ZeRO**: every rank's file holds its flat partition, and the engine refuses a checkpoint of another
  data-parallel size. The checkpoint is converted once, by the main process, to DeepSpeed's *universal checkpoint*
  (``deepspeed.checkpoint.ds_to_universal``: per parameter, the fp32 weights, ``exp_avg`` and ``exp_avg_sq``, plus
  the step count and hyper-parameters), which the engine loads with ``checkpoint.load_universal`` on any number of
  processes, partitioning each parameter anew: exact too. The converted copy lies beside the checkpoint
  (``.universal-step-N``, written under a temporary name and renamed when complete) and goes once loaded.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
from pathlib import Path

import torch
from accelerate import Accelerator

from mtkit.distributed.deepspeed import zero_stage
from mtkit.distributed.fsdp import uses_fsdp
from mtkit.errors import UserError

#: accelerate's folder (the DeepSpeed tag) for the first prepared model's engine state in a checkpoint
DEEPSPEED_TAG = "pytorch_model"


def resharding(acc: Accelerator) -> str:
    """How this run's strategy carries over a checkpoint of another process count (for the line printed then)."""
    stage = zero_stage(acc)
    if stage is not None:
        return (
            f"the ZeRO-{stage} weights and optimizer state (moments, step count) were converted to DeepSpeed's "
            "universal checkpoint and resharded exactly"
        )
    if uses_fsdp(acc):
        return "the FSDP weights and optimizer state (moments, step count) were resharded exactly on load"
    return "the weights and optimizer state are whole in the checkpoint"


def load_state(acc: Accelerator, checkpoint: Path, written_by: int) -> None:
    """``acc.load_state(checkpoint)``, for a checkpoint written by ``written_by`` processes (see the module doc)."""
    if zero_stage(acc) is None or written_by == acc.num_processes:
        acc.load_state(str(checkpoint))
        return
    universal = universal_copy(acc, checkpoint)
    config = acc.deepspeed_engine_wrapped.engine._config  # what the "checkpoint.load_universal" key sets
    config.load_universal_checkpoint = True
    try:
        acc.load_state(str(universal))
    finally:
        config.load_universal_checkpoint = False
    acc.wait_for_everyone()
    if acc.is_main_process:
        shutil.rmtree(universal, ignore_errors=True)


def universal_copy(acc: Accelerator, checkpoint: Path) -> Path:
    """The universal form of the DeepSpeed ``checkpoint``, converted by the main process while the others wait (a
    collective: if the conversion fails, every process raises one :class:`UserError`)."""
    universal = checkpoint.parent / f".universal-{checkpoint.name}"
    failure = None
    if acc.is_main_process and not universal.is_dir():
        try:
            convert_to_universal(checkpoint, universal)
        except Exception as err:  # noqa: BLE001 - any failure is reported on every process below
            failure = f"{type(err).__name__}: {err}"
    failed = acc.reduce(torch.tensor([float(failure is not None)], device=acc.device), reduction="sum")
    if failed.item():
        why = failure or "the main process could not convert it"
        raise UserError(
            f"resume: cannot convert {checkpoint} to DeepSpeed's universal checkpoint for another number of "
            f"processes ({why}); resume on as many processes as wrote it"
        )
    return universal


def convert_to_universal(checkpoint: Path, universal: Path) -> None:
    """Write the universal form of accelerate's DeepSpeed ``checkpoint`` into ``universal``: the engine state
    converted by ``ds_to_universal`` (serially: no worker processes forked from a distributed one) and accelerate's
    own files (random states) beside it. Nothing is left under ``universal`` unless complete."""
    from deepspeed.checkpoint import ds_to_universal

    tmp = universal.with_name(universal.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    args = argparse.Namespace(
        input_folder=str(checkpoint / DEEPSPEED_TAG),
        output_folder=str(tmp / DEEPSPEED_TAG),
        num_extract_workers=1,
        num_merge_workers=1,
        keep_temp_folder=False,
        strict=True,
        inject_missing_state=True,  # ZeRO-1/2: transformers models carry no universal-checkpoint metadata
    )
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            ds_to_universal.main(args)  # its progress bars and per-step prints
        for path in checkpoint.iterdir():
            if path.is_file():
                shutil.copy2(path, tmp / path.name)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    os.replace(tmp, universal)
