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

On a GPU each chunk's elementwise part (everything after the matrix product: the cast, log-sum-exp, the smoothed loss,
the softmax turned into the gradient) is compiled into a few fused kernels (``kernel``): eager, it reads and writes
the chunk's fp32 logits a dozen times, which on an H200 took over a fifth of a transformer-base update's GPU time
(2026-11-28), several times its three matrix products.

Why not a library: liger-kernel's fused linear cross-entropy reads the count of non-ignored rows back to the host
(``.item()``, a sync in every update) and, like cut-cross-entropy (which finds the non-ignored rows with
``nonzero()``, another sync, and by default drops small gradient entries, so it is not exact), runs only as Triton
kernels on a GPU, where this toolkit also trains and tests on CPUs.
"""

from __future__ import annotations

import functools
import warnings

import torch

IGNORE_INDEX = -100
#: fp32 elements of one chunk's logits (rows x vocabulary): 256 MB of temporaries at a time.
CHUNK_ELEMENTS = 2**26


def chunk_rows(vocab: int, chunk_elements: int = CHUNK_ELEMENTS) -> int:
    """Rows per chunk so that a chunk's fp32 logits hold about ``chunk_elements`` values."""
    return max(1, chunk_elements // max(1, vocab))


def _chunk_math(z, b, targets, kept, smoothing: float, vocab: int, dtype: torch.dtype, grad: bool):
    """One chunk's elementwise part, from its logits ``z`` (the matrix product's, in the compute dtype) on: the
    chunk's summed loss and, with ``grad``, the logits' gradient (in ``dtype``) and the bias's (fp32, or ``None``
    without a bias). Eager, it works in place on one fp32 copy of the logits; compiled (:func:`_compiled_math`), the
    same code becomes a few fused kernels that read the logits a few times instead of a dozen."""
    z = z.float()
    if b is not None:
        z += b
    if vocab < z.shape[1]:
        z[:, vocab:] = float("-inf")
    lse = torch.logsumexp(z, dim=-1)
    nll = lse - z.gather(1, targets).squeeze(1)
    smooth = lse - z[:, :vocab].mean(dim=-1)  # -(1/V) sum_j log p_j over the vocabulary in use
    loss = torch.where(kept, (1 - smoothing) * nll + smoothing * smooth, 0.0).sum()
    if not grad:
        return loss, None, None
    z.sub_(lse[:, None]).exp_()  # the softmax, in place of the logits; 0 on the unused rows of the weight
    z[:, :vocab].sub_(smoothing / vocab)
    z.scatter_add_(1, targets, torch.full_like(z[:, :1], smoothing - 1))
    z.mul_(kept[:, None])
    return loss, z.to(dtype), None if b is None else z.sum(dim=0)


@functools.cache
def _compiled_math():
    """:func:`_chunk_math` compiled once per process (a chunk's row count may change: one more graph at most)."""
    return torch.compile(_chunk_math, fullgraph=True)


#: set when compiling :func:`_chunk_math` failed in this process: the eager code serves from then on
_KERNEL_FAILED: list[str] = []


def _kernel_math(*args):
    """:func:`_chunk_math` compiled; should compiling fail on this machine (a GPU without Triton's support, say), the
    eager code from then on, with one warning: the same values, more slowly."""
    if not _KERNEL_FAILED:
        try:
            return _compiled_math()(*args)
        except torch.OutOfMemoryError:  # the batch, not the compiler: the eager code would not hold it either
            raise
        except Exception as err:  # whatever a compiler raises: the eager code computes the same
            _KERNEL_FAILED.append(type(err).__name__)
            warnings.warn(
                f"linear_cross_entropy_sum: compiling the loss's elementwise part failed ({type(err).__name__}: "
                f"{str(err).splitlines()[0] if str(err) else ''}); it runs eagerly from now on",
                RuntimeWarning,
                stacklevel=2,
            )
    return _chunk_math(*args)


@torch.library.custom_op("mtkit::linear_cross_entropy", mutates_args=())
def _forward(
    hidden: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None,
    labels: torch.Tensor,
    smoothing: float,
    vocab: int,
    dtype: torch.dtype,
    rows_per_chunk: int,
    grad: bool,
    kernel: bool,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The summed loss and, with ``grad``, its gradients (hidden states, weight and bias; fp32 for the last two;
    empty tensors without ``grad`` or a bias); with ``kernel``, each chunk's elementwise part compiled. One operator
    to ``torch.compile``, whatever the number of rows: the chunks are its own business, so a batch of another size is
    no new graph."""
    rows, size = hidden.shape[0], weight.shape[0]
    keep = labels != IGNORE_INDEX
    targets = labels.clamp(min=0)[:, None]
    w = weight.to(dtype)
    b = None if bias is None else bias.reshape(-1).float()
    grad_hidden = torch.empty_like(hidden) if grad else hidden.new_empty(0)  # outputs never alias: one empty each
    grad_weight = torch.zeros(weight.shape, dtype=torch.float32, device=weight.device) if grad else hidden.new_empty(0)
    grad_bias = (
        torch.zeros(size, dtype=torch.float32, device=weight.device) if grad and b is not None else hidden.new_empty(0)
    )
    total = torch.zeros((), dtype=torch.float32, device=hidden.device)
    math = _kernel_math if kernel else _chunk_math
    for start in range(0, rows, rows_per_chunk):
        part = slice(start, min(rows, start + rows_per_chunk))
        h = hidden[part].to(dtype)
        loss, g, g_bias = math(h @ w.T, b, targets[part], keep[part], smoothing, vocab, dtype, grad)
        total += loss
        if not grad:
            continue
        grad_hidden[part] = g @ w
        grad_weight.add_(g.T @ h)  # a chunk's product in the compute dtype, summed over chunks in fp32
        if b is not None:
            grad_bias += g_bias
    return total, grad_hidden, grad_weight, grad_bias


@_forward.register_fake
def _(hidden, weight, bias, labels, smoothing, vocab, dtype, rows_per_chunk, grad, kernel):
    f32 = torch.float32
    return (
        hidden.new_empty((), dtype=f32),
        torch.empty_like(hidden) if grad else hidden.new_empty(0),
        weight.new_empty(weight.shape, dtype=f32) if grad else hidden.new_empty(0),
        weight.new_empty((weight.shape[0],), dtype=f32) if grad and bias is not None else hidden.new_empty(0),
    )


def _setup(ctx, inputs, output) -> None:
    hidden, weight, bias = inputs[:3]
    ctx.save_for_backward(*output[1:])
    ctx.dtypes = (hidden.dtype, weight.dtype, None if bias is None else bias.dtype)
    ctx.bias_shape = None if bias is None else bias.shape
    ctx.grad = inputs[-2]  # (..., grad, kernel)


def _backward(ctx, grad_total, *_):
    if not ctx.grad:
        raise RuntimeError("linear_cross_entropy_sum: backward through a loss computed without gradients")
    grad_hidden, grad_weight, grad_bias = ctx.saved_tensors
    hidden_dtype, weight_dtype, bias_dtype = ctx.dtypes
    dh = grad_hidden * grad_total.to(hidden_dtype)
    dw = (grad_weight * grad_total).to(weight_dtype)
    db = None if bias_dtype is None else (grad_bias * grad_total).reshape(ctx.bias_shape).to(bias_dtype)
    return dh, dw, db, None, None, None, None, None, None, None


_forward.register_autograd(_backward, setup_context=_setup)


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
    kernel: bool | None = None,
) -> torch.Tensor:
    """``F.cross_entropy((hidden @ weight.T + bias)[:, :vocab].float(), labels, ignore_index=-100,
    label_smoothing=label_smoothing, reduction="sum")``, fused and chunked (see the module's docstring); fp32.

    ``hidden`` is (rows x d), ``weight`` (V x d), ``bias`` (V) or (1 x V), ``labels`` (rows). ``dtype``: the matrix
    products' (default: autocast's where it is on, else ``hidden``'s). ``vocab`` (default V): the entries in use.
    ``kernel``: each chunk's elementwise part compiled into fused kernels (default: on a GPU; on a CPU the in-place
    eager code is as quick and compiling costs seconds per process).
    """
    if dtype is None:
        device = hidden.device.type
        dtype = torch.get_autocast_dtype(device) if torch.is_autocast_enabled(device) else hidden.dtype
    size = weight.shape[0]
    vocab = size if vocab is None else vocab
    if not 0 < vocab <= size:
        raise ValueError(f"vocab {vocab} outside 1..{size} (the weight's rows)")
    grad = torch.is_grad_enabled() and any(x is not None and x.requires_grad for x in (hidden, weight, bias))
    rows = chunk_rows(size, chunk_elements)
    kernel = hidden.device.type == "cuda" if kernel is None else kernel
    return _forward(hidden, weight, bias, labels, float(label_smoothing), vocab, dtype, rows, grad, kernel)[0]
