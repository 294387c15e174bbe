"""One decode shared by several processes: whole batches dealt out, and every process making the same calls.

Under ZeRO-3 and FSDP each forward pass of ``generate`` gathers parameters from every process, so every process
must make the same number of ``generate`` calls, each stepping as long as the longest of them (``synced_gpus``).
Dealing *sentences* cannot promise that: batches are cut per target language and by length, so a share that spans
two languages makes one call more than the others, and the run aborts (gloo) or hangs (NCCL). Here the batches of
the whole corpus are made first, exactly as one process would make them, then dealt out round-robin, longest first
(the k-th calls of all processes decode batches of about the same length, so few steps are spent waiting), and a
process with fewer batches than the most makes filler calls: the shortest sentence decoded and dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Shard:
    """This process's part (``index`` of ``count``) of one decode; ``in_step``: every process must make the same
    number of ``generate`` calls (parameters sharded: ZeRO-3, FSDP)."""

    index: int = 0
    count: int = 1
    in_step: bool = False

    def __post_init__(self) -> None:
        if not 0 <= self.index < self.count:
            raise ValueError(f"process {self.index} of {self.count}")


@dataclass(frozen=True)
class Call:
    """One ``generate`` call: the sentence indices of its batch, and whether its outputs are kept (a filler's are
    not)."""

    indices: list[int]
    kept: bool = True


def dealt(batches: Sequence[list[int]], shard: Shard | None) -> list[Call]:
    """The calls this process makes for ``batches`` (every batch of the decode, longest first): every
    ``count``-th batch from ``index`` on, then, in step, filler calls up to the number of the process with the
    most."""
    if shard is None or shard.count == 1:
        return [Call(list(batch)) for batch in batches]
    calls = [Call(list(batch)) for batch in batches[shard.index :: shard.count]]
    if shard.in_step and batches:
        most = -(-len(batches) // shard.count)
        calls += [Call(batches[-1][:1], kept=False)] * (most - len(calls))
    return calls


def merged(parts: Sequence[tuple[list[int], list]], n: int) -> list:
    """The ``n`` outputs of a decode in input order, from each process's ``(indices, outputs)``."""
    out: list = [None] * n
    for indices, outputs in parts:
        for i, value in zip(indices, outputs, strict=True):
            out[i] = value
    missing = [i for i, value in enumerate(out) if value is None]
    if missing:
        raise RuntimeError(f"no process decoded sentences {missing[:5]} of {n}")
    return out
