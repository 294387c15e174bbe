"""Turn ``source``/``target`` text into model inputs: the run's tokenizer, then tokenized splits cached by
``datasets``. :func:`preprocess` does all of it ahead of training (``scripts/preprocess.py``, like
``fairseq-preprocess``), so that a multi-process run finds everything ready instead of waiting on rank 0.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from datasets import Dataset, DatasetDict

from mtkit.config import DataConfig, RunConfig
from mtkit.prompts import Prompt
from mtkit.tokenizer import load_tokenizer, train_tokenizer


def tokenize_split(
    split: Dataset, tokenizer, cfg: DataConfig, cache_dir: Path | None = None, name: str = "split"
) -> Dataset:
    """Add ``input_ids``, ``attention_mask``, ``labels`` and ``length`` (the longer side, in tokens); the
    source is wrapped in ``--prompt`` for its pair's target language (``lang`` column).

    With ``cache_dir``, the result is stored as an Arrow file keyed by the data's and the tokenizer's
    fingerprints, and a later run (or a resumed one) reads it back instead of tokenizing again.
    """

    prompt = Prompt.parse(cfg.prompt, cfg.source_lang) if cfg.prompt else None

    def encode(batch: dict) -> dict:
        sources = batch["source"]
        if prompt is not None:  # each pair in its own target language's prompt
            langs = batch["lang"] if "lang" in batch else [cfg.target_lang] * len(sources)
            sources = [prompt.render(s, lang) for s, lang in zip(sources, langs)]
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
                    str((prompt, cfg.source_lang, cfg.max_source_length, cfg.max_target_length)),
                ]
            ).encode()
        ).hexdigest()[:16]
        cache_dir.mkdir(parents=True, exist_ok=True)
        cache_file = str(cache_dir / f"{name}-{key}.arrow")
    return split.map(
        encode,
        batched=True,
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


def prepare_tokenizer(cfg: RunConfig, train_texts: Dataset, out: Path):
    """The run's tokenizer: given, the pretrained model's, one saved by an earlier attempt, or trained now."""
    if cfg.tokenizer.tokenizer_name or cfg.model.model_name_or_path:
        return load_tokenizer(cfg.tokenizer.tokenizer_name or cfg.model.model_name_or_path)
    tok_dir = out / "tokenizer"
    if not (tok_dir / "tokenizer.json").exists():
        n = cfg.tokenizer.tokenizer_train_samples or len(train_texts)
        texts = (text for row in train_texts.select(range(min(n, len(train_texts)))) for text in row.values())
        tok = train_tokenizer(texts, vocab_size=cfg.tokenizer.vocab_size, kind=cfg.tokenizer.tokenizer_type)
        tok.save_pretrained(str(tok_dir))
    return load_tokenizer(tok_dir)


def tokenize_splits(raw: DatasetDict, tokenizer, cfg: RunConfig) -> dict[str, Dataset]:
    """Every split of ``raw`` tokenized, cached under ``<output_dir>/cache``."""
    cache = Path(cfg.train.output_dir) / "cache"
    return {name: tokenize_split(split, tokenizer, cfg.data, cache, name) for name, split in raw.items()}


def preprocess(cfg: RunConfig) -> dict[str, Dataset]:
    """Load the data, train or load the tokenizer and tokenize every split into ``--output_dir``."""
    from mtkit.data import load_parallel

    raw = load_parallel(cfg.data)
    out = Path(cfg.train.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = prepare_tokenizer(cfg, raw["train"], out)
    return tokenize_splits(raw, tokenizer, cfg)
