"""Validation: token-level loss and corpus sacreBLEU of beam-search translations, across processes."""

from __future__ import annotations

from collections.abc import Iterable

import sacrebleu
import torch
import torch.nn.functional as F
from accelerate import Accelerator
from accelerate.utils import DistributedType, gather_object

from mtkit.config import EvalConfig
from mtkit.translate import generate_translations


def seq2seq_loss(model, batch: dict, label_smoothing: float = 0.0) -> tuple[torch.Tensor, int]:
    """Mean label-smoothed cross-entropy over the target tokens of ``batch``, and their count."""
    labels = batch["labels"]
    logits = model(
        input_ids=batch["input_ids"],
        attention_mask=batch["attention_mask"],
        decoder_input_ids=batch["decoder_input_ids"],
    ).logits
    loss = F.cross_entropy(
        logits.float().view(-1, logits.size(-1)), labels.view(-1), ignore_index=-100, label_smoothing=label_smoothing
    )
    return loss, int((labels != -100).sum())


@torch.no_grad()
def validation_loss(accelerator: Accelerator, model, batches: Iterable[dict]) -> float:
    """Token-weighted mean cross-entropy (no smoothing) over every process' share of the batches."""
    model.eval()
    total = torch.zeros(2, device=accelerator.device, dtype=torch.float64)
    for batch in batches:
        batch = {k: v.to(accelerator.device) for k, v in batch.items()}
        loss, n = seq2seq_loss(model, batch)
        total += torch.tensor([loss.item() * n, n], device=accelerator.device, dtype=torch.float64)
    total = accelerator.reduce(total, reduction="sum")
    model.train()
    return float(total[0] / total[1])


def translate_corpus(
    accelerator: Accelerator, model, tokenizer, sources: list[str], cfg: EvalConfig, prompt: str | None = None
) -> list[str]:
    """Translate ``sources``, each process a contiguous share, and return all translations in order."""
    synced = accelerator.distributed_type == DistributedType.DEEPSPEED and accelerator.num_processes > 1
    per = -(-len(sources) // accelerator.num_processes)
    share = sources[accelerator.process_index * per : (accelerator.process_index + 1) * per]
    real = len(share)
    # Equal shares keep every process in the same number of generate calls (needed under ZeRO-3).
    share = share + [sources[-1]] * (per - real)
    hyps = generate_translations(
        accelerator.unwrap_model(model),
        tokenizer,
        share,
        beam_size=cfg.num_beams,
        length_penalty=cfg.length_penalty,
        max_new_tokens=cfg.max_new_tokens,
        batch_size=cfg.eval_batch_size,
        prompt=prompt,
        **({"synced_gpus": True} if synced else {}),
    )
    return gather_object(hyps[:real])


def corpus_scores(hypotheses: list[str], references: list[str]) -> dict[str, float]:
    """sacreBLEU (default 13a tokenization) and chrF of a corpus, on the 0-100 scale."""
    return {
        "bleu": sacrebleu.corpus_bleu(hypotheses, [references]).score,
        "chrf": sacrebleu.corpus_chrf(hypotheses, [references]).score,
    }
