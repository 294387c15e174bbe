"""``--torch_compile``: the training forward compiled after ``accelerator.prepare``, evaluation left eager.

Compiled after ``prepare`` so that DDP's wrapper is inside the graph (its optimizer splits it at the gradient
buckets and the all-reduce overlaps the backward), with the loss, which the model computes in its own forward
(:mod:`mtkit.model.loss`); with dynamic shapes from the start, so that token-budget batches, whose lengths change at
every step, share one graph instead of recompiling to the cache limit, or, with ``--static_shapes``, without them:
one graph per shape of the few the batches then have, which ``--torch_compile_mode reduce-overhead`` replays as CUDA
graphs. Validation and
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


#: Graphs one compiled forward may hold with ``--static_shapes``: two shapes per length bucket, and halved batches.
STATIC_GRAPHS = 64


def training_forward(model: torch.nn.Module, compile: bool, static: bool = False, mode: str = "default"):
    """What the training loop calls: ``model`` compiled (same parameters; dynamic shapes, or one graph per shape of
    ``--static_shapes``' few, in ``mode``) or ``model`` itself."""
    if not compile:
        return model
    if static:
        torch._dynamo.config.recompile_limit = max(torch._dynamo.config.recompile_limit, STATIC_GRAPHS)
    return torch.compile(model, dynamic=not static, mode=None if mode == "default" else mode)
