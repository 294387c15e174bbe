"""The ``data`` section of a recipe: where the parallel data comes from and how it is cut."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mtkit.config.keys import key


@dataclass
class DataConfig:
    """Where the parallel data comes from and how it is cut."""

    data_dir: str | None = key(None, "Folder of line-aligned files <split>.<lang> or <split>.<lang>.gz.")
    train_file: str | None = key(None, "CSV/TSV/JSONL training file with source and target columns.")
    validation_file: str | None = key(None, "CSV/TSV/JSONL validation file.")
    test_file: str | None = key(None, "CSV/TSV/JSONL test file.")
    dataset_name: str | None = key(None, "Hugging Face hub dataset with a `translation` column (e.g. wmt14).")
    dataset_config_name: str | None = key(None, "Hub dataset configuration (e.g. de-en).")
    source_lang: str = key("en", "Source language code.")
    target_lang: str = key("de", "Target language code.")
    train_split: str = key("train", "Name of the training split.")
    validation_split: str = key("valid", "Name of the validation split (Multi30k: val; hub: validation).")
    test_split: str | None = key("test", "Name of the test split, evaluated once at the end (none to skip).")
    source_column: str | None = key(None, "Source column of a CSV/TSV/JSONL file (default: detected).")
    target_column: str | None = key(None, "Target column of a CSV/TSV/JSONL file (default: detected).")
    mtgeneval_dir: str | None = key(
        None, "MT-GenEval in its repository layout: train on the counterfactual sentences of --target_langs."
    )
    mtgeneval_split: str = key("dev", "MT-GenEval split to train on with --mtgeneval_dir (dev or test).")
    target_langs: str | None = key(
        None, "Comma-separated target languages of a multilingual run (e.g. de,es,fr,it,pt); default --target_lang."
    )
    skip_empty_pairs: bool = key(
        False, "Drop pairs with an empty side (counted in the log) instead of refusing the file; for large corpora."
    )
    validation_fraction: float = key(
        0.1,
        "Without a validation split: the share held out, seeded, stratified by language and gender, "
        "counterfactual pairs kept together (written to <output_dir>/validation_split.jsonl).",
    )
    prompt: str | None = key(
        None,
        "Source prompt: a preset (t5, instruction) or a template with {source} and optionally {lang_name}, "
        "{lang}, {src_lang_name}; saved with the model.",
    )
    max_source_length: int = key(256, "Longest source in tokens (longer training pairs: --long_pairs).")
    max_target_length: int = key(256, "Longest target in tokens (longer training pairs: --long_pairs).")
    long_pairs: Literal["drop", "truncate"] = key(
        "drop",
        "Training pairs longer than the length limits: drop them (counted in the log; a cut target still ends in "
        "</s> and teaches the model to stop early) or truncate them. Validation and test pairs are truncated.",
    )
    max_train_samples: int | None = key(None, "Use only the first N training pairs (debugging).")
    preprocessing_num_workers: int | None = key(None, "Processes for tokenization (datasets.map num_proc).")

    def languages(self) -> list[str]:
        """The run's target languages: ``--target_langs`` split on commas, else ``[--target_lang]``."""
        if not self.target_langs:
            return [self.target_lang]
        return [code.strip() for code in self.target_langs.split(",") if code.strip()]
