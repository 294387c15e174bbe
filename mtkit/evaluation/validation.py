"""Validation across processes: the token-level loss, and translations of a corpus (beam search or MBR)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

import torch
from accelerate import Accelerator
from accelerate.utils import DistributedType, gather_object

from mtkit.config import EvalConfig
from mtkit.data.batching import to_device
from mtkit.decode.generate import translation_candidates
from mtkit.decode.mbr import translations
from mtkit.decode.settings import DecodingSettings
from mtkit.decode.sharding import Shard, merged
from mtkit.distributed.deepspeed import unwrapped
from mtkit.distributed.fsdp import gathered_root
from mtkit.model.loss import token_loss_sum


@torch.no_grad()
def validation_loss(accelerator: Accelerator, model, batches: Iterable[dict]) -> float:
    """Cross-entropy per target token (no smoothing) over every process' share of the batches.

    Loss sums stay on the device and token counts on the host: one reduction and one read at the end.
    """
    model.eval()
    loss_sum = torch.zeros((), device=accelerator.device, dtype=torch.float64)
    n_tokens = 0
    for batch in batches:
        n_tokens += batch["stats"]["tgt_tokens"]
        loss_sum += token_loss_sum(model, to_device(batch, accelerator.device))
    totals = torch.stack([loss_sum, torch.tensor(float(n_tokens), device=accelerator.device, dtype=torch.float64)])
    loss, tokens = accelerator.reduce(totals, reduction="sum").tolist()
    model.train()
    return loss / tokens


def translate_corpus(
    accelerator: Accelerator,
    model,
    tokenizer,
    sources: list[str],
    cfg: EvalConfig,
    seed: int = 0,
    langs: list[str] | None = None,
) -> list[str]:
    """Translate ``sources`` (into ``langs``, each source's target language) across processes with the decoding
    settings of ``cfg`` (:meth:`DecodingSettings.from_eval`) and return all translations in order, on every process
    (beam search, or MBR with ``--decoding mbr``, each process sampling under ``seed`` plus its index), under the
    run's autocast.

    Every distributed decode goes through here: the batches of the whole split are dealt to the processes
    (:mod:`mtkit.decode.sharding`), and where parameters are sharded (ZeRO-3, FSDP) every process makes the same
    number of ``generate`` calls, each stepping until the longest is done (``synced_gpus``), whatever the
    languages, lengths and counts."""
    in_step = accelerator.distributed_type in (DistributedType.DEEPSPEED, DistributedType.FSDP)
    shard = Shard(accelerator.process_index, accelerator.num_processes, in_step=in_step)
    settings = replace(DecodingSettings.from_eval(cfg), seed=seed + accelerator.process_index)
    # The unwrapped model has lost accelerate's autocast of its forward: decode in the training's precision anyway.
    with gathered_root(accelerator, model), accelerator.autocast():
        candidates = translation_candidates(
            unwrapped(accelerator, model),
            tokenizer,
            sources,
            settings,
            target_langs=langs,
            shard=shard,
            **({"synced_gpus": True} if in_step and accelerator.num_processes > 1 else {}),
        )
    mine = [i for i, found in enumerate(candidates) if found]
    hyps = translations([candidates[i] for i in mine], settings.mbr)
    return merged(gather_object([(mine, hyps)]), len(sources))
