"""The parts of ``scripts/benchmark_step.py``: timed updates with the host's share of them, a profile, compile counts.

The host share is the time the loop spends waiting for its next batches (reading rows, collating, the DataLoader's
Python) over the time of the whole update. On a GPU that time is lost whenever the device is not kept busy ahead of
it; on a CPU, where everything is on the host, it is the part of the update that DataLoader workers take away.
"""

from __future__ import annotations

import time
from pathlib import Path

import torch


def compiled_graphs() -> int:
    """Graphs ``torch.compile`` has compiled in this process so far (each recompile adds one)."""
    from torch._dynamo.utils import counters

    return int(counters["stats"]["unique_graphs"])


def timed_updates(trainer, warmup: int, steps: int) -> dict:
    """``warmup`` untimed then ``steps`` timed updates from a fresh pass over the trainer's loader: the throughput
    figures, ``fetch_ms`` (waiting for batches, per update), ``host_share`` and the graphs compiled while timed."""
    batches = trainer.micro_batches()
    per_update = trainer.accelerator.gradient_accumulation_steps
    for _ in range(warmup):
        trainer.update([next(batches) for _ in range(per_update)])
    trainer.throughput.report()  # waits for the warm-up to finish on the device and starts the timed interval
    graphs, fetch = compiled_graphs(), 0.0
    for _ in range(steps):
        start = time.perf_counter()
        group = [next(batches) for _ in range(per_update)]
        fetch += time.perf_counter() - start
        trainer.update(group)
    figures = trainer.throughput.report()
    figures["step_ms"] = 1000 * figures["elapsed_s"] / steps
    figures["fetch_ms"] = 1000 * fetch / steps
    figures["host_share"] = figures["fetch_ms"] / figures["step_ms"]
    figures["recompiles"] = compiled_graphs() - graphs
    return figures


def with_workers(trainer, workers: int) -> None:
    """Give ``trainer`` a training loader collating in ``workers`` processes (0: in the loop)."""
    from mtkit.train.build import build_loader

    acc = trainer.accelerator
    trainer.train_loader, trainer.sampler = build_loader(
        trainer.train_data, trainer.cfg, acc, trainer.collator, train=True, workers=workers
    )


def profile(trainer, path: Path, updates: int = 2) -> None:
    """A table of the operators of ``updates`` updates (self time, descending) into ``path``."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    cuda = torch.cuda.is_available()
    activities = [ProfilerActivity.CPU, *([ProfilerActivity.CUDA] if cuda else [])]
    batches = trainer.micro_batches()
    per_update = trainer.accelerator.gradient_accumulation_steps
    with torch_profile(activities=activities) as prof:
        for _ in range(updates):
            trainer.update([next(batches) for _ in range(per_update)])
        trainer.throughput.report()  # waits for the device
    sort = "self_cuda_time_total" if cuda else "self_cpu_time_total"
    path.write_text(prof.key_averages().table(sort_by=sort, row_limit=40) + "\n", encoding="utf-8")
