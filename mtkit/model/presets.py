"""Named architecture presets for training from scratch: named sets of the recipe's shape keys
(:class:`mtkit.config.model.ModelShape`), and ``T5Config`` s with flan-t5's shapes.

``transformer-base`` and ``transformer-big`` follow Vaswani et al. (2017), Table 3: post-layer-norm,
ReLU, scaled and shared embeddings (source, target and output projection tied). The presets keep BART's learned
positions (and its layer norm on the embeddings); ``--positions sinusoidal`` gives the paper's (as MarianMT).
"""

from __future__ import annotations

from typing import Any

from transformers import PretrainedConfig, T5Config

from mtkit.config.model import ModelShape
from mtkit.errors import UserError
from mtkit.model.layouts import SHAPE_KEYS, check_shape, layout_config, model_type


def _transformer(layers: int, d_model: int, heads: int, ffn: int, dropout: float) -> dict[str, Any]:
    """The keys of a post-norm ReLU transformer with learned positions and all embeddings shared and scaled."""
    return {
        "encoder_layers": layers,
        "decoder_layers": layers,
        "d_model": d_model,
        "encoder_attention_heads": heads,
        "decoder_attention_heads": heads,
        "encoder_ffn_dim": ffn,
        "decoder_ffn_dim": ffn,
        "dropout": dropout,
        "attention_dropout": 0.0,
        "activation_dropout": 0.0,
        "activation_function": "relu",
        "normalize_before": False,
        "positions": "learned",
        "scale_embedding": True,
        "share_embeddings": "all",
    }


#: name -> every shape key (a recipe's own keys override them)
PRESETS: dict[str, dict[str, Any]] = {
    "transformer-tiny": _transformer(2, 128, 4, 512, 0.1),  # tests and the CPU demo
    "transformer-small": _transformer(3, 256, 4, 1024, 0.1),  # Multi30k-sized data on CPU or one GPU
    "transformer-base": _transformer(6, 512, 8, 2048, 0.1),  # the paper's base model
    "transformer-big": _transformer(6, 1024, 16, 4096, 0.3),  # the paper's big model (EN-DE dropout)
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


def preset_shape(name: str, overrides: dict[str, Any]) -> ModelShape:
    """Preset ``name``'s shape with the ``overrides`` that are not ``None``."""
    if name not in PRESETS:
        raise UserError(f"--model: unknown preset '{name}'; choose from {', '.join(ALL_PRESETS)}")
    given = {k: v for k, v in overrides.items() if v is not None}
    unknown = set(given) - set(SHAPE_KEYS)
    if unknown:
        raise TypeError(f"no shape key {sorted(unknown)}")
    return ModelShape(**(PRESETS[name] | given))


def shape_of(model_cfg) -> ModelShape:
    """The shape of a from-scratch model (``model_cfg``: a :class:`mtkit.config.ModelConfig`): preset
    ``--model``'s keys, each overridden by the recipe's own where it sets one."""
    return preset_shape(model_cfg.model, {k: getattr(model_cfg, k) for k in SHAPE_KEYS})


def check_model_shape(model_cfg) -> None:
    """Refuse, before a run writes anything, an unknown preset, a shape no class has (:func:`check_shape`), and shape
    keys where no shape is built from them: with ``--model_name_or_path`` (the pretrained model's shape is its own)
    or a flan-t5 preset (its shape is flan-t5's; ``--dropout`` alone applies)."""
    if not model_cfg.model_name_or_path and model_cfg.model not in T5_PRESETS:
        check_shape(shape_of(model_cfg))
        return
    given = [k for k in SHAPE_KEYS if k != "dropout" and getattr(model_cfg, k, None) is not None]
    if given:
        owner = "--model_name_or_path" if model_cfg.model_name_or_path else f"--model {model_cfg.model}"
        raise UserError(f"--{given[0]}: shapes a model trained from scratch; {owner} has its own shape")


def preset_model_type(model_cfg) -> str:
    """The ``model_type`` a from-scratch run builds: t5 for the flan-t5 presets, else its layout's."""
    return "t5" if model_cfg.model in T5_PRESETS else model_type(shape_of(model_cfg))


def preset_config(
    name: str,
    *,
    vocab_size: int,
    pad_token_id: int,
    bos_token_id: int,
    eos_token_id: int,
    max_positions: int = 1024,
    dropout: float | None = None,
    **keys: Any,
) -> PretrainedConfig:
    """The config of preset ``name`` for a vocabulary of ``vocab_size`` entries, with any shape ``keys`` (and
    ``dropout``) overriding the preset's."""
    if name in T5_PRESETS:
        return t5_preset_config(
            name, vocab_size=vocab_size, pad_token_id=pad_token_id, eos_token_id=eos_token_id, dropout=dropout
        )
    return layout_config(
        preset_shape(name, keys | {"dropout": dropout}),
        vocab_size=vocab_size,
        pad_token_id=pad_token_id,
        bos_token_id=bos_token_id,
        eos_token_id=eos_token_id,
        max_positions=max_positions,
    )


#: Every preset name ``--model`` accepts.
ALL_PRESETS = [*PRESETS, *T5_PRESETS]
