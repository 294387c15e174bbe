"""``scripts/export_model.py CHECKPOINT OUT [--run_dir RUN]``."""

from __future__ import annotations

import os

from mtkit.cli.args import Parser
from mtkit.export.checkpoint import export_checkpoint


def build_parser() -> Parser:
    """The argument parser of ``scripts/export_model.py``."""
    parser = Parser(
        description="Export a checkpoint of a run (one process, DDP, FSDP, DeepSpeed ZeRO-2/3, LoRA) as a "
        "save_pretrained model with tokenizer, generation config and prompt, like the run's final/."
    )
    parser.add_argument(
        "checkpoint",
        metavar="CHECKPOINT",
        help="a step folder or link (runs/x/checkpoints/checkpoint_best), or the run folder (then the checkpoint "
        "the run would export: checkpoint_best, or checkpoint_last with --no_load_best_model_at_end)",
    )
    parser.add_argument("out", metavar="OUT", help="new (or empty) folder for the model")
    parser.add_argument("--run_dir", help="the run folder with config.yaml and tokenizer (default: CHECKPOINT's)")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    for var in ("ACCELERATE_USE_DEEPSPEED", "ACCELERATE_USE_FSDP"):  # one plain process, even inside a launched job
        os.environ.pop(var, None)
    export_checkpoint(args.checkpoint, args.out, args.run_dir)
