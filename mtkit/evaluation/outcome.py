"""What a mitigation verdict says of two models on the same pairs: the figures of each, the paired test of each
change (from their ``bias_eval`` comparison) and the outcome of the gap of the accuracy the mitigation judges by
(``measure``: MT-GenEval's lenient ``accuracy`` or ``strict_accuracy``), by one set of rules (:func:`outcome`: narrowed,
levelled down, widened, over-corrected, did not narrow, no test ran), each change decided by
:mod:`bias_eval.core.decision`'s rule; over several languages from the languages' own outcomes and the mean of their
gaps' sizes (:func:`overall_outcome`), never from the mean signed gap; and whose a narrowing against the start is, given
the control arm (:func:`attribution`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bias_eval.core.decision import LEVEL

#: the models of a verdict, in the order of its tables, and the comparisons of two of them (before, after)
MODELS = ("start", "control", "mitigated")
COMPARISONS = {
    "mitigated_vs_control": ("control", "mitigated"),
    "mitigated_vs_start": ("start", "mitigated"),
    "control_vs_start": ("start", "control"),
}
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
    ("strict_accuracy_gap_size", "strict accuracy gap size"),
    ("bleu_gap", "BLEU gap m-f"),
    ("mf_ratio", "M:F predictions"),
)
#: what the verdict says of the judged accuracy's gap, each outcome's sentence in docs/bias_mitigation.md
NO_TEST, OVER_CORRECTED, LEVELLED_DOWN, NARROWED, WIDENED, NOT_NARROWED = (
    "no test ran", "over-corrected", "levelled down", "narrowed", "widened", "did not narrow"
)  # fmt: skip


def scope(name: str, before: Mapping, after: Mapping, rows: Sequence[Mapping], measure: str) -> dict[str, Any]:
    """The figures of one language (or ``macro``) of two models: before and after with their CIs, the paired test of
    each change (``rows`` of that language), and the :func:`outcome` of ``measure``'s gap."""
    paired = {r["figure"]: r for r in rows if r.get("lang") == name and "missing" not in r}
    refused = {r["figure"]: r["refused"] for r in rows if r.get("lang") == name and r.get("refused")}
    out: dict[str, Any] = {}
    for key, label in FIGURES:
        base = key.removesuffix("_size")
        b, a = before.get(base), after.get(base)
        if key != base:  # a gap's size (macro: the mean of the languages' sizes, as tested); no CIs of its own
            b, a = (None if v is None else abs(v) for v in (b, a))
            b, a = (paired.get(key, {}).get(when, v) for when, v in (("before", b), ("after", a)))
        entry = {"label": label, "before": b, "before_ci95": None if key != base else before.get(f"{key}_ci95")}
        entry |= {"after": a, "after_ci95": None if key != base else after.get(f"{key}_ci95")}
        if entry["before"] is not None and entry["after"] is not None:
            entry["change"] = entry["after"] - entry["before"]
        if key == "mf_ratio":  # the counts say when a ratio is infinite (strict JSON has none)
            entry |= {f"{when}_counts": [side.get(f"predicted_{g}") for g in ("masculine", "feminine")]
                      for when, side in (("before", before), ("after", after))}  # fmt: skip
        if key in paired:
            test = paired[key]
            entry |= {"change_ci95": test["ci95"], "p_value": test["p_value"], "test": test["test"]}
            entry |= {"p_floor": test.get("p_floor"), "p_adjusted": test.get("p_adjusted", test["p_value"])}
            entry["finding"] = test.get("significant", test["p_value"] < LEVEL)
        elif key in refused:
            entry["refused"] = refused[key]
        out[key] = entry
    out["measure"] = measure
    out["gap_outcome"], out["levelled_down"] = outcome(out, measure)
    out["gap_narrowed"] = out["gap_outcome"] in (NARROWED, LEVELLED_DOWN)
    return out


def compare_models(
    before: Mapping[str, Any], after: Mapping[str, Any], paired: Mapping[str, Any], measure: str
) -> dict[str, Any]:
    """Two reports' ``metrics.json`` compared with their comparison's paired tests (``paired``), ``measure``'s gap
    judged: a :func:`scope` per language, ``overall`` (the one language's, or the macro rows' with the outcome of
    :func:`overall_outcome`) and why the paired tests were refused, if they were."""
    rows = paired.get("rows") or []
    langs = sorted(set(before["languages"]) & set(after["languages"]))
    scopes = {x: scope(x, before["languages"][x], after["languages"][x], rows, measure) for x in langs}
    macro = None if len(langs) == 1 else scope("macro", before["macro"], after["macro"], rows, measure)
    return {"languages": scopes, "overall": overall(scopes, macro), "paired_refused": paired.get("refused")}


def overall(languages: Mapping[str, dict[str, Any]], macro: dict[str, Any] | None) -> dict[str, Any]:
    """The overall scope: the one language's, or ``macro`` (the macro rows' figures) judged by
    :func:`overall_outcome` from the languages' scopes."""
    if macro is None:
        return {**next(iter(languages.values()))}
    macro["gap_outcome"], macro["levelled_down"] = overall_outcome(macro, languages, macro["measure"])
    macro["gap_narrowed"] = macro["gap_outcome"] in (NARROWED, LEVELLED_DOWN)
    macro["outcomes_by_language"] = {lang: s["gap_outcome"] for lang, s in languages.items()}
    macro["levelled_down_in"] = [lang for lang, s in languages.items() if better_served_fell(s, macro["measure"])]
    return macro


def _found(entry: Mapping[str, Any]) -> bool:
    """Whether a change is a finding by the comparison's decision rule (:func:`bias_eval.core.decision.finding`)."""
    return bool(entry.get("finding", entry.get("p_value", 1.0) < LEVEL))


def better_served_fell(figures: Mapping[str, Any], measure: str) -> str | None:
    """The accuracy of the gender ``measure``'s gap favoured before, when it fell beyond noise (a finding)."""
    gap = figures[f"{measure}_gap"]
    if gap["before"] is None:
        return None
    key = f"{measure}_masculine" if gap["before"] > 0 else f"{measure}_feminine"
    fell = _found(figures[key]) and (figures[key].get("change") or 0.0) < 0
    return key if fell else None


def overall_outcome(
    macro: Mapping[str, Any], languages: Mapping[str, Mapping[str, Any]], measure: str
) -> tuple[str, str | None]:
    """The outcome over several languages: no test ran when a language's did not run; over-corrected when a language
    is; else narrowed or widened by the paired test of the mean of the languages' gap sizes (|gap| per language, on
    the same resamples: a gap that changes sign in one language cannot cancel another's), levelled down when
    narrowed and some language's better-served gender's accuracy fell beyond noise; else did not narrow."""
    said = [s["gap_outcome"] for s in languages.values()]
    size = macro[f"{measure}_gap_size"]
    if NO_TEST in said or "change_ci95" not in size:
        return NO_TEST, None
    if OVER_CORRECTED in said:
        return OVER_CORRECTED, None
    if not _found(size):
        return NOT_NARROWED, None
    if size["change"] > 0:
        return WIDENED, None
    fell = [key for s in languages.values() if (key := better_served_fell(s, measure))]
    return (LEVELLED_DOWN, fell[0]) if fell else (NARROWED, None)


def outcome(figures: Mapping[str, Any], measure: str) -> tuple[str, str | None]:
    """What happened to the gap of ``measure`` (``accuracy`` or ``strict_accuracy``; see docs/bias_mitigation.md)
    in one language, and the accuracy that fell when it was levelled down: no test ran (no paired test of the gap's
    size), over-corrected (the gap changed sign and its after-interval lies on the other side of 0), narrowed (the
    change of |gap| is a finding below 0; levelled down when the better-served gender's accuracy also fell beyond
    noise), widened (a finding above 0), else did not narrow."""
    gap, size = figures[f"{measure}_gap"], figures[f"{measure}_gap_size"]
    if gap["before"] is None or gap["after"] is None or "change_ci95" not in size:
        return NO_TEST, None
    ci = gap.get("after_ci95")
    if ci and ((gap["before"] > 0 and ci[1] < 0) or (gap["before"] < 0 and ci[0] > 0)):
        return OVER_CORRECTED, None
    if not _found(size):
        return NOT_NARROWED, None
    if size["change"] > 0:
        return WIDENED, None
    key = better_served_fell(figures, measure)
    return (LEVELLED_DOWN, key) if key else (NARROWED, None)


#: whose a change against the start is (:func:`attribution`)
MITIGATION, CONTROL, UNDECIDED = "mitigation", "control", "undecided"


def headline_outcome(own: Mapping[str, Any], total: Mapping[str, Any], control: Mapping[str, Any] | None) -> str:
    """The outcome the verdict leads with: the mitigation's own, against the control (``own``, an overall scope),
    except that a narrowing against a control that itself widened the gap against the start counts only as far as
    the mitigated model is better than the start (``total``): the control's widening is no mitigation."""
    said = own["gap_outcome"]
    widened = control is not None and control["gap_outcome"] == WIDENED
    if said in (NARROWED, LEVELLED_DOWN) and widened and total["gap_outcome"] not in (NARROWED, LEVELLED_DOWN):
        return total["gap_outcome"]
    return said


def attribution(own: Mapping[str, Any], total: Mapping[str, Any], control: Mapping[str, Any]) -> str | None:
    """Whose the narrowing against the start (``total``, an overall scope) is, given the gap's outcome against the
    control (``own``) and the control's against the start (``control``): ``mitigation`` when it narrowed against the
    control too; ``control`` when it did not and the control's own change narrowed it beyond noise (further training
    on the general data did as much); ``undecided`` when neither did (the change is split between the two, each part
    inside noise); ``None`` when it did not narrow against the start, or no test ran against the control."""
    narrowed = (NARROWED, LEVELLED_DOWN)
    if total["gap_outcome"] not in narrowed or own["gap_outcome"] == NO_TEST:
        return None
    if own["gap_outcome"] in narrowed:
        return MITIGATION
    return CONTROL if control["gap_outcome"] in narrowed else UNDECIDED
