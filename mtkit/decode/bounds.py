"""What every decoding engine shares: the output bound per batch, the position limit, prompts and batch order."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

from tqdm.auto import tqdm

from mtkit.errors import UserError


def output_bound(longest_source: int, max_new_tokens: int, max_len_a: float, max_len_b: int) -> int:
    """Most tokens a batch whose longest source has ``longest_source`` tokens may generate."""
    return max(1, min(max_new_tokens, math.ceil(max_len_a * longest_source + max_len_b)))


def position_limit(config) -> int | None:
    """Longest source and output a model with learned positions handles (BART-style ``max_position_embeddings``,
    less the decoder start and one spare); ``None`` for models without such a limit (T5)."""
    limit = getattr(config, "max_position_embeddings", None)
    return limit - 2 if isinstance(limit, int) and limit > 2 else None


def apply_prompt(sentences: Sequence[str], prompt: str | None) -> list[str]:
    """``sentences`` put into ``prompt`` (a template with ``{source}``), or as they are without one."""
    if prompt is not None and "{source}" not in prompt:
        raise UserError(f"--prompt: template {prompt!r} has no {{source}} placeholder")
    return [prompt.format(source=s) if prompt else s for s in sentences]


def length_sorted_batches(texts: Sequence[str], batch_size: int, progress: bool = False) -> Iterator[list[int]]:
    """Indices of ``texts`` in batches of ``batch_size``, longest texts first (little padding, and the batch that
    needs the most memory comes first)."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)
    starts = range(0, len(order), batch_size)
    for start in tqdm(starts, desc="translating", unit="batch", disable=not progress):
        yield order[start : start + batch_size]
