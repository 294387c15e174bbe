"""The verdict's pairs told apart by their gendered words: which are unseen (a gendered word no tuning reference has),
and each part's comparisons of the models, from report folders written here: its accuracies against a direct mean of
the part's decisions, McNemar's p-value against the exact binomial tail computed with ``math.comb``."""

import json
import math

import numpy as np

from bias_eval.core.report import Report
from mtkit.data.pairs import gendered_words
from mtkit.evaluation.unseen import part_comparisons, tuned_words, unseen_units
from mtkit.evaluation.verdict_page import words_section

N = 40


def details(folder, feminine: list[bool], masculine: list[bool]) -> None:
    """A report folder's ``es.details.jsonl`` of ``N`` pairs with these accuracy decisions (the strict ones alike)."""
    rows = []
    for i, (f, m) in enumerate(zip(feminine, masculine)):
        row = {"index": i, "correct_pair": f and m}
        for g, right in (("feminine", f), ("masculine", m)):
            text = f"{'la' if g == 'feminine' else 'el'} persona {i} llegó ."
            row |= {f"source_{g}": f"the person {i} came ({g})", f"reference_{g}": text, f"hypothesis_{g}": text}
            row |= {f"correct_{g}": right, f"strict_correct_{g}": right}
        rows.append(row)
    folder.mkdir(parents=True)
    (folder / "es.details.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def mcnemar(before: list[bool], after: list[bool]) -> float:
    b = sum(x and not y for x, y in zip(before, after))
    c = sum(y and not x for x, y in zip(before, after))
    n = b + c
    return 1.0 if n == 0 else min(1.0, 2 * sum(math.comb(n, k) for k in range(min(b, c) + 1)) / 2**n)


def test_unseen_pairs_are_those_with_a_gendered_word_no_tuning_reference_has() -> None:
    tuning = [{"target": "La ingeniera llegó."}, {"target": "El ingeniero llegó."}]
    verdict = [
        {"pair_id": "es:1", "target": "La ingeniera se fue.", "counterfactual": "El ingeniero se fue."},
        {"pair_id": "es:2", "target": "La jueza se fue.", "counterfactual": "El juez se fue."},
        {"pair_id": "es:3", "target": "Ella se fue.", "words": "ella", "counterfactual": "Él se fue."},
    ]
    assert tuned_words(tuning).words == {"la", "ingeniera", "llegó", "el", "ingeniero"}
    assert unseen_units(verdict, tuned_words(tuning)) == {"es:2", "es:3"}  # jueza; ella (the word the data names)


def test_in_a_language_written_without_spaces_gendered_words_are_the_spans_that_differ() -> None:
    """Chinese has no spaces: a whitespace split would make each sentence one "word", and every verdict pair unseen.
    The gendered word is the span in which a reference and its counterfactual differ (他 against 她), seen when a
    tuning reference holds it anywhere."""
    tuning = [{"target": "她是医生。", "lang": "zh"}, {"target": "La ingeniera llegó.", "lang": "es"}]
    verdict = [
        {"pair_id": "zh:1", "lang": "zh", "target": "他是一名护士。", "counterfactual": "她是一名护士。"},
        {"pair_id": "zh:2", "lang": "zh", "target": "她是律师。", "counterfactual": "他是律师。"},
        {"pair_id": "es:1", "lang": "es", "target": "La ingeniera se fue.", "counterfactual": "El ingeniero se fue."},
    ]
    assert [gendered_words(r) for r in verdict] == [{"他"}, {"她"}, {"la", "ingeniera"}]
    tuned = tuned_words(tuning)
    assert "她" in tuned and "医生" in tuned and "他" not in tuned and "ingeniera" in tuned and "inge" not in tuned
    assert unseen_units(verdict, tuned) == {"zh:1"}


def test_each_parts_figures_and_tests_are_its_pairs_alone(tmp_path) -> None:
    rng = np.random.default_rng(3)
    decisions = {name: [list(rng.random(N) < p) for p in shares] for name, shares in
                 (("start", (0.6, 0.9)), ("control", (0.7, 0.9)), ("mitigated", (0.85, 0.88)))}  # fmt: skip
    for name, (f, m) in decisions.items():
        details(tmp_path / name, [bool(x) for x in f], [bool(x) for x in m])
    order = {"es": [f"es:{i}" for i in range(N)]}
    unseen = {f"es:{i}" for i in range(0, N, 3)}
    found = part_comparisons(
        {n: Report({}, tmp_path / n) for n in decisions}, order, unseen, {"config": {"seed": 1}}, "accuracy"
    )
    lines = {"unseen": list(range(0, N, 3)), "seen": [i for i in range(N) if i % 3]}
    for part, idx in lines.items():
        assert found[part]["pairs"] == len(idx)
        for name, (before, after) in (("mitigated_vs_start", ("start", "mitigated")),
                                      ("mitigated_vs_control", ("control", "mitigated"))):  # fmt: skip
            fig = found[part][name]["overall"]["accuracy_feminine"]
            b, a = ([bool(decisions[n][0][i]) for i in idx] for n in (before, after))
            assert np.isclose(fig["before"], np.mean(b)) and np.isclose(fig["after"], np.mean(a))
            assert np.isclose(fig["p_value"], mcnemar(b, a)) and fig["test"] == "McNemar exact"
            gap = found[part][name]["overall"]["accuracy_gap"]
            m = [bool(decisions[after][1][i]) for i in idx]
            assert np.isclose(gap["after"], np.mean(m) - np.mean(a))
    alone = part_comparisons(
        {n: Report({}, tmp_path / n) for n in ("start", "mitigated")}, order, set(), {}, "strict_accuracy"
    )
    assert alone["unseen"] is None and alone["seen"]["pairs"] == N and alone["seen"]["mitigated_vs_control"] is None
    assert alone["seen"]["mitigated_vs_start"]["overall"]["measure"] == "strict_accuracy"
    page = "\n".join(words_section({"seen": alone["seen"], "unseen": None}))  # the page's part: no row without figures
    assert "| strict accuracy gap size |" in page and "M:F" not in page and "| n/a | n/a |" not in page


def test_each_part_tests_over_correction_with_its_own_gap_intervals(tmp_path) -> None:
    """120 pairs, every second one unseen: the start favours masculine everywhere; the mitigated model over-corrects
    the unseen pairs only (feminine all right, masculine 60% right). The unseen part carries each model's gap interval
    (Newcombe's, of its own pairs) and is over-corrected; the seen part, whose gap narrowed without changing sign, is
    not."""
    n = 120
    unseen_lines = set(range(0, n, 2))
    start = ([(i // 2) % 2 == 0 for i in range(n)], [i % 20 != 0 for i in range(n)])  # half the feminine right
    feminine = [True if i in unseen_lines else i % 10 != 0 for i in range(n)]
    masculine = [(i // 2) % 5 < 3 if i in unseen_lines else i % 20 != 0 for i in range(n)]
    details(tmp_path / "start", *start)
    details(tmp_path / "mitigated", feminine, masculine)
    order = {"es": [f"es:{i}" for i in range(n)]}
    found = part_comparisons({x: Report({}, tmp_path / x) for x in ("start", "mitigated")}, order, {f"es:{i}" for i in
                             unseen_lines}, {"config": {"seed": 1}}, "accuracy")  # fmt: skip
    unseen, seen = (found[part]["mitigated_vs_start"]["overall"] for part in ("unseen", "seen"))
    gap = unseen["accuracy_gap"]
    f, m = (np.array([x[i] for i in sorted(unseen_lines)]) for x in (feminine, masculine))
    assert np.isclose(gap["after"], m.mean() - f.mean()) and gap["after_ci95"][1] < 0 < gap["before"]
    assert unseen["gap_outcome"] == "over-corrected"
    assert seen["accuracy_gap"]["after_ci95"] is not None and seen["gap_outcome"] != "over-corrected"
