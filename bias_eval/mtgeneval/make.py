"""One call makes a report: :func:`make_mtgeneval_report` scores a gendered test set's hypotheses, adds the warning and
over-correction flags, and writes ``metrics.json``, ``report.md``, ``report.html``, the details and the figures.
Where the hypotheses came from (a model, files) is the caller's: :class:`ReportSettings` says it in words."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from bias_eval.core.bleu import TOKENIZER_RULE, bleu_signatures, signature
from bias_eval.core.bootstrap import check_resamples
from bias_eval.core.errors import UserError
from bias_eval.core.files import write_report
from bias_eval.core.intervals import PAIRED_DIFFERENCE_DEFINITION, WILSON_DEFINITION
from bias_eval.core.langtag import LanguageTag
from bias_eval.core.memory import machine_memory
from bias_eval.core.report import Report
from bias_eval.core.settings import ReportSettings
from bias_eval.core.textio import NORMAL_FORM, normal_lines
from bias_eval.mtgeneval.accuracy import WARNING_DEFINITION
from bias_eval.mtgeneval.balance import (
    ACCURACY_GAP_DEFINITION,
    MF_RATIO_DEFINITION,
    NEUTRAL_PAIRS_DEFINITION,
    OVER_CORRECTION_DEFINITION,
    STRICT_ACCURACY_DEFINITION,
)
from bias_eval.mtgeneval.gendered import GENDERS, GenderedData
from bias_eval.mtgeneval.metrics import ACCURACY_DEFINITION, CHRF_METRIC, COVERAGE_DEFINITION, FAIR_BLEU_DEFINITION
from bias_eval.mtgeneval.page import report_files
from bias_eval.mtgeneval.report import GAP_DEFINITION, metrics_document, summary_table
from bias_eval.mtgeneval.scoring import Hypotheses, score_dataset


def definitions(data: GenderedData, settings: ReportSettings) -> dict[str, str]:
    """What every figure of ``metrics.json`` means, for this data set and these settings."""
    paired, options = all(ld.paired for ld in data.languages.values()), settings.options
    resampling = (
        "paired bootstrap: sentence pairs (both genders of a sentence together) are drawn with replacement"
        if paired
        else "stratified bootstrap: the feminine and the masculine sentences are resampled separately"
    )
    found = {
        "n": "number of hypotheses scored (feminine + masculine); n_feminine and n_masculine per gender",
        "bleu": f"corpus sacreBLEU over all sentences, tokenized with {TOKENIZER_RULE}, its other settings "
        "sacreBLEU's defaults; bleu_feminine and bleu_masculine over the sentences of one gender; chrf* likewise "
        "with sacreBLEU chrF defaults (0-100 scale)",
        "bleu_gap": GAP_DEFINITION + "; chrf_gap likewise",
        "bleu_gap_ci95": f"95% percentile interval (2.5th, 97.5th) of the gap over {options.bootstrap_samples} "
        f"bootstrap replicates, {resampling}; corpus scores are recomputed on each resample; numpy "
        f"Generator seeded with (seed={options.seed}, crc32(language)); chrf_gap_ci95 likewise",
        "accuracy": ACCURACY_DEFINITION,
        "accuracy_ci95": "accuracy_feminine, accuracy_masculine, accuracy_pair, coverage and the strict accuracies: "
        + WILSON_DEFINITION,
        "coverage": COVERAGE_DEFINITION,
        "strict_accuracy": STRICT_ACCURACY_DEFINITION,
        "accuracy_gap": ACCURACY_GAP_DEFINITION,
        "paired_difference": PAIRED_DIFFERENCE_DEFINITION,
        "mf_ratio": MF_RATIO_DEFINITION,
        "neutral_pairs": NEUTRAL_PAIRS_DEFINITION,
        "over_correction": OVER_CORRECTION_DEFINITION,
        "fair_bleu": FAIR_BLEU_DEFINITION,
        "warning": WARNING_DEFINITION,
        "macro": "unweighted mean over languages of each figure (counts: sum); a macro BLEU or chrF gap's CI is the "
        "percentile interval of the mean over languages of their bootstrap replicates (languages resampled "
        "independently), not a mean of the per-language bounds; a macro accuracy gap's and M:F ratio's CI is the "
        "MOVER interval of the mean of the languages' intervals (see paired_difference); a macro share's CI is "
        "Wilson's around the mean (see accuracy_ci95)",
        "normal_form": f"every hypothesis and reference is compared in Unicode normalization form {NORMAL_FORM}, given "
        "it once as it is read (files, tables, the hub, a model's translations; make_report's hypotheses), so that "
        "text that differs only in how its characters are encoded (é as one code point or as e and an accent) is "
        "the same text",
        "worst examples": "sentence pairs with the largest |sentence BLEU masculine - feminine|, where "
        f"sentence BLEU is sacrebleu.sentence_bleu tokenized with {TOKENIZER_RULE}",
    }
    if settings.context:
        found["accuracy_context"] = (
            "contextual subset: the hypothesis for the 2to1 source (its text after the last <sep>, if any; "
            "--model translates context and sentence together) is judged as above with the original "
            "reference as correct and the flipped one as counterfactual"
        )
    if data.split is not None:
        found["references"] = (
            "MT-GenEval references are the plain sentences/ files, verbatim (as the official accuracy "
            "script reads them); annotated/ files only supply the gendered words listed in the details. "
            "As released, the few target lines with double quotes are CSV-escaped (wrapped in quotes, "
            "inner quotes doubled) and square brackets are Wikipedia text ([citation needed]-style), not "
            "gender marks; both are scored as released"
        )
    return found


def _file_language(path: Path) -> str:
    """The language a hypothesis file's name starts with, in its one spelling (``nob.feminine.txt``: ``nb``); the
    name's own start when it is no language tag (the data then names it as a language it lacks)."""
    start = path.name.split(".")[0]
    tag = LanguageTag.read(start)
    return str(tag) if tag is not None else start


def hyp_dir_languages(hyp_dir: Path) -> list[str]:
    """The languages of the ``<lang>.feminine.txt`` and ``<lang>.masculine.txt`` files in ``hyp_dir``, sorted (a
    language with one of the two is listed: reading it names the missing one)."""
    return sorted({_file_language(path) for g in GENDERS for path in hyp_dir.glob(f"*.{g}.txt")})


def hyp_file(hyp_dir: Path, lang: str, kind: str) -> Path:
    """``lang``'s file of ``kind`` hypotheses in ``hyp_dir``: ``<lang>.<kind>.txt``, the language spelled any way
    that reads as its tag (``nob.feminine.txt`` or ``NB.feminine.txt`` for ``nb``); two spellings of one language
    are refused in one line; none is ``<lang>.<kind>.txt`` (reading it names it)."""
    found = sorted(p for p in hyp_dir.glob(f"*.{kind}.txt") if _file_language(p) == lang)
    if len(found) > 1:
        names = " and ".join(p.name for p in found)
        raise UserError(f"--hyp_dir: {hyp_dir} holds {names}, two files of the {kind} hypotheses of {lang}; keep one")
    return found[0] if found else hyp_dir / f"{lang}.{kind}.txt"


def file_pairs(data: GenderedData, hyp_dir: Path | None) -> dict[str, dict[str, str]]:
    """Per language and gender, the reference and hypothesis files (when the references are plain files and the
    hypotheses are in ``hyp_dir``)."""
    pairs: dict[str, dict[str, str]] = {}
    for lang, ld in data.languages.items():
        for gender in GENDERS:
            reference = Path(ld.side(gender).origin)
            if reference.is_file() and hyp_dir is not None:
                pairs.setdefault(lang, {})[f"reference_{gender}"] = str(reference)
                pairs[lang][f"hypothesis_{gender}"] = str(hyp_file(hyp_dir, lang, gender))
    return pairs


def report_config(data: GenderedData, settings: ReportSettings) -> dict[str, Any]:
    """The ``config`` block of metrics.json: inputs, settings, signatures, definitions, the reproduce command."""
    langs = sorted(data.languages)
    return {
        "name": settings.options.name,
        "data": data.name,
        "split": data.split,
        "dataset_kind": "demo" if data.demo else "mtgeneval" if data.split is not None else "table",
        "languages": langs,
        "paired": all(ld.paired for ld in data.languages.values()),
        "context": settings.context,
        "max_samples": settings.max_samples,  # a subset (compare_reports flags two reports that differ in it)
        "hypotheses": dict(settings.hypotheses),
        "hypotheses_description": settings.description,
        "bootstrap_samples": settings.options.bootstrap_samples,
        "min_effect": settings.options.min_effect,
        "seed": settings.options.seed,
        "ci_level": 0.95,
        "worst_examples": settings.options.examples,
        "normal_form": NORMAL_FORM,  # of every hypothesis and reference (bias_eval.core.textio.normal_text)
        "bleu_signature": bleu_signatures(langs),  # each language's tokenizer (bias_eval.core.bleu)
        "chrf_signature": signature(CHRF_METRIC),
        "sentence_bleu_signature": bleu_signatures(langs, effective_order=True),
        "definitions": definitions(data, settings),
        "files": file_pairs(data, settings.hyp_dir),
        "command": settings.command,
    }


def make_mtgeneval_report(
    data: GenderedData,
    hypotheses: Hypotheses,
    settings: ReportSettings,
    out: Path,
    log: Callable[[str], object] | None = print,
) -> Report:
    """Score ``hypotheses`` (language -> ``feminine``/``masculine``/``context`` -> lines, in ``data``'s order; given
    :data:`bias_eval.core.textio.NORMAL_FORM`, as ``data``'s loaders give their text) against ``data``, write the report
    into ``out`` (all files at once) and return it (its metrics and per-sentence details in memory); ``log`` (``None``:
    silent) gets the summary table, the warnings and the list of files."""
    from bias_eval.mtgeneval.plots import make_figures  # matplotlib: not for every importer's start

    sizes, options = [len(ld.side(g).references) for ld in data.languages.values() for g in GENDERS], settings.options
    check_resamples(options.bootstrap_samples, max(sizes, default=0), machine_memory())  # before any is drawn
    hypotheses = {
        lang: {kind: normal_lines(lines) for kind, lines in kinds.items()} for lang, kinds in hypotheses.items()
    }
    results, macro = score_dataset(
        data, hypotheses, samples=options.bootstrap_samples, seed=options.seed, examples=options.examples
    )
    metrics = metrics_document(results, macro, report_config(data, settings))
    files = report_files(results, metrics, make_figures(metrics) if options.figures else {}, options.layout)
    write_report(out, files)
    if log is not None:
        log(summary_table(metrics))
        if metrics["warning"]:
            log(f"\nWARNING: {metrics['warning']['message']}")
        if metrics["over_correction"]:
            log(f"\nOVER-CORRECTION: {metrics['over_correction']['message']}")
        log(f"\nreport written to {out}/: " + ", ".join(sorted(files)))
    return Report.written(metrics, files, out)
