"""``scripts/export_ct2.py MODEL OUT [--quantization int8] [--force]``."""

from __future__ import annotations

import argparse
import json

from mtkit.cli.args import Parser
from mtkit.decode.ct2 import INFO, QUANTIZATIONS
from mtkit.export.ct2 import export_ct2
from mtkit.export.ct2_check import BOUNDS, CHECK_SAMPLES, SAMPLE
from mtkit.flags import option
from mtkit.train.checks import AUTO


def _count(text: str) -> int:
    """A sentence count: an integer >= 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def main(argv: list[str] | None = None) -> None:
    """``scripts/export_ct2.py MODEL OUT [--quantization int8] [--force]``."""
    p = Parser(description="Convert a trained model (a run's final/) to CTranslate2.")
    p.add_argument("model", help="A save_pretrained model folder (a run's final/, or export_model.py's output).")
    p.add_argument("out", help="The CTranslate2 folder to write.")
    p.add_argument("--quantization", default="int8", help=f"One of {', '.join(QUANTIZATIONS)} (default: int8).")
    p.add_argument("--force", action="store_true", help="Replace OUT if it exists.")
    args = p.parse_args(argv)
    out = export_ct2(args.model, args.out, args.quantization, force=args.force)
    print(f"CTranslate2 model ({args.quantization}) in {out}; translate with scripts/translate.py --engine ct2")
