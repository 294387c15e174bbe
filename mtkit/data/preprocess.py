"""Turn ``source``/``target`` text into model inputs: the run's tokenizer, then tokenized splits cached by
``datasets``. :func:`preprocess` does all of it ahead of training (``scripts/preprocess.py``, like
``fairseq-preprocess``), so that a multi-process run finds everything ready instead of waiting on rank 0.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from datasets import Dataset, DatasetDict

from mtkit.config import DataConfig, RunConfig
from mtkit.data.batching import column_array
from mtkit.data.languages import ModelLanguages
from mtkit.data.prompts import Prompt
from mtkit.data.tokenizer import load_tokenizer, train_tokenizer
from mtkit.errors import UserError
from mtkit.processes import is_main_process


def tokenize_split(
    split: Dataset, tokenizer, cfg: DataConfig, cache_dir: Path | None = None, name: str = "split"
) -> Dataset:
    """Add ``input_ids``, ``attention_mask``, ``labels`` and ``length`` (the longer side, in tokens); the
    source is wrapped in ``--prompt`` for its pair's target language (``lang`` column).

    With ``cache_dir``, the result is stored as an Arrow file keyed by the data's and the tokenizer's
    fingerprints, and a later run (or a resumed one) reads it back instead of tokenizing again.
    """

    prompt = Prompt.parse(cfg.prompt, cfg.source_lang) if cfg.prompt else None
    languages = ModelLanguages.of(tokenizer)

    def encode(batch: dict) -> dict:
        sources = batch["source"]
        langs = batch["lang"] if "lang" in batch else [cfg.target_lang] * len(sources)
        if prompt is not None:  # each pair in its own target language's prompt
            sources = [prompt.render(s, lang) for s, lang in zip(sources, langs)]
        src, tgt = languages.encode_pairs(tokenizer, sources, batch["target"], langs, cfg.source_lang)
        out = {"input_ids": [], "attention_mask": [], "labels": [], "length": [], "truncated": []}
        for s, t in zip(src, tgt):
            cut = len(s) > cfg.max_source_length or len(t) > cfg.max_target_length
            s, t = _truncate(s, cfg.max_source_length), _truncate(t, cfg.max_target_length)
            out["input_ids"].append(s)
            out["attention_mask"].append([1] * len(s))
            out["labels"].append(t)
            out["length"].append(max(len(s), len(t)))
            out["truncated"].append(cut)
        return out

    cache_file = None
    if cache_dir is not None:
        languages.set_languages(tokenizer, cfg.source_lang, cfg.languages()[0])  # one state to fingerprint
        key = hashlib.sha256(
            "|".join(
                [
                    split._fingerprint,  # with the pairs' languages (lang), where the split has them
                    _tokenizer_fingerprint(tokenizer),
                    str((prompt, cfg.source_lang, cfg.target_lang, cfg.max_source_length, cfg.max_target_length)),
                    "truncated-column, languages per pair",  # the layout of the cached rows
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
    """The tokenizer's definition, without the truncation/padding state that encoding calls leave behind: a fast
    tokenizer's backend definition, a slow one's (Marian's) files as ``save_pretrained`` writes them."""
    if getattr(tokenizer, "is_fast", False) and hasattr(tokenizer, "backend_tokenizer"):
        spec = json.loads(tokenizer.backend_tokenizer.to_str())
        spec.pop("truncation", None)
        spec.pop("padding", None)
        return type(tokenizer).__name__ + json.dumps(spec, sort_keys=True)
    digest = hashlib.sha256(type(tokenizer).__name__.encode())
    with tempfile.TemporaryDirectory() as tmp:
        tokenizer.save_pretrained(tmp)
        for path in sorted(Path(tmp).iterdir()):
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def prepare_tokenizer(cfg: RunConfig, train_texts: Dataset, out: Path):
    """The run's tokenizer: given, the pretrained model's, one saved by an earlier attempt, or trained now."""
    if cfg.tokenizer.tokenizer_name:
        return load_tokenizer(cfg.tokenizer.tokenizer_name)
    if cfg.model.model_name_or_path:
        return load_tokenizer(cfg.model.model_name_or_path, "--model_name_or_path")
    tok_dir = out / "tokenizer"
    if not (tok_dir / "tokenizer.json").exists():
        texts = tokenizer_sample(train_texts, cfg.tokenizer.tokenizer_train_samples, cfg.train.seed)
        tok = train_tokenizer(texts, vocab_size=cfg.tokenizer.vocab_size, kind=cfg.tokenizer.tokenizer_type)
        tok.save_pretrained(str(tok_dir))
    return load_tokenizer(tok_dir)


def tokenizer_sample(pairs: Dataset, n: int | None, seed: int, batch_rows: int = 10_000) -> Iterator[str]:
    """The source and target texts the tokenizer learns from, streamed ``batch_rows`` pairs at a time: every pair,
    or with ``n`` a seeded random sample of ``n`` pairs (a WMT corpus is several corpora one after the other, so
    its first lines are no sample of it), in corpus order."""
    texts = pairs.select_columns(["source", "target"])
    if n is not None and n < len(texts):
        texts = texts.select(np.sort(np.random.default_rng(seed).choice(len(texts), n, replace=False)))
    for batch in texts.iter(batch_size=batch_rows):
        for source, target in zip(batch["source"], batch["target"]):
            yield source
            yield target


def _truncate(ids: list[int], limit: int) -> list[int]:
    """``ids`` cut to ``limit`` tokens keeping the final special token (``</s>``), as the tokenizer's own
    truncation does for BART- and T5-style sequences."""
    return ids if len(ids) <= limit else ids[: limit - 1] + ids[-1:]


def tokenize_splits(raw: DatasetDict, tokenizer, cfg: RunConfig) -> dict[str, Dataset]:
    """Every split of ``raw`` tokenized, cached under ``<output_dir>/cache``. Pairs longer than
    ``--max_source_length``/``--max_target_length`` are dropped from the training split (``--long_pairs drop``, the
    default, as fairseq and OpenNMT filter them) or truncated (``--long_pairs truncate``, and always in the other
    splits, whose scores must cover every row); either way they are counted in the log."""
    cache = Path(cfg.train.output_dir) / "cache"
    out = {name: tokenize_split(split, tokenizer, cfg.data, cache, name) for name, split in raw.items()}
    limits = f"--max_source_length {cfg.data.max_source_length} or --max_target_length {cfg.data.max_target_length}"
    for name, split in out.items():
        long = column_array(split, "truncated")
        if not long.any():
            continue
        dropped = name == "train" and cfg.data.long_pairs == "drop"
        if dropped and long.all():
            raise UserError(
                f"--long_pairs drop: all {len(split)} training pairs are longer than {limits} tokens; raise the limits "
                "or pass --long_pairs truncate"
            )
        if dropped:
            out[name] = split.select(np.flatnonzero(~long))
        if is_main_process():
            done = "dropped (--long_pairs drop)" if dropped else "truncated"
            print(f"{name}: {int(long.sum())} of {len(split)} pairs longer than {limits} tokens were {done}",
                  file=sys.stderr)  # fmt: skip
    return out


def preprocess(cfg: RunConfig) -> dict[str, Dataset]:
    """Load the data, train or load the tokenizer and tokenize every split into ``--output_dir``."""
    from mtkit.data.corpus import load_parallel

    raw = load_parallel(cfg.data)
    out = Path(cfg.train.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = prepare_tokenizer(cfg, raw["train"], out)
    return tokenize_splits(raw, tokenizer, cfg)
