"""Named architecture presets for training from scratch, as ``BartConfig`` s.

``transformer-base`` and ``transformer-big`` follow Vaswani et al. (2017), Table 3: post-layer-norm,
ReLU, scaled and shared embeddings (source, target and output projection tied). Two differences come
from BART's implementation: learned (not sinusoidal) positions and a layer norm on the embeddings.
"""

from __future__ import annotations

from transformers import BartConfig

from mtkit.errors import UserError

#: name -> (layers per stack, d_model, heads, ffn dim, dropout)
PRESETS: dict[str, tuple[int, int, int, int, float]] = {
    "transformer-tiny": (2, 128, 4, 512, 0.1),  # tests and the CPU demo
    "transformer-small": (3, 256, 4, 1024, 0.1),  # Multi30k-sized data on CPU or one GPU
    "transformer-base": (6, 512, 8, 2048, 0.1),  # the paper's base model
    "transformer-big": (6, 1024, 16, 4096, 0.3),  # the paper's big model (EN-DE dropout)
}


def preset_config(
    name: str,
    *,
    vocab_size: int,
    pad_token_id: int,
    bos_token_id: int,
    eos_token_id: int,
    max_positions: int = 1024,
    dropout: float | None = None,
) -> BartConfig:
    """The ``BartConfig`` of preset ``name`` for a vocabulary of ``vocab_size`` entries."""
    if name not in PRESETS:
        raise UserError(f"--model: unknown preset '{name}'; choose from {', '.join(PRESETS)}")
    layers, d_model, heads, ffn, default_dropout = PRESETS[name]
    return BartConfig(
        vocab_size=vocab_size,
        d_model=d_model,
        encoder_layers=layers,
        decoder_layers=layers,
        encoder_attention_heads=heads,
        decoder_attention_heads=heads,
        encoder_ffn_dim=ffn,
        decoder_ffn_dim=ffn,
        activation_function="relu",
        dropout=default_dropout if dropout is None else dropout,
        attention_dropout=0.0,
        activation_dropout=0.0,
        scale_embedding=True,
        normalize_before=False,
        tie_word_embeddings=True,
        max_position_embeddings=max_positions,
        pad_token_id=pad_token_id,
        bos_token_id=bos_token_id,
        eos_token_id=eos_token_id,
        decoder_start_token_id=bos_token_id,
        forced_eos_token_id=eos_token_id,
    )
