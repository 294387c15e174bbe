"""``scripts/preprocess.py``: the tokenizer and the tokenized splits of a run, ahead of training, in one process."""

from __future__ import annotations

from mtkit.config import parse_config
from mtkit.data.preprocess import preprocess
from mtkit.errors import cli_entry
from mtkit.train.checks import check_run_apart
from mtkit.train.lock import RunLock


@cli_entry
def main(argv: list[str] | None = None) -> None:
    cfg = parse_config(argv)
    check_run_apart(cfg)
    with RunLock(cfg.train.output_dir):  # one writer per run folder: not beside a run training there
        data = preprocess(cfg)
    sizes = ", ".join(f"{name} {len(split)}" for name, split in data.items())
    print(f"preprocessed {sizes} pairs into {cfg.train.output_dir}")
