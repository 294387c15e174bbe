"""Preprocessing, side by side: this toolkit's path (line files streamed into a memory-mapped Arrow file, then
``Dataset.map`` over it into the tokenized cache) against the standard approach of transformers'
``run_translation.py`` (the lines read into lists, ``Dataset.from_dict``, then ``Dataset.map(batched=True,
num_proc=N)`` calling the same tokenizer with truncation). Each system runs in a fresh process on the same files,
tokenizer, length limits and workers; its record has seconds, pairs/s and peak memory (its own and its workers')."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SYSTEMS = ("mtkit", "datasets.map")
COLUMNS = [
    ("pairs", "pairs", "{:,}"),
    ("seconds", "seconds", "{:.1f}"),
    ("pairs_per_s", "pairs/s", "{:,.0f}"),
    ("peak_rss_gb", "peak RSS GiB", "{:.2f}"),
    ("workers_peak_rss_gb", "workers' peak RSS GiB", "{:.2f}"),
    ("mtkit_speedup", "mtkit x", "{:.2f}"),
]


def run(source: Path, target: Path, tokenizer: Path, workers: int, max_length: int) -> list[dict]:
    """Both systems on the same input, each in its own process (and its own empty caches); the speed ratio."""
    records = []
    for system in SYSTEMS:
        with tempfile.TemporaryDirectory(prefix="mtkit-preprocess-bench-") as scratch:
            cmd = [sys.executable, __file__, system, str(source), str(target), str(tokenizer), str(workers)]
            res = subprocess.run([*cmd, str(max_length), scratch], capture_output=True, text=True)
            if res.returncode != 0:
                raise RuntimeError(f"{system} failed:\n{res.stderr[-3000:]}")
            records.append({"system": system, **json.loads(res.stdout.strip().splitlines()[-1])})
    for record in records:
        record["mtkit_speedup"] = record["seconds"] / records[0]["seconds"]
    return records


def _mtkit(source: Path, target: Path, tokenizer, workers: int, max_length: int, scratch: Path):
    """What ``scripts/preprocess.py`` does to a training split."""
    import datasets.config

    from mtkit.config import parse_config
    from mtkit.data.line_pairs import load_line_pairs
    from mtkit.data.preprocess import tokenize_split

    datasets.config.HF_DATASETS_CACHE = scratch / "hf"  # a cold start: the Arrow file is built now
    lang = target.name.removesuffix(".gz").rpartition(".")[2]
    flags = ["--preprocessing_num_workers", str(workers), "--max_source_length", str(max_length)]
    cfg = parse_config([*flags, "--max_target_length", str(max_length), "--output_dir", str(scratch / "run")])
    return tokenize_split(load_line_pairs(source, target, lang), tokenizer, cfg.data, scratch / "cache", "train")


def _datasets_map(source: Path, target: Path, tokenizer, workers: int, max_length: int, scratch: Path):
    """run_translation.py's way: every line in a list, one in-memory dataset, ``map`` with the tokenizer."""
    from datasets import Dataset

    from bias_eval.core.textio import read_lines

    data = Dataset.from_dict({"source": read_lines(source), "target": read_lines(target)})

    def encode(batch: dict) -> dict:
        return tokenizer(batch["source"], text_target=batch["target"], max_length=max_length, truncation=True)

    return data.map(
        encode, batched=True, num_proc=workers, remove_columns=["source", "target"],
        cache_file_name=str(scratch / "cache" / "train.arrow"),
    )  # fmt: skip


def _main() -> None:
    """``python scripts/benchmarks/preprocess.py SYSTEM SOURCE TARGET TOKENIZER WORKERS MAX_LENGTH SCRATCH``."""
    from datasets.utils.logging import disable_progress_bar
    from transformers import AutoTokenizer

    system, source, target, tokenizer_dir, workers, max_length, scratch = sys.argv[1:]
    disable_progress_bar()
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    (Path(scratch) / "cache").mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    make = _mtkit if system == "mtkit" else _datasets_map
    data = make(Path(source), Path(target), tokenizer, int(workers), int(max_length), Path(scratch))
    seconds = time.perf_counter() - start
    gib = 1024**2  # ru_maxrss is in KiB on Linux
    record = {
        "pairs": len(data),
        "seconds": seconds,
        "pairs_per_s": len(data) / seconds,
        "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / gib,
        "workers_peak_rss_gb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / gib,
    }
    print(json.dumps(record))


if __name__ == "__main__":
    _main()
