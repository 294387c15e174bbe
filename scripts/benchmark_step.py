"""Benchmark: timed training updates of any recipe under any launcher config, with MFU and peak memory.

Runs the toolkit's own update (:meth:`mtkit.train.trainer.Trainer.update`) on the recipe's data, model and batching:
``--warmup`` updates untimed (allocator, cuDNN/compile warm-up), then ``--steps`` timed ones, and prints one
table row and a JSON record (also written to ``--json``): step time, non-padding tokens/s, sentences/s,
achieved TFLOP/s per device, MFU, padding, peak accelerator memory, the time spent waiting for batches and its
share of the update (the host's part), and graphs compiled while timed (``--torch_compile``'s recompiles).
``--workers 0,2`` times the same run collating in the loop, then in two DataLoader workers (one row each, with the
speed-up over the first); ``--profile FILE`` writes a profile of two more updates.

    python scripts/benchmark_step.py --config recipes/multi30k_en_de_base.yaml --mixed_precision bf16 --steps 30
    accelerate launch --config_file accelerate_configs/deepspeed_zero2.yaml scripts/benchmark_step.py --config R ...

Every other flag is a recipe key (``--max_tokens``, ``--torch_compile``, ``--gradient_accumulation_steps``).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
from pathlib import Path

from benchmarks import step

from bias_eval.core.markdown import records_table
from bias_eval.core.textio import atomic_write
from mtkit.allocator import allocator
from mtkit.config import parse_config
from mtkit.errors import UserError, cli_entry
from mtkit.train.checks import check_run_apart
from mtkit.train.trainer import Trainer

COLUMNS = [
    ("step_ms", "step ms", "{:.1f}"),
    ("tgt_tok_s", "tgt tok/s", "{:,.0f}"),
    ("src_tok_s", "src tok/s", "{:,.0f}"),
    ("sent_s", "sent/s", "{:,.1f}"),
    ("tflops", "TFLOP/s/dev", "{:.2f}"),
    ("mfu", "MFU", "{:.1%}"),
    ("padding", "padding", "{:.1%}"),
    ("peak_mem_gb", "peak GiB", "{:.2f}"),
    ("fetch_ms", "batch wait ms", "{:.1f}"),
    ("host_share", "host share", "{:.1%}"),
    ("recompiles", "recompiles", "{}"),
    ("speedup", "x first", "{:.2f}"),
]


@cli_entry
def main() -> None:
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--steps", type=int, default=20, help="timed updates")
    ap.add_argument("--warmup", type=int, default=5, help="untimed updates first")
    ap.add_argument("--json", help="also write the record to this file")
    ap.add_argument("--run_name", help="label of the run in the table (default: model, strategy, precision)")
    ap.add_argument("--workers", help="DataLoader worker counts to time in turn, comma-separated (e.g. 0,2)")
    ap.add_argument("--profile", help="write a profile of two more updates (operators by self time) to this file")
    own, rest = ap.parse_known_args()
    if own.steps < 1 or own.warmup < 0:
        raise UserError("--steps must be at least 1 and --warmup at least 0")
    try:
        counts = [int(w) for w in own.workers.split(",")] if own.workers else []
    except ValueError:
        counts = [-1]
    if any(w < 0 for w in counts):
        raise UserError(f"--workers: {own.workers!r} is not a comma-separated list of counts >= 0")
    cfg = parse_config(rest)
    check_run_apart(cfg)
    trainer = Trainer(cfg)
    acc = trainer.accelerator
    rows = []
    for workers in counts or [None]:
        if workers is not None:
            step.with_workers(trainer, workers)
        rows.append({"workers": trainer.train_loader.num_workers, **step.timed_updates(trainer, own.warmup, own.steps)})
    for row in rows:
        row["speedup"] = rows[0]["step_ms"] / row["step_ms"]
    figures = rows[-1]
    label = own.run_name or (
        f"{cfg.model.model_name_or_path or cfg.model.model} {acc.distributed_type.value} x{acc.num_processes} "
        f"{acc.mixed_precision}{' compiled' if cfg.train.torch_compile else ''}"
    )
    record = {
        "run": label,
        "device": str(acc.device),
        "allocator": allocator(),
        "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,  # KiB on Linux
        "processes": acc.num_processes,
        "strategy": acc.distributed_type.value,
        "precision": acc.mixed_precision,
        "torch_compile": cfg.train.torch_compile,
        "max_tokens": cfg.train.max_tokens,
        "tokens_per_update": cfg.train.max_tokens * acc.num_processes * acc.gradient_accumulation_steps,
        "steps": own.steps,
        **figures,
        "command": " ".join(sys.argv),
    }
    if len(rows) > 1:
        record["by_workers"] = rows
    if own.profile:
        step.profile(trainer, Path(own.profile))
    if acc.is_main_process:
        print(records_table([{**record, **row, "run": f"{label}, {row['workers']} workers"} for row in rows],
                             COLUMNS, label="run"))  # fmt: skip
        print(json.dumps(record))
        if own.json:
            atomic_write(Path(own.json), (json.dumps(record, indent=2) + "\n").encode())
    acc.end_training()


if __name__ == "__main__":
    main()
