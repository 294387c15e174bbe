"""A WinoMT report of a translation file or of a model, as ``scripts/bias_report.py --benchmark winomt`` makes it:
the inputs checked, the benchmark loaded, the model's translations of ``en.txt`` made (or cached ones reused), then
:func:`bias_eval.winomt.report.make_winomt_report`. The request is the script's :class:`ReportRequest`."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bias_eval.core.report import Report
from bias_eval.core.settings import ReportSettings
from bias_eval.core.textio import check_writable
from bias_eval.winomt.data import Translations, WinoMT, load_winomt, read_translations, subset
from bias_eval.winomt.languages import LANGUAGES, check_language
from bias_eval.winomt.report import make_winomt_report
from mtkit.data.languages import ModelLanguages
from mtkit.data.trained_languages import warn_untrained
from mtkit.decode.devices import check_device
from mtkit.errors import UserError
from mtkit.evaluation.bias_run import ReportRequest, describe_generation, latex_flags, layout
from mtkit.evaluation.generation import ReportDecoding, Resolved, resolve_report
from mtkit.evaluation.hyps import translate_lines
from mtkit.hubcheck import check_hub_source
from mtkit.model.folders import check_pretrained_source
from mtkit.paths import check_apart

#: where the toolkit's shared data keeps WinoMT (``--winomt_dir``'s default)
WINOMT_DIR = "../shared/data/winomt"
#: the figures of a WinoMT report a run's record, its card and a verdict show (``metrics.json`` keys)
HEADLINE = ("accuracy", "delta_g", "delta_s")
#: the MT-GenEval flags a WinoMT report does not take (its gaps have no bold findings: no --min_effect)
NOT_WINOMT = ("mtgeneval_dir", "data", "hyp_dir", "min_effect")


def target_lang(args: ReportRequest) -> str:
    """The one target language of a WinoMT report, checked (tags are case-insensitive: ``DE`` is ``de``)."""
    langs = sorted({check_language(lang) for lang in args.target_langs or []})
    if len(langs) != 1:
        raise UserError(
            f"--target_lang: WinoMT is scored one target language at a time: give one ({', '.join(LANGUAGES)})"
        )
    return langs[0]


def check_request(args: ReportRequest) -> None:
    """Refuse the flags that do not go with WinoMT, before anything is read."""
    for flag in NOT_WINOMT:
        if getattr(args, flag):
            raise UserError(f"--{flag}: not used with --benchmark winomt (its data is --winomt_dir)")
    if args.hub or args.context:
        raise UserError(f"--{'hub' if args.hub else 'context'}: not used with --benchmark winomt")
    if bool(args.model) == bool(args.hyp_file):
        raise UserError("--benchmark winomt: give one of --model and --hyp_file")
    if args.hyp_file and args.max_samples is not None:
        raise UserError("--max_samples: only used with --model")


def reproduce_command(args: ReportRequest, lang: str, decoding: ReportDecoding | None) -> str:
    """The command line that rebuilds this report."""
    parts = ["python", "scripts/bias_report.py", "--benchmark", "winomt", "--winomt_dir", args.winomt_dir or WINOMT_DIR]
    parts += ["--target_lang", lang]
    parts += ["--max_samples", str(args.max_samples)] if args.max_samples else []
    if decoding is None:
        parts += ["--hyp_file", args.hyp_file]
    else:
        parts += ["--model", args.model, *decoding.flags()]
    parts += ["--out", args.out, "--bootstrap_samples", str(args.bootstrap_samples), "--seed", str(args.seed)]
    parts += ["--name", args.name] if args.name else []
    return shlex.join(parts + latex_flags(args))


def translate(
    args: ReportRequest, data: WinoMT, lang: str, resolved: Resolved | None = None
) -> tuple[Translations, ReportDecoding, dict[str, str]]:
    """The model's translations of the benchmark's sentences (cached in ``--out``/hyps), made as ``resolved`` says
    when given, else as ``args``'s decoding fields resolve."""
    decoding, origins = resolved or resolve_report(args)
    if decoding.settings.engine == "hf":
        check_pretrained_source(args.model, "--model", weights=True)
    ModelLanguages.load(args.model).check(lang, "--target_lang")
    warn_untrained(args.model, [lang], "--target_lang")
    sources = [item.sentence for item in data.items]
    lines = translate_lines(args.model, {(lang, "winomt"): sources}, Path(args.out) / "hyps", decoding)
    return Translations(data.items, tuple(sources), tuple(lines[(lang, "winomt")])), decoding, origins


def run_winomt(args: ReportRequest, resolved: Resolved | None = None) -> Report:
    """Write the WinoMT report of ``args`` into ``--out``; return it (:class:`Report`). ``--model`` translates as
    ``resolved`` says when given (:func:`~mtkit.evaluation.bias_run.run_report`)."""
    check_request(args)
    lang = target_lang(args)
    if resolved is None:
        check_device(args.device, args.engine)
    out = Path(args.out)
    folder = Path(args.winomt_dir or WINOMT_DIR)
    check_apart({"--winomt_dir": folder, "--hyp_file": args.hyp_file, "--model": args.model}, {"--out": out})
    check_writable(out, "--out")
    check_hub_source(args.model, f"--model {args.model}")
    data = subset(load_winomt(folder), args.max_samples, args.seed)
    if args.hyp_file:
        translations, decoding = read_translations(Path(args.hyp_file), data), None
        hypotheses: dict[str, Any] = {"hyp_file": args.hyp_file}
        described = f"the file {args.hyp_file}"
    else:
        translations, decoding, origins = translate(args, data, lang, resolved)
        hypotheses = {"model": args.model, "generation": decoding.record(), "settings_from": origins,
                      "prompt": decoding.prompt_for(lang), "cache_dir": "hyps"}  # fmt: skip
        described = describe_generation(args.model, decoding, out / "hyps")
    settings = ReportSettings(
        hypotheses=hypotheses,
        description=described,
        command=reproduce_command(args, lang, decoding),
        max_samples=args.max_samples,
        bootstrap_samples=args.bootstrap_samples,
        seed=args.seed,
        name=args.name,
        layout=layout(args),
    )
    return make_winomt_report(data, translations, lang, settings, out)


def scored_languages(langs: Sequence[str]) -> list[str]:
    """Those of ``langs`` WinoMT scores."""
    return [lang for lang in langs if lang in LANGUAGES]


def warn_unscored(langs: Sequence[str]) -> None:
    """Name in one stderr line those of ``langs`` WinoMT does not score (nothing when it scores them all)."""
    skipped = [lang for lang in langs if lang not in LANGUAGES]
    if skipped:
        print(f"warning: WinoMT scores {', '.join(LANGUAGES)} only: {', '.join(skipped)} skipped", file=sys.stderr)


def language_reports(
    request: ReportRequest, langs: Sequence[str], out: Path, resolved: Resolved | None = None
) -> dict[str, Report]:
    """The WinoMT reports of ``request``'s model into ``out/<lang>``, one per language of ``langs`` (each one WinoMT
    scores: :func:`scored_languages`), translated as ``resolved`` says when given; by language."""
    asked = replace(request, benchmark="winomt")
    return {lang: run_winomt(replace(asked, out=str(out / lang), target_langs=[lang]), resolved) for lang in langs}


def headline(metrics: dict[str, Any]) -> dict[str, Any]:
    """A WinoMT report's :data:`HEADLINE` figures, with the accuracy's interval and the count scored."""
    return {key: metrics[key] for key in (*HEADLINE, "accuracy_ci95", "n")}
