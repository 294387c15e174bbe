"""A WinoMT report of a translation file or of a model, as ``scripts/bias_report.py --benchmark winomt`` makes it:
the inputs checked, the benchmark loaded, the model's translations of ``en.txt`` made (or cached ones reused), then
:func:`bias_eval.winomt.report.make_winomt_report`. What the report is made of
(:mod:`mtkit.evaluation.report_inputs`) comes resolved from its caller."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bias_eval.core.report import Report
from bias_eval.core.settings import ReportOptions, ReportSettings
from bias_eval.core.textio import check_writable
from bias_eval.winomt.data import Translations, WinoMT, load_winomt, read_translations, subset
from bias_eval.winomt.languages import LANGUAGES
from mtkit.evaluation.bias_run import check_translator
from mtkit.evaluation.hyps import translate_lines
from mtkit.evaluation.report_inputs import Hypotheses, Translator, WinoMTSource, rebuild_command
from mtkit.hubcheck import check_hub_source
from mtkit.paths import check_apart

#: where the toolkit's shared data keeps WinoMT (``--winomt_dir``'s default)
WINOMT_DIR = "../shared/data/winomt"
#: the figures of a WinoMT report a run's record, its card and a verdict show (``metrics.json`` keys)
HEADLINE = ("accuracy", "delta_g", "delta_s")


def translate(translator: Translator, data: WinoMT, lang: str, cache: Path) -> Translations:
    """``translator``'s translations of the benchmark's sentences into ``lang``, cached in ``cache``."""
    check_translator(translator, [lang], "--target_lang")
    sources = [item.sentence for item in data.items]
    lines = translate_lines(translator.model, {(lang, "winomt"): sources}, cache, translator.decoding)
    return Translations(data.items, tuple(sources), tuple(lines[(lang, "winomt")]))


def run_winomt(
    source: WinoMTSource, hypotheses: Hypotheses, out: Path, options: ReportOptions = ReportOptions()
) -> Report:
    """Write the WinoMT report of ``hypotheses`` (a model translating, or ``--hyp_file``) on ``source`` into ``out``;
    return it (:class:`Report`)."""
    from bias_eval.winomt.report import make_winomt_report  # its page's figures: not for every training process's start

    model = hypotheses.model if isinstance(hypotheses, Translator) else None
    hyp_file = None if isinstance(hypotheses, Translator) else Path(hypotheses)
    check_apart({"--winomt_dir": source.folder, "--hyp_file": hyp_file, "--model": model}, {"--out": out})
    check_writable(out, "--out")
    check_hub_source(model, f"--model {model}")
    data = subset(load_winomt(Path(source.folder)), source.max_samples, options.seed)
    if isinstance(hypotheses, Translator):
        translations = translate(hypotheses, data, source.lang, out / "hyps")
        prompt = {"prompt": hypotheses.decoding.prompt_for(source.lang), "cache_dir": "hyps"}
        record, described = hypotheses.record() | prompt, hypotheses.describe(out / "hyps")
    else:
        translations = read_translations(hyp_file, data)
        record, described = {"hyp_file": str(hyp_file)}, f"the file {hyp_file}"
    settings = ReportSettings(
        hypotheses=record,
        description=described,
        command=rebuild_command(source, hypotheses, out, options),
        max_samples=source.max_samples,
        options=options,
    )
    return make_winomt_report(data, translations, source.lang, settings, out)


def scored_languages(langs: Sequence[str]) -> list[str]:
    """Those of ``langs`` WinoMT scores."""
    return [lang for lang in langs if lang in LANGUAGES]


def warn_unscored(langs: Sequence[str]) -> None:
    """Name in one stderr line those of ``langs`` WinoMT does not score (nothing when it scores them all)."""
    skipped = [lang for lang in langs if lang not in LANGUAGES]
    if skipped:
        print(f"warning: WinoMT scores {', '.join(LANGUAGES)} only: {', '.join(skipped)} skipped", file=sys.stderr)


def language_reports(
    source: WinoMTSource, translator: Translator, langs: Sequence[str], out: Path, options: ReportOptions
) -> dict[str, Report]:
    """The WinoMT reports of ``translator`` on ``source`` into ``out/<lang>``, one per language of ``langs`` (each one
    WinoMT scores: :func:`scored_languages`); by language."""
    return {lang: run_winomt(replace(source, lang=lang), translator, out / lang, options) for lang in langs}


def headline(metrics: dict[str, Any]) -> dict[str, Any]:
    """A WinoMT report's :data:`HEADLINE` figures, with the accuracy's interval and the count scored."""
    return {key: metrics[key] for key in (*HEADLINE, "accuracy_ci95", "n")}
