"""DeepSpeed glue: the launcher's DeepSpeed JSON checked, the ZeRO stage of a run, the config values accelerate
would otherwise fill with its own defaults, and model unwrapping that leaves DeepSpeed unimported in runs without it."""

from __future__ import annotations

import json
import os
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import torch
from accelerate import Accelerator
from accelerate.utils import DistributedType

from mtkit.config import RunConfig
from mtkit.errors import UserError


def quiet_deepspeed_collective_warnings() -> None:
    """DeepSpeed calls two torch collectives by their deprecated names on every update: one warning per call."""
    warnings.filterwarnings(
        "ignore", message=r"`torch\.distributed\.(reduce_scatter_tensor|all_gather_into_tensor)` is deprecated"
    )


def check_deepspeed_config() -> None:
    """The DeepSpeed JSON a launcher config names (``deepspeed_config_file``) must be a readable JSON object."""
    path = os.environ.get("ACCELERATE_DEEPSPEED_CONFIG_FILE")
    if os.environ.get("ACCELERATE_USE_DEEPSPEED", "false").lower() != "true" or not path or path == "none":
        return
    try:
        config = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"deepspeed_config_file {path} (in the accelerate config): file not found") from None
    except (OSError, UnicodeDecodeError) as err:
        raise UserError(f"deepspeed_config_file {path}: cannot read ({err})") from None
    except json.JSONDecodeError as err:
        raise UserError(f"deepspeed_config_file {path}: malformed JSON at line {err.lineno} ({err.msg})") from None
    if not isinstance(config, dict):
        raise UserError(f"deepspeed_config_file {path}: expected a JSON object, got {type(config).__name__}")


def zero_stage(accelerator: Accelerator) -> int | None:
    """The DeepSpeed ZeRO stage of the run, or ``None`` without DeepSpeed."""
    if accelerator.distributed_type != DistributedType.DEEPSPEED:
        return None
    return int(accelerator.state.deepspeed_plugin.zero_stage)


def unwrapped(accelerator: Accelerator, model: torch.nn.Module) -> torch.nn.Module:
    """``accelerator.unwrap_model(model)``, without importing DeepSpeed in a run that does not use it: accelerate
    imports it whenever it is installed (to recognise its engine), and that import prints DeepSpeed's "Setting
    accelerator to CPU" warning in the middle of a plain run."""
    if accelerator.distributed_type == DistributedType.DEEPSPEED:
        return accelerator.unwrap_model(model)
    wrappers: tuple[type, ...] = (torch.nn.parallel.DistributedDataParallel, torch.nn.DataParallel)
    if accelerator.distributed_type == DistributedType.FSDP:
        from torch.distributed.fsdp import FullyShardedDataParallel

        wrappers += (FullyShardedDataParallel,)
    while isinstance(model, wrappers):
        model = model.module
    return model


def full_state_dict(accelerator: Accelerator, model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """``accelerator.get_state_dict(model)`` (a collective under ZeRO-3 and FSDP), unwrapped by :func:`unwrapped`
    elsewhere."""
    if accelerator.distributed_type in (DistributedType.DEEPSPEED, DistributedType.FSDP):
        return accelerator.get_state_dict(model)
    return unwrapped(accelerator, model).state_dict()


@contextmanager
def no_deepspeed_lookup(accelerator: Accelerator) -> Iterator[None]:
    """Within it, a run without DeepSpeed may call transformers' ``save_pretrained``: that unwraps the model through
    accelerate, which imports DeepSpeed whenever it is installed, to recognise an engine this run does not have."""
    from accelerate.utils import other

    if accelerator.distributed_type == DistributedType.DEEPSPEED or "deepspeed" in sys.modules:
        yield
        return
    saved = other.is_deepspeed_available
    other.is_deepspeed_available = lambda: False
    try:
        yield
    finally:
        other.is_deepspeed_available = saved


def configure_deepspeed(cfg: RunConfig, accelerator: Accelerator) -> None:
    """Settle the DeepSpeed config values that accelerate would otherwise fill with its own defaults.

    ``gradient_clipping`` follows ``--max_grad_norm`` (0 = off): accelerate fills ``"auto"`` with 1.0, and
    ``accelerator.clip_grad_norm_`` does nothing under DeepSpeed, which clips inside its engine step.
    """
    if accelerator.distributed_type != DistributedType.DEEPSPEED:
        return
    ds = accelerator.state.deepspeed_plugin.deepspeed_config
    if ds.get("train_micro_batch_size_per_gpu", "auto") == "auto":
        ds["train_micro_batch_size_per_gpu"] = 1  # token batches have no fixed size
    given = ds.get("gradient_clipping", "auto")
    if given not in ("auto", cfg.optim.max_grad_norm):
        accelerator.print(
            f"DeepSpeed config gradient_clipping {given} replaced by --max_grad_norm {cfg.optim.max_grad_norm}"
        )
    ds["gradient_clipping"] = cfg.optim.max_grad_norm
