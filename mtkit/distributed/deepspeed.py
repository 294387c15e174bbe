"""DeepSpeed glue: the launcher's DeepSpeed JSON checked (readable, and what the end of the run needs), the ZeRO
stage of a run, the config values accelerate would otherwise fill with its own defaults, the one scope in which
transformers creates models sharded (:func:`sharded_creation`), and model unwrapping that leaves DeepSpeed
unimported in runs without it."""

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
from accelerate.utils import DeepSpeedPlugin, DistributedType
from transformers.integrations.deepspeed import unset_hf_deepspeed_config

from mtkit.config import RunConfig
from mtkit.errors import UserError


def quiet_deepspeed_collective_warnings() -> None:
    """DeepSpeed calls two torch collectives by their deprecated names on every update: one warning per call."""
    warnings.filterwarnings(
        "ignore", message=r"`torch\.distributed\.(reduce_scatter_tensor|all_gather_into_tensor)` is deprecated"
    )


#: The ZeRO-3 key that makes the engine gather the weights into one 16-bit copy when a model is saved: the run's
#: ``final/`` (``accelerator.get_state_dict``) is written only with it.
GATHER = "stage3_gather_16bit_weights_on_model_save"


def config_source() -> str:
    """Where the run's DeepSpeed settings come from, as an error names it."""
    path = os.environ.get("ACCELERATE_DEEPSPEED_CONFIG_FILE", "none") or "none"
    return f"deepspeed_config_file {path}" if path != "none" else "the accelerate config's deepspeed_config"


def check_deepspeed_config(cfg: RunConfig) -> int | None:
    """The launcher's DeepSpeed settings, as accelerate reads them, checked for what the run needs, each a one-line
    :class:`UserError` before anything is built (the Accelerator included): the JSON a launcher config names
    (``deepspeed_config_file``) is a readable JSON object; under ZeRO-3, :data:`GATHER` is true (else the run would
    fail at its export, after all the training); ``gradient_accumulation_steps`` is ``--gradient_accumulation_steps``
    or ``"auto"`` (accelerate would silently take the JSON's, and 1 where it is missing). Returns the ZeRO stage the
    run will have (``None`` without DeepSpeed), for the checks that depend on it."""
    if os.environ.get("ACCELERATE_USE_DEEPSPEED", "false").lower() != "true":
        return None
    path = os.environ.get("ACCELERATE_DEEPSPEED_CONFIG_FILE", "none") or "none"
    if path != "none":
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
    source = config_source()
    try:
        plugin = DeepSpeedPlugin()  # what the Accelerator makes of the same settings (it builds its own from them)
    except ValueError as err:  # accelerate's objections to the settings, e.g. no zero_optimization section
        raise UserError(f"{source}: {str(err).splitlines()[0]}") from None
    ds, stage = plugin.deepspeed_config, int(plugin.zero_stage)
    if stage == 3 and ds["zero_optimization"].get(GATHER) is not True:
        fix = f'"{GATHER}": true to its zero_optimization' if path != "none" else "zero3_save_16bit_model: true"
        raise UserError(
            f"{source}: ZeRO-3 without {GATHER}, so the weights could not be gathered into final/ at the end of the "
            f"run; add {fix}"
        )
    accumulation = ds.get("gradient_accumulation_steps", "auto")
    if accumulation not in ("auto", cfg.train.gradient_accumulation_steps):
        raise UserError(
            f"{source}: gradient_accumulation_steps {accumulation} (accelerate's 1 where it is missing) but "
            f'--gradient_accumulation_steps {cfg.train.gradient_accumulation_steps}; set it to "auto" (the flag '
            "decides)"
        )
    return stage


def zero_stage(accelerator: Accelerator) -> int | None:
    """The DeepSpeed ZeRO stage of the run, or ``None`` without DeepSpeed."""
    if accelerator.distributed_type != DistributedType.DEEPSPEED:
        return None
    return int(accelerator.state.deepspeed_plugin.zero_stage)


@contextmanager
def sharded_creation(accelerator: Accelerator) -> Iterator[None]:
    """The one scope in which transformers creates models sharded across the processes (DeepSpeed's ``zero.Init``):
    under ZeRO-3 with accelerate's ``zero3_init_flag``, the run's DeepSpeed config is registered with transformers
    within it and withdrawn when it ends. Every model created outside it (the CTranslate2 converter's, the bias
    report's, a verdict's start model) is a plain one, whatever the run's strategy.

    accelerate registers the config for the life of the process when it creates the Accelerator;
    :func:`configure_deepspeed` withdraws that registration at once, so this scope is the only one."""
    plugin = accelerator.state.deepspeed_plugin if zero_stage(accelerator) == 3 else None
    if plugin is None or not plugin.is_zero3_init_enabled():
        yield
        return
    plugin.set_deepspeed_weakref()  # accelerate's own registration: the config with its "auto" batch values settled
    try:
        yield
    finally:
        unset_hf_deepspeed_config()


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

    Batches are token budgets (``--max_tokens``), so DeepSpeed's sentence counts ``train_micro_batch_size_per_gpu`` and
    ``train_batch_size`` are bookkeeping: the micro-batch is 1 (a number the JSON gives is replaced, with a line) and
    the total left to accelerate (1 x accumulation x processes). ``gradient_clipping`` follows ``--max_grad_norm``
    (0 = off): accelerate fills ``"auto"`` with 1.0, and ``accelerator.clip_grad_norm_`` does nothing under DeepSpeed,
    which clips inside its engine step. The registration of the config with transformers that the Accelerator made
    is withdrawn: models are created sharded within :func:`sharded_creation` alone.
    """
    if accelerator.distributed_type != DistributedType.DEEPSPEED:
        return
    unset_hf_deepspeed_config()
    ds, source = accelerator.state.deepspeed_plugin.deepspeed_config, config_source()
    counts = {k: ds.get(k, "auto") for k in ("train_micro_batch_size_per_gpu", "train_batch_size")}
    if counts["train_micro_batch_size_per_gpu"] not in ("auto", 1) or counts["train_batch_size"] != "auto":
        given = " and ".join(f"{k} {v}" for k, v in counts.items() if v != "auto")
        accelerator.print(
            f"{source}: {given} not used: batches hold up to --max_tokens {cfg.train.max_tokens} tokens, not a number "
            "of sentences (DeepSpeed counts each batch as one)"
        )
    ds["train_micro_batch_size_per_gpu"], ds["train_batch_size"] = 1, "auto"
    given = ds.get("gradient_clipping", "auto")
    if given not in ("auto", cfg.optim.max_grad_norm):
        accelerator.print(
            f"DeepSpeed config gradient_clipping {given} replaced by --max_grad_norm {cfg.optim.max_grad_norm}"
        )
    ds["gradient_clipping"] = cfg.optim.max_grad_norm
