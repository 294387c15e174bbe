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

import numpy as np
from torch.utils.data import Sampler

from mtkit.errors import UserError


def padded_lengths(lengths: Sequence[int], pad_to_multiple_of: int = 1) -> np.ndarray:
    """``lengths`` rounded up to a multiple of ``pad_to_multiple_of``, as the collator pads them."""
    m = max(1, pad_to_multiple_of)
    return -(-np.asarray(lengths, dtype=np.int64) // m) * m


def pack_batches(
    lengths: Sequence[int],
    max_tokens: int,
    *,
    max_sentences: int | None = None,
    seed: int | None = None,
    pad_to_multiple_of: int = 1,
) -> list[list[int]]:
    """Indices grouped into length-bucketed batches under the token budget (shuffled if ``seed``).

    ``lengths`` are each pair's longer side; a batch's padded source and target both fit in
    ``len(batch) * longest``, with ``longest`` rounded up to ``pad_to_multiple_of``.
    """
    lengths = padded_lengths(lengths, pad_to_multiple_of)
    if len(lengths) and lengths.max() > max_tokens:
        raise UserError(
            f"--max_tokens {max_tokens} is smaller than the longest sequence ({lengths.max()} tokens once padded)"
        )
    rng = np.random.default_rng(seed) if seed is not None else None
    order = rng.permutation(len(lengths)) if rng is not None else np.arange(len(lengths))
    order = order[np.argsort(lengths[order], kind="stable")]
    batches: list[list[int]] = []
    batch: list[int] = []
    longest = 0
    for i in order.tolist():
        longest_if_added = max(longest, int(lengths[i]))
        full = max_sentences is not None and len(batch) >= max_sentences
        if batch and (longest_if_added * (len(batch) + 1) > max_tokens or full):
            batches.append(batch)
            batch, longest_if_added = [], int(lengths[i])
        batch.append(i)
        longest = longest_if_added
    if batch:
        batches.append(batch)
    if rng is not None:
        batches = [batches[j] for j in rng.permutation(len(batches))]
    return batches


def even_out(batches: list[list[int]], num_shards: int) -> list[list[int]]:
    """Halve the largest batches until their number divides by ``num_shards``."""
    batches = list(batches)
    while len(batches) % num_shards:
        j = max(range(len(batches)), key=lambda k: len(batches[k]))
        if len(batches[j]) < 2:
            raise UserError(f"too few sentences ({sum(map(len, batches))}) for {num_shards} processes")
        half = len(batches[j]) // 2
        batches[j : j + 1] = [batches[j][:half], batches[j][half:]]
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
    ) -> None:
        self.lengths = np.asarray(lengths)
        self.max_tokens = max_tokens
        self.pad_to_multiple_of = pad_to_multiple_of
        self.max_sentences = max_sentences
        self.num_replicas, self.rank = num_replicas, rank
        self.shuffle, self.seed = shuffle, seed
        self.set_epoch(0)

    def set_epoch(self, epoch: int, skip: int = 0, segments: Sequence[Sequence[int]] = ()) -> None:
        self.epoch, self.skip = epoch, skip
        seed = self.seed * 100_003 + epoch if self.shuffle else None
        batches = pack_batches(
            self.lengths,
            self.max_tokens,
            max_sentences=self.max_sentences,
            seed=seed,
            pad_to_multiple_of=self.pad_to_multiple_of,
        )
        for processes, rounds in segments:  # what earlier world sizes already trained on, in their dealing
            batches = even_out(batches, processes)[rounds * processes :]
        self._batches = even_out(batches, self.num_replicas)[self.rank :: self.num_replicas] if batches else []

    def __iter__(self) -> Iterator[list[int]]:
        yield from self._batches[self.skip :]

    def __len__(self) -> int:
        return len(self._batches) - self.skip


#: Padding granularity of training batches on a GPU (tensor-core friendly shapes; 1 on a CPU, where it only
#: adds padding); the token budget accounts for it.
PAD_TO_MULTIPLE_OF = 8


class Seq2SeqCollator:
    """Pads a list of tokenized pairs into model tensors and counts, on the host, what the batch holds.

    The counts (``batch["stats"]``: sentences, real and padded source/target tokens) are plain ints taken
    before any tensor reaches the accelerator, so the training step never has to read them back from it.
    """

    def __init__(self, tokenizer, model, pad_to_multiple_of: int = PAD_TO_MULTIPLE_OF) -> None:
        from transformers import DataCollatorForSeq2Seq

        self.pad_to_multiple_of = pad_to_multiple_of
        self._pad = DataCollatorForSeq2Seq(
            tokenizer, model=model, label_pad_token_id=-100, pad_to_multiple_of=pad_to_multiple_of
        )

    def __call__(self, features: list[dict]) -> dict:
        stats = {
            "sentences": len(features),
            "src_tokens": sum(len(f["input_ids"]) for f in features),
            "tgt_tokens": sum(len(f["labels"]) for f in features),
        }
        batch = dict(self._pad(features))
        stats["src_len"] = int(batch["input_ids"].shape[1])
        stats["tgt_len"] = int(batch["labels"].shape[1])
        batch["stats"] = stats
        return batch


def to_device(batch: dict, device) -> dict:
    """The batch's tensors on ``device`` (asynchronous copies from pinned memory); ``stats`` stays on the host."""
    return {k: v.to(device, non_blocking=True) if hasattr(v, "to") else v for k, v in batch.items()}
