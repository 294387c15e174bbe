"""Fixtures shared by the test suite: slices of the real data in ../shared and a trained tiny model."""

from __future__ import annotations

from pathlib import Path

import pytest
from testing_utils import FAST_RUN, MULTI30K, run_script, write_slice


@pytest.fixture(scope="session")
def multi30k_small(tmp_path_factory) -> Path:
    """A slice of Multi30k EN-DE in the ``<split>.<lang>`` layout: 3000 train, 64 val, 48 test pairs."""
    if not MULTI30K.is_dir():
        pytest.skip("../shared/data/multi30k is not there")
    out = tmp_path_factory.mktemp("multi30k_small")
    for split, n in (("train", 3000), ("val", 64), ("test_2016_flickr", 48)):
        for lang in ("en", "de"):
            write_slice(MULTI30K / f"{split}.{lang}.gz", out / f"{split}.{lang}", n)
    return out


@pytest.fixture(scope="session")
def tiny_run(multi30k_small, tmp_path_factory) -> Path:
    """A finished 40-update run on the Multi30k slice (shared by tests that need a trained model)."""
    out = tmp_path_factory.mktemp("tiny_run") / "run"
    res = run_script(
        "train.py", "--data_dir", str(multi30k_small), *FAST_RUN,
        "--output_dir", str(out), "--max_steps", "40", "--eval_steps", "20", "--save_steps", "20",
        "--report_to", "tensorboard,wandb", "--peak_tflops", "1", env={"WANDB_DIR": str(out.parent)},
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    return out


def pytest_collection_modifyitems(config, items):
    """Tests marked ``gpu`` need CUDA: skipped on machines without it (``make test-gpu`` runs them on one)."""
    import torch

    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (make test-gpu)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
