"""Render the report (metrics.json, report.md, report.html, details) in memory, then write it atomically."""

from __future__ import annotations

import base64
import html
import json
import math
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bias_eval.scoring import LanguageResult

NOT_PAIRED = "Not available: the sentences of this data set are not paired across genders."
GAP_DEFINITION = "bleu_gap = bleu_masculine - bleu_feminine (corpus sacreBLEU); > 0 favours masculine"


def clean_json(value: Any) -> Any:
    """``value`` with NaN/inf turned into ``None`` and tuples into lists, so that it is strict JSON."""
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, Mapping):
        return {str(k): clean_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_json(v) for v in value]
    return value


def metrics_document(
    results: Sequence[LanguageResult],
    macro: Mapping[str, Any],
    config: Mapping[str, Any],
) -> dict:
    """The content of ``metrics.json``."""
    languages = {r.lang: r.metrics for r in results}
    return clean_json({"languages": languages, "macro": dict(macro), "config": dict(config)})


# ---------------------------------------------------------------------------------------------------
# formatting helpers
# ---------------------------------------------------------------------------------------------------


def fmt(value: Any, digits: int = 2, signed: bool = False) -> str:
    """A number for a table; ``n/a`` for a missing value."""
    if value is None:
        return "n/a"
    if isinstance(value, bool | int):
        return str(value)
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def fmt_ci(ci: Sequence[float] | None) -> str:
    """A confidence interval as ``[lo, hi]``."""
    return "n/a" if ci is None else f"[{ci[0]:+.2f}, {ci[1]:+.2f}]"


TABLE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("n", "n"),
    ("BLEU", "bleu"),
    ("BLEU f", "bleu_feminine"),
    ("BLEU m", "bleu_masculine"),
    ("BLEU gap", "bleu_gap"),
    ("gap 95% CI", "bleu_gap_ci95"),
    ("chrF f", "chrf_feminine"),
    ("chrF m", "chrf_masculine"),
    ("chrF gap", "chrf_gap"),
    ("acc f [95% CI]", "accuracy_feminine"),
    ("acc m [95% CI]", "accuracy_masculine"),
    ("acc pair [95% CI]", "accuracy_pair"),
    ("coverage", "coverage"),
    ("fair BLEU", "fair_bleu"),
)


def fmt_share(value: float | None, ci: Sequence[float] | None = None) -> str:
    """A share (accuracy, coverage) with three decimals, followed by its CI when there is one."""
    if value is None:
        return "n/a"
    return f"{value:.3f}" + ("" if ci is None else f" [{ci[0]:.3f}, {ci[1]:.3f}]")


def _cell(key: str, row: Mapping[str, Any]) -> str:
    value = row.get(key)
    if key.endswith("_ci95"):
        return fmt_ci(value)
    if key.startswith(("accuracy", "coverage")):
        return fmt_share(value, row.get(f"{key}_ci95"))
    return fmt(value, 2, signed=key.endswith("_gap"))


def table_rows(metrics: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Header and rows (one per language, then macro) of the summary table."""
    columns = list(TABLE_COLUMNS)
    if metrics["macro"].get("accuracy_context") is not None:
        columns.append(("acc context", "accuracy_context"))
    header = ["lang", *(title for title, _ in columns)]
    rows = [[lang, *(_cell(key, m) for _, key in columns)] for lang, m in metrics["languages"].items()]
    rows.append(["macro", *(_cell(key, metrics["macro"]) for _, key in columns)])
    return header, rows


def _align(cells: Sequence[str], widths: Sequence[int]) -> str:
    return "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))


def summary_table(metrics: Mapping[str, Any]) -> str:
    """Plain-text summary table for the terminal."""
    header, rows = table_rows(metrics)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = [_align(r, widths) for r in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _md(text: Any) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def reproduce_lines(config: Mapping[str, Any]) -> list[str]:
    """The command that rebuilds the report with the settings used, then shell commands (and a Python recipe)
    that recompute the corpus figures with sacreBLEU alone."""
    lines = ["# the whole report, every setting as used:", config["command"]] if config.get("command") else []
    for lang, files in config.get("files", {}).items():
        for gender in ("feminine", "masculine"):
            ref, hyp = files.get(f"reference_{gender}"), files.get(f"hypothesis_{gender}")
            if ref and hyp:
                lines.append(f"sacrebleu {ref} -i {hyp} -m bleu chrf  # {lang} bleu_{gender}, chrf_{gender}")
    lines.append(
        "# any figure, from <lang>.details.jsonl: sacrebleu.corpus_bleu(hypothesis_<gender> values, "
        "[reference_<gender> values]); both genders together give bleu"
    )
    return lines


def definitions(config: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(name, definition) pairs stated in the report."""
    return list(config["definitions"].items())


# ---------------------------------------------------------------------------------------------------
# markdown
# ---------------------------------------------------------------------------------------------------


def render_markdown(results: Sequence[LanguageResult], metrics: Mapping[str, Any]) -> str:
    """``report.md``: summary table, definitions, configuration and the worst examples."""
    config = metrics["config"]
    out = ["# Gender bias report", ""]
    out += [f"- Data: {config['data']}", f"- Hypotheses: {config['hypotheses_description']}"]
    out += [
        f"- sacreBLEU BLEU: `{config['bleu_signature']}`",
        f"- sacreBLEU chrF: `{config['chrf_signature']}`",
    ]
    out += [f"- Bootstrap: {config['bootstrap_samples']} resamples, seed {config['seed']}", ""]
    out += ["Plots: see `report.html`. Per-sentence figures: `<lang>.details.jsonl`.", "", "## Results", ""]
    header, rows = table_rows(metrics)
    out.append("| " + " | ".join(header) + " |")
    out.append("|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|")
    out += ["| " + " | ".join(_md(c) for c in row) + " |" for row in rows]
    out += ["", "## Reproduce", "", *[f"    {line}" for line in reproduce_lines(config)]]
    out += ["", "## Definitions", ""]
    out += [f"- **{name}**: {_md(text)}" for name, text in definitions(config)]
    out += ["", "## Largest feminine/masculine differences", ""]
    for result in results:
        out += [f"### {result.lang}", ""]
        if not result.paired:
            out += [NOT_PAIRED, ""]
            continue
        for index in result.worst:
            d = result.details[index]
            out.append(
                f"**#{d['index']}** sentence BLEU feminine {fmt(d['sentence_bleu_feminine'])}, "
                f"masculine {fmt(d['sentence_bleu_masculine'])} "
                f"(difference {fmt(d['sentence_bleu_diff'], signed=True)})"
            )
            out.append("")
            out.append("| | feminine | masculine |")
            out.append("|---|---|---|")
            for label, key in (
                ("source", "source"),
                ("hypothesis", "hypothesis"),
                ("reference", "reference"),
            ):
                out.append(f"| {label} | {_md(d[f'{key}_feminine'])} | {_md(d[f'{key}_masculine'])} |")
            out.append(f"| gender correct | {_decision(d, 'feminine')} | {_decision(d, 'masculine')} |")
            out.append("")
    return "\n".join(out) + "\n"


def _decision(detail: Mapping[str, Any], gender: str) -> str:
    correct = detail.get(f"correct_{gender}")
    if correct is None:
        return "n/a"
    if correct:
        return "yes"
    return "no (" + ", ".join(detail.get(f"counterfactual_words_{gender}") or []) + ")"


# ---------------------------------------------------------------------------------------------------
# html
# ---------------------------------------------------------------------------------------------------

_CSS = """
body { font-family: sans-serif; margin: 2em; max-width: 80em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #bbb; padding: 0.3em 0.5em; vertical-align: top; }
th { background: #eee; }
td.num { text-align: right; white-space: nowrap; }
td.bad { background: #fde2e2; }
figure { display: inline-block; margin: 0.5em; }
.example td { max-width: 36em; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f6f6f6; padding: 0.5em; }
"""


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def render_html(
    results: Sequence[LanguageResult],
    metrics: Mapping[str, Any],
    figures: Mapping[str, bytes],
) -> str:
    """Self-contained ``report.html`` (figures embedded as base64 PNG) in well-formed, XML-parsable markup."""
    config = metrics["config"]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en" xmlns="http://www.w3.org/1999/xhtml">',
        "<head>",
        '<meta charset="utf-8" />',
        "<title>Gender bias report</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body>",
        "<h1>Gender bias report</h1>",
        "<ul>",
        f"<li>Data: {_e(config['data'])}</li>",
        f"<li>Hypotheses: {_e(config['hypotheses_description'])}</li>",
        f"<li>sacreBLEU BLEU: <code>{_e(config['bleu_signature'])}</code></li>",
        f"<li>sacreBLEU chrF: <code>{_e(config['chrf_signature'])}</code></li>",
        f"<li>Bootstrap: {_e(config['bootstrap_samples'])} resamples, seed {_e(config['seed'])}</li>",
        "</ul>",
        "<h2>Results</h2>",
    ]
    header, rows = table_rows(metrics)
    parts.append("<table><thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in header) + "</tr></thead><tbody>")
    for row in rows:
        cells = [f"<th>{_e(row[0])}</th>"] + [f'<td class="num">{_e(c)}</td>' for c in row[1:]]
        parts.append("<tr>" + "".join(cells) + "</tr>")
    parts.append("</tbody></table>")
    captions = {
        "bleu_by_gender": "Corpus BLEU of the feminine and masculine sentences",
        "gaps": "BLEU and chrF gap (masculine - feminine) with 95% bootstrap confidence interval",
        "accuracy": "Gender accuracy per gender and per sentence pair with 95% bootstrap confidence interval",
    }
    parts.append("<div>")
    for name, png in figures.items():
        data = base64.b64encode(png).decode("ascii")
        caption = captions.get(name, name)
        parts.append(
            f'<figure><img src="data:image/png;base64,{data}" alt="{_e(caption)}" />'
            f"<figcaption>{_e(caption)}</figcaption></figure>"
        )
    parts.append("</div>")
    parts.append("<h2>Reproduce</h2>")
    parts.append("<pre>" + _e("\n".join(reproduce_lines(config))) + "</pre>")
    parts.append("<h2>Definitions</h2><dl>")
    for name, text in definitions(config):
        parts.append(f"<dt><b>{_e(name)}</b></dt><dd>{_e(text)}</dd>")
    parts.append("</dl>")
    parts.append("<h2>Largest feminine/masculine differences</h2>")
    for result in results:
        parts.append(f"<h3>{_e(result.lang)}</h3>")
        if not result.paired:
            parts.append(f"<p>{NOT_PAIRED}</p>")
            continue
        parts.append(
            '<table class="example"><thead><tr><th>#</th><th>sentence BLEU f / m</th>'
            "<th></th><th>feminine</th><th>masculine</th></tr></thead><tbody>"
        )
        for index in result.worst:
            d = result.details[index]
            scores = f"{fmt(d['sentence_bleu_feminine'])} / {fmt(d['sentence_bleu_masculine'])}"
            for k, (label, key) in enumerate(
                (
                    ("source", "source"),
                    ("hypothesis", "hypothesis"),
                    ("reference", "reference"),
                    ("gender correct", None),
                )
            ):
                head = (
                    f'<td rowspan="4">{_e(d["index"])}</td><td rowspan="4" class="num">{_e(scores)}</td>'
                    if k == 0
                    else ""
                )
                if key is None:
                    cells = []
                    for g in ("feminine", "masculine"):
                        cls = ' class="bad"' if d.get(f"correct_{g}") is False else ""
                        cells.append(f"<td{cls}>{_e(_decision(d, g))}</td>")
                    body = "".join(cells)
                else:
                    body = f"<td>{_e(d[f'{key}_feminine'])}</td><td>{_e(d[f'{key}_masculine'])}</td>"
                parts.append(f"<tr>{head}<th>{_e(label)}</th>{body}</tr>")
        parts.append("</tbody></table>")
    parts += ["</body>", "</html>"]
    return "\n".join(parts) + "\n"


# ---------------------------------------------------------------------------------------------------
# files
# ---------------------------------------------------------------------------------------------------


def jsonl(rows: Sequence[Mapping[str, Any]]) -> str:
    """One strict-JSON object per line."""
    return "".join(json.dumps(clean_json(row), ensure_ascii=False) + "\n" for row in rows)


def report_files(
    results: Sequence[LanguageResult], metrics: Mapping[str, Any], figures: Mapping[str, bytes]
) -> dict[str, bytes]:
    """Every output file of the report, by name relative to OUTDIR."""
    files = {
        "metrics.json": (json.dumps(metrics, indent=2, ensure_ascii=False) + "\n").encode("utf-8"),
        "report.md": render_markdown(results, metrics).encode("utf-8"),
        "report.html": render_html(results, metrics, figures).encode("utf-8"),
    }
    for result in results:
        files[f"{result.lang}.details.jsonl"] = jsonl(result.details).encode("utf-8")
        if result.context_details is not None:
            files[f"{result.lang}.context.details.jsonl"] = jsonl(result.context_details).encode("utf-8")
    return files


def write_report(outdir: Path, files: Mapping[str, bytes]) -> None:
    """Write all ``files`` into ``outdir`` at once: into a temporary sibling folder, then moved in place.

    A new OUTDIR appears by a single rename; in an existing OUTDIR (e.g. holding the hypothesis cache)
    each file is replaced atomically, after all of them have been written successfully.
    """
    outdir = outdir.absolute()
    outdir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{outdir.name}.", suffix=".tmp", dir=outdir.parent))
    try:
        for name, data in files.items():
            (staging / name).write_bytes(data)
        if not outdir.exists():
            os.rename(staging, outdir)
            return
        for name in files:
            os.replace(staging / name, outdir / name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
