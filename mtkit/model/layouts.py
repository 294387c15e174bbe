"""A transformer's shape, and the transformers class that has its layout.

A shape is the recipe's model keys (layers, width, heads, FFN sizes, dropouts, activation, where the layer norm
sits, how positions are encoded, which embeddings are shared and whether they are scaled). Each layout maps onto the
one transformers class that computes it, so that every model loads with ``AutoModelForSeq2SeqLM`` and converts to
CTranslate2:

========== ========== ============== =============================================================
norm       positions  class          notes
========== ========== ============== =============================================================
post       learned    BART           a layer norm on the embeddings
post       sinusoidal MarianMT       the Transformer of Vaswani et al. and fairseq's ``transformer``
pre        learned    mBART          a layer norm on the embeddings, and one after each stack
pre        sinusoidal M2M100         a layer norm after each stack
========== ========== ============== =============================================================

Only MarianMT gives the source its own embeddings (``share_embeddings`` ``decoder`` or ``none``); transformers 5
unties the other classes' encoder and decoder embeddings together with the output layer, leaving a dead matrix.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from transformers import BartConfig, M2M100Config, MarianConfig, MBartConfig, PretrainedConfig

from mtkit.config.model import ModelShape
from mtkit.errors import UserError
from mtkit.model.vocab import KEY, rounded

#: the recipe keys a shape is made of
SHAPE_KEYS = tuple(f.name for f in fields(ModelShape))
#: the keys the four classes' configs take under the same names
_SAME_NAMES = SHAPE_KEYS[: SHAPE_KEYS.index("activation_function") + 1]

#: (pre-norm, positions) -> (config class, model_type)
LAYOUTS: dict[tuple[bool, str], tuple[type[PretrainedConfig], str]] = {
    (False, "learned"): (BartConfig, "bart"),
    (False, "sinusoidal"): (MarianConfig, "marian"),
    (True, "learned"): (MBartConfig, "mbart"),
    (True, "sinusoidal"): (M2M100Config, "m2m_100"),
}


def _norm(shape: ModelShape) -> str:
    return "pre" if shape.normalize_before else "post"


def check_shape(shape: ModelShape) -> None:
    """One :class:`UserError` naming the keys of a shape no class has, or heads that do not divide the width; the
    shape has every key given (a preset's, or a recipe's over it: :func:`mtkit.model.presets.shape_of`)."""
    for side in ("encoder", "decoder"):
        heads = getattr(shape, f"{side}_attention_heads")
        if shape.d_model % heads:
            raise UserError(
                f"--{side}_attention_heads {heads}: must divide --d_model {shape.d_model} (each head gets d_model / "
                "heads dimensions)"
            )
    if shape.share_embeddings != "all" and (shape.normalize_before or shape.positions != "sinusoidal"):
        cls = LAYOUTS[(shape.normalize_before, shape.positions)][0].__name__.removesuffix("Config")
        raise UserError(
            f"--share_embeddings {shape.share_embeddings} with --normalize_before {shape.normalize_before} and "
            f"--positions {shape.positions}: no transformers class has this layout ({cls}, the "
            f"{_norm(shape)}-norm {shape.positions} one, shares the source and target embeddings); only post-norm "
            "sinusoidal models (MarianMT) give the source its own"
        )


def model_type(shape: ModelShape) -> str:
    """The ``model_type`` of the class that has ``shape``'s layout."""
    return LAYOUTS[(shape.normalize_before, shape.positions)][1]


def layout_config(
    shape: ModelShape,
    *,
    vocab_size: int,
    pad_token_id: int,
    bos_token_id: int,
    eos_token_id: int,
    max_positions: int = 1024,
) -> PretrainedConfig:
    """The config of the class that has ``shape``'s layout, for a vocabulary of ``vocab_size`` entries (checked
    first: :func:`check_shape`), rounded up to a multiple of 64 rows where the class has an output bias to mask the
    extra ones with (BART, Marian, mBART; not M2M100: :mod:`mtkit.model.vocab`)."""
    check_shape(shape)
    cls, kind = LAYOUTS[(shape.normalize_before, shape.positions)]
    size = vocab_size if kind == "m2m_100" else rounded(vocab_size)  # M2M100 has no final_logits_bias
    keys: dict[str, Any] = {k: getattr(shape, k) for k in _SAME_NAMES}  # the sizes, dropouts and activation
    keys |= {
        "vocab_size": size,
        "scale_embedding": shape.scale_embedding,
        "tie_word_embeddings": shape.share_embeddings != "none",
        "max_position_embeddings": max_positions,
        "pad_token_id": pad_token_id,
        "bos_token_id": bos_token_id,
        "eos_token_id": eos_token_id,
        "forced_eos_token_id": eos_token_id,
        # mBART's decoder starts from </s>, as its own label shifting and CTranslate2's converter do
        "decoder_start_token_id": eos_token_id if kind == "mbart" else bos_token_id,
        # CTranslate2's converters read these two; transformers' classes fix them by layout
        "normalize_before": shape.normalize_before,
        "normalize_embedding": kind in ("bart", "mbart"),
    }
    if kind == "marian":
        keys["share_encoder_decoder_embeddings"] = shape.share_embeddings == "all"
    if size != vocab_size:
        keys[KEY] = vocab_size
    return cls(**keys)
