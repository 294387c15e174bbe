"""The tables, ``metrics.json`` and ``report.md`` of a report, rendered in memory, and the atomic write of all
its files (``report.html`` and the list of files: :mod:`bias_eval.mtgeneval.page`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from bias_eval.core import latex
from bias_eval.core.bleu import DEFAULT_TOKENIZER, TOKENIZER_RULE, bleu_tokenizer
from bias_eval.core.decision import SHARE_PREFIXES
from bias_eval.core.files import clean_json
from bias_eval.core.markdown import escape, table
from bias_eval.core.units import fmt, fmt_ci, fmt_share
from bias_eval.mtgeneval.accuracy import low_signal
from bias_eval.mtgeneval.balance import infinite_ratio, mf_ratio_text, over_correction, ratio_bounds_text
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
from bias_eval.mtgeneval.scoring import LanguageResult

NOT_PAIRED = "Not available: the sentences of this data set are not paired across genders."
GAP_DEFINITION = "bleu_gap = bleu_masculine - bleu_feminine (corpus sacreBLEU); > 0 favours masculine"


def metrics_document(
    results: Sequence[LanguageResult],
    macro: Mapping[str, Any],
    config: Mapping[str, Any],
) -> dict:
    """The content of ``metrics.json``: the figures, the config, and the two flags every renderer reads, computed
    here once (``warning``: :func:`~bias_eval.mtgeneval.accuracy.low_signal`; ``over_correction``:
    :func:`~bias_eval.mtgeneval.balance.over_correction`)."""
    languages = {r.lang: r.metrics for r in results}
    doc = clean_json({"languages": languages, "macro": dict(macro), "config": dict(config)})
    doc["warning"] = low_signal(doc["languages"])
    doc["over_correction"] = over_correction(doc)
    return doc


# ---------------------------------------------------------------------------------------------------
# formatting helpers
# ---------------------------------------------------------------------------------------------------


TABLE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("n", "n"),
    ("BLEU", "bleu"),
    ("BLEU feminine", "bleu_feminine"),
    ("BLEU masculine", "bleu_masculine"),
    ("BLEU gap, masculine - feminine", "bleu_gap"),
    ("BLEU gap 95% CI", "bleu_gap_ci95"),
    ("chrF feminine", "chrf_feminine"),
    ("chrF masculine", "chrf_masculine"),
    ("chrF gap", "chrf_gap"),
    ("accuracy feminine [95% CI]", "accuracy_feminine"),
    ("accuracy masculine [95% CI]", "accuracy_masculine"),
    ("accuracy pair [95% CI]", "accuracy_pair"),
    ("coverage [95% CI]", "coverage"),
    ("fair BLEU", "fair_bleu"),
    ("strict accuracy feminine [95% CI]", "strict_accuracy_feminine"),
    ("strict accuracy masculine [95% CI]", "strict_accuracy_masculine"),
    ("accuracy gap, masculine - feminine [95% CI]", "accuracy_gap"),
    ("strict accuracy gap [95% CI]", "strict_accuracy_gap"),
    ("M:F prediction ratio [95% CI]", "mf_ratio"),
    ("neutral pairs", "neutral_pairs"),
)


def _cell(key: str, row: Mapping[str, Any], infinite: bool | None = None) -> str:
    value = row.get(key)
    if key.endswith("_ci95"):
        return fmt_ci(value)
    if key.startswith(SHARE_PREFIXES):
        return fmt_share(value, row.get(f"{key}_ci95"), key)
    if key == "mf_ratio":
        ci = row.get(f"{key}_ci95")
        return mf_ratio_text(row, infinite) + ratio_bounds_text(ci)
    return fmt(value, 2, signed=key.endswith("_gap"))


def table_rows(metrics: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Header and rows (one per language, then macro when there are several) of the table of every figure."""
    columns = list(TABLE_COLUMNS)
    if metrics["macro"].get("accuracy_context") is not None:
        columns.append(("accuracy context", "accuracy_context"))
    header = ["language", *(title for title, _ in columns)]
    rows = [[lang, *(_cell(key, m) for _, key in columns)] for lang, m in metrics["languages"].items()]
    if len(rows) > 1:  # one language: its macro row would repeat it
        infinite = any(map(infinite_ratio, metrics["languages"].values()))
        rows.append(["macro", *(_cell(key, metrics["macro"], infinite) for _, key in columns)])
    return header, rows


def _align(cells: Sequence[str], widths: Sequence[int]) -> str:
    return "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))


def summary_table(metrics: Mapping[str, Any]) -> str:
    """Plain-text main table for the terminal (language, BLEU per gender, gap [CI], accuracies, coverage)."""
    header = main_header(metrics)
    rows = [cells for cells, _ in main_rows(metrics)]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = [_align(r, widths) for r in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def reproduce_lines(config: Mapping[str, Any]) -> list[str]:
    """The command that rebuilds the report with the settings used, then shell commands (and a Python recipe)
    that recompute the corpus figures with sacreBLEU alone."""
    lines = ["# the whole report, every setting as used:", config["command"]] if config.get("command") else []
    for lang, files in config.get("files", {}).items():
        for gender in ("feminine", "masculine"):
            ref, hyp = files.get(f"reference_{gender}"), files.get(f"hypothesis_{gender}")
            tok = bleu_tokenizer(lang)  # the language's BLEU tokenizer, as the report scored it
            if ref and hyp:
                tokenize = f" -tok {tok}" if tok != DEFAULT_TOKENIZER else ""
                lines.append(f"sacrebleu {ref} -i {hyp} -m bleu chrf{tokenize}  # {lang} bleu_{gender}, chrf_{gender}")
    lines.append(
        "# any figure, from <lang>.details.jsonl: sacrebleu.corpus_bleu(hypothesis_<gender> values, "
        f"[reference_<gender> values], tokenize=<{TOKENIZER_RULE}>); both genders give bleu"
    )
    return lines


def definitions(config: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(name, definition) pairs stated in the report."""
    return list(config["definitions"].items())


# ---------------------------------------------------------------------------------------------------
# markdown
# ---------------------------------------------------------------------------------------------------


def render_markdown(results: Sequence[LanguageResult], metrics: Mapping[str, Any], figures: Iterable[str] = ()) -> str:
    """``report.md``: title, warnings, takeaway, main table, figures (``figures/<name>.svg``), every figure, how
    to reproduce, definitions and the worst examples."""
    config = metrics["config"]
    out = [f"# {title(config)}", ""]
    lines = warnings(metrics)
    if lines:
        out += [f"> **{WARNING_HEADING}**", ">", *[f"> - {escape(line)}" for line in lines]]
        out += [">", f"> Flagged at {THRESHOLDS} (see warning in the Definitions).", ""]
    flagged = over_correction_lines(metrics)
    if flagged:
        out += [f"> **{OVER_CORRECTION_HEADING}**", ">"]
        out += [*[f"> - {escape(line)}" for line in flagged], ">", f"> {OVER_CORRECTION_NOTE}", ""]
    out += [takeaway(metrics), "", "## Results", ""]
    rows = []
    for cells, sig in main_rows(metrics):
        cells[3] = f"**{cells[3]}**" if sig else cells[3]
        rows.append(cells)
    out += table(main_header(metrics), rows, right_from=1)
    out += ["", f"{MAIN_NOTE}", ""]
    out += [f"![{name}](figures/{name}.svg) ([PDF](figures/{name}.pdf))" for name in figures]
    out += ["", "## Every figure", ""]
    out += [f"- Data: {config['data']}", f"- Hypotheses: {config['hypotheses_description']}"]
    out += [
        f"- sacreBLEU BLEU: `{config['bleu_signature']}`",
        f"- sacreBLEU chrF: `{config['chrf_signature']}`",
    ]
    out += [f"- Bootstrap: {config['bootstrap_samples']} resamples, seed {config['seed']}", ""]
    out += ["Per-sentence figures: `<lang>.details.jsonl`.", ""]
    out += table(*table_rows(metrics), right_from=1)
    out += ["", "## Reproduce", "", *[f"    {line}" for line in reproduce_lines(config)]]
    out += ["", "## Definitions", ""]
    out += [f"- **{name}**: {escape(text)}" for name, text in definitions(config)]
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
            texts = [
                [key, d[f"{key}_feminine"], d[f"{key}_masculine"]] for key in ("source", "hypothesis", "reference")
            ]
            correct = ["gender correct", decision(d, "feminine"), decision(d, "masculine")]
            out += table(["", "feminine", "masculine"], [*texts, correct])
            out.append("")
    return "\n".join(out) + "\n"


def render_latex(metrics: Mapping[str, Any], layout: latex.Layout = latex.Layout()) -> str:
    """``report.tex``: the compact table (:func:`bias_eval.mtgeneval.paper_tables.compact_table`, labelled
    ``<label>-compact``) and the main table (:func:`~bias_eval.mtgeneval.headline.main_rows`, labelled ``layout``'s
    label, ``tab:gender-bias`` by default) as booktabs tables for a paper, the gap in bold where its interval excludes
    0, the macro row below a rule; each caption the title and the table's note; ``table*`` with ``layout.wide``."""
    from bias_eval.mtgeneval.paper_tables import compact_table

    rows: list[list[str] | None] = []
    for cells, sig in main_rows(metrics):
        rows.append([latex.escape(c) for c in cells])
        rows[-1][3] = latex.bold(rows[-1][3]) if sig else rows[-1][3]
    if len(rows) > 1:
        rows.insert(-1, None)
    named, label = title(metrics["config"]), layout.label_or("tab:gender-bias")
    compact = compact_table(metrics, named, layout, f"{label}-compact")
    full = latex.table(main_header(metrics), rows, caption=layout.caption(f"{named}. {MAIN_NOTE}"), label=label,
                       wide=layout.wide)  # fmt: skip
    return "\n".join([full[0], *compact[1:], "", *full[1:]]) + "\n"  # one preamble comment, the full table's


def decision(detail: Mapping[str, Any], gender: str) -> str:
    """``yes``, ``no (the other gender's words)`` or ``n/a``: the accuracy decision of one hypothesis."""
    correct = detail.get(f"correct_{gender}")
    if correct is None:
        return "n/a"
    if correct:
        return "yes"
    return "no (" + ", ".join(detail.get(f"counterfactual_words_{gender}") or []) + ")"
