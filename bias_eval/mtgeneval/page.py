"""``report.html`` and the full set of report files: the page a reader opens first.

Top to bottom: the title (model and data), a warning box when the figures say little, the one-sentence
takeaway, the compact main table, the gap chart and the other figures (each embedded as SVG, with links to its
SVG, PDF and PNG files in ``figures/``), then folded: every figure, the method, the definitions and the
largest feminine/masculine differences. The markup is well-formed XHTML (it parses as XML).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from bias_eval.core.files import jsonl
from bias_eval.core.latex import Layout
from bias_eval.core.page import CSS, bibtex_html, escape, figure_html, figure_path
from bias_eval.core.references import BIBTEX, FILE, bibtex
from bias_eval.core.units import fmt
from bias_eval.mtgeneval.headline import (
    MAIN_NOTE,
    OVER_CORRECTION_HEADING,
    OVER_CORRECTION_NOTE,
    THRESHOLDS,
    WARNING_HEADING,
    main_header,
    main_rows,
    over_correction_lines,
    takeaway,
    title,
    warnings,
)
from bias_eval.mtgeneval.report import (
    NOT_PAIRED,
    decision,
    definitions,
    render_latex,
    render_markdown,
    reproduce_lines,
    table_rows,
)
from bias_eval.mtgeneval.scoring import LanguageResult

Figures = Mapping[str, Mapping[str, bytes]]  # name -> format ("svg", "pdf", "png") -> bytes

CAPTIONS = {
    "gap": "The gap, masculine \u2212 feminine, in corpus BLEU and chrF per language with its 95% bootstrap "
    "confidence interval. Above 0 the masculine sentences score higher. A filled point is significant (its "
    "interval excludes 0), a hollow one is not.",
    "bleu_by_gender": "Corpus BLEU of the feminine and the masculine sentences (the axis does not start at 0).",
    "accuracy": "MT-GenEval gender accuracy per gender and per sentence pair, and coverage (the share of "
    "hypotheses with a gendered word), in percent, with 95% Wilson score intervals. Low coverage means the "
    "accuracies say little.",
}


def _box(css: str, heading: str, lines: Sequence[str], note: str) -> list[str]:
    """An alert box: a bold heading, one item per line, then ``note``; nothing without lines."""
    if not lines:
        return []
    items = "".join(f"<li>{escape(line)}</li>" for line in lines)
    return [f'<div class="{css}" role="alert"><strong>{escape(heading)}</strong><ul>{items}</ul>{escape(note)}</div>']


def _warning_box(lines: Sequence[str]) -> list[str]:
    note = (
        f"Flagged at {THRESHOLDS}: a translation without the other gender's words counts as correct, so empty, "
        'wrong-language or garbage output scores near 100% accuracy (see "warning" in the Definitions).'
    )
    return _box("warning", WARNING_HEADING, lines, note)


def _over_correction_box(lines: Sequence[str]) -> list[str]:
    return _box("warning over-correction", OVER_CORRECTION_HEADING, lines, OVER_CORRECTION_NOTE)


def _main_table(metrics: Mapping[str, Any]) -> list[str]:
    head = "".join(f"<th>{escape(h)}</th>" for h in main_header(metrics))
    parts = [f'<div class="scroll"><table class="compact"><thead><tr>{head}</tr></thead><tbody>']
    for cells, sig in main_rows(metrics):
        row_class = ' class="macro"' if cells[0].startswith("macro") else ""
        tds = [
            f'<td class="num{" sig" if sig and i == 3 else ""}">{escape(c)}</td>' for i, c in enumerate(cells[1:], 1)
        ]
        parts.append(f"<tr{row_class}><th>{escape(cells[0])}</th>" + "".join(tds) + "</tr>")
    parts.append("</tbody></table></div>")
    parts.append(f'<p class="note">{escape(MAIN_NOTE)}</p>')
    return parts


def _full_table(metrics: Mapping[str, Any]) -> list[str]:
    header, rows = table_rows(metrics)
    parts = [
        "<details><summary>Every figure per language (n, BLEU, chrF, accuracies and coverage with their 95% "
        "intervals, fair BLEU, strict accuracies, accuracy gaps, the M:F prediction ratio)</summary>",
        '<div class="scroll"><table><thead><tr>',
        "".join(f"<th>{escape(h)}</th>" for h in header) + "</tr></thead><tbody>",
    ]
    for row in rows:
        cells = [f"<th>{escape(row[0])}</th>"] + [f'<td class="num">{escape(c)}</td>' for c in row[1:]]
        parts.append("<tr>" + "".join(cells) + "</tr>")
    parts += ["</tbody></table></div></details>"]
    return parts


def _examples(result: LanguageResult) -> list[str]:
    if not result.paired:
        return [f"<h3>{escape(result.lang)}</h3><p>{NOT_PAIRED}</p>"]
    parts = [
        f"<details><summary>{escape(result.lang)}: the {len(result.worst)} sentence pairs whose sentence BLEU "
        "differs most between the genders</summary>",
        '<table class="example"><thead><tr><th>#</th><th>sentence BLEU feminine / masculine</th>'
        "<th></th><th>feminine</th><th>masculine</th></tr></thead><tbody>",
    ]
    rows = (("source", "source"), ("hypothesis", "hypothesis"), ("reference", "reference"), ("gender correct", None))
    for index in result.worst:
        d = result.details[index]
        scores = f"{fmt(d['sentence_bleu_feminine'])} / {fmt(d['sentence_bleu_masculine'])}"
        for k, (label, key) in enumerate(rows):
            first = f'<td rowspan="4">{escape(d["index"])}</td><td rowspan="4" class="num">{escape(scores)}</td>'
            head = first if k == 0 else ""
            if key is None:
                bad = {g: ' class="bad"' if d.get(f"correct_{g}") is False else "" for g in ("feminine", "masculine")}
                body = "".join(f"<td{bad[g]}>{escape(decision(d, g))}</td>" for g in bad)
            else:
                body = f"<td>{escape(d[f'{key}_feminine'])}</td><td>{escape(d[f'{key}_masculine'])}</td>"
            parts.append(f"<tr>{head}<th>{escape(label)}</th>{body}</tr>")
    parts.append("</tbody></table></details>")
    return parts


def render_html(results: Sequence[LanguageResult], metrics: Mapping[str, Any], figures: Figures) -> str:
    """Self-contained ``report.html`` (figures embedded as SVG, linked to their files) in well-formed markup."""
    config = metrics["config"]
    heading = title(config)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en" xmlns="http://www.w3.org/1999/xhtml">',
        "<head>",
        '<meta charset="utf-8" />',
        '<meta name="viewport" content="width=device-width, initial-scale=1" />',
        f"<title>{escape(heading)}</title>",
        f"<style>{CSS}</style>",
        "</head>",
        "<body>",
        f"<h1>{escape(heading)}</h1>",
        f'<p class="meta">Data: {escape(config["data"])}. Hypotheses: {escape(config["hypotheses_description"])}.</p>',
        *_warning_box(warnings(metrics)),
        *_over_correction_box(over_correction_lines(metrics)),
        f'<p class="takeaway">{escape(takeaway(metrics))}</p>',
        "<h2>Results</h2>",
        *_main_table(metrics),
        *[figure_html(name, figures[name], CAPTIONS[name]) for name in figures if name == "gap"],
        '<div class="figrow">',
        *[figure_html(name, rendered, CAPTIONS[name]) for name, rendered in figures.items() if name != "gap"],
        "</div>",
        *_full_table(metrics),
        "<details><summary>Method: hypotheses, scores, bootstrap, how to reproduce</summary><ul>",
        f"<li>sacreBLEU BLEU: <code>{escape(config['bleu_signature'])}</code></li>",
        f"<li>sacreBLEU chrF: <code>{escape(config['chrf_signature'])}</code></li>",
        f"<li>Bootstrap: {escape(config['bootstrap_samples'])} resamples, seed {escape(config['seed'])}</li>",
        "<li>Per-sentence figures: <code>&lt;lang&gt;.details.jsonl</code>; all figures: "
        "<code>metrics.json</code></li>",
        "</ul><pre>" + escape("\n".join(reproduce_lines(config))) + "</pre></details>",
        "<details><summary>Definitions</summary><dl>",
        *[f"<dt><b>{escape(name)}</b></dt><dd>{escape(text)}</dd>" for name, text in definitions(config)],
        "</dl></details>",
        "<h2>Largest feminine/masculine differences</h2>",
    ]
    for result in results:
        parts += _examples(result)
    parts += [*bibtex_html(metrics["config"].get("dataset_kind", "")), "</body>", "</html>"]
    return "\n".join(parts) + "\n"


def report_files(
    results: Sequence[LanguageResult], metrics: Mapping[str, Any], figures: Figures, layout: Layout = Layout()
) -> dict[str, bytes]:
    """Every output file of the report, by name relative to OUTDIR (figures under ``figures/``; ``report.tex`` laid
    out by ``layout``)."""
    files = {
        "metrics.json": (json.dumps(metrics, indent=2, ensure_ascii=False) + "\n").encode("utf-8"),
        "report.md": render_markdown(results, metrics, figures).encode("utf-8"),
        "report.html": render_html(results, metrics, figures).encode("utf-8"),
        "report.tex": render_latex(metrics, layout).encode("utf-8"),
    }
    if metrics["config"].get("dataset_kind") in BIBTEX:  # MT-GenEval's paper; none for a table of one's own
        files[FILE] = bibtex(metrics["config"]["dataset_kind"])
    for name, rendered in figures.items():
        for fmt_name, data in rendered.items():
            files[figure_path(name, fmt_name)] = data
    for result in results:
        files[f"{result.lang}.details.jsonl"] = jsonl(result.details).encode("utf-8")
        if result.context_details is not None:
            files[f"{result.lang}.context.details.jsonl"] = jsonl(result.context_details).encode("utf-8")
    return files
