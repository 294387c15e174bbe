"""The output projection and label-smoothed cross-entropy fused: ``sum CE(hidden @ weight.T + bias, labels)`` without
the logits ever held whole.

Rows are taken a chunk at a time: each chunk's logits are made by one matrix product in the compute dtype (bf16 under
autocast), turned to fp32 for the log-sum-exp and the smoothed loss, and, while they are at hand, turned into the
gradients of the hidden states, the weight and the bias, so that the backward pass only scales what the forward
already holds (one matrix product fewer than recomputing the logits, and no logits kept for it). The value and the
gradients are those of ``F.cross_entropy(logits[:, :vocab].float(), labels, label_smoothing=e, reduction="sum")``.

Weight rows from ``vocab`` on (a vocabulary rounded up for aligned matrix products: :mod:`mtkit.model.vocab`) take no
part: their logits are masked out of the softmax, the smoothing spreads over the first ``vocab`` entries, their
gradient is zero.

Why not a library: liger-kernel's fused linear cross-entropy reads the count of non-ignored rows back to the host
(``.item()``, a sync in every update) and, like cut-cross-entropy (which finds the non-ignored rows with
``nonzero()``, another sync, and by default drops small gradient entries, so it is not exact), runs only as Triton
kernels on a GPU, where this toolkit also trains and tests on CPUs.
"""

from __future__ import annotations

import torch

IGNORE_INDEX = -100
#: fp32 elements of one chunk's logits (rows x vocabulary): 256 MB of temporaries at a time.
CHUNK_ELEMENTS = 2**26


def chunk_rows(vocab: int, chunk_elements: int = CHUNK_ELEMENTS) -> int:
    """Rows per chunk so that a chunk's fp32 logits hold about ``chunk_elements`` values."""
    return max(1, chunk_elements // max(1, vocab))


class LinearCrossEntropy(torch.autograd.Function):
    """Summed label-smoothed cross-entropy of ``hidden @ weight.T (+ bias)`` against ``labels`` (``-100`` ignored),
    a chunk of rows at a time, gradients made in the forward pass (see the module's docstring)."""

    @staticmethod
    def forward(ctx, hidden, weight, bias, labels, smoothing: float, vocab: int, dtype, rows_per_chunk: int, grad):
        rows, _ = hidden.shape
        size = weight.shape[0]
        keep = labels != IGNORE_INDEX
        targets = labels.clamp(min=0)[:, None]
        w = weight.to(dtype)
        b = None if bias is None else bias.reshape(-1).float()
        grads = grad and any(ctx.needs_input_grad[:3])
        grad_hidden = torch.empty_like(hidden) if grads and ctx.needs_input_grad[0] else None
        grad_weight = torch.zeros(weight.shape, dtype=torch.float32, device=weight.device) if grads else None
        grad_bias = torch.zeros(size, dtype=torch.float32, device=weight.device) if grads and b is not None else None
        total = torch.zeros((), dtype=torch.float32, device=hidden.device)
        for start in range(0, rows, rows_per_chunk):
            part = slice(start, min(rows, start + rows_per_chunk))
            h = hidden[part].to(dtype)
            z = (h @ w.T).float()
            if b is not None:
                z += b
            if vocab < size:
                z[:, vocab:] = float("-inf")
            lse = torch.logsumexp(z, dim=-1)
            nll = lse - z.gather(1, targets[part]).squeeze(1)
            smooth = lse - z[:, :vocab].mean(dim=-1)  # -(1/V) sum_j log p_j over the vocabulary in use
            kept = keep[part]
            total += torch.where(kept, (1 - smoothing) * nll + smoothing * smooth, 0.0).sum()
            if not grads:
                continue
            z.sub_(lse[:, None]).exp_()  # the softmax, in place of the logits; 0 on masked rows of the weight
            z[:, :vocab].sub_(smoothing / vocab)
            z.scatter_add_(1, targets[part], torch.full_like(z[:, :1], smoothing - 1))
            z.mul_(kept[:, None])
            g = z.to(dtype)
            if grad_hidden is not None:
                grad_hidden[part] = g @ w
            grad_weight.add_(g.T @ h)  # a chunk's product in the compute dtype, summed over chunks in fp32
            if grad_bias is not None:
                grad_bias += z.sum(dim=0)
        ctx.save_for_backward(grad_hidden, grad_weight, grad_bias)
        ctx.weight_dtype = weight.dtype
        ctx.bias_shape = None if bias is None else bias.shape
        ctx.bias_dtype = None if bias is None else bias.dtype
        return total

    @staticmethod
    def backward(ctx, grad_total):
        grad_hidden, grad_weight, grad_bias = ctx.saved_tensors
        if grad_weight is None:
            raise RuntimeError("LinearCrossEntropy: backward through a loss computed with grad=False")
        needs = ctx.needs_input_grad
        dh = grad_hidden * grad_total.to(grad_hidden.dtype) if needs[0] and grad_hidden is not None else None
        dw = (grad_weight * grad_total).to(ctx.weight_dtype) if needs[1] else None
        db = None
        if needs[2] and grad_bias is not None:
            db = (grad_bias * grad_total).reshape(ctx.bias_shape).to(ctx.bias_dtype)
        return dh, dw, db, None, None, None, None, None, None


def linear_cross_entropy_sum(
    hidden: torch.Tensor,
    weight: torch.Tensor,
    labels: torch.Tensor,
    *,
    bias: torch.Tensor | None = None,
    label_smoothing: float = 0.0,
    vocab: int | None = None,
    dtype: torch.dtype | None = None,
    chunk_elements: int = CHUNK_ELEMENTS,
) -> torch.Tensor:
    """``F.cross_entropy((hidden @ weight.T + bias)[:, :vocab].float(), labels, ignore_index=-100,
    label_smoothing=label_smoothing, reduction="sum")``, fused and chunked (see the module's docstring); fp32.

    ``hidden`` is (rows x d), ``weight`` (V x d), ``bias`` (V) or (1 x V), ``labels`` (rows). ``dtype``: the matrix
    products' (default: autocast's where it is on, else ``hidden``'s). ``vocab`` (default V): the entries in use.
    """
    if dtype is None:
        device = hidden.device.type
        dtype = torch.get_autocast_dtype(device) if torch.is_autocast_enabled(device) else hidden.dtype
    size = weight.shape[0]
    vocab = size if vocab is None else vocab
    if not 0 < vocab <= size:
        raise ValueError(f"vocab {vocab} outside 1..{size} (the weight's rows)")
    rows = chunk_rows(size, chunk_elements)
    return LinearCrossEntropy.apply(
        hidden, weight, bias, labels, float(label_smoothing), vocab, dtype, rows, torch.is_grad_enabled()
    )
