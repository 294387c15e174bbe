"""The recipe keys of a from-scratch model's shape: layers, width, heads, FFN sizes, dropouts, activation, norm
placement, positions and embeddings. ``--model``'s preset fills in every key a recipe leaves empty
(:func:`mtkit.model.presets.shape_of`); :mod:`mtkit.model.layouts` maps a full shape onto its transformers class."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal


def _key(help: str) -> Any:
    return field(default=None, metadata={"help": help})


@dataclass
class ModelShape:
    """A transformer's shape; ``None``: the preset's (docs/training.md, "Any shape")."""

    encoder_layers: int | None = _key("Encoder layers (default: the preset's).")
    decoder_layers: int | None = _key("Decoder layers (default: the preset's).")
    d_model: int | None = _key("Width of the embeddings and of every layer (default: the preset's).")
    encoder_attention_heads: int | None = _key("Encoder attention heads, dividing d_model (default: the preset's).")
    decoder_attention_heads: int | None = _key("Decoder attention heads, dividing d_model (default: the preset's).")
    encoder_ffn_dim: int | None = _key("Inner size of the encoder's feed-forward blocks (default: the preset's).")
    decoder_ffn_dim: int | None = _key("Inner size of the decoder's feed-forward blocks (default: the preset's).")
    dropout: float | None = _key(
        "Dropout on embeddings and block outputs (default: the preset's, flan-t5's or the pretrained model's own)."
    )
    attention_dropout: float | None = _key("Dropout on the attention weights (default: the preset's, 0).")
    activation_dropout: float | None = _key("Dropout after the feed-forward activation (default: the preset's, 0).")
    activation_function: Literal["relu", "gelu", "gelu_new", "silu"] | None = _key(
        "Feed-forward activation (default: the preset's, relu); each converts to CTranslate2."
    )
    normalize_before: bool | None = _key(
        "Pre-norm (a layer norm before each block) instead of the presets' post-norm (after each residual)."
    )
    positions: Literal["learned", "sinusoidal"] | None = _key(
        "Position encodings: learned (the presets', as BART and mBART) or sinusoidal (as the paper, MarianMT and "
        "M2M100); with --normalize_before they choose the transformers class."
    )
    scale_embedding: bool | None = _key("Scale the embeddings by sqrt(d_model) (the presets do).")
    share_embeddings: Literal["all", "decoder", "none"] | None = _key(
        "Tied embeddings: all (source, target, output; the presets'), decoder (target and output) or none; decoder "
        "and none need the post-norm sinusoidal layout."
    )
