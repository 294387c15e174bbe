"""The training objective: label-smoothed cross-entropy summed over a batch's target tokens.

Summed, not averaged: the trainer divides by the number of target tokens of the whole optimizer update
(all micro-batches, all processes), as fairseq does, so every token weighs the same however the update
was split into batches.

Computed in fp32 a chunk of rows at a time (:class:`ChunkedCrossEntropy`): the value and gradient of
``F.cross_entropy(logits.float(), labels, label_smoothing=e, reduction="sum")`` without its fp32 copy of the whole
logits and the fp32 log-softmax it keeps for the backward pass (25k tokens x 37k vocabulary: 3.7 GB each). The
backward keeps the logits as they came (bf16 under autocast) and one fp32 log-sum-exp per row. fp32 logits that fit
one chunk (a CPU batch) go to ``F.cross_entropy`` itself, which is faster and then needs no more memory.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

#: fp32 elements of one chunk (rows x vocabulary): 256 MB of temporaries at a time.
CHUNK_ELEMENTS = 2**26
IGNORE_INDEX = -100


def _chunks(rows: int, vocab: int, chunk_elements: int) -> list[slice]:
    step = max(1, chunk_elements // max(1, vocab))
    return [slice(start, min(rows, start + step)) for start in range(0, rows, step)]


class ChunkedCrossEntropy(torch.autograd.Function):
    """Summed label-smoothed cross-entropy of ``logits`` (rows x vocabulary, any float dtype) against ``labels``
    (rows; ``-100`` ignored), in fp32 one chunk of rows at a time, forward and backward."""

    @staticmethod
    def forward(ctx, logits: torch.Tensor, labels: torch.Tensor, smoothing: float, chunk_elements: int):
        rows, vocab = logits.shape
        keep = labels != IGNORE_INDEX
        targets = labels.clamp(min=0)
        lse = torch.empty(rows, dtype=torch.float32, device=logits.device)
        total = torch.zeros((), dtype=torch.float32, device=logits.device)
        for part in _chunks(rows, vocab, chunk_elements):
            z = logits[part].float()
            lse[part] = torch.logsumexp(z, dim=-1)
            nll = lse[part] - z.gather(1, targets[part, None]).squeeze(1)
            smooth = lse[part] - z.mean(dim=-1)  # -(1/V) sum_j log p_j
            total += torch.where(keep[part], (1 - smoothing) * nll + smoothing * smooth, 0.0).sum()
        ctx.save_for_backward(logits, targets, keep, lse)
        ctx.smoothing, ctx.chunk_elements = smoothing, chunk_elements
        return total

    @staticmethod
    def backward(ctx, grad_total: torch.Tensor):
        logits, targets, keep, lse = ctx.saved_tensors
        rows, vocab = logits.shape
        smoothing = ctx.smoothing
        grad = torch.empty_like(logits)
        for part in _chunks(rows, vocab, ctx.chunk_elements):
            p = torch.exp(logits[part].float() - lse[part, None])  # softmax
            p.sub_(smoothing / vocab)
            p.scatter_add_(1, targets[part, None], torch.full_like(p[:, :1], -(1 - smoothing)))
            p.mul_((keep[part].float() * grad_total)[:, None])
            grad[part] = p.to(logits.dtype)
        return grad, None, None, None


def cross_entropy_sum(
    logits: torch.Tensor, labels: torch.Tensor, label_smoothing: float = 0.0, chunk_elements: int = CHUNK_ELEMENTS
) -> torch.Tensor:
    """``F.cross_entropy(logits.float(), labels, ignore_index=-100, label_smoothing, reduction="sum")`` of
    ``logits`` (..., vocabulary), chunked (see the module's docstring); fp32."""
    vocab = logits.size(-1)
    logits, labels = logits.reshape(-1, vocab), labels.reshape(-1)
    if logits.dtype == torch.float32 and logits.numel() <= chunk_elements:
        # fp32 logits of one chunk: torch's own loss (a fifth faster on a CPU batch), whose saved log-softmax is no
        # larger than a chunk's temporaries
        return F.cross_entropy(logits, labels, ignore_index=IGNORE_INDEX, label_smoothing=label_smoothing,
                               reduction="sum")  # fmt: skip
    return ChunkedCrossEntropy.apply(logits, labels, label_smoothing, chunk_elements)


def _config(model):
    """The transformers config inside any wrapper (DDP, DeepSpeed's engine, torch.compile, peft)."""
    while not hasattr(model, "config") and hasattr(model, "module"):
        model = model.module
    return getattr(model, "config", None)


def model_mask(model, attention_mask: torch.Tensor) -> torch.Tensor:
    """``attention_mask`` (batch x source) as the model takes it without a host read: for SDPA attention the 4-D
    boolean mask (batch x 1 x 1 x source) that transformers uses as it is, where a 2-D one is first checked for
    padding (``mask.all()``, read back from the device at every forward); other attention implementations get
    the 2-D mask."""
    config = _config(model)
    if getattr(config, "_attn_implementation", None) != "sdpa" or attention_mask.dim() != 2:
        return attention_mask
    return attention_mask[:, None, None, :].bool()


def causal_mask(model, decoder_input_ids: torch.Tensor) -> torch.Tensor | None:
    """For SDPA attention, the decoder's causal mask in the 4-D boolean form transformers uses as it is (else it
    reads back whether the target has padding at every forward); ``None`` (the model's own) otherwise."""
    if getattr(_config(model), "_attn_implementation", None) != "sdpa":
        return None
    length = decoder_input_ids.shape[1]
    return torch.ones(length, length, dtype=torch.bool, device=decoder_input_ids.device).tril()[None, None]


@dataclass(frozen=True)
class Teacher:
    """A frozen model whose predicted distribution takes ``weight`` of every target token's loss (word-level knowledge
    distillation, Kim & Rush 2016): ``(1 - weight) x`` the label-smoothed cross-entropy against the reference ``+
    weight x`` the cross-entropy against the teacher's distribution (its KL divergence from the student's, plus the
    teacher's entropy, which has no gradient)."""

    model: torch.nn.Module
    weight: float


def _logits(model, batch: dict) -> torch.Tensor:
    return model(
        input_ids=batch["input_ids"],
        attention_mask=model_mask(model, batch["attention_mask"]),
        decoder_input_ids=batch["decoder_input_ids"],
        decoder_attention_mask=causal_mask(model, batch["decoder_input_ids"]),
    ).logits


def soft_cross_entropy_sum(logits: torch.Tensor, teacher_logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Sum over the non-padding target tokens (``labels`` not ``-100``) of the cross-entropy of ``logits`` against
    the softmax of ``teacher_logits``; fp32 (one fp32 copy of those tokens' logits: mitigation batches are small)."""
    vocab = logits.size(-1)
    keep = labels.reshape(-1) != IGNORE_INDEX
    student = logits.reshape(-1, vocab)[keep].float()
    target = teacher_logits.reshape(-1, vocab)[keep].float().softmax(dim=-1)
    return F.cross_entropy(student, target, reduction="sum")


def token_loss_sum(model, batch: dict, label_smoothing: float = 0.0, teacher: Teacher | None = None) -> torch.Tensor:
    """Sum of label-smoothed cross-entropy over the non-padding target tokens of ``batch`` (fp32, on device); with a
    :class:`Teacher`, each token's loss shared with the cross-entropy against the teacher's distribution."""
    logits = _logits(model, batch)
    loss = cross_entropy_sum(logits, batch["labels"], label_smoothing)
    if teacher is None or not teacher.weight:
        return loss
    with torch.no_grad():
        target = _logits(teacher.model, batch).detach()
    soft = soft_cross_entropy_sum(logits, target, batch["labels"])
    return (1 - teacher.weight) * loss + teacher.weight * soft
