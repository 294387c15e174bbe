"""A training run's bias reports of a model, with the run's settings: MT-GenEval on ``--bias_report_split``
(:func:`bias_report`), WinoMT on ``--winomt_dir`` (:func:`winomt_report`), each decoded with the model's saved
prompt and generation settings and the run's batch size, coverage override and MBR settings (:func:`report_decoding`).
A mitigation's verdict reports its models the same way (:mod:`mtkit.train.mitigation_verdict`)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from mtkit.config import RunConfig
from mtkit.decode.mbr import MBR_KEYS
from mtkit.evaluation.bias_run import ReportRequest, run_report
from mtkit.evaluation.winomt_run import headline, language_reports, scored_languages, warn_unscored


def bias_report(cfg: RunConfig, split: str, final: Path, out: Path) -> dict[str, Any]:
    """The full ``bias_eval`` report of the exported model on ``split`` (``--bias_report_split``) of ``--mtgeneval_dir``
    in ``out``, decoded with the model's saved prompt and generation settings, and the run's ``--decoding``; returns its
    figures (``metrics.json``), which go into the model's card."""
    langs = cfg.data.languages()
    request = ReportRequest(str(out), str(cfg.data.mtgeneval_dir), split=split, target_langs=langs, model=str(final))
    return dict(run_report(replace(request, **report_decoding(cfg))).metrics)


def winomt_request(cfg: RunConfig, model: Path | str, decoding: dict[str, Any]) -> ReportRequest:
    """A WinoMT report of ``model`` on ``--winomt_dir`` (at most ``--winomt_max_samples`` sentences) decoded with
    ``decoding`` (:class:`ReportRequest`'s fields)."""
    e = cfg.eval
    return ReportRequest("", winomt_dir=e.winomt_dir, max_samples=e.winomt_max_samples, model=str(model), **decoding)


def winomt_report(cfg: RunConfig, final: Path, out: Path) -> dict[str, dict[str, Any]]:
    """The WinoMT reports of the exported model into ``out/<lang>``, one per target language of the run WinoMT
    scores, decoded as the bias report is (:func:`bias_report`); returns their headline figures by language."""
    warn_unscored(cfg.data.languages())  # once a run: the verdict's WinoMT section comes after this report
    langs = scored_languages(cfg.data.languages())
    reports = language_reports(winomt_request(cfg, final, report_decoding(cfg)), langs, out)
    return {lang: headline(report.metrics) for lang, report in reports.items()}


def report_decoding(cfg: RunConfig) -> dict[str, Any]:
    """The run's batch size, coverage override and MBR settings (``decoding`` and the candidates' settings; none for
    beam search) as :class:`ReportRequest`'s fields."""
    found: dict[str, Any] = {"batch_size": cfg.eval.eval_batch_size, "force": cfg.train.force_coverage}
    if cfg.eval.decoding == "beam":
        return found
    keys = ("decoding", *MBR_KEYS)
    return found | {key: getattr(cfg.eval, key) for key in keys if getattr(cfg.eval, key) is not None}
