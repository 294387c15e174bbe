"""A bias report of a model's or a folder's hypotheses on MT-GenEval or a gendered table, as
``scripts/bias_report.py`` makes it and a training run at its end: the inputs checked, the data loaded, the model's
translations made (or cached ones reused), then :func:`bias_eval.benchmarks.make_report`. What the report is made of
(:mod:`mtkit.evaluation.report_inputs`) comes resolved from its caller."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from bias_eval.benchmarks import make_report
from bias_eval.core.files import check_report_folder
from bias_eval.core.report import Report
from bias_eval.core.settings import ReportOptions, ReportSettings
from bias_eval.core.textio import check_writable
from bias_eval.mtgeneval.gendered import GENDERS, GenderedData
from bias_eval.mtgeneval.make import hyp_dir_languages
from mtkit.data.coverage import check_model
from mtkit.data.languages import ModelLanguages
from mtkit.data.trained_languages import warn_untrained
from mtkit.evaluation.hyps import Hyps, no_hyp_files, read_hyp_dir, translate_dataset
from mtkit.evaluation.report_inputs import GenderedSource, Hypotheses, Translator, rebuild_command
from mtkit.hubcheck import check_hub_source
from mtkit.model.folders import check_pretrained_source
from mtkit.paths import check_apart


def check_translator(translator: Translator, langs: list[str], flag: str) -> None:
    """Refuse, before it loads for translating, a model whose folder is not whole (transformers' engine) or whose
    family has no code for one of ``langs``; warn of a language a fine-tune was not trained for."""
    if translator.decoding.settings.engine == "hf":
        check_pretrained_source(translator.model, "--model", weights=True)
    languages = ModelLanguages.load(translator.model)
    for lang in langs:  # each one the model's family has a code for
        languages.check(lang, flag)
    warn_untrained(translator.model, langs, flag)  # one a fine-tune was not trained for


def translate(translator: Translator, data: GenderedData, cache: Path) -> Hyps:
    """``translator``'s hypotheses of every source of ``data``, cached in ``cache``, once its model is checked and
    its tokenizer can write every language's references (unless ``force``)."""
    check_translator(translator, sorted(data.languages), "--target_langs")
    references = {lang: [r for g in GENDERS for r in ld.side(g).references] for lang, ld in data.languages.items()}
    check_model(translator.model, references, force=translator.force)  # before anything is translated
    return translate_dataset(translator.model, data, cache, translator.decoding)


def run_report(
    source: GenderedSource, hypotheses: Hypotheses, out: Path, options: ReportOptions = ReportOptions()
) -> Report:
    """Write the report of ``hypotheses`` (a model translating, or ``--hyp_dir``'s folder) on ``source`` into ``out``
    (a card is the caller's); return it (:class:`Report`). A folder's languages are those of its files when
    ``source`` names none."""
    model = hypotheses.model if isinstance(hypotheses, Translator) else None
    hyp_dir = None if isinstance(hypotheses, Translator) else Path(hypotheses)
    inputs = {"--mtgeneval_dir": source.mtgeneval_dir, "--data": source.table, "--hyp_dir": hyp_dir, "--model": model}
    check_apart(inputs, {"--out": out})
    check_writable(out, "--out")
    check_hub_source(model, f"--model {model}")  # a hub id out of reach: one line, at once
    check_report_folder(out, "mtgeneval")  # another benchmark's report there: refused before anything is read
    found = None
    if hyp_dir and not source.langs and hyp_dir.is_dir():  # the languages of its files
        found = hyp_dir_languages(hyp_dir)
        source = replace(source, langs=tuple(found) or None)
    data = source.load()  # the data's own errors first
    if found == []:
        raise no_hyp_files(hyp_dir)
    if isinstance(hypotheses, Translator):
        hyps = translate(hypotheses, data, out / "hyps")
        prompts = {"prompts": {lang: hypotheses.decoding.prompt_for(lang) for lang in data.languages}}
        record, described = hypotheses.record() | prompts | {"cache_dir": "hyps"}, hypotheses.describe(out / "hyps")
    else:
        hyps = read_hyp_dir(hyp_dir, data)
        if found:  # said once they are read: a bad input stays one line
            print(f"--hyp_dir: scoring {', '.join(found)}, the languages with files there", file=sys.stderr)
        record, described = {"hyp_dir": str(hyp_dir)}, f"files in {hyp_dir}"
    settings = ReportSettings(
        hypotheses=record,
        description=described,
        command=rebuild_command(source, hypotheses, out, options),
        hyp_dir=hyp_dir or out / "hyps",
        context=source.context,
        max_samples=source.max_samples,
        options=options,
    )
    return make_report(data, hyps, settings, out)
