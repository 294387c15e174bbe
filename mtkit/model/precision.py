"""The run's compute precision, decided before the accelerator exists: by default bf16 autocast wherever the GPU
computes in bf16 and fp32 elsewhere, for every model; TF32 for what stays fp32; fp16 refused for the T5 family.
Master weights are always fp32 (:func:`mtkit.train.build.build_model`)."""

from __future__ import annotations

import os

import torch

from mtkit.config import RunConfig
from mtkit.errors import UserError
from mtkit.model.presets import preset_model_type

#: Model types whose activations overflow fp16's range (T5's FFN outputs grow past 65504; its authors train in bf16).
FP16_UNSAFE = frozenset({"t5", "mt5", "umt5", "longt5", "switch_transformers"})


def model_type(cfg: RunConfig) -> str:
    """The ``model_type`` of the pretrained model or of the from-scratch preset and shape."""
    if not cfg.model.model_name_or_path:
        return preset_model_type(cfg.model)
    from transformers import AutoConfig

    try:
        return AutoConfig.from_pretrained(cfg.model.model_name_or_path).model_type
    except (OSError, ValueError) as err:
        raise UserError(f"--model_name_or_path: {str(err).splitlines()[0]}") from None


def auto_precision(cuda: bool, bf16_supported: bool) -> str:
    """``--mixed_precision auto``: bf16 autocast on a CUDA device that computes in bf16 (Ampere and newer), fp32
    elsewhere (CPUs, where bf16 is slower; older GPUs, where fp16 would need loss scaling)."""
    return "bf16" if cuda and bf16_supported else "no"


def enable_tf32() -> None:
    """Let what stays fp32 (an fp32 run, the ops autocast leaves in fp32) use TF32 tensor cores for matrix products
    and convolutions (torch's ``fp32_precision`` switches; no effect on a CPU)."""
    torch.backends.cuda.matmul.fp32_precision = "tf32"
    torch.backends.cudnn.conv.fp32_precision = "tf32"


def resolve_mixed_precision(
    cfg: RunConfig, kind: str, *, cuda: bool | None = None, bf16_supported: bool | None = None
) -> str | None:
    """The precision to ask accelerate for (``None``: the launcher's, which accelerate reads itself).

    ``--mixed_precision no|fp16|bf16`` wins; ``auto`` (or none given) keeps a launcher's bf16/fp16 and otherwise
    takes :func:`auto_precision` of this host (``cuda``/``bf16_supported`` stand in for the device in tests).
    fp16 with a T5-family model is an error unless ``--force_fp16``.
    """
    launcher = os.environ.get("ACCELERATE_MIXED_PRECISION", "no").lower()
    chosen = cfg.train.mixed_precision
    cuda = torch.cuda.is_available() if cuda is None else cuda
    supported = (cuda and torch.cuda.is_bf16_supported()) if bf16_supported is None else bf16_supported
    if chosen in (None, "auto"):
        chosen = None if launcher != "no" else auto_precision(cuda, supported)
    effective = chosen or launcher
    if effective == "bf16" and cuda and not supported:  # any CPU computes in bf16; GPUs from Ampere on
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
