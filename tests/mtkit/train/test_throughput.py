import time

import pytest
import torch
from accelerate import Accelerator

from mtkit.model.flops import Architecture
from mtkit.model.presets import preset_config
from mtkit.train.throughput import Throughput

BATCHES = [
    {"sentences": 4, "src_tokens": 30, "tgt_tokens": 28, "src_len": 8, "tgt_len": 16},
    {"sentences": 2, "src_tokens": 20, "tgt_tokens": 10, "src_len": 16, "tgt_len": 8},
]


@pytest.fixture
def meter():
    arch = Architecture.from_config(
        preset_config("transformer-tiny", vocab_size=1000, pad_token_id=1, bos_token_id=0, eos_token_id=2)
    )
    return Throughput(Accelerator(cpu=True), arch, peak_tflops=2.0)


def test_report_follows_from_the_batches_counts(meter):
    for batch in BATCHES:
        meter.add_batch(batch)
    meter.add_loss(torch.tensor(19.0))
    meter.add_loss(torch.tensor(7.5))
    record = meter.report()
    seconds = record["elapsed_s"]
    assert record["loss"] == pytest.approx(26.5 / 38)  # per target token of the interval
    assert record["tgt_tok_s"] * seconds == pytest.approx(38)
    assert record["src_tok_s"] * seconds == pytest.approx(50)
    assert record["sent_s"] * seconds == pytest.approx(6)
    padded = 4 * 8 + 4 * 16 + 2 * 16 + 2 * 8
    assert record["padding"] == pytest.approx(1 - (50 + 38) / padded)
    flops = meter.arch.training_flops(4, 8, 16, 30, 28) + meter.arch.training_flops(2, 16, 8, 20, 10)  # real tokens
    assert record["tflops"] * seconds * 1e12 == pytest.approx(flops)
    assert flops < meter.arch.training_flops(4, 8, 16) + meter.arch.training_flops(2, 16, 8)  # not the padding
    assert record["mfu"] == pytest.approx(record["tflops"] / 2.0)
    assert meter.report()["tgt_tok_s"] == 0  # a new interval starts empty


def test_paused_time_is_left_out(meter):
    before = time.perf_counter()
    meter.report()
    time.sleep(0.2)
    meter.pause(0.15)
    meter.add_batch(BATCHES[0])
    record = meter.report()
    assert 0 < record["elapsed_s"] <= time.perf_counter() - before - 0.15
