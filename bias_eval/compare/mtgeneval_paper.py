"""What a paper quotes from a comparison of two reports: the first paragraph, which states each change the paired
tests find beyond noise ("tuned narrows the accuracy gap in de by 4.0 points [1.9, 6.1], p < 0.002") and says
plainly when there is none, and the LaTeX (booktabs) table of the figures that matter, both systems side by side
with the change, its 95% interval and its p-value."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bias_eval.compare.rows import Row, change_words
from bias_eval.core import latex
from bias_eval.core.decision import Rule
from bias_eval.core.paired import p_text

#: (paired-test figure, its name in a sentence, unit) of the changes the first paragraph states, in this order: the
#: accuracy gap always (its size, |masculine - feminine|: narrowed or widened, whichever gender it favours), the others
#: when they changed beyond noise; every other paired test is counted
HEADLINE = ("accuracy_gap_size", "the accuracy gap", "points")
STATED = (
    ("bleu_gap_size", "the BLEU gap", "BLEU"),
    ("accuracy_feminine", "feminine accuracy", "points"),
    ("accuracy_masculine", "masculine accuracy", "points"),
    ("bleu", "BLEU", "BLEU"),
)
#: (metrics.json key, row title) of the LaTeX table's figures, per language and macro
TABLED = (
    ("accuracy_gap", "Accuracy gap (m $-$ f), points"),
    ("accuracy_feminine", "Accuracy feminine, \\%"),
    ("accuracy_masculine", "Accuracy masculine, \\%"),
    ("strict_accuracy_feminine", "Strict accuracy feminine, \\%"),
    ("strict_accuracy_masculine", "Strict accuracy masculine, \\%"),
    ("bleu_gap", "BLEU gap (m $-$ f)"),
    ("bleu", "BLEU"),
)


def _clause(row: Mapping[str, Any], name: str, unit: str) -> str:
    """A change in the first paragraph (:func:`bias_eval.compare.rows.change_words`): accuracies in points, BLEU in
    its own unit."""
    if unit == "points":
        return change_words(row, name, scale=100)
    return change_words(row, name, digits=2, unit="")


def summary(paired: Mapping[str, Any], names: Sequence[str]) -> str:
    """The comparison's first paragraph: per language (then macro), the change of the accuracy gap's size, and each
    change of :data:`STATED` whose paired test gives p below the level, in words; then how many other paired tests
    did; or that nothing changed beyond noise; or why no test ran."""
    before, after = names
    if paired["refused"]:
        return (
            f"The paired tests did not run ({paired['refused']}), so this comparison claims no change between "
            f"{before} and {after}: the tables only set their figures side by side."
        )
    level, rows = paired["level"], [r for r in paired["rows"] if "missing" not in r]
    by_scope: dict[str, dict[str, Mapping[str, Any]]] = {}
    for row in rows:
        by_scope.setdefault(row["lang"], {})[row["figure"]] = row
    said, stated = [], {HEADLINE[0], *(key for key, _, _ in STATED)}
    for scope, figures in by_scope.items():
        clauses = [_clause(figures[HEADLINE[0]], *HEADLINE[1:])] if HEADLINE[0] in figures else []
        clauses += [
            _clause(figures[k], name, unit) for k, name, unit in STATED if figures.get(k, {}).get("significant")
        ]
        where = "Averaged over the languages" if scope == "macro" else f"In {scope}"
        said += [f"{where}, {after} " + "; ".join(clauses) + "."] if clauses else []
    passed = sum(1 for r in rows if r["significant"])
    rule = paired.get("rule") or Rule().describe()
    holm = rule["p_adjust"] == "holm"
    test = f"{'Holm-adjusted ' if holm else ''}p < {level:g}" + (
        f" and a change of at least {rule['min_effect_points']:g} points" if rule["min_effect_points"] else ""
    )
    if not passed:
        return (
            f"Nothing changed beyond noise: none of the {len(rows)} paired tests of {after} against {before} on the "
            f"same sentences gives {test}. " + " ".join(said)
        )
    others = sum(1 for r in rows if r["significant"] and r["figure"] not in stated)
    chance = (
        f"Holm's adjustment keeps the chance of any false finding among the {len(rows)} tests below {level:g}."
        if holm
        else f"with {len(rows)} tests, about {len(rows) * level:.1f} would by chance if nothing had changed."
    )
    return (
        f"Against {before}, on the same sentences: " + " ".join(said) + f" {passed} of the {len(rows)} paired tests "
        f"give {test}, {others} of them on figures not named here (strict accuracies, chrF, pair accuracy, the "
        f"gaps' signs); {chance}"
    )


def _value(key: str, value: float | None, ci: Sequence[float] | None, signed: bool = False) -> str:
    """A figure for the table: a share in percent (a gap of shares in points) with one decimal, a score with two;
    its interval after it; minus signs as LaTeX's."""
    if value is None:
        return "n/a"
    scale, digits = (100, 1) if key.startswith(("accuracy", "strict")) else (1, 2)
    form = f"{{:{'+' if signed else ''}.{digits}f}}"
    text = form.format(scale * value)
    if ci is not None:
        text += f" [{form.format(scale * ci[0])}, {form.format(scale * ci[1])}]"
    return latex.escape(text.replace("-", "\u2212"))


def p_cell(test: Mapping[str, Any], key: str) -> str:
    """A p-value cell of the LaTeX table: raw (``p_value``) or adjusted (``p_adjusted``, raw where none)."""
    return latex.escape(p_text(test.get(key, test["p_value"]), test.get("p_floor")))


def render_latex(
    rows: Sequence[Row], paired: Mapping[str, Any], names: Sequence[str], layout: latex.Layout = latex.Layout()
) -> str:
    """``comparison.tex``: per language and macro, the figures of :data:`TABLED` of both systems with their 95%
    intervals, the change with its paired 95% interval and its p-value (``n/a`` where no paired test ran)."""
    tests = {(r["lang"], r["figure"]): r for r in paired.get("rows", []) if "missing" not in r}
    found = {(r.scope, r.key): r for r in rows}
    body: list[list[str] | None] = []
    for scope in dict.fromkeys(r.scope for r in rows):
        body += [None] if body else []
        for key, title in TABLED:
            row, test = found.get((scope, key)), tests.get((scope, key))
            if row is None:
                continue
            change = _value(key, row.change, None if test is None else test["ci95"], signed=True)
            p = ["n/a", "n/a"] if test is None else [p_cell(test, k) for k in ("p_value", "p_adjusted")]
            gap = key.endswith("_gap")
            cells = [latex.escape(scope), title, _value(key, row.before, row.before_ci, gap)]
            body.append([*cells, _value(key, row.after, row.after_ci, gap), change, *p])
    header = ["Language", "Figure", f"{names[0]} [95% CI]", f"{names[1]} [95% CI]", "Change [95% CI]", "p", "p adj."]
    adjusted = "Holm's step-down adjustment over the comparison's paired tests" if (paired.get("rule") or {}).get(
        "p_adjust", "holm") == "holm" else "not adjusted"  # fmt: skip
    caption = layout.caption(
        f"{names[1]} against {names[0]}, per language. Intervals: accuracies, Wilson score; accuracy gaps, Newcombe's "
        "paired hybrid score; BLEU gaps, percentile bootstrap; change of an accuracy, the changes McNemar's exact "
        "test does not reject; other changes, paired bootstrap over the same sentences. p: McNemar's exact test for "
        f"accuracies, paired bootstrap otherwise; p adj.: {adjusted}. Accuracies in percent, gaps and changes in "
        "points."
    )
    label = layout.label_or("tab:gender-bias-comparison")
    lines = latex.table(header, body, caption=caption, label=label, right_from=2, wide=layout.wide)
    return "\n".join(lines) + "\n"
