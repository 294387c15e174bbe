"""The verdict of a gender-bias mitigation: the gender figures of the start and the mitigated model on pairs never
trained on nor used to choose the checkpoint (from their two ``bias_eval`` reports and the paired tests of their
comparison), the general BLEU/chrF cost on the general test split (paired bootstrap), over-correction, and the
leakage of the mitigation data into the verdict's pairs (shared sentences, shared gendered words); as
``verdict.json`` and a markdown page."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from bias_eval.bleu import TOKENIZER_RULE, bleu_signatures
from bias_eval.bootstrap import language_rng, resample_counts
from bias_eval.comparability import generation_setting
from bias_eval.markdown import table
from bias_eval.metrics import accuracy_words, bleu_from_stats, bleu_stats, chrf_from_stats, chrf_stats
from bias_eval.paired import compare_figure, corpus_figure, p_text

SAMPLES, SEED, LEVEL = 1000, 12345, 0.05
#: the figures of the verdict, per language and overall (key, label); gaps are masculine - feminine
FIGURES = (
    ("accuracy_feminine", "accuracy f"),
    ("accuracy_masculine", "accuracy m"),
    ("accuracy_pair", "accuracy pair"),
    ("strict_accuracy_feminine", "strict accuracy f"),
    ("strict_accuracy_masculine", "strict accuracy m"),
    ("accuracy_gap", "accuracy gap m-f"),
    ("accuracy_gap_size", "accuracy gap size"),
    ("strict_accuracy_gap", "strict accuracy gap m-f"),
    ("bleu_gap", "BLEU gap m-f"),
    ("mf_ratio", "M:F predictions"),
)
#: what the verdict says of the accuracy gap, each outcome's sentence in docs/bias_mitigation.md
NO_TEST, OVER_CORRECTED, LEVELLED_DOWN, NARROWED, NOT_NARROWED = (
    "no test ran", "over-corrected", "levelled down", "narrowed", "did not narrow"
)  # fmt: skip


def general_cost(before: Sequence[Mapping], after: Sequence[Mapping], samples: int = SAMPLES, seed: int = SEED) -> dict:
    """BLEU and chrF of two systems' translations of the same rows (``target``, ``lang``, ``hypothesis``), their
    change, its paired-bootstrap 95% CI and p-value; BLEU with each row's target language's tokenizer."""
    refs = [r["target"] for r in before]
    if refs != [r["target"] for r in after]:
        raise ValueError("the general cost needs both systems' translations of the same sentences")
    if any(not r.get("lang") for r in before):
        raise ValueError("the general cost needs each row's target language (lang), which its BLEU is tokenized for")
    langs = [r["lang"] for r in before]
    counts = {"all": resample_counts(language_rng(seed, "general"), len(refs), samples)}
    out: dict[str, Any] = {"n": len(refs), "samples": samples, "seed": seed, "bleu_tokenizer": TOKENIZER_RULE}
    out["bleu_signature"] = bleu_signatures(sorted(set(langs)))
    extract = {"bleu": lambda hyps: bleu_stats(hyps, refs, langs), "chrf": lambda hyps: chrf_stats(hyps, refs)}
    for name, scorer in (("bleu", bleu_from_stats), ("chrf", chrf_from_stats)):
        figs = [corpus_figure({"all": extract[name]([r["hypothesis"] for r in x])}, scorer) for x in (before, after)]
        change = compare_figure(*figs, {"all": len(refs)}, counts)
        out[name] = {"before": change.before, "after": change.after, "change": change.change}
        out[name] |= {"ci95": change.ci95, "p_value": change.p_value, "p_floor": change.p_floor}
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
    """The verdict's figures of one language (or ``macro``): before and after with their CIs, the paired test of
    each change (``rows`` of that language), and the accuracy gap's :func:`outcome`."""
    paired = {r["figure"]: r for r in rows if r.get("lang") == name and "missing" not in r}
    out: dict[str, Any] = {}
    for key, label in FIGURES:
        base = key.removesuffix("_size")
        b, a = before.get(base), after.get(base)
        if key != base:  # a gap's size: its CIs are the gap's, not the size's
            b, a = (None if v is None else abs(v) for v in (b, a))
        entry = {"label": label, "before": b, "before_ci95": None if key != base else before.get(f"{key}_ci95")}
        entry |= {"after": a, "after_ci95": None if key != base else after.get(f"{key}_ci95")}
        if entry["before"] is not None and entry["after"] is not None:
            entry["change"] = entry["after"] - entry["before"]
        if key in paired:
            test = paired[key]
            entry |= {"change_ci95": test["ci95"], "p_value": test["p_value"], "test": test["test"]}
            entry["p_floor"] = test.get("p_floor")
        out[key] = entry
    out["accuracy_gap_outcome"], out["levelled_down"] = outcome(out)
    out["accuracy_gap_narrowed"] = out["accuracy_gap_outcome"] in (NARROWED, LEVELLED_DOWN)
    return out


def outcome(figures: Mapping[str, Any]) -> tuple[str, str | None]:
    """What happened to the accuracy gap (see docs/bias_mitigation.md), and the accuracy that fell when it was
    levelled down: no test ran (no paired test of the gap's size), over-corrected (the gap changed sign and its
    after-interval lies on the other side of 0), narrowed (the 95% CI of |gap after| - |gap before| lies below 0;
    levelled down when the better-served gender's accuracy also fell beyond noise), else did not narrow."""
    gap, size = figures["accuracy_gap"], figures["accuracy_gap_size"]
    if gap["before"] is None or gap["after"] is None or "change_ci95" not in size:
        return NO_TEST, None
    ci = gap.get("after_ci95")
    if ci and ((gap["before"] > 0 and ci[1] < 0) or (gap["before"] < 0 and ci[0] > 0)):
        return OVER_CORRECTED, None
    if size["change_ci95"][1] >= 0:
        return NOT_NARROWED, None
    key = "accuracy_masculine" if gap["before"] > 0 else "accuracy_feminine"  # the better-served gender's
    fell = figures[key].get("p_value", 1.0) < LEVEL and (figures[key].get("change") or 0.0) < 0
    return (LEVELLED_DOWN, key) if fell else (NARROWED, None)


def verdict_document(
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    paired: Mapping[str, Any],
    cost: Mapping[str, Any] | None,
    leak: Mapping[str, Any],
    budget: Mapping[str, Any],
) -> dict[str, Any]:
    """``verdict.json``: ``before``/``after`` are the two reports' ``metrics.json`` (the over-correction flag is
    ``after``'s), ``paired`` the comparison's paired tests, ``cost`` :func:`general_cost`, ``leak``
    :func:`leakage`, ``budget`` the selection's BLEU budget."""
    rows = paired.get("rows") or []
    langs = sorted(set(before["languages"]) & set(after["languages"]))
    scopes = {lang: _scope(lang, before["languages"][lang], after["languages"][lang], rows) for lang in langs}
    # several languages: the macro averages, with the comparison's macro rows (the paired bootstrap of the mean)
    overall = {**scopes[langs[0]]} if len(langs) == 1 else _scope("macro", before["macro"], after["macro"], rows)
    doc = {"languages": scopes, "overall": overall, "general_cost": cost, "budget": dict(budget)}
    doc |= {"over_correction": after["over_correction"], "leakage": dict(leak), "paired_refused": paired.get("refused")}
    doc["decoding"] = decoding(before, after)
    doc["summary"] = summary(doc)
    return doc


def decoding(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """How the two reports decoded (their ``metrics.json``'s generation settings): ``same`` and the settings, or
    each report's when they differ (the verdict then says so)."""
    found = [((m.get("config") or {}).get("hypotheses") or {}).get("generation") for m in (before, after)]
    if found[0] == found[1]:
        return {"same": True, "settings": found[0]}
    return {"same": False, "before": found[0], "after": found[1]}


def describe_decoding(settings: Mapping[str, Any] | None) -> str:
    """One line of decoding settings (a report's ``generation``)."""
    if not settings:
        return "not recorded"
    prompt = f"prompt {settings['prompt']!r}" if settings.get("prompt") else "no prompt"
    mbr = f", MBR {settings['mbr']}" if settings.get("mbr") else ""
    return (
        f"beam {generation_setting(settings, 'num_beams')}, length penalty {settings['length_penalty']}, at most "
        f"{settings['max_new_tokens']} new tokens and {settings['max_len_a']} x source + {settings['max_len_b']}, "
        f"{prompt}, dtype {settings['dtype']}{mbr}"
    )


def _share(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _gap_sentence(doc: Mapping[str, Any]) -> str:
    """The accuracy gap before and after, its size's paired test and the outcome, in one sentence."""
    o = doc["overall"]
    gap, size, said = o["accuracy_gap"], o["accuracy_gap_size"], o["accuracy_gap_outcome"]
    went = f"The accuracy gap (m - f) went from {_fmt('accuracy_gap', gap['before'])} to " \
        f"{_fmt('accuracy_gap', gap['after'])}"  # fmt: skip
    if said == NO_TEST:
        why = doc.get("paired_refused") or "the paired test of its size gave no result"
        return f"{went}: no test ran ({why}), so nothing is claimed about the change."
    ci = size["change_ci95"]
    went += f" (its size |gap| changed {100 * size['change']:+.1f} points, 95% CI [{100 * ci[0]:+.1f}, " \
        f"{100 * ci[1]:+.1f}], p {_p(size)})"  # fmt: skip
    if said == OVER_CORRECTED:
        return f"{went}: over-corrected, the gap changed sign and its interval after lies on the other side of 0."
    verdict = {NARROWED: "narrowed beyond noise", LEVELLED_DOWN: "narrowed beyond noise, by levelling down"}
    return f"{went}: {verdict.get(said, 'did not narrow beyond noise')}."


def summary(doc: Mapping[str, Any]) -> str:
    """One paragraph: the gap before and after, its outcome, the general cost, the flags."""
    parts = [_gap_sentence(doc)]
    if doc["overall"].get("levelled_down"):
        fell = doc["overall"][doc["overall"]["levelled_down"]]
        parts.append(f"Levelling down: {fell['label']} fell {100 * -fell['change']:.1f} points beyond noise "
                     f"(p {_p(fell)}); the gap closed from that side.")  # fmt: skip
    cost = doc.get("general_cost")
    if cost:
        b = cost["bleu"]
        parts.append(f"General test BLEU {b['before']:.2f} -> {b['after']:.2f} ({b['change']:+.2f}, 95% CI "
                     f"[{b['ci95'][0]:+.2f}, {b['ci95'][1]:+.2f}]).")  # fmt: skip
    if not (doc.get("decoding") or {"same": True})["same"]:
        parts.append("The two models were decoded with different settings (see the page).")
    if doc.get("over_correction"):
        parts.append("Over-correction flagged: " + doc["over_correction"]["message"] + ".")
    leak = doc["leakage"]
    if leak["found"]:
        parts.append(f"Leakage: {leak['shared_sentences']} verdict sentences are in the mitigation data.")
    share = leak.get("gendered_words_all_tuned_share")
    if share:
        parts.append(f"{_share(share)} of the verdict's sentences have gendered words all seen in the mitigation data.")
    return " ".join(parts)


def _p(figure: Mapping[str, Any]) -> str:
    """``= 0.0312`` or, at the bootstrap's floor, ``< 0.002`` (:func:`bias_eval.paired.p_text`)."""
    text = p_text(figure["p_value"], figure.get("p_floor"))
    return text if text.startswith("<") else f"= {text}"


def _fmt(key: str, value: Any) -> str:
    if value is None:
        return "n/a"
    if key in ("bleu_gap", "mf_ratio"):
        return f"{value:+.2f}" if key == "bleu_gap" else f"{value:.2f}"
    if key.endswith("_size"):
        return f"{100 * value:.1f} pts"
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
        cells += [f"{p_text(e['p_value'], e.get('p_floor'))} ({e['test']})" if "p_value" in e else "n/a"]
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
    out += ["## Decoding (both models)", ""]
    dec = doc.get("decoding") or {"same": True, "settings": None}
    if dec["same"]:
        out += [f"- {names[0]} and {names[1]} alike: {describe_decoding(dec['settings'])}", ""]
    else:
        out += [f"- {n}: {describe_decoding(dec[k])}" for n, k in zip(names, ("before", "after"))]
        out += ["- the two models were decoded with different settings: their figures are not comparable", ""]
    if cost:
        out += ["## General quality cost (general test split)", ""]
        out += [f"BLEU tokenized with {cost['bleu_tokenizer']} ({cost['bleu_signature']}).", ""]
        for name in ("bleu", "chrf"):
            c = cost[name]
            out.append(
                f"- {name}: {c['before']:.2f} -> {c['after']:.2f} ({c['change']:+.2f}, 95% CI "
                f"[{c['ci95'][0]:+.2f}, {c['ci95'][1]:+.2f}], p {_p(c)}; {cost['n']} sentences)"
            )
        out.append("")
    start, chosen = budget.get("start_valid_general_bleu"), budget.get("chosen_valid_general_bleu")
    out += ["## Checkpoint selection (selection pairs and general validation split)", ""]
    if start is not None:
        out.append(f"- general validation BLEU at the start (update 0): {start:.2f}; budget: at least "
                   f"{start - budget['max_bleu_drop']:.2f} (--max_bleu_drop {budget['max_bleu_drop']})")  # fmt: skip
    if chosen is not None:
        out.append(f"- kept, the weights in final/: update {budget['chosen_step']}, general validation BLEU "
                   f"{chosen:.2f}")  # fmt: skip
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
