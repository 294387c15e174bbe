"""The words of a mitigation verdict (:mod:`mtkit.evaluation.verdict`'s document): its summary, which the page opens
with, and the markdown page: one table per language of the three models (start, control, mitigated) with the paired
changes of mitigated against control and against the start, then the decoding, the general cost, the checkpoint
choice and the checks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bias_eval.compare.comparability import generation_setting
from bias_eval.core.markdown import table
from bias_eval.core.paired import p_relation, p_text
from bias_eval.mtgeneval.balance import mf_ratio_text, ratio_bounds_text
from bias_eval.mtgeneval.gendered import GENDERS
from bias_eval.winomt.figures import fmt_figure, fmt_interval
from mtkit.evaluation.outcome import (
    COMPARISONS,
    CONTROL,
    FIGURES,
    LEVELLED_DOWN,
    NARROWED,
    NO_TEST,
    OVER_CORRECTED,
    UNDECIDED,
    WIDENED,
    better_served_fell,
)

SAID = {NARROWED: "narrowed beyond noise", LEVELLED_DOWN: "narrowed beyond noise, by levelling down",
        WIDENED: "widened beyond noise"}  # fmt: skip
NO_CONTROL = (
    "No control arm was trained (--control none): these figures cannot separate the mitigation from further "
    "training on the general data."
)


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


def gap_sentence(comparison: Mapping[str, Any], sides: Sequence[str], verdict: str | None = None) -> str:
    """The judged accuracy's gap of two models (``sides``: their names), its size's paired test and the outcome (or
    ``verdict`` in its place); over several languages, the mean of the languages' sizes and each language's outcome."""
    o = comparison["overall"]
    key = f"{o['measure']}_gap"
    gap, size, said = o[key], o[f"{key}_size"], o["gap_outcome"]
    went = f"the {key.replace('_', ' ')} (m - f) went from {_fmt(key, gap['before'])} ({sides[0]}) to " \
        f"{_fmt(key, gap['after'])} ({sides[1]})"  # fmt: skip
    by = o.get("outcomes_by_language")
    if by:
        went += " (mean over the languages; " + ", ".join(f"{lang}: {x}" for lang, x in by.items()) + ")"
    if said == NO_TEST:
        why = comparison.get("paired_refused") or size.get("refused") or "the paired test of its size gave no result"
        return f"{went}: no test ran ({why}), so nothing is claimed about the change."
    ci = size["change_ci95"]
    what = "the mean of the languages' sizes |gap|" if by else "its size |gap|"
    went += f" ({what} changed {100 * size['change']:+.1f} points, 95% CI [{100 * ci[0]:+.1f}, " \
        f"{100 * ci[1]:+.1f}], p {_p(size)})"  # fmt: skip
    if said == OVER_CORRECTED:
        where = [lang for lang, x in (by or {}).items() if x == OVER_CORRECTED]
        return f"{went}: over-corrected{' in ' + ', '.join(where) if where else ''}, the gap changed sign and its " \
            "interval after lies on the other side of 0."  # fmt: skip
    return f"{went}: {verdict or SAID.get(said, 'did not narrow beyond noise')}."


def _levelled(comparison: Mapping[str, Any], against: str) -> list[str]:
    o = comparison["overall"]
    if not o.get("levelled_down"):
        return []
    where = o.get("levelled_down_in")
    if where:  # several languages: each language's own accuracy that fell
        fell = [(lang, comparison["languages"][lang]) for lang in where]
        said = "; ".join(f"in {lang}, {s[key]['label']} fell {100 * -s[key]['change']:.1f} points (p {_p(s[key])})"
                         for lang, s in fell for key in [better_served_fell(s, s["measure"])])  # fmt: skip
        return [f"Levelling down against the {against}: {said}, beyond noise; the gap closed from that side."]
    fell = o[o["levelled_down"]]
    return [f"Levelling down against the {against}: {fell['label']} fell {100 * -fell['change']:.1f} points beyond "
            f"noise (p {_p(fell)}); the gap closed from that side."]  # fmt: skip


#: what it means when the accuracy the verdict does not judge falls for a gender, by that accuracy
OTHER_FELL = {
    "accuracy": "more outputs carry a word of the other gender (MT-GenEval's accuracy: no word of the other gender)",
    "strict_accuracy": "fewer outputs carry a word of their own gender (strict accuracy)",
}


def other_accuracy_fell(comparison: Mapping[str, Any], measure: str, against: str) -> list[str]:
    """A sentence when, in ``comparison``, the per-gender accuracy the verdict does not judge (lenient when it judges
    strict, and the other way round) fell beyond noise: the cost a gap of the judged accuracy does not show."""
    other = "accuracy" if measure == "strict_accuracy" else "strict_accuracy"
    o = comparison["overall"]
    fell = [o[f"{other}_{g}"] for g in GENDERS]
    fell = [e for e in fell if (e.get("change") or 0.0) < 0 and e.get("finding")]
    if not fell:
        return []
    said = " and ".join(f"{e['label']} fell {100 * -e['change']:.1f} points (p {_p(e)})" for e in fell)
    return [f"Against the {against}, {said}, beyond noise: {OTHER_FELL[other]}."]


#: the summary's first sentence when the checkpoint rule kept update 0 (``{measure}``: the accuracy judged)
KEPT_START = (
    "The checkpoint rule kept the start itself (update 0): no evaluation of the mitigation raised the {measure} of the "
    "gender the start served worse within the budgets, so the mitigated model is the start, and its figures below are "
    "the start's."
)


def summary(doc: Mapping[str, Any]) -> str:
    """One paragraph: the mitigation's own share (against the control) beside the change against the start, whether
    the control explains it, the general cost, the flags."""
    own, total, control = doc["mitigated_vs_control"], doc["mitigated_vs_start"], doc["control_vs_start"]

    def said(name: str) -> str:
        return gap_sentence(doc[name], COMPARISONS[name])

    kept_start = (doc.get("budget") or {}).get("chosen_step") == 0
    parts = [KEPT_START.format(measure=doc["measure"].replace("_", " "))] if kept_start else []
    if own:  # a narrowing against a control that widened the gap is no mitigation when the start is no worse
        head = doc.get("headline_outcome") or own["overall"]["gap_outcome"]
        verdict = (
            None
            if head == own["overall"]["gap_outcome"]
            else "smaller than the control's only because the "
            f"control widened it against the start (below); against the start it {SAID.get(head, head)}: no mitigation"
        )
        parts.append("The mitigation's own share, against the control (the same start trained as many updates on the "
                     f"replay alone): {gap_sentence(own, COMPARISONS['mitigated_vs_control'], verdict)}")  # fmt: skip
    parts.append(f"Against the start: {said('mitigated_vs_start')}")
    if doc.get("attribution") == CONTROL:
        parts.append(f"The control explains the change: trained as long on the general data alone, "
                     f"{said('control_vs_start')} The mitigation shows no effect of its own beyond that of further "
                     "training.")  # fmt: skip
    elif doc.get("attribution") == UNDECIDED:
        parts.append("Whose the change is stays open: against the control it did not narrow beyond noise, and "
                     f"neither did the control's own change against the start: {said('control_vs_start')} Each part "
                     "is inside noise, so these pairs cannot tell the mitigation's share from that of further "
                     "training.")  # fmt: skip
    elif control:
        parts.append(f"The control against the start: {said('control_vs_start')}")
    unseen = (doc.get("words") or {}).get("unseen")
    if unseen:
        name = doc["headline"]
        parts.append(f"On the {unseen['pairs']} verdict pairs with a gendered word the tuning pairs lack (unseen), "
                     f"{gap_sentence(unseen[name], COMPARISONS[name])}")  # fmt: skip
    if not own:
        parts.append(NO_CONTROL)
    parts += _levelled(own, "control") if own else []
    parts += _levelled(total, "start")
    parts += other_accuracy_fell(own or total, doc["measure"], "control" if own else "start")
    cost = doc.get("general_cost")
    if cost:
        parts.append(f"General test BLEU {_cost(cost['bleu'], cost)}.")
    parts += [doc["resample_note"]] if doc.get("resample_note") else []
    if not (doc.get("decoding") or {"same": True})["same"]:
        parts.append("The models were decoded with different settings (see the page).")
    flag = doc.get("over_correction")
    if flag:
        parts.append(("Over-correction flagged: " if flag["of"] == "mitigated" else "Not over-correction: ")
                     + flag["message"] + ".")  # fmt: skip
    leak = doc["leakage"]
    if leak["found"]:
        parts.append(f"Leakage: {leak['shared_sentences']} verdict sentences are in the mitigation data.")
    if leak["sentences_with_gendered_words"]:
        parts.append(f"Of the {leak['sentences_with_gendered_words']} verdict sentences with gendered words, "
                     f"{leak['gendered_words_all_tuned']} ({_share(leak['gendered_words_all_tuned_share'])}) have them "
                     f"all in the mitigation data (seen) and {leak['gendered_words_unseen']} have one it lacks "
                     "(unseen).")  # fmt: skip
    return " ".join(p[0].upper() + p[1:] for p in parts)


def _cost(c: Mapping[str, Any], cost: Mapping[str, Any], title: str = "") -> str:
    """``27.10 (start) -> 26.80 (mitigated) (-0.30, 95% CI [-0.61, +0.02], p = 0.06)``, or why no test ran."""
    names = (f" ({title})", " (mitigated)") if title else ("", "")
    said = f"{c['before']:.2f}{names[0]} -> {c['after']:.2f}{names[1]} ({c['change']:+.2f}"
    if "ci95" not in c:
        return said + f"; not tested: {cost.get('refused')})"
    return said + f", 95% CI [{c['ci95'][0]:+.2f}, {c['ci95'][1]:+.2f}], p {_p(c)})"


def _p(figure: Mapping[str, Any]) -> str:
    """``= 0.0312`` or, at the bootstrap's floor, ``< 0.002``, with the adjusted p beside it when it differs
    (``, adjusted = 0.0936``, or ``≤ 0.02`` from a bound: :func:`bias_eval.core.paired.p_relation`), as the
    comparisons say it (:func:`bias_eval.compare.rows.p_words`)."""
    raw, adjusted = p_relation(figure)
    return raw if adjusted is None else f"{raw}, adjusted {adjusted}"


def _fmt(key: str, value: Any, counts: Sequence[int | None] | None = None) -> str:
    if key == "mf_ratio":
        m, f = counts or (None, None)
        return mf_ratio_text({"mf_ratio": value, "predicted_masculine": m, "predicted_feminine": f})
    if value is None:
        return "n/a"
    if key == "bleu_gap":
        return f"{value:+.2f}"
    if key.endswith("_size"):
        return f"{100 * value:.1f} pts"
    return f"{100 * value:+.1f} pts" if key.endswith("_gap") else f"{100 * value:.1f}%"


def _ci(key: str, ci: Sequence[float | None] | None) -> str:
    if key == "mf_ratio":
        return ratio_bounds_text(ci)
    return "" if not ci else f" [{_fmt(key, ci[0])}, {_fmt(key, ci[1])}]"


def _shown(key: str, e: Mapping[str, Any], when: str) -> str:
    """One model's figure (``when``: ``before`` or ``after``) with its 95% CI."""
    return _fmt(key, e[when], e.get(f"{when}_counts")) + _ci(key, e[f"{when}_ci95"])


def _delta(key: str, value: float | None) -> str:
    """A change: points for a share, the figure's own unit otherwise."""
    if value is None:
        return "n/a"
    return f"{value:+.2f}" if key in ("bleu_gap", "mf_ratio") else f"{100 * value:+.1f} pts"


def _change(key: str, e: Mapping[str, Any]) -> list[str]:
    """A change's two cells: its value with the 95% CI, and the paired p-value with its test."""
    ci = e.get("change_ci95")
    cell = _delta(key, e.get("change")) + (f" [{_delta(key, ci[0])}, {_delta(key, ci[1])}]" if ci else "")
    if "p_value" not in e:
        return [cell, "n/a", "n/a"]
    adjusted = p_text(e["p_adjusted"], e.get("p_floor")) + (" *" if e.get("finding") else "")
    return [cell, f"{p_text(e['p_value'], e.get('p_floor'))} ({e['test']})", adjusted]


def _table(scopes: Sequence[Mapping[str, Any] | None]) -> list[str]:
    """The three models' figures of one language and the two paired changes; ``scopes`` are its scope of
    mitigated vs start and of mitigated vs control (``None``: no control)."""
    total, own = scopes
    header = ["figure", "start [95% CI]", *(["control [95% CI]"] if own else []), "mitigated [95% CI]"]
    header += [*(["mitigated - control [95% CI]", "p (paired)", "p adjusted"] if own else [])]
    header += ["mitigated - start [95% CI]", "p (paired)", "p adjusted"]
    rows = []
    for key, _ in FIGURES:
        e = total[key]
        if all(s[key][when] is None for s in (total, own) if s for when in ("before", "after")):
            continue  # a figure the part's paired tests do not give (the M:F ratio of seen or unseen pairs)
        cells = [e["label"], _fmt(key, e["before"], e.get("before_counts")) + _ci(key, e["before_ci95"])]
        if own:
            cells.append(
                _fmt(key, own[key]["before"], own[key].get("before_counts")) + _ci(key, own[key]["before_ci95"])
            )
        cells.append(_fmt(key, e["after"], e.get("after_counts")) + _ci(key, e["after_ci95"]))
        rows.append(cells + (_change(key, own[key]) if own else []) + _change(key, e))
    return table(header, rows, right_from=1) + [""]


def words_section(words: Mapping[str, Any] | None) -> list[str]:
    """The section of the pairs whose gendered words were all tuned on (seen) and the others (unseen)."""
    if not words:
        return []
    out = ["## Seen and unseen gendered words", "", "A verdict pair is unseen when one of its gendered words is in "
           "none of the tuning pairs' references (a profession never tuned on), seen otherwise; each part's figures "
           "and paired tests are its pairs' alone.", ""]  # fmt: skip
    for part, what in (("seen", "every gendered word tuned on"), ("unseen", "a gendered word the tuning lacks")):
        found = words.get(part)
        out += [f"### {part}: {found['pairs'] if found else 0} pairs ({what})", ""]
        if found:
            out += _table([found["mitigated_vs_start"]["overall"], (found.get("mitigated_vs_control") or {}).get(
                "overall")])  # fmt: skip
    return out


def _selection(budget: Mapping[str, Any]) -> list[str]:
    start, chosen = budget.get("start_valid_general_bleu"), budget.get("chosen_valid_general_bleu")
    out = ["## Checkpoint selection (selection pairs and general validation split)", ""]
    if start is not None:
        out.append(f"- general validation BLEU at the start (update 0): {start:.2f}; budget: at least "
                   f"{start - budget['max_bleu_drop']:.2f} (--max_bleu_drop {budget['max_bleu_drop']})")  # fmt: skip
    if budget.get("worse_served"):
        worse, acc, name = budget["worse_served"], budget["start_accuracy"], budget["measure"].replace("_", " ")
        better = next(g for g in acc if g != worse)
        out.append(f"- the start served {worse} sentences worse ({name} {100 * acc[worse]:.1f}% against "
                   f"{100 * acc[better]:.1f}% {better}); levelling-down budget: {better} {name} at least "
                   f"{max(0.0, 100 * acc[better] - budget['max_accuracy_drop']):.1f}% (--max_accuracy_drop "
                   f"{budget['max_accuracy_drop']})")  # fmt: skip
    if chosen is not None:
        out.append(f"- kept, the weights in final/: update {budget['chosen_step']}, general validation BLEU "
                   f"{chosen:.2f}")  # fmt: skip
    kept = budget.get("within_budget_steps") or []
    out += [f"- within both budgets: {len(kept)} of {budget.get('evaluations')} evaluations"]
    return out + ([f"- rule: {budget['rule']}"] if budget.get("rule") else []) + [""]


def _gap_said(change: Mapping[str, Any]) -> str:
    """`` (|ΔG| -3.1 [-5.0, -1.2], p = 0.002: narrowed beyond noise)``: the test of ΔG's size and its outcome."""
    size = next((t for t in change.get("gap_tests") or () if t["figure"] == "f1_gap_size"), None)
    if size is None:
        return ""
    if size.get("missing"):
        return f" (|ΔG| not tested: {size['refused']})"
    low, high = size["ci95"]
    said = SAID.get(change["gap_outcome"], change["gap_outcome"])
    return f" (|ΔG| {size['change']:+.1f} [{low:+.1f}, {high:+.1f}], p {_p(size)}: {said})"


def winomt_table(section: Mapping[str, Any] | None) -> list[str]:
    """The page's WinoMT section: per language, each model's accuracy [95% CI], ΔG and ΔS, then the changes of the
    mitigated model with McNemar's test of the accuracy and ΔG's outcome (none without ``--winomt_dir``)."""
    if not section:
        return []
    out = ["## WinoMT (out of domain: the mitigation tuned on MT-GenEval's pairs)", ""]
    for lang in section["languages"]:
        rows = []
        for name, by_lang in section["models"].items():
            m = by_lang[lang]
            accuracy = fmt_figure(m["accuracy"]) + fmt_interval(m["accuracy_ci95"])
            rows.append([name, accuracy, fmt_figure(m["delta_g"], True), fmt_figure(m["delta_s"], True)])
        for name in ("mitigated_vs_control", "mitigated_vs_start"):
            for_lang = (section.get(name) or {}).get(lang)
            if for_lang:
                test = for_lang["accuracy_test"]
                p = f"McNemar p {_p(test)}; {test['before_only']} sentences lost, {test['after_only']} won"
                rows.append([name.replace("_", " "), f"{fmt_figure(for_lang['accuracy'], True)} ({p})",
                             fmt_figure(for_lang["delta_g"], True) + _gap_said(for_lang),
                             fmt_figure(for_lang["delta_s"], True)])  # fmt: skip
        out += [f"### {lang} ({section['n'][lang]:,} sentences)", ""]
        out += [*table(["model", "accuracy [95% CI]", "ΔG", "ΔS (pro - anti)"], rows, right_from=1), ""]
    return out


def render_markdown(doc: Mapping[str, Any]) -> str:
    """The verdict's page: the summary, one table per language and overall, the decoding, the cost, the checkpoint
    choice and the checks."""
    out = ["# Gender-bias mitigation: verdict", "", doc["summary"], ""]
    total, own = doc["mitigated_vs_start"], doc["mitigated_vs_control"]
    langs = list(total["languages"])
    for lang in langs:
        out += [f"## {lang}" + (" (one language: also the overall figures)" if len(langs) == 1 else ""), ""]
        out += _table([total["languages"][lang], own["languages"][lang] if own else None])
    if len(langs) > 1:
        out += ["## overall (macro average over the languages)", ""]
        out += _table([total["overall"], own["overall"] if own else None])
    names = doc["models"]
    out += ["## Decoding (every model)", ""]
    dec = doc.get("decoding") or {"same": True, "settings": None}
    if dec["same"]:
        out += [f"- {', '.join(names)} alike: {describe_decoding(dec['settings'])}", ""]
    else:
        out += [f"- {n}: {describe_decoding(dec.get(n))}" for n in names]
        out += ["- the models were decoded with different settings: their figures are not comparable", ""]
    for key, title in (("general_cost", "start"), ("general_cost_vs_control", "control")):
        cost = doc.get(key)
        if not cost:
            continue
        out += [f"## General quality cost against the {title} (general test split)", ""]
        out += [f"BLEU tokenized with {cost['bleu_tokenizer']} ({cost['bleu_signature']}).", ""]
        for name in ("bleu", "chrf"):
            out.append(f"- {name}: {_cost(cost[name], cost, title)}; {cost['n']} sentences")
        out.append("")
    out += words_section(doc.get("words"))
    out += winomt_table(doc.get("winomt"))
    out += _selection(doc["budget"])
    leak = doc["leakage"]
    flag = doc.get("over_correction")
    said = (
        "not flagged" if not flag else ("" if flag["of"] == "mitigated" else "not the mitigation's: ") + flag["message"]
    )
    out += ["## Checks", "", f"- over-correction: {said}"]
    out.append(
        f"- leakage: {leak['shared_sentences']} of {leak['verdict_sentences']} verdict sentences in the "
        f"mitigation data; of {leak['sentences_with_gendered_words']} with gendered words, "
        f"{leak['gendered_words_all_tuned']} have them all in the mitigation data (seen; most common: "
        f"{', '.join(leak['most_common_tuned_gendered_words']) or 'none'}) and {leak['gendered_words_unseen']} have "
        "one it lacks (unseen)"
    )
    for name in COMPARISONS:
        if doc.get(name) and doc[name].get("paired_refused"):
            out.append(f"- paired tests of {name.replace('_', ' ')} not run: {doc[name]['paired_refused']}")
    return "\n".join(out) + "\n"
