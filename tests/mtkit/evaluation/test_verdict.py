"""The mitigation verdict's parts computed in-process: the general cost against sacreBLEU called directly (the
figures, and the paired-bootstrap interval and p-value recomputed by a plain loop over the same resamples), and the
leakage check on mitigation data that holds verdict sentences."""

import numpy as np
import sacrebleu

from bias_eval.bootstrap import language_rng, resample_counts
from mtkit.evaluation.verdict import general_cost, leakage

REFS = [f"el médico número {i} terminó su turno ayer por la tarde ." for i in range(12)]


def test_general_cost_matches_sacrebleu_and_a_direct_paired_bootstrap() -> None:
    before = [{"target": r, "hypothesis": r if i % 3 else "el médico terminó"} for i, r in enumerate(REFS)]
    after = [{"target": r, "hypothesis": r if i % 4 else "la médica terminó su turno"} for i, r in enumerate(REFS)]
    cost = general_cost(before, after, samples=40, seed=3)
    hb, ha = [r["hypothesis"] for r in before], [r["hypothesis"] for r in after]
    assert np.isclose(cost["bleu"]["before"], sacrebleu.corpus_bleu(hb, [REFS]).score)
    assert np.isclose(cost["bleu"]["after"], sacrebleu.corpus_bleu(ha, [REFS]).score)
    assert np.isclose(cost["chrf"]["after"], sacrebleu.corpus_chrf(ha, [REFS]).score)
    counts = resample_counts(language_rng(3, "general"), len(REFS), 40)  # the same draws, as multiplicities
    changes = []
    for row in counts:
        idx = [i for i, k in enumerate(row) for _ in range(int(k))]
        refs = [[REFS[i] for i in idx]]
        changes.append(
            sacrebleu.corpus_bleu([ha[i] for i in idx], refs).score
            - sacrebleu.corpus_bleu([hb[i] for i in idx], refs).score
        )
    changes = np.array(changes)
    assert np.allclose(cost["bleu"]["ci95"], np.percentile(changes, [2.5, 97.5]))
    change = cost["bleu"]["change"]
    far = (changes <= 0).sum() if change > 0 else (changes >= 0).sum()
    assert np.isclose(cost["bleu"]["p_value"], min(1.0, 2 * (far + 1) / (len(changes) + 1)))


def _rows(n: int, start: int = 0) -> list[dict]:
    out = []
    for i in range(start, start + n):
        out.append({"source": f"The engineer {i} said she left.", "target": f"La ingeniera {i} dijo que se fue.",
                    "counterfactual": f"El ingeniero {i} dijo que se fue."})  # fmt: skip
        out.append({"source": f"The engineer {i} said he left.", "target": f"El ingeniero {i} dijo que se fue.",
                    "counterfactual": f"La ingeniera {i} dijo que se fue."})  # fmt: skip
    return out


def test_leakage_found_when_the_mitigation_data_holds_verdict_sentences() -> None:
    verdict = _rows(10)
    clean = leakage(_rows(10, start=100), verdict)
    assert clean["shared_sentences"] == 0 and not clean["found"]
    tuning = _rows(10, start=100) + verdict[:6]
    leaked = leakage(tuning, verdict)
    expected = {r["source"] for r in verdict} & {r["source"] for r in tuning}
    assert leaked["found"] and leaked["shared_sentences"] == len(expected) == 6
    # the gendered words (la/ingeniera vs el/ingeniero) of every verdict sentence occur in the tuning data
    assert leaked["gendered_words_all_tuned"] == 20 and clean["gendered_words_all_tuned"] == 20
    unseen = leakage([{"source": "x", "target": "nada que ver", "counterfactual": ""}], verdict)
    assert unseen["gendered_words_all_tuned"] == 0


def test_the_overall_figures_of_several_languages_take_the_macro_rows() -> None:
    from mtkit.evaluation.verdict import verdict_document

    def metrics(f: float, m: float) -> dict:
        one = {"accuracy_feminine": f, "accuracy_masculine": m, "accuracy_gap": m - f}
        return {"languages": {"de": dict(one), "es": dict(one)}, "macro": dict(one)}

    rows = [{"lang": lang, "figure": "accuracy_gap", "ci95": [-0.2, -0.1], "p_value": p, "test": "paired bootstrap"}
            for lang, p in (("de", 0.03), ("es", 0.2), ("macro", 0.01))]  # fmt: skip
    leak = leakage(_rows(2), _rows(2, start=50))
    doc = verdict_document(metrics(0.8, 0.95), metrics(0.93, 0.95), {"rows": rows}, None, leak, {})
    assert doc["languages"]["es"]["accuracy_gap"]["p_value"] == 0.2
    assert doc["overall"]["accuracy_gap"]["p_value"] == 0.01 and doc["overall"]["accuracy_gap_narrowed"]
    assert np.isclose(doc["overall"]["accuracy_gap"]["change"], -0.13)
    assert doc["over_correction"] is None and "narrowed beyond noise" in doc["summary"]


def test_a_gap_closed_by_the_better_served_gender_falling_is_flagged_as_levelling_down() -> None:
    """The gap narrows beyond noise in both cases; when masculine accuracy fell beyond noise (p < 0.05) while
    feminine stayed, the verdict says so; when feminine rose instead, it does not."""
    from mtkit.evaluation.verdict import verdict_document

    def metrics(f: float, m: float) -> dict:
        one = {"accuracy_feminine": f, "accuracy_masculine": m, "accuracy_gap": m - f}
        return {"languages": {"de": one}}

    def test(figure: str, p: float) -> dict:
        return {"lang": "de", "figure": figure, "ci95": [-0.1, -0.01], "p_value": p, "test": "t"}

    leak = leakage(_rows(2), _rows(2, start=50))
    rows = [test("accuracy_gap", 0.03), test("accuracy_masculine", 0.01), test("accuracy_feminine", 0.7)]
    down = verdict_document(metrics(0.88, 0.93), metrics(0.89, 0.90), {"rows": rows}, None, leak, {})
    assert down["overall"]["accuracy_gap_narrowed"] and down["overall"]["levelled_down"] == "accuracy_masculine"
    assert "Levelling down: accuracy m fell 3.0 points beyond noise (p = 0.01)" in down["summary"]
    rows = [test("accuracy_gap", 0.03), test("accuracy_masculine", 0.9), test("accuracy_feminine", 0.01)]
    up = verdict_document(metrics(0.88, 0.93), metrics(0.92, 0.93), {"rows": rows}, None, leak, {})
    assert up["overall"]["accuracy_gap_narrowed"] and up["overall"]["levelled_down"] is None
    assert "Levelling down" not in up["summary"]
