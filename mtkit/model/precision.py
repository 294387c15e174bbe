"""The run's compute precision, decided before the accelerator exists: bf16 by default for the T5 family,
fp16 refused for it. Master weights are always fp32 (:func:`mtkit.train.build.build_model`)."""

from __future__ import annotations

import os

import torch

from mtkit.config import RunConfig
from mtkit.errors import UserError
from mtkit.model.presets import T5_PRESETS

#: Model types whose activations overflow fp16's range (T5's FFN outputs grow past 65504; its authors train in bf16).
FP16_UNSAFE = frozenset({"t5", "mt5", "umt5", "longt5", "switch_transformers"})


def model_type(cfg: RunConfig) -> str:
    """The ``model_type`` of the pretrained model or of the from-scratch preset."""
    if not cfg.model.model_name_or_path:
        return "t5" if cfg.model.model in T5_PRESETS else "bart"
    from transformers import AutoConfig

    try:
        return AutoConfig.from_pretrained(cfg.model.model_name_or_path).model_type
    except (OSError, ValueError) as err:
        raise UserError(f"--model_name_or_path: {str(err).splitlines()[0]}") from None


def bf16_available() -> bool:
    """Whether this host computes in bf16 (any CPU; GPUs from Ampere on)."""
    return not torch.cuda.is_available() or torch.cuda.is_bf16_supported()


def resolve_mixed_precision(cfg: RunConfig, kind: str) -> str | None:
    """The precision to ask accelerate for (``None``: accelerate's config decides).

    ``--mixed_precision`` wins; otherwise a T5-family model gets bf16 unless the launcher asked for another
    half precision. fp16 with a T5-family model is an error unless ``--force_fp16``.
    """
    launcher = os.environ.get("ACCELERATE_MIXED_PRECISION", "no").lower()
    chosen = cfg.train.mixed_precision
    if chosen is None and kind in FP16_UNSAFE and launcher == "no" and bf16_available():
        chosen = "bf16"
    effective = chosen or launcher
    if effective == "bf16" and not bf16_available():
        raise UserError(
            f"--mixed_precision bf16: this machine's GPU ({torch.cuda.get_device_name()}) does not compute in bf16 "
            "(GPUs from Ampere on do); use fp16 (--force_fp16 for T5) or no"
        )
    if effective == "fp16" and kind in FP16_UNSAFE and not cfg.train.force_fp16:
        raise UserError(
            f"--mixed_precision fp16: {kind} models overflow in fp16 (inf/NaN activations); use bf16, "
            "or pass --force_fp16 to try anyway"
        )
    return chosen
