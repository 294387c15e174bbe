"""The ``tokenizer`` section of a recipe: the shared subword vocabulary."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mtkit.config.keys import key


@dataclass
class TokenizerConfig:
    """The shared subword vocabulary."""

    tokenizer_name: str | None = key(None, "Existing tokenizer (dir or hub id); default: train one on the data.")
    tokenizer_type: Literal["bpe", "unigram"] = key("bpe", "Subword model trained on source+target text.")
    vocab_size: int = key(8000, "Subword vocabulary size (the paper's WMT14 EN-DE: 37000).")
    tokenizer_train_samples: int | None = key(None, "Train the tokenizer on at most N sentence pairs.")
