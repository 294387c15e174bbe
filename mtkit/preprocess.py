"""Turn ``source``/``target`` text into model inputs, batched and cached by ``datasets``."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from datasets import Dataset

from mtkit.config import DataConfig


def tokenize_split(
    split: Dataset, tokenizer, cfg: DataConfig, cache_dir: Path | None = None, name: str = "split"
) -> Dataset:
    """Add ``input_ids``, ``attention_mask``, ``labels`` and ``length`` (the longer side, in tokens).

    With ``cache_dir``, the result is stored as an Arrow file keyed by the data's and the tokenizer's
    fingerprints, and a later run (or a resumed one) reads it back instead of tokenizing again.
    """

    def encode(batch: dict) -> dict:
        sources = batch["source"]
        if cfg.source_prefix:
            sources = [cfg.source_prefix.format(source=s) for s in sources]
        enc = tokenizer(sources, max_length=cfg.max_source_length, truncation=True)
        enc["labels"] = tokenizer(text_target=batch["target"], max_length=cfg.max_target_length, truncation=True)[
            "input_ids"
        ]
        enc["length"] = [max(len(s), len(t)) for s, t in zip(enc["input_ids"], enc["labels"])]
        return dict(enc)

    cache_file = None
    if cache_dir is not None:
        key = hashlib.sha256(
            "|".join(
                [
                    split._fingerprint,
                    _tokenizer_fingerprint(tokenizer),
                    str((cfg.source_prefix, cfg.max_source_length, cfg.max_target_length)),
                ]
            ).encode()
        ).hexdigest()[:16]
        cache_dir.mkdir(parents=True, exist_ok=True)
        cache_file = str(cache_dir / f"{name}-{key}.arrow")
    return split.map(
        encode,
        batched=True,
        remove_columns=[c for c in split.column_names if c not in ("source", "target")],
        num_proc=cfg.preprocessing_num_workers,
        cache_file_name=cache_file,
        desc=f"tokenizing {name}",
    )


def _tokenizer_fingerprint(tokenizer) -> str:
    """The tokenizer's definition, without the truncation/padding state that encoding calls leave behind."""
    spec = json.loads(tokenizer.backend_tokenizer.to_str())
    spec.pop("truncation", None)
    spec.pop("padding", None)
    return json.dumps(spec, sort_keys=True)
