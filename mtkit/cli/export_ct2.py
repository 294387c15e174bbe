"""``scripts/export_ct2.py MODEL OUT [--quantization auto] [--force] [--force_fp16] [--check_samples N]
[--check_source FILE [--check_reference FILE]]``."""

from __future__ import annotations

import json

from mtkit.cli.args import Parser, ranged
from mtkit.decode.ct2 import INFO, QUANTIZATIONS
from mtkit.export.ct2 import export_ct2
from mtkit.export.ct2_check import BOUNDS, CHECK_SAMPLES, SAMPLE
from mtkit.flags import option
from mtkit.paths import check_apart
from mtkit.train.checks import AUTO


def build_parser() -> Parser:
    """The argument parser of ``scripts/export_ct2.py``."""
    p = Parser(description="Convert a trained model (a run's final/) to CTranslate2 and check it against transformers.")
    p.add_argument("model", help="A save_pretrained model folder (a run's final/, or export_model.py's output).")
    p.add_argument("out", help="The CTranslate2 folder to write.")
    p.add_argument(
        "--quantization",
        default=AUTO,
        choices=(AUTO, *QUANTIZATIONS),
        help=f"One of auto, {', '.join(QUANTIZATIONS)} (default: auto, which is int8 on a machine without CUDA and "
        "int8_bfloat16 with a GPU). float16 and int8_float16 are refused for T5-family models (CTranslate2 issue "
        "#1074): use bfloat16 or int8_bfloat16.",
    )
    p.add_argument("--force", action="store_true", help="Replace OUT if it exists.")
    p.add_argument(
        *option("force_fp16"),
        action="store_true",
        help="Convert a T5-family model to float16 or int8_float16 anyway (it decodes into padding or garbage).",
    )
    bounds = ", ".join(f"{q} {a:.2f}/{b:.0f}" for q, (a, b) in BOUNDS.items())
    p.add_argument(
        *option("check_samples"),
        type=ranged("check_samples"),
        metavar="N",
        default=CHECK_SAMPLES,
        help=f"Sentences the self-check translates with both engines (default: {CHECK_SAMPLES}; 0: no check). OUT is "
        f"written only if the agreement or the BLEU against transformers reaches its type's bound ({bounds}).",
    )
    p.add_argument(
        *option("check_source"),
        metavar="FILE",
        help=f"Source sentences for the self-check, one a line (default: the run's validation data when MODEL is a "
        f"run's final/, else {len(SAMPLE)} built-in English sentences of the demo corpus).",
    )
    p.add_argument(
        *option("check_reference"),
        metavar="FILE",
        help="References of --check_source: the check also reports both engines' BLEU against them.",
    )
    return p


def main(argv: list[str] | None = None) -> None:
    """``scripts/export_ct2.py MODEL OUT``: convert, check against transformers, put in place."""
    args = build_parser().parse_args(argv)
    inputs = {"MODEL": args.model, "--check_source": args.check_source, "--check_reference": args.check_reference}
    check_apart(inputs, {"OUT": args.out})
    out = export_ct2(
        args.model,
        args.out,
        args.quantization,
        force=args.force,
        force_fp16=args.force_fp16,
        check_samples=args.check_samples,
        check_source=args.check_source,
        check_reference=args.check_reference,
    )
    quantization = json.loads((out / INFO).read_text(encoding="utf-8"))["quantization"]
    print(f"CTranslate2 model ({quantization}) in {out}; translate with scripts/translate.py --engine ct2")
