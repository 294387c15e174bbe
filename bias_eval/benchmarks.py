"""One call makes a report and one compares two, whichever the benchmark: :func:`make_report` scores MT-GenEval (or
any gendered test set: :func:`bias_eval.mtgeneval.make.make_mtgeneval_report`) or WinoMT
(:func:`bias_eval.winomt.report.make_winomt_report`, one report per language); :func:`compare_reports` compares two
MT-GenEval reports (:func:`bias_eval.compare.mtgeneval.compare_mtgeneval`) or two WinoMT reports or sets of them
(:func:`bias_eval.compare.winomt.compare_winomt`), and refuses a pair of two benchmarks in one line."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bias_eval.core.decision import Rule
from bias_eval.core.errors import UserError
from bias_eval.core.latex import Layout
from bias_eval.core.report import WINOMT, Report
from bias_eval.core.settings import ReportSettings
from bias_eval.mtgeneval.gendered import GenderedData
from bias_eval.winomt.data import Translations, WinoMT

if TYPE_CHECKING:
    from bias_eval.compare.mtgeneval import Comparison

Log = Callable[[str], object] | None


def make_report(
    data: GenderedData | WinoMT,
    hypotheses: Mapping[str, Any],
    settings: ReportSettings,
    out: Path,
    log: Log = print,
) -> Report:
    """Score ``hypotheses`` (by target language) against ``data``, write the report into ``out`` and return it (its
    metrics and per-sentence details in memory), as :func:`compare_reports` takes it.

    - MT-GenEval or a gendered table (:class:`~bias_eval.mtgeneval.gendered.GenderedData`): each language's
      ``feminine``/``masculine`` (and ``context``) lines; one report of every language in ``out``.
    - WinoMT (:class:`~bias_eval.winomt.data.WinoMT`): each language's
      :class:`~bias_eval.winomt.data.Translations`; one report per language in ``out/<lang>/``, returned as the set
      (metrics ``{"benchmark": "winomt", "languages": {lang: metrics}}``)."""
    # each benchmark's report and comparison imported when first used: their pages and figures (matplotlib) are not
    # for the start of every process that may report at its end (a training run's workers)
    from bias_eval.mtgeneval.make import make_mtgeneval_report
    from bias_eval.winomt.report import make_winomt_report

    if isinstance(data, GenderedData):
        return make_mtgeneval_report(data, hypotheses, settings, out, log)
    if not hypotheses or not all(isinstance(t, Translations) for t in hypotheses.values()):
        raise UserError("WinoMT: give each language's Translations (bias_eval.winomt.data.pair_translations)")
    found = [make_winomt_report(data, t, lang, settings, out / lang, log) for lang, t in hypotheses.items()]
    return Report.winomt_set({r.metrics["language"]: r for r in found}, out)


def compare_reports(
    before: Report,
    after: Report,
    names: Sequence[str],
    out: Path | None = None,
    rule: Rule = Rule(),
    layout: Layout = Layout(),
    figures: bool = True,
) -> Comparison:
    """Compare the reports ``before`` and ``after`` of one benchmark (made by :func:`make_report` or read by
    :meth:`Report.read`; the paired tests read their per-sentence details) under ``names``, each paired change
    decided by ``rule`` (:mod:`bias_eval.core.decision`); with ``out``, write the comparison's files there (the LaTeX
    table laid out by ``layout``; the figure of both systems unless ``figures`` is false). Two benchmarks are refused
    before anything is written."""
    if before.benchmark != after.benchmark:
        raise UserError(
            f"AFTER: a {after.benchmark} report cannot be compared with BEFORE's {before.benchmark} report (compare "
            "two reports of one benchmark)"
        )
    from bias_eval.compare.mtgeneval import compare_mtgeneval
    from bias_eval.compare.winomt import compare_winomt

    compare = compare_winomt if before.benchmark == WINOMT else compare_mtgeneval
    return compare(before, after, names, out, rule, layout, figures)
