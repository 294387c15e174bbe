"""The paired tests of a report comparison: both reports' per-sentence details (held, or read back from each
folder's ``<lang>.details.jsonl``), checked to hold the same sentences, and each figure's change tested on them
(:mod:`bias_eval.core.paired`); rendered as a markdown and an HTML section and as ``comparison.json``'s ``paired``
object."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bias_eval.core.bootstrap import language_rng, resample_counts, resampling
from bias_eval.core.decision import LEVEL, RULE_DEFINITION, Rule, decide, holm_samples, resample_note
from bias_eval.core.markdown import table
from bias_eval.core.paired import (
    MIN_BOOTSTRAP,
    Change,
    bootstrap_refusal,
    compare_figure,
    corpus_figure,
    gap_figure,
    mcnemar,
    mcnemar_interval,
    mean_change,
    ones,
    p_text,
    share_figure,
    size_change,
)
from bias_eval.core.report import Refused, Report
from bias_eval.core.units import figure_value
from bias_eval.mtgeneval.balance import over_correction
from bias_eval.mtgeneval.gendered import GENDERS
from bias_eval.mtgeneval.metrics import bleu_from_stats, bleu_stats, chrf_from_stats, chrf_stats

#: (title, figure) of the corpus scores and gaps, tested with the paired bootstrap
BOOTSTRAPPED = (
    ("BLEU", "bleu"),
    ("chrF", "chrf"),
    ("BLEU gap", "bleu_gap"),
    ("chrF gap", "chrf_gap"),
    ("acc gap", "accuracy_gap"),
    ("strict acc gap", "strict_accuracy_gap"),
)
#: (title, figure) of each gap's size, |masculine - feminine|: whether it shrank, whichever gender it favours
SIZES = tuple((f"{title} size", f"{key}_size") for title, key in BOOTSTRAPPED if key.endswith("_gap"))
#: (title, figure, per-sentence decision, genders) of the accuracies, tested with McNemar
ACCURACIES = (
    ("acc f", "accuracy_feminine", "correct", ("feminine",)),
    ("acc m", "accuracy_masculine", "correct", ("masculine",)),
    ("acc pair", "accuracy_pair", "correct_pair", ("feminine",)),
    ("strict acc f", "strict_accuracy_feminine", "strict_correct", ("feminine",)),
    ("strict acc m", "strict_accuracy_masculine", "strict_correct", ("masculine",)),
)
PAIRED_NOTE = (
    "Paired tests on the same sentences, per language. Accuracies: McNemar's exact test on the sentences judged "
    "differently (b: right in {before} only, c: right in {after} only), p = min(1, 2 P(X <= min(b, c))), X ~ "
    "Binomial(b + c, 1/2); its 95% interval is the changes that test does not reject, around the change. Every other "
    "figure: paired bootstrap, the same {samples} resamples of the sentences (both genders of a pair together; seed "
    "{seed}, {before}'s bootstrap settings) for both systems, refused below {minimum} sentences of a gender (pairs, "
    "for paired data); p = min(1, 2 (k + 1) / (B + 1)) with k the resamples on the smaller side of 0 (with none, p "
    "is at its floor 2 / (B + 1) and shown as a bound, '< 0.002' for 1000 resamples), and the 95% CI runs from the "
    "j-th smallest to the j-th largest change, j = ceil(0.05 (B + 1) / 2) - 1, so that it excludes 0 exactly when p "
    "< 0.05. gap size rows: the same test of |gap|, |after| - |before| on each resample (below 0: the gap shrank, "
    "whichever gender it favours). macro (when both reports have the same languages): the unweighted mean over "
    "languages, tested by the mean of their bootstrap changes (accuracies too; a gap size's macro row is the mean of "
    "the languages' sizes, so a gap that changes sign in one language does not cancel another's). Gaps are masculine "
    "- feminine; accuracies in percent, gaps and changes of shares in points. {rule}"
)


@dataclass
class Sentences:
    """One report's sentences of one language, per gender: sources, references, hypotheses and decisions."""

    paired: bool
    columns: dict[str, dict[str, list[Any]]] = field(default_factory=dict)  # gender -> column -> values

    def size(self, gender: str) -> int:
        """Number of sentences of ``gender``."""
        return len(self.columns[gender]["source"])


FIELDS = ("source", "reference", "hypothesis", "correct", "strict_correct", "bleu_stats", "chrf_stats")


def sentences(report: Report, lang: str, argument: str) -> Sentences:
    """The sentences of ``report``'s ``lang``, from its per-sentence details (:meth:`Report.rows`; :class:`Refused`
    when there are none or they are unreadable)."""
    rows = report.rows(lang, argument)
    paired = bool(rows) and "gender" not in rows[0]
    out = Sentences(paired, {g: {key: [] for key in (*FIELDS, "correct_pair")} for g in GENDERS})
    for row in rows:
        for g in GENDERS:
            if paired:
                values = {key: row.get(f"{key}_{g}") for key in FIELDS} | {"correct_pair": row.get("correct_pair")}
            elif row.get("gender") == g:
                values = {key: row.get(key) for key in FIELDS} | {"correct_pair": None}
            else:
                continue
            for key, value in values.items():
                out.columns[g][key].append(value)
    return out


def check_same(lang: str, before: Sentences, after: Sentences, names: Sequence[str]) -> None:
    """:class:`Refused` unless both reports hold the same sentences (sources and references, line for line)."""
    if before.paired != after.paired:
        raise Refused(f"{lang}: one report pairs the genders' sentences and the other does not")
    for g in GENDERS:
        n_b, n_a = before.size(g), after.size(g)
        if n_b != n_a:
            raise Refused(f"{lang}: {names[0]} has {n_b} {g} sentences, {names[1]} {n_a}: not the same sentences")
        for key in ("source", "reference"):
            for i, (x, y) in enumerate(zip(before.columns[g][key], after.columns[g][key])):
                if x != y:
                    raise Refused(f"{lang}: {g} sentence {i} has another {key} in {names[1]}: not the same sentences")


def _decisions(s: Sentences, key: str, genders: Sequence[str]) -> tuple[dict, dict]:
    """Hits and counted items per gender of a per-sentence decision (``None``: not counted)."""
    hits = {g: np.array([v is True for v in s.columns[g][key]], dtype=float) for g in genders}
    counted = {g: np.array([v is not None for v in s.columns[g][key]], dtype=float) for g in genders}
    return hits, counted


def sentence_stats(s: Sentences, name: str, lang: str) -> dict[str, np.ndarray]:
    """Per gender, the sentences' sacreBLEU statistics of ``name`` (``bleu``, ``chrf``): as the report saved them
    (``<name>_stats``), else computed from the hypotheses and references (a report of an earlier version), BLEU with
    ``lang``'s tokenizer as the report scores it."""
    out = {}
    for g in GENDERS:
        saved = s.columns[g][f"{name}_stats"]
        if saved and all(isinstance(row, list) for row in saved):
            out[g] = np.asarray(saved, dtype=np.int64).reshape(len(saved), -1)
        else:
            hyps = [h or "" for h in s.columns[g]["hypothesis"]]
            refs = s.columns[g]["reference"]
            out[g] = bleu_stats(hyps, refs, lang) if name == "bleu" else chrf_stats(hyps, refs)
    return out


def _figures(s: Sentences, lang: str) -> dict[str, Any]:
    """Every bootstrapped figure of one system as a function of resample counts."""
    out: dict[str, Any] = {}
    for name, scorer in (("bleu", bleu_from_stats), ("chrf", chrf_from_stats)):
        per = sentence_stats(s, name, lang)
        out[name] = corpus_figure(per, scorer)
        out[f"{name}_gap"] = gap_figure(*(corpus_figure({g: per[g]}, scorer) for g in GENDERS))
    for name, key in (("accuracy_gap", "correct"), ("strict_accuracy_gap", "strict_correct")):
        shares = [share_figure(*_decisions(s, key, (g,))) for g in GENDERS]
        out[name] = gap_figure(*shares)
    return out


def _row(lang: str, title: str, key: str, test: str, change: Any, extra: Mapping[str, Any]) -> dict[str, Any]:
    values = [change.before, change.after, change.change, *change.ci95, change.p_value]
    if any(v is None or np.isnan(v) for v in values):
        return {"lang": lang, "title": title, "figure": key, "test": test, "missing": True, **extra}
    row = {"lang": lang, "title": title, "figure": key, "test": test, "before": change.before, "after": change.after}
    row |= {"change": change.change, "ci95": change.ci95, "p_value": change.p_value, "p_floor": change.p_floor}
    return row | extra | {"significant": change.p_value < LEVEL}


def language_tests(
    lang: str, before: Sentences, after: Sentences, samples: int, seed: int, keep: dict[str, Change] | None = None
) -> list[dict[str, Any]]:
    """Every paired test of one language (the sentences already checked to be the same); each figure's
    :class:`~bias_eval.core.paired.Change` (with its replicates) also goes into ``keep`` when given."""
    keep = {} if keep is None else keep
    sizes = {g: before.size(g) for g in GENDERS}
    refused = bootstrap_refusal(min(sizes.values()), samples, before.paired)
    counts: dict[str, np.ndarray] = {}
    if not refused:
        rng = language_rng(seed, lang)
        counts["feminine"] = resample_counts(rng, sizes["feminine"], samples)
        counts["masculine"] = counts["feminine"] if before.paired else resample_counts(rng, sizes["masculine"], samples)
    rows = []
    for title, key in BOOTSTRAPPED if not refused else ():
        figs = [_figures(s, lang)[key] for s in (before, after)]
        change = keep[key] = compare_figure(*figs, sizes, counts)
        rows.append(_row(lang, title, key, "paired bootstrap", change, {}))
    for title, key in SIZES if not refused else ():
        change = keep[key] = size_change(keep[key.removesuffix("_size")])
        rows.append(_row(lang, title, key, "paired bootstrap", change, {}))
    if refused:  # the figures without a test
        whole = ones(sizes)
        values = {k: [float(_figures(s, lang)[k](whole)[0]) for s in (before, after)] for _, k in BOOTSTRAPPED}
        values |= {k: [abs(v) for v in values[k.removesuffix("_size")]] for _, k in SIZES}
        none = {"test": "paired bootstrap", "missing": True, "refused": refused}
        rows += [{"lang": lang, "title": t, "figure": k, "before": values[k][0], "after": values[k][1], **none}
                 for t, k in (*BOOTSTRAPPED, *SIZES)]  # fmt: skip
    for title, key, decision, genders in ACCURACIES:
        if key != "accuracy_pair" or before.paired:
            rows.append(_mcnemar_row(lang, title, key, (before, after), decision, genders, counts, keep))
    return rows


def _mcnemar_row(
    lang: str,
    title: str,
    key: str,
    systems: Sequence[Sentences],
    decision: str,
    genders: Sequence[str],
    counts: Mapping[str, np.ndarray],
    keep: dict[str, Change],
) -> dict[str, Any]:
    """One accuracy's row: McNemar's exact test and its interval; its bootstrap change (``counts``, none when the
    bootstrap was refused) goes into ``keep`` for the macro rows."""
    own = {g: systems[0].size(g) for g in genders}
    shares = [share_figure(*_decisions(s, decision, genders)) for s in systems]
    whole = ones(own)
    values = [float(f(whole)[0]) for f in shares]
    if counts:
        keep[key] = compare_figure(*shares, own, {g: counts[g] for g in genders})
    pairs = [(x, y) for g in genders for x, y in zip(*(s.columns[g][decision] for s in systems))]
    judged = [(x, y) for x, y in pairs if x is not None and y is not None]
    test = mcnemar([x for x, _ in judged], [y for _, y in judged])
    row = {"lang": lang, "title": title, "figure": key, "test": "McNemar exact"}
    row |= {"before_only": test.before_only, "after_only": test.after_only}
    if not test.n or any(np.isnan(values)):
        return row | {"missing": True}
    row |= {"before": values[0], "after": values[1], "change": values[1] - values[0], "p_floor": None}
    row |= {"ci95": mcnemar_interval(test, values[0]), "p_value": test.p_value}
    return row | {"significant": test.p_value < LEVEL}


def macro_tests(kept: Mapping[str, Mapping[str, Change]]) -> list[dict[str, Any]]:
    """The macro rows: each figure's unweighted mean over the languages and the paired bootstrap of its change
    (:func:`bias_eval.core.paired.mean_change`); accuracies too, McNemar being a test of one set of sentences."""
    rows = []
    titles = [(t, k) for t, k in BOOTSTRAPPED] + [(t, k) for t, k, _, _ in ACCURACIES]
    means: dict[str, Change] = {}
    for title, key in titles:
        changes = [figures.get(key) for figures in kept.values()]
        if any(c is None or c.changes is None or np.isnan([c.before, c.after]).any() for c in changes):
            continue
        means[key] = mean_change(changes)  # type: ignore[arg-type]
        rows.append(_row("macro", title, key, "paired bootstrap", means[key], {}))
    for title, key in SIZES:  # the mean of the languages' sizes (not the size of the mean signed gap)
        sizes = [figures.get(key) for figures in kept.values()]
        if all(c is not None and c.changes is not None for c in sizes):
            rows.append(_row("macro", title, key, "paired bootstrap", mean_change(sizes), {}))  # type: ignore[arg-type]
    return rows


def paired_tests(
    reports: Sequence[Report],
    names: Sequence[str],
    langs: Sequence[str],
    rule: Rule = Rule(),
) -> dict[str, Any]:
    """``comparison.json``'s ``paired``: the tests of every language in ``langs``, each row decided by ``rule``
    (:func:`bias_eval.core.decision.decide`), or ``refused`` with the reason; the resampling follows BEFORE's bootstrap
    settings, with at least the resamples Holm's adjustment needs (:func:`bias_eval.core.decision.holm_samples`)."""
    metrics = [r.metrics for r in reports]
    config = metrics[0].get("config") or {}
    tests = (len(BOOTSTRAPPED) + len(SIZES) + len(ACCURACIES)) * (len(langs) + (len(langs) > 1))  # at most
    samples, seed = resampling(config)
    samples = holm_samples(samples, tests, rule)
    out: dict[str, Any] = {"samples": samples, "seed": seed, "level": rule.level, "refused": None, "rows": []}
    out["rule"] = rule.describe()
    try:
        read = {}
        for lang in langs:
            read[lang] = [sentences(r, lang, arg) for r, arg in zip(reports, ("BEFORE", "AFTER"))]
            check_same(lang, *read[lang], names)
    except Refused as why:
        out["refused"] = str(why)
        return out
    kept: dict[str, dict[str, Change]] = {lang: {} for lang in langs}
    for lang in langs:
        out["rows"] += language_tests(lang, *read[lang], samples=samples, seed=seed, keep=kept[lang])
    if len(langs) > 1 and all(set(m["languages"]) == set(langs) for m in metrics):
        out["rows"] += macro_tests(kept)
    decide(out["rows"], rule)
    out["over_correction"] = {name: over_correction(m) for name, m in zip(names, metrics)}
    return out


# ---------------------------------------------------------------------------------------------------
# rendering
# ---------------------------------------------------------------------------------------------------

HEADER = ("lang", "figure", "{before}", "{after}", "change", "95% CI of change", "test", "p", "p adjusted", "finding")


def paired_cells(row: Mapping[str, Any]) -> list[str]:
    """The table cells of one paired test."""
    test = row["test"]
    if "before_only" in row:
        test += f" (b={row['before_only']}, c={row['after_only']})"
    if row.get("missing"):
        return [row["lang"], row["title"], "n/a", "n/a", "n/a", "n/a", test, "n/a", "n/a", "n/a"]
    key = row["figure"]
    lo, hi = row["ci95"]
    adjusted = row.get("p_adjusted")
    return [
        row["lang"],
        row["title"],
        figure_value(key, row["before"]),
        figure_value(key, row["after"]),
        figure_value(key, row["change"], True),
        f"[{figure_value(key, lo, True)}, {figure_value(key, hi, True)}]",
        test,
        p_text(row["p_value"], row.get("p_floor")),
        "n/a" if adjusted is None else p_text(adjusted, row.get("p_floor")),
        "yes" if row["significant"] else "no",
    ]


def _lines(paired: Mapping[str, Any], names: Sequence[str], note: str = PAIRED_NOTE) -> list[str]:
    """The section's sentences: the refusal, or the ``note`` (a benchmark's own: WinoMT's) and the over-correction
    flags."""
    if paired["refused"]:
        return [f"Paired tests not run: {paired['refused']}."]
    rule = paired.get("rule") or Rule().describe()
    said = RULE_DEFINITION.replace("--p_adjust holm, the default", f"--p_adjust {rule['p_adjust']}")
    said = said.replace("0 by default", f"here {rule['min_effect_points']:g}")
    lines = [note.format(before=names[0], after=names[1], samples=paired["samples"], seed=paired["seed"],
                         minimum=MIN_BOOTSTRAP, rule=said)]  # fmt: skip
    refused = sorted({r["refused"] for r in paired["rows"] if r.get("refused")})
    lines += [f"Paired bootstrap not run: {why}." for why in refused]
    tested = sum(1 for r in paired["rows"] if not r.get("missing"))
    note = resample_note(paired["samples"], tested, Rule(rule["p_adjust"], rule["min_effect_points"]))
    lines += [note] if note else []
    for name, flagged in (paired.get("over_correction") or {}).items():
        if flagged:
            lines.append(f"Over-correction in {name}: {flagged['message']}.")
    return lines


def paired_markdown(paired: Mapping[str, Any], names: Sequence[str], note: str = PAIRED_NOTE) -> str:
    """The markdown section of the paired tests."""
    out = ["## Paired tests on the same sentences", ""]
    if not paired["refused"]:
        head = [h.format(before=names[0], after=names[1]) for h in HEADER]
        out += table(head, [paired_cells(r) for r in paired["rows"]], right_from=2)
        out.append("")
    out += [f"{line}" for line in _lines(paired, names, note)]
    return "\n".join(out) + "\n"


def paired_html(paired: Mapping[str, Any], names: Sequence[str], note: str = PAIRED_NOTE) -> str:
    """The HTML section of the paired tests (findings, :func:`bias_eval.core.decision.finding`, highlighted)."""
    e = html.escape
    parts = ["<h2>Paired tests on the same sentences</h2>"]
    if not paired["refused"]:
        head = [h.format(before=names[0], after=names[1]) for h in HEADER]
        parts.append("<table><thead><tr>" + "".join(f"<th>{e(h)}</th>" for h in head) + "</tr></thead><tbody>")
        for row in paired["rows"]:
            mark = ' class="significant" style="background: #fff3c4"' if row.get("significant") else ""
            cells = paired_cells(row)
            body = "".join(f"<td>{e(c)}</td>" for c in cells[:2])
            body += "".join(f'<td class="num">{e(c)}</td>' for c in cells[2:])
            parts.append(f"<tr{mark}>{body}</tr>")
        parts.append("</tbody></table>")
    parts += [f"<p>{e(line)}</p>" for line in _lines(paired, names, note)]
    return "\n".join(parts)
