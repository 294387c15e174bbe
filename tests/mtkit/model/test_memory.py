"""mtkit/model/memory.py: activation bytes measured on the meta device equal those of a real CPU forward, the
one-and-two-layer extrapolation matches the full-depth model, and the token budget fits its memory."""

from __future__ import annotations

import pytest
import torch
from transformers import AutoModelForSeq2SeqLM

from mtkit.model.memory import SHAPE, activation_bytes_per_position, saved_bytes, token_budget
from mtkit.model.presets import preset_config


def t5(layers: int = 3):
    config = preset_config("flan-t5-small", vocab_size=500, pad_token_id=0, bos_token_id=1, eos_token_id=1)
    config.vocab_size, config.d_model, config.d_ff, config.num_heads = 500, 64, 128, 2
    config.num_layers = config.num_decoder_layers = layers
    return config


def model_on(config, device: str):
    with torch.device(device):
        return AutoModelForSeq2SeqLM.from_config(config, dtype=torch.bfloat16)


def test_meta_device_measures_what_a_real_forward_keeps():
    config = t5()
    real = saved_bytes(model_on(config, "cpu"), *SHAPE)
    assert real > 0 and saved_bytes(model_on(config, "meta"), *SHAPE) == real


def test_scaled_from_one_and_two_layers_equals_the_full_depth():
    config = t5(layers=5)
    batch, src, tgt = SHAPE
    full = saved_bytes(model_on(config, "meta"), *SHAPE) / (batch * max(src, tgt))
    assert activation_bytes_per_position(config) == pytest.approx(full, rel=1e-6)


@pytest.mark.parametrize("checkpointing", [False, True])
def test_the_budget_fits_its_memory_and_the_next_step_up_does_not(checkpointing):
    config = t5(layers=4)
    with torch.device("meta"):
        params = sum(p.numel() for p in AutoModelForSeq2SeqLM.from_config(config).parameters())
    memory = params * 18 + 64 * 2**20
    budget = token_budget(config, memory, checkpointing=checkpointing, headroom=0.0, multiple=64, cap=10**6)
    per_position = activation_bytes_per_position(config, checkpointing=checkpointing)
    assert 0 < budget and params * 18 + budget * per_position <= memory < params * 18 + (budget + 64) * per_position
    if not checkpointing:  # the measurement at the budget's own shape (full depth, longest 48) fits too
        batch = budget // 48
        assert params * 18 + saved_bytes(model_on(config, "meta"), batch, 48, 40) <= memory
