"""The mitigation verdict's parts computed in-process: the general cost against sacreBLEU called directly (the
figures, and the paired-bootstrap interval and p-value recomputed by a plain loop over the same resamples; BLEU with
the rows' own language's tokenizer), the leakage check on mitigation data that holds verdict sentences, and the
accuracy gap's outcome (narrowed, over-corrected, levelled down, did not narrow, no test ran) on constructed paired
decisions, checked against a direct numpy computation over the same resamples."""

import functools
import math

import numpy as np
import pytest
import sacrebleu
from geneval_helpers import score_test_interval
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from bias_eval.compare.mtgeneval_tests import Sentences, language_tests, macro_tests
from bias_eval.core import bleu
from bias_eval.core.bootstrap import language_rng, resample_counts
from bias_eval.core.decision import Rule
from bias_eval.core.intervals import mean_interval, paired_difference_interval
from bias_eval.mtgeneval.balance import over_correction, ratio_interval
from bias_eval.mtgeneval.metrics import bleu_stats, chrf_stats
from mtkit.evaluation.outcome import COMPARISONS
from mtkit.evaluation.verdict import general_cost, leakage, verdict_document
from mtkit.evaluation.verdict_page import KEPT_START, render_markdown, summary


def saved(doc: dict) -> dict:
    """``doc`` as ``metrics.json`` holds it: with its over-correction flag, computed by the library."""
    return doc | {"over_correction": over_correction(doc)}


REFS = [f"el médico número {i} terminó su turno ayer por la tarde ." for i in range(30)]


def order_interval(changes: np.ndarray) -> list[float]:
    """The paired bootstrap's documented 95% interval: the j-th smallest to the j-th largest replicate, j the number
    of far-side counts k whose p, 2 (k + 1) / (B + 1), is below 0.05."""
    ordered, size = sorted(changes), len(changes)
    j = sum(1 for k in range(size) if 2 * (k + 1) / (size + 1) < 0.05)
    return [ordered[j - 1], ordered[size - j]]


def order_p(changes: np.ndarray) -> float:
    """The paired bootstrap's documented p: the replicates on the smaller side of 0, a replicate within rounding of 0
    (a mean of the languages' changes that is 0 in exact arithmetic) on both sides."""
    changes = np.where(np.abs(changes) < 1e-9, 0.0, changes)
    return min(1.0, 2 * (min(int((changes <= 0).sum()), int((changes >= 0).sum())) + 1) / (len(changes) + 1))


def test_general_cost_matches_sacrebleu_and_a_direct_paired_bootstrap() -> None:
    before = [
        {"target": r, "lang": "es", "hypothesis": r if i % 3 else "el médico terminó"} for i, r in enumerate(REFS)
    ]
    after = [{"target": r, "lang": "es", "hypothesis": r if i % 4 else "la médica terminó"} for i, r in enumerate(REFS)]
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
    assert np.allclose(cost["bleu"]["ci95"], order_interval(changes))
    assert np.isclose(cost["bleu"]["p_value"], order_p(changes))
    low, high = sorted((cost["bleu"]["p_value"], cost["chrf"]["p_value"]))  # Holm over the two tests, by hand
    adjusted = {low: min(1.0, 2 * low), high: max(min(1.0, 2 * low), high)}
    for name in ("bleu", "chrf"):
        assert cost[name]["p_adjusted"] == pytest.approx(adjusted[cost[name]["p_value"]])
        assert cost[name]["significant"] == (cost[name]["p_adjusted"] < 0.05)
    raw = general_cost(before, after, samples=40, seed=3, rule=Rule(p_adjust="none"))
    assert raw["bleu"]["p_adjusted"] == raw["bleu"]["p_value"]
    assert general_cost(before, after, samples=39, seed=3)["refused"].startswith("39 bootstrap resamples cannot")


def _rows(n: int, start: int = 0) -> list[dict]:
    out = []
    for i in range(start, start + n):
        out.append({"source": f"The engineer {i} said she left.", "target": f"La ingeniera {i} dijo que se fue.",
                    "counterfactual": f"El ingeniero {i} dijo que se fue."})  # fmt: skip
        out.append({"source": f"The engineer {i} said he left.", "target": f"El ingeniero {i} dijo que se fue.",
                    "counterfactual": f"La ingeniera {i} dijo que se fue."})  # fmt: skip
    return out


#: the budget of a verdict judged by MT-GenEval's lenient accuracy (the figures these tests build)
LENIENT = {"measure": "accuracy"}


def two_models(before: dict, after: dict, paired: dict, leak: dict) -> dict:
    """The verdict of a start and a mitigated model without a control."""
    return verdict_document({"start": before, "mitigated": after}, {"mitigated_vs_start": paired}, {}, leak, LENIENT)


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
    def metrics(f: float, m: float) -> dict:
        one = {"accuracy_feminine": f, "accuracy_masculine": m, "accuracy_gap": m - f}
        return saved({"languages": {"de": dict(one), "es": dict(one)}, "macro": dict(one)})

    rows = [{"lang": lang, "figure": figure, "ci95": [-0.2, -0.1], "p_value": p, "test": "paired bootstrap"}
            for lang, p in (("de", 0.03), ("es", 0.2), ("macro", 0.01))
            for figure in ("accuracy_gap", "accuracy_gap_size")]  # fmt: skip
    leak = leakage(_rows(2), _rows(2, start=50))
    doc = two_models(metrics(0.8, 0.95), metrics(0.93, 0.95), {"rows": rows}, leak)
    total = doc["mitigated_vs_start"]
    assert total["languages"]["es"]["accuracy_gap"]["p_value"] == 0.2
    assert total["overall"]["accuracy_gap"]["p_value"] == 0.01 and total["overall"]["gap_narrowed"]
    assert np.isclose(total["overall"]["accuracy_gap"]["change"], -0.13)
    assert doc["over_correction"] is None and "narrowed beyond noise" in doc["summary"]
    assert doc["control"] is None and doc["mitigated_vs_control"] is None and "cannot separate" in doc["summary"]


def test_a_gap_closed_by_the_better_served_gender_falling_is_flagged_as_levelling_down() -> None:
    """The gap narrows beyond noise in both cases; when masculine accuracy fell beyond noise (p < 0.05) while
    feminine stayed, the verdict says so; when feminine rose instead, it does not."""

    def metrics(f: float, m: float) -> dict:
        one = {"accuracy_feminine": f, "accuracy_masculine": m, "accuracy_gap": m - f}
        return saved({"languages": {"de": one}})

    def test(figure: str, p: float) -> dict:
        return {"lang": "de", "figure": figure, "ci95": [-0.1, -0.01], "p_value": p, "test": "t"}

    leak = leakage(_rows(2), _rows(2, start=50))
    rows = [test("accuracy_gap", 0.03), test("accuracy_masculine", 0.01), test("accuracy_feminine", 0.7)]
    rows.append(test("accuracy_gap_size", 0.03))
    down = two_models(metrics(0.88, 0.93), metrics(0.89, 0.90), {"rows": rows}, leak)["mitigated_vs_start"]["overall"]
    assert down["gap_narrowed"] and down["levelled_down"] == "accuracy_masculine"
    assert down["gap_outcome"] == "levelled down"
    summary = two_models(metrics(0.88, 0.93), metrics(0.89, 0.90), {"rows": rows}, leak)["summary"]
    assert "Levelling down against the start: accuracy m fell 3.0 points beyond noise (p = 0.01)" in summary
    rows = [test("accuracy_gap", 0.03), test("accuracy_masculine", 0.9), test("accuracy_feminine", 0.01)]
    rows.append(test("accuracy_gap_size", 0.03))
    up = two_models(metrics(0.88, 0.93), metrics(0.92, 0.93), {"rows": rows}, leak)
    assert up["mitigated_vs_start"]["overall"]["gap_narrowed"]
    assert up["mitigated_vs_start"]["overall"]["levelled_down"] is None and "Levelling down" not in up["summary"]


# -- the accuracy gap's outcome on constructed paired decisions ------------------------------------------------------

SAMPLES, SEED = 400, 12345


@functools.cache
def _text_stats(n: int) -> tuple[list[list[int]], list[list[int]]]:
    """The BLEU and chrF statistics of ``n`` sentences each translated as its reference, as a report saves them
    (computed once: every system of these tests has this text)."""
    text = [f"la casa {i}" for i in range(n)]
    return bleu_stats(text, text, "de").tolist(), chrf_stats(text, text).tolist()


def _sentences(feminine: list[bool], masculine: list[bool], *strict: list[bool]) -> Sentences:
    """One system's paired sentences of ``de`` with these accuracy decisions (text alike: BLEU plays no part); the
    strict decisions are ``strict`` (feminine, masculine) when given, else the same."""
    n, columns = len(feminine), {}
    strict = strict or (feminine, masculine)
    bleu_rows, chrf_rows = _text_stats(n)
    for gender, decisions, own in (("feminine", feminine, strict[0]), ("masculine", masculine, strict[1])):
        columns[gender] = {
            "source": [f"{gender} {i}" for i in range(n)], "reference": [f"la casa {i}" for i in range(n)],
            "hypothesis": [f"la casa {i}" for i in range(n)], "correct": list(decisions),
            "strict_correct": list(own), "bleu_stats": bleu_rows, "chrf_stats": chrf_rows,
            "correct_pair": [f and m for f, m in zip(feminine, masculine)],
        }  # fmt: skip
    return Sentences(True, columns)


def _gap_replicates(feminine: list[bool], masculine: list[bool], counts: np.ndarray) -> np.ndarray:
    """Accuracy m - accuracy f on each resample (a row of counts: how often each pair is drawn)."""
    f, m = np.asarray(feminine, dtype=float), np.asarray(masculine, dtype=float)
    return (counts @ m - counts @ f) / counts.sum(axis=1)


def _newcombe(feminine: list[bool], masculine: list[bool]) -> list[float]:
    """The report's interval of the gap m - f: Newcombe's paired interval of the pairs' 2x2 table counted here."""
    f, m = np.asarray(feminine), np.asarray(masculine)
    return paired_difference_interval(*(int(x.sum()) for x in (m & f, m & ~f, ~m & f, ~m & ~f)))


def _metrics(feminine: list[bool], masculine: list[bool], counts: np.ndarray, *strict: list[bool]) -> dict:
    """A report's metrics.json figures of ``de``, computed directly (the strict ones from ``strict``, else alike)."""
    one = {}
    for name, (fd, md) in (("accuracy", (feminine, masculine)), ("strict_accuracy", strict or (feminine, masculine))):
        f, m = float(np.mean(fd)), float(np.mean(md))
        ci = _newcombe(fd, md)
        one |= {f"{name}_feminine": f, f"{name}_masculine": m, f"{name}_gap": m - f, f"{name}_gap_ci95": ci}
    return saved({"languages": {"de": one}})


def _verdict(before: tuple[list[bool], list[bool]], after: tuple[list[bool], list[bool]], refused: str | None = None):
    """The verdict of two systems' decisions (feminine, masculine), with the comparison's own paired tests, and the
    resample counts; ``doc["overall"]`` is the start against mitigated comparison's."""
    doc, counts = _three({"start": before, "mitigated": after}, refused)
    return {**doc, "overall": doc["mitigated_vs_start"]["overall"]}, counts


def _three(systems: dict[str, tuple[list[bool], ...]], refused: str | None = None, budget: dict = LENIENT):
    """The verdict of two or three systems' decisions by name (start, control, mitigated: feminine, masculine and
    optionally their strict decisions), each pair of them compared with the comparison's own paired tests, with
    ``budget`` (its ``measure``: the accuracy judged)."""
    n = len(systems["start"][0])
    counts = resample_counts(language_rng(SEED, "de"), n, SAMPLES)
    paired = {}
    for name, (b, a) in COMPARISONS.items():
        if b in systems and a in systems:
            rows = [] if refused else language_tests("de", _sentences(*systems[b]), _sentences(*systems[a]), SAMPLES,
                                                      SEED)  # fmt: skip
            paired[name] = {"rows": rows, "refused": refused}
    reports = {name: _metrics(d[0], d[1], counts, *d[2:]) for name, d in systems.items()}
    return verdict_document(reports, paired, {}, leakage([], []), budget), counts


def _right(n: int, k: int, shift: int = 0) -> list[bool]:
    """``n`` decisions, ``k`` of them right (a run of them, rotated by ``shift``)."""
    return [(i + shift) % n < k for i in range(n)]


def test_a_gap_that_changes_sign_is_not_narrowed_by_moving() -> None:
    """+0.06 -> -0.05: the signed change is far beyond noise (p < 0.01), but the size shrank by 0.01 only, within
    noise, and the gap after does not lie beyond 0: the gap did not narrow."""
    before, after = (_right(400, 336), _right(400, 360)), (_right(400, 340, 80), _right(400, 320))
    doc, counts = _verdict(before, after)
    gap = doc["overall"]["accuracy_gap"]
    assert np.isclose(gap["before"], 0.06) and np.isclose(gap["after"], -0.05) and gap["p_value"] < 0.01
    assert not doc["overall"]["gap_narrowed"] and "narrowed beyond noise" not in doc["summary"]
    sizes = np.abs(_gap_replicates(*after, counts)) - np.abs(_gap_replicates(*before, counts))
    low, high = order_interval(sizes)
    assert low < 0 < high and np.allclose(doc["overall"]["accuracy_gap_size"]["change_ci95"], [low, high])
    assert _newcombe(*after)[1] > 0  # the interval after reaches across 0
    assert doc["overall"]["gap_outcome"] == "did not narrow" and not doc["overall"]["gap_narrowed"]
    assert "did not narrow beyond noise" in doc["summary"] and "narrowed beyond noise" not in doc["summary"]


def test_a_gap_that_changes_sign_beyond_noise_is_over_corrected() -> None:
    """+0.12 -> -0.10 with the interval after below 0: over-corrected, although |after| < |before|."""
    before, after = (_right(400, 340), _right(400, 388)), (_right(400, 380, 3), _right(400, 340, 9))
    doc, counts = _verdict(before, after)
    gap = doc["overall"]["accuracy_gap"]
    assert np.isclose(gap["before"], 0.12) and np.isclose(gap["after"], -0.10)
    assert _newcombe(*after)[1] < 0
    assert not doc["overall"]["gap_narrowed"] and "narrowed beyond noise" not in doc["summary"]
    assert doc["overall"]["gap_outcome"] == "over-corrected" and not doc["overall"]["gap_narrowed"]
    assert "over-corrected" in doc["summary"] and "narrowed beyond noise" not in doc["summary"]


def test_a_gap_whose_size_shrinks_beyond_noise_narrowed() -> None:
    """+0.15 -> +0.01 with the feminine accuracy rising: narrowed; the same gap closed by the masculine accuracy
    falling instead: levelled down."""
    before = (_right(400, 320), _right(400, 380))
    doc, _ = _verdict(before, (_right(400, 376, 5), _right(400, 380)))
    assert doc["overall"]["gap_outcome"] == "narrowed" and doc["overall"]["gap_narrowed"]
    assert doc["overall"]["accuracy_gap_size"]["change_ci95"][1] < 0 and "narrowed beyond noise" in doc["summary"]
    assert np.isclose(doc["overall"]["accuracy_gap_size"]["p_value"], 2 / (SAMPLES + 1))  # no resample across 0
    assert "p < 0.005)" in doc["summary"]  # its floor 2 / 401 = 0.00499, as the bound it is, rounded up
    down, _ = _verdict(before, (_right(400, 320), _right(400, 324, 5)))
    assert down["overall"]["gap_outcome"] == "levelled down"
    assert down["overall"]["levelled_down"] == "accuracy_masculine" and "Levelling down" in down["summary"]


def test_the_headline_is_the_mitigations_own_share_and_says_when_the_control_explains_the_change() -> None:
    """Start +0.15 -> mitigated +0.01 (narrowed). A control that closes the gap as well (+0.02) explains the change:
    mitigated vs control did not narrow, and the summary says so; a control that stays at the start's gap leaves the
    mitigation its own share (narrowed against the control too). Each comparison's outcome is the one of the same
    two systems compared alone, and the page shows the three models side by side."""
    start, mitigated = (_right(200, 160), _right(200, 190)), (_right(200, 188, 5), _right(200, 190))
    explained, _ = _three({"start": start, "control": (_right(200, 186, 9), _right(200, 190)), "mitigated": mitigated})
    assert explained["models"] == ["start", "control", "mitigated"] and explained["headline"] == "mitigated_vs_control"
    assert explained["mitigated_vs_control"]["overall"]["gap_outcome"] == "did not narrow"
    assert explained["control_vs_start"]["overall"]["gap_outcome"] == "narrowed"
    assert explained["attribution"] == "control" and "The control explains the change" in explained["summary"]
    assert explained["summary"].startswith("The mitigation's own share, against the control")
    alone, _ = _verdict(start, mitigated)
    assert explained["mitigated_vs_start"]["overall"] == alone["overall"]  # the same test without the control
    assert "cannot separate" not in explained["summary"] and "cannot separate" in alone["summary"]
    own, _ = _three({"start": start, "control": (_right(200, 161, 2), _right(200, 190)), "mitigated": mitigated})
    assert own["mitigated_vs_control"]["overall"]["gap_outcome"] == "narrowed" and own["attribution"] == "mitigation"
    assert "explains" not in own["summary"] and "The control against the start" in own["summary"]
    page = render_markdown(own)
    header = next(line for line in page.splitlines() if line.startswith("| figure"))
    assert [c.strip() for c in header.strip("|").split("|")] == [
        "figure", "start [95% CI]", "control [95% CI]", "mitigated [95% CI]", "mitigated - control [95% CI]",
        "p (paired)", "p adjusted", "mitigated - start [95% CI]", "p (paired)", "p adjusted"]  # fmt: skip
    row = next(line for line in page.splitlines() if line.startswith("| accuracy f "))
    assert [c.strip() for c in row.strip("|").split("|")][1:4] == ["80.0%", "80.5%", "94.0%"]  # no CIs given


def test_refused_paired_tests_say_no_test_ran() -> None:
    """Paired tests refused (the reports hold other sentences): no test ran, never "did not narrow"."""
    before, after = (_right(400, 320), _right(400, 380)), (_right(400, 376, 5), _right(400, 380))
    doc, _ = _verdict(before, after, refused="de: feminine sentence 3 has another source in mitigated")
    assert "did not narrow" not in doc["summary"] and "narrowed beyond noise" not in doc["summary"]
    assert doc["overall"]["gap_outcome"] == "no test ran" and not doc["overall"]["gap_narrowed"]
    assert "no test ran (de: feminine sentence 3 has another source in mitigated)" in doc["summary"]
    assert "did not narrow" not in doc["summary"] and "narrowed beyond noise" not in doc["summary"]


def _mcnemar(before: list[bool], after: list[bool]) -> float:
    b = sum(x and not y for x, y in zip(before, after))
    c = sum(y and not x for x, y in zip(before, after))
    k, n = min(b, c), b + c
    return 1.0 if n == 0 else min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n)


def _direct_outcome(before, after, counts) -> str:
    """The outcome from its definition, over the same resamples (numpy and the binomial, nothing of the verdict)."""
    gap_b, gap_a = (float(np.mean(m) - np.mean(f)) for f, m in (before, after))
    low_a, high_a = _newcombe(*after)
    if (gap_b > 0 and high_a < 0) or (gap_b < 0 and low_a > 0):
        return "over-corrected"
    sizes = np.abs(_gap_replicates(*after, counts)) - np.abs(_gap_replicates(*before, counts))
    if order_p(sizes) >= 0.05:
        return "did not narrow"
    if abs(gap_a) > abs(gap_b):
        return "widened"
    served = 1 if gap_b > 0 else 0  # the better-served gender's decisions: masculine (1) or feminine (0)
    fell = np.mean(after[served]) < np.mean(before[served]) and _mcnemar(before[served], after[served]) < 0.05
    return "levelled down" if fell else "narrowed"


rates = st.floats(0.3, 1.0)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(30, 150), shares=st.tuples(rates, rates, rates, rates), seed=st.integers(0, 2**16))
def test_the_outcome_agrees_with_a_direct_computation(n, shares, seed) -> None:
    """Random paired decisions (each column right with its own share): the verdict's outcome is the one computed
    directly from the report's interval of the gap after and the paired test of |gap after*| - |gap before*| over the
    same resamples."""
    drawn = np.random.default_rng(seed).random((4, n)) < np.array(shares)[:, None]
    f_before, m_before, f_after, m_after = ([bool(x) for x in row] for row in drawn)
    before, after = (f_before, m_before), (f_after, m_after)
    doc, counts = _verdict(before, after)
    assume(all(abs(x) > 1e-9 for x in _newcombe(*after)))  # not on the boundary, where rounding could decide
    direct = _direct_outcome(before, after, counts)
    assert doc["overall"]["gap_narrowed"] == (direct in ("narrowed", "levelled down"))
    assert doc["overall"]["gap_outcome"] == direct


def test_the_general_cost_scores_each_row_with_its_languages_tokenizer() -> None:
    """Chinese and Thai rows: BLEU as sacreBLEU scores them with zh and char (13a would see each sentence as one
    word); a mixed set sums each row's statistics; the page says which tokenizer, as metrics.json words it."""
    zh_refs = ["医生昨天下午结束了她的轮班。", "护士说他明天会来。", "工程师完成了这个项目。", "老师在教室里等学生。"]
    zh_hyps = ["医生昨天结束了她的轮班。", "护士说她明天来。", "工程师完成了项目。", "老师在教室等学生。"]
    th_refs = ["หมอทำงานเสร็จแล้ว", "พยาบาลจะมาพรุ่งนี้"]
    th_hyps = ["หมอทำงานเสร็จ", "พยาบาลมาพรุ่งนี้"]

    def rows(hyps, refs, lang):
        return [{"target": r, "lang": lang, "hypothesis": h} for h, r in zip(hyps, refs)]

    start = rows(zh_refs[:2] + ["了"] * 2, zh_refs, "zh")
    cost = general_cost(start, rows(zh_hyps, zh_refs, "zh"), samples=20, seed=1)
    assert np.isclose(cost["bleu"]["after"], sacrebleu.corpus_bleu(zh_hyps, [zh_refs], tokenize="zh").score)
    assert cost["bleu"]["after"] > 20 and sacrebleu.corpus_bleu(zh_hyps, [zh_refs]).score < 5
    mixed = rows(zh_hyps, zh_refs, "zh") + rows(th_hyps, th_refs, "th")
    both = general_cost(mixed, mixed, samples=20, seed=1)["bleu"]["after"]
    stats = [sacrebleu.BLEU(tokenize=t).corpus_score(h, [r]) for h, r, t in
             ((zh_hyps, zh_refs, "zh"), (th_hyps, th_refs, "char"))]  # fmt: skip
    summed = [sum(x) for x in zip(*[[s.sys_len, s.ref_len, *s.counts, *s.totals] for s in stats])]
    assert np.isclose(both, sacrebleu.BLEU()._compute_score_from_stats(summed).score)
    assert cost["bleu_tokenizer"] == bleu.TOKENIZER_RULE and "zh for zh" in bleu.TOKENIZER_RULE
    decisions = (_right(40, 30), _right(40, 35))
    counts = resample_counts(language_rng(SEED, "de"), 40, SAMPLES)
    same = _metrics(*decisions, counts)
    doc = verdict_document({"start": same, "mitigated": same}, {"mitigated_vs_start": {"rows": []}},
                           {"mitigated_vs_start": cost}, leakage([], []), LENIENT)  # fmt: skip
    assert f"BLEU tokenized with {bleu.TOKENIZER_RULE} (" in render_markdown(doc)


def test_a_verdict_whose_rule_kept_the_start_says_so_first() -> None:
    """When the checkpoint rule keeps update 0, the mitigated model is the start: the summary opens by saying so,
    and says nothing of it when another update was kept."""
    start = (_right(200, 160), _right(200, 190))
    doc, _ = _three({"start": start, "control": start, "mitigated": start})
    said = KEPT_START.format(measure="accuracy")
    assert not summary(doc).startswith(said[:40])
    assert summary({**doc, "budget": {"chosen_step": 0}}).startswith(said + " The mitigation's own share")
    assert said[:40] not in summary({**doc, "budget": {"chosen_step": 25}})
    strict = summary({**doc, "measure": "strict_accuracy", "budget": {"chosen_step": 0}})
    assert strict.startswith(KEPT_START.format(measure="strict accuracy"))


def test_the_verdict_judges_the_gap_of_the_accuracy_its_budget_names() -> None:
    """Lenient decisions alike in both models (every output right by MT-GenEval's rule); strict decisions: feminine
    up from 80 to 94 of 200 (a gendered word written where there was none). Judged by strict accuracy the gap narrowed
    and the summary names it; judged by lenient accuracy it did not move. Strict masculine falling instead is
    levelling down of the strict accuracy."""
    right = _right(200, 200)
    start = (right, right, _right(200, 80), _right(200, 110))
    tuned = (right, right, _right(200, 108, 3), _right(200, 110))
    strict, _ = _verdict_by(start, tuned, "strict_accuracy")
    assert strict["overall"]["gap_outcome"] == "narrowed" and strict["measure"] == "strict_accuracy"
    assert "the strict accuracy gap (m - f) went from +15.0 pts (start) to +1.0 pts (mitigated)" in strict["summary"]
    lenient, _ = _verdict_by(start, tuned, "accuracy")
    assert lenient["overall"]["gap_outcome"] == "did not narrow" and "the accuracy gap (m - f)" in lenient["summary"]
    down, _ = _verdict_by(start, (right, right, _right(200, 80), _right(200, 82, 7)), "strict_accuracy")
    assert down["overall"]["gap_outcome"] == "levelled down"
    assert down["overall"]["levelled_down"] == "strict_accuracy_masculine"


def _verdict_by(before: tuple, after: tuple, measure: str):
    doc, counts = _three({"start": before, "mitigated": after}, budget={"measure": measure})
    return {**doc, "overall": doc["mitigated_vs_start"]["overall"]}, counts


def test_an_over_correction_the_start_already_had_is_said_of_the_start() -> None:
    """The start favours feminine beyond noise (strict accuracy 95% f against 60% m) and so does the model kept: when
    the rule kept the start, or the start's report flags the same gap, the verdict says the bias is the start's, not
    over-correction by the mitigation; a mitigated model that flips a gap the start did not flag is over-correction."""
    right = _right(200, 200)
    favours_f = (right, right, _right(200, 190), _right(200, 120))
    both = {"start": favours_f, "mitigated": favours_f}
    doc, _ = _three(both, budget={"measure": "accuracy", "chosen_step": 0})
    assert doc["over_correction"]["of"] == "start" and "Over-correction flagged" not in doc["summary"]
    assert "Not over-correction: the start already gets feminine sentences' gender right" in doc["summary"]
    assert "the checkpoint rule kept the start itself" in doc["summary"]
    later, _ = _three(both, budget={"measure": "accuracy", "chosen_step": 40})
    assert later["over_correction"]["of"] == "start" and "the start's gaps are flagged alike" in later["summary"]
    fair = (right, right, _right(200, 150), _right(200, 150))
    flipped, _ = _three({"start": fair, "mitigated": favours_f})
    assert flipped["over_correction"]["of"] == "mitigated" and "Over-correction flagged" in flipped["summary"]
    assert "- over-correction: feminine sentences get their gender right" in render_markdown(flipped)


def test_a_change_split_between_the_control_and_the_mitigation_is_said_to_be_undecided() -> None:
    """Feminine right on 170 of 200 at the start, 184 after mitigation (14 more, none lost: narrowed beyond noise);
    the control sits between them with 20 lost and 27 won against the start and 20 lost and 13 won against the
    mitigated model, so neither half narrows beyond noise on its own: the verdict says that whose the change is stays
    open, not that the control explains it."""
    masculine = [True] * 200
    control = [(i < 170 and not 100 <= i < 120) or 170 <= i < 197 for i in range(200)]
    systems = {"start": ([i < 170 for i in range(200)], masculine), "control": (control, masculine),
               "mitigated": ([i < 184 for i in range(200)], masculine)}  # fmt: skip
    doc, _ = _three(systems)
    outcomes = [doc[name]["overall"]["gap_outcome"] for name in COMPARISONS]
    assert outcomes == ["did not narrow", "narrowed", "did not narrow"]  # vs control, vs start, control vs start
    assert doc["attribution"] == "undecided" and "The control explains" not in doc["summary"]
    assert "Whose the change is stays open" in doc["summary"] and "cannot tell the mitigation's share" in doc["summary"]


def test_the_accuracy_the_verdict_does_not_judge_is_named_when_it_falls() -> None:
    """Judged by strict accuracy, the mitigation raises both strict accuracies; but masculine outputs now carry a
    feminine word 20 times more in 200 (MT-GenEval's lenient accuracy m: 190 -> 170, none won): the summary names
    that fall against the control; judged by the lenient accuracy, the same fall is the judged one and the sentence
    is not repeated."""
    right = _right(200, 200)
    start = (right, _right(200, 190), _right(200, 80), _right(200, 60))
    tuned = (right, _right(200, 170), _right(200, 120), _right(200, 110))
    doc, _ = _three({"start": start, "control": start, "mitigated": tuned}, budget={"measure": "strict_accuracy"})
    said = "Against the control, accuracy m fell 10.0 points (p < 0.001), beyond noise: more outputs carry a word"
    assert said in doc["summary"]
    lenient, _ = _three({"start": start, "control": start, "mitigated": tuned}, budget=LENIENT)
    assert "more outputs carry a word" not in lenient["summary"]


# -- several languages, and a control that widened the gap ------------------------------------------------------------


def _languages(systems: dict[str, dict[str, tuple[list[bool], list[bool]]]], budget: dict = LENIENT) -> dict:
    """The verdict of systems by name and language (feminine, masculine decisions), every two of them compared by the
    comparison's own paired tests per language and macro, the reports' figures computed directly."""
    langs = sorted(next(iter(systems.values())))
    paired = {}
    for name, (b, a) in COMPARISONS.items():
        if b in systems and a in systems:
            kept: dict = {lang: {} for lang in langs}
            rows = [r for lang in langs for r in language_tests(lang, _sentences(*systems[b][lang]),
                    _sentences(*systems[a][lang]), SAMPLES, SEED, keep=kept[lang])]  # fmt: skip
            paired[name] = {"rows": rows + macro_tests(kept), "refused": None}
    reports = {}
    for name, by_lang in systems.items():
        one = {lang: _metrics(*d, None)["languages"]["de"] for lang, d in by_lang.items()}
        macro = {k: float(np.mean([one[x][k] for x in langs])) for k in one[langs[0]] if not k.endswith("_ci95")}
        macro |= {f"{g}_ci95": mean_interval([one[x][g] for x in langs], [one[x][f"{g}_ci95"] for x in langs])
                  for g in ("accuracy_gap", "strict_accuracy_gap")}  # fmt: skip
        reports[name] = saved({"languages": one, "macro": macro})
    return verdict_document(reports, paired, {}, leakage([], []), budget)


def test_a_gap_that_flips_in_one_language_does_not_narrow_the_overall_gap() -> None:
    """German +33 -> -33 points, Spanish +38 unchanged: the mean signed gap falls from +36 to +2, but no language
    narrowed: German is over-corrected, Spanish did not narrow, and so is the overall outcome: over-corrected, never
    narrowed or levelled down, and no attribution to the mitigation."""
    n = 150
    de_start = (_right(n, 100), _right(n, n))
    de_flipped = (_right(n, n), _right(n, 100))
    es = (_right(n, 93), _right(n, n))
    doc = _languages({"start": {"de": de_start, "es": es}, "control": {"de": de_start, "es": es},
                      "mitigated": {"de": de_flipped, "es": es}})  # fmt: skip
    for name in ("mitigated_vs_start", "mitigated_vs_control"):
        o = doc[name]["overall"]
        assert np.isclose(o["accuracy_gap"]["before"], (1 / 3 + 0.38) / 2) and o["accuracy_gap"]["after"] < 0.03
        assert o["outcomes_by_language"] == {"de": "over-corrected", "es": "did not narrow"}
        assert o["gap_outcome"] == "over-corrected" and not o["gap_narrowed"]
        assert abs(o["accuracy_gap_size"]["change"]) < 1e-9  # the mean of the languages' |gap|: unchanged
    assert doc["attribution"] is None and doc["headline_outcome"] == "over-corrected"
    assert "narrowed beyond noise" not in doc["summary"] and "over-corrected in de" in doc["summary"]


def test_narrowing_against_a_control_that_widened_the_gap_is_no_mitigation() -> None:
    """Start +15 points; the control widened the gap to +35 beyond noise; the mitigated model is the start again.
    Against the control it narrowed, but it is no better than the start: the verdict leads with 'did not narrow',
    and the control's change reads 'widened'."""
    start, control = (_right(200, 160), _right(200, 190)), (_right(200, 120), _right(200, 190))
    doc, _ = _three({"start": start, "control": control, "mitigated": start})
    assert doc["control_vs_start"]["overall"]["gap_outcome"] == "widened"
    assert doc["mitigated_vs_control"]["overall"]["gap_outcome"] == "narrowed"
    assert doc["mitigated_vs_start"]["overall"]["gap_outcome"] == "did not narrow"
    assert doc["headline_outcome"] == "did not narrow" and doc["attribution"] is None
    assert "widened beyond noise" in doc["summary"] and "no mitigation" in doc["summary"]
    assert "narrowed beyond noise" not in doc["summary"]  # against the control the gap is smaller, not narrowed


rate = st.floats(0.3, 1.0)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(30, 50), shares=st.lists(rate, min_size=8, max_size=8), seed=st.integers(0, 2**16))
def test_the_overall_outcome_agrees_with_a_direct_computation(n, shares, seed) -> None:
    """Random decisions in two languages: over-corrected when a language is, else the paired test of the mean of the
    languages' |gap| sizes over the same resamples decides (narrowed, levelled down, widened, did not narrow)."""
    drawn = np.random.default_rng(seed).random((8, n)) < np.array(shares)[:, None]
    d = [[bool(x) for x in row] for row in drawn]
    systems = {"start": {"de": (d[0], d[1]), "es": (d[2], d[3])}, "mitigated": {"de": (d[4], d[5]), "es": (d[6], d[7])}}
    doc = _languages(systems)
    assume(all(abs(x) > 1e-9 for lang in ("de", "es") for x in _newcombe(*systems["mitigated"][lang])))
    by = {lang: _direct_outcome(systems["start"][lang], systems["mitigated"][lang],
          resample_counts(language_rng(SEED, lang), n, SAMPLES)) for lang in ("de", "es")}  # fmt: skip
    sizes = np.mean([np.abs(_gap_replicates(*systems["mitigated"][lang], counts)) -
                     np.abs(_gap_replicates(*systems["start"][lang], counts)) for lang in ("de", "es")
                     for counts in [resample_counts(language_rng(SEED, lang), n, SAMPLES)]], axis=0)  # fmt: skip
    change = np.mean([abs(np.mean(m) - np.mean(f)) for lang in ("de", "es") for f, m in [systems["mitigated"][lang]]])
    change -= np.mean([abs(np.mean(m) - np.mean(f)) for lang in ("de", "es") for f, m in [systems["start"][lang]]])
    if "over-corrected" in by.values():
        direct = "over-corrected"
    elif order_p(sizes) >= 0.05:
        direct = "did not narrow"
    elif change > 0:
        direct = "widened"
    else:
        fell = []
        for lang in ("de", "es"):
            (fb, mb), (fa, ma) = systems["start"][lang], systems["mitigated"][lang]
            served = (mb, ma) if np.mean(mb) - np.mean(fb) > 0 else (fb, fa)
            fell.append(np.mean(served[1]) < np.mean(served[0]) and _mcnemar(*served) < 0.05)
        direct = "levelled down" if any(fell) else "narrowed"
    o = doc["mitigated_vs_start"]["overall"]
    assert o["outcomes_by_language"] == by and o["gap_outcome"] == direct


def test_an_infinite_mf_ratio_is_shown_as_infinite_with_its_counts() -> None:
    """A model none of whose outputs says feminine (8 : 0): metrics.json holds null (strict JSON), the page shows the
    ratio as infinite with the two counts and its interval's infinite bound, never n/a."""

    def metrics(m: int, f: int) -> dict:
        one = {"accuracy_feminine": 0.5, "accuracy_masculine": 0.9, "accuracy_gap": 0.4}
        one |= {"predicted_masculine": m, "predicted_feminine": f, "mf_ratio": m / f if f else None}
        one["mf_ratio_ci95"] = ratio_interval(m, f)
        return saved({"languages": {"de": one}})

    doc = two_models(metrics(6, 2), metrics(8, 0), {"rows": []}, leakage([], []))
    row = next(line for line in render_markdown(doc).splitlines() if line.startswith("| M:F predictions"))
    low = score_test_interval(8, 8)[0]
    assert f"\u221e (8 : 0) [{low / (1 - low):.2f}, \u221e]" in row and "n/a" not in row.split("|")[3]


def test_levelling_down_over_several_languages_names_each_languages_fall() -> None:
    """Two languages whose gap closes by masculine accuracy falling 30 and 27.5 points: levelled down overall, and the
    summary names each language's own fall, not the macro mean's."""
    n = 200
    after = {"de": (_right(n, 120), _right(n, 130)), "es": (_right(n, 120), _right(n, 135))}
    doc = _languages({"start": {x: (_right(n, 120), _right(n, 190)) for x in ("de", "es")}, "mitigated": after})
    o, said = doc["mitigated_vs_start"]["overall"], doc["summary"]
    assert o["gap_outcome"] == "levelled down" and o["levelled_down_in"] == ["de", "es"]
    assert "in de, accuracy m fell 30.0 points" in said and "in es, accuracy m fell 27.5 points" in said
