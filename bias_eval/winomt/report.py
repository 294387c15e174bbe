"""One call makes a WinoMT report: :func:`make_winomt_report` judges the translations, computes the figures and
writes ``metrics.json``, ``report.md`` and ``report.html`` (with the per-profession table), ``report.tex``,
``references.bib``, ``professions.tsv``, ``<lang>.details.jsonl`` and the figures into a folder, all at once."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bias_eval.core.files import clean_json, jsonl, write_report
from bias_eval.core.latex import Layout
from bias_eval.core.markdown import escape, table
from bias_eval.core.page import figure_path
from bias_eval.core.references import FILE, bibtex
from bias_eval.core.report import WINOMT, Report
from bias_eval.core.settings import ReportSettings
from bias_eval.core.textio import NORMAL_FORM
from bias_eval.winomt.anchors import anchor, published_line, whole
from bias_eval.winomt.data import Translations, WinoMT
from bias_eval.winomt.figures import CELLS, DEFINITIONS, cells, figures, fmt_figure, fmt_interval
from bias_eval.winomt.gender import PREDICTIONS
from bias_eval.winomt.languages import check_language
from bias_eval.winomt.page import render_html, render_latex
from bias_eval.winomt.score import Scored, score_translations

METHOD = (
    "WinoMT (Stanovsky et al., ACL 2019): each source aligned with its translation by fast_align's model (-d -o -v) "
    "trained on the lines scored, the profession's words (and the article before it) followed to the translation, "
    "their gender read by rules for the target language (bias_eval.winomt.gender)"
)


def scored_what(metrics: Mapping[str, Any]) -> str:
    """What was scored, in words: the benchmark's translations, a stratified subset of them, or part of them."""
    sample, n = metrics["config"].get("sample"), metrics["n"]
    if sample:
        return (
            f"{n:,} translations of a stratified subset of the benchmark ({sample['pro']:,} pro-stereotypical, "
            f"{sample['anti']:,} anti-stereotypical, {sample['neutral']:,} neutral sentences, drawn with seed "
            f"{sample['seed']})"
        )
    config = metrics["config"]
    if whole(config):
        return f"{n:,} translations"
    return f"{n:,} translations of part of the benchmark ({config['untranslated']:,} of its sentences untranslated)"


def title(metrics: Mapping[str, Any]) -> str:
    """The report's title: the benchmark, the language pair and the system's name where it has one."""
    name = metrics["config"].get("name")
    return f"Gender bias on WinoMT, EN→{metrics['language']}" + (f": {name}" if name else "")


def takeaway(metrics: Mapping[str, Any]) -> str:
    """One sentence: accuracy, ΔG and ΔS with their intervals."""
    return (
        f"The profession's gender is right in {fmt_figure(metrics['accuracy'])}% of {scored_what(metrics)} "
        f"(95% CI{fmt_interval(metrics['accuracy_ci95'])}); F1 male {fmt_figure(metrics['f1_male'])} against F1 female "
        f"{fmt_figure(metrics['f1_female'])}, ΔG {fmt_figure(metrics['delta_g'], True)} points"
        f"{fmt_interval(metrics.get('delta_g_ci95'), True)}; ΔS (pro - anti-stereotypical accuracy) "
        f"{fmt_figure(metrics['delta_s'], True)} points{fmt_interval(metrics.get('delta_s_ci95'), True)}."
    )


def main_rows(metrics: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Header and the one row of the headline figures (the page's table and the markdown's)."""
    no_gender, unaligned = sum(metrics["no_gender"].values()), sum(metrics["unaligned"].values())
    header = ["language", "n", "accuracy [95% CI]", "F1 male", "F1 female", "ΔG [95% CI]", "accuracy pro",
              "accuracy anti", "ΔS [95% CI]", "no gender", "unaligned"]  # fmt: skip
    row = [
        metrics["language"],
        f"{metrics['n']:,}",
        fmt_figure(metrics["accuracy"]) + fmt_interval(metrics["accuracy_ci95"]),
        fmt_figure(metrics["f1_male"]),
        fmt_figure(metrics["f1_female"]),
        fmt_figure(metrics["delta_g"], True) + fmt_interval(metrics.get("delta_g_ci95"), True),
        fmt_figure(metrics["accuracy_pro"]),
        fmt_figure(metrics["accuracy_anti"]),
        fmt_figure(metrics["delta_s"], True) + fmt_interval(metrics.get("delta_s_ci95"), True),
        str(no_gender),
        str(unaligned),
    ]
    return header, [row]


def _share(row: Mapping[str, Any]) -> str:
    return fmt_figure(row["accuracy"]) + fmt_interval(row["accuracy_ci95"])


def profession_rows(metrics: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the per-profession table: accuracy with its Wilson interval, in all and apart for the
    sentences of each gold gender, and the genders predicted."""
    header = ["profession", "n", "accuracy [95% CI]", "n male", "male gold [95% CI]", "n female",
              "female gold [95% CI]", *(f"predicted {p}" for p in PREDICTIONS)]  # fmt: skip
    rows = [
        [
            r["profession"],
            str(r["n"]),
            _share(r),
            str(r["by_gold"]["male"]["n"]),
            _share(r["by_gold"]["male"]),
            str(r["by_gold"]["female"]["n"]),
            _share(r["by_gold"]["female"]),
            *(str(r[f"predicted_{p}"]) for p in PREDICTIONS),
        ]  # fmt: skip
        for r in metrics["professions"]
    ]
    return header, rows


def render_markdown(metrics: Mapping[str, Any]) -> str:
    """``report.md``: title, takeaway, the main table, how the lines were matched, every profession, the method,
    the definitions and the command that rebuilds the report."""
    config = metrics["config"]
    out = [f"# {title(metrics)}", "", f"Translations: {escape(config['description'])}"]
    out += ["", takeaway(metrics), "", *table(*main_rows(metrics), right_from=1), ""]
    out += [f"Beside published figures: {published_line(metrics)}", ""]
    out += [f"Predicted gender per gold gender: `{json.dumps(metrics['confusion'])}`.", ""]
    if config["moved"] or config["untranslated"]:
        out += [
            f"{config['moved']} lines translate another sentence of en.txt than the line of the same number (each is "
            f"scored against its own source's entry); {config['untranslated']} sentences of en.txt have no "
            "translation.",
            "",
        ]
    out += ["## Per profession", "", *table(*profession_rows(metrics), right_from=1), ""]
    out += ["## Method", "", escape(METHOD), "", "## Definitions", ""]
    out += [f"- **{name}**: {escape(text)}" for name, text in DEFINITIONS.items()]
    out += ["", "## Reproduce", "", f"    {config['command']}", ""]
    out += ["## Cite the benchmark", "", "```bibtex", bibtex("winomt").decode("utf-8").rstrip(), "```", ""]
    return "\n".join(out)


def details(scored: Sequence[Scored], data: WinoMT) -> list[dict[str, Any]]:
    """One row per translation: its source, gold, translation, the words aligned to the profession, the prediction
    and, for ΔS, the [right, items] it counts for in the pro- and anti-stereotypical files (``pro``, ``anti``:
    :func:`bias_eval.winomt.figures.cells`), so that a comparison can resample ΔS from the details alone."""
    halves = cells(scored, data)[:, len(CELLS) :].astype(int).tolist()
    return [
        {
            "line": number,
            "source": s.item.sentence,
            "profession": s.item.profession,
            "gold": s.item.gold,
            "translation": s.translation,
            "profession_words": list(s.profession_words),
            "predicted": s.predicted,
            "correct": s.correct,
            "pro": half[:2],
            "anti": half[2:],
        }
        for number, (s, half) in enumerate(zip(scored, halves), start=1)
    ]


def report_files(
    metrics: Mapping[str, Any], scored: Sequence[Scored], data: WinoMT, layout: Layout = Layout(), figures: bool = True
) -> dict[str, bytes]:
    """Every file of the report by its name in the report folder (figures under ``figures/`` unless ``figures`` is
    false; ``report.tex`` laid out by ``layout``)."""
    from bias_eval.winomt.plots import make_figures  # matplotlib: not for every importer's start

    header, rows = profession_rows(metrics)
    rendered = make_figures(metrics) if figures else {}
    parts = {"title": title(metrics), "takeaway": takeaway(metrics), "method": METHOD, "main": main_rows(metrics),
             "professions": (header, rows)}  # fmt: skip
    files = {
        "metrics.json": (json.dumps(metrics, indent=2, ensure_ascii=False) + "\n").encode("utf-8"),
        "report.md": render_markdown(metrics).encode("utf-8"),
        "report.html": render_html(metrics, rendered, parts).encode("utf-8"),
        "report.tex": render_latex(metrics, title(metrics), layout).encode("utf-8"),
        FILE: bibtex("winomt"),
        "professions.tsv": "".join("\t".join(r) + "\n" for r in [header, *rows]).encode("utf-8"),
        f"{metrics['language']}.details.jsonl": jsonl(details(scored, data)).encode("utf-8"),
    }
    for name, formats in rendered.items():
        files.update({figure_path(name, fmt): data for fmt, data in formats.items()})
    return files


def make_winomt_report(
    data: WinoMT,
    translations: Translations,
    lang: str,
    settings: ReportSettings,
    out: Path,
    log: Callable[[str], object] | None = print,
) -> Report:
    """Score ``translations`` into ``lang`` on ``data``, write the report into ``out`` and return it (its metrics and
    per-sentence details in memory); ``log`` (``None``: silent) gets the takeaway and the list of files."""
    lang = check_language(lang)
    scored = score_translations(translations, lang)
    found = figures(scored, data, lang, samples=settings.options.bootstrap_samples, seed=settings.options.seed)
    config = {
        "benchmark": WINOMT,
        "data": str(data.folder),
        "hypotheses": dict(settings.hypotheses),
        "description": settings.description,
        "name": settings.options.name,
        "lines": len(scored),
        "sentences": len(data.items),
        "normal_form": NORMAL_FORM,
        "sample": data.sample,
        "moved": translations.moved,
        "untranslated": translations.untranslated,
        "bootstrap_samples": settings.options.bootstrap_samples,
        "seed": settings.options.seed,
        "method": METHOD,
        "definitions": DEFINITIONS,
        "command": settings.command,
    }
    found["anchor"] = anchor(lang)
    metrics = clean_json({"benchmark": WINOMT, "language": lang, **found, "config": config})
    files = report_files(metrics, scored, data, settings.options.layout, settings.options.figures)
    write_report(out, files)
    if log is not None:
        log(takeaway(metrics))
        drawn = ", figures/" if settings.options.figures else ""
        log(f"\nreport written to {out}/: " + ", ".join(sorted(n for n in files if "/" not in n)) + drawn)
    return Report.written(metrics, files, out)
