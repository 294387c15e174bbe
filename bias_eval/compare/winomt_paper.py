"""What a paper quotes from a comparison of two WinoMT reports: the first paragraph (each language's change of
accuracy and of the sizes of ΔG and ΔS, with their paired intervals and p-values, and how many tests found a change),
the LaTeX (booktabs) table of both systems side by side with each change, and one figure of both systems on shared
axes: ΔG and ΔS with their bootstrap intervals, and the accuracy of each gold gender with its Wilson interval."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from matplotlib.figure import Figure

from bias_eval.compare.mtgeneval_paper import p_cell
from bias_eval.compare.plot import draw_point
from bias_eval.compare.rows import Row, change_words
from bias_eval.compare.winomt_tests import PREFIX
from bias_eval.core import latex
from bias_eval.core.decision import Rule
from bias_eval.core.plots import FEMININE_COLOUR, INK, MASCULINE_COLOUR, categories, gap_limits, render
from bias_eval.winomt.figures import fmt_figure

#: (paired-test figure, its name in a sentence) of the changes the first paragraph states, in this order
STATED = (("accuracy", "the accuracy"), ("delta_g_size", "the size of ΔG"), ("delta_s_size", "the size of ΔS"))
CAPTION = (
    "Both systems on shared axes, per language. Left: ΔG (F1 male \u2212 F1 female) and ΔS (pro- \u2212 "
    "anti-stereotypical accuracy), in points, each with its 95% bootstrap interval. Right: the accuracy of the "
    "sentences of each gold gender, in percent, with its 95% Wilson interval. Hollow circles: {before}; filled "
    "squares: {after}."
)
#: the LaTeX table's default label (``--label`` gives another)
LABEL = "tab:winomt-comparison"


def summary(paired: Mapping[str, Any], names: Sequence[str]) -> str:
    """The comparison's first paragraph: per language, the accuracy's change and those of ΔG's and ΔS's sizes, then
    how many of the paired tests found a change by the rule; or why no test ran."""
    before, after = names
    if paired["refused"]:
        return (
            f"The paired tests did not run ({paired['refused']}), so this comparison claims no change between "
            f"{before} and {after}: the tables only set their figures side by side."
        )
    rows = [r for r in paired["rows"] if not r.get("missing")]
    by_lang: dict[str, dict[str, Mapping[str, Any]]] = {}
    for row in rows:
        by_lang.setdefault(row["lang"], {})[row["figure"].removeprefix(PREFIX)] = row
    said = []
    for lang, figures in by_lang.items():
        clauses = [change_words(figures[key], name) for key, name in STATED if key in figures]
        where = "Averaged over the languages" if lang == "mean" else f"On WinoMT {lang}"
        said += [f"{where}, {after} " + "; ".join(clauses) + "."] if clauses else []
    rule = paired.get("rule") or Rule().describe()
    test = f"{'Holm-adjusted ' if rule['p_adjust'] == 'holm' else ''}p < {paired['level']:g}" + (
        f" and a change of at least {rule['min_effect_points']:g} points" if rule["min_effect_points"] else ""
    )
    passed = sum(1 for r in rows if r["significant"])
    if not passed:
        return (
            f"Nothing changed beyond noise: none of the {len(rows)} paired tests of {after} against {before} on the "
            f"same sentences gives {test}. " + " ".join(said)
        )
    return " ".join(said) + f" {passed} of the {len(rows)} paired tests on the same sentences give {test}."


def _cell(key: str, value: float | None, ci: Sequence[float] | None, signed: bool) -> str:
    text = fmt_figure(value, signed) + ("" if ci is None or value is None else
                                        f" [{fmt_figure(ci[0], signed)}, {fmt_figure(ci[1], signed)}]")  # fmt: skip
    return latex.escape(text.replace("-", "\u2212"))


def render_latex(
    rows: Sequence[Row], paired: Mapping[str, Any], names: Sequence[str], layout: latex.Layout = latex.Layout()
) -> str:
    """``comparison.tex``: per language (and the means), each figure of both systems with its 95% interval, the
    change with its paired 95% interval and its p-values (raw and adjusted; ``n/a`` where no paired test ran)."""
    tests = {(r["lang"], r["figure"]): r for r in paired.get("rows", []) if not r.get("missing")}
    body: list[list[str] | None] = []
    for scope in dict.fromkeys(r.scope for r in rows):
        body += [None] if body else []
        for row in (r for r in rows if r.scope == scope):
            test, signed = tests.get((scope, row.key)), "delta" in row.key
            change = _cell(row.key, row.change, None if test is None else test["ci95"], True)
            p = ["n/a", "n/a"] if test is None else [p_cell(test, k) for k in ("p_value", "p_adjusted")]
            before = _cell(row.key, row.before, row.before_ci, signed)
            after = _cell(row.key, row.after, row.after_ci, signed)
            body.append([latex.escape(scope), latex.escape(row.title), before, after, change, *p])
    header = ["Language", "Figure", f"{names[0]} [95% CI]", f"{names[1]} [95% CI]", "Change [95% CI]", "p", "p adj."]
    holm = (paired.get("rule") or {}).get("p_adjust", "holm") == "holm"
    caption = layout.caption(
        f"WinoMT: {names[1]} against {names[0]}, per language. Accuracies and F1 in percent, ΔG, ΔS and changes in "
        "points. Intervals: accuracies, Wilson score; ΔG and ΔS, percentile bootstrap; change of the accuracy, the "
        "changes McNemar's exact test does not reject; other changes, paired bootstrap over the same sentences. p: "
        f"McNemar's exact test for the accuracy, paired bootstrap otherwise; p adj.: "
        f"{'Holm-adjusted over the comparison' if holm else 'not adjusted'}."
    )
    lines = latex.table(header, body, caption=caption, label=layout.label_or(LABEL), right_from=2, wide=layout.wide)
    return "\n".join(lines) + "\n"


def _share(value: Any) -> float | None:
    """A WinoMT figure (percent, points) on the scale :func:`bias_eval.compare.plot.draw_point` draws (shares)."""
    return None if value is None else float(value) / 100


def _shares(ci: Sequence[float] | None) -> list[float | None] | None:
    return None if ci is None else [_share(b) for b in ci]


def comparison_figure(before: Mapping[str, Any], after: Mapping[str, Any], names: Sequence[str]) -> Figure:
    """The figure described in :data:`CAPTION`, of ``before`` and ``after`` (WinoMT ``metrics.json`` by language)."""
    langs = sorted(set(before) & set(after))
    fig = Figure(figsize=(max(7.5, 3.0 + 2.4 * len(langs)), 3.9), layout="constrained")
    diff_ax, acc_ax = fig.subplots(1, 2)
    labels = [f"{lang} {d}" for lang in langs for d in ("ΔG", "ΔS")]
    x = categories(diff_ax, labels)
    values = [m[lang].get(k) for lang in langs for k in ("delta_g", "delta_s") for m in (before, after)]
    cis = [m[lang].get(f"{k}_ci95") for lang in langs for k in ("delta_g", "delta_s") for m in (before, after)]
    diff_ax.set_ylim(*gap_limits([v for v in values if v is not None], cis))
    diff_ax.axhline(0.0, color=INK, linewidth=0.9)
    for xi, (lang, key) in zip(x, ((lang, k) for lang in langs for k in ("delta_g", "delta_s"))):
        for system, m in enumerate((before, after)):
            value, ci = _share(m[lang].get(key)), _shares(m[lang].get(f"{key}_ci95"))
            label = names[system] if xi == 0 else None
            draw_point(diff_ax, xi + (system - 0.5) * 0.3, value, ci, INK, system, label)
    diff_ax.set_ylabel("points")
    diff_ax.set_title("ΔG and ΔS with 95% CI", fontsize=10)
    x = categories(acc_ax, langs)
    series = [(g, c, s) for g, c in (("female", FEMININE_COLOUR), ("male", MASCULINE_COLOUR)) for s in (0, 1)]
    for k, (gold, colour, system) in enumerate(series):
        for xi, lang in zip(x, langs):
            found = (before, after)[system][lang].get("by_gold", {}).get(gold, {})
            value, ci = _share(found.get("accuracy")), _shares(found.get("accuracy_ci95"))
            label = f"{gold} gold, {names[system]}" if xi == 0 else None
            draw_point(acc_ax, xi + (k - 1.5) * 0.17, value, ci, colour, system, label)
    acc_ax.set_ylim(-3.0, 103.0)
    acc_ax.set_ylabel("accuracy, %")
    acc_ax.set_title("Accuracy per gold gender with 95% CI", fontsize=10)
    for ax in (diff_ax, acc_ax):
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncols=2, frameon=False)
    return fig


def comparison_figures(before: Mapping[str, Any], after: Mapping[str, Any], names: Sequence[str]) -> dict[str, bytes]:
    """:func:`comparison_figure` as SVG, PDF and PNG (:func:`bias_eval.core.plots.render`)."""
    return render(comparison_figure(before, after, names))
