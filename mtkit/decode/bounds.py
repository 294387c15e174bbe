"""What every decoding engine shares: the output bound per batch, the position limit and batch order."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

from tqdm.auto import tqdm


def output_bound(longest_source: int, max_new_tokens: int, max_len_a: float, max_len_b: int) -> int:
    """Most tokens a batch whose longest source has ``longest_source`` tokens may generate."""
    return max(1, min(max_new_tokens, math.ceil(max_len_a * longest_source + max_len_b)))


def position_limit(config) -> int | None:
    """Longest source and output a model with learned positions handles (BART-style ``max_position_embeddings``,
    less the decoder start and one spare); ``None`` for models without such a limit (T5)."""
    limit = getattr(config, "max_position_embeddings", None)
    return limit - 2 if isinstance(limit, int) and limit > 2 else None


def length_sorted_batches(
    texts: Sequence[str], batch_size: int, progress: bool = False, langs: Sequence[str | None] | None = None
) -> Iterator[list[int]]:
    """Indices of ``texts`` in batches of ``batch_size``, longest texts first (little padding, and the batch that
    needs the most memory comes first); with ``langs`` (each text's target language), a batch holds one language."""
    key = [langs[i] or "" for i in range(len(texts))] if langs is not None else [""] * len(texts)
    order = sorted(range(len(texts)), key=lambda i: (key[i], -len(texts[i])))
    batches: list[list[int]] = []
    for i in order:
        if not batches or len(batches[-1]) == batch_size or key[batches[-1][0]] != key[i]:
            batches.append([])
        batches[-1].append(i)
    batches.sort(key=lambda batch: -len(texts[batch[0]]))  # stable: without langs, the order above
    yield from tqdm(batches, desc="translating", unit="batch", disable=not progress)


def target_languages(langs: Sequence[str | None] | str | None, n: int) -> list[str | None]:
    """Each of ``n`` sentences' target language: ``langs`` per sentence, one for all, or ``None`` for all."""
    if langs is None or isinstance(langs, str):
        return [langs] * n
    if len(langs) != n:
        raise ValueError(f"{len(langs)} target languages for {n} sentences")
    return list(langs)
