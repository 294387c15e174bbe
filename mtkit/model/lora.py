"""LoRA fine-tuning through peft: wrap the model, and at export save the adapter and a merged model.

Supported under one process, DDP and ZeRO-2. Under ZeRO-3 the run is refused: the adapters are a small
fraction of the weights, so sharding them gains little, and merging needs every base weight gathered.
"""

from __future__ import annotations

import copy
from pathlib import Path

from mtkit.config import ModelConfig
from mtkit.errors import UserError

#: Attention projections LoRA adapts by default, per model type (query and value, as in the LoRA paper).
DEFAULT_TARGETS = {
    "t5": ["q", "v"],
    "mt5": ["q", "v"],
    "umt5": ["q", "v"],
    "longt5": ["q", "v"],
    "bart": ["q_proj", "v_proj"],
    "marian": ["q_proj", "v_proj"],
    "mbart": ["q_proj", "v_proj"],
    "m2m_100": ["q_proj", "v_proj"],
}
ADAPTER_DIR = "adapter"


def target_modules(cfg: ModelConfig, model_type: str) -> list[str]:
    """``--lora_target_modules`` as a list, or the model type's default."""
    if cfg.lora_target_modules:
        return [name.strip() for name in cfg.lora_target_modules.split(",") if name.strip()]
    if model_type not in DEFAULT_TARGETS:
        raise UserError(f"--lora_target_modules: no default for model type '{model_type}'; name the modules")
    return DEFAULT_TARGETS[model_type]


def check_strategy(zero_stage: int | None) -> None:
    """LoRA runs under one process, DDP and ZeRO-2; ZeRO-3 is refused (see the module docstring)."""
    if zero_stage == 3:
        raise UserError("--lora_r: LoRA is not supported under ZeRO-3 (use ZeRO-2 or DDP: the adapters are small)")


def apply_lora(model, cfg: ModelConfig, *, zero_stage: int | None = None):
    """``model`` wrapped by peft with LoRA adapters; only the adapters train."""
    from peft import LoraConfig, TaskType, get_peft_model

    check_strategy(zero_stage)
    if cfg.lora_alpha <= 0 or not 0 <= cfg.lora_dropout < 1:
        raise UserError("--lora_alpha must be positive and --lora_dropout in [0, 1)")
    targets = target_modules(cfg, model.config.model_type)
    present = {name.rsplit(".", 1)[-1] for name, _ in model.named_modules()}
    missing = [t for t in targets if t not in present]
    if missing:
        raise UserError(f"--lora_target_modules: {', '.join(missing)} not among the model's modules")
    config = LoraConfig(
        task_type=TaskType.SEQ_2_SEQ_LM,
        r=cfg.lora_r,
        lora_alpha=cfg.lora_alpha,
        lora_dropout=cfg.lora_dropout,
        target_modules=targets,
    )
    return get_peft_model(model, config)


def is_lora(model) -> bool:
    """Whether ``model`` (unwrapped) is a peft model."""
    return hasattr(model, "peft_config")


def save_lora(model, state_dict: dict, final: Path) -> None:
    """Write the adapter to ``final/adapter`` and the merged full model to ``final/``.

    ``model`` is the unwrapped peft model and ``state_dict`` its consolidated weights; the merge happens on
    a copy so that the training model keeps its adapters.
    """
    model.save_pretrained(str(final / ADAPTER_DIR), state_dict=dict(state_dict))
    merged = copy.deepcopy(model)
    merged.load_state_dict(state_dict)
    merged = merged.merge_and_unload()
    merged.save_pretrained(str(final), safe_serialization=True)
