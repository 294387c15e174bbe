import pytest
from datasets import Dataset, DatasetDict

from mtkit.config import DataConfig, RunConfig
from mtkit.data.preprocess import tokenize_split, tokenize_splits
from mtkit.data.tokenizer import train_tokenizer

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
    cfg = DataConfig(max_source_length=4, max_target_length=3)
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
