"""A training run's bias reports of a model, with the run's settings: MT-GenEval on ``--bias_report_split``
(:func:`bias_report`), WinoMT on ``--winomt_dir`` (:func:`winomt_report`), each decoded with the model's saved
prompt and generation settings and the run's batch size, coverage override and MBR settings (:func:`report_decoding`).
A mitigation's verdict reports its models the same way (:mod:`mtkit.train.mitigation_verdict`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bias_eval.core.bootstrap import SEED
from bias_eval.core.settings import ReportOptions
from mtkit.config import RunConfig
from mtkit.decode.mbr import MBR_KEYS
from mtkit.evaluation.bias_run import run_report
from mtkit.evaluation.report_inputs import GenderedSource, Translator, WinoMTSource
from mtkit.evaluation.winomt_run import WINOMT_DIR, headline, language_reports, scored_languages, warn_unscored


def bias_report(cfg: RunConfig, split: str, final: Path, out: Path) -> dict[str, Any]:
    """The full ``bias_eval`` report of the exported model on ``split`` (``--bias_report_split``) of ``--mtgeneval_dir``
    in ``out``, decoded with the model's saved prompt and generation settings, and the run's ``--decoding``; returns its
    figures (``metrics.json``), which go into the model's card."""
    source = GenderedSource(cfg.data.mtgeneval_dir, split=split, langs=tuple(cfg.data.languages()))
    return dict(run_report(source, report_translator(cfg, final), out).metrics)


def report_translator(cfg: RunConfig, model: Path | str, **given: Any) -> Translator:
    """``model`` decoding as the run's reports decode it (:func:`report_decoding`), with the settings ``given``
    besides, resolved once."""
    return Translator.resolve(str(model), report_decoding(cfg) | given, force=cfg.train.force_coverage)


def winomt_source(cfg: RunConfig) -> WinoMTSource:
    """WinoMT as the run names it: ``--winomt_dir``, at most ``--winomt_max_samples`` sentences (each report sets its
    language)."""
    return WinoMTSource(Path(cfg.eval.winomt_dir or WINOMT_DIR), "", cfg.eval.winomt_max_samples)


def winomt_report(cfg: RunConfig, final: Path, out: Path) -> dict[str, dict[str, Any]]:
    """The WinoMT reports of the exported model into ``out/<lang>``, one per target language of the run WinoMT
    scores, decoded as the bias report is (:func:`bias_report`); returns their headline figures by language."""
    warn_unscored(cfg.data.languages())  # once a run: the verdict's WinoMT section comes after this report
    langs = scored_languages(cfg.data.languages())
    reports = language_reports(winomt_source(cfg), report_translator(cfg, final), langs, out, ReportOptions())
    return {lang: headline(report.metrics) for lang, report in reports.items()}


def report_decoding(cfg: RunConfig) -> dict[str, Any]:
    """The run's batch size and MBR settings (``decoding`` and the candidates' settings; none for beam search) by
    :class:`~mtkit.decode.settings.DecodingSettings`'s field names, with MBR's seed the reports' bootstrap seed."""
    found: dict[str, Any] = {"batch_size": cfg.eval.eval_batch_size, "seed": SEED}
    if cfg.eval.decoding == "beam":
        return found
    keys = ("decoding", *MBR_KEYS)
    return found | {key: getattr(cfg.eval, key) for key in keys if getattr(cfg.eval, key) is not None}
