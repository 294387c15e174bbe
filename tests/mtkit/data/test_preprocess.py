import pytest
from datasets import Dataset, DatasetDict

from mtkit.config import DataConfig, RunConfig
from mtkit.data.preprocess import tokenize_split, tokenize_splits
from mtkit.data.tokenizer import train_tokenizer
from mtkit.errors import UserError

PAIRS = {"source": ["a small cat", "the dog runs fast today"], "target": ["eine kleine Katze", "der Hund"]}


def tokenizer():
    return train_tokenizer(PAIRS["source"] + PAIRS["target"] * 3, vocab_size=60)


def test_inputs_labels_lengths_and_prompt():
    tok = tokenizer()
    out = tokenize_split(Dataset.from_dict(PAIRS), tok, DataConfig(prompt="translate: {source}"))
    assert out[0]["input_ids"] == tok("translate: a small cat").input_ids
    assert out[1]["labels"] == tok(text_target="der Hund").input_ids
    assert out["length"] == [max(len(s), len(t)) for s, t in zip(out["input_ids"], out["labels"])]
    short = tokenize_split(Dataset.from_dict(PAIRS), tok, DataConfig(max_source_length=3, max_target_length=2))
    assert max(map(len, short["input_ids"])) == 3 and max(map(len, short["labels"])) == 2


def test_cache_is_reused_and_keyed_by_content(tmp_path):
    tok = tokenizer()
    first = tokenize_split(Dataset.from_dict(PAIRS), tok, DataConfig(), tmp_path, "train")
    files = sorted(tmp_path.glob("train-*.arrow"))
    assert len(files) == 1 and first.cache_files[0]["filename"] == str(files[0])
    mtime = files[0].stat().st_mtime_ns
    again = tokenize_split(Dataset.from_dict(PAIRS), tok, DataConfig(), tmp_path, "train")
    assert again.cache_files[0]["filename"] == str(files[0]) and files[0].stat().st_mtime_ns == mtime
    changed = {"source": ["a small dog", *PAIRS["source"][1:]], "target": PAIRS["target"]}
    tokenize_split(Dataset.from_dict(changed), tok, DataConfig(), tmp_path, "train")
    assert len(list(tmp_path.glob("train-*.arrow"))) == 2


@pytest.mark.parametrize("kind", ["bpe", "unigram"])
def test_long_sentences_are_cut_as_the_tokenizer_would_and_counted(kind, tmp_path, capsys):
    """Pairs longer than the limits are truncated exactly as the tokenizer's own ``truncation=True`` does (BART-
    and T5-style sequences alike), flagged, and counted in one log line."""
    tok = train_tokenizer(PAIRS["source"] + PAIRS["target"] * 3, vocab_size=60, kind=kind)
    cfg = DataConfig(max_source_length=4, max_target_length=3, long_pairs="truncate")
    out = tokenize_split(Dataset.from_dict(PAIRS), tok, cfg)
    for i, (src, tgt) in enumerate(zip(PAIRS["source"], PAIRS["target"])):
        assert out[i]["input_ids"] == tok(src, max_length=4, truncation=True).input_ids
        assert out[i]["labels"] == tok(text_target=tgt, max_length=3, truncation=True).input_ids
        assert out[i]["attention_mask"] == tok(src, max_length=4, truncation=True).attention_mask
        whole = len(tok(src).input_ids) > 4 or len(tok(text_target=tgt).input_ids) > 3
        assert out[i]["truncated"] == whole
    run = RunConfig(data=cfg)
    run.train.output_dir = str(tmp_path)
    tokenize_splits(DatasetDict({"train": Dataset.from_dict(PAIRS)}), tok, run)
    assert f"train: {sum(out['truncated'])} of 2 pairs longer than --max_source_length 4" in capsys.readouterr().err


def test_long_training_pairs_are_dropped_by_default_and_other_splits_keep_every_row(tmp_path, capsys):
    """``--long_pairs drop``: the training split keeps exactly the pairs whose tokenized sides fit (counted by the
    tokenizer itself here), validation keeps every row (truncated); ``truncate`` keeps every training pair."""
    sources = ["a cat", "the dog runs fast today and every day", "a small cat", "dog"]
    targets = ["eine Katze", "der Hund", "eine kleine Katze die heute schnell rennt", "Hund"]
    tok = train_tokenizer(sources + targets * 3, vocab_size=80)
    raw = DatasetDict({name: Dataset.from_dict({"source": sources, "target": targets}) for name in ("train", "val")})
    fits = [len(tok(s).input_ids) <= 5 and len(tok(text_target=t).input_ids) <= 5 for s, t in zip(sources, targets)]
    assert 0 < sum(fits) < len(fits)
    run = RunConfig(data=DataConfig(max_source_length=5, max_target_length=5))
    run.train.output_dir = str(tmp_path)
    out = tokenize_splits(raw, tok, run)
    assert out["train"]["input_ids"] == [tok(s).input_ids for s, keep in zip(sources, fits) if keep]
    assert len(out["val"]) == len(sources) and max(map(len, out["val"]["input_ids"])) <= 5
    err = capsys.readouterr().err
    assert f"train: {len(fits) - sum(fits)} of 4 pairs longer than" in err and "were dropped (--long_pairs drop)" in err
    assert f"val: {len(fits) - sum(fits)} of 4 pairs longer than" in err and "were truncated" in err
    run.data.long_pairs = "truncate"
    assert len(tokenize_splits(raw, tok, run)["train"]) == len(sources)
    run.data.long_pairs, run.data.max_source_length = "drop", 1
    with pytest.raises(UserError, match="--long_pairs drop: all 4 training pairs are longer than"):
        tokenize_splits(raw, tok, run)
