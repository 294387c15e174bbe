import gzip

import pytest
from testing_utils import MULTI30K
from transformers import AutoTokenizer

from mtkit.data.tokenizer import load_tokenizer, train_tokenizer
from mtkit.errors import UserError

SENTENCES = [
    "Ein Mann fährt Fahrrad.",
    'He said: "no" (really) - 3.5 km!',
    "Zwei junge Frauen sitzen auf einer Bank, während ein Hund vorbeiläuft.",
]


@pytest.fixture(scope="module")
def corpus() -> list[str]:
    if not MULTI30K.is_dir():
        pytest.skip("../shared/data/multi30k is not there")
    lines = []
    for lang in ("en", "de"):
        with gzip.open(MULTI30K / f"train.{lang}.gz", "rt", encoding="utf-8") as f:
            lines += [next(f).strip() for _ in range(5000)]
    return lines


@pytest.mark.parametrize("kind", ["bpe", "unigram"])
def test_train_save_load_and_round_trip(corpus, kind, tmp_path):
    tok = train_tokenizer(corpus, vocab_size=2000, kind=kind)
    assert len(tok) == 2000
    tok.save_pretrained(tmp_path)
    loaded = AutoTokenizer.from_pretrained(tmp_path)
    assert [loaded.pad_token_id, loaded.eos_token_id, loaded.bos_token_id] == [1, 2, 0]
    for text in SENTENCES + corpus[:200:7]:
        ids = loaded(text).input_ids
        assert ids[-1] == loaded.eos_token_id
        assert loaded.decode(ids, skip_special_tokens=True) == text
        assert ids == tok(text).input_ids


def test_punctuation_does_not_merge_into_words(corpus):
    tok = train_tokenizer(corpus, vocab_size=2000)
    pieces = tok.convert_ids_to_tokens(tok("Ein Mann fährt Fahrrad.").input_ids)
    assert pieces[-2:] == [".", "</s>"]


def test_targets_encode_like_sources(corpus):
    tok = train_tokenizer(corpus, vocab_size=1000)
    assert tok(text_target="Ein Hund.").input_ids == tok("Ein Hund.").input_ids


def test_errors(tmp_path):
    with pytest.raises(UserError, match="unknown kind"):
        train_tokenizer(["a b"], vocab_size=10, kind="wordpiece")
    with pytest.raises(UserError, match="cannot load"):
        load_tokenizer(tmp_path / "missing")
