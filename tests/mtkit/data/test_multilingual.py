"""The five-language mixture as the model sees it: every language in every epoch, each source in its own
language's prompt."""

import pytest
from testing_utils import MTGENEVAL

from mtkit.config import DataConfig
from mtkit.data.batching import TokenBatchSampler
from mtkit.data.corpus import load_parallel
from mtkit.data.preprocess import tokenize_split
from mtkit.data.tokenizer import load_tokenizer

LANGS = ["de", "es", "fr", "it", "pt"]
NAMES = {"de": "German", "es": "Spanish", "fr": "French", "it": "Italian", "pt": "Portuguese"}


@pytest.fixture(scope="module")
def mixture(tiny_t5):
    cfg = DataConfig(mtgeneval_dir=str(MTGENEVAL), target_langs=",".join(LANGS), prompt="instruction")
    train = load_parallel(cfg)["train"]
    tok = load_tokenizer(tiny_t5)
    return train, tokenize_split(train, tok, cfg), tok


def test_each_source_is_wrapped_in_its_own_language_prompt(mixture):
    train, tokenized, tok = mixture
    for i in range(0, len(train), 997):  # a spread of rows across the five languages
        row = train[i]
        expected = f'Translate the following sentence from English to {NAMES[row["lang"]]}: "{row["source"]}"'
        assert tokenized[i]["input_ids"] == tok(expected).input_ids
        assert tokenized[i]["labels"] == tok(text_target=row["target"]).input_ids


def test_every_language_in_every_epoch_and_every_pair_once(mixture):
    _, tokenized, _ = mixture
    langs = tokenized["lang"]
    sampler = TokenBatchSampler(tokenized["length"], 2048, num_replicas=2, rank=0, shuffle=True, seed=1)
    other = TokenBatchSampler(tokenized["length"], 2048, num_replicas=2, rank=1, shuffle=True, seed=1)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        other.set_epoch(epoch)
        seen = [i for batch in [*sampler, *other] for i in batch]
        assert sorted(seen) == list(range(len(tokenized)))  # each row once per epoch, over both processes
        first_half = [i for batch in list(sampler)[: len(sampler) // 2] for i in batch]
        assert {langs[i] for i in first_half} == set(LANGS)  # shuffled: languages mixed, not in blocks
