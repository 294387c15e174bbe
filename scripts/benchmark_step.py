"""Benchmark: timed training updates of any recipe under any launcher config, with MFU and peak memory.

Runs the toolkit's own update (:meth:`mtkit.train.trainer.Trainer.update`) on the recipe's data, model and batching:
``--warmup`` updates untimed (allocator, cuDNN/compile warm-up), then ``--steps`` timed ones, and prints one
table row and a JSON record (also written to ``--json``): step time, non-padding tokens/s, sentences/s,
achieved TFLOP/s per device, MFU, padding and peak accelerator memory.

    python scripts/benchmark_step.py --config recipes/multi30k_en_de_base.yaml --mixed_precision bf16 --steps 30
    accelerate launch --config_file accelerate_configs/deepspeed_zero2.yaml scripts/benchmark_step.py --config R ...

Every other flag is a recipe key (``--max_tokens``, ``--torch_compile``, ``--gradient_accumulation_steps``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mtkit.config import parse_config
from mtkit.errors import UserError, cli_entry
from mtkit.textio import atomic_write, markdown_table
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
]


@cli_entry
def main() -> None:
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--steps", type=int, default=20, help="timed updates")
    ap.add_argument("--warmup", type=int, default=5, help="untimed updates first")
    ap.add_argument("--json", help="also write the record to this file")
    ap.add_argument("--run_name", help="label of the run in the table (default: model, strategy, precision)")
    own, rest = ap.parse_known_args()
    if own.steps < 1 or own.warmup < 0:
        raise UserError("--steps must be at least 1 and --warmup at least 0")
    cfg = parse_config(rest)
    check_run_apart(cfg)
    trainer = Trainer(cfg)
    acc = trainer.accelerator
    batches = trainer.micro_batches()

    def updates(n: int) -> None:
        for _ in range(n):
            trainer.update([next(batches) for _ in range(acc.gradient_accumulation_steps)])

    updates(own.warmup)
    trainer.throughput.report()  # waits for the warm-up to finish on the device and starts the timed interval
    updates(own.steps)
    figures = trainer.throughput.report()
    label = own.run_name or (
        f"{cfg.model.model_name_or_path or cfg.model.model} {acc.distributed_type.value} x{acc.num_processes} "
        f"{acc.mixed_precision}{' compiled' if cfg.train.torch_compile else ''}"
    )
    record = {
        "run": label,
        "device": str(acc.device),
        "processes": acc.num_processes,
        "strategy": acc.distributed_type.value,
        "precision": acc.mixed_precision,
        "torch_compile": cfg.train.torch_compile,
        "max_tokens": cfg.train.max_tokens,
        "tokens_per_update": cfg.train.max_tokens * acc.num_processes * acc.gradient_accumulation_steps,
        "steps": own.steps,
        "step_ms": 1000 * figures["elapsed_s"] / own.steps,
        **figures,
        "command": " ".join(sys.argv),
    }
    if acc.is_main_process:
        print(markdown_table([record], COLUMNS, label="run"))
        print(json.dumps(record))
        if own.json:
            atomic_write(Path(own.json), (json.dumps(record, indent=2) + "\n").encode())
    acc.end_training()


if __name__ == "__main__":
    main()
