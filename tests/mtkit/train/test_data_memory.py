"""WMT-sized corpora in flat memory: the training path holds the training split as memory-mapped Arrow and numpy
arrays, never as Python objects, so a process's own memory does not grow with the corpus."""

from __future__ import annotations

import datasets
from testing_utils import (
    FAST_RUN,
    train_in_process,
)

#: Dataset methods that turn rows or columns into Python objects (Arrow and numpy formats are let through).
MATERIALISING = ("__getitem__", "__iter__", "to_list", "to_dict", "to_pandas", "to_polars")


def test_the_training_path_never_turns_the_training_split_into_python_objects(multi30k_small, tmp_path, monkeypatch):
    """Every ``datasets.Dataset`` method that makes Python objects of many rows is watched during a whole run
    (loading, tokenizer training, tokenization, batching, training, evaluation, export): none is called on a split
    as large as the training data, except a batch of rows for one training step."""
    n_train = 3000  # multi30k_small's train split; validation and test have 64 and 48 pairs
    calls: list[str] = []

    def watch(name: str):
        original = getattr(datasets.Dataset, name)

        def watched(self, *args, **kwargs):
            key = args[0] if args else None
            one_batch = name == "__getitem__" and isinstance(key, list) and len(key) <= 512
            if len(self) >= n_train and self.format["type"] not in ("arrow", "numpy") and not one_batch:
                calls.append(f"{name}({type(key).__name__}) on {len(self)} rows")
            return original(self, *args, **kwargs)

        monkeypatch.setattr(datasets.Dataset, name, watched)

    for name in MATERIALISING:
        watch(name)
    out = tmp_path / "run"
    res = train_in_process(
        "--data_dir", str(multi30k_small), *FAST_RUN, "--output_dir", str(out), "--max_steps", "4",
        "--eval_steps", "4", "--save_steps", "4", "--eval_max_samples", "8", "--max_new_tokens", "4",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    assert (out / "final" / "model.safetensors").is_file()
    assert calls == []


def test_a_folder_corpus_is_memory_mapped_from_one_arrow_file_per_split(multi30k_small):
    """The training split of a ``--data_dir`` corpus is read from an Arrow file (shared by every process through the
    page cache), not held in memory, and its rows are the files' lines."""
    from datasets.table import MemoryMappedTable

    from mtkit.config import parse_config
    from mtkit.data.corpus import load_parallel

    cfg = parse_config(["--data_dir", str(multi30k_small), *FAST_RUN, "--output_dir", "unused"])
    train = load_parallel(cfg.data)["train"]
    assert isinstance(train.data, MemoryMappedTable) and len(train.cache_files) == 1
    again = load_parallel(cfg.data)["train"]
    assert again.cache_files == train.cache_files  # the second load reuses the file
    sources = (multi30k_small / "train.en").read_text(encoding="utf-8").splitlines()
    assert train.with_format("arrow")[:]["source"].to_pylist() == sources
