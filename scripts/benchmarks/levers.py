"""The parts of ``scripts/gpu_levers.py``: a synthetic corpus of a benchmark's lengths, the training step with each
lever on or off, and one variant measured.

A lever is a change to the training step that must leave its result unchanged: the same first update's loss and
gradient norm from the same weights (:func:`exactness`). The baseline is the step as the toolkit ran it before the
levers: batches padded to a multiple of 8, the model's forward with its decoder cache, its full logits (fp32, with
BART's fp32 bias) into torch's cross-entropy, the tokenizer's vocabulary size, eager.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, replace

import numpy as np
import torch
import torch.nn.functional as F

from mtkit.data.batching import Seq2SeqCollator, length_buckets, pack_batches, pack_buckets, to_device
from mtkit.model.flops import Architecture, peak_tflops
from mtkit.model.loss import install_token_loss, model_inputs, token_loss_sum
from mtkit.model.norms import fuse_t5_norms
from mtkit.model.presets import preset_config
from mtkit.model.vocab import KEY, mask_extra_rows, tokens_in_use

#: Sentence lengths in subword tokens (log-normal: median, spread, longest): Multi30k EN-DE (~13 tokens, 25%
#: padding at a multiple of 8) and WMT14 EN-DE (~28 tokens, a long tail), as the papers' BPE vocabularies cut them.
LENGTHS = {"multi30k": (13.0, 0.35, 60), "wmt14": (26.0, 0.6, 250)}


@dataclass(frozen=True)
class Levers:
    """Which levers a variant pulls."""

    pad: int = 8  # batches padded to a multiple of this
    no_cache: bool = False  # use_cache=False in the training forward
    fused: bool = False  # the output projection and loss fused, on the target rows alone
    loss_kernel: bool = False  # the fused loss's elementwise part compiled into a few kernels (a GPU's default)
    vocab64: bool = False  # the vocabulary rounded up to a multiple of 64 rows
    compile: str | None = None  # None, "dynamic", "static" (bucketed batches) or "cudagraphs" (static, replayed)
    fused_norms: bool = False  # T5's RMS norm compiled into one kernel (GPU)
    attention: str | None = None  # None (torch's choice) or the one SDPA backend: "cudnn", "efficient", "math"


@dataclass(frozen=True)
class Workload:
    """A model preset at a benchmark's lengths and token budget."""

    name: str
    preset: str
    lengths: str
    max_tokens: int
    vocab: int
    pairs: int = 20_000
    shape: tuple[tuple[str, int], ...] = ()  # config keys overriding the preset's (a smoke run's smaller T5)


def corpus(workload: Workload, seed: int = 0) -> list[dict]:
    """Tokenized pairs of random ids with the workload's length distribution (throughput depends on shapes only)."""
    median, spread, longest = LENGTHS[workload.lengths]
    rng = np.random.default_rng(seed)
    src = np.clip(rng.lognormal(math.log(median), spread, workload.pairs), 2, longest).astype(int)
    tgt = np.clip(src * rng.normal(1.1, 0.15, workload.pairs), 2, longest).astype(int)
    ids = lambda n: rng.integers(4, workload.vocab, n).tolist()  # noqa: E731
    return [{"input_ids": ids(s), "labels": ids(t)} for s, t in zip(src, tgt)]


def write_text_corpus(workload: Workload, folder, pairs: int = 4_000):
    """Plain-text train/valid files (``<split>.en``, ``<split>.de``) of made-up words at the workload's lengths, for
    the toolkit's own loop (which trains its tokenizer on them); returns the folder."""
    from pathlib import Path

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    words = ["".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz"), rng.integers(2, 9))) for _ in range(3000)]
    median, spread, longest = LENGTHS[workload.lengths]
    for split, n in (("train", pairs), ("valid", 50)):
        lengths = np.clip(rng.lognormal(math.log(median / 1.3), spread, n), 2, longest / 1.3).astype(int)
        for lang in ("en", "de"):
            lines = (" ".join(rng.choice(words, k)) for k in lengths)
            (folder / f"{split}.{lang}").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def initial_weights(workload: Workload) -> dict[str, torch.Tensor]:
    """The weights every variant starts from (seed 0, the tokenizer's vocabulary size)."""
    torch.manual_seed(0)
    return build(workload, Levers()).state_dict()


def build(workload: Workload, levers: Levers, weights: dict[str, torch.Tensor] | None = None):
    """The workload's model for ``levers`` (vocabulary rounded or not) with ``weights`` copied in."""
    from transformers import AutoModelForSeq2SeqLM

    config = preset_config(workload.preset, vocab_size=workload.vocab, pad_token_id=1, bos_token_id=0, eos_token_id=2)
    for key, value in workload.shape:
        setattr(config, key, value)
    if not levers.vocab64 and tokens_in_use(config) != config.vocab_size:
        config.vocab_size = tokens_in_use(config)
        delattr(config, KEY)
    model = AutoModelForSeq2SeqLM.from_config(config)
    if weights is not None:
        own = model.state_dict()
        with torch.no_grad():
            for name, tensor in weights.items():
                own[name][tuple(slice(0, n) for n in tensor.shape)].copy_(tensor)
    mask_extra_rows(model)
    if levers.fused:  # the kernel compiled on a GPU; on a CPU its plumbing alone (inductor's C++: 40 s a compile)
        install_token_loss(model, kernel=levers.loss_kernel and torch.cuda.is_available())
    if levers.fused_norms:
        fuse_t5_norms(model, "inductor" if torch.cuda.is_available() else "eager")  # on a CPU: the plumbing alone
    return model


def batches(workload: Workload, pairs: list[dict], levers: Levers, count: int) -> list[dict]:
    """The first ``count`` batches of the corpus: token-budget batches (the baseline's plan, padded as ``levers``
    say) or, with static shapes, bucketed ones."""
    lengths = np.array([max(len(p["input_ids"]), len(p["labels"])) for p in pairs])
    config_buckets = length_buckets(int(lengths.max())) if levers.compile in ("static", "cudagraphs") else None
    if config_buckets is not None:
        plan = pack_buckets(lengths, workload.max_tokens, config_buckets, seed=0)
    else:
        plan = pack_batches(lengths, workload.max_tokens, seed=0, pad_to_multiple_of=8)
    collate = Seq2SeqCollator(1, 0, levers.pad, config_buckets)
    return [collate([pairs[i] for i in plan[k]]) for k in range(min(count, len(plan)))]


def baseline_loss(model, batch: dict, smoothing: float, levers: Levers) -> torch.Tensor:
    """The loss as the step computed it before the levers: the model's full logits into torch's cross-entropy."""
    inputs = model_inputs(model, batch) | {"use_cache": not levers.no_cache}
    logits = model(**inputs).logits
    vocab = tokens_in_use(model.config) if hasattr(model, "config") else logits.shape[-1]
    labels = batch["labels"].reshape(-1)
    return F.cross_entropy(logits[..., :vocab].reshape(-1, vocab).float(), labels, label_smoothing=smoothing,
                           reduction="sum")  # fmt: skip


def step_loss(forward, batch: dict, levers: Levers, smoothing: float = 0.1) -> torch.Tensor:
    if levers.fused:
        return token_loss_sum(forward, batch, smoothing)
    return baseline_loss(forward, batch, smoothing, levers)


def compiled(model, levers: Levers, smoke: bool):
    """The forward a variant trains with; on a CPU smoke run compiled by dynamo alone (the plumbing, in seconds)."""
    if levers.compile is None:
        return model
    backend = "eager" if smoke else "inductor"
    mode = "reduce-overhead" if levers.compile == "cudagraphs" and not smoke else None
    if levers.compile != "dynamic":
        torch._dynamo.config.recompile_limit = max(torch._dynamo.config.recompile_limit, 64)
    return torch.compile(model, dynamic=levers.compile == "dynamic", backend=backend, mode=mode)


def exactness(workload: Workload, levers: Levers, weights, batch: dict, device: torch.device) -> tuple[float, float]:
    """The first update's loss and gradient norm from ``weights`` on ``batch`` (dropout off, fp32 on a CPU, the
    device's autocast on a GPU)."""
    model = build(workload, levers, weights).to(device).eval()
    with autocast(device), attention(levers, device):
        loss = step_loss(model, to_device(batch, device), levers)
    loss.backward()
    norm = torch.stack([p.grad.float().norm() for p in model.parameters() if p.grad is not None]).norm()
    return float(loss.detach()), float(norm)


def autocast(device: torch.device):
    return (
        torch.autocast("cuda", dtype=torch.bfloat16) if device.type == "cuda" else torch.autocast("cpu", enabled=False)
    )


def attention(levers: Levers, device: torch.device):
    """The SDPA backend ``levers`` names, alone (on a CPU, math: the others are CUDA kernels), or torch's choice."""
    from contextlib import nullcontext

    from torch.nn.attention import SDPBackend, sdpa_kernel

    if levers.attention is None:
        return nullcontext()
    backend = {"cudnn": SDPBackend.CUDNN_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION}
    return sdpa_kernel(backend.get(levers.attention, SDPBackend.MATH) if device.type == "cuda" else SDPBackend.MATH)


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def measure(workload: Workload, levers: Levers, weights, pairs, *, steps: int, warmup: int, smoke: bool) -> dict:
    """One variant: ``warmup`` untimed updates (compiling), ``steps`` timed ones over fixed batches; the figures."""
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    data = [to_device(b, device) for b in batches(workload, pairs, levers, warmup + steps)]
    graphs = _counter("stats", "unique_graphs")
    breaks = _counter("graph_break")
    model, update = trainer(workload, levers, weights, device, smoke)
    started = time.perf_counter()
    timed = data[warmup:] or data
    shapes = {tuple(b["input_ids"].shape) for b in data[:warmup]}
    for batch in data[:warmup] + [b for b in timed if tuple(b["input_ids"].shape) not in shapes]:
        shapes.add(tuple(batch["input_ids"].shape))  # every shape the timed updates will see, compiled here
        update(batch)
    sync(device)
    syncs = host_syncs(update, data[0], device)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    for batch in timed:
        update(batch)
    sync(device)
    seconds = time.perf_counter() - start
    arch = Architecture.from_config(model.config)
    flops = sum(arch.training_flops(b["input_ids"].shape[0], b["stats"]["src_len"], b["stats"]["tgt_len"],
                                    b["stats"]["src_tokens"], b["stats"]["tgt_tokens"]) for b in timed)  # fmt: skip
    peak = peak_tflops(device, precision="bf16")
    tokens = sum(b["stats"]["tgt_tokens"] for b in timed)
    padded = sum(b["labels"].numel() for b in timed)
    return {
        "ms_per_update": 1000 * seconds / len(timed),
        "tgt_tok_s": tokens / seconds,
        "tflops": flops / seconds / 1e12,
        "mfu": flops / seconds / 1e12 / peak if peak else None,
        "tgt_padding": 1 - tokens / padded,
        "peak_mem_gb": torch.cuda.max_memory_allocated() / 2**30 if device.type == "cuda" else None,
        "host_syncs": syncs,
        "graphs": _counter("stats", "unique_graphs") - graphs,
        "graph_breaks": _counter("graph_break") - breaks,
        "seconds": time.perf_counter() - started,
    }


def trainer(workload: Workload, levers: Levers, weights, device: torch.device, smoke: bool):
    """The variant's model on ``device`` and its update: forward and loss under autocast, backward, AdamW."""
    model = build(workload, levers, weights).to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=device.type == "cuda")
    forward = compiled(model, levers, smoke)

    def update(batch: dict) -> None:
        with autocast(device), attention(levers, device):
            loss = step_loss(forward, batch, levers)
        (loss / batch["stats"]["tgt_tokens"]).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return model, update


def host_syncs(update, batch: dict, device: torch.device) -> int | None:
    """Host-device synchronisations in one update, as CUDA's sync debug mode reports them (``None`` on a CPU)."""
    if device.type != "cuda":
        update(batch)
        return None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            update(batch)
        finally:
            torch.cuda.set_sync_debug_mode("default")
    return sum("synchroniz" in str(w.message) for w in caught)


def _counter(group: str, key: str | None = None) -> int:
    from torch._dynamo.utils import counters

    return int(counters[group][key]) if key else int(sum(counters[group].values()))


def cumulative(steps: list[tuple[str, dict]]) -> list[tuple[str, Levers]]:
    """Each lever added to the ones before it: ``[(name, changes)]`` -> ``[(name, levers)]`` from the baseline."""
    out, levers = [("baseline", Levers())], Levers()
    for name, changes in steps:
        levers = replace(levers, **changes)
        out.append((name, levers))
    return out
