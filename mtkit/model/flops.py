"""Model FLOPs of an encoder-decoder training step, and the peak FLOP/s of common accelerators (for MFU).

The count follows the convention of the PaLM/nanoGPT MFU figures, adapted to encoder-decoder models whose
source and target lengths differ: every matrix multiplication over the real (non-padding) tokens (or, without
their counts, the padded shapes),
2 FLOPs per multiply-add, backward = 2x forward. Counted: the attention projections (Q, K, V, output),
attention scores and the weighted sum of values (self-attention over the source in the encoder; causal
self-attention over the target and cross-attention to the source in the decoder, counted in full as the
kernels compute them), the feed-forward blocks (two matrices, three for gated T5 v1.1/flan-t5), and the
output projection over the vocabulary. Left out, as elementwise or negligible: embedding lookups, layer
norms, softmax, activations, biases, dropout, T5's relative position bias and the loss itself.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from mtkit.model.vocab import tokens_in_use

#: Dense (no sparsity) bf16/fp16 tensor-core peak TFLOP/s per device, from vendor datasheets. Matched
#: against ``torch.cuda.get_device_name()`` in this order (the more specific names first).
PEAK_TFLOPS: list[tuple[str, float]] = [
    ("H200", 989.4),
    ("H100 PCIe", 756.0),
    ("H100 NVL", 835.0),
    ("H100", 989.4),  # SXM5 (p5): "NVIDIA H100 80GB HBM3"
    ("A100", 312.0),  # 40 GB and 80 GB, SXM4 and PCIe
    ("A10G", 70.0),  # AWS g5; lower clocks than the A10
    ("L40S", 362.0),
    ("L4", 121.0),
    ("T4", 65.0),  # fp16 only
    ("V100-PCIE", 112.0),
    ("V100", 125.0),  # SXM2
]


def peak_tflops_of(device_name: str) -> float | None:
    """The table's peak for a device name such as ``"NVIDIA H100 80GB HBM3"``; ``None`` if not listed."""
    name = device_name.upper()
    return next((peak for key, peak in PEAK_TFLOPS if key.upper() in name), None)


def peak_for_precision(peak: float | None, precision: str | None, tf32: bool) -> float | None:
    """The peak the run's precision can reach, from the table's bf16/fp16 one: the same for bf16 and fp16; half of
    it in fp32 with TF32 tensor cores (Ampere and newer); ``None`` (no MFU) for fp32 without them."""
    if peak is None or precision in ("bf16", "fp16"):
        return peak
    return peak / 2 if tf32 else None


def peak_tflops(device: torch.device, override: float | None = None, precision: str | None = "bf16") -> float | None:
    """Peak dense TFLOP/s of one ``device`` in ``precision`` (accelerate's ``no``/``fp16``/``bf16``): ``override`` if
    given, else looked up by name (:func:`peak_for_precision`)."""
    if override:
        return override
    if device.type != "cuda":
        return None
    peak = peak_tflops_of(torch.cuda.get_device_name(device))
    return peak_for_precision(peak, precision, tf32=torch.cuda.get_device_capability(device)[0] >= 8)


@dataclass(frozen=True)
class Architecture:
    """The sizes of an encoder-decoder transformer that its FLOPs depend on."""

    d_model: int
    attn_dim: int  # heads x head size (d_model for BART, num_heads * d_kv for T5)
    encoder_ffn: int
    decoder_ffn: int
    ffn_matrices: int  # 2, or 3 for gated feed-forward blocks
    encoder_layers: int
    decoder_layers: int
    vocab_size: int
    weight_gradients: bool = True  # False when the weights are frozen (LoRA): backward skips their gradients

    @classmethod
    def from_config(cls, config) -> Architecture:
        """From a ``BartConfig``-like (``encoder_layers``, ``encoder_ffn_dim``) or ``T5Config``-like config."""
        if hasattr(config, "encoder_ffn_dim"):
            return cls(
                d_model=config.d_model,
                attn_dim=config.d_model,
                encoder_ffn=config.encoder_ffn_dim,
                decoder_ffn=config.decoder_ffn_dim,
                ffn_matrices=2,
                encoder_layers=config.encoder_layers,
                decoder_layers=config.decoder_layers,
                vocab_size=tokens_in_use(config),  # a vocabulary rounded up: its extra rows are not counted
            )
        if hasattr(config, "d_ff") and hasattr(config, "d_kv"):
            return cls(
                d_model=config.d_model,
                attn_dim=config.num_heads * config.d_kv,
                encoder_ffn=config.d_ff,
                decoder_ffn=config.d_ff,
                ffn_matrices=3 if getattr(config, "is_gated_act", False) else 2,
                encoder_layers=config.num_layers,
                decoder_layers=config.num_decoder_layers or config.num_layers,
                vocab_size=config.vocab_size,
            )
        raise ValueError(f"no FLOPs formula for model type {getattr(config, 'model_type', type(config).__name__)}")

    def forward_flops(
        self, batch: int, src_len: int, tgt_len: int, src_tokens: int | None = None, tgt_tokens: int | None = None
    ) -> int:
        """FLOPs of one forward pass over a ``batch x src_len`` source and ``batch x tgt_len`` target; with
        ``src_tokens``/``tgt_tokens`` (the real, non-padding tokens) those of the real tokens only: every matrix
        product per token over them, attention scores over each real query and the padded keys."""
        d, a = self.d_model, self.attn_dim
        src = batch * src_len if src_tokens is None else src_tokens  # token positions
        tgt = batch * tgt_len if tgt_tokens is None else tgt_tokens
        encoder_layer = (
            2 * src * 4 * d * a + 2 * 2 * src * src_len * a + 2 * src * d * self.encoder_ffn * (self.ffn_matrices)
        )
        decoder_layer = (
            2 * tgt * 4 * d * a  # self-attention projections
            + 2 * 2 * tgt * tgt_len * a  # self-attention scores and values
            + 2 * tgt * 2 * d * a  # cross-attention query and output projections
            + 2 * src * 2 * d * a  # cross-attention keys and values, from the encoder output
            + 2 * 2 * tgt * src_len * a  # cross-attention scores and values
            + 2 * tgt * d * self.decoder_ffn * self.ffn_matrices
        )
        head = 2 * tgt * d * self.vocab_size
        return self.encoder_layers * encoder_layer + self.decoder_layers * decoder_layer + head

    def training_flops(
        self, batch: int, src_len: int, tgt_len: int, src_tokens: int | None = None, tgt_tokens: int | None = None
    ) -> int:
        """FLOPs of forward plus backward for one padded batch (of its real tokens when given): backward is twice
        the forward (gradients of the activations and of the weights), once with frozen weights (LoRA's small
        adapters left out)."""
        forward = self.forward_flops(batch, src_len, tgt_len, src_tokens, tgt_tokens)
        return (3 if self.weight_gradients else 2) * forward
