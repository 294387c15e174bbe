"""WMT-sized corpora in flat memory: the training path holds the training split as memory-mapped Arrow and numpy
arrays, never as Python objects, so a process's own memory does not grow with the corpus."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import datasets
import psutil
import pytest
from testing_utils import BIN, FAST_RUN, MULTI30K, OFFLINE_ENV, REPO, launch_command, read_gz_lines, train_in_process

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


def anonymous_mib(pid: int) -> int:
    """A process's own memory (anonymous pages: heap, Python objects, tensors), not the files it maps."""
    text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    return int(next(line.split()[1] for line in text.splitlines() if line.startswith("Anonymous:"))) // 1024


def two_process_peak(data: Path, out: Path) -> list[int]:
    """Preprocess ``data`` in this process, then train 2 DDP processes on the cache for 2 updates, sampling each
    training process's anonymous memory; its peak per process."""
    from mtkit.config import parse_config
    from mtkit.data.preprocess import preprocess

    flags = [
        "--data_dir", str(data), *FAST_RUN, "--test_split", "none", "--vocab_size", "2000",
        "--tokenizer_train_samples", "5000", "--max_steps", "2", "--eval_steps", "2", "--eval_max_samples", "2",
        "--max_new_tokens", "2", "--output_dir", str(out),
        # batches of one shape whatever the corpus (8 pairs cut to 16 tokens): equal activation memory in both runs
        "--max_sentences", "8", "--max_source_length", "16", "--max_target_length", "16",
    ]  # fmt: skip
    preprocess(parse_config(flags))
    env = {**os.environ, **OFFLINE_ENV, "PATH": BIN + os.pathsep + os.environ["PATH"]}
    proc = subprocess.Popen(launch_command("cpu_ddp", *flags, processes=None), cwd=REPO, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
    peaks: dict[int, int] = {}
    launcher = psutil.Process(proc.pid)
    while proc.poll() is None:
        for child in launcher.children(recursive=True):  # the training processes, not the launcher
            try:
                if any(part.endswith("train.py") for part in child.cmdline()):
                    peaks[child.pid] = max(peaks.get(child.pid, 0), anonymous_mib(child.pid))
            except (OSError, psutil.Error, StopIteration):
                continue
        time.sleep(0.1)
    assert proc.returncode == 0, proc.stderr.read()[-3000:]
    return sorted(peaks.values())[-2:]


# slow: four two-process runs (80 s); the default tier checks the memory map itself in one process above
@pytest.mark.slow
def test_two_processes_on_a_cached_corpus_do_not_each_hold_a_copy_of_it(tmp_path):
    """40 times the training data costs each of two training processes less own memory than half of what one
    copy of that data as Python strings would take: the corpus stays in the shared, memory-mapped cache."""
    lines = {lang: read_gz_lines(MULTI30K / f"train.{lang}.gz", 5000) for lang in ("en", "de")}
    peaks = {}
    for pairs in (5000, 200_000):
        data = tmp_path / f"corpus{pairs}"
        data.mkdir()
        for split, n in (("train", pairs), ("val", 64)):
            for lang, sentences in lines.items():
                text = "".join(sentences[i % len(sentences)] + "\n" for i in range(n))
                (data / f"{split}.{lang}").write_text(text, encoding="utf-8")
        peaks[pairs] = two_process_peak(data, tmp_path / f"run{pairs}")
    copy_mib = sum(sys.getsizeof(s) for side in lines.values() for s in side) * 40 / 2**20  # 200,000 pairs
    growth = [big - small for big, small in zip(peaks[200_000], peaks[5000])]
    assert len(growth) == 2 and max(growth) < copy_mib / 2, (peaks, copy_mib)
