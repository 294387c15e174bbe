"""Accuracy CIs and coverage: against counts and a score-test interval found here by bisection, on crafted sentences,
in the report."""

from __future__ import annotations

import json
import string
from pathlib import Path

import numpy as np
import pytest
from geneval_helpers import make_subset, reference_hyps, score_test_interval, write_hyps

from bias_eval.mtgeneval.gendered import LanguageData, Side
from bias_eval.mtgeneval.scoring import score_dataset, score_language
from mtkit.data.gendered_tables import load_table
from mtkit.data.mtgeneval import load_mtgeneval

SEED, SAMPLES = 11, 400
SHARES = ("accuracy_feminine", "accuracy_masculine", "accuracy_pair", "coverage")


def words(text: str) -> set[str]:
    """The official accuracy script's normalisation: lowercase, ASCII punctuation to spaces, split."""
    return set(text.lower().translate(str.maketrans(string.punctuation, " " * len(string.punctuation))).split())


@pytest.fixture(scope="module")
def scored(shared_geneval: Path, tmp_path_factory: pytest.TempPathFactory):
    """300 pairs of de and es; the system says the masculine form for every third feminine sentence and drops a
    word from every fifth masculine one (sometimes the gendered word)."""
    root = make_subset(shared_geneval, tmp_path_factory.mktemp("acc"), ("de", "es"), 300, split="dev")
    data = load_mtgeneval(root, "dev")
    hyps = {}
    for lang, ld in data.languages.items():
        ref_f, ref_m = ld.feminine.references, ld.masculine.references
        hyp_f = [m if i % 3 == 0 else f for i, (f, m) in enumerate(zip(ref_f, ref_m))]
        hyp_m = [" ".join(m.split()[1:]) if i % 5 == 0 else m for i, m in enumerate(ref_m)]
        hyps[lang] = {"feminine": hyp_f, "masculine": hyp_m}
    results, macro = score_dataset(data, hyps, samples=SAMPLES, seed=SEED)
    return data, hyps, results, macro


def expected_arrays(ld: LanguageData, hyp: dict[str, list[str]]) -> dict[str, np.ndarray]:
    """Per sentence, computed here: correct per gender, both correct, gendered pair, covered per gender."""
    ref = {"feminine": ld.feminine.references, "masculine": ld.masculine.references}
    other = {"feminine": "masculine", "masculine": "feminine"}
    out: dict[str, np.ndarray] = {}
    for g in ("feminine", "masculine"):
        triples = [(words(h), words(r), words(c)) for h, r, c in zip(hyp[g], ref[g], ref[other[g]])]
        out[g] = np.array([not (h & (c - r)) for h, r, c in triples], dtype=float)
        out[f"covers_{g}"] = np.array([bool(h & (r ^ c)) for h, r, c in triples], dtype=float)
        out["gendered"] = np.array([r != c for _, r, c in triples], dtype=float)
    out["pair"] = out["feminine"] * out["masculine"]
    return out


def test_accuracy_and_coverage_cis_are_score_intervals_of_their_counts(scored) -> None:
    """Each share's CI is the interval a score test would not reject, of its hits and counted hypotheses; the macro
    CI the same around the mean, with n = L^2 / sum(1/n_i)."""
    data, hyps, results, macro = scored
    sizes: dict[str, list[float]] = {key: [] for key in SHARES}
    for result in results:
        m, arrays = result.metrics, expected_arrays(data.languages[result.lang], hyps[result.lang])
        gendered = arrays["gendered"]
        covered = (arrays["covers_feminine"] + arrays["covers_masculine"]) * gendered
        own = {
            "accuracy_feminine": (arrays["feminine"].sum(), len(arrays["feminine"])),
            "accuracy_masculine": (arrays["masculine"].sum(), len(arrays["masculine"])),
            "accuracy_pair": (arrays["pair"].sum(), len(arrays["pair"])),
            "coverage": (covered.sum(), 2 * gendered.sum()),
        }
        for key, (hits, n) in own.items():
            assert m[key] == pytest.approx(hits / n, abs=1e-12), (result.lang, key)
            assert m[f"{key}_ci95"] == pytest.approx(score_test_interval(hits, n), abs=1e-9), (result.lang, key)
            sizes[key].append(n)
        for g in ("feminine", "masculine"):
            expected = (arrays[f"covers_{g}"] * gendered).sum() / gendered.sum()
            assert m[f"coverage_{g}"] == pytest.approx(expected, abs=1e-12)
        assert 0.6 < m["accuracy_feminine"] < 0.75 and m["accuracy_masculine"] > 0.8  # neither 0 nor 1
    for key in SHARES:
        mean = np.mean([r.metrics[key] for r in results])
        size = len(results) ** 2 / sum(1 / n for n in sizes[key])
        assert macro[key] == pytest.approx(mean, abs=1e-12)
        assert macro[f"{key}_ci95"] == pytest.approx(score_test_interval(mean * size, size), abs=1e-9), key


def test_point_estimate_inside_and_ci_narrows_with_more_data(shared_geneval: Path) -> None:
    ld = load_mtgeneval(shared_geneval, "dev", ["de"]).languages["de"]

    def scored(n: int) -> dict:
        ref_f, ref_m = ld.feminine.references[:n], ld.masculine.references[:n]
        sides = [
            Side(s.sources[:n], r, c, None, "x")
            for s, r, c in ((ld.feminine, ref_f, ref_m), (ld.masculine, ref_m, ref_f))
        ]
        hyp_f = [m if i % 4 == 0 else f for i, (f, m) in enumerate(zip(ref_f, ref_m))]
        hyp_m = [
            "Keine Angabe." if i % 5 == 0 else f if i % 7 == 0 else m for i, (f, m) in enumerate(zip(ref_f, ref_m))
        ]
        data = LanguageData("de", sides[0], sides[1], paired=True)
        return score_language(data, {"feminine": hyp_f, "masculine": hyp_m}, samples=500, seed=3).metrics

    small, large = scored(100), scored(1200)
    for m in (small, large):
        for key in SHARES:
            lo, hi = m[f"{key}_ci95"]
            assert lo <= m[key] <= hi and lo < hi, key
    for key in SHARES:
        width = {name: m[f"{key}_ci95"][1] - m[f"{key}_ci95"][0] for name, m in (("small", small), ("large", large))}
        assert width["large"] < 0.7 * width["small"], key  # ~ 1/sqrt(12) of it in theory


def _crafted() -> tuple[LanguageData, dict[str, list[str]]]:
    ref_f = ["Sie ist Ärztin.", "Sie sagten es.", "Die Lehrerin kam.", "Meine Freundin lacht."]
    ref_m = ["Er ist Arzt.", "Sie sagten es.", "Der Lehrer kam.", "Mein Freund lacht."]
    hyp_f = ["SIE ist Ärztin!", "Irgendwas.", "Der Lehrer kam.", "Jemand lacht."]
    hyp_m = ["Die Person ist hier.", "Sie sagten es.", "Der Lehrer, kam", "Jemand lacht."]
    feminine = Side(["s"] * 4, ref_f, ref_m, None, "f")
    masculine = Side(["s"] * 4, ref_m, ref_f, None, "m")
    return LanguageData("de", feminine, masculine, paired=True), {"feminine": hyp_f, "masculine": hyp_m}


def test_coverage_on_crafted_sentences() -> None:
    """Pair 1 is gender-neutral (identical references): it is left out of coverage, and always correct.

    feminine: 0 covers (sie, ärztin), 2 covers (der, lehrer: wrong), 3 does not -> 2/3, accuracy 3/4;
    masculine: 0 does not, 2 covers (der, lehrer), 3 does not -> 1/3, accuracy 4/4; coverage 3/6.
    """
    data, hyps = _crafted()
    result = score_language(data, hyps, samples=0, seed=0)
    m = result.metrics
    assert m["coverage_feminine"] == pytest.approx(2 / 3) and m["coverage_masculine"] == pytest.approx(1 / 3)
    assert m["coverage"] == 0.5
    assert (m["accuracy_feminine"], m["accuracy_masculine"], m["accuracy_pair"]) == (0.75, 1.0, 0.75)
    assert m["accuracy_feminine_ci95"] is None and m["coverage_ci95"] is None  # no resamples asked for
    assert [row["covers_feminine"] for row in result.details] == [True, None, True, False]
    assert [row["covers_masculine"] for row in result.details] == [False, None, True, False]


def test_unpaired_data_with_counterfactuals(tmp_path: Path) -> None:
    """Rows not paired across genders: accuracy and coverage per gender, each resampled on its own; no pair."""
    rows = ["source,reference,counterfactual,gender,language"]
    rows += [f"s,Die Ärztin {i} kam.,Der Arzt {i} kam.,f,de" for i in range(30)]
    rows += [f"s,Der Arzt {i} kam.,Die Ärztin {i} kam.,m,de" for i in range(17)]
    path = tmp_path / "t.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    hyp_f = [
        f"Der Arzt {i} kam." if i < 12 else (f"Die Ärztin {i} kam." if i < 27 else "Jemand kam.") for i in range(30)
    ]
    hyp_m = [f"Der Arzt {i} kam." for i in range(17)]
    results, macro = score_dataset(
        load_table(path), {"de": {"feminine": hyp_f, "masculine": hyp_m}}, samples=300, seed=1
    )
    m = results[0].metrics
    assert m["accuracy_feminine"] == pytest.approx(18 / 30) and m["accuracy_masculine"] == 1.0
    assert m["coverage_feminine"] == pytest.approx(27 / 30) and m["coverage"] == pytest.approx(44 / 47)
    assert m["accuracy_pair"] is None and m["accuracy_pair_ci95"] is None
    lo, hi = m["accuracy_feminine_ci95"]
    assert lo < 18 / 30 < hi and m["accuracy_masculine_ci95"] == pytest.approx(score_test_interval(17, 17))
    assert m["accuracy_masculine_ci95"][0] < 1.0  # all right, and still an interval of positive width
    assert macro["accuracy_feminine_ci95"] == pytest.approx(m["accuracy_feminine_ci95"])  # one language: the same


def test_report_shows_accuracy_cis_and_coverage(run_cli, small_geneval: Path, tmp_path: Path) -> None:
    hyps = reference_hyps(small_geneval, ("de", "es"), "test", lambda g: "masculine")
    out = tmp_path / "report"
    status, stdout, err = run_cli(
        *("--mtgeneval_dir", str(small_geneval), "--split", "test", "--out", str(out)),
        *("--hyp_dir", str(write_hyps(tmp_path / "h", hyps)), "--bootstrap_samples", "100", "--no_figures"),
    )
    assert status == 0, err
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    md = (out / "report.md").read_text(encoding="utf-8")
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "accuracy feminine [95% CI]" in md and "Coverage" in stdout
    for scope in [*metrics["languages"].values(), metrics["macro"]]:
        for key in SHARES:
            lo, hi = scope[f"{key}_ci95"]
            cell = f"{100 * scope[key]:.1f}% [{100 * lo:.1f}%, {100 * hi:.1f}%]"  # shares in percent
            assert cell in md and cell in html, cell
    definitions = metrics["config"]["definitions"]
    assert "distinguishing" in definitions["coverage"] and "Wilson score interval" in definitions["accuracy_ci95"]
    assert "**coverage**" in md and "<b>accuracy_ci95</b>" in html


def covering_share(root: Path, lang: str, hyps: dict[str, list[str]]) -> float:
    """Share of hypotheses that hold a word of either reference the other lacks, over the sentences whose references
    differ in some word: counted here with the official script's normalisation, straight from the files."""
    refs = {g: (root / "sentences" / "test" / f"geneval-sentences-{g}-test.en_{lang}.{lang}").read_text().splitlines()
            for g in ("feminine", "masculine")}  # fmt: skip
    hits = counted = 0
    for i, (fem, masc) in enumerate(zip(refs["feminine"], refs["masculine"])):
        distinguishing = words(fem) ^ words(masc)
        if not distinguishing:
            continue
        for gender in ("feminine", "masculine"):
            counted += 1
            hits += bool(words(hyps[gender][i]) & distinguishing)
    return hits / counted


def test_garbage_that_looks_unbiased_is_a_loud_warning(run_cli, small_geneval, tmp_path):
    """Empty and nonsense translations score near 100% accuracy; the report says the figures say little, with the
    coverage counted here, on the console, in metrics.json (``warning``) and its definitions."""
    good = reference_hyps(small_geneval, ["de", "es"], "test", lambda g: g)
    garbage = {"de": good["de"], "es": {}}
    for gender, lines in good["es"].items():
        # the first three sentences translated right, the rest empty or nonsense
        garbage["es"][gender] = lines[:3] + ["" if i % 2 else "Creo y a nuestrosrosrosros cuadros cuadros." for i in
                                             range(len(lines) - 3)]  # fmt: skip
    hyps = write_hyps(tmp_path / "hyps", garbage)
    args = ["--mtgeneval_dir", str(small_geneval), "--split", "test", "--no_figures", "--hyp_dir", str(hyps)]
    status, out, _ = run_cli(*args, "--bootstrap_samples", "20", "--out", str(tmp_path / "r"))
    assert status == 0
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    es = metrics["languages"]["es"]
    share = covering_share(small_geneval, "es", garbage["es"])
    assert share < 0.5 and es["coverage"] == pytest.approx(share)
    assert es["accuracy_feminine"] > 0.9 and es["accuracy_masculine"] > 0.9  # what looks unbiased
    warning = metrics["warning"]
    assert set(warning["languages"]) == {"es"}  # German, translated right, is not flagged
    assert warning["languages"]["es"]["coverage"] == pytest.approx(share)
    assert warning["thresholds"] == {"coverage": 0.5, "bleu": 5.0}
    said = f"the accuracies say little: only {share:.1%} of hypotheses contain a gendered word and BLEU is "
    assert warning["message"].startswith(said)
    assert f"WARNING: {warning['message']}" in out
    assert "below 50%" in metrics["config"]["definitions"]["warning"]

    good_args = (str(write_hyps(tmp_path / "good", good)), "--bootstrap_samples", "20", "--out", str(tmp_path / "g"))
    status, out, _ = run_cli(*args[:-1], *good_args)
    assert status == 0 and "WARNING" not in out
    assert json.loads((tmp_path / "g" / "metrics.json").read_text())["warning"] is None
