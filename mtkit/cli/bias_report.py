"""Command line of ``scripts/bias_report.py``: parse the flags, resolve once what the report is made of (its data
source, hypotheses and options: :mod:`mtkit.evaluation.report_inputs`), make it
(:func:`~mtkit.evaluation.bias_run.run_report` or :func:`~mtkit.evaluation.winomt_run.run_winomt`), then update the
model card with ``--update_card``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from bias_eval.core.bootstrap import SAMPLES, SEED
from bias_eval.core.decision import MIN_EFFECT
from bias_eval.core.latex import Layout
from bias_eval.core.settings import ReportOptions
from bias_eval.mtgeneval.gendered import SPLITS
from bias_eval.winomt.languages import LANGUAGES, check_language
from mtkit.cli.args import Parser, add_decoding_args, add_figures_arg, add_latex_args, ranged
from mtkit.data.languages import check_code
from mtkit.data.mtgeneval_hub import HUB_ID
from mtkit.decode.devices import check_device
from mtkit.decode.engines import ENGINES
from mtkit.decode.generate import DTYPES
from mtkit.decode.settings import DEFAULTS
from mtkit.errors import UserError, cli_entry
from mtkit.evaluation.bias_run import run_report
from mtkit.evaluation.report_inputs import GenderedSource, Hypotheses, Translator, WinoMTSource
from mtkit.evaluation.winomt_run import WINOMT_DIR, run_winomt
from mtkit.export.card_bias import add_bias_report, local_model_dir
from mtkit.flags import HelpFormatter, option
from mtkit.hubcheck import check_hub_source
from mtkit.model.folders import check_pretrained_source

EPILOG = """examples:
  %(prog)s --mtgeneval_dir ../shared/data/mt-geneval --split dev --hyp_dir hyps/ --out reports/dev
  %(prog)s --mtgeneval_dir ../shared/data/mt-geneval --target_langs de --model runs/demo/final --out reports/demo
  %(prog)s --mtgeneval_dir DIR --model google/flan-t5-xl --prompt t5 --out reports/t5
  %(prog)s --data gendered.csv --hyp_dir hyps/ --out reports/csv
  %(prog)s --mtgeneval_dir DIR --model runs/demo/final --max_samples 200 --out reports/quick   # a quick look
  %(prog)s --benchmark winomt --hyp_file google.de.txt --target_lang de --out reports/winomt_de

--hyp_dir holds <lang>.feminine.txt and <lang>.masculine.txt (and <lang>.context.txt with --context),
one hypothesis per source line in dataset order; without --target_langs, the languages of its files
are scored. --model writes its hypotheses to OUTDIR/hyps/ and reuses them when model, settings and
sources are unchanged. Without --num_beams, --length_penalty,
--max_new_tokens and --prompt, --model decodes with the settings saved with the model
(generation_config.json: num_beams, length_penalty, max_new_tokens; prompt.json), else beam 4, length
penalty 1.0, 256 new tokens and no prompt; metrics.json records the settings used and where each came from.
With --update_card and --model a local model folder, its model card (README.md) gets a Gender bias
section for this data set and split (a report on another set or split gets a section of its own).
When fewer than half the hypotheses of a language contain a gendered word, or its BLEU is below 5,
the console, metrics.json ("warning") and the card say that the accuracies say little.
--benchmark winomt scores WinoMT (--winomt_dir, default %(winomt)s) in one target language: a
--hyp_file of the benchmark's 'source ||| translation' lines or one translation per line of en.txt, or
--model's translations of en.txt (docs/bias_evaluation.md#winomt).
Flags take underscores (as train.py and translate.py); the dashed spellings of earlier versions
(--mtgeneval-dir, --beam-size, --max-new-tokens, --langs, ...) are still accepted.
"""


class ReportParser(Parser):
    """The report's parser: one data source and one kind of hypotheses for MT-GenEval or a table, none of them
    (``--winomt_dir`` and ``--hyp_file`` or ``--model``) for WinoMT, said as argparse says a missing one."""

    def parse_known_args(self, args=None, namespace=None):
        parsed, rest = super().parse_known_args(args, namespace)
        if parsed.benchmark == "mtgeneval":
            for flag in ("winomt_dir", "hyp_file"):
                if getattr(parsed, flag) is not None:
                    self.error(f"--{flag}: only used with --benchmark winomt")
            if not (parsed.mtgeneval_dir or parsed.hub or parsed.data):
                self.error("one of the arguments --mtgeneval_dir --hub --data is required")
            if not (parsed.model or parsed.hyp_dir):
                self.error("one of the arguments --model --hyp_dir is required")
        return parsed, rest


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the report script."""
    parser = ReportParser(
        prog="bias_report.py",
        description="Gender-bias report for a translation model: BLEU and chrF per gender, their gap with a "
        "bootstrap CI, MT-GenEval gender accuracy and fair BLEU.",
        epilog=EPILOG % {"winomt": WINOMT_DIR, "prog": "%(prog)s"},
        formatter_class=HelpFormatter,
    )
    data = parser.add_argument_group("data (give one of --mtgeneval_dir, --hub, --data; or --benchmark winomt)")
    data.add_argument(
        "--benchmark",
        choices=("mtgeneval", "winomt"),
        default="mtgeneval",
        help="mtgeneval: MT-GenEval or a gendered table (default); winomt: WinoMT, one --target_lang",
    )
    data.add_argument(
        *option("winomt_dir"), metavar="DIR", help=f"WinoMT's en.txt, en_pro.txt, en_anti.txt ({WINOMT_DIR})"
    )
    source = data.add_mutually_exclusive_group()
    source.add_argument(*option("mtgeneval_dir"), metavar="DIR", help="MT-GenEval in its repository layout")
    source.add_argument("--hub", action="store_true", help=f"MT-GenEval from the Hugging Face hub ({HUB_ID})")
    source.add_argument("--data", metavar="FILE", help="a gendered CSV, TSV or JSONL table, read as training reads it")
    data.add_argument("--split", choices=SPLITS, default="dev", help="MT-GenEval split (default: dev)")
    data.add_argument(
        *option("target_langs", "langs", "target_lang"),
        nargs="+",
        metavar="LANG",
        help="target languages, comma-separated: de,es (default: all present)",
    )
    data.add_argument("--context", action="store_true", help="also score MT-GenEval's contextual subset")
    data.add_argument(
        *option("max_samples"),
        type=ranged("eval_max_samples", "max_samples"),
        metavar="N",
        help="with --model: translate and score about N sentences, languages in turn, whole feminine/masculine "
        "pairs (a quick look on a CPU; default: all)",
    )

    hyp = parser.add_argument_group("hypotheses (give one of --model, --hyp_dir; --hyp_file for WinoMT)")
    which = hyp.add_mutually_exclusive_group()
    which.add_argument("--model", metavar="DIR_OR_HUB_ID", help="translate the sources with this model")
    which.add_argument(*option("hyp_dir"), metavar="DIR", help="folder of <lang>.{feminine,masculine}.txt files")
    which.add_argument(*option("hyp_file"), metavar="FILE", help="WinoMT: translations of en.txt, one file")
    hyp.add_argument(
        "--prompt",
        metavar="PRESET_OR_TEMPLATE",
        help="a preset (t5, instruction), a template with {source} (and {lang_name}: German, {lang}: de, "
        "{src_lang_name}: English; {language} = {lang_name}), or none; default: the model's prompt.json",
    )
    saved = "default: the model's generation_config.json"
    beams = f"beam size ({saved}, else {DEFAULTS.num_beams})"
    hyp.add_argument(*option("num_beams", "beam-size", "beam_size"), type=ranged("num_beams"), help=beams)
    batch = ranged("eval_batch_size", "batch_size")
    hyp.add_argument(*option("batch_size"), type=batch, default=32, help="sentences per batch (default: 32)")
    max_new = f"{saved}, else {DEFAULTS.max_new_tokens}"
    hyp.add_argument(*option("max_new_tokens"), type=ranged("max_new_tokens"), help=max_new)
    penalty = f"{saved}, else {DEFAULTS.length_penalty}"
    hyp.add_argument(*option("length_penalty"), type=ranged("length_penalty"), help=penalty)
    hyp.add_argument(
        *option("max_len_a"),
        type=ranged("max_len_a"),
        help=f"each batch stops after A x its longest source + B tokens ({saved}, else {DEFAULTS.max_len_a})",
    )
    hyp.add_argument(
        *option("max_len_b"), type=ranged("max_len_b"), help=f"see --max_len_a ({saved}, else {DEFAULTS.max_len_b})"
    )
    hyp.add_argument(
        "--force",
        action="store_true",
        help="translate even if the model's tokenizer cannot write over 1 in 100 of a language's reference characters",
    )
    hyp.add_argument("--device", help="e.g. cuda:0 or cpu (default: cuda if available)")
    hyp.add_argument("--dtype", default="auto", choices=DTYPES, help="default: auto")
    hyp.add_argument(
        "--engine",
        default="hf",
        choices=ENGINES,
        help="hf: transformers' generate; ct2: CTranslate2, --model being a folder from scripts/export_ct2.py",
    )
    add_decoding_args(hyp)

    out = parser.add_argument_group("report")
    out.add_argument("--out", required=True, metavar="OUTDIR", help="output folder")
    out.add_argument(
        "--name",
        help="the system's name in the report's title and metrics.json, and in a comparison (default: the model, else "
        "the hypothesis folder)",
    )
    out.add_argument(
        *option("bootstrap_samples"),
        type=ranged("bootstrap_samples"),
        default=SAMPLES,
        help=f"bootstrap resamples for the CIs (0: none; {SAMPLES})",
    )
    out.add_argument(
        *option("min_effect"),
        type=ranged("min_effect"),
        default=MIN_EFFECT,
        help=f"the smallest gap shown as a finding (bold), in points: BLEU points for the BLEU gap, percentage points "
        f"for the accuracy gap ({MIN_EFFECT:g})",
    )
    out.add_argument(
        "--seed", type=ranged("seed"), default=SEED, help=f"bootstrap seed, and MBR's sampling seed ({SEED})"
    )
    out.add_argument("--examples", type=ranged("examples"), default=10, help="worst examples per language (10)")
    add_figures_arg(out)
    add_latex_args(out)
    out.add_argument(
        *option("update_card"),
        action="store_true",
        help="with --model a local model folder: add this report's Gender bias section to its README.md (one "
        "section per data set and split; default: the card is left as it is)",
    )
    return parser


@cli_entry
def main(argv: Sequence[str] | None = None) -> int:
    """Run the report; every input problem ends as ``error: ...`` and exit status 2, with nothing written."""
    args = parse_args(argv)
    out, options = Path(args.out), report_options(args)
    if args.benchmark == "winomt":
        metrics = run_winomt(winomt_source(args), hypotheses(args, "hyp_file"), out, options).metrics
    else:
        metrics = run_report(gendered_source(args), hypotheses(args, "hyp_dir"), out, options).metrics
    model_dir = local_model_dir(args.model)
    if model_dir is not None and args.update_card:
        try:  # the report is written already: a card that cannot be updated is a warning
            print(f"model card updated: {add_bias_report(model_dir, metrics)}")
        except (OSError, ValueError) as err:
            print(f"warning: --model {model_dir}: model card not updated ({err})", file=sys.stderr)
    elif model_dir is not None:
        print(f"model card of {model_dir} left as it is (--update_card adds this report's section)")
    return 0


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The report's arguments, their languages and ``--update_card`` checked."""
    args = build_parser().parse_args(argv)
    if args.target_langs:  # `de es` or `de,es` (train.py's --target_langs), each in its one spelling from here on
        codes = [code for value in args.target_langs for code in value.split(",") if code]
        args.target_langs = [check_code(code, "--target_langs") for code in codes]
    if args.update_card and args.benchmark == "winomt":
        raise UserError("--update_card: the model card takes MT-GenEval reports only, not --benchmark winomt")
    if args.update_card and not local_model_dir(args.model):
        raise UserError("--update_card: only used with --model a local model folder (its README.md is the card)")
    return args


#: the flags that say how ``--model`` translates: ignored, so refused, with ``--hyp_dir``
MODEL_FLAGS = (
    *("prompt", "num_beams", "batch_size", "max_new_tokens", "length_penalty", "max_len_a", "max_len_b", "force"),
    *("device", "dtype", "engine", "decoding", "mbr_samples", "mbr_candidates", "epsilon", "top_p", "max_samples"),
)
#: the MT-GenEval flags a WinoMT report does not take (its gaps have no bold findings: no --min_effect)
NOT_WINOMT = ("mtgeneval_dir", "data", "hyp_dir", "min_effect")


def report_options(args: argparse.Namespace) -> ReportOptions:
    """The report's own flags: the bootstrap, worst examples, smallest finding, name, LaTeX layout and figures."""
    layout = Layout(args.label, args.table_star)
    return ReportOptions(args.bootstrap_samples, args.seed, args.examples, args.name, args.min_effect, layout,
                         figures=not args.no_figures)  # fmt: skip


def hypotheses(args: argparse.Namespace, files: str) -> Hypotheses:
    """The files of ``--<files>`` (``hyp_dir`` or ``hyp_file``), else ``--model`` with its decoding flags resolved
    once (:meth:`Translator.resolve`), the device, the hub id and the model folder checked before anything loads.
    With files, a flag of :data:`MODEL_FLAGS` set otherwise than its default is refused: it would be ignored."""
    if getattr(args, files):
        defaults = build_parser()
        for name in MODEL_FLAGS if files == "hyp_dir" else ():
            if getattr(args, name) != defaults.get_default(name):
                raise UserError(f"--{name}: only used with --model")
        return Path(getattr(args, files))
    check_device(args.device, args.engine)
    check_hub_source(args.model, f"--model {args.model}")  # a hub id out of reach: one line, at once
    if args.engine == "hf":
        check_pretrained_source(args.model, "--model", weights=True)  # before its tokenizer loads
    return Translator.resolve(args.model, vars(args), args.device, args.force)


def gendered_source(args: argparse.Namespace) -> GenderedSource:
    """MT-GenEval's folder, the hub or a table (``--mtgeneval_dir``, ``--hub``, ``--data``) and what of it is
    scored."""
    folder, table = (Path(value) if value else None for value in (args.mtgeneval_dir, args.data))
    langs = tuple(args.target_langs) if args.target_langs else None
    return GenderedSource(folder, args.hub, table, args.split, langs, args.context, args.max_samples)


def winomt_source(args: argparse.Namespace) -> WinoMTSource:
    """WinoMT (``--winomt_dir``) in the one ``--target_lang``, the flags that do not go with it refused first."""
    for flag in NOT_WINOMT:
        if getattr(args, flag):
            raise UserError(f"--{flag}: not used with --benchmark winomt (its data is --winomt_dir)")
    if args.hub or args.context:
        raise UserError(f"--{'hub' if args.hub else 'context'}: not used with --benchmark winomt")
    if bool(args.model) == bool(args.hyp_file):
        raise UserError("--benchmark winomt: give one of --model and --hyp_file")
    if args.hyp_file and args.max_samples is not None:
        raise UserError("--max_samples: only used with --model")
    langs = sorted({check_language(lang) for lang in args.target_langs or []})  # DE is de
    if len(langs) != 1:
        raise UserError(
            f"--target_lang: WinoMT is scored one target language at a time: give one ({', '.join(LANGUAGES)})"
        )
    return WinoMTSource(Path(args.winomt_dir or WINOMT_DIR), langs[0], args.max_samples)
