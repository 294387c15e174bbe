"""Named architecture presets for training from scratch: ``BartConfig`` s after the paper, and ``T5Config`` s
with flan-t5's shapes.

``transformer-base`` and ``transformer-big`` follow Vaswani et al. (2017), Table 3: post-layer-norm,
ReLU, scaled and shared embeddings (source, target and output projection tied). Two differences come
from BART's implementation: learned (not sinusoidal) positions and a layer norm on the embeddings.
"""

from __future__ import annotations

from transformers import BartConfig, PretrainedConfig, T5Config

from mtkit.errors import UserError

#: name -> (layers per stack, d_model, heads, ffn dim, dropout)
PRESETS: dict[str, tuple[int, int, int, int, float]] = {
    "transformer-tiny": (2, 128, 4, 512, 0.1),  # tests and the CPU demo
    "transformer-small": (3, 256, 4, 1024, 0.1),  # Multi30k-sized data on CPU or one GPU
    "transformer-base": (6, 512, 8, 2048, 0.1),  # the paper's base model
    "transformer-big": (6, 1024, 16, 4096, 0.3),  # the paper's big model (EN-DE dropout)
}


#: flan-t5's architectures (T5 v1.1: gated-GELU FFN, 32,128-entry vocabulary), as published in
#: the google/flan-t5-* configs: name -> (layers per stack, d_model, heads, d_ff). ``d_kv`` is 64 in all of them.
#: With random weights: for benchmarks and memory planning where the hub is out of reach; fine-tune the real
#: model with ``--model_name_or_path google/flan-t5-xl``. transformers 5 ties the output layer of a T5 built from a
#: config to the embeddings (the checkpoints keep a separate output layer), so these have vocab x d_model fewer
#: weights (xl: 66M of 2,850M) and scale the decoder output by d_model**-0.5 as tied T5s do; the FLOPs are the same.
T5_PRESETS: dict[str, tuple[int, int, int, int]] = {
    "flan-t5-small": (8, 512, 6, 1024),
    "flan-t5-base": (12, 768, 12, 2048),
    "flan-t5-large": (24, 1024, 16, 2816),
    "flan-t5-xl": (24, 2048, 32, 5120),
}
T5_VOCAB = 32128


def t5_preset_config(name: str, *, vocab_size: int, pad_token_id: int, eos_token_id: int, dropout: float | None = None):
    """The ``T5Config`` of flan-t5 preset ``name``; the vocabulary keeps flan-t5's 32,128 rows unless the tokenizer
    needs more, so that parameter counts and FLOPs are the real model's."""
    layers, d_model, heads, d_ff = T5_PRESETS[name]
    return T5Config(
        vocab_size=max(vocab_size, T5_VOCAB),
        d_model=d_model,
        d_kv=64,
        d_ff=d_ff,
        num_layers=layers,
        num_decoder_layers=layers,
        num_heads=heads,
        feed_forward_proj="gated-gelu",
        tie_word_embeddings=True,  # transformers 5 ties a T5 built from a config anyway; this also scales its output
        dropout_rate=0.1 if dropout is None else dropout,
        pad_token_id=pad_token_id,
        eos_token_id=eos_token_id,
        decoder_start_token_id=pad_token_id,
    )


def preset_config(
    name: str,
    *,
    vocab_size: int,
    pad_token_id: int,
    bos_token_id: int,
    eos_token_id: int,
    max_positions: int = 1024,
    dropout: float | None = None,
) -> PretrainedConfig:
    """The config of preset ``name`` for a vocabulary of ``vocab_size`` entries."""
    if name in T5_PRESETS:
        return t5_preset_config(
            name, vocab_size=vocab_size, pad_token_id=pad_token_id, eos_token_id=eos_token_id, dropout=dropout
        )
    if name not in PRESETS:
        raise UserError(f"--model: unknown preset '{name}'; choose from {', '.join(ALL_PRESETS)}")
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


#: Every preset name ``--model`` accepts.
ALL_PRESETS = [*PRESETS, *T5_PRESETS]
