"""The self-check of every CTranslate2 conversion: a sample translated by both engines (transformers' ``generate`` on
the source model, CTranslate2 on the converted folder) with the model's saved prompt, greedily and with its generation
settings; their agreement (the share of identical outputs) and the BLEU of CTranslate2's outputs against
transformers'. The greedy figures are held to a bound per weight type (:data:`BOUNDS`): a broken conversion (T5 in
float16 on a GPU, wrong weights) decodes into padding or other sentences and falls far below it, a correct one stays
near-identical in float32 and close in the others. Beam figures are reported only: the two engines stop their beams
by different rules, which alone changes outputs of a correct conversion (docs/translation.md, CTranslate2)."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bias_eval.core.bleu import corpus_bleu
from bias_eval.core.textio import read_jsonl, read_lines
from mtkit.data.languages import ModelLanguages
from mtkit.data.prompts import Prompt
from mtkit.decode.settings import SAVED, DecodingSettings, resolve
from mtkit.errors import UserError
from mtkit.train.checks import saved_settings

#: Sentences the check translates unless told otherwise (``--check_samples``).
CHECK_SAMPLES = 32

#: The built-in sample: the first 32 English sentences of the demo corpus' test split, as
#: ``mtkit.demo.corpus.generate_corpus(seed=0, n_test=32)`` generates them (tests/mtkit/export/test_ct2.py checks that
#: they still are); the export layer lies below the demo package, hence a copy.
SAMPLE = (
    "The girls worked at the university yesterday.",
    "Diego will receive some new reports next month.",
    "There was an umbrella in the museum.",
    "The programmer and his children organize a party on Saturdays.",
    "The manager canceled the meeting because he was tired.",
    "The bicycle that the children needed was very big.",
    "Pedro washes a bicycle on Saturdays.",
    "The firefighter told me that she would come soon.",
    "We waited for the mechanic and her parents at the gym.",
    "He was bored two days ago.",
    "The programmer went to the supermarket with her family on Tuesday.",
    "The important report was read by Elena.",
    "The journalist thinks that she is a little calm.",
    "The receptionist wrote that she had prepared the sandwich.",
    "The teacher sent his gift.",
    "My sisters are very hardworking writers.",
    "The nurse read her note on Thursday.",
    "My sisters who work at the clinic are receptionists.",
    "The party was organized by Paula.",
    "The newspaper is very long.",
    "The boy will lose his camera on Tuesday.",
    "The men were happy this morning.",
    "My brothers are very angry this morning.",
    "The designer bought herself a car.",
    "The pharmacist repaired his computer.",
    "There are five beautiful dishes in the museum.",
    "The pilot is a careful woman.",
    "Mr. Walker, the cleaner, will wash the car soon.",
    "David checked some boring reports.",
    "Will the manager check her white cars on Wednesday?",
    "Why was the farmer so sick when she arrived?",
    "The painter washed her cheap shoes.",
)

#: Per weight type, the greedy agreement (share of outputs identical to transformers') or the greedy BLEU of
#: CTranslate2's outputs against transformers' that a conversion must reach; either will do (a model whose outputs
#: are one word each has a BLEU of 0 when all of them agree, one that repeats a word a high BLEU when few agree).
#: float32 computes what transformers computes: near-identical. The half types round every weight to 8 or 11 bits,
#: int8/int16 to 256 or 65,536 levels, which flips close choices of an untrained model. Measured (docs/translation.md,
#: CTranslate2): correct conversions reach at least 1.00/100 (float32), 0.81/74 (half types) and 0.50/38 (integer
#: types) on random-weight test models and far more on trained ones; broken ones (another seed's weights, shuffled
#: rows) at most 0.03/0.2.
BOUNDS: dict[str, tuple[float, float]] = {
    "float32": (0.9, 90.0),
    "float16": (0.5, 50.0),
    "bfloat16": (0.5, 50.0),
    "int16": (0.25, 25.0),
    "int8": (0.25, 25.0),
    "int8_float16": (0.25, 25.0),
    "int8_bfloat16": (0.25, 25.0),
}


@dataclass
class Sample:
    """What the check translates: sources, their target languages (for a prompt that names one), references (or
    ``None``) and where they come from, in words."""

    sources: list[str]
    langs: list[str | None]
    references: list[str] | None
    origin: str


def _lines(path: str | Path, flag: str) -> list[str]:
    if not Path(path).is_file():
        raise UserError(f"{flag} {path}: no such file")
    return read_lines(Path(path))


def run_validation(model_dir: Path, n: int) -> Sample | None:
    """The first ``n`` validation pairs of the run ``model_dir`` is the ``final/`` of (its parent holds the run's
    ``config.yaml``): the held-out split it wrote (``validation_split.jsonl``) or its ``--data_dir`` validation
    files; ``None`` when there are none to read."""
    run = model_dir.resolve().parent
    held_out = run / "validation_split.jsonl"
    if held_out.is_file():
        rows = [row for _, row in read_jsonl(held_out)[:n]]
        sources, targets = [r["source"] for r in rows], [r["target"] for r in rows]
        return Sample(sources, [r.get("lang") for r in rows], targets, f"the run's validation data ({held_out})")
    try:
        settings = saved_settings(run)
    except UserError:  # an unreadable config.yaml: no run to take data from
        return None
    if not settings.get("data_dir"):
        return None
    split, src, tgt = (settings.get(k) for k in ("validation_split", "source_lang", "target_lang"))
    for ending in ("", ".gz"):
        source, target = (Path(settings["data_dir"]) / f"{split}.{lang}{ending}" for lang in (src, tgt))
        if source.is_file() and target.is_file():
            lines = read_lines(source)[:n]
            return Sample(lines, [tgt] * len(lines), read_lines(target)[:n], f"the run's validation data ({source})")
    return None


def check_sample(
    model_dir: Path, n: int, source: str | Path | None = None, reference: str | Path | None = None
) -> Sample:
    """The first ``n`` lines of ``source`` (``--check_source``, with ``reference``'s lines as references), else of the
    run's validation data, else of :data:`SAMPLE`."""
    if reference is not None and source is None:
        raise UserError("--check_reference: only used with --check_source")
    if source is not None:
        sources = _lines(source, "--check_source")
        references = _lines(reference, "--check_reference") if reference is not None else None
        if references is not None and len(references) != len(sources):
            raise UserError(f"--check_reference {reference}: {len(references)} lines for {len(sources)} sources")
        kept = sources[:n]
        return Sample(kept, [None] * len(kept), None if references is None else references[:n], str(source))
    found = run_validation(model_dir, n)
    if found is not None:
        return found
    return Sample(list(SAMPLE[:n]), [None] * min(n, len(SAMPLE)), None, "the built-in demo sample")


def inputs(model_dir: Path, sample: Sample) -> list[str]:
    """The sample's sources in the model's saved prompt (each with its row's target language, else the model's
    first)."""
    prompt = Prompt.load(model_dir)
    if prompt is None:
        return list(sample.sources)
    default = prompt.languages[0] if prompt.languages else ""
    return [prompt.render(s, lang or default) for s, lang in zip(sample.sources, sample.langs)]


def target_langs(model_dir: Path, sample: Sample) -> list[str | None]:
    """Each sample row's target language: its own, else the model's saved prompt's first, else the one its generation
    config forces, else (a model of several languages) German or its first."""
    from transformers import AutoTokenizer, GenerationConfig

    prompt = Prompt.load(model_dir)
    default = prompt.languages[0] if prompt is not None and prompt.languages else None
    if default is None:
        tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
        languages = ModelLanguages.of(tokenizer, model_dir)
        if languages.family is not None:
            saved = (
                GenerationConfig.from_pretrained(str(model_dir))
                if (model_dir / "generation_config.json").is_file()
                else None
            )
            forced = getattr(saved, "forced_bos_token_id", None)
            default = languages.language_of(tokenizer, forced) or (
                "de" if "de" in languages.codes else next(iter(languages.codes))
            )
    return [lang or default for lang in sample.langs]


def compare(
    transformers: Sequence[str],
    ctranslate2: Sequence[str],
    references: Sequence[str] | None,
    langs: Sequence[str | None],
) -> dict:
    """Agreement (share of identical outputs), BLEU of ``ctranslate2`` against ``transformers``, and with
    ``references`` each engine's BLEU against them and the difference (CTranslate2's minus transformers'); BLEU with
    each target language's tokenizer (``langs``, :func:`bias_eval.core.bleu.corpus_bleu`)."""
    same = sum(a == b for a, b in zip(transformers, ctranslate2))
    figures: dict[str, Any] = {
        "identical": same,
        "agreement": same / max(1, len(transformers)),
        "bleu": corpus_bleu(ctranslate2, transformers, langs),
    }
    if references is not None:
        hf = corpus_bleu(transformers, references, langs)
        ct2 = corpus_bleu(ctranslate2, references, langs)
        figures["reference_bleu"] = {"transformers": hf, "ctranslate2": ct2, "difference": ct2 - hf}
    return figures


def passes(greedy: dict, quantization: str) -> bool:
    """Whether the greedy figures reach either bound of :data:`BOUNDS` for ``quantization``."""
    least_agreement, least_bleu = BOUNDS[quantization]
    return greedy["agreement"] >= least_agreement or greedy["bleu"] >= least_bleu


def summary(figures: dict, quantization: str) -> str:
    """The one line the check prints (and, on failure, the error's figures)."""
    least_agreement, least_bleu = BOUNDS[quantization]
    n, greedy, beam = figures["sentences"], figures["greedy"], figures["beam"]
    line = (
        f"CTranslate2 self-check ({quantization}, {n} sentences of {figures['sample']}): greedy "
        f"{greedy['identical']}/{n} identical to transformers' (agreement {greedy['agreement']:.2f}, BLEU "
        f"{greedy['bleu']:.1f}; bound: agreement {least_agreement:.2f} or BLEU {least_bleu:.0f}); beam "
        f"{beam['beam_size']}: {beam['identical']}/{n} identical (BLEU {beam['bleu']:.1f})"
    )
    if "reference_bleu" in beam:
        ref = beam["reference_bleu"]
        line += (
            f"; BLEU against the references: transformers {ref['transformers']:.1f}, CTranslate2 "
            f"{ref['ctranslate2']:.1f} ({ref['difference']:+.1f})"
        )
    return line


def decoding(settings: DecodingSettings) -> dict[str, Any]:
    """The saved settings both engines decode with, as ``mtkit_ct2.json`` records them (``beam_size``: the beam)."""
    return {"beam_size": settings.num_beams, **{name: getattr(settings, name) for name in SAVED[1:]}}


def _outputs(
    translator, texts: list[str], langs: list[str | None], settings: DecodingSettings
) -> tuple[list[str], list[str]]:
    """Greedy outputs and outputs under ``settings`` (the same list when its beam is 1), into ``langs``."""
    greedy = translator.translate(texts, replace(settings, num_beams=1), target_langs=langs)
    if settings.num_beams == 1:
        return greedy, greedy
    return greedy, translator.translate(texts, settings, target_langs=langs)


def self_check(model_dir: Path, ct2_dir: Path, sample: Sample, quantization: str, flag: str) -> dict:
    """Translate ``sample`` with both engines on the same device (transformers in float32, the reference; CTranslate2
    in ``quantization``), greedily and with the model's generation settings; print the :func:`summary` line and return
    its figures. The greedy figures decide (:func:`passes`; a :class:`UserError` naming ``flag`` below the bounds):
    the engines' beam searches stop by different rules, which alone changes some outputs of a correct conversion."""
    import torch

    from mtkit.decode.ct2 import CT2Translator
    from mtkit.decode.generate import Translator

    start = time.perf_counter()
    texts, langs = inputs(model_dir, sample), target_langs(model_dir, sample)
    settings, _ = resolve(None, model_dir)  # the model's saved settings, as scripts/translate.py takes them
    reference = Translator(model_dir, dtype="fp32")
    hf_greedy, hf_beam = _outputs(reference, texts, langs, settings)
    device = reference.device
    del reference
    if device.type == "cuda":
        torch.cuda.empty_cache()
    ct2_greedy, ct2_beam = _outputs(CT2Translator(ct2_dir, device=str(device)), texts, langs, settings)
    figures: dict[str, Any] = {"sample": sample.origin, "sentences": len(texts), "decoding": decoding(settings)}
    figures["greedy"] = compare(hf_greedy, ct2_greedy, None, langs)
    figures["beam"] = {"beam_size": settings.num_beams, **compare(hf_beam, ct2_beam, sample.references, langs)}
    figures["bounds"] = dict(zip(("agreement", "bleu"), BOUNDS[quantization]))
    figures["seconds"] = round(time.perf_counter() - start, 1)
    line = summary(figures, quantization)
    if not passes(figures["greedy"], quantization):
        raise UserError(
            f"{flag} {quantization}: the converted model fails its self-check, so nothing was written ({line}); the "
            "conversion is broken (CTranslate2 issue #1074 for T5 in float16; scripts/export_ct2.py --check_samples 0 "
            "converts without the check)"
        )
    print(line, file=sys.stderr, flush=True)
    return figures | {"passed": True}
