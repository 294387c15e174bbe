"""The ``model`` section of a recipe: an architecture preset or a pretrained model to fine-tune, LoRA, and a
from-scratch model's shape keys (layers, width, heads, FFN sizes, dropouts, activation, norm placement, positions
and embeddings). ``--model``'s preset fills in every shape key a recipe leaves empty
(:func:`mtkit.model.presets.shape_of`); :mod:`mtkit.model.layouts` maps a full shape onto its transformers class.

:class:`ModelConfig` is a :class:`ModelShape` (the shape keys come first in the section) plus where the weights
come from: a preset's full shape is a :class:`ModelShape` alone."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mtkit.config.keys import key


@dataclass
class ModelShape:
    """A transformer's shape; ``None``: the preset's (docs/training.md, "Any shape")."""

    encoder_layers: int | None = key(None, "Encoder layers (default: the preset's).")
    decoder_layers: int | None = key(None, "Decoder layers (default: the preset's).")
    d_model: int | None = key(None, "Width of the embeddings and of every layer (default: the preset's).")
    encoder_attention_heads: int | None = key(
        None, "Encoder attention heads, dividing d_model (default: the preset's)."
    )
    decoder_attention_heads: int | None = key(
        None, "Decoder attention heads, dividing d_model (default: the preset's)."
    )
    encoder_ffn_dim: int | None = key(None, "Inner size of the encoder's feed-forward blocks (default: the preset's).")
    decoder_ffn_dim: int | None = key(None, "Inner size of the decoder's feed-forward blocks (default: the preset's).")
    dropout: float | None = key(
        None,
        "Dropout on embeddings and block outputs (default: the preset's, flan-t5's or the pretrained model's own).",
    )
    attention_dropout: float | None = key(None, "Dropout on the attention weights (default: the preset's, 0).")
    activation_dropout: float | None = key(
        None, "Dropout after the feed-forward activation (default: the preset's, 0)."
    )
    activation_function: Literal["relu", "gelu", "gelu_new", "silu"] | None = key(
        None, "Feed-forward activation (default: the preset's, relu); each converts to CTranslate2."
    )
    normalize_before: bool | None = key(
        None, "Pre-norm (a layer norm before each block) instead of the presets' post-norm (after each residual)."
    )
    positions: Literal["learned", "sinusoidal"] | None = key(
        None,
        "Position encodings: learned (the presets', as BART and mBART) or sinusoidal (as the paper, MarianMT and "
        "M2M100); with --normalize_before they choose the transformers class.",
    )
    scale_embedding: bool | None = key(None, "Scale the embeddings by sqrt(d_model) (the presets do).")
    share_embeddings: Literal["all", "decoder", "none"] | None = key(
        None,
        "Tied embeddings: all (source, target, output; the presets'), decoder (target and output) or none; decoder "
        "and none need the post-norm sinusoidal layout.",
    )


@dataclass
class ModelConfig(ModelShape):
    """Architecture preset or pretrained model (and, inherited, a from-scratch model's shape keys)."""

    model: str = key(
        "transformer-base",
        "Architecture preset for training from scratch: transformer-tiny, transformer-small, transformer-base, "
        "transformer-big, flan-t5-small, flan-t5-base, flan-t5-large or flan-t5-xl.",
    )
    model_name_or_path: str | None = key(None, "Pretrained seq2seq model to fine-tune (dir or hub id).")
    lora_r: int = key(0, "LoRA rank (peft); 0 trains every weight.")
    lora_alpha: float = key(32.0, "LoRA scaling numerator (updates are scaled by alpha / r).")
    lora_dropout: float = key(0.05, "Dropout on the LoRA path.")
    lora_target_modules: str | None = key(
        None, "Comma-separated module names LoRA adapts (default: the attention projections of the model type)."
    )
