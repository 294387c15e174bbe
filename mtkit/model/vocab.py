"""A from-scratch model's vocabulary rounded up to a multiple of 64 rows, so that its largest matrix product (the
output projection, and its gradients) runs on aligned shapes, as nanoGPT and Megatron do.

The extra rows are never a token: the config records the tokenizer's size (:data:`KEY`), the loss leaves the rows out
of its softmax (:func:`mtkit.model.linear_ce.linear_cross_entropy_sum`'s ``vocab``), decoding never picks them (the
output bias, ``final_logits_bias``, is :data:`MASKED_BIAS` there), and a model written for use (``final/``, an
exported checkpoint) has them sliced off, so that transformers, CTranslate2 and the Hub see the tokenizer's size.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch

VOCAB_MULTIPLE = 64
#: The config key holding the tokenizer's size where the model has more rows.
KEY = "tokenizer_vocab_size"
#: The output bias of the extra rows: fp16's lowest value, finite in every dtype, exp() of it 0.
MASKED_BIAS = float(torch.finfo(torch.float16).min)
#: The state-dict entries with a row per vocabulary entry (the bias has a column per entry).
_ROW_NAMES = ("shared.weight", "embed_tokens.weight", "lm_head.weight")


def rounded(size: int, multiple: int = VOCAB_MULTIPLE) -> int:
    """``size`` rounded up to a multiple of ``multiple``."""
    return -(-size // multiple) * multiple


def tokens_in_use(config) -> int:
    """How many of the model's vocabulary entries are tokens: the tokenizer's size where it was rounded up."""
    return getattr(config, KEY, None) or config.vocab_size


def mask_extra_rows(model: torch.nn.Module) -> None:
    """Set the output bias of a rounded-up model's extra rows to :data:`MASKED_BIAS`; the model must have one."""
    used = tokens_in_use(model.config)
    if used == model.config.vocab_size:
        return
    with torch.no_grad():
        model.final_logits_bias[..., used:] = MASKED_BIAS


def sliced_state_dict(config, state_dict: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """``state_dict`` with the extra rows of a rounded-up model's vocabulary removed (itself if there are none)."""
    used, size = tokens_in_use(config), config.vocab_size
    if used == size:
        return state_dict
    out = {}
    for name, tensor in state_dict.items():
        if name.endswith("final_logits_bias") and tensor.shape[-1] == size:
            tensor = tensor[..., :used]
        elif name.endswith(_ROW_NAMES) and tensor.dim() == 2 and tensor.shape[0] == size:
            tensor = tensor[:used]
        out[name] = tensor.contiguous()
    return out


def save_unpadded(model, folder, state_dict: dict[str, torch.Tensor] | None = None) -> None:
    """``model.save_pretrained(folder)`` (with ``state_dict``, default the model's own) at the tokenizer's size."""
    weights = dict(sliced_state_dict(model.config, model.state_dict() if state_dict is None else state_dict))
    with unpadded_config(model.config):  # save_pretrained empties the dict it is given: ours is a copy
        model.save_pretrained(str(folder), state_dict=weights, safe_serialization=True)


@contextmanager
def unpadded_config(config) -> Iterator[None]:
    """Inside, ``config`` says the tokenizer's size and no :data:`KEY` (what a model written for use has)."""
    used, size = tokens_in_use(config), config.vocab_size
    if used == size:
        yield
        return
    names = [n for n in ("vocab_size", "decoder_vocab_size") if getattr(config, n, None) == size]  # Marian: both
    for name in names:
        setattr(config, name, used)
    delattr(config, KEY)
    try:
        yield
    finally:
        for name in names:
            setattr(config, name, size)
        setattr(config, KEY, used)
