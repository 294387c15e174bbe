import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from mtkit.data.batching import (
    BatchPlan,
    Seq2SeqCollator,
    TokenBatchSampler,
    bucketed,
    even_out,
    length_buckets,
    pack_batches,
    padded_lengths,
)
from mtkit.errors import UserError


def lengths(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(1, 80, n)


@pytest.mark.parametrize("n", [1000, 1001, 997])
@pytest.mark.parametrize("world", [1, 2, 3])
def test_every_sample_once_per_epoch_across_ranks(n, world):
    lens = lengths(n)
    for epoch in (0, 1):
        seen = []
        per_rank = []
        for rank in range(world):
            sampler = TokenBatchSampler(lens, 512, num_replicas=world, rank=rank, seed=3)
            sampler.set_epoch(epoch)
            batches = list(sampler)
            per_rank.append(len(batches))
            seen += [i for b in batches for i in b]
        assert sorted(seen) == list(range(n))
        assert len(set(per_rank)) == 1  # same number of steps on every rank


def test_token_budget_respected_and_batches_are_length_bucketed():
    lens = lengths(5000)
    batches = pack_batches(lens, 1000, seed=0)
    assert all(len(b) * lens[b].max() <= 1000 for b in batches)
    # Bucketing: padding waste is small compared with random batching.
    waste = sum(len(b) * lens[b].max() - lens[b].sum() for b in batches) / lens.sum()
    assert waste < 0.1


def test_shuffle_is_deterministic_per_epoch_and_differs_between_epochs():
    lens = lengths(2000)
    a, b = TokenBatchSampler(lens, 600, seed=1), TokenBatchSampler(lens, 600, seed=1)
    assert list(a) == list(b)
    epoch0 = list(a)
    a.set_epoch(1)
    assert list(a) != epoch0
    assert list(TokenBatchSampler(lens, 600, shuffle=False)) == list(TokenBatchSampler(lens, 600, shuffle=False))


def test_skip_resumes_mid_epoch():
    lens = lengths(2000)
    sampler = TokenBatchSampler(lens, 600, seed=1)
    sampler.set_epoch(2)
    full = list(sampler)
    sampler.set_epoch(2, skip=5)
    assert list(sampler) == full[5:]
    assert len(sampler) == len(full) - 5


def test_max_sentences_caps_batches():
    batches = pack_batches(np.full(100, 2), 10_000, max_sentences=7)
    assert max(map(len, batches)) == 7
    assert sorted(i for b in batches for i in b) == list(range(100))


def test_even_out_splits_largest_batches():
    assert even_out(BatchPlan.from_lists([[0, 1, 2, 3], [4]]), 3).tolist() == [[0, 1], [2, 3], [4]]
    assert even_out(BatchPlan.from_lists([[0, 1], [2, 3], [4]]), 2).tolist() == [[0], [1], [2, 3], [4]]


def greedy_batches(lengths, max_tokens, max_sentences=None, seed=None, pad=1) -> list[list[int]]:
    """The packing rule written out pair by pair, as a reference: sort by padded length (ties in a seeded random
    order), add pairs while (size + 1) x longest fits the budget and the sentence cap, then shuffle the batches."""
    padded = [-(-int(x) // pad) * pad for x in lengths]
    rng = np.random.default_rng(seed) if seed is not None else None
    order = list(rng.permutation(len(padded))) if rng is not None else list(range(len(padded)))
    order.sort(key=lambda i: padded[i])  # stable, like the argsort it mirrors
    batches, batch, longest = [], [], 0
    for i in order:
        if batch and (max(longest, padded[i]) * (len(batch) + 1) > max_tokens or len(batch) == max_sentences):
            batches.append(batch)
            batch, longest = [], 0
        batch.append(int(i))
        longest = max(longest, padded[i])
    batches += [batch] if batch else []
    return [batches[j] for j in rng.permutation(len(batches))] if rng is not None else batches


@pytest.mark.parametrize("seed", [None, 0, 7])
@pytest.mark.parametrize("max_sentences,pad", [(None, 1), (9, 1), (None, 8)])
def test_vectorised_packing_equals_the_pair_by_pair_rule(seed, max_sentences, pad):
    lens = lengths(3000, seed=11)
    plan = pack_batches(lens, 700, max_sentences=max_sentences, seed=seed, pad_to_multiple_of=pad)
    assert plan.tolist() == greedy_batches(lens, 700, max_sentences, seed, pad)
    assert isinstance(plan.order, np.ndarray) and isinstance(plan.starts, np.ndarray)


def test_a_plan_for_millions_of_pairs_holds_no_python_object_per_pair():
    """4.5M pairs (WMT14's size): the plan is three int64 arrays, about 8 bytes per pair plus 16 per batch."""
    lens = np.random.default_rng(0).integers(5, 120, 4_500_000)
    plan = pack_batches(lens, 4096, seed=1)
    assert plan.order.nbytes == 8 * len(lens)
    assert plan.starts.nbytes + plan.ends.nbytes == 16 * len(plan)
    assert (
        int(plan.sizes().sum()) == len(lens)
        and (plan.sizes() * padded_lengths(lens)[plan.order[plan.ends - 1]]).max() <= 4096
    )


def test_sequence_longer_than_budget_is_an_error():
    with pytest.raises(UserError, match="--max_tokens"):
        pack_batches([5, 300], 256)


def test_too_few_sentences_for_the_processes():
    with pytest.raises(UserError, match="processes"):
        TokenBatchSampler([3], 100, num_replicas=2, rank=0)


def test_budget_holds_for_every_padded_batch_of_a_real_corpus(tiny_run):
    """Source and target tensors as collated (padded to a multiple of 8) stay within --max_tokens."""
    from testing_utils import MULTI30K
    from transformers import AutoModelForSeq2SeqLM

    from mtkit.config import DataConfig
    from mtkit.data.batching import Seq2SeqCollator
    from mtkit.data.corpus import load_folder
    from mtkit.data.preprocess import tokenize_split
    from mtkit.data.tokenizer import load_tokenizer

    tok = load_tokenizer(tiny_run / "tokenizer")
    data = tokenize_split(load_folder(MULTI30K, "train", "en", "de"), tok, DataConfig())
    collator = Seq2SeqCollator.for_model(tok, AutoModelForSeq2SeqLM.from_pretrained(tiny_run / "final"))
    budget = 512
    rows = data.select_columns(["input_ids", "attention_mask", "labels"]).with_format(None)
    seen = []
    for indices in (
        i
        for rank in (0, 1)
        for i in TokenBatchSampler(data["length"], budget, num_replicas=2, rank=rank, pad_to_multiple_of=8)
    ):
        columns = rows[indices]
        batch = collator([dict(zip(columns, values)) for values in zip(*columns.values())])
        assert batch["input_ids"].numel() <= budget and batch["labels"].numel() <= budget
        assert batch["decoder_input_ids"].shape == batch["labels"].shape
        # The host-side counts are those of the tensors.
        stats = batch["stats"]
        assert stats["src_tokens"] == int(batch["attention_mask"].sum())
        assert stats["tgt_tokens"] == int((batch["labels"] != -100).sum())
        assert (stats["sentences"], stats["src_len"]) == tuple(batch["input_ids"].shape)
        seen += indices
    assert sorted(seen) == list(range(len(data)))


def test_padded_lengths_pack_under_the_budget():
    lens = lengths(3000)
    for batch in pack_batches(lens, 500, seed=1, pad_to_multiple_of=8):
        assert len(batch) * (-(-int(lens[batch].max()) // 8) * 8) <= 500
    with pytest.raises(UserError, match="once padded"):
        pack_batches([81], 82, pad_to_multiple_of=8)  # 81 fits raw, 88 does not


@pytest.mark.parametrize("worlds", [(2, 1), (1, 2), (2, 3), (3, 2, 1)])
def test_resuming_on_another_world_size_sees_every_sample_once(worlds):
    """An epoch trained a few rounds on each world size in turn (as successive resumes do): every sentence is
    trained on exactly once, and each process' batches still keep the token budget."""
    rng = np.random.default_rng(0)
    lengths = rng.integers(3, 60, size=500)
    seen: list[int] = []
    segments: list[list[int]] = []
    for k, world in enumerate(worlds):
        samplers = [TokenBatchSampler(lengths, 400, num_replicas=world, rank=r, seed=5) for r in range(world)]
        for sampler in samplers:
            sampler.set_epoch(3, segments=segments)
        last = k == len(worlds) - 1
        rounds = min(len(s) for s in samplers) if last else 4
        for sampler in samplers:
            for batch in list(sampler)[:rounds]:
                assert max(lengths[batch]) * len(batch) <= 400  # the budget holds
                seen.extend(batch)
        segments.append([world, rounds])
    assert sorted(seen) == list(range(len(lengths)))


@pytest.mark.parametrize("multiple", [1, 8])
def test_collator_pads_as_transformers_does(family_dir, multiple):
    """Source, mask and labels padded exactly as transformers' DataCollatorForSeq2Seq pads them, the counts summed
    from the rows."""
    import torch
    from transformers import AutoTokenizer, DataCollatorForSeq2Seq

    tok = AutoTokenizer.from_pretrained(family_dir("flan_t5"))
    texts = ["A man.", "Two children play in the park near the river.", "The doctor said she was tired today."]
    rows = [
        {"input_ids": tok(s)["input_ids"], "attention_mask": tok(s)["attention_mask"], "labels": tok(t)["input_ids"]}
        for s, t in zip(texts, reversed(texts))
    ]
    ours = Seq2SeqCollator(tok.pad_token_id, 0, multiple)(rows)
    theirs = DataCollatorForSeq2Seq(tok, label_pad_token_id=-100, pad_to_multiple_of=multiple)(rows)
    for key in ("input_ids", "attention_mask", "labels"):
        assert ours[key].dtype == torch.long and torch.equal(ours[key], theirs[key]), key
    stats = ours["stats"]
    assert stats["src_tokens"] == sum(len(r["input_ids"]) for r in rows) and stats["sentences"] == 3
    assert (stats["src_len"], stats["tgt_len"]) == (ours["input_ids"].shape[1], ours["labels"].shape[1])


@settings(max_examples=40, deadline=None)
@given(
    lens=st.lists(st.integers(1, 120), min_size=1, max_size=400),
    budget=st.integers(128, 2000),
    world=st.integers(1, 3),
    cap=st.one_of(st.none(), st.integers(1, 50)),
    epoch=st.integers(0, 3),
)
def test_static_shapes_see_every_sentence_once_an_epoch_in_few_shapes(lens, budget, world, cap, epoch):
    """Bucketed batches (``--static_shapes``): across the processes every pair once an epoch, each batch within the
    budget at its bucket's width, every batch of a bucket the same size but its last (and batches halved to deal
    them evenly), so an epoch has few shapes."""
    lens = np.array(lens)
    buckets = length_buckets(int(lens.max()))
    seen, shapes = [], set()
    for rank in range(world):
        try:
            sampler = TokenBatchSampler(lens, budget, num_replicas=world, rank=rank, seed=5, max_sentences=cap,
                                        buckets=buckets)  # fmt: skip
            sampler.set_epoch(epoch)
        except UserError as err:  # too few sentences to deal out evenly: refused, as without buckets
            assume("too few sentences" not in str(err))
            raise
        for batch in sampler:
            width = int(bucketed(lens[batch], buckets).max())
            assert (bucketed(lens[batch], buckets) == width).all()  # one bucket a batch
            assert len(batch) * width <= budget and len(batch) <= (cap or budget)
            shapes.add((len(batch), width))
            seen += batch
    assert sorted(seen) == list(range(len(lens)))
    used = len(set(bucketed(lens, buckets).tolist()))
    assert len(shapes) <= 2 * used + 2 * (world - 1)  # full and last batch of each bucket; halved to deal evenly


def test_length_buckets_and_the_collators_static_widths():
    """8, 16, 24, 32, then 1.5x/4/3x steps; source and target of a batch both padded to its bucket, every row of it in
    the loss (no ``loss_rows``, whose count would change the shape)."""
    assert length_buckets(200).tolist() == [8, 16, 24, 32, 48, 64, 96, 128, 192, 256]
    assert bucketed([1, 8, 9, 33, 300], length_buckets(256)).tolist() == [8, 8, 16, 48, 256]
    collate = Seq2SeqCollator(1, 0, buckets=length_buckets(64))
    batch = collate([{"input_ids": [5] * 20, "labels": [6] * 3}, {"input_ids": [5] * 4, "labels": [6] * 30}])
    assert batch["input_ids"].shape == batch["labels"].shape == (2, 32) and "loss_rows" not in batch
    assert batch["stats"]["tgt_tokens"] == 33 and int((batch["labels"] != -100).sum()) == 33


def test_the_collators_loss_rows_are_the_target_tokens():
    """``loss_rows``: the flat positions whose label is a token, in order, counted on the host."""
    batch = Seq2SeqCollator(1, 0)([{"input_ids": [5, 6], "labels": [7, 8, 9]}, {"input_ids": [5], "labels": [7]}])
    flat = batch["labels"].reshape(-1)
    assert batch["loss_rows"].tolist() == np.flatnonzero(flat.numpy() != -100).tolist() == [0, 1, 2, 3]
