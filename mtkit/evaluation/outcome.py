"""What a mitigation verdict says of two models on the same pairs: the figures of each, the paired test of each
change (from their ``bias_eval`` comparison) and the outcome of the gap of the accuracy the mitigation judges by
(``measure``: MT-GenEval's lenient ``accuracy`` or ``strict_accuracy``), by one set of rules (:func:`outcome`: narrowed,
levelled down, over-corrected, did not narrow, no test ran); and whose a narrowing against the start is, given the
control arm (:func:`attribution`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

LEVEL = 0.05
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
NO_TEST, OVER_CORRECTED, LEVELLED_DOWN, NARROWED, NOT_NARROWED = (
    "no test ran", "over-corrected", "levelled down", "narrowed", "did not narrow"
)  # fmt: skip


def scope(name: str, before: Mapping, after: Mapping, rows: Sequence[Mapping], measure: str) -> dict[str, Any]:
    """The figures of one language (or ``macro``) of two models: before and after with their CIs, the paired test of
    each change (``rows`` of that language), and the :func:`outcome` of ``measure``'s gap."""
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
    out["measure"] = measure
    out["gap_outcome"], out["levelled_down"] = outcome(out, measure)
    out["gap_narrowed"] = out["gap_outcome"] in (NARROWED, LEVELLED_DOWN)
    return out


def compare_models(
    before: Mapping[str, Any], after: Mapping[str, Any], paired: Mapping[str, Any], measure: str
) -> dict[str, Any]:
    """Two reports' ``metrics.json`` compared with their comparison's paired tests (``paired``), ``measure``'s gap
    judged: a :func:`scope` per language, ``overall`` (the one language's, or the macro average's with the paired
    bootstrap of the mean) and why the paired tests were refused, if they were."""
    rows = paired.get("rows") or []
    langs = sorted(set(before["languages"]) & set(after["languages"]))
    scopes = {x: scope(x, before["languages"][x], after["languages"][x], rows, measure) for x in langs}
    overall = (
        {**scopes[langs[0]]} if len(langs) == 1 else scope("macro", before["macro"], after["macro"], rows, measure)
    )
    return {"languages": scopes, "overall": overall, "paired_refused": paired.get("refused")}


def outcome(figures: Mapping[str, Any], measure: str) -> tuple[str, str | None]:
    """What happened to the gap of ``measure`` (``accuracy`` or ``strict_accuracy``; see docs/bias_mitigation.md),
    and the accuracy that fell when it was levelled down: no test ran (no paired test of the gap's size),
    over-corrected (the gap changed sign and its after-interval lies on the other side of 0), narrowed (the 95% CI of
    |gap after| - |gap before| lies below 0; levelled down when the better-served gender's accuracy also fell beyond
    noise), else did not narrow."""
    gap, size = figures[f"{measure}_gap"], figures[f"{measure}_gap_size"]
    if gap["before"] is None or gap["after"] is None or "change_ci95" not in size:
        return NO_TEST, None
    ci = gap.get("after_ci95")
    if ci and ((gap["before"] > 0 and ci[1] < 0) or (gap["before"] < 0 and ci[0] > 0)):
        return OVER_CORRECTED, None
    if size["change_ci95"][1] >= 0:
        return NOT_NARROWED, None
    key = f"{measure}_masculine" if gap["before"] > 0 else f"{measure}_feminine"  # the better-served gender's
    fell = figures[key].get("p_value", 1.0) < LEVEL and (figures[key].get("change") or 0.0) < 0
    return (LEVELLED_DOWN, key) if fell else (NARROWED, None)


#: whose a change against the start is (:func:`attribution`)
MITIGATION, CONTROL, UNDECIDED = "mitigation", "control", "undecided"


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
