"""The verdict of a gender-bias mitigation: the gender figures of the start and the mitigated model on pairs never
trained on nor used to choose the checkpoint (from their two ``bias_eval`` reports and the paired tests of their
comparison), the general BLEU/chrF cost on the general test split (paired bootstrap), over-correction, and the
leakage of the mitigation data into the verdict's pairs (shared sentences, shared gendered words); as
``verdict.json`` and a markdown page."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from bias_eval.balance import over_correction
from bias_eval.bootstrap import language_rng, resample_counts
from bias_eval.markdown import table
from bias_eval.metrics import accuracy_words, bleu_from_stats, bleu_stats, chrf_from_stats, chrf_stats
from bias_eval.paired import compare_figure, corpus_figure

SAMPLES, SEED, LEVEL = 1000, 12345, 0.05
#: the figures of the verdict, per language and overall (key, label); gaps are masculine - feminine
FIGURES = (
    ("accuracy_feminine", "accuracy f"),
    ("accuracy_masculine", "accuracy m"),
    ("accuracy_pair", "accuracy pair"),
    ("strict_accuracy_feminine", "strict accuracy f"),
    ("strict_accuracy_masculine", "strict accuracy m"),
    ("accuracy_gap", "accuracy gap m-f"),
    ("strict_accuracy_gap", "strict accuracy gap m-f"),
    ("bleu_gap", "BLEU gap m-f"),
    ("mf_ratio", "M:F predictions"),
)


def general_cost(before: Sequence[Mapping], after: Sequence[Mapping], samples: int = SAMPLES, seed: int = SEED) -> dict:
    """BLEU and chrF of two systems' translations of the same rows (``target``, ``hypothesis``), their change, its
    paired-bootstrap 95% CI and p-value."""
    refs = [r["target"] for r in before]
    if refs != [r["target"] for r in after]:
        raise ValueError("the general cost needs both systems' translations of the same sentences")
    counts = {"all": resample_counts(language_rng(seed, "general"), len(refs), samples)}
    out: dict[str, Any] = {"n": len(refs), "samples": samples, "seed": seed}
    for name, stats, scorer in (("bleu", bleu_stats, bleu_from_stats), ("chrf", chrf_stats, chrf_from_stats)):
        figs = [
            corpus_figure({"all": stats([r["hypothesis"] for r in rows], refs)}, scorer) for rows in (before, after)
        ]
        change = compare_figure(*figs, {"all": len(refs)}, counts)
        out[name] = {"before": change.before, "after": change.after, "change": change.change}
        out[name] |= {"ci95": change.ci95, "p_value": change.p_value}
    return out


def _gendered_words(row: Mapping[str, Any]) -> set[str]:
    """The words of a row's reference that its counterfactual lacks: the words that carry its gender."""
    return accuracy_words(row["target"]) - accuracy_words(row.get("counterfactual") or "")


def leakage(tuning: Sequence[Mapping[str, Any]], verdict: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What the verdict's rows share with the mitigation data: the same source sentences (or references), and
    gendered words all seen in the mitigation data's references (a profession tuned on is easier to get right)."""
    sources, references = {r["source"] for r in tuning}, {r["target"] for r in tuning}
    shared = [r["source"] for r in verdict if r["source"] in sources or r["target"] in references]
    seen = set().union(*(accuracy_words(r["target"]) for r in tuning)) if tuning else set()
    words = [_gendered_words(r) for r in verdict]
    with_words = [w for w in words if w]
    covered = [w for w in with_words if w <= seen]
    common = Counter(x for w in covered for x in w).most_common(10)
    return {
        "verdict_sentences": len(verdict),
        "shared_sentences": len(shared),
        "shared_examples": shared[:5],
        "sentences_with_gendered_words": len(with_words),
        "gendered_words_all_tuned": len(covered),
        "gendered_words_all_tuned_share": len(covered) / len(with_words) if with_words else None,
        "most_common_tuned_gendered_words": [word for word, _ in common],
        "found": bool(shared),
    }


def _scope(name: str, before: Mapping, after: Mapping, rows: Sequence[Mapping]) -> dict[str, Any]:
    """The verdict's figures of one language (or ``macro``): before and after with their CIs, and the paired test
    of the change (``rows`` of that language)."""
    paired = {r["figure"]: r for r in rows if r.get("lang") == name and "missing" not in r}
    out: dict[str, Any] = {}
    for key, label in FIGURES:
        entry = {"label": label, "before": before.get(key), "before_ci95": before.get(f"{key}_ci95")}
        entry |= {"after": after.get(key), "after_ci95": after.get(f"{key}_ci95")}
        if entry["before"] is not None and entry["after"] is not None:
            entry["change"] = entry["after"] - entry["before"]
        if key in paired:
            test = paired[key]
            entry |= {"change_ci95": test["ci95"], "p_value": test["p_value"], "test": test["test"]}
        out[key] = entry
    gap = out["accuracy_gap"]
    narrowed = "p_value" in gap and gap["p_value"] < LEVEL and abs(gap["after"]) < abs(gap["before"])
    out["accuracy_gap_narrowed"] = bool(narrowed)
    key = "accuracy_masculine" if (gap["before"] or 0) > 0 else "accuracy_feminine"  # the better-served gender's
    fell = narrowed and out[key].get("p_value", 1.0) < LEVEL and (out[key].get("change") or 0.0) < 0
    out["levelled_down"] = key if fell else None  # the gap narrowed by that accuracy falling beyond noise
    return out


def verdict_document(
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    paired: Mapping[str, Any],
    cost: Mapping[str, Any] | None,
    leak: Mapping[str, Any],
    budget: Mapping[str, Any],
) -> dict[str, Any]:
    """``verdict.json``: ``before``/``after`` are the two reports' ``metrics.json``, ``paired`` the comparison's
    paired tests, ``cost`` :func:`general_cost`, ``leak`` :func:`leakage`, ``budget`` the selection's BLEU budget."""
    rows = paired.get("rows") or []
    langs = sorted(set(before["languages"]) & set(after["languages"]))
    scopes = {lang: _scope(lang, before["languages"][lang], after["languages"][lang], rows) for lang in langs}
    # several languages: the macro averages, with the comparison's macro rows (the paired bootstrap of the mean)
    overall = {**scopes[langs[0]]} if len(langs) == 1 else _scope("macro", before["macro"], after["macro"], rows)
    doc = {"languages": scopes, "overall": overall, "general_cost": cost, "budget": dict(budget)}
    doc |= {"over_correction": over_correction(after), "leakage": dict(leak), "paired_refused": paired.get("refused")}
    doc["summary"] = summary(doc)
    return doc


def _share(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def summary(doc: Mapping[str, Any]) -> str:
    """One paragraph: the gap before and after, whether it narrowed beyond noise, the general cost, the flags."""
    gap = doc["overall"]["accuracy_gap"]
    parts = []
    if gap["before"] is not None and gap["after"] is not None:
        ci = gap.get("change_ci95")
        said = f" (change {100 * gap['change']:+.1f} points, 95% CI [{100 * ci[0]:+.1f}, {100 * ci[1]:+.1f}], " \
            f"p = {gap['p_value']:.3g})" if ci else ""  # fmt: skip
        verdict = "narrowed beyond noise" if doc["overall"]["accuracy_gap_narrowed"] else "did not narrow beyond noise"
        parts.append(f"The accuracy gap (m - f) went from {_fmt('accuracy_gap', gap['before'])} to "
                     f"{_fmt('accuracy_gap', gap['after'])}{said}: "
                     f"{verdict}.")  # fmt: skip
    if doc["overall"].get("levelled_down"):
        fell = doc["overall"][doc["overall"]["levelled_down"]]
        parts.append(f"Levelling down: {fell['label']} fell {100 * -fell['change']:.1f} points beyond noise "
                     f"(p = {fell['p_value']:.3g}); the gap closed from that side.")  # fmt: skip
    cost = doc.get("general_cost")
    if cost:
        b = cost["bleu"]
        parts.append(f"General test BLEU {b['before']:.2f} -> {b['after']:.2f} ({b['change']:+.2f}, 95% CI "
                     f"[{b['ci95'][0]:+.2f}, {b['ci95'][1]:+.2f}]).")  # fmt: skip
    if doc.get("over_correction"):
        parts.append("Over-correction flagged: " + doc["over_correction"]["message"] + ".")
    leak = doc["leakage"]
    if leak["found"]:
        parts.append(f"Leakage: {leak['shared_sentences']} verdict sentences are in the mitigation data.")
    share = leak.get("gendered_words_all_tuned_share")
    if share:
        parts.append(f"{_share(share)} of the verdict's sentences have gendered words all seen in the mitigation data.")
    return " ".join(parts)


def _fmt(key: str, value: Any) -> str:
    if value is None:
        return "n/a"
    if key in ("bleu_gap", "mf_ratio"):
        return f"{value:+.2f}" if key == "bleu_gap" else f"{value:.2f}"
    return f"{100 * value:+.1f} pts" if key.endswith("_gap") else f"{100 * value:.1f}%"


def _ci(key: str, ci: Sequence[float] | None) -> str:
    return "" if not ci else f" [{_fmt(key, ci[0])}, {_fmt(key, ci[1])}]"


def _delta(key: str, value: float | None) -> str:
    """A change: points for a share, the figure's own unit otherwise."""
    if value is None:
        return "n/a"
    return f"{value:+.2f}" if key in ("bleu_gap", "mf_ratio") else f"{100 * value:+.1f} pts"


def _table(figures: Mapping[str, Any], header: Sequence[str]) -> list[str]:
    rows = []
    for key, _ in FIGURES:
        e = figures[key]
        ci = e.get("change_ci95")
        cells = [e["label"], _fmt(key, e["before"]) + _ci(key, e["before_ci95"])]
        cells += [_fmt(key, e["after"]) + _ci(key, e["after_ci95"]), _delta(key, e.get("change"))]
        cells += [f"[{_delta(key, ci[0])}, {_delta(key, ci[1])}]" if ci else "n/a"]
        cells += [f"{e['p_value']:.3g} ({e['test']})" if "p_value" in e else "n/a"]
        rows.append(cells)
    return table(header, rows, right_from=1) + [""]


def render_markdown(doc: Mapping[str, Any], names: Sequence[str] = ("start", "mitigated")) -> str:
    """The verdict's page: the summary, one table per language and overall, the cost, the budget and the checks."""
    out = ["# Gender-bias mitigation: verdict", "", doc["summary"], ""]
    header = ["figure", f"{names[0]} [95% CI]", f"{names[1]} [95% CI]", "change", "95% CI of change", "p (paired)"]
    langs = list(doc["languages"])
    for lang in langs:
        out += [f"## {lang}" + (" (one language: also the overall figures)" if len(langs) == 1 else ""), ""]
        out += _table(doc["languages"][lang], header)
    if len(langs) > 1:
        out += ["## overall (macro average over the languages)", "", *_table(doc["overall"], header)]
    cost, budget, leak = doc.get("general_cost"), doc["budget"], doc["leakage"]
    if cost:
        out += ["## General quality cost (general test split)", ""]
        for name in ("bleu", "chrf"):
            c = cost[name]
            out.append(
                f"- {name}: {c['before']:.2f} -> {c['after']:.2f} ({c['change']:+.2f}, 95% CI "
                f"[{c['ci95'][0]:+.2f}, {c['ci95'][1]:+.2f}], p = {c['p_value']:.3g}; {cost['n']} sentences)"
            )
        out.append("")
    start, chosen = budget.get("start_valid_general_bleu"), budget.get("chosen_valid_general_bleu")
    out += ["## Checkpoint selection (selection pairs and general validation split)", ""]
    if start is not None:
        out.append(f"- general validation BLEU at the start (update 0): {start:.2f}; budget: at least "
                   f"{start - budget['max_bleu_drop']:.2f} (--max_bleu_drop {budget['max_bleu_drop']})")  # fmt: skip
    if chosen is not None:
        out.append(f"- kept: update {budget['chosen_step']}, general validation BLEU {chosen:.2f}")
    kept = budget.get("within_budget_steps") or []
    out += [f"- within the budget: {len(kept)} of {budget.get('evaluations')} evaluations", ""]
    out += ["## Checks", "", f"- over-correction: {(doc.get('over_correction') or {}).get('message', 'not flagged')}"]
    out.append(
        f"- leakage: {leak['shared_sentences']} of {leak['verdict_sentences']} verdict sentences in the "
        f"mitigation data; {leak['gendered_words_all_tuned']} of {leak['sentences_with_gendered_words']} "
        "with gendered words have them all in the mitigation data (most common: "
        f"{', '.join(leak['most_common_tuned_gendered_words']) or 'none'})"
    )
    if doc.get("paired_refused"):
        out.append(f"- paired tests not run: {doc['paired_refused']}")
    return "\n".join(out) + "\n"


def within_budget(bleu: float, start: float, max_drop: float) -> bool:
    """Whether a general validation BLEU keeps a mitigation's budget: at most ``max_drop`` below the start's."""
    return bleu >= start - max_drop - 1e-9


def selection_budget(records: Sequence[Mapping[str, Any]], best_step: int | None, max_drop: float) -> dict[str, Any]:
    """The BLEU budget of the checkpoint choice from ``metrics.jsonl``'s records."""
    general = {r["step"]: r["valid_general_bleu"] for r in records if "valid_general_bleu" in r}
    start = general.get(0)
    kept = sorted(s for s, b in general.items() if start is not None and within_budget(b, start, max_drop))
    return {
        "start_valid_general_bleu": start,
        "max_bleu_drop": max_drop,
        "chosen_step": best_step,
        "chosen_valid_general_bleu": general.get(best_step),
        "evaluations": len(general),
        "within_budget_steps": kept,
        "valid_general_bleu_by_step": {str(k): v for k, v in sorted(general.items())},
    }
