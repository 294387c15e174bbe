"""Two WinoMT reports compared, as :func:`bias_eval.compare.mtgeneval.compare_mtgeneval` compares MT-GenEval ones: every
figure of each language side by side (accuracy, F1 per gender, ΔG, the pro- and anti-stereotypical accuracies, ΔS),
the paired tests on the same sentences (:mod:`bias_eval.compare.winomt_tests`), the first paragraph
(:func:`bias_eval.compare.winomt_paper.summary`), the LaTeX table and the figure of both systems on shared axes.

A WinoMT report is one language's folder; a set of them is a folder of ``<lang>/`` report folders (as the training
pipeline and ``scripts/bias_study.py`` write them), held as one :class:`bias_eval.core.report.Report` whose metrics are
``{"benchmark": "winomt", "languages": {lang: metrics}}``."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bias_eval.compare.comparability import decoding_differences
from bias_eval.compare.mtgeneval import COMPARISON_FILES, FIGURE_FILES, Comparison
from bias_eval.compare.mtgeneval_tests import paired_html, paired_markdown
from bias_eval.compare.rows import Row, render_html, render_markdown
from bias_eval.compare.winomt_tests import NOTE, PREFIX, judged, winomt_paired
from bias_eval.core.decision import Rule
from bias_eval.core.errors import UserError
from bias_eval.core.files import write_report
from bias_eval.core.latex import Layout
from bias_eval.core.report import WINOMT, Refused, Report

#: (title, metrics.json key) of every figure set side by side
FIGURES = (
    ("accuracy", "accuracy"),
    ("F1 male", "f1_male"),
    ("F1 female", "f1_female"),
    ("ΔG", "delta_g"),
    ("accuracy pro", "accuracy_pro"),
    ("accuracy anti", "accuracy_anti"),
    ("ΔS", "delta_s"),
)
#: what a WinoMT report records about the lines it scored: (config key, how the comparison names it)
SCORED = (("data", "data folder"), ("lines", "lines scored"), ("sample", "subset drawn"))


def side_rows(
    before: Mapping[str, Mapping[str, Any]],
    after: Mapping[str, Mapping[str, Any]],
    langs: Sequence[str],
    min_effect: float,
) -> list[Row]:
    """Each figure of each common language in both reports, then their means (``mean``, no intervals) when both
    have the same languages, more than one."""

    def row(scope: str, title: str, key: str, b: Mapping[str, Any], a: Mapping[str, Any]) -> Row:
        values = [(m.get(key), m.get(f"{key}_ci95")) for m in (b, a)]
        return Row(scope, title, PREFIX + key, *values[0], *values[1], min_effect)

    rows = [row(lang, t, k, before[lang], after[lang]) for lang in langs for t, k in FIGURES]
    if len(langs) > 1 and set(before) == set(after):
        for title, key in FIGURES:
            means = [_mean([side[lang].get(key) for lang in langs]) for side in (before, after)]
            rows.append(row("mean", title, key, {key: means[0]}, {key: means[1]}))
    return rows


def _mean(values: Sequence[float | None]) -> float | None:
    return None if any(v is None for v in values) else sum(values) / len(values)  # type: ignore[arg-type]


def differences(before: Mapping[str, Any], after: Mapping[str, Any], names: Sequence[str], lang: str) -> list[str]:
    """What differs between two reports of one language in the lines scored and the decoding."""
    configs = [m.get("config") or {} for m in (before, after)]
    lines = [
        f"{lang}: the reports scored different lines, {label}: {names[0]} {configs[0].get(key)!r}, {names[1]} "
        f"{configs[1].get(key)!r}."
        for key, label in SCORED
        if configs[0].get(key) != configs[1].get(key)
    ]
    return lines + [f"{lang}: {line}" for line in decoding_differences((before, after), names)]


def _sources(sets: Sequence[Mapping[str, Report]], names: Sequence[str]) -> list[str]:
    out = []
    for name, found in zip(names, sets):
        for lang, report in found.items():
            where = report.folder if report.folder is not None else "in memory"
            out.append(f"{name} ({lang}): {where} ({(report.metrics.get('config') or {}).get('description', '?')})")
    return out


def compare_winomt(
    before: Report,
    after: Report,
    names: Sequence[str],
    out: Path | None = None,
    rule: Rule = Rule(),
    layout: Layout = Layout(),
    figures: bool = True,
) -> Comparison:
    """Compare the WinoMT reports (or sets of them) ``before`` and ``after`` under ``names``, every paired change
    decided by ``rule``; with ``out``, write the comparison's files there (the LaTeX table laid out by ``layout``;
    the figure unless ``figures`` is false)."""
    from bias_eval.compare.winomt_paper import CAPTION, comparison_figures, render_latex, summary

    names = list(names)
    sets = [{lang: r.language(lang) for lang in r.languages} for r in (before, after)]
    metrics = [{lang: r.metrics for lang, r in s.items()} for s in sets]
    langs = sorted(set(sets[0]) & set(sets[1]))
    if not langs:
        shown = f"BEFORE: {' '.join(sorted(sets[0]))}; AFTER: {' '.join(sorted(sets[1]))}"
        raise UserError(f"AFTER: no language in common with BEFORE ({shown})")
    rows = side_rows(*metrics, langs, rule.min_effect)
    notes = [f"Languages only in {name}, left out: {' '.join(sorted(set(own) - set(langs)))}."
             for name, own in zip(names, sets) if set(own) - set(langs)]  # fmt: skip
    flagged = [line for lang in langs for line in differences(metrics[0][lang], metrics[1][lang], names, lang)]
    try:
        pairs = {lang: [judged(s[lang], lang, arg) for s, arg in zip(sets, ("BEFORE", "AFTER"))] for lang in langs}
        same = set(sets[0]) == set(sets[1])
        paired = winomt_paired(pairs, names, metrics[0][langs[0]].get("config") or {}, rule, mean=same)
    except Refused as why:
        paired = {"refused": str(why), "rows": [], "level": rule.level, "rule": rule.describe()}
    said, sources = summary(paired, names), _sources(sets, names)
    caption = CAPTION.format(before=names[0], after=names[1]) if figures else ""
    section = paired_markdown(paired, names, NOTE)
    markdown = render_markdown(rows, notes, names, sources, section, cautions=flagged, summary=said, figure=caption)
    markdown = markdown.replace("# Bias report comparison", "# WinoMT comparison", 1)
    done = Comparison(names, rows, notes, sources, flagged, paired, said, markdown)
    if out is not None:
        figure = comparison_figures(*({lang: m[lang] for lang in langs} for m in metrics), names) if figures else {}
        page = render_html(rows, notes, names, sources, paired_html(paired, names, NOTE), cautions=flagged,
                           summary=said, figure=(figure["svg"], caption) if figure else None)  # fmt: skip
        page = page.replace("<h1>Bias report comparison</h1>", "<h1>WinoMT comparison</h1>", 1)
        document = done.document() | {"benchmark": WINOMT}
        texts = (markdown, page, json.dumps(document, indent=2) + "\n", render_latex(rows, paired, names, layout))
        files = {name: text.encode("utf-8") for name, text in zip(COMPARISON_FILES, texts)}
        write_report(out, files | {path: figure[path.rsplit(".", 1)[1]] for path in FIGURE_FILES if figure})
    return done
