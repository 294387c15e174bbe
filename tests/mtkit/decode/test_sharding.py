"""A decode shared by several processes: whole batches dealt out, the same number of ``generate`` calls on every
process where parameters are sharded, and every sentence decoded once, as one process alone decodes it."""

from __future__ import annotations

import random

import pytest
import torch
from transformers import AutoModelForSeq2SeqLM

from mtkit.data.tokenizer import train_tokenizer
from mtkit.decode.generate import translation_candidates
from mtkit.decode.settings import DecodingSettings
from mtkit.decode.sharding import Shard, dealt, merged
from mtkit.model.presets import preset_config


def random_batches(rng: random.Random) -> list[list[int]]:
    sizes = [rng.randint(1, 5) for _ in range(rng.randint(0, 13))]
    ids = list(range(sum(sizes)))
    return [[ids.pop(0) for _ in range(size)] for size in sizes]


@pytest.mark.parametrize("count", [2, 3, 4, 8])
def test_every_batch_is_decoded_once_and_in_step_every_process_makes_the_same_calls(count):
    rng = random.Random(count)
    for _ in range(200):
        batches = random_batches(rng)
        shares = [dealt(batches, Shard(i, count, in_step=True)) for i in range(count)]
        assert len({len(calls) for calls in shares}) == 1  # the same number of generate calls everywhere
        assert len(shares[0]) == -(-len(batches) // count)  # and no more than the busiest process needs
        kept = sorted(tuple(c.indices) for calls in shares for c in calls if c.kept)
        assert kept == sorted(tuple(b) for b in batches)  # each batch once, as one process would make it
        for calls in shares:  # a filler decodes one sentence that exists, and only after the real calls
            fillers = [c for c in calls if not c.kept]
            assert all(len(c.indices) == 1 and c.indices[0] in batches[-1] for c in fillers)
            assert calls[len(calls) - len(fillers) :] == fillers
        free = [dealt(batches, Shard(i, count)) for i in range(count)]  # not in step: no fillers
        assert all(c.kept for calls in free for c in calls) and sum(map(len, free)) == len(batches)


def test_the_kth_calls_of_all_processes_decode_neighbouring_batches():
    """Longest first, round-robin: the k-th call of each process decodes one of batches k*count .. k*count+count-1
    (the synced steps of a call last as long as its longest batch, so similar lengths waste least)."""
    batches = [[i] for i in range(10)]
    for i in range(3):
        calls = dealt(batches, Shard(i, 3, in_step=True))
        for k, call in enumerate(calls):
            assert not call.kept or 3 * k <= call.indices[0] < 3 * k + 3


def test_merged_restores_the_input_order_and_refuses_a_gap():
    assert merged([([2, 0], ["c", "a"]), ([1], ["b"])], 3) == ["a", "b", "c"]
    with pytest.raises(RuntimeError, match=r"sentences \[1\]"):
        merged([([2, 0], ["c", "a"])], 3)


@pytest.fixture(scope="module")
def model_and_tokenizer():
    torch.manual_seed(0)
    text = ["a cat sat on the mat", "the dog", "a very long sentence about many cats and dogs in the park", "hi"]
    tok = train_tokenizer(text * 5, vocab_size=80)
    config = preset_config("transformer-tiny", vocab_size=len(tok), pad_token_id=1, bos_token_id=0, eos_token_id=2)
    model = AutoModelForSeq2SeqLM.from_config(config).eval()
    with torch.no_grad():  # weights far from their init: outputs that differ from sentence to sentence
        for param in model.parameters():
            param.normal_(0, 0.5)
    return model, tok


def test_three_shards_of_five_unequal_languages_decode_what_one_process_decodes(model_and_tokenizer):
    """Sentences in five target languages of unequal counts (one with none) and lengths, 3 processes: each makes
    the same number of generate calls, and together they give one process's translations. Dealing sentences, as
    before, made a process whose share spans more languages call generate more often."""
    model, tok = model_and_tokenizer
    words = "a cat sat on the mat the dog runs in the park".split()
    rng = random.Random(0)
    counts = {"de": 7, "es": 1, "fr": 4, "it": 0, "pt": 2}
    langs = [lang for lang, n in counts.items() for _ in range(n)]
    sources = [" ".join(rng.choices(words, k=rng.randint(1, 12))) for _ in langs]
    settings = DecodingSettings(num_beams=2, max_new_tokens=6, batch_size=3)
    alone = translation_candidates(model, tok, sources, settings, target_langs=langs)

    calls: list[int] = []
    hook = model.get_encoder().register_forward_hook(lambda *_: calls.append(1))  # one encoder pass per call
    try:
        shares = []
        for i in range(3):
            before = len(calls)
            share = Shard(i, 3, True)
            shares.append(translation_candidates(model, tok, sources, settings, target_langs=langs, shard=share))
            shares[-1] = (shares[-1], len(calls) - before)
    finally:
        hook.remove()
    assert len({n for _, n in shares}) == 1, [n for _, n in shares]
    together = [[c[i] for c, _ in shares if c[i]] for i in range(len(sources))]
    assert all(len(found) == 1 for found in together)  # each sentence decoded by one process
    assert [found[0] for found in together] == alone
    assert len(set(map(tuple, alone))) > 1  # not one output for all: the comparison can tell sentences apart
    old_shares = [langs[i * 5 : (i + 1) * 5] for i in range(3)]  # 14 sentences as 3 shares of 5, the old way
    assert len({len(set(share)) for share in old_shares}) > 1  # the data would have broken the old dealing
