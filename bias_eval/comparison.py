"""One call compares two reports: :func:`compare_reports` puts their figures side by side, runs the paired tests
of their changes on the same sentences (from each report folder's details) and, given ``out``, writes
``comparison.md``, ``comparison.html`` and ``comparison.json``."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bias_eval.comparability import cautions
from bias_eval.compare import Row, compare, describe_sources, render_html, render_markdown
from bias_eval.compare_paired import paired_html, paired_markdown, paired_tests
from bias_eval.report import write_report

#: the files :func:`compare_reports` writes
COMPARISON_FILES = ("comparison.md", "comparison.html", "comparison.json")


@dataclass(frozen=True)
class Comparison:
    """Two reports compared: the table's rows and notes, each report's source line, the cautions (each report's
    warnings, different decoding or data), the paired tests (``refused`` says why none ran) and the markdown."""

    names: list[str]
    rows: list[Row]
    notes: list[str]
    sources: list[str]
    cautions: list[str]
    paired: dict[str, Any]
    markdown: str

    def document(self) -> dict[str, Any]:
        """The content of ``comparison.json``."""
        return {"names": self.names, "sources": self.sources, "paired": self.paired}


def compare_reports(
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    folders: Sequence[str | Path],
    names: Sequence[str],
    out: Path | None = None,
) -> Comparison:
    """Compare the reports ``before`` and ``after`` (their ``metrics.json``, from the report folders ``folders``,
    whose details the paired tests read) under ``names``; with ``out``, write the comparison's files there."""
    names = list(names)
    rows, notes = compare(before, after, names)
    sources = describe_sources([str(f) for f in folders], [before, after], names)
    common = sorted(set(before["languages"]) & set(after["languages"]))
    paired = paired_tests([Path(f) for f in folders], [before, after], names, common)
    flagged = cautions(before, after, names)
    markdown = render_markdown(rows, notes, names, sources, paired_markdown(paired, names), cautions=flagged)
    done = Comparison(names, rows, notes, sources, flagged, paired, markdown)
    if out is not None:
        page = render_html(rows, notes, names, sources, paired_html(paired, names), cautions=flagged)
        texts = (markdown, page, json.dumps(done.document(), indent=2) + "\n")
        write_report(out, {name: text.encode("utf-8") for name, text in zip(COMPARISON_FILES, texts)})
    return done
