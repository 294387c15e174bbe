"""A mitigation's verdict at the end of its run (:mod:`mtkit.evaluation.verdict` makes the document): the verdict
pairs in MT-GenEval's layout, the bias reports of the start, the control arm's and the mitigated ``final/`` on them
with one set of decoding settings, their comparisons, the general cost, the checkpoint choice, the leakage check and
WinoMT out of domain; ``verdict.json`` and ``verdict.md``."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from bias_eval.benchmarks import compare_reports
from bias_eval.compare.winomt_tests import judged
from bias_eval.core.decision import Rule
from bias_eval.core.report import Report
from bias_eval.core.settings import ReportOptions
from bias_eval.core.textio import atomic_write, read_jsonl
from mtkit.config import RunConfig
from mtkit.data.mitigation_data import write_pairs_layout
from mtkit.evaluation.bias_run import run_report
from mtkit.evaluation.generation import saved_dtype
from mtkit.evaluation.outcome import COMPARISONS
from mtkit.evaluation.report_inputs import GenderedSource, Translator
from mtkit.evaluation.run_reports import report_translator, winomt_source
from mtkit.evaluation.selection import MEASURES
from mtkit.evaluation.unseen import part_comparisons, tuned_words, unseen_units
from mtkit.evaluation.verdict import general_cost, leakage, selection_budget, verdict_document
from mtkit.evaluation.verdict_page import render_markdown
from mtkit.evaluation.verdict_winomt import winomt_section
from mtkit.evaluation.winomt_run import language_reports, scored_languages
from mtkit.train.record import RunRecord
from mtkit.train.tracking import read_metrics
from mtkit.train.trainer import Trainer


def _jsonl(path: Path) -> list[dict]:
    return [row for _, row in read_jsonl(path)]


def verdict_reports(
    models: dict[str, Path | str], langs: list[str], out: Path, translator: Translator
) -> dict[str, Report]:
    """The ``bias_eval`` reports of ``models`` (name: model folder) on the verdict pairs (``out/pairs``) into
    ``out/<name>``, each translated as ``translator`` decodes (:func:`verdict_translator`, resolved once for them all,
    so that none reads anything of its own folder); returns them by name."""
    source = GenderedSource(out / "pairs", split="test", langs=tuple(langs))
    return {n: run_report(source, replace(translator, model=str(m)), out / n) for n, m in models.items()}


def verdict_translator(cfg: RunConfig, final: Path) -> Translator:
    """The one set of decoding settings of a verdict's models: the run's (beams, length penalty and bounds, its
    decoding settings) with the mitigated ``final/``'s prompt and weight type, resolved once."""
    e = cfg.eval
    given = {"num_beams": e.num_beams, "max_new_tokens": e.max_new_tokens, "length_penalty": e.length_penalty,
             "max_len_a": e.max_len_a, "max_len_b": e.max_len_b, "dtype": saved_dtype(final)}  # fmt: skip
    return report_translator(cfg, final, **given)


def verdict_winomt(
    cfg: RunConfig, models: dict[str, Path | str], langs: list[str], out: Path, translator: Translator
) -> dict[str, Any]:
    """The verdict's WinoMT section (:func:`~mtkit.evaluation.verdict_winomt.winomt_section`): ``models`` scored on
    WinoMT into ``out/<name>/<lang>``, each translated as ``translator`` decodes (:func:`verdict_translator`); the
    languages it does not score were named by ``final/``'s report
    (:func:`~mtkit.evaluation.run_reports.winomt_report`), which comes first."""
    scored, source = scored_languages(langs), winomt_source(cfg)
    reports = {n: language_reports(source, replace(translator, model=str(m)), scored, out / n, ReportOptions())
               for n, m in models.items()}  # fmt: skip
    found = {n: {lang: judged(r, lang, n) for lang, r in by_lang.items()} for n, by_lang in reports.items()}
    metrics = {n: {lang: r.metrics for lang, r in by_lang.items()} for n, by_lang in reports.items()}
    return winomt_section(metrics, found, cfg.mitigation.rule())


def _cost(before: Path, after: Path, rule: Rule) -> dict[str, Any] | None:
    """:func:`general_cost` of two runs' general test translations (``None`` when either is missing)."""
    if not (before.is_file() and after.is_file()):
        return None
    return general_cost(_jsonl(before), _jsonl(after), rule=rule)


def mitigation_verdict(cfg: RunConfig, trainer: Trainer, control: Trainer | None, out: Path, record: RunRecord) -> Path:
    """The verdict of a mitigation (:mod:`mtkit.evaluation.verdict`) in ``out``: the verdict pairs in MT-GenEval's
    layout, the ``bias_eval`` reports of the start, the control arm's ``final/`` (``control``: its trainer, if it ran)
    and the mitigated ``final/`` on them with the same decoding settings (:func:`verdict_reports`), their comparisons
    (paired tests, in ``out/<comparison>``), the general cost from the general test translations of update 0 and of
    each export, the checkpoint choice and the leakage check; ``verdict.json`` and ``verdict.md``. The start against
    mitigated comparison and the page go into ``record``, for the model card."""
    order = write_pairs_layout(trainer.raw["verdict"], out / "pairs")
    models = {"start": cfg.model.model_name_or_path, "mitigated": trainer.out / "final"}
    if control is not None:
        models = {"start": models["start"], "control": control.out / "final", "mitigated": models["mitigated"]}
    translator = verdict_translator(cfg, Path(models["mitigated"]))  # once, for every report below
    reports = verdict_reports(models, list(order), out, translator)
    metrics = {n: r.metrics for n, r in reports.items()}
    rule, done = cfg.mitigation.rule(), {}
    for name, pair in COMPARISONS.items():
        if all(n in reports for n in pair):
            done[name] = compare_reports(*(reports[n] for n in pair), pair, out / name, rule)
    record.comparison = done["mitigated_vs_start"]  # the card's before/after table
    tests = trainer.out / "translations"
    costs = {"mitigated_vs_start": _cost(tests / "test-start.jsonl", tests / "test.jsonl", rule)}
    if control is not None:
        costs["mitigated_vs_control"] = _cost(control.out / "translations" / "test.jsonl", tests / "test.jsonl", rule)
    tuning, verdict = trainer.raw["tuning"].to_list(), trainer.raw["verdict"].to_list()
    unseen = unseen_units(verdict, tuned_words(tuning))
    m = cfg.mitigation
    measure = MEASURES[m.mitigation_accuracy]
    words = part_comparisons(reports, order, unseen, metrics["mitigated"], measure, rule)
    leak = leakage(tuning, verdict)
    budget = selection_budget(read_metrics(trainer.out), record.results.get("best_step"), m.max_bleu_drop,
                              m.max_accuracy_drop, cfg.eval.metric_for_best_model, measure)  # fmt: skip
    winomt = verdict_winomt(cfg, models, list(order), out / "winomt", translator) if cfg.eval.winomt_dir else None
    doc = verdict_document(metrics, {name: c.paired for name, c in done.items()}, costs, leak, budget, words, winomt)
    record.verdict_page = render_markdown(doc)
    atomic_write(out / "verdict.json", (json.dumps(doc, indent=2) + "\n").encode("utf-8"))
    atomic_write(out / "verdict.md", record.verdict_page.encode("utf-8"))
    print(f"mitigation verdict in {out}/verdict.md: {doc['summary']}")
    return out
