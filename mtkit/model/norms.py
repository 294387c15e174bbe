"""T5's RMS norm as one kernel: under DeepSpeed ZeRO-3, where the model cannot be compiled whole (its hooks gather and
free each layer's weights around the layer's forward), each ``T5LayerNorm`` runs its forward compiled on its own, one
fused kernel where eager PyTorch launches about six (a cast, a square, a mean, an rsqrt, two products). The modules and
their parameters stay as they are, so ZeRO-3's hooks gather the norm's weight as before. GPU only: on a CPU the
kernels are not what the time goes to.
"""

from __future__ import annotations

import torch


def fuse_t5_norms(model: torch.nn.Module, backend: str = "inductor") -> int:
    """Compile the forward of each of ``model``'s T5 RMS norms (T5, mT5, flan-t5); returns how many there are."""
    norms = [m for m in model.modules() if type(m).__name__ in ("T5LayerNorm", "MT5LayerNorm")]
    compiled = {kind: torch.compile(kind.forward, dynamic=True, backend=backend) for kind in {type(m) for m in norms}}
    for norm in norms:
        norm.forward = compiled[type(norm)].__get__(norm)
    return len(norms)
