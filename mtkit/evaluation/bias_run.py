"""A bias report of a model's or a folder's hypotheses, as ``scripts/bias_report.py`` makes it and a training run
at its end: the inputs checked, the data loaded, the model's translations made (or cached ones reused), then
:func:`bias_eval.benchmarks.make_report`. :class:`ReportRequest` is what the script's flags say, as an object."""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from bias_eval.benchmarks import make_report
from bias_eval.core.bootstrap import SAMPLES, SEED
from bias_eval.core.decision import MIN_EFFECT
from bias_eval.core.files import check_report_folder
from bias_eval.core.latex import Layout
from bias_eval.core.report import Report
from bias_eval.core.settings import ReportSettings
from bias_eval.core.textio import check_writable
from bias_eval.mtgeneval.gendered import GENDERS, GenderedData
from bias_eval.mtgeneval.make import hyp_dir_languages
from mtkit.data.coverage import check_model
from mtkit.data.gendered_tables import load_table
from mtkit.data.languages import ModelLanguages
from mtkit.data.mtgeneval import load_mtgeneval
from mtkit.data.mtgeneval_hub import load_hub
from mtkit.data.trained_languages import warn_untrained
from mtkit.decode.devices import check_device
from mtkit.errors import UserError
from mtkit.evaluation.generation import ReportDecoding, Resolved, resolve_report
from mtkit.evaluation.hyps import no_hyp_files, read_hyp_dir, translate_dataset
from mtkit.evaluation.subset import gendered_subset
from mtkit.hubcheck import check_hub_source
from mtkit.model.folders import check_pretrained_source
from mtkit.paths import check_apart


@dataclass
class ReportRequest:
    """One report: the data (one of ``mtgeneval_dir``, ``hub``, ``data``), the hypotheses (one of ``model``,
    ``hyp_dir``), how the model translates (``None``: its saved settings, else the defaults) and the report's
    options; the fields and defaults of ``scripts/bias_report.py``'s flags."""

    out: str
    mtgeneval_dir: str | None = None
    hub: bool = False
    data: str | None = None
    split: str = "dev"
    target_langs: list[str] | None = None
    context: bool = False
    max_samples: int | None = None
    model: str | None = None
    hyp_dir: str | None = None
    prompt: str | None = None
    num_beams: int | None = None
    batch_size: int = 32
    max_new_tokens: int | None = None
    length_penalty: float | None = None
    max_len_a: float | None = None
    max_len_b: int | None = None
    force: bool = False
    device: str | None = None
    dtype: str = "auto"
    engine: str = "hf"
    decoding: str = "beam"
    mbr_samples: int | None = None
    mbr_candidates: str | None = None
    epsilon: float | None = None
    top_p: float | None = None
    bootstrap_samples: int = SAMPLES
    min_effect: float = MIN_EFFECT
    seed: int = SEED
    examples: int = 10
    benchmark: str = "mtgeneval"  # or "winomt" (mtkit.evaluation.winomt_run)
    winomt_dir: str | None = None
    hyp_file: str | None = None
    name: str | None = None
    label: str | None = None
    table_star: bool = False


#: the fields of :class:`ReportRequest` that say how ``--model`` translates: ignored, so refused, with ``--hyp_dir``
MODEL_FLAGS = (
    *("prompt", "num_beams", "batch_size", "max_new_tokens", "length_penalty", "max_len_a", "max_len_b", "force"),
    *("device", "dtype", "engine", "decoding", "mbr_samples", "mbr_candidates", "epsilon", "top_p", "max_samples"),
)


def check_model_flags(args: ReportRequest) -> None:
    """Refuse a flag of :data:`MODEL_FLAGS` set otherwise than its default (``--num_beams 5``, ``--device cpu``)
    with ``--hyp_dir``, whose hypotheses are read, not translated: one line naming it."""
    defaults = {f.name: f.default for f in fields(ReportRequest)}
    for name in MODEL_FLAGS:
        if getattr(args, name) != defaults[name]:
            raise UserError(f"--{name}: only used with --model")


def load_data(args: ReportRequest) -> GenderedData:
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


def describe_generation(model: str, decoding: ReportDecoding, cache: Path) -> str:
    """One line saying how ``model`` translated."""
    settings = decoding.settings
    prompt = f"prompt {settings.prompt.template!r}" if settings.prompt else "no prompt"
    mbr = settings.mbr
    if mbr is not None:
        draw = f"{mbr.samples} {'epsilon/nucleus samples' if mbr.candidates == 'sample' else 'beam n-best'}"
        prompt += f", MBR with {mbr.utility} over {draw}"
    return (
        f"translated by {model} (beam {settings.num_beams}, length penalty {settings.length_penalty}, "
        f"at most {settings.max_new_tokens} new tokens and {settings.max_len_a} x source + {settings.max_len_b}, "
        f"{prompt}), cached in {cache}"
    )


def reproduce_command(args: ReportRequest, decoding: ReportDecoding | None) -> str:
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
    if decoding is None:
        parts += ["--hyp_dir", args.hyp_dir]
    else:
        parts += ["--model", args.model, *decoding.flags()]
        parts += ["--force"] if args.force else []
    parts += ["--out", args.out, "--bootstrap_samples", str(args.bootstrap_samples), "--seed", str(args.seed)]
    parts += ["--examples", str(args.examples)]
    parts += ["--min_effect", f"{args.min_effect:g}"] if args.min_effect != MIN_EFFECT else []
    parts += ["--name", args.name] if args.name else []
    return shlex.join(parts + latex_flags(args))


def latex_flags(args: ReportRequest) -> list[str]:
    """The flags that set ``report.tex`` (``--label``, ``--table_star``), as the command that rebuilds it gives them."""
    return ["--label", args.label] * bool(args.label) + ["--table_star"] * args.table_star


def layout(args: ReportRequest) -> Layout:
    """How ``report.tex`` is set: ``--label`` and ``--table_star``."""
    return Layout(args.label, args.table_star)


def report_settings(
    args: ReportRequest, data: GenderedData, decoding: ReportDecoding | None, origins: dict[str, str] | None
) -> ReportSettings:
    """What :func:`make_report` writes of where the hypotheses came from, and the command that rebuilds it."""
    if decoding is None:
        hypotheses: dict[str, Any] = {"hyp_dir": str(Path(args.hyp_dir))}
        described = f"files in {args.hyp_dir}"
    else:
        hypotheses = {
            "model": args.model,
            "generation": decoding.record(),
            "settings_from": dict(origins or {}),
            "prompts": {lang: decoding.prompt_for(lang) for lang in data.languages},
            "cache_dir": "hyps",
        }
        described = describe_generation(args.model, decoding, Path(args.out) / "hyps")
    return ReportSettings(
        hypotheses=hypotheses,
        description=described,
        command=reproduce_command(args, decoding),
        hyp_dir=Path(args.hyp_dir) if args.hyp_dir else Path(args.out) / "hyps",
        context=bool(args.context),
        max_samples=args.max_samples,
        bootstrap_samples=args.bootstrap_samples,
        min_effect=args.min_effect,
        seed=args.seed,
        examples=args.examples,
        name=args.name,
        layout=layout(args),
    )


def run_report(args: ReportRequest, resolved: Resolved | None = None) -> Report:
    """Write the report of ``args`` into ``--out`` (a card is the caller's); return it (:class:`Report`). ``--model``
    translates as ``resolved`` says when given (the settings of several reports resolved once, as a verdict's), else
    as ``args``'s decoding fields resolve (:func:`~mtkit.evaluation.generation.resolve_report`)."""
    if args.hyp_dir:
        check_model_flags(args)
    if resolved is None:
        check_device(args.device, args.engine)  # before anything loads
    out = Path(args.out)
    inputs = {f"--{key}": getattr(args, key) for key in ("mtgeneval_dir", "data", "hyp_dir", "model")}
    check_apart(inputs, {"--out": out})
    check_writable(out, "--out")
    check_hub_source(args.model, f"--model {args.model}")  # a hub id out of reach: one line, at once
    check_report_folder(out, "mtgeneval")  # another benchmark's report there: refused before anything is read
    found = None
    if args.hyp_dir and not args.target_langs and Path(args.hyp_dir).is_dir():  # the languages of its files
        found = hyp_dir_languages(Path(args.hyp_dir))
        args = replace(args, target_langs=found or None)
    data = load_data(args)  # the data's own errors first
    if found == []:
        raise no_hyp_files(Path(args.hyp_dir))
    decoding, origins = None, None
    if args.hyp_dir:
        hyps = read_hyp_dir(Path(args.hyp_dir), data)
        if found:  # said once they are read: a bad input stays one line
            print(f"--hyp_dir: scoring {', '.join(found)}, the languages with files there", file=sys.stderr)
    else:
        if (resolved[0].settings.engine if resolved else args.engine) == "hf":
            check_pretrained_source(args.model, "--model", weights=True)  # before its tokenizer loads
        decoding, origins = resolved or resolve_report(args)
        references = {lang: [r for g in GENDERS for r in ld.side(g).references] for lang, ld in data.languages.items()}
        languages = ModelLanguages.load(args.model)
        for lang in sorted(data.languages):  # each one the model's family has a code for
            languages.check(lang, "--target_langs")
        warn_untrained(args.model, sorted(data.languages), "--target_langs")  # one a fine-tune was not trained for
        check_model(args.model, references, force=args.force)  # before anything is translated
        hyps = translate_dataset(args.model, data, out / "hyps", decoding)
    return make_report(data, hyps, report_settings(args, data, decoding, origins), out)
