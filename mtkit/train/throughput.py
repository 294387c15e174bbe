"""What the loop processed per logging interval: loss per token, tokens/s, sentences/s, TFLOP/s, MFU, padding,
peak memory.

Counts come from each batch's host-side ``stats`` (see :class:`mtkit.data.batching.Seq2SeqCollator`) and the
loss sum stays on the device, so nothing is read back from the accelerator until :meth:`report`, which
makes one reduction across processes and one host transfer per interval.
"""

from __future__ import annotations

import time

import torch
from accelerate import Accelerator

from mtkit.model.flops import Architecture

_KEYS = ("sentences", "src_tokens", "tgt_tokens", "src_padded", "tgt_padded", "flops")


class Throughput:
    """Running sums of one logging interval on this process; :meth:`report` combines all processes."""

    def __init__(self, accelerator: Accelerator, arch: Architecture, peak_tflops: float | None) -> None:
        self.accelerator = accelerator
        self.arch = arch
        self.peak_tflops = peak_tflops
        self._reset()

    def _reset(self) -> None:
        self.counts = dict.fromkeys(_KEYS, 0)
        self.loss_sum = torch.zeros((), device=self.accelerator.device, dtype=torch.float64)
        self.paused = 0.0
        self.start = time.perf_counter()
        if torch.cuda.is_available():
            torch.cuda.reset_peak_memory_stats(self.accelerator.device)

    def add_batch(self, stats: dict) -> None:
        """Count one micro-batch from its host-side ``stats``."""
        b, s, t = stats["sentences"], stats["src_len"], stats["tgt_len"]
        c = self.counts
        c["sentences"] += b
        c["src_tokens"] += stats["src_tokens"]
        c["tgt_tokens"] += stats["tgt_tokens"]
        c["src_padded"] += b * s
        c["tgt_padded"] += b * t
        c["flops"] += self.arch.training_flops(b, s, t, stats["src_tokens"], stats["tgt_tokens"])  # real tokens

    def add_loss(self, loss_sum: torch.Tensor) -> None:
        """Add a micro-batch's summed token loss (a device tensor; not read here)."""
        self.loss_sum += loss_sum.detach()

    def pause(self, seconds: float) -> None:
        """Leave ``seconds`` (evaluation, saving) out of the interval's elapsed time."""
        self.paused += seconds

    def report(self) -> dict[str, float]:
        """The interval's figures over all processes, then start a new interval."""
        acc = self.accelerator
        host = torch.tensor([float(self.counts[k]) for k in _KEYS], dtype=torch.float64)
        totals = acc.reduce(torch.cat([self.loss_sum.view(1), host.to(acc.device)]), reduction="sum").tolist()
        elapsed = max(time.perf_counter() - self.start - self.paused, 1e-9)
        loss_sum, (sentences, src, tgt, src_padded, tgt_padded, flops) = totals[0], totals[1:]
        tflops = flops / elapsed / 1e12 / acc.num_processes  # per device
        record = {
            "loss": loss_sum / max(tgt, 1.0),
            "src_tok_s": src / elapsed,
            "tgt_tok_s": tgt / elapsed,
            "sent_s": sentences / elapsed,
            "tflops": tflops,
            "padding": 1.0 - (src + tgt) / max(src_padded + tgt_padded, 1.0),
            "elapsed_s": elapsed,
        }
        if self.peak_tflops:
            record["mfu"] = tflops / self.peak_tflops
        if torch.cuda.is_available():
            record["peak_mem_gb"] = torch.cuda.max_memory_allocated(acc.device) / 2**30
        self._reset()
        return record
