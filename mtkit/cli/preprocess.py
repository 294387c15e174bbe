"""``scripts/preprocess.py``: the tokenizer and the tokenized splits of a run, ahead of training, in one process."""

from __future__ import annotations

from pathlib import Path

from mtkit.config import parse_config
from mtkit.data.preprocess import preprocess
from mtkit.errors import cli_entry
from mtkit.textio import check_writable


@cli_entry
def main(argv: list[str] | None = None) -> None:
    cfg = parse_config(argv)
    check_writable(Path(cfg.train.output_dir), "--output_dir")
    data = preprocess(cfg)
    sizes = ", ".join(f"{name} {len(split)}" for name, split in data.items())
    print(f"preprocessed {sizes} pairs into {cfg.train.output_dir}")
