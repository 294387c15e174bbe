"""Updates with a non-finite loss or gradient are skipped, counted, and stop the run when they keep coming.

The test and the skip stay on the device: the gradient norm that clipping computes anyway (over every process's
gradients, so the same on all of them) is turned into the ``found_inf`` flag that PyTorch's fused AdamW reads,
which leaves weights, moments and step count untouched when it is set. The host reads the counters only at
logging intervals, so no update waits for the GPU. Not armed under fp16 (the gradient scaler skips such updates
itself; they are counted as ``skipped_updates``) nor DeepSpeed (its engine owns the optimizer step).
"""

from __future__ import annotations

from pathlib import Path

import torch

from mtkit.errors import Diverged
from mtkit.train.checkpoint import newest_complete


class NonFiniteGuard:
    """Device-side skip of non-finite updates; counts them for the log and stops after ``limit`` in a row."""

    def __init__(self, optimizer, device: torch.device, limit: int) -> None:
        inner = getattr(optimizer, "optimizer", optimizer)  # accelerate's wrapper holds the torch optimizer
        # armed with the fused AdamW the trainer builds where nothing else skips updates (not fp16, not DeepSpeed)
        self.optimizer = inner if getattr(inner, "defaults", {}).get("fused") else None
        self.limit = limit
        self.total = torch.zeros((), device=device)
        self.in_a_row = torch.zeros((), device=device)

    @property
    def armed(self) -> bool:
        return self.optimizer is not None

    def before_step(self, grad_norm: torch.Tensor) -> None:
        """Flag the coming optimizer step as one to skip if ``grad_norm`` is not finite (NaN or inf)."""
        if not self.armed:
            return
        norm = grad_norm.detach()
        norm = norm.full_tensor() if hasattr(norm, "full_tensor") else norm  # FSDP: a replicated DTensor
        found = (~torch.isfinite(norm)).to(torch.float32).reshape(())
        self.optimizer.found_inf = found
        self.total += found
        self.in_a_row = (self.in_a_row + found) * found

    def report(self, step: int, checkpoints: Path) -> dict:
        """``{"nonfinite_updates": n}`` so far (a host read); raises :class:`Diverged` after ``limit`` in a row."""
        if not self.armed:
            return {}
        total, in_a_row = int(self.total.item()), int(self.in_a_row.item())
        if self.limit and in_a_row >= self.limit:
            last = newest_complete(checkpoints)
            kept = f"the last checkpoint ({last.name}) is intact" if last else "no checkpoint had been written yet"
            raise Diverged(
                f"training diverged: the last {in_a_row} updates (to update {step}) had a non-finite loss or "
                f"gradient and were skipped, so the weights are those from before them; {kept}. Set a lower "
                "--max_grad_norm and relaunch (it resumes), or lower --learning_rate or raise --warmup_steps in a new "
                "--output_dir"
            )
        return {"nonfinite_updates": total}
