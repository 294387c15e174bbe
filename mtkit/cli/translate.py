"""``scripts/translate.py``: translate ``--text``, an ``--input`` file, or lines typed at a prompt."""

from __future__ import annotations

import sys
from pathlib import Path

from bias_eval.core.textio import atomic_write, check_writable, read_lines
from mtkit.cli.args import Parser, add_decoding_args, ranged
from mtkit.data.coverage import check_model_language
from mtkit.data.languages import ModelLanguages, check_code
from mtkit.data.trained_languages import warn_untrained
from mtkit.decode.devices import check_device
from mtkit.decode.engines import load_translator
from mtkit.decode.settings import DEFAULTS, DTYPES, ENGINES, resolve
from mtkit.errors import UserError
from mtkit.hubcheck import check_hub_source
from mtkit.model.folders import check_pretrained_source
from mtkit.paths import check_apart


def build_parser() -> Parser:
    """The argument parser of ``scripts/translate.py``."""
    p = Parser(description="Translate with a trained model (a run's final/ dir) or a hub model.")
    p.add_argument("--model", required=True, help="Model directory (e.g. runs/demo/final) or hub id.")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--text", action="append", help="Sentence to translate (repeatable).")
    mode.add_argument("--input", help="File with one sentence per line (UTF-8, .gz allowed).")
    p.add_argument("--output", help="Where --input's translations go (default: standard output).")
    p.add_argument("--num_beams", type=ranged("num_beams"), help="Beam size (default: the model's generation config).")
    p.add_argument(
        "--length_penalty", type=ranged("length_penalty"), help="Beam length penalty (default: the model's)."
    )
    p.add_argument(
        "--max_new_tokens", type=ranged("max_new_tokens"), help="Longest translation (default: the model's)."
    )
    p.add_argument(
        "--max_len_a",
        type=ranged("max_len_a"),
        default=None,
        help=f"Each batch stops after max_len_a x its longest source + max_len_b tokens (default: the model's, "
        f"else {DEFAULTS.max_len_a}).",
    )
    p.add_argument(
        "--max_len_b",
        type=ranged("max_len_b"),
        default=None,
        help=f"See --max_len_a (default: the model's, else {DEFAULTS.max_len_b}).",
    )
    p.add_argument(
        "--batch_size",
        type=ranged("eval_batch_size", "batch_size"),
        help=f"Sentences per batch (default: {DEFAULTS.batch_size}).",
    )
    p.add_argument(
        "--prompt",
        default=None,
        help="Preset (t5, instruction), template with {source} and {lang_name}, or none; default: the prompt "
        "saved with the model (final/prompt.json).",
    )
    p.add_argument("--target_lang", default=None, help="Target language code for the prompt (e.g. de).")
    p.add_argument(
        "--force",
        action="store_true",
        help="Translate even if the model's tokenizer cannot write the target language's letters (over 1 in 100).",
    )
    p.add_argument("--device", default=None, help="cpu, cuda, cuda:1 ... (default: cuda if available).")
    p.add_argument("--dtype", choices=DTYPES, help=f"Weights' type with --engine hf (default: {DEFAULTS.dtype}).")
    p.add_argument(
        "--engine",
        choices=ENGINES,
        help="hf: transformers' generate on --model; ct2: CTranslate2 on a folder from scripts/export_ct2.py "
        f"(default: {DEFAULTS.engine}).",
    )
    add_decoding_args(p)
    p.set_defaults(decoding=None)  # not given: the settings' default, recorded as such
    p.add_argument(
        "--seed",
        type=ranged("seed"),
        help=f"Seed of MBR's sampling (same seed, same translations; default {DEFAULTS.seed}).",
    )
    return p


def main(argv: list[str] | None = None) -> None:
    """``scripts/translate.py``: ``--text``, ``--input``/``--output``, or an interactive prompt."""
    args = build_parser().parse_args(argv)
    check_device(args.device, args.engine or DEFAULTS.engine)  # before anything loads
    check_hub_source(args.model, f"--model {args.model}")  # a hub id out of reach: one line, at once
    if args.output and not args.input:
        raise UserError("--output: only used with --input")
    if args.output:
        check_apart({"--input": args.input, "--model": args.model}, {"--output": args.output})
        if Path(args.output).is_dir():
            raise UserError(f"--output {args.output}: is a folder; name the file to write")
        check_writable(Path(args.output), "--output", file=True)
    # the flags, else the model's generation_config.json and prompt.json, else the defaults; --epsilon with --engine
    # ct2 and MBR flags without --decoding mbr are refused here, before the model loads
    settings, _ = resolve(args, args.model)
    lines = read_lines(Path(args.input)) if args.input else None
    if args.target_lang is not None:  # its one spelling from here on (DE, ger -> de)
        args.target_lang = check_code(args.target_lang, "--target_lang")
    prompt = settings.prompt
    lang = prompt.language_for(args.target_lang) if prompt else args.target_lang
    if settings.engine == "hf":
        check_pretrained_source(args.model, "--model", weights=True)  # before its tokenizer loads
    if lang:  # one the model's family has a code for (or a one-target model's own), before the model loads
        ModelLanguages.load(args.model).check(lang)
        warn_untrained(args.model, [lang], "--target_lang")  # one a fine-tuned model was not trained for
    check_model_language(args.model, lang, force=args.force)  # before the model loads
    translator = load_translator(args.model, settings.engine, device=args.device, dtype=settings.dtype)
    # the language a model of several is told its family's way (a forced first token, a source prefix)
    target = translator.languages.target_for(lang, translator.tokenizer, translator.generation_config)
    options = {"target_langs": target}

    def wrap(sentences: list[str]) -> list[str]:
        return settings.render(sentences, lang or "")

    if args.text:
        for hyp in translator.translate(wrap(args.text), settings, **options):
            print(hyp)
    elif lines is not None:
        hyps = translator.translate(wrap(lines), settings, progress=True, **options)
        if not args.output:
            sys.stdout.write("".join(h + "\n" for h in hyps))
            return
        out = Path(args.output)
        atomic_write(out, "".join(h + "\n" for h in hyps).encode("utf-8"))
        print(f"{len(hyps)} translations written to {out}", file=sys.stderr)
    else:
        print("Type a sentence and press Enter; 'q' quits.", file=sys.stderr)
        for line in sys.stdin:
            if line.strip() in ("q", "quit", "exit"):
                break
            if line.strip():
                print(translator.translate(wrap([line.strip()]), settings, **options)[0], flush=True)
