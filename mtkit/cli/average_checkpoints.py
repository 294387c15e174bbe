"""``scripts/average_checkpoints.py RUN OUT (--last N | --best N | --last_epochs N)``."""

from __future__ import annotations

from mtkit.cli.args import Parser, ranged
from mtkit.export.averaging import average_checkpoints


def build_parser() -> Parser:
    """The argument parser of ``scripts/average_checkpoints.py``."""
    p = Parser(description="Average the weights of a run's last N (or best N) checkpoints into one model.")
    p.add_argument("run", metavar="RUN", help="the run folder (with config.yaml, checkpoints/ and metrics.jsonl)")
    p.add_argument("out", metavar="OUT", help="new (or empty) folder for the averaged model")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--last", type=ranged("last"), help="average the N newest complete checkpoints")
    which.add_argument("--best", type=ranged("best"), help="average the N best by the run's --metric_for_best_model")
    which.add_argument(
        "--last_epochs", type=ranged("last_epochs"), help="average the N newest epoch checkpoints (--keep_last_epochs)"
    )
    return p


def main(argv: list[str] | None = None) -> None:
    """``scripts/average_checkpoints.py RUN OUT (--last N | --best N | --last_epochs N)``."""
    args = build_parser().parse_args(argv)
    average_checkpoints(args.run, args.out, last=args.last, best=args.best, last_epochs=args.last_epochs)
