"""Compare two bias reports (the ``metrics.json`` of two ``scripts/bias_report.py`` folders): every figure per
language and macro-averaged, before and after, its change, and whether the interval of the change made from the two
reports' own intervals (:func:`bias_eval.core.intervals.difference_interval`) excludes 0."""

from __future__ import annotations

import base64
import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bias_eval.compare.comparability import HEADING
from bias_eval.core.decision import LEVEL, points
from bias_eval.core.errors import UserError
from bias_eval.core.intervals import difference_interval
from bias_eval.core.markdown import escape, table
from bias_eval.core.page import CSS
from bias_eval.core.paired import p_relation
from bias_eval.core.report import Report
from bias_eval.core.units import figure_value

#: (title, metrics.json key) of every figure compared; a figure has a CI when the report has ``<key>_ci95``.
FIGURES: tuple[tuple[str, str], ...] = (
    ("BLEU", "bleu"),
    ("BLEU f", "bleu_feminine"),
    ("BLEU m", "bleu_masculine"),
    ("BLEU gap", "bleu_gap"),
    ("chrF gap", "chrf_gap"),
    ("acc f", "accuracy_feminine"),
    ("acc m", "accuracy_masculine"),
    ("acc pair", "accuracy_pair"),
    ("strict acc f", "strict_accuracy_feminine"),
    ("strict acc m", "strict_accuracy_masculine"),
    ("acc gap", "accuracy_gap"),
    ("fair BLEU", "fair_bleu"),
    ("coverage", "coverage"),
)
CHANGE_NOTE = (
    "change = {after} - {before}, computed before rounding. changed: for a figure with a 95% CI in both reports, "
    "'yes' when the 95% interval of the change made from the two CIs excludes 0 (MOVER: change - sqrt(({after} - "
    "its low)^2 + ({before}'s high - {before})^2) to change + sqrt(({after}'s high - {after})^2 + ({before} - its "
    "low)^2)) and the change is at least --min_effect points, otherwise 'no'; 'n/a' for figures without a CI (BLEU, "
    "BLEU f, BLEU m, fair BLEU) or missing from either report. It takes the two reports as independent, so on the "
    "same sentences it is a conservative screen, not the test: the paired tests are. macro: each report's unweighted "
    "mean over its languages."
)


@dataclass(frozen=True)
class Row:
    """One figure of one language (or ``macro``) in both reports."""

    scope: str
    title: str
    key: str
    before: float | None
    before_ci: list[float] | None
    after: float | None
    after_ci: list[float] | None
    min_effect: float = 0.0  # points (bias_eval.core.decision): a smaller change is not marked changed

    @property
    def change(self) -> float | None:
        """``after - before`` (``None`` when either is missing)."""
        return None if self.before is None or self.after is None else self.after - self.before

    @property
    def changed(self) -> bool | None:
        """See :func:`changed_beyond_noise`; ``False`` as well when the change is below :attr:`min_effect` points."""
        beyond = changed_beyond_noise(self.before, self.before_ci, self.after, self.after_ci)
        return beyond and abs(points(self.key, self.change or 0.0)) >= self.min_effect


def changed_beyond_noise(
    before: float | None, before_ci: Sequence[float] | None, after: float | None, after_ci: Sequence[float] | None
) -> bool | None:
    """Whether the interval of ``after - before`` made from the two intervals (:func:`difference_interval`) excludes
    0; ``None`` if anything is missing."""
    if before is None or after is None or before_ci is None or after_ci is None:
        return None
    low, high = difference_interval(before, before_ci, after, after_ci)
    return low > 0 or high < 0


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        return None
    return float(value)


def _interval(value: Any) -> list[float] | None:
    if not isinstance(value, list) or len(value) != 2:
        return None
    bounds = [_number(v) for v in value]
    return None if None in bounds else bounds  # type: ignore[return-value]


def report_names(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """The two systems' names in a comparison: the reports' own (``config.name``, ``--name``) when both have one and
    they differ, else ``before`` and ``after``."""
    names = [str((m.get("config") or {}).get("name") or "") for m in (before, after)]
    return names if all(names) and names[0] != names[1] else ["before", "after"]


def _figure_rows(scope: str, before: Mapping[str, Any], after: Mapping[str, Any], smallest: float) -> list[Row]:
    figures = list(FIGURES)
    if "accuracy_context" in before or "accuracy_context" in after:
        figures.append(("acc context", "accuracy_context"))
    return [
        Row(
            scope,
            title,
            key,
            _number(before.get(key)),
            _interval(before.get(f"{key}_ci95")),
            _number(after.get(key)),
            _interval(after.get(f"{key}_ci95")),
            smallest,
        )
        for title, key in figures
    ]


def compare(
    before: Mapping[str, Any], after: Mapping[str, Any], names: Sequence[str], min_effect: float = 0.0
) -> tuple[list[Row], list[str]]:
    """Rows per common language (sorted), then macro (a change below ``min_effect`` points not marked changed); and
    notes on what differs between the reports."""
    langs_b, langs_a = set(before["languages"]), set(after["languages"])
    common = sorted(langs_b & langs_a)
    if not common:
        shown = f"BEFORE: {' '.join(sorted(langs_b))}; AFTER: {' '.join(sorted(langs_a))}"
        raise UserError(f"AFTER: no language in common with BEFORE ({shown})")
    languages = before["languages"], after["languages"]
    rows = [r for lang in common for r in _figure_rows(lang, *(x[lang] for x in languages), min_effect)]
    notes = []
    for name, only in ((names[0], langs_b - langs_a), (names[1], langs_a - langs_b)):
        if only:
            notes.append(f"Languages only in {name}, left out: {' '.join(sorted(only))}.")
    if langs_b == langs_a and len(common) > 1:  # one language: its rows are the whole comparison
        rows += _figure_rows("macro", before["macro"], after["macro"], min_effect)
    elif langs_b != langs_a:
        notes.append("No macro rows: the two reports average over different languages.")
    config_b, config_a = before.get("config") or {}, after.get("config") or {}
    for key in ("bootstrap_samples", "seed", "ci_level"):  # differences in data: bias_eval.compare.comparability
        if config_b.get(key) != config_a.get(key):
            notes.append(
                f"The reports differ in {key}: {names[0]} {config_b.get(key)!r}, {names[1]} {config_a.get(key)!r}."
            )
    return rows, notes


# ---------------------------------------------------------------------------------------------------
# rendering
# ---------------------------------------------------------------------------------------------------


def cells(row: Row) -> list[str]:
    """The table cells of ``row``: scope, figure, before, its CI, after, its CI, change, changed (accuracies in
    percent, their gaps and changes in points: :func:`bias_eval.core.units.figure_value`)."""

    def value(v: float | None, change: bool = False) -> str:
        return "n/a" if v is None else figure_value(row.key, v, change)

    def interval(ci: list[float] | None) -> str:
        return "n/a" if ci is None else f"[{value(ci[0])}, {value(ci[1])}]"

    changed = {True: "yes", False: "no", None: "n/a"}[row.changed]
    before, after = value(row.before), value(row.after)
    return [row.scope, row.title, before, interval(row.before_ci), after, interval(row.after_ci),
            value(row.change, True), changed]  # fmt: skip


def header(names: Sequence[str]) -> list[str]:
    """Column titles."""
    before, after = names
    return ["lang", "figure", before, f"{before} 95% CI", after, f"{after} 95% CI", "change", "changed"]


def describe_sources(reports: Sequence[Report], names: Sequence[str]) -> list[str]:
    """Where each report comes from: its folder (or ``in memory``), data and hypotheses."""
    lines = []
    for name, report in zip(names, reports):
        config = report.metrics.get("config") or {}
        where = report.folder if report.folder is not None else "in memory"
        lines.append(f"{name}: {where} ({config.get('data', '?')}; {config.get('hypotheses_description', '?')})")
    return lines


def render_markdown(
    rows: Sequence[Row],
    notes: Sequence[str],
    names: Sequence[str],
    sources: Sequence[str],
    appendix: str = "",
    *,
    cautions=(),
    summary: str = "",
    figure: str = "",
) -> str:
    """The comparison as markdown: the ``summary`` paragraph, the ``cautions`` (:mod:`bias_eval.compare.comparability`),
    the figure (``figures/comparison.svg``, with ``figure`` as its caption, when given), where the reports come
    from, the table, the note, the differences, then ``appendix`` (the paired tests' section)."""
    out = ["# Bias report comparison", "", *([summary, ""] if summary else [])]
    if cautions:
        out += [f"> **{HEADING}**", ">", *[f"> - {escape(line)}" for line in cautions], ""]
    if figure:
        files = ", ".join(f"[{f.upper()}](figures/comparison.{f})" for f in ("pdf", "png"))
        out += [f"![comparison](figures/comparison.svg) ({files})", "", f"*{figure}*", ""]
    out += [*[f"- {escape(s)}" for s in sources], "", "## Both reports side by side", ""]
    out += table(header(names), [cells(r) for r in rows], right_from=2)
    out += ["", "Note: " + CHANGE_NOTE.format(before=names[0], after=names[1])]
    out += [f"- {escape(n)}" for n in notes]
    out += ["", appendix.rstrip("\n")] if appendix else []
    return "\n".join(out) + "\n"


_CSS = (
    "tr.changed td { background: #fff3c4; } .cautions { border: 2px solid #D55E00; border-left-width: 8px; "
    "background: #fff1e6; padding: 0.5em 0.9em; margin: 1em 0; } #fig-comparison img { width: 100%; max-width: 64em; }"
)


def render_html(
    rows: Sequence[Row],
    notes: Sequence[str],
    names: Sequence[str],
    sources: Sequence[str],
    appendix: str = "",
    *,
    cautions=(),
    summary: str = "",
    figure: tuple[bytes, str] | None = None,
) -> str:
    """The comparison as a self-contained, XML-parsable HTML page in the report page's style: the ``summary``, the
    ``cautions``, the ``figure`` (its SVG embedded, and its caption), then the side-by-side table (folded; changed
    rows highlighted) and ``appendix`` (the paired tests' section, as HTML)."""
    e = html.escape
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en" xmlns="http://www.w3.org/1999/xhtml">',
        '<head><meta charset="utf-8" /><meta name="viewport" content="width=device-width, initial-scale=1" />',
        f"<title>Bias report comparison: {e(names[1])} against {e(names[0])}</title>",
        f"<style>{CSS}{_CSS}</style></head>",
        "<body>",
        "<h1>Bias report comparison</h1>",
        *([f'<p class="takeaway">{e(summary)}</p>'] if summary else []),
    ]
    if cautions:
        items = "".join(f"<li>{e(line)}</li>" for line in cautions)
        parts.append(f'<div class="cautions" role="alert"><strong>{HEADING}</strong><ul>{items}</ul></div>')
    if figure is not None:
        svg, caption = figure
        links = " \u00b7 ".join(f'<a href="figures/comparison.{f}">{f.upper()}</a>' for f in ("svg", "pdf", "png"))
        data = base64.b64encode(svg).decode("ascii")
        parts.append(f'<figure id="fig-comparison"><img src="data:image/svg+xml;base64,{data}" alt="{e(caption)}" />'
                     f"<figcaption>{e(caption)} Files: {links}.</figcaption></figure>")  # fmt: skip
    parts += [
        '<ul class="meta">' + "".join(f"<li>{e(s)}</li>" for s in sources) + "</ul>",
        f"<details><summary>Both reports side by side ({len(rows)} rows)</summary>",
        '<div class="scroll"><table><thead><tr>' + "".join(f"<th>{e(h)}</th>" for h in header(names)),
        "</tr></thead><tbody>",
    ]
    for row in rows:
        values = cells(row)
        mark = ' class="changed"' if row.changed else ""
        body = "".join(f"<td>{e(c)}</td>" for c in values[:2]) + "".join(
            f'<td class="num">{e(c)}</td>' for c in values[2:]
        )
        parts.append(f"<tr{mark}>{body}</tr>")
    parts.append("</tbody></table></div>")
    parts.append(f'<p class="note">Note: {e(CHANGE_NOTE.format(before=names[0], after=names[1]))}</p>')
    if notes:
        parts.append("<ul>" + "".join(f"<li>{e(n)}</li>" for n in notes) + "</ul>")
    parts += ["</details>", *([appendix] if appendix else []), "</body>", "</html>"]
    return "\n".join(parts) + "\n"


def p_words(row: Mapping[str, Any]) -> str:
    """A paired test's p-values in a sentence: ``p = 0.012`` or, at a bootstrap's floor, ``p < 0.002``; then the
    adjusted p where it differs (:func:`bias_eval.core.paired.p_relation`: ``adjusted ≤ 0.02`` from a bound)."""
    raw, adjusted = p_relation(row)
    said = f"p {raw}" + (" (McNemar)" if "McNemar" in row["test"] else "")
    return said if adjusted is None else f"{said}, adjusted {adjusted}"


def change_words(row: Mapping[str, Any], name: str, scale: float = 1.0, digits: int = 1, unit: str = " points") -> str:
    """A paired test's change in a sentence, both benchmarks' one wording: a finding as its size with the interval
    of that size (``lowers the accuracy by 2.0 points [1.1, 2.9], p ...``; a ``*_size`` figure ``narrows`` or
    ``widens``); any other change signed, with its signed interval (``leaves the accuracy gap within noise (-0.8
    points [-2.1, +0.5], p ...)``). ``scale`` takes the row's values to the unit, written with ``digits`` decimals."""

    def number(value: float, signed: bool) -> str:
        return f"{scale * value:{'+' if signed else ''}.{digits}f}".replace("-", "\u2212")

    change, (low, high) = row["change"], row["ci95"]
    if not row["significant"]:
        small = row.get("p_adjusted", row["p_value"]) < LEVEL  # beyond noise, below the minimum effect
        how = "changes {} by less than the minimum effect" if small else "leaves {} within noise"
        interval = f"[{number(low, True)}, {number(high, True)}]"
        return f"{how.format(name)} ({number(change, True)}{unit} {interval}, {p_words(row)})"
    sign = 1 if change > 0 else -1
    low, high = sorted((sign * low, sign * high))
    verbs = ("widens", "narrows") if row["figure"].endswith("_size") else ("raises", "lowers")
    said = f"{verbs[change <= 0]} {name} by {number(abs(change), False)}{unit}"
    return f"{said} [{number(low, False)}, {number(high, False)}], {p_words(row)}"


# ---------------------------------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------------------------------
