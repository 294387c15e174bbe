"""``scripts/bias_study.py --systems a=DIR,b=DIR --benchmarks mtgeneval,winomt --langs de,es --out study/``: every
system's reports on every benchmark, each system compared with the first, one index page and ``study.tex``, in one
process (:func:`mtkit.evaluation.study.run_study`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from bias_eval.core.bootstrap import SAMPLES, SEED
from bias_eval.core.decision import Rule
from bias_eval.core.langtag import LanguageTag
from bias_eval.core.latex import Layout
from mtkit.cli.args import Parser, add_figures_arg, add_latex_args, add_rule_args
from mtkit.errors import UserError, cli_entry
from mtkit.evaluation.study import BENCHMARKS, Study, run_study
from mtkit.evaluation.winomt_run import WINOMT_DIR
from mtkit.flags import option

MTGENEVAL_DIR = "../shared/data/mt-geneval"
DESCRIPTION = (
    "A bias study in one process: every system's reports on every benchmark and language, each system compared with "
    "the first (the baseline), one index page and study.tex."
)


def parse_systems(value: str) -> dict[str, Path]:
    """``a=DIR,b=DIR`` -> names (distinct, in order) and their hypothesis folders."""
    systems: dict[str, Path] = {}
    for part in value.split(","):
        name, sep, folder = part.partition("=")
        if not sep or not name.strip() or not folder.strip() or name.strip() in systems:
            raise UserError(f"--systems: expected distinct name=DIR pairs separated by commas, got {value!r}")
        systems[name.strip()] = Path(folder.strip())
    return systems


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``scripts/bias_study.py``."""
    parser = Parser(lists=("benchmarks", "langs"), prog="bias_study.py", description=DESCRIPTION)
    parser.add_argument("--systems", required=True, help="name=DIR pairs, comma-separated, the first the baseline; "
                        "DIR/mtgeneval/<lang>.{feminine,masculine}.txt and DIR/winomt/<lang>.txt")  # fmt: skip
    parser.add_argument("--benchmarks", default=",".join(BENCHMARKS), help=f"some of {', '.join(BENCHMARKS)}")
    parser.add_argument("--langs", required=True, help="target languages, comma-separated (e.g. de,es)")
    parser.add_argument("--out", required=True, metavar="DIR", help="a new (or empty) folder for the study")
    parser.add_argument(*option("mtgeneval_dir"), default=MTGENEVAL_DIR, help=f"MT-GenEval ({MTGENEVAL_DIR})")
    parser.add_argument(*option("winomt_dir"), default=WINOMT_DIR, help=f"WinoMT ({WINOMT_DIR})")
    parser.add_argument("--split", default="dev", choices=("dev", "test"), help="MT-GenEval's split (default: dev)")
    parser.add_argument(
        *option("bootstrap_samples"), type=int, default=SAMPLES, help=f"bootstrap resamples ({SAMPLES})"
    )
    parser.add_argument("--seed", type=int, default=SEED, help=f"the bootstrap's seed ({SEED})")
    add_rule_args(parser)
    add_latex_args(parser)
    add_figures_arg(parser)
    parser.add_argument("--name", help="the study's name, said first in every LaTeX caption")
    return parser


@cli_entry
def main(argv: Sequence[str] | None = None) -> int:
    """Run the study; bad input ends as one ``error: ...`` line, a non-zero exit and nothing written."""
    args = build_parser().parse_args(argv)
    study = Study(
        systems=parse_systems(args.systems),
        benchmarks=[b.strip() for b in args.benchmarks.split(",") if b.strip()],
        langs=list(dict.fromkeys(str(LanguageTag.parse(lang, "--langs")) for lang in args.langs.split(",") if lang)),
        mtgeneval_dir=Path(args.mtgeneval_dir),
        winomt_dir=Path(args.winomt_dir),
        split=args.split,
        bootstrap_samples=args.bootstrap_samples,
        seed=args.seed,
        rule=Rule(args.p_adjust, args.min_effect),
        layout=Layout(args.label, args.table_star, args.name),
        figures=not args.no_figures,
    )
    run_study(study, Path(args.out))
    print(f"study written to {args.out}/: index.html, study.tex, one folder per system, compare/")
    return 0
