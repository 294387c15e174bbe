"""``--torch_compile``: the training forward compiled after ``accelerator.prepare``, evaluation left eager.

Compiled after ``prepare`` so that DDP's wrapper is inside the graph (its optimizer splits it at the gradient
buckets and the all-reduce overlaps the backward); with dynamic shapes from the start, so that token-budget batches,
whose lengths change at every step, share one graph instead of recompiling to the cache limit. Validation and
``generate`` call the prepared model itself, never the compiled one (each new decoding shape would recompile it).
The weights are the model's own: checkpoints and ``final/`` keep plain parameter names. Refused where it cannot
work: under DeepSpeed ZeRO-3 and FSDP the parameters are gathered and freed by hooks around each layer.
"""

from __future__ import annotations

import torch
from accelerate import Accelerator

from mtkit.distributed.deepspeed import zero_stage
from mtkit.distributed.fsdp import uses_fsdp
from mtkit.errors import UserError


def check_compile(accelerator: Accelerator) -> None:
    """One-line refusal of ``--torch_compile`` under ZeRO-3 or FSDP."""
    where = "DeepSpeed ZeRO-3" if zero_stage(accelerator) == 3 else "FSDP" if uses_fsdp(accelerator) else None
    if where:
        raise UserError(
            f"--torch_compile: not under {where}, whose hooks gather and free each layer's weights around its "
            "forward; drop the flag, or use DDP or ZeRO-2"
        )


def training_forward(model: torch.nn.Module, compile: bool) -> torch.nn.Module:
    """What the training loop calls: ``model`` compiled (dynamic shapes, same parameters) or ``model`` itself."""
    return torch.compile(model, dynamic=True) if compile else model
