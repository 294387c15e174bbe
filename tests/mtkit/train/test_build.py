"""mtkit/train/build.py: training batches collated in DataLoader worker processes (persistent, prefetching), the same
batches in the same order as collated in the loop; the worker count's default by device."""

from __future__ import annotations

import os

import pytest
import torch
from accelerate import Accelerator
from datasets import Dataset

from mtkit.config import parse_config
from mtkit.train.build import build_loader, loader_workers


class PidCollator:
    """Lists the rows' first ids and the process that collated them (a stand-in with the collator's interface)."""

    pad_to_multiple_of, buckets = 1, None

    def __call__(self, features: list[dict]) -> dict:
        return {"first": [f["input_ids"][0] for f in features], "pid": os.getpid()}


@pytest.fixture(scope="module")
def dataset() -> Dataset:
    rows = [[i + 3] * (1 + i % 9) for i in range(120)]
    return Dataset.from_dict({"input_ids": rows, "attention_mask": [[1] * len(r) for r in rows], "labels": rows,
                              "length": [len(r) for r in rows]})  # fmt: skip


def test_worker_count_defaults_to_two_on_a_gpu_and_none_on_a_cpu():
    assert loader_workers(None, cuda=True) == 2 and loader_workers(None, cuda=False) == 0
    assert loader_workers(3, cuda=False) == 3 and loader_workers(0, cuda=True) == 0


def test_workers_collate_the_same_batches_in_other_processes(dataset, tmp_path):
    cfg = parse_config(["--max_tokens", "40", "--output_dir", str(tmp_path), "--dataloader_num_workers", "2"])
    acc = Accelerator(cpu=True)
    loader, sampler = build_loader(dataset, cfg, acc, PidCollator(), train=True)
    assert loader.num_workers == 2 and loader.persistent_workers and loader.prefetch_factor == 4
    inline, _ = build_loader(dataset, cfg, acc, PidCollator(), train=True, workers=0)
    for epoch in (0, 1):  # persistent workers serve the next epoch's batches too
        sampler.set_epoch(epoch)
        inline.batch_sampler.set_epoch(epoch)
        got, expected = list(loader), list(inline)
        assert [b["first"] for b in got] == [b["first"] for b in expected] and len(got) > 3
        assert {b["pid"] for b in expected} == {os.getpid()} and os.getpid() not in {b["pid"] for b in got}
    valid, _ = build_loader(dataset, cfg, acc, PidCollator(), train=False)
    assert valid.num_workers == 0  # validation: a few batches per evaluation, no processes kept for them


@pytest.mark.parametrize("family", ["marian", "flan_t5"])
def test_dropout_reaches_a_pretrained_model_under_its_familys_name(family, family_dir):
    """``--dropout`` with ``--model_name_or_path`` sets the loaded model's own dropout (BART-like ``dropout``, T5's
    ``dropout_rate``), as its modules use it; without it the folder's value stays."""
    from transformers import AutoConfig

    from mtkit.train.build import build_model

    path = family_dir(family)
    name = "dropout_rate" if family == "flan_t5" else "dropout"
    own = getattr(AutoConfig.from_pretrained(path), name)
    assert own != 0.25
    model = build_model(parse_config(["--model_name_or_path", str(path), "--dropout", "0.25"]), tokenizer=None)
    assert getattr(model.config, name) == 0.25
    used = {m.p for m in model.modules() if isinstance(m, torch.nn.Dropout)} | {
        m.dropout for m in model.modules() if isinstance(getattr(m, "dropout", None), float)
    }
    assert 0.25 in used and own not in used - {0.0}
    assert getattr(build_model(parse_config(["--model_name_or_path", str(path)]), tokenizer=None).config, name) == own
