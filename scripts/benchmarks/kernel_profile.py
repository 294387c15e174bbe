"""Where an update's GPU time goes: a few updates of one variant under torch's profiler, the device's busy share of
the wall clock, and the kernels grouped by what they do (``scripts/gpu_levers.py --parts profile``)."""

from __future__ import annotations

import gzip
import time
from collections import Counter
from pathlib import Path

import torch

from benchmarks.levers import Levers, Workload, batches, sync, trainer
from mtkit.data.batching import to_device

#: Kernel families by name, first match wins (NCCL, cuBLAS/CUTLASS GEMMs, fused attention, the optimizer, the rest).
FAMILIES = (
    ("communication", ("nccl",)),
    ("matmul", ("gemm", "cutlass", "sm90_xmma", "nvjet", "cublas")),
    ("attention", ("flash", "fmha", "attention", "efficient_attention")),
    ("optimizer", ("multi_tensor", "adam", "fused_adam")),
    ("softmax/norm/loss", ("softmax", "norm", "cross_entropy", "nll", "logsumexp", "reduce")),
    ("copy/cast", ("copy", "cast", "to_copy", "memcpy", "memset", "fill")),
    ("elementwise", ("elementwise", "vectorized", "unrolled", "triton", "pointwise")),
)


def family(name: str) -> str:
    lower = name.lower()
    return next((label for label, keys in FAMILIES if any(k in lower for k in keys)), "other")


def busy_us(spans: list[tuple[float, float]]) -> float:
    """The length of the union of ``spans`` (kernels on several streams can overlap)."""
    total, end = 0.0, float("-inf")
    for start, stop in sorted(spans):
        if stop > end:
            total += stop - max(start, end)
            end = stop
    return total


def profile(
    workload: Workload, levers: Levers, weights, pairs, *, steps: int, warmup: int, trace: Path | None, top: int = 15
) -> dict:
    """``steps`` updates after ``warmup`` plain ones, timed, then the same ``steps`` profiled: the unprofiled wall ms
    per update, the GPU-busy ms per update (the union of its kernels) and its share of the unprofiled update (the
    profiler's own cost inflates its wall clock), kernels launched per update, and the share of device time of each
    kernel family, of the ``top`` operators (the kernels each launched itself) and of the ``top`` kernels."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # on a CPU (a smoke run): no kernels
    data = [to_device(b, device) for b in batches(workload, pairs, levers, warmup + steps)]
    _, update = trainer(workload, levers, weights, device, smoke=device.type == "cpu")

    def timed() -> float:
        start = time.perf_counter()
        for batch in data[warmup:]:
            update(batch)
        sync(device)
        return time.perf_counter() - start

    for batch in data[:warmup]:
        update(batch)
    sync(device)
    plain = timed()
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    with torch_profile(activities=activities) as prof:
        profiled = timed()
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    busy = busy_us([(e.time_range.start, e.time_range.end) for e in kernels])
    per_kernel: Counter = Counter()
    per_family: Counter = Counter()
    for e in kernels:
        per_kernel[e.name] += e.time_range.elapsed_us()
        per_family[family(e.name)] += e.time_range.elapsed_us()
    operators = Counter({a.key: a.self_device_time_total for a in prof.key_averages() if a.self_device_time_total})
    device_us = sum(per_kernel.values()) or 1.0
    if trace is not None:
        raw = trace.with_suffix("")
        prof.export_chrome_trace(str(raw))
        with raw.open("rb") as src, gzip.open(trace, "wb") as dst:
            dst.write(src.read())
        raw.unlink()
    n = max(1, len(data) - warmup)

    def shares(counts: Counter, width: int = 120) -> list[dict]:
        return [
            {"name": k[:width], "share": v / device_us, "ms_per_update": v / 1000 / n}
            for k, v in counts.most_common(top)
        ]

    return {
        "wall_ms_per_update": 1000 * plain / n,
        "profiled_wall_ms_per_update": 1000 * profiled / n,
        "gpu_busy_ms_per_update": busy / 1000 / n,
        "gpu_busy_share": min(1.0, busy / 1e6 / plain) if kernels else None,
        "kernels_per_update": len(kernels) / n,
        "families": {k: v / device_us for k, v in per_family.most_common()},
        "top_operators": shares(operators),
        "top_kernels": shares(per_kernel),
    }
