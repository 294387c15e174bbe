"""Token-budget batching (like fairseq's ``--max-tokens``), sharded across processes.

Sentences are sorted by length (ties broken at random), packed greedily into batches whose padded size
``n * longest`` stays within ``max_tokens``, and the batches are shuffled. Each epoch every sentence
lands in exactly one batch of exactly one process: when the batch count does not divide by the number of
processes, the largest batches are halved until it does, so no sentence is dropped or repeated.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
from torch.utils.data import Sampler

from mtkit.errors import UserError


def pack_batches(
    lengths: Sequence[int], max_tokens: int, *, max_sentences: int | None = None, seed: int | None = None
) -> list[list[int]]:
    """Indices grouped into length-bucketed batches under the token budget (shuffled if ``seed``)."""
    lengths = np.asarray(lengths)
    if len(lengths) and lengths.max() > max_tokens:
        raise UserError(f"--max_tokens {max_tokens} is smaller than the longest sequence ({lengths.max()} tokens)")
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
    this process' first ``k`` batches, which is how a resumed run continues mid-epoch.
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
    ) -> None:
        self.lengths = np.asarray(lengths)
        self.max_tokens = max_tokens
        self.max_sentences = max_sentences
        self.num_replicas, self.rank = num_replicas, rank
        self.shuffle, self.seed = shuffle, seed
        self.set_epoch(0)

    def set_epoch(self, epoch: int, skip: int = 0) -> None:
        self.epoch, self.skip = epoch, skip
        seed = self.seed * 100_003 + epoch if self.shuffle else None
        everything = pack_batches(self.lengths, self.max_tokens, max_sentences=self.max_sentences, seed=seed)
        self._batches = even_out(everything, self.num_replicas)[self.rank :: self.num_replicas]

    def __iter__(self) -> Iterator[list[int]]:
        yield from self._batches[self.skip :]

    def __len__(self) -> int:
        return len(self._batches) - self.skip
