"""Two MT-GenEval reports compared: :func:`compare_mtgeneval` puts their figures side by side, runs the paired tests
of their changes on the same sentences (from each report's per-sentence details), says in a first paragraph what changed
beyond noise and, given ``out``, writes ``comparison.md``, ``comparison.html``, ``comparison.json``,
``comparison.tex`` and the figure of both systems on shared axes (``figures/comparison.svg``, ``.pdf``, ``.png``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bias_eval.compare.comparability import cautions
from bias_eval.compare.mtgeneval_paper import render_latex, summary
from bias_eval.compare.mtgeneval_tests import paired_html, paired_markdown, paired_tests
from bias_eval.compare.rows import Row, compare, describe_sources, render_html, render_markdown
from bias_eval.core.decision import Rule
from bias_eval.core.files import write_report
from bias_eval.core.latex import Layout
from bias_eval.core.report import Report

#: the files :func:`compare_reports` writes, the figure's aside
COMPARISON_FILES = ("comparison.md", "comparison.html", "comparison.json", "comparison.tex")
FIGURE_FILES = tuple(f"figures/comparison.{fmt}" for fmt in ("svg", "pdf", "png"))


@dataclass(frozen=True)
class Comparison:
    """Two reports compared: the table's rows and notes, each report's source line, the cautions (each report's
    warnings, different decoding or data), the paired tests (``refused`` says why none ran), the first paragraph
    (``summary``: what changed beyond noise) and the markdown."""

    names: list[str]
    rows: list[Row]
    notes: list[str]
    sources: list[str]
    cautions: list[str]
    paired: dict[str, Any]
    summary: str
    markdown: str

    def document(self) -> dict[str, Any]:
        """The content of ``comparison.json``."""
        return {"names": self.names, "sources": self.sources, "summary": self.summary, "paired": self.paired}


def compare_mtgeneval(
    before: Report,
    after: Report,
    names: Sequence[str],
    out: Path | None = None,
    rule: Rule = Rule(),
    layout: Layout = Layout(),
    figures: bool = True,
) -> Comparison:
    """Compare the reports ``before`` and ``after`` (their metrics, and the per-sentence details the paired tests
    read) under ``names``, each paired change decided by ``rule`` (:mod:`bias_eval.core.decision`); with ``out``,
    write the comparison's files there (the LaTeX table laid out by ``layout``; the figure unless ``figures`` is
    false)."""
    from bias_eval.compare.plot import (  # matplotlib: not for every importer's start
        CAPTION,
        comparison_figures,
    )

    names = list(names)
    reports, metrics = [before, after], [before.metrics, after.metrics]
    rows, notes = compare(*metrics, names, rule.min_effect)
    sources = describe_sources(reports, names)
    common = sorted(set(metrics[0]["languages"]) & set(metrics[1]["languages"]))
    paired = paired_tests(reports, names, common, rule)
    flagged = cautions(*metrics, names)
    said = summary(paired, names)
    caption = CAPTION.format(before=names[0], after=names[1]) if figures else ""
    markdown = render_markdown(
        rows, notes, names, sources, paired_markdown(paired, names), cautions=flagged, summary=said, figure=caption
    )
    done = Comparison(names, rows, notes, sources, flagged, paired, said, markdown)
    if out is not None:
        figure = comparison_figures(*metrics, names) if figures else {}
        page = render_html(rows, notes, names, sources, paired_html(paired, names), cautions=flagged, summary=said,
                           figure=(figure["svg"], caption) if figure else None)  # fmt: skip
        tex = render_latex(rows, paired, names, layout)
        texts = (markdown, page, json.dumps(done.document(), indent=2) + "\n", tex)
        files = {name: text.encode("utf-8") for name, text in zip(COMPARISON_FILES, texts)}
        write_report(out, files | {path: figure[path.rsplit(".", 1)[1]] for path in FIGURE_FILES if figure})
    return done
