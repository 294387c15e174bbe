"""Strict accuracy, the accuracy gaps, the M:F prediction ratio and over-correction: against counts and a resampling
written here, on hypotheses built from real MT-GenEval German sentences."""

from __future__ import annotations

import string
from pathlib import Path

import numpy as np
import pytest
from geneval_helpers import score_test_interval

from bias_eval.core.intervals import paired_difference_interval
from bias_eval.mtgeneval.balance import over_correction
from bias_eval.mtgeneval.gendered import LanguageData, Side
from bias_eval.mtgeneval.headline import takeaway
from bias_eval.mtgeneval.page import render_html
from bias_eval.mtgeneval.report import metrics_document, render_markdown
from bias_eval.mtgeneval.scoring import macro_average, score_language
from mtkit.data.mtgeneval import load_mtgeneval

N, SEED, SAMPLES = 240, 5, 300


def words(text: str) -> set[str]:
    """The official accuracy script's normalisation: lowercase, ASCII punctuation to spaces, split."""
    return set(text.lower().translate(str.maketrans(string.punctuation, " " * len(string.punctuation))).split())


@pytest.fixture(scope="module")
def german(shared_geneval: Path) -> LanguageData:
    """The first N pairs of MT-GenEval dev, German."""
    ld = load_mtgeneval(shared_geneval, "dev", ["de"]).languages["de"]
    ref_f, ref_m = ld.feminine.references[:N], ld.masculine.references[:N]
    feminine = Side(ld.feminine.sources[:N], ref_f, ref_m, None, "f")
    masculine = Side(ld.masculine.sources[:N], ref_m, ref_f, None, "m")
    return LanguageData("de", feminine, masculine, paired=True)


def mixed(data: LanguageData) -> dict[str, list[str]]:
    """Every kind of hypothesis: right, the other gender's reference, no gendered word left, or words of both."""
    ref_f, ref_m = data.feminine.references, data.masculine.references
    hyp_f, hyp_m = [], []
    for i, (f, m) in enumerate(zip(ref_f, ref_m)):
        kind = i % 7
        hyp_f.append({0: m, 1: "Das ist so.", 2: f"{f} {m}"}.get(kind, f))
        hyp_m.append({3: f, 4: "", 5: "Das ist so."}.get(kind, m))
    return {"feminine": hyp_f, "masculine": hyp_m}


def per_sentence(data: LanguageData, hyps: dict[str, list[str]]) -> dict[str, np.ndarray]:
    """Counted here: strictly correct, MT-GenEval correct, gendered pair, and the gender each hypothesis says."""
    out: dict[str, np.ndarray] = {}
    refs = {"feminine": data.feminine.references, "masculine": data.masculine.references}
    other = {"feminine": "masculine", "masculine": "feminine"}
    for g in ("feminine", "masculine"):
        strict, correct, gendered, says_m, says_f = [], [], [], [], []
        for h, own, cf in zip(hyps[g], refs[g], refs[other[g]]):
            h, own, cf = words(h), words(own), words(cf)
            right, wrong = bool(h & (own - cf)), bool(h & (cf - own))
            strict.append(right and not wrong)
            correct.append(not wrong)
            gendered.append(own != cf)
            said = g if right and not wrong else other[g] if wrong and not right else None
            says_m.append(said == "masculine")
            says_f.append(said == "feminine")
        for key, values in (("strict", strict), ("correct", correct), ("gendered", gendered), ("m", says_m),
                            ("f", says_f)):  # fmt: skip
            out[f"{key}_{g}"] = np.array(values, dtype=float)
    return out


def test_strict_accuracy_and_mf_ratio_against_a_direct_count(german: LanguageData) -> None:
    hyps = mixed(german)
    m = score_language(german, hyps, samples=SAMPLES, seed=SEED).metrics
    own = per_sentence(german, hyps)
    for g in ("feminine", "masculine"):
        strict, gendered = own[f"strict_{g}"], own[f"gendered_{g}"]
        assert m[f"strict_accuracy_{g}"] == pytest.approx(strict.sum() / gendered.sum(), abs=1e-12)
        assert m[f"strict_accuracy_{g}_ci95"] == pytest.approx(score_test_interval(strict.sum(), gendered.sum()))
        assert m[f"strict_accuracy_{g}"] < m[f"accuracy_{g}"]  # no gendered word: right for MT-GenEval only
    assert m["neutral_pairs"] == N - own["gendered_feminine"].sum()  # pairs whose references share their words
    masculine = own["m_feminine"].sum() + own["m_masculine"].sum()
    feminine = own["f_feminine"].sum() + own["f_masculine"].sum()
    assert (m["predicted_masculine"], m["predicted_feminine"]) == (masculine, feminine)
    assert m["mf_ratio"] == pytest.approx(masculine / feminine) and m["mf_ratio"] != pytest.approx(1.0, abs=0.01)
    low, high = score_test_interval(masculine, masculine + feminine)  # of the masculine share, to odds
    assert m["mf_ratio_ci95"] == pytest.approx([low / (1 - low), high / (1 - high)], rel=1e-9)


def test_accuracy_gaps_and_their_intervals_from_the_same_resamples(german: LanguageData) -> None:
    hyps = mixed(german)
    m = score_language(german, hyps, samples=SAMPLES, seed=SEED).metrics
    own = per_sentence(german, hyps)
    gap = own["correct_masculine"].mean() - own["correct_feminine"].mean()
    assert m["accuracy_gap"] == pytest.approx(gap, abs=1e-12)
    for key, name, counted in (("correct", "accuracy", np.ones(N, bool)), ("strict", "strict_accuracy", None)):
        counted = own["gendered_feminine"] > 0 if counted is None else counted  # the pairs counted for both
        m_right, f_right = own[f"{key}_masculine"][counted] > 0, own[f"{key}_feminine"][counted] > 0
        table = [int((m_right & f_right).sum()), int((m_right & ~f_right).sum()), int((~m_right & f_right).sum()),
                 int((~m_right & ~f_right).sum())]  # fmt: skip
        assert m[f"{name}_gap_ci95"] == pytest.approx(paired_difference_interval(*table), abs=1e-12)
        assert m[f"{name}_gap_ci95"][0] < m[f"{name}_gap"] < m[f"{name}_gap_ci95"][1]


def test_over_correction_flagged_only_when_feminine_wins_beyond_noise(german: LanguageData) -> None:
    """Feminine hypotheses perfect and masculine ones in the feminine form: flagged. Each gender right, with the
    same damage to both: not flagged. The masculine form for everyone (the usual bias): not flagged either."""
    ref_f, ref_m = german.feminine.references, german.masculine.references
    damaged = {"feminine": [r if i % 9 else "" for i, r in enumerate(ref_f)],
               "masculine": [r if i % 9 else "" for i, r in enumerate(ref_m)]}  # fmt: skip
    systems = {
        "over-corrected": {"feminine": ref_f, "masculine": ref_f},
        "balanced": damaged,
        "biased": {"feminine": ref_m, "masculine": ref_m},
    }
    flags = {}
    for name, hyps in systems.items():
        result = score_language(german, hyps, samples=SAMPLES, seed=SEED)
        metrics = {"languages": {"de": result.metrics}, "macro": macro_average([result])}
        flags[name] = over_correction(metrics)
    flagged = flags["over-corrected"]
    assert flagged is not None and set(flagged["scopes"]) == {"de"}
    gaps = flagged["scopes"]["de"]
    assert set(gaps) == {"accuracy_gap", "strict_accuracy_gap"}
    assert gaps["accuracy_gap"]["ci95"][1] < 0 and "over-correction" in flagged["message"]
    assert flags["balanced"] is None and flags["biased"] is None


def test_over_correction_in_the_takeaway_the_page_and_report_md(german: LanguageData) -> None:
    """The over-corrected system's report: a box above the takeaway on the page and in report.md, and the takeaway
    says so after the accuracy gap and its interval."""
    ref_f = german.feminine.references
    result = score_language(german, {"feminine": ref_f, "masculine": ref_f}, samples=SAMPLES, seed=SEED)
    config = {"data": "MT-GenEval dev (x)", "split": "dev", "languages": ["de"], "hypotheses": {"hyp_dir": "h"},
              "hypotheses_description": "files in h", "bleu_signature": "b", "chrf_signature": "c",
              "bootstrap_samples": SAMPLES, "seed": SEED, "definitions": {}}  # fmt: skip
    metrics = metrics_document([result], macro_average([result]), config)
    low, high = (100 * x for x in metrics["languages"]["de"]["accuracy_gap_ci95"])
    assert high < 0
    sentence = takeaway(metrics)
    interval = f"95% CI [{low:+.1f}, {high:+.1f}]".replace("-", "\u2212")
    assert interval in sentence and sentence.index(interval) < sentence.index("over-correction"), sentence
    page = render_html([result], metrics, {})
    md = render_markdown([result], metrics)
    for text in (page, md):
        assert text.index("Over-correction: feminine sentences get their gender right more often") < text.index(
            sentence.split(" (")[0]
        )
