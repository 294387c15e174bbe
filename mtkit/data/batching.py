"""Token-budget batching (like fairseq's ``--max-tokens``), sharded across processes, and the collator.

Sentences are sorted by length (ties broken at random), packed greedily into batches whose padded size
``n * longest`` stays within ``max_tokens``, and the batches are shuffled. ``longest`` is rounded up to
the collator's ``pad_to_multiple_of``, so the budget holds for the tensors actually sent to the model.
Each epoch every sentence lands in exactly one batch of exactly one process: when the batch count does
not divide by the number of processes, the largest batches are halved until it does, so no sentence is
dropped or repeated.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import chain

import numpy as np
import torch
from torch.utils.data import Sampler

from mtkit.errors import UserError


def column_array(dataset, name: str) -> np.ndarray:
    """One column of a ``datasets.Dataset`` as a numpy array, through Arrow: no Python object per row, and no copy
    for a memory-mapped numeric column."""
    return dataset.select_columns([name]).with_format("arrow")[:].column(name).to_numpy()


def padded_lengths(lengths: Sequence[int], pad_to_multiple_of: int = 1) -> np.ndarray:
    """``lengths`` rounded up to a multiple of ``pad_to_multiple_of``, as the collator pads them."""
    m = max(1, pad_to_multiple_of)
    return -(-np.asarray(lengths, dtype=np.int64) // m) * m


class BatchPlan:
    """An epoch's batches as three numpy arrays, whatever the corpus size: batch ``k`` is
    ``order[starts[k]:ends[k]]``. Indexing with an integer gives one batch (an array view), with a slice or an
    index array a plan of those batches (sharing ``order``)."""

    def __init__(self, order: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> None:
        self.order, self.starts, self.ends = order, starts, ends

    @classmethod
    def from_lists(cls, batches: Sequence[Sequence[int]]) -> BatchPlan:
        sizes = np.array([len(b) for b in batches], dtype=np.int64)
        ends = np.cumsum(sizes)
        order = np.fromiter((i for b in batches for i in b), dtype=np.int64, count=int(sizes.sum()))
        return cls(order, ends - sizes, ends)

    def __len__(self) -> int:
        return len(self.starts)

    def __getitem__(self, key):
        if isinstance(key, (int, np.integer)):
            return self.order[self.starts[key] : self.ends[key]]
        return BatchPlan(self.order, self.starts[key], self.ends[key])

    def __iter__(self) -> Iterator[np.ndarray]:
        for start, end in zip(self.starts.tolist(), self.ends.tolist()):
            yield self.order[start:end]

    def sizes(self) -> np.ndarray:
        return self.ends - self.starts

    def tolist(self) -> list[list[int]]:
        return [batch.tolist() for batch in self]


def pack_batches(
    lengths: Sequence[int] | np.ndarray,
    max_tokens: int,
    *,
    max_sentences: int | None = None,
    seed: int | None = None,
    pad_to_multiple_of: int = 1,
) -> BatchPlan:
    """Indices grouped into length-bucketed batches under the token budget (shuffled if ``seed``).

    ``lengths`` are each pair's longer side; a batch's padded source and target both fit in
    ``len(batch) * longest``, with ``longest`` rounded up to ``pad_to_multiple_of``. Sorted by length, the
    longest of a batch is its last pair, so each batch is the longest run from its first pair whose last length
    times its size stays within the budget: one vectorised search per batch, never a Python object per pair.
    """
    lengths = padded_lengths(lengths, pad_to_multiple_of)
    if len(lengths) and lengths.max() > max_tokens:
        raise UserError(
            f"--max_tokens {max_tokens} is smaller than the longest sequence ({lengths.max()} tokens once padded)"
        )
    rng = np.random.default_rng(seed) if seed is not None else None
    order = rng.permutation(len(lengths)) if rng is not None else np.arange(len(lengths))
    order = order[np.argsort(lengths[order], kind="stable")]
    sorted_lengths = lengths[order]
    cap = max_sentences or len(order)
    starts: list[int] = []
    start, n = 0, len(order)
    while start < n:
        stop = min(n, start + cap, start + max_tokens // max(1, int(sorted_lengths[start])))  # longer runs cannot fit
        cost = sorted_lengths[start:stop] * np.arange(1, stop - start + 1)  # non-decreasing along the run
        starts.append(start)
        start += max(1, int(np.searchsorted(cost, max_tokens, side="right")))
    begin = np.array(starts, dtype=np.int64)
    plan = BatchPlan(order, begin, np.append(begin[1:], n).astype(np.int64))
    if rng is not None:
        plan = plan[rng.permutation(len(plan))]
    return plan


def length_buckets(longest: int) -> np.ndarray:
    """The lengths static-shape batches are padded to (``--static_shapes``): 8, 16, 24, 32, then steps of 1.5x and 4/3x
    (48, 64, 96, 128, 192, 256, ...), up to the first that holds ``longest``: a few shapes, and beyond 32 tokens less
    than a third of a batch's width in padding."""
    out = [8, 16, 24, 32]
    while out[-1] < longest:
        out.append(out[-2] * 2)
    return np.array(out, dtype=np.int64)


def bucketed(lengths: Sequence[int] | np.ndarray, buckets: np.ndarray) -> np.ndarray:
    """Each length rounded up to the smallest bucket that holds it (the largest bucket for longer ones)."""
    at = np.searchsorted(buckets, np.asarray(lengths, dtype=np.int64), side="left")
    return buckets[np.minimum(at, len(buckets) - 1)]


def pack_buckets(
    lengths: Sequence[int] | np.ndarray,
    max_tokens: int,
    buckets: np.ndarray,
    *,
    max_sentences: int | None = None,
    seed: int | None = None,
) -> BatchPlan:
    """Static-shape batches: each pair in the bucket of its longer side, each bucket's pairs (shuffled if ``seed``) in
    batches of ``min(max_sentences, max_tokens // bucket)`` (the last of a bucket smaller), the batches shuffled. A
    batch's source and target are both padded to its bucket (:class:`Seq2SeqCollator`), so an epoch has at most two
    shapes per bucket."""
    width = bucketed(lengths, buckets)
    if len(width) and np.max(lengths) > buckets[-1]:
        raise UserError(f"--static_shapes: a pair of {np.max(lengths)} tokens is longer than the last bucket")
    if len(width) and width.max() > max_tokens:
        raise UserError(f"--max_tokens {max_tokens} is smaller than the longest bucket ({width.max()} tokens)")
    rng = np.random.default_rng(seed) if seed is not None else None
    order = rng.permutation(len(width)) if rng is not None else np.arange(len(width))
    order = order[np.argsort(width[order], kind="stable")]
    edges = np.flatnonzero(np.diff(width[order])) + 1
    starts: list[int] = []
    for lo, hi in zip([0, *edges.tolist()], [*edges.tolist(), len(order)]):
        if hi > lo:
            size = max(1, min(max_sentences or max_tokens, max_tokens // int(width[order[lo]])))
            starts.extend(range(lo, hi, size))
    begin = np.array(starts, dtype=np.int64)
    plan = BatchPlan(order, begin, np.append(begin[1:], len(order)).astype(np.int64))
    if rng is not None:
        plan = plan[rng.permutation(len(plan))]
    return plan


def even_out(batches: BatchPlan, num_shards: int) -> BatchPlan:
    """Halve the largest batches (the first of equals) until their number divides by ``num_shards``."""
    while len(batches) % num_shards:
        sizes = batches.sizes()
        j = int(np.argmax(sizes))
        if sizes[j] < 2:
            raise UserError(f"too few sentences ({int(sizes.sum())}) for {num_shards} processes")
        middle = batches.starts[j] + sizes[j] // 2
        batches = BatchPlan(batches.order, np.insert(batches.starts, j + 1, middle), np.insert(batches.ends, j, middle))
    return batches


class TokenBatchSampler(Sampler[list[int]]):
    """Batch sampler yielding this process' share of an epoch's token-budget batches.

    ``set_epoch(epoch, skip=k)`` re-draws the epoch (deterministic in ``seed`` and ``epoch``) and skips
    this process' first ``k`` batches, which is how a resumed run continues mid-epoch. ``segments`` lists
    the parts of the epoch already trained with other numbers of processes, as ``(processes, rounds)``:
    a run resumed on another world size continues with the batches those rounds left, dealt anew, so that
    nothing of the epoch is repeated or skipped.
    """

    def __init__(
        self,
        lengths: Sequence[int],
        max_tokens: int,
        *,
        num_replicas: int = 1,
        rank: int = 0,
        shuffle: bool = True,
        seed: int = 0,
        max_sentences: int | None = None,
        pad_to_multiple_of: int = 1,
        buckets: np.ndarray | None = None,
    ) -> None:
        self.lengths = np.asarray(lengths, dtype=np.int64)
        self.buckets = buckets
        self.max_tokens = max_tokens
        self.pad_to_multiple_of = pad_to_multiple_of
        self.max_sentences = max_sentences
        self.num_replicas, self.rank = num_replicas, rank
        self.shuffle, self.seed = shuffle, seed
        self.set_epoch(0)

    def set_epoch(self, epoch: int, skip: int = 0, segments: Sequence[Sequence[int]] = ()) -> None:
        self.epoch, self.skip = epoch, skip
        seed = self.seed * 100_003 + epoch if self.shuffle else None
        if self.buckets is not None:
            batches = pack_buckets(
                self.lengths, self.max_tokens, self.buckets, max_sentences=self.max_sentences, seed=seed
            )
        else:
            batches = pack_batches(
                self.lengths,
                self.max_tokens,
                max_sentences=self.max_sentences,
                seed=seed,
                pad_to_multiple_of=self.pad_to_multiple_of,
            )
        for processes, rounds in segments:  # what earlier world sizes already trained on, in their dealing
            batches = even_out(batches, processes)[rounds * processes :]
        self._batches = even_out(batches, self.num_replicas)[self.rank :: self.num_replicas]

    def __iter__(self) -> Iterator[list[int]]:
        for batch in self._batches[self.skip :]:
            yield batch.tolist()

    def __len__(self) -> int:
        return len(self._batches) - self.skip


#: Padding granularity of batches (``--pad_to_multiple_of``): 1, since a multiple of 8 added a quarter of padding to
#: Multi30k's ~14-token sentences for tensor-core shapes that cuBLAS pads for itself; the token budget accounts for it.
PAD_TO_MULTIPLE_OF = 1


class Seq2SeqCollator:
    """Pads a list of tokenized pairs into model tensors and counts, on the host, what the batch holds.

    ``decoder_input_ids`` are the labels shifted right behind the model's decoder start token (padding where the labels
    are ``-100``), for every family: the model's own forward is never asked to build them. ``loss_rows`` lists the
    flat positions (row x target length + column) of the target tokens, the rows the loss is computed on
    (:mod:`mtkit.model.loss`), counted on the host so that the step never reads them back. The collator holds two
    token ids and no tokenizer or model, so it pickles into data-loader worker processes. The counts
    (``batch["stats"]``: sentences, real and padded source/target tokens) are plain ints taken before any tensor
    reaches the accelerator, so the training step never has to read them back from it.
    """

    def __init__(
        self,
        pad_token_id: int,
        decoder_start_token_id: int,
        pad_to_multiple_of: int = PAD_TO_MULTIPLE_OF,
        buckets: np.ndarray | None = None,
    ):
        self.pad_token_id, self.decoder_start_token_id = int(pad_token_id), int(decoder_start_token_id)
        self.pad_to_multiple_of, self.buckets = pad_to_multiple_of, buckets

    @classmethod
    def for_model(
        cls, tokenizer, model, pad_to_multiple_of: int = PAD_TO_MULTIPLE_OF, buckets: np.ndarray | None = None
    ) -> Seq2SeqCollator:
        """The collator of ``model`` (its decoder start token) and ``tokenizer`` (its padding token)."""
        from mtkit.data.languages import decoder_start_token_id

        return cls(tokenizer.pad_token_id, decoder_start_token_id(model), pad_to_multiple_of, buckets)

    def _padded(self, rows: list, value: int, width: int | None) -> tuple[torch.Tensor, np.ndarray]:
        """``rows`` padded with ``value`` into one tensor (filled through numpy: no tensor per row) ``width`` wide
        (``None``: the longest row rounded up to ``pad_to_multiple_of``), and their lengths."""
        lengths = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
        if width is None:
            width = int(padded_lengths([lengths.max()], self.pad_to_multiple_of)[0])
        out = np.full((len(rows), width), value, dtype=np.int64)
        out[np.arange(width) < lengths[:, None]] = np.fromiter(chain.from_iterable(rows), np.int64, int(lengths.sum()))
        return torch.from_numpy(out), lengths

    def __call__(self, features: list[dict]) -> dict:
        width = None  # static shapes: source and target both as wide as the bucket of the batch's longest pair
        if self.buckets is not None:
            longest = max(max(len(f["input_ids"]), len(f["labels"])) for f in features)
            width = int(bucketed([longest], self.buckets)[0])
        input_ids, src_lengths = self._padded([f["input_ids"] for f in features], self.pad_token_id, width)
        labels, tgt_lengths = self._padded([f["labels"] for f in features], -100, width)
        decoder_input_ids = torch.full_like(labels, self.pad_token_id)
        decoder_input_ids[:, 0] = self.decoder_start_token_id
        decoder_input_ids[:, 1:] = labels[:, :-1]
        batch = {
            "input_ids": input_ids,
            "attention_mask": torch.from_numpy(np.arange(input_ids.shape[1]) < src_lengths[:, None]).long(),
            "labels": labels,
            "decoder_input_ids": decoder_input_ids.masked_fill_(decoder_input_ids == -100, self.pad_token_id),
        }
        if self.buckets is None:  # static shapes: every row, since a count of rows that changes is a new shape
            batch["loss_rows"] = torch.from_numpy(np.flatnonzero(np.arange(labels.shape[1]) < tgt_lengths[:, None]))
        batch["stats"] = {
            "sentences": len(features),
            "src_tokens": int(src_lengths.sum()),
            "tgt_tokens": int(tgt_lengths.sum()),
            "src_len": int(input_ids.shape[1]),
            "tgt_len": int(labels.shape[1]),
        }
        return batch


def to_device(batch: dict, device) -> dict:
    """The batch's tensors on ``device`` (asynchronous copies from pinned memory); ``stats`` stays on the host."""
    return {k: v.to(device, non_blocking=True) if hasattr(v, "to") else v for k, v in batch.items()}
