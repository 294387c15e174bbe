"""The verdict's WinoMT section: the start, the control and the mitigated model scored out of domain on WinoMT (the
mitigation tuned on MT-GenEval's pairs), each model's accuracy, ΔG and ΔS per language, and the change of mitigated
against control and against the start, with McNemar's exact test of the accuracy on the same sentences
(:func:`bias_eval.core.paired.mcnemar`) and, from each sentence's gold and predicted gender, the paired bootstrap of
ΔG's size (|F1 male - F1 female|) and of each F1 as a comparison of two WinoMT reports draws it, judged by the verdict's
outcome rules (:func:`gap_outcome`: narrowed, levelled down, widened, over-corrected, did not narrow, no test ran),
every p Holm-adjusted over the comparison's tests by the verdict's rule."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bias_eval.compare.winomt_tests import Judged, check_same, language_tests
from bias_eval.core.bootstrap import SAMPLES, SEED
from bias_eval.core.decision import Rule, decide
from bias_eval.core.paired import mcnemar
from bias_eval.core.report import Refused
from mtkit.evaluation.outcome import COMPARISONS, outcome
from mtkit.evaluation.winomt_run import HEADLINE, headline

#: the comparisons the section reports (before, after)
CHANGES = {name: pair for name, pair in COMPARISONS.items() if name.startswith("mitigated_vs_")}


#: the verdict's names of the comparison's tests of ΔG (:func:`bias_eval.compare.winomt_tests.language_tests`)
GAP_TESTS = {"winomt_delta_g": "f1_gap", "winomt_f1_male": "f1_masculine", "winomt_f1_female": "f1_feminine",
             "winomt_delta_g_size": "f1_gap_size"}  # fmt: skip


def gap_tests(lang: str, pair: Sequence[Judged], samples: int = SAMPLES, seed: int = SEED) -> list[dict[str, Any]]:
    """The paired bootstrap of ΔG, its size and each F1 of two models on the same sentences (``pair``: before, after),
    as a comparison of two WinoMT reports tests them (:func:`bias_eval.compare.winomt_tests.language_tests`), under
    the verdict's names (:data:`GAP_TESTS`); rows without a test (``missing``, with the reason) when the bootstrap is
    refused or the two models' reports hold other sentences."""
    try:
        check_same(lang, *pair, ("before", "after"))
        rows = language_tests(lang, *pair, samples=samples, seed=seed)
    except Refused as why:
        return [{"lang": lang, "figure": f, "test": "paired bootstrap", "missing": True, "refused": str(why)}
                for f in GAP_TESTS.values()]  # fmt: skip
    kept = [r | {"figure": GAP_TESTS[r["figure"]]} for r in rows if r["figure"] in GAP_TESTS]
    for row in kept:
        row.pop("title", None)
    return kept


def gap_outcome(tests: Sequence[Mapping[str, Any]], after_ci: Sequence[float] | None) -> tuple[str, str | None]:
    """ΔG's outcome by the verdict's rules (:func:`mtkit.evaluation.outcome.outcome`) from one language's decided
    :func:`gap_tests` rows and the after model's own ΔG interval (its report's)."""
    by = {r["figure"]: r for r in tests}
    figures = {}
    for figure, row in by.items():
        entry = {"before": row.get("before"), "after": row.get("after"), "change": row.get("change")}
        if not row.get("missing"):
            entry |= {"change_ci95": row["ci95"], "finding": row["significant"], "p_value": row["p_value"]}
        figures[figure] = entry
    figures["f1_gap"]["after_ci95"] = after_ci
    return outcome(figures, "f1")


def change(before: Mapping[str, Any], after: Mapping[str, Any], right: Sequence[Sequence[bool]]) -> dict[str, Any]:
    """One language's change from ``before`` to ``after`` (their WinoMT ``metrics.json``): each headline figure's
    difference (``None`` where either is undefined), and McNemar's test of the accuracy on the sentences judged right
    or wrong (``right``: before, after)."""
    out: dict[str, Any] = {
        key: None if before[key] is None or after[key] is None else after[key] - before[key] for key in HEADLINE
    }
    test = mcnemar(*right)
    out["accuracy_test"] = {"test": "mcnemar", "figure": "winomt_accuracy", "n": test.n, "p_value": test.p_value}
    out["accuracy_test"] |= {"before_only": test.before_only, "after_only": test.after_only, "change": out["accuracy"]}
    return out


def winomt_section(
    reports: Mapping[str, Mapping[str, Mapping[str, Any]]],
    judged: Mapping[str, Mapping[str, Judged]],
    rule: Rule = Rule(),
) -> dict[str, Any]:
    """``verdict.json``'s ``winomt``: ``reports`` are each model's WinoMT ``metrics.json`` by name and language, and
    ``judged`` its sentences alike (:func:`~bias_eval.compare.winomt_tests.judged`: whether each was right, its counted
    cells); the models' headline figures and the changes of :data:`CHANGES` whose two models were scored, each
    comparison's tests decided by ``rule`` (Holm over its languages' tests by default)."""
    langs = sorted(set.intersection(*(set(by_lang) for by_lang in reports.values())))
    out: dict[str, Any] = {"languages": langs, "n": {lang: reports["mitigated"][lang]["n"] for lang in langs}}
    out["models"] = {name: {lang: headline(dict(by_lang[lang])) for lang in langs} for name, by_lang in reports.items()}
    for name, (before, after) in CHANGES.items():
        if before not in reports or after not in reports:
            out[name] = None
            continue
        pairs = {lang: (judged[before][lang], judged[after][lang]) for lang in langs}
        found = {lang: change(reports[before][lang], reports[after][lang], [j.correct for j in pairs[lang]])
                 for lang in langs}  # fmt: skip
        tests = {lang: gap_tests(lang, pairs[lang]) for lang in langs}
        rows = [t for lang in langs for t in (*tests[lang], found[lang]["accuracy_test"])]
        decide(rows, rule)
        for lang in langs:
            found[lang]["gap_tests"] = tests[lang]
            said = gap_outcome(tests[lang], reports[after][lang].get("delta_g_ci95"))
            found[lang]["gap_outcome"], found[lang]["levelled_down"] = said
        out[name] = found
    return out
