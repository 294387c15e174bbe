"""Updates with a non-finite loss or gradient are skipped, counted, and stop the run when they keep coming.

Two kinds, one bound (``--max_nonfinite_updates`` in a row; 0: never stop):

- **Non-finite updates** (fp32 and bf16 runs without DeepSpeed): the test and the skip stay on the device. The
  gradient norm that clipping computes anyway (over every process's gradients, so the same on all of them) is turned
  into the ``found_inf`` flag that PyTorch's fused AdamW reads, which leaves weights, moments and step count
  untouched when it is set; the update still counts as a step. The host reads the counters only at logging
  intervals, so no update waits for the GPU.
- **Skipped updates**: the fp16 gradient scaler and DeepSpeed's overflow check (its fp16 loss scaler, and its check
  of the gradient norm in fp32) skip such updates themselves, and accelerate reports it
  (``optimizer_step_was_skipped``). They advance neither the step nor the schedule; each is one line, counted in
  ``skipped_updates``. Both libraries decide on gradients every process shares (reduced across processes, or an
  overflow flag they all-reduce), so every process counts the same skips and stops at the same one.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import torch

from mtkit.errors import Diverged
from mtkit.train.checkpoint import TrainerState, newest_complete

#: What a run that keeps getting non-finite updates can change: on resume (``--max_grad_norm``), or in a new run.
REMEDY = (
    "Set a lower --max_grad_norm and relaunch (it resumes), or lower --learning_rate, raise --warmup_steps or train "
    "in bf16 or fp32 (--mixed_precision) in a new --output_dir"
)


class NonFiniteGuard:
    """Skips non-finite updates on the device and counts the ones accelerate reports skipped; raises
    :class:`~mtkit.errors.Diverged` after ``limit`` of either in a row."""

    def __init__(self, optimizer, device: torch.device, limit: int, say: Callable[[str], None] = print) -> None:
        inner = getattr(optimizer, "optimizer", optimizer)  # accelerate's wrapper holds the torch optimizer
        # armed with the fused AdamW the trainer builds where nothing else skips updates (not fp16, not DeepSpeed)
        self.optimizer = inner if getattr(inner, "defaults", {}).get("fused") else None
        deepspeed = type(optimizer).__name__ == "DeepSpeedOptimizerWrapper"
        self.skipper = "DeepSpeed's overflow check" if deepspeed else "the fp16 loss scaler"
        self.limit, self.say = limit, say
        self.total = torch.zeros((), device=device)
        self.in_a_row = torch.zeros((), device=device)
        self.skipped_in_a_row = 0  # on the host: accelerate reports a skip on the host

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

    def skipped(self, applied: bool, state: TrainerState, checkpoints: Path) -> bool:
        """Whether the update just made was skipped (``applied`` False, as accelerate reported it): then counted in
        ``state.skipped_updates`` and told in one line; raises :class:`Diverged` after ``limit`` in a row."""
        if applied:
            self.skipped_in_a_row = 0
            return False
        state.skipped_updates += 1
        self.skipped_in_a_row += 1
        self.say(
            f"after update {state.step}: an update skipped by {self.skipper} (non-finite gradients, nothing applied; "
            f"{self.skipped_in_a_row} in a row, {state.skipped_updates} in the run)"
        )
        if self.limit and self.skipped_in_a_row >= self.limit:
            raise self._diverged(
                f"the last {self.skipped_in_a_row} updates after update {state.step} had non-finite gradients and "
                f"were skipped by {self.skipper}, so the weights are those of update {state.step}",
                checkpoints,
            )
        return True

    def report(self, state: TrainerState, checkpoints: Path) -> dict:
        """``skipped_updates`` and (when armed, a host read) ``nonfinite_updates`` so far; raises
        :class:`Diverged` after ``limit`` non-finite updates in a row."""
        if not self.armed:
            return {"skipped_updates": state.skipped_updates}
        total, in_a_row = int(self.total.item()), int(self.in_a_row.item())
        if self.limit and in_a_row >= self.limit:
            raise self._diverged(
                f"the last {in_a_row} updates (to update {state.step}) had a non-finite loss or gradient and were "
                "skipped, so the weights are those from before them",
                checkpoints,
            )
        return {"skipped_updates": state.skipped_updates, "nonfinite_updates": total}

    @staticmethod
    def _diverged(what: str, checkpoints: Path) -> Diverged:
        last = newest_complete(checkpoints)
        kept = f"the last checkpoint ({last.name}) is intact" if last else "no checkpoint had been written yet"
        return Diverged(f"training diverged: {what}; {kept}. {REMEDY}")
