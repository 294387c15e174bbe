"""A WinoMT report's page (``report.html``: title, takeaway, the figures beside published ones, the main table, the
figures, every profession, method, definitions, the benchmark's BibTeX and the command that rebuilds it; well-formed
XHTML) and its LaTeX table (``report.tex``: one narrow booktabs table that fits a column of a two-column paper)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bias_eval.core import latex
from bias_eval.core.page import CSS, bibtex_html, escape, figure_html
from bias_eval.core.plots import FORMATS
from bias_eval.winomt.anchors import FIGURES, PUBLISHED, published_line, whole
from bias_eval.winomt.figures import fmt_figure
from bias_eval.winomt.plots import CAPTIONS

Figures = Mapping[str, Mapping[str, bytes]]


#: the figures too tall to share a row: each on its own row, the page's width, below the others
TALL = ("professions",)


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A compact table of figures, scrolled sideways where the window is narrower still."""
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = ["<tr><th>" + escape(r[0]) + "</th>" + "".join(f'<td class="num">{escape(c)}</td>' for c in r[1:]) + "</tr>"
            for r in rows]  # fmt: skip
    return [
        f'<div class="scroll"><table class="compact"><thead><tr>{head}</tr></thead><tbody>',
        *body,
        "</tbody></table></div>",
    ]


def render_html(metrics: Mapping[str, Any], figures: Figures, parts: Mapping[str, Any]) -> str:
    """``report.html``; ``parts`` holds the report's title, takeaway, method and its tables as header and rows
    (``main``, ``professions``)."""
    config = metrics["config"]
    drawn = f", figures/ ({', '.join(FORMATS)})" if figures else ""  # a report made without figures has none
    out = [
        "<!DOCTYPE html>",
        '<html lang="en" xmlns="http://www.w3.org/1999/xhtml">',
        "<head>",
        '<meta charset="utf-8" />',
        '<meta name="viewport" content="width=device-width, initial-scale=1" />',
        f"<title>{escape(parts['title'])}</title>",
        f"<style>{CSS}</style>",
        "</head>",
        "<body>",
        f"<h1>{escape(parts['title'])}</h1>",
        f'<p class="meta">Data: {escape(config["data"])}. Translations: {escape(config["description"])}.</p>',
        f'<p class="takeaway">{escape(parts["takeaway"])}</p>',
        f'<p class="note">Beside published figures: {escape(published_line(metrics))}</p>',
        "<h2>Results</h2>",
        *_table(*parts["main"]),
        '<div class="figrow">',
        *[figure_html(name, figures[name], CAPTIONS[name]) for name in figures if name not in TALL],
        "</div>",
        *[figure_html(name, figures[name], CAPTIONS[name]) for name in figures if name in TALL],
        "<details><summary>Every profession: accuracy with its Wilson 95% interval, in all and by gold gender, and "
        "the genders predicted</summary>",
        *_table(*parts["professions"]),
        "</details>",
        "<details><summary>Method, definitions and how to reproduce</summary>",
        f"<p>{escape(parts['method'])}</p><dl>",
        *[f"<dt><b>{escape(name)}</b></dt><dd>{escape(text)}</dd>" for name, text in config["definitions"].items()],
        f"</dl><p>Files: metrics.json, report.md, report.tex, professions.tsv, "
        f"{escape(metrics['language'])}.details.jsonl{drawn}.</p>",
        f"<pre>{escape(config['command'])}</pre></details>",
        *bibtex_html("winomt"),
        "</body>",
        "</html>",
    ]
    return "\n".join(out) + "\n"


#: the rows of ``report.tex``: the key in ``metrics.json``, the row's name, whether the figure is a signed difference
LATEX_ROWS = (
    ("accuracy", "accuracy", False),
    ("f1_male", "F1 male", False),
    ("f1_female", "F1 female", False),
    ("delta_g", "ΔG", True),
    ("accuracy_pro", "accuracy pro", False),
    ("accuracy_anti", "accuracy anti", False),
    ("delta_s", "ΔS", True),
)


def render_latex(metrics: Mapping[str, Any], title: str, layout: latex.Layout = latex.Layout()) -> str:
    """``report.tex``: one row per figure (:data:`LATEX_ROWS`) with its 95% interval and, where the whole benchmark
    was scored, the published figure; four columns, not scaled, so that it fits ``\\linewidth`` of a two-column
    paper."""
    published = dict(zip(FIGURES, PUBLISHED.get(metrics["language"], ())))
    rows = []
    for key, name, signed in LATEX_ROWS:
        ci = metrics.get(f"{key}_ci95")
        ends = "" if ci is None else f"{fmt_figure(ci[0], signed)}, {fmt_figure(ci[1], signed)}"
        paper = f"{published[key]:.1f}" if whole(metrics["config"]) and key in published else ""
        rows.append([latex.escape(c) for c in (name, fmt_figure(metrics.get(key), signed), ends, paper)])
    caption = (
        f"{title}: {metrics['n']:,} translations. Accuracies and F1 in percent, ΔG and ΔS in points; 95% intervals "
        "Wilson's for accuracies, bootstrap percentile for ΔG and ΔS; paper: Google Translate in Stanovsky et al. "
        "(2019), Table 2."
    )
    header = ["", "value", "95% CI", "paper"]
    label = layout.label_or("tab:winomt")
    return "\n".join(latex.table(header, rows, caption=caption, label=label, fit=False, wide=layout.wide)) + "\n"
