"""The analytic FLOPs count against torch's own FLOP counter, and the peak table."""

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode
from transformers import AutoModelForSeq2SeqLM, T5Config

from mtkit.model.flops import Architecture, peak_for_precision, peak_tflops, peak_tflops_of
from mtkit.model.presets import preset_config


def counted_training_flops(config, batch: int, src_len: int, tgt_len: int) -> int:
    """FLOPs torch counts for one forward and backward pass (eager attention: torch has no formula for the
    CPU SDPA kernel, and eager attention runs the same matrix products)."""
    config._attn_implementation = "eager"
    model = AutoModelForSeq2SeqLM.from_config(config)
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(4, config.vocab_size, (batch, src_len), generator=g)
    dec = torch.randint(4, config.vocab_size, (batch, tgt_len), generator=g)
    mask = torch.ones_like(ids)
    mask[0, src_len // 2 :] = 0  # padding is computed on all the same
    with FlopCounterMode(display=False) as counter:
        model(input_ids=ids, attention_mask=mask, decoder_input_ids=dec).logits.sum().backward()
    return counter.get_total_flops()


@pytest.mark.parametrize("shape", [(3, 16, 24), (5, 40, 8)])
def test_bart_preset_matches_torch_flop_counter(shape):
    config = preset_config("transformer-tiny", vocab_size=1000, pad_token_id=1, bos_token_id=0, eos_token_id=2)
    expected = counted_training_flops(config, *shape)
    assert Architecture.from_config(config).training_flops(*shape) == pytest.approx(expected, rel=0.02)


@pytest.mark.parametrize("ffn", ["relu", "gated-gelu"])  # t5 v1.0 and flan-t5 (gated) feed-forward blocks
def test_t5_matches_torch_flop_counter(ffn):
    config = T5Config(
        vocab_size=1000, d_model=64, d_kv=16, num_heads=6, d_ff=256, num_layers=2, num_decoder_layers=3,
        feed_forward_proj=ffn, decoder_start_token_id=0,
    )  # fmt: skip
    expected = counted_training_flops(config, 4, 20, 12)
    assert Architecture.from_config(config).training_flops(4, 20, 12) == pytest.approx(expected, rel=0.02)


def test_real_token_count_is_the_sentences_own_work_not_the_paddings():
    """A padded batch of two sentences, counted on its real tokens: at least the FLOPs torch counts for each sentence
    alone (no padding), within the attention over padded keys of it, and below the padded batch's count."""
    config = preset_config("transformer-tiny", vocab_size=1000, pad_token_id=1, bos_token_id=0, eos_token_id=2)
    arch = Architecture.from_config(config)
    alone = counted_training_flops(config, 1, 30, 26) + counted_training_flops(config, 1, 12, 9)
    real = arch.training_flops(2, 30, 26, src_tokens=42, tgt_tokens=35)
    assert alone <= real < arch.training_flops(2, 30, 26)
    assert real == pytest.approx(alone, rel=0.03)


@pytest.mark.parametrize("precision", ["bf16", "fp16", "no"])
def test_the_peak_is_that_of_the_precision_in_use(precision):
    """H100 SXM: 989.4 dense bf16/fp16; fp32 runs on TF32 tensor cores at half of it; no MFU without TF32."""
    expected = {"bf16": 989.4, "fp16": 989.4, "no": 494.7}[precision]
    assert peak_for_precision(989.4, precision, tf32=True) == pytest.approx(expected)
    assert peak_for_precision(125.0, precision, tf32=False) == (125.0 if precision != "no" else None)


def test_backward_is_twice_forward_and_attention_grows_quadratically():
    arch = Architecture.from_config(
        preset_config("transformer-base", vocab_size=8000, pad_token_id=1, bos_token_id=0, eos_token_id=2)
    )
    assert arch.training_flops(8, 32, 32) == 3 * arch.forward_flops(8, 32, 32)
    # Doubling the batch doubles the count; doubling the lengths more than doubles it (attention).
    assert arch.forward_flops(16, 32, 32) == 2 * arch.forward_flops(8, 32, 32)
    assert arch.forward_flops(8, 64, 64) > 2 * arch.forward_flops(8, 32, 32)


@pytest.mark.parametrize(
    "name, peak",
    [
        ("NVIDIA H100 80GB HBM3", 989.4),
        ("NVIDIA H100 PCIe", 756.0),
        ("NVIDIA H200", 989.4),
        ("NVIDIA A100-SXM4-80GB", 312.0),
        ("NVIDIA A100-PCIE-40GB", 312.0),
        ("NVIDIA A10G", 70.0),
        ("NVIDIA L4", 121.0),
        ("NVIDIA L40S", 362.0),
        ("Tesla T4", 65.0),
        ("Tesla V100-SXM2-16GB", 125.0),
        ("Tesla V100-PCIE-32GB", 112.0),
        ("Some Future GPU", None),
    ],
)
def test_peak_table_by_device_name(name, peak):
    assert peak_tflops_of(name) == peak


def test_peak_override_and_cpu():
    assert peak_tflops(torch.device("cpu")) is None
    assert peak_tflops(torch.device("cpu"), override=2.5) == 2.5
