"""Benchmark: token-budget batching (mtkit.data.batching) against fixed-size sentence batches, same run, same model.

Measures on real data (default: Multi30k EN-DE train) the padding overhead of each scheme and the training
throughput in target tokens per second for a short run of `--model` on this machine, and prints the
ratios token-budget / sentence-count. The sentence-count baseline uses the batch size whose mean padded
size equals the token budget, so both see the same amount of compute per step on average.

    python scripts/benchmark_batching.py [--data_dir ../shared/data/multi30k] [--max_tokens 2048] [--steps 30]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch
from torch.utils.data import DataLoader
from transformers import AutoModelForSeq2SeqLM

from mtkit.config import DataConfig
from mtkit.data.batching import PAD_TO_MULTIPLE_OF, Seq2SeqCollator, pack_batches
from mtkit.data.corpus import load_folder
from mtkit.data.preprocess import tokenize_split
from mtkit.data.tokenizer import train_tokenizer
from mtkit.model.loss import token_loss_sum
from mtkit.model.presets import preset_config


def padding_stats(batches: list[list[int]], src: np.ndarray, tgt: np.ndarray) -> tuple[float, float]:
    """Share of padded positions (source and target) and mean padded size of the batches."""
    real = padded = 0
    for b in batches:
        real += src[b].sum() + tgt[b].sum()
        padded += len(b) * (src[b].max() + tgt[b].max())
    return 1 - real / padded, padded / len(batches) / 2


def throughput(model, dataset, batches, collator, steps: int) -> float:
    """Target tokens per second over ``steps`` training steps (after 3 warm-up steps)."""
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    loader = iter(DataLoader(dataset, batch_sampler=batches[: steps + 3], collate_fn=collator))
    tokens, start = 0, 0.0
    for i, batch in enumerate(loader):
        if i == 3:
            tokens, start = 0, time.perf_counter()
        n = batch["stats"]["tgt_tokens"]
        (token_loss_sum(model, batch, 0.1) / n).backward()
        opt.step()
        opt.zero_grad()
        tokens += n
    return tokens / (time.perf_counter() - start)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data_dir", default=str(Path(__file__).resolve().parents[2] / "shared" / "data" / "multi30k"))
    ap.add_argument("--source_lang", default="en")
    ap.add_argument("--target_lang", default="de")
    ap.add_argument("--max_tokens", type=int, default=2048)
    ap.add_argument("--model", default="transformer-tiny")
    ap.add_argument("--steps", type=int, default=30)
    args = ap.parse_args()
    torch.manual_seed(0)

    raw = load_folder(Path(args.data_dir), "train", args.source_lang, args.target_lang)
    tok = train_tokenizer((t for r in raw for t in r.values()), vocab_size=8000)
    data = tokenize_split(raw, tok, DataConfig())
    src = np.array([len(x) for x in data["input_ids"]])
    tgt = np.array([len(x) for x in data["labels"]])

    by_tokens = pack_batches(data["length"], args.max_tokens, seed=0, pad_to_multiple_of=PAD_TO_MULTIPLE_OF)
    mean_len = np.mean(np.maximum(src, tgt))
    # Sentence-count baseline: shuffled batches of n sentences, the largest n whose mean padded size fits the budget.
    order = np.random.default_rng(0).permutation(len(src)).tolist()

    def fixed(n: int) -> list[list[int]]:
        return [order[i : i + n] for i in range(0, len(order), n)]

    lo, hi = 1, 4096
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if padding_stats(fixed(mid), src, tgt)[1] <= args.max_tokens else (lo, mid - 1)
    n, by_count = lo, fixed(lo)

    waste_t, size_t = padding_stats(by_tokens, src, tgt)
    waste_c, size_c = padding_stats(by_count, src, tgt)
    print(f"data: {len(src)} pairs, mean longer side {mean_len:.1f} tokens; budget {args.max_tokens}")
    print(f"token-budget batches: {len(by_tokens)} per epoch, padding {waste_t:.1%}, mean padded size {size_t:.0f}")
    print(f"{n}-sentence batches:  {len(by_count)} per epoch, padding {waste_c:.1%}, mean padded size {size_c:.0f}")

    model = AutoModelForSeq2SeqLM.from_config(
        preset_config(args.model, vocab_size=len(tok), pad_token_id=1, bos_token_id=0, eos_token_id=2)
    )
    collator = Seq2SeqCollator.for_model(tok, model)
    dataset = data.select_columns(["input_ids", "attention_mask", "labels"])
    tps_c = throughput(model, dataset, by_count, collator, args.steps)
    tps_t = throughput(model, dataset, by_tokens, collator, args.steps)
    print(
        f"throughput ({args.model}, {torch.get_num_threads()} threads): token-budget {tps_t:.0f} tok/s, "
        f"sentence-count {tps_c:.0f} tok/s"
    )
    print(
        f"ratio token-budget / sentence-count: throughput {tps_t / tps_c:.2f}x, "
        f"padding {waste_t / waste_c:.2f}x, epochs' steps {len(by_tokens) / len(by_count):.2f}x"
    )


if __name__ == "__main__":
    main()
