"""Paired tests between two systems: McNemar's exact p-values against scipy's and a direct formula, the paired
bootstrap against a resampling written here with sacreBLEU's corpus BLEU and against sacreBLEU's own paired bootstrap,
and the refusal when two reports hold different sentences."""

from __future__ import annotations

import json
import zlib
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from geneval_helpers import SentenceCounts, bleu_of, geneval_file, read_plain
from hypothesis import given, settings
from hypothesis import strategies as st
from sacrebleu.metrics import BLEU
from sacrebleu.significance import PairedTest

from bias_eval.compare.mtgeneval_tests import Sentences, language_tests, paired_tests, sentences
from bias_eval.core.paired import (
    McNemar,
    bootstrap_test,
    mcnemar,
    mcnemar_interval,
    mcnemar_p,
    mean_change,
    p_relation,
    paired_change,
)
from bias_eval.core.report import Report

#: scipy.stats.binomtest(b, b + c).pvalue (two-sided, p=1/2), computed with scipy 1.17.1 and written out here
SCIPY_BINOMTEST = {
    (0, 5): 0.0625,
    (3, 12): 0.03515625,
    (12, 3): 0.03515625,
    (10, 10): 1.0,
    (7, 8): 1.0,
    (25, 40): 0.08168153394154003,
    (50, 80): 0.010694055123829345,
    (150, 86): 3.7159361395713866e-05,
    (121, 59): 4.4344492637551645e-06,
    (1, 30): 2.9802322387695312e-08,
    (200, 230): 0.16188409130586115,
    (0, 1): 1.0,
}


def minlike_p(b: int, c: int) -> float:
    """Two-sided exact binomial p by the 'minlike' rule: the probability of every outcome no likelier than the one
    seen, from a Pascal's-triangle row of exact fractions (not the tail formula of the code)."""
    n = b + c
    row = [1]
    for _ in range(n):
        row = [x + y for x, y in zip([0, *row], [*row, 0])]
    total = Fraction(sum(row))
    return float(sum(Fraction(x) for x in row if x <= row[b]) / total)


@pytest.mark.parametrize(("b", "c"), sorted(SCIPY_BINOMTEST))
def test_mcnemar_exact_p_equals_scipy_and_the_minlike_rule(b: int, c: int) -> None:
    assert mcnemar_p(b, c) == pytest.approx(SCIPY_BINOMTEST[(b, c)], rel=1e-12)
    assert mcnemar_p(b, c) == pytest.approx(minlike_p(b, c), rel=1e-12)


def test_mcnemar_counts_the_discordant_sentences() -> None:
    """A constructed 2x2 table: 40 right in both, 6 wrong in both, 3 right before only, 12 right after only."""
    before = [True] * 40 + [False] * 6 + [True] * 3 + [False] * 12
    after = [True] * 40 + [False] * 6 + [False] * 3 + [True] * 12
    order = np.random.default_rng(0).permutation(len(before))
    result = mcnemar([before[i] for i in order], [after[i] for i in order])
    assert (result.n, result.before_only, result.after_only) == (61, 3, 12)
    assert result.p_value == pytest.approx(SCIPY_BINOMTEST[(3, 12)], rel=1e-12)
    assert mcnemar_p(0, 0) == 1.0


def order_interval(changes: np.ndarray) -> list[float]:
    """The bootstrap's documented 95% interval, written here: the j-th smallest to the j-th largest replicate, j the
    number of far-side counts k whose p, 2 (k + 1) / (B + 1), is below 0.05."""
    ordered, size = sorted(changes), len(changes)
    j = sum(1 for k in range(size) if 2 * (k + 1) / (size + 1) < 0.05)
    return [ordered[j - 1], ordered[size - j]]


def order_p(changes: np.ndarray) -> float:
    """The bootstrap's documented p: the replicates on the smaller side of 0."""
    far = min(int((changes <= 0).sum()), int((changes >= 0).sum()))
    return min(1.0, 2 * (far + 1) / (len(changes) + 1))


def test_macro_change_is_the_mean_of_the_languages_replicates() -> None:
    """Two languages' changes, each with its own replicates: the macro interval is the bootstrap interval of their
    mean replicate by replicate (not a mean of bounds), and its p-value counts the mean's replicates."""
    rng = np.random.default_rng(4)
    reps = {lang: (rng.normal(0.0, 1.0, 500), rng.normal(0.4, 1.0, 500)) for lang in ("de", "es")}
    changes = [paired_change(0.0, 0.4, before, after) for before, after in reps.values()]
    macro = mean_change(changes)
    mean = np.mean([after - before for before, after in reps.values()], axis=0)
    assert macro.change == pytest.approx(0.4)
    assert macro.ci95 == pytest.approx(order_interval(mean))
    assert macro.p_value == pytest.approx(order_p(mean))
    assert macro.ci95 != pytest.approx(list(np.mean([c.ci95 for c in changes], axis=0)))


def _write_report(folder: Path, sources: dict, refs: dict, hyps: dict) -> Path:
    """A report folder's ``de.details.jsonl`` (paired rows) with MT-GenEval's accuracy decisions made here."""
    folder.mkdir(parents=True)
    rows = []
    for i in range(len(refs["feminine"])):
        row: dict = {"index": i}
        for g, other in (("feminine", "masculine"), ("masculine", "feminine")):
            h, own, cf = (set(x.lower().split()) for x in (hyps[g][i], refs[g][i], refs[other][i]))
            row |= {f"source_{g}": sources[g][i], f"reference_{g}": refs[g][i], f"hypothesis_{g}": hyps[g][i]}
            row |= {
                f"correct_{g}": not (h & (cf - own)),
                f"strict_correct_{g}": bool(h & (own - cf)) and not h & (cf - own),
            }
        row["correct_pair"] = row["correct_feminine"] and row["correct_masculine"]
        rows.append(row)
    (folder / "de.details.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def two_systems(shared_geneval: Path, tmp_path_factory: pytest.TempPathFactory):
    """Two systems on the first 150 German pairs: A says the masculine form for every fourth feminine sentence, B
    for every tenth, and drops the last word of every third masculine sentence."""
    tmp = tmp_path_factory.mktemp("paired")
    n = 150
    src = {g: read_plain(geneval_file(shared_geneval, "de", g, "en"))[:n] for g in ("feminine", "masculine")}
    ref = {g: read_plain(geneval_file(shared_geneval, "de", g, "de"))[:n] for g in ("feminine", "masculine")}
    a = {"feminine": [m if i % 4 == 0 else f for i, (f, m) in enumerate(zip(ref["feminine"], ref["masculine"]))],
         "masculine": list(ref["masculine"])}  # fmt: skip
    damaged = [" ".join(m.split()[:-1]) if i % 3 == 0 else m for i, m in enumerate(ref["masculine"])]
    b = {"feminine": [m if i % 10 == 0 else f for i, (f, m) in enumerate(zip(ref["feminine"], ref["masculine"]))],
         "masculine": damaged}  # fmt: skip
    return src, ref, a, b, _write_report(tmp / "a", src, ref, a), _write_report(tmp / "b", src, ref, b)


def test_paired_bootstrap_equals_a_direct_resampling(two_systems) -> None:
    """BLEU over both genders and the BLEU gap: the change, its percentile CI and its p-value, against sacreBLEU's
    corpus BLEU of every resample drawn here with the documented generator (seed, crc32 of the language), each from
    its sentences' summed sacreBLEU counts (geneval_helpers.SentenceCounts)."""
    _, ref, a, b, folder_a, folder_b = two_systems
    samples, seed, n = 40, 9, len(ref["feminine"])
    rows = language_tests(
        "de", sentences(Report({}, folder_a), "de", "A"), sentences(Report({}, folder_b), "de", "B"), samples, seed
    )
    by = {r["figure"]: r for r in rows}
    draws = np.random.default_rng([seed, zlib.crc32(b"de")]).integers(0, n, size=(samples, n))
    both = ("feminine", "masculine")
    whole = np.arange(n)
    counts = {(name, g): SentenceCounts(h[g], ref[g]) for name, h in (("a", a), ("b", b)) for g in both}

    def bleu(name: str, genders: tuple[str, ...], idx: np.ndarray) -> float:
        return bleu_of(sum(counts[name, g].total(idx) for g in genders))

    def gap(name: str, idx: np.ndarray) -> float:
        return bleu(name, ("masculine",), idx) - bleu(name, ("feminine",), idx)

    for key, figure in (("bleu", lambda name, idx: bleu(name, both, idx)), ("bleu_gap", gap)):
        changes = np.array([figure("b", idx) - figure("a", idx) for idx in draws])
        change = figure("b", whole) - figure("a", whole)
        assert by[key]["change"] == pytest.approx(change, abs=1e-9)
        assert by[key]["ci95"] == pytest.approx(order_interval(changes), abs=1e-9)
        assert by[key]["p_value"] == pytest.approx(order_p(changes))
    assert by["bleu_gap"]["ci95"][1] < 0  # B damages masculine sentences: the gap shrinks beyond noise


def test_mcnemar_rows_count_the_sentences_judged_differently(two_systems) -> None:
    _, ref, a, b, folder_a, folder_b = two_systems
    rows = language_tests(
        "de", sentences(Report({}, folder_a), "de", "A"), sentences(Report({}, folder_b), "de", "B"), 40, 1
    )
    by = {r["figure"]: r for r in rows}
    n = len(ref["feminine"])
    # feminine: A wrong on every 4th sentence, B on every 10th (B right where A is wrong, except on multiples of 20)
    wrong_a = {i for i in range(n) if i % 4 == 0 and ref["feminine"][i] != ref["masculine"][i]}
    wrong_b = {i for i in range(n) if i % 10 == 0 and ref["feminine"][i] != ref["masculine"][i]}
    row = by["accuracy_feminine"]
    assert (row["before_only"], row["after_only"]) == (len(wrong_b - wrong_a), len(wrong_a - wrong_b))
    assert row["p_value"] == pytest.approx(minlike_p(row["before_only"], row["after_only"]), rel=1e-12)
    assert row["test"] == "McNemar exact" and row["significant"] == (row["p_value"] < 0.05)


def test_significance_agrees_with_sacrebleus_paired_bootstrap(two_systems) -> None:
    """sacreBLEU's paired bootstrap (Koehn's test, as the sacrebleu command runs it) on all sentences: A against A with
    one word added is not significantly different, against A with the last two words of every other sentence dropped
    it is, and B's trade (fewer gender errors, damaged masculine sentences) is not; so here."""
    _, ref, a, b, folder_a, folder_b = two_systems
    both = ("feminine", "masculine")
    refs = [[r for g in both for r in ref[g]]]
    near = {g: list(a[g]) for g in both}
    near["masculine"][5] = near["masculine"][5] + " ja"
    worse = {g: [" ".join(h.split()[:-2]) if i % 2 else h for i, h in enumerate(a[g])] for g in both}
    near_dir = _write_report(folder_a.parent / "near", two_systems[0], ref, near)
    worse_dir = _write_report(folder_a.parent / "worse", two_systems[0], ref, worse)
    for other, folder, expected in ((worse, worse_dir, True), (near, near_dir, False), (b, folder_b, False)):
        systems = [("a", [h for g in both for h in a[g]]), ("other", [h for g in both for h in other[g]])]
        _, scores = PairedTest(systems, {"BLEU": BLEU()}, refs, test_type="bs", n_samples=300)()
        theirs = scores["BLEU"][1].p_value < 0.05
        rows = language_tests(
            "de", sentences(Report({}, folder_a), "de", "A"), sentences(Report({}, folder), "de", "B"), 300, 3
        )
        ours = next(r for r in rows if r["figure"] == "bleu")["significant"]
        assert (ours, theirs) == (expected, expected), next(r for r in rows if r["figure"] == "bleu")


def test_refused_on_other_sentences(two_systems, tmp_path: Path) -> None:
    src, ref, a, _, folder_a, _ = two_systems
    moved = {g: [*ref[g][1:], ref[g][0]] for g in ref}
    other = _write_report(tmp_path / "other", src, moved, a)
    metrics = [{"languages": {"de": {}}, "macro": {}, "config": {"bootstrap_samples": 40, "seed": 1}}] * 2
    paired = paired_tests([Report(m, f) for m, f in zip(metrics, (folder_a, other))], ["base", "tuned"], ["de"])
    assert paired["refused"] == "de: feminine sentence 0 has another reference in tuned: not the same sentences"
    assert paired["rows"] == []
    missing = paired_tests([Report(m, f) for m, f in zip(metrics, (folder_a, tmp_path))], ["base", "tuned"], ["de"])
    assert missing["refused"].startswith(f"AFTER: {tmp_path / 'de.details.jsonl'} is missing")


@settings(max_examples=200, deadline=None)
@given(changes=st.lists(st.integers(-500, 500).map(lambda x: x / 100), min_size=40, max_size=400))
def test_a_bootstrap_interval_excludes_0_exactly_when_its_p_is_below_the_level(changes: list[float]) -> None:
    """Any replicates: the interval is the documented order statistics, the p the documented count, and the two agree
    on every side of the boundary (the decision cannot differ between the interval and p)."""
    values = np.array(changes)
    ci, p = bootstrap_test(values)
    assert ci == pytest.approx(order_interval(values)) and p == pytest.approx(order_p(values))
    assert (ci[0] > 0 or ci[1] < 0) == (p < 0.05)


@settings(max_examples=300, deadline=None)
@given(b=st.integers(0, 60), c=st.integers(0, 60), same=st.integers(0, 60), before_right=st.integers(0, 60))
def test_mcnemars_interval_excludes_0_exactly_when_its_p_is_below_the_level(b, c, same, before_right) -> None:
    """Any 2x2 table: the interval holds the change, stays in the shares' range and excludes 0 exactly when the exact
    p (from Pascal's triangle here) is below 0.05."""
    n = b + c + same + before_right
    if n == 0:
        return
    test = McNemar(n, b, c, minlike_p(b, c) if b + c else 1.0)
    before = (b + before_right) / n
    low, high = mcnemar_interval(test, before)
    change = (c - b) / n
    assert low <= change + 1e-12 and change <= high + 1e-12
    assert -before - 1e-12 <= low and high <= 1 - before + 1e-12
    assert (low > 0 or high < 0) == (minlike_p(b, c) < 0.05 if b + c else False)


def test_four_pairs_feminine_0_of_4_to_4_of_4_is_not_beyond_noise() -> None:
    """4 pairs, feminine wrong in all before and right in all after: McNemar's p is 2 / 2^4 = 0.125 and its interval
    holds 0; the gap's bootstrap is refused (4 pairs), so nothing calls the change beyond noise."""

    def system(feminine: bool) -> Sentences:
        def side(right: bool) -> dict:
            return {"source": ["s"] * 4, "reference": ["r"] * 4, "hypothesis": ["r"] * 4, "correct": [right] * 4,
                    "strict_correct": [right] * 4, "bleu_stats": [None] * 4, "chrf_stats": [None] * 4,
                    "correct_pair": [feminine] * 4}  # fmt: skip

        return Sentences(True, {"feminine": side(feminine), "masculine": side(True)})

    rows = {r["figure"]: r for r in language_tests("de", system(False), system(True), 1000, 1)}
    feminine = rows["accuracy_feminine"]
    assert feminine["p_value"] == pytest.approx(2 / 2**4) and not feminine["significant"]
    assert feminine["ci95"][0] <= 0 <= feminine["ci95"][1]
    assert rows["accuracy_gap_size"]["missing"] and "4 pairs" in rows["accuracy_gap_size"]["refused"]


def test_an_adjusted_p_made_from_a_bound_is_written_as_a_bound() -> None:
    """Every page (comparisons and the verdict) writes p one way: ``= x`` when exact, ``< x`` at a bootstrap's floor,
    and Holm's adjusted p of a floor-bound raw p as ``≤ x`` (it is m times a bound), never ``= x``."""
    floor = 2 / 1200  # the paired bootstrap's smallest p with 1,199 resamples
    assert p_relation({"p_value": floor, "p_floor": floor, "p_adjusted": 12 * floor}) == ("< 0.0017", "≤ 0.02")
    assert p_relation({"p_value": 0.012, "p_floor": floor, "p_adjusted": 0.036}) == ("= 0.012", "= 0.036")
    assert p_relation({"p_value": 0.0004, "p_adjusted": 0.0004}) == ("< 0.001", None)
    assert p_relation({"p_value": 0.2, "p_floor": None, "p_adjusted": 0.6}) == ("= 0.2", "= 0.6")
