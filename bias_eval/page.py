"""``report.html`` and the full set of report files: the page a reader opens first.

Top to bottom: the title (model and data), a warning box when the figures say little, the one-sentence
takeaway, the compact main table, the gap chart and the other figures (each embedded as SVG, with links to its
SVG, PDF and PNG files in ``figures/``), then folded: every figure, the method, the definitions and the
largest feminine/masculine differences. The markup is well-formed XHTML (it parses as XML).
"""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Mapping, Sequence
from typing import Any

from bias_eval.headline import (
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
from bias_eval.latex import Layout
from bias_eval.references import BIBTEX, FILE, bibtex
from bias_eval.report import (
    NOT_PAIRED,
    decision,
    definitions,
    fmt,
    jsonl,
    render_latex,
    render_markdown,
    reproduce_lines,
    table_rows,
)
from bias_eval.scoring import LanguageResult

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

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 1.5em auto;
  max-width: 76em; padding: 0 1.5em; color: #222; line-height: 1.45; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
.meta { color: #555; margin-top: 0; font-size: 0.92em; }
.takeaway { font-size: 1.15em; border-left: 5px solid #0072B2; background: #f2f7fb; padding: 0.6em 0.9em; }
.warning { border: 2px solid #D55E00; border-left-width: 8px; background: #fff1e6; padding: 0.5em 0.9em;
  margin: 1em 0; }
.warning strong { color: #A33F00; }
.warning ul { margin: 0.3em 0; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.92em; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; vertical-align: top; }
table.main { font-size: 0.86em; }
table.main th, table.main td { padding: 0.3em 0.45em; }
thead th { background: #f0f0f0; text-align: center; }
td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
td.sig { font-weight: bold; }
tbody th { white-space: nowrap; text-align: left; }
tr.macro th, tr.macro td { border-top: 2px solid #888; }
td.bad { background: #fde8d9; }
.note { font-size: 0.88em; color: #555; }
figure { margin: 1em 0; }
figure img { max-width: 100%; height: auto; }
figcaption { font-size: 0.9em; color: #444; max-width: 50em; }
.figrow { display: flex; flex-wrap: wrap; gap: 1.5em; align-items: flex-start; }
.figrow figure { flex: 1 1 26em; }
details { margin: 0.8em 0; }
.scroll { overflow-x: auto; }
summary { cursor: pointer; font-weight: 600; }
.example td { max-width: 30em; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f6f6f6; padding: 0.5em; }
"""


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def figure_path(name: str, fmt: str) -> str:
    """Where figure ``name`` in format ``fmt`` is written, relative to the report folder."""
    return f"figures/{name}.{fmt}"


def figure_html(name: str, rendered: Mapping[str, bytes], caption: str | None = None) -> str:
    """A figure embedded as SVG with its caption (``None``: the report's own, :data:`CAPTIONS`) and links to its
    files."""
    caption = caption or CAPTIONS.get(name, name)
    data = base64.b64encode(rendered["svg"]).decode("ascii")
    links = " \u00b7 ".join(f'<a href="{figure_path(name, f)}">{f.upper()}</a>' for f in rendered)
    return (
        f'<figure id="fig-{name}"><img src="data:image/svg+xml;base64,{data}" alt="{_e(caption)}" />'
        f"<figcaption>{_e(caption)} Files: {links}.</figcaption></figure>"
    )


def _box(css: str, heading: str, lines: Sequence[str], note: str) -> list[str]:
    """An alert box: a bold heading, one item per line, then ``note``; nothing without lines."""
    if not lines:
        return []
    items = "".join(f"<li>{_e(line)}</li>" for line in lines)
    return [f'<div class="{css}" role="alert"><strong>{_e(heading)}</strong><ul>{items}</ul>{_e(note)}</div>']


def _warning_box(lines: Sequence[str]) -> list[str]:
    note = (
        f"Flagged at {THRESHOLDS}: a translation without the other gender's words counts as correct, so empty, "
        'wrong-language or garbage output scores near 100% accuracy (see "warning" in the Definitions).'
    )
    return _box("warning", WARNING_HEADING, lines, note)


def _over_correction_box(lines: Sequence[str]) -> list[str]:
    return _box("warning over-correction", OVER_CORRECTION_HEADING, lines, OVER_CORRECTION_NOTE)


def _main_table(metrics: Mapping[str, Any]) -> list[str]:
    head = "".join(f"<th>{_e(h)}</th>" for h in main_header(metrics))
    parts = [f'<div class="scroll"><table class="main"><thead><tr>{head}</tr></thead><tbody>']
    for cells, sig in main_rows(metrics):
        row_class = ' class="macro"' if cells[0].startswith("macro") else ""
        tds = [f'<td class="num{" sig" if sig and i == 3 else ""}">{_e(c)}</td>' for i, c in enumerate(cells[1:], 1)]
        parts.append(f"<tr{row_class}><th>{_e(cells[0])}</th>" + "".join(tds) + "</tr>")
    parts.append("</tbody></table></div>")
    parts.append(f'<p class="note">{_e(MAIN_NOTE)}</p>')
    return parts


def _full_table(metrics: Mapping[str, Any]) -> list[str]:
    header, rows = table_rows(metrics)
    parts = [
        "<details><summary>Every figure per language (n, BLEU, chrF, accuracies and coverage with their 95% "
        "intervals, fair BLEU, strict accuracies, accuracy gaps, the M:F prediction ratio)</summary>",
        '<div class="scroll"><table><thead><tr>',
        "".join(f"<th>{_e(h)}</th>" for h in header) + "</tr></thead><tbody>",
    ]
    for row in rows:
        cells = [f"<th>{_e(row[0])}</th>"] + [f'<td class="num">{_e(c)}</td>' for c in row[1:]]
        parts.append("<tr>" + "".join(cells) + "</tr>")
    parts += ["</tbody></table></div></details>"]
    return parts


def _examples(result: LanguageResult) -> list[str]:
    if not result.paired:
        return [f"<h3>{_e(result.lang)}</h3><p>{NOT_PAIRED}</p>"]
    parts = [
        f"<details><summary>{_e(result.lang)}: the {len(result.worst)} sentence pairs whose sentence BLEU "
        "differs most between the genders</summary>",
        '<table class="example"><thead><tr><th>#</th><th>sentence BLEU feminine / masculine</th>'
        "<th></th><th>feminine</th><th>masculine</th></tr></thead><tbody>",
    ]
    rows = (("source", "source"), ("hypothesis", "hypothesis"), ("reference", "reference"), ("gender correct", None))
    for index in result.worst:
        d = result.details[index]
        scores = f"{fmt(d['sentence_bleu_feminine'])} / {fmt(d['sentence_bleu_masculine'])}"
        for k, (label, key) in enumerate(rows):
            first = f'<td rowspan="4">{_e(d["index"])}</td><td rowspan="4" class="num">{_e(scores)}</td>'
            head = first if k == 0 else ""
            if key is None:
                bad = {g: ' class="bad"' if d.get(f"correct_{g}") is False else "" for g in ("feminine", "masculine")}
                body = "".join(f"<td{bad[g]}>{_e(decision(d, g))}</td>" for g in bad)
            else:
                body = f"<td>{_e(d[f'{key}_feminine'])}</td><td>{_e(d[f'{key}_masculine'])}</td>"
            parts.append(f"<tr>{head}<th>{_e(label)}</th>{body}</tr>")
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
        f"<title>{_e(heading)}</title>",
        f"<style>{CSS}</style>",
        "</head>",
        "<body>",
        f"<h1>{_e(heading)}</h1>",
        f'<p class="meta">Data: {_e(config["data"])}. Hypotheses: {_e(config["hypotheses_description"])}.</p>',
        *_warning_box(warnings(metrics)),
        *_over_correction_box(over_correction_lines(metrics)),
        f'<p class="takeaway">{_e(takeaway(metrics))}</p>',
        "<h2>Results</h2>",
        *_main_table(metrics),
        *[figure_html(name, figures[name]) for name in figures if name == "gap"],
        '<div class="figrow">',
        *[figure_html(name, rendered) for name, rendered in figures.items() if name != "gap"],
        "</div>",
        *_full_table(metrics),
        "<details><summary>Method: hypotheses, scores, bootstrap, how to reproduce</summary><ul>",
        f"<li>sacreBLEU BLEU: <code>{_e(config['bleu_signature'])}</code></li>",
        f"<li>sacreBLEU chrF: <code>{_e(config['chrf_signature'])}</code></li>",
        f"<li>Bootstrap: {_e(config['bootstrap_samples'])} resamples, seed {_e(config['seed'])}</li>",
        "<li>Per-sentence figures: <code>&lt;lang&gt;.details.jsonl</code>; all figures: "
        "<code>metrics.json</code></li>",
        "</ul><pre>" + _e("\n".join(reproduce_lines(config))) + "</pre></details>",
        "<details><summary>Definitions</summary><dl>",
        *[f"<dt><b>{_e(name)}</b></dt><dd>{_e(text)}</dd>" for name, text in definitions(config)],
        "</dl></details>",
        "<h2>Largest feminine/masculine differences</h2>",
    ]
    for result in results:
        parts += _examples(result)
    parts += [*bibtex_html(metrics["config"].get("dataset_kind", "")), "</body>", "</html>"]
    return "\n".join(parts) + "\n"


def bibtex_html(benchmark: str) -> list[str]:
    """The benchmark's BibTeX on the page, as ``references.bib`` holds it (nothing for a table of one's own)."""
    if benchmark not in BIBTEX:
        return []
    return ["<h2>Cite the benchmark</h2>", f"<pre>{_e(bibtex(benchmark).decode('utf-8'))}</pre>"]


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
