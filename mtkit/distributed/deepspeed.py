"""DeepSpeed glue: the launcher's DeepSpeed JSON checked, the ZeRO stage of a run, and the config values accelerate
would otherwise fill with its own defaults."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

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
