"""Command line of ``scripts/bias_report.py``: parse, validate, load, translate or read, score, report."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bias_eval.accuracy import WARNING_DEFINITION, low_signal
from bias_eval.balance import (
    ACCURACY_GAP_DEFINITION,
    MF_RATIO_DEFINITION,
    OVER_CORRECTION_DEFINITION,
    STRICT_ACCURACY_DEFINITION,
    over_correction,
)
from bias_eval.bleu import bleu_signatures, signature
from bias_eval.gendered import GENDERS, SPLITS, GenderedData
from bias_eval.metrics import (
    ACCURACY_DEFINITION,
    CHRF_METRIC,
    COVERAGE_DEFINITION,
    FAIR_BLEU_DEFINITION,
)
from bias_eval.page import report_files
from bias_eval.plots import make_figures
from bias_eval.report import GAP_DEFINITION, metrics_document, summary_table, write_report
from bias_eval.scoring import score_dataset
from bias_eval.textio import check_writable
from mtkit.cli.args import Parser, add_decoding_args, ranged
from mtkit.data.coverage import check_model
from mtkit.data.gendered_tables import load_table
from mtkit.data.languages import ModelLanguages, check_codes
from mtkit.data.mtgeneval import load_mtgeneval
from mtkit.data.mtgeneval_hub import HUB_ID, load_hub
from mtkit.data.trained_languages import warn_untrained
from mtkit.decode.devices import check_device
from mtkit.decode.engines import ENGINES
from mtkit.decode.generate import DTYPES
from mtkit.errors import UserError, cli_entry
from mtkit.evaluation.generation import DEFAULTS, GenerationSettings, resolve_settings
from mtkit.evaluation.hyps import read_hyp_dir, translate_dataset
from mtkit.evaluation.subset import gendered_subset
from mtkit.export.card_bias import add_bias_report, local_model_dir
from mtkit.flags import HelpFormatter, option
from mtkit.hubcheck import check_hub_source
from mtkit.model.folders import check_pretrained_source
from mtkit.paths import check_apart

EPILOG = """examples:
  %(prog)s --mtgeneval_dir ../shared/data/mt-geneval --split dev --hyp_dir hyps/ --out reports/dev
  %(prog)s --mtgeneval_dir ../shared/data/mt-geneval --target_langs de --model runs/demo/final --out reports/demo
  %(prog)s --mtgeneval_dir DIR --model google/flan-t5-xl --prompt t5 --out reports/t5
  %(prog)s --data gendered.csv --hyp_dir hyps/ --out reports/csv
  %(prog)s --mtgeneval_dir DIR --model runs/demo/final --max_samples 200 --out reports/quick   # a quick look

--hyp_dir holds <lang>.feminine.txt and <lang>.masculine.txt (and <lang>.context.txt with --context),
one hypothesis per source line in dataset order. --model writes its hypotheses to OUTDIR/hyps/ and reuses
them when model, settings and sources are unchanged. Without --num_beams, --length_penalty,
--max_new_tokens and --prompt, --model decodes with the settings saved with the model
(generation_config.json: num_beams, length_penalty, max_new_tokens; prompt.json), else beam 4, length
penalty 1.0, 256 new tokens and no prompt; metrics.json records the settings used and where each came from.
With --update_card and --model a local model folder, its model card (README.md) gets a Gender bias
section for this data set and split (a report on another set or split gets a section of its own).
When fewer than half the hypotheses of a language contain a gendered word, or its BLEU is below 5,
the console, metrics.json ("warning") and the card say that the accuracies say little.
Flags take underscores (as train.py and translate.py); the dashed spellings of earlier versions
(--mtgeneval-dir, --beam-size, --max-new-tokens, --langs, ...) are still accepted.
"""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the report script."""
    parser = Parser(
        prog="bias_report.py",
        description="Gender-bias report for a translation model: BLEU and chrF per gender, their gap with a "
        "bootstrap CI, MT-GenEval gender accuracy and fair BLEU.",
        epilog=EPILOG,
        formatter_class=HelpFormatter,
    )
    data = parser.add_argument_group("data (give one of --mtgeneval_dir, --hub, --data)")
    source = data.add_mutually_exclusive_group(required=True)
    source.add_argument(*option("mtgeneval_dir"), metavar="DIR", help="MT-GenEval in its repository layout")
    source.add_argument("--hub", action="store_true", help=f"MT-GenEval from the Hugging Face hub ({HUB_ID})")
    source.add_argument("--data", metavar="FILE", help="a gendered CSV, TSV or JSONL table, read as training reads it")
    data.add_argument("--split", choices=SPLITS, default="dev", help="MT-GenEval split (default: dev)")
    data.add_argument(
        *option("target_langs", "langs"),
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

    hyp = parser.add_argument_group("hypotheses (give one of --model, --hyp_dir)")
    which = hyp.add_mutually_exclusive_group(required=True)
    which.add_argument("--model", metavar="DIR_OR_HUB_ID", help="translate the sources with this model")
    which.add_argument(*option("hyp_dir"), metavar="DIR", help="folder of <lang>.{feminine,masculine}.txt files")
    hyp.add_argument(
        "--prompt",
        metavar="PRESET_OR_TEMPLATE",
        help="a preset (t5, instruction), a template with {source} (and {lang_name}: German, {lang}: de, "
        "{src_lang_name}: English; {language} = {lang_name}), or none; default: the model's prompt.json",
    )
    saved = "default: the model's generation_config.json"
    beams = f"beam size ({saved}, else {DEFAULTS['beam_size']})"
    hyp.add_argument(*option("num_beams", "beam-size", "beam_size"), type=ranged("num_beams"), help=beams)
    batch = ranged("eval_batch_size", "batch_size")
    hyp.add_argument(*option("batch_size"), type=batch, default=32, help="sentences per batch (default: 32)")
    max_new = f"{saved}, else {DEFAULTS['max_new_tokens']}"
    hyp.add_argument(*option("max_new_tokens"), type=ranged("max_new_tokens"), help=max_new)
    penalty = f"{saved}, else {DEFAULTS['length_penalty']}"
    hyp.add_argument(*option("length_penalty"), type=ranged("length_penalty"), help=penalty)
    hyp.add_argument(
        *option("max_len_a"),
        type=ranged("max_len_a"),
        help=f"each batch stops after A x its longest source + B tokens ({saved}, else {DEFAULTS['max_len_a']})",
    )
    hyp.add_argument(
        *option("max_len_b"), type=ranged("max_len_b"), help=f"see --max_len_a ({saved}, else {DEFAULTS['max_len_b']})"
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
        *option("bootstrap_samples"),
        type=ranged("bootstrap_samples"),
        default=1000,
        help="bootstrap resamples for the CIs (0: none)",
    )
    out.add_argument(
        "--seed", type=ranged("seed"), default=12345, help="bootstrap seed, and MBR's sampling seed (12345)"
    )
    out.add_argument("--examples", type=ranged("examples"), default=10, help="worst examples per language (10)")
    out.add_argument(
        *option("update_card"),
        action="store_true",
        help="with --model a local model folder: add this report's Gender bias section to its README.md (one "
        "section per data set and split; default: the card is left as it is)",
    )
    return parser


def load_data(args: argparse.Namespace) -> GenderedData:
    """The data set the arguments name."""
    if args.context and args.data:
        raise UserError("--context: only MT-GenEval has a contextual subset (--mtgeneval_dir or --hub)")
    if args.mtgeneval_dir:
        data = load_mtgeneval(Path(args.mtgeneval_dir), args.split, args.target_langs, context=args.context)
    elif args.hub:
        data = load_hub(args.split, args.target_langs, context=args.context)
    else:
        data = load_table(Path(args.data), args.target_langs)
    return gendered_subset(data, args.max_samples)


def describe_generation(model: str, settings: GenerationSettings, cache: Path) -> str:
    """One line saying how ``model`` translated."""
    prompt = f"prompt {settings.prompt!r}" if settings.prompt else "no prompt"
    mbr = settings.mbr
    if mbr is not None:
        draw = f"{mbr.samples} {'epsilon/nucleus samples' if mbr.candidates == 'sample' else 'beam n-best'}"
        prompt += f", MBR with {mbr.utility} over {draw}"
    return (
        f"translated by {model} (beam {settings.beam_size}, length penalty {settings.length_penalty}, "
        f"at most {settings.max_new_tokens} new tokens and {settings.max_len_a} x source + {settings.max_len_b}, "
        f"{prompt}), cached in {cache}"
    )


def reproduce_command(args: argparse.Namespace, settings: GenerationSettings | None) -> str:
    """The command line that rebuilds this report, every decoding setting spelled out as it was used."""
    parts = ["python", "scripts/bias_report.py"]
    if args.mtgeneval_dir:
        parts += ["--mtgeneval_dir", args.mtgeneval_dir, "--split", args.split]
    elif args.hub:
        parts += ["--hub", "--split", args.split]
    else:
        parts += ["--data", args.data]
    if args.target_langs:
        parts += ["--target_langs", *sorted(set(args.target_langs))]
    parts += ["--context"] if args.context else []
    parts += ["--max_samples", str(args.max_samples)] if args.max_samples else []
    if settings is None:
        parts += ["--hyp_dir", args.hyp_dir]
    else:
        parts += ["--model", args.model, "--prompt", settings.prompt or "none"]
        parts += ["--num_beams", str(settings.beam_size), "--length_penalty", str(settings.length_penalty)]
        parts += ["--max_new_tokens", str(settings.max_new_tokens), "--batch_size", str(settings.batch_size)]
        parts += ["--max_len_a", str(settings.max_len_a), "--max_len_b", str(settings.max_len_b)]
        parts += ["--dtype", settings.dtype, "--engine", settings.engine]
        parts += ["--force"] if args.force else []
        if settings.mbr is not None:
            mbr = settings.mbr
            parts += ["--decoding", "mbr", "--mbr_samples", str(mbr.samples), "--mbr_candidates", mbr.candidates]
            parts += [arg for key in ("epsilon", "top_p") if getattr(mbr, key) is not None
                      for arg in (f"--{key}", str(getattr(mbr, key)))]  # fmt: skip
    parts += ["--out", args.out, "--bootstrap_samples", str(args.bootstrap_samples), "--seed", str(args.seed)]
    parts += ["--examples", str(args.examples)]
    return shlex.join(parts)


def build_config(
    args: argparse.Namespace,
    data: GenderedData,
    settings: GenerationSettings | None,
    origins: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The ``config`` block of metrics.json: inputs, settings (and where they came from), signatures, definitions."""
    paired = all(ld.paired for ld in data.languages.values())
    if settings is None:
        hypotheses: dict[str, Any] = {"hyp_dir": str(Path(args.hyp_dir))}
        described = f"files in {args.hyp_dir}"
    else:
        hypotheses = {
            "model": args.model,
            "generation": asdict(settings),
            "settings_from": dict(origins or {}),
            "prompts": {lang: settings.prompt_for(lang) for lang in data.languages},
            "cache_dir": "hyps",
        }
        described = describe_generation(args.model, settings, Path(args.out) / "hyps")
    resampling = (
        "paired bootstrap: sentence pairs (both genders of a sentence together) are drawn with replacement"
        if paired
        else "stratified bootstrap: the feminine and the masculine sentences are resampled separately"
    )
    definitions = {
        "n": "number of hypotheses scored (feminine + masculine); n_feminine and n_masculine per gender",
        "bleu": "corpus sacreBLEU with default settings over all sentences; bleu_feminine and bleu_masculine "
        "over the sentences of one gender; chrf* likewise with sacreBLEU chrF defaults (0-100 scale)",
        "bleu_gap": GAP_DEFINITION + "; chrf_gap likewise",
        "bleu_gap_ci95": f"95% percentile interval (2.5th, 97.5th) of the gap over {args.bootstrap_samples} "
        f"bootstrap replicates, {resampling}; corpus scores are recomputed on each resample; numpy "
        f"Generator seeded with (seed={args.seed}, crc32(language)); chrf_gap_ci95 likewise",
        "accuracy": ACCURACY_DEFINITION,
        "accuracy_ci95": "95% percentile interval of accuracy_feminine, accuracy_masculine and accuracy_pair "
        "over the same bootstrap resamples as the gap CIs (same counts, seed and resampling); a replicate "
        "is the share of correct hypotheses among those drawn (with multiplicity)",
        "coverage": COVERAGE_DEFINITION,
        "strict_accuracy": STRICT_ACCURACY_DEFINITION,
        "accuracy_gap": ACCURACY_GAP_DEFINITION,
        "mf_ratio": MF_RATIO_DEFINITION,
        "over_correction": OVER_CORRECTION_DEFINITION,
        "fair_bleu": FAIR_BLEU_DEFINITION,
        "warning": WARNING_DEFINITION,
        "macro": "unweighted mean over languages of each figure (n: sum); a macro CI (gaps, accuracies, "
        "coverage) is the percentile interval of the mean over languages of their bootstrap replicates "
        "(languages resampled independently), not a mean of the per-language bounds",
        "worst examples": "sentence pairs with the largest |sentence BLEU masculine - feminine|, where "
        "sentence BLEU is sacrebleu.sentence_bleu with default settings",
    }
    if args.context:
        definitions["accuracy_context"] = (
            "contextual subset: the hypothesis for the 2to1 source (its text after the last <sep>, if any; "
            "--model translates context and sentence together) is judged as above with the original "
            "reference as correct and the flipped one as counterfactual"
        )
    if data.split is not None:
        definitions["references"] = (
            "MT-GenEval references are the plain sentences/ files, verbatim (as the official accuracy "
            "script reads them); annotated/ files only supply the gendered words listed in the details. "
            "As released, the few target lines with double quotes are CSV-escaped (wrapped in quotes, "
            "inner quotes doubled) and square brackets are Wikipedia text ([citation needed]-style), not "
            "gender marks; both are scored as released"
        )
    return {
        "data": data.name,
        "split": data.split,
        "dataset_kind": "demo" if data.demo else "mtgeneval" if data.split is not None else "table",
        "languages": sorted(data.languages),
        "paired": paired,
        "context": bool(args.context),
        "max_samples": args.max_samples,  # a subset (compare_reports.py flags two reports that differ in it)
        "hypotheses": hypotheses,
        "hypotheses_description": described,
        "bootstrap_samples": args.bootstrap_samples,
        "seed": args.seed,
        "ci_level": 0.95,
        "worst_examples": args.examples,
        "bleu_signature": bleu_signatures(sorted(data.languages)),  # each language's tokenizer (bias_eval.bleu)
        "chrf_signature": signature(CHRF_METRIC),
        "sentence_bleu_signature": bleu_signatures(sorted(data.languages), effective_order=True),
        "definitions": definitions,
        "files": file_pairs(args, data),
        "command": reproduce_command(args, settings),
    }


def file_pairs(args: argparse.Namespace, data: GenderedData) -> dict[str, dict[str, str]]:
    """Per language and gender, the reference and hypothesis files (when both are plain files)."""
    hyp_dir = Path(args.hyp_dir) if args.hyp_dir else Path(args.out) / "hyps"
    pairs: dict[str, dict[str, str]] = {}
    for lang, ld in data.languages.items():
        for gender in GENDERS:
            reference = Path(ld.side(gender).origin)
            if reference.is_file():
                pairs.setdefault(lang, {})[f"reference_{gender}"] = str(reference)
                pairs[lang][f"hypothesis_{gender}"] = str(hyp_dir / f"{lang}.{gender}.txt")
    return pairs


@cli_entry
def main(argv: Sequence[str] | None = None) -> int:
    """Run the report; every input problem ends as ``error: ...`` and exit status 2, with nothing written."""
    args = parse_args(argv)
    metrics = report(args)
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
    if args.target_langs:  # `de es` or `de,es` (train.py's --target_langs)
        args.target_langs = [code for value in args.target_langs for code in value.split(",") if code]
        check_codes(args.target_langs, "--target_langs")
    if args.update_card and not local_model_dir(args.model):
        raise UserError("--update_card: only used with --model a local model folder (its README.md is the card)")
    return args


def report(args: argparse.Namespace) -> dict[str, Any]:
    """Write the report of ``args`` into ``--out`` (the card is :func:`main`'s); return its ``metrics.json``."""
    check_device(args.device, args.engine)  # before anything loads
    out = Path(args.out)
    inputs = {f"--{key}": getattr(args, key) for key in ("mtgeneval_dir", "data", "hyp_dir", "model")}
    check_apart(inputs, {"--out": out})
    check_writable(out, "--out")
    check_hub_source(args.model, f"--model {args.model}")  # a hub id out of reach: one line, at once
    if args.hyp_dir:
        flags = ("prompt", "num_beams", "length_penalty", "max_new_tokens", "max_len_a", "max_len_b", "mbr_samples")
        for flag in (*flags, "mbr_candidates", "epsilon", "top_p", "max_samples"):
            if getattr(args, flag) is not None:
                raise UserError(f"--{flag}: only used with --model")
        if args.decoding != "beam":
            raise UserError("--decoding: only used with --model")
    data = load_data(args)
    settings, origins = None, None
    if args.hyp_dir:
        hyps = read_hyp_dir(Path(args.hyp_dir), data)
    else:
        if args.engine == "hf":
            check_pretrained_source(args.model, "--model", weights=True)  # before its tokenizer loads
        settings, origins = resolve_settings(args)
        references = {lang: [r for g in GENDERS for r in ld.side(g).references] for lang, ld in data.languages.items()}
        languages = ModelLanguages.load(args.model)
        for lang in sorted(data.languages):  # each one the model's family has a code for
            languages.check(lang, "--target_langs")
        warn_untrained(args.model, sorted(data.languages), "--target_langs")  # one a fine-tune was not trained for
        check_model(args.model, references, force=args.force)  # before anything is translated
        hyps = translate_dataset(args.model, data, out / "hyps", settings)
    samples, seed, examples = args.bootstrap_samples, args.seed, args.examples
    results, macro = score_dataset(data, hyps, samples=samples, seed=seed, examples=examples)
    metrics = metrics_document(results, macro, build_config(args, data, settings, origins))
    metrics["warning"] = low_signal(metrics["languages"])
    metrics["over_correction"] = over_correction(metrics)
    files = report_files(results, metrics, make_figures(metrics))
    write_report(out, files)
    print(summary_table(metrics))
    if metrics["warning"]:
        print(f"\nWARNING: {metrics['warning']['message']}")
    if metrics["over_correction"]:
        print(f"\nOVER-CORRECTION: {metrics['over_correction']['message']}")
    print(f"\nreport written to {out}/: " + ", ".join(sorted(files)))
    return metrics
