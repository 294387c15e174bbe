"""The training objective: label-smoothed cross-entropy summed over a batch's target tokens.

Summed, not averaged: the trainer divides by the number of target tokens of the whole optimizer update
(all micro-batches, all processes), as fairseq does, so every token weighs the same however the update
was split into batches.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def token_loss_sum(model, batch: dict, label_smoothing: float = 0.0) -> torch.Tensor:
    """Sum of label-smoothed cross-entropy over the non-padding target tokens of ``batch`` (fp32, on device)."""
    logits = model(
        input_ids=batch["input_ids"],
        attention_mask=batch["attention_mask"],
        decoder_input_ids=batch["decoder_input_ids"],
    ).logits
    return F.cross_entropy(
        logits.float().view(-1, logits.size(-1)),
        batch["labels"].view(-1),
        ignore_index=-100,
        label_smoothing=label_smoothing,
        reduction="sum",
    )
