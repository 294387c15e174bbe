"""``scripts/demo_corpus.py OUT_DIR [--seed N] [--n_train N] [--n_valid N] [--n_test N] [--n_gender_pairs N]
[--feminine_scale X]``."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from bias_eval.core.textio import check_writable
from mtkit.cli.args import Parser, ranged
from mtkit.demo.corpus import write_demo_corpus
from mtkit.flags import option


def build_parser() -> Parser:
    """The argument parser of ``scripts/demo_corpus.py``."""
    p = Parser(description="Seeded English→Spanish demo corpus with a deliberate, documented gender skew.")
    p.add_argument("out_dir", metavar="OUT_DIR", help="directory to write the corpus into")
    p.add_argument("--seed", type=ranged("seed"), metavar="N", default=0, help="random seed (default: 0)")
    p.add_argument(
        *option("n_train"), type=ranged("n_train"), metavar="N", default=40000, help="training pairs (default: 40000)"
    )
    p.add_argument(
        *option("n_valid"), type=ranged("n_valid"), metavar="N", default=500, help="validation pairs (default: 500)"
    )
    p.add_argument(*option("n_test"), type=ranged("n_test"), metavar="N", default=500, help="test pairs (default: 500)")
    p.add_argument(
        *option("n_gender_pairs"),
        type=ranged("n_gender_pairs"),
        metavar="N",
        default=500,
        help="MT-GenEval-style feminine/masculine pairs (default: 500)",
    )
    p.add_argument(
        *option("feminine_scale"),
        type=ranged("feminine_scale"),
        metavar="X",
        default=1.0,
        help="multiply every profession's feminine share in the training split by X in (0, 1]: feminine forms rarer "
        "in the general data, the held-out splits still balanced (default: 1)",
    )
    return p


def main(argv: Sequence[str] | None = None) -> None:
    """``scripts/demo_corpus.py OUT_DIR``: write the seeded English→Spanish demo corpus into OUT_DIR."""
    args = build_parser().parse_args(argv)
    check_writable(Path(args.out_dir), "OUT_DIR")
    t0 = time.perf_counter()
    out = write_demo_corpus(
        args.out_dir,
        seed=args.seed,
        n_train=args.n_train,
        n_valid=args.n_valid,
        n_test=args.n_test,
        n_gender_pairs=args.n_gender_pairs,
        feminine_scale=args.feminine_scale,
    )
    print(f"wrote demo corpus to {out} in {time.perf_counter() - t0:.1f}s")
