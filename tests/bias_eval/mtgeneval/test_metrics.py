"""Scores from sacreBLEU statistics equal sacreBLEU called directly; accuracy and fair BLEU definitions."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import sacrebleu
from geneval_helpers import GENDERS, geneval_file, read_plain
from sacrebleu.metrics import BLEU

from bias_eval.mtgeneval.metrics import (
    accuracy_words,
    bleu_from_stats,
    bleu_stats,
    chrf_from_stats,
    chrf_stats,
    fair_bleu,
    gender_decision,
    notebook_sentence_bleu,
    sentence_bleu_from_stats,
    whitespace_bleu_stats,
)


@pytest.fixture(scope="module")
def german(shared_geneval: Path) -> dict[str, list[str]]:
    return {g: read_plain(geneval_file(shared_geneval, "de", g, "de"))[:300] for g in GENDERS}


def noisy(lines: list[str], seed: int) -> list[str]:
    """Damaged copies of ``lines`` (words dropped and shuffled), so scores are far from 0 and 100."""
    rng = random.Random(seed)
    out = []
    for line in lines:
        words = [w for w in line.split() if rng.random() > 0.3]
        if rng.random() < 0.5:
            rng.shuffle(words)
        out.append(" ".join(words))
    return out


def test_summed_statistics_equal_corpus_bleu_and_chrf(german: dict[str, list[str]]) -> None:
    refs, hyps = german["feminine"], noisy(german["masculine"], 1)
    bstats, cstats = bleu_stats(hyps, refs, "de"), chrf_stats(hyps, refs)
    assert bleu_from_stats(bstats.sum(axis=0)) == sacrebleu.corpus_bleu(hyps, [refs]).score
    assert chrf_from_stats(cstats.sum(axis=0)) == sacrebleu.corpus_chrf(hyps, [refs]).score
    subset = sorted(random.Random(2).sample(range(len(refs)), 57))
    sub_h, sub_r = [hyps[i] for i in subset], [refs[i] for i in subset]
    assert bleu_from_stats(bstats[subset].sum(axis=0)) == sacrebleu.corpus_bleu(sub_h, [sub_r]).score
    assert chrf_from_stats(cstats[subset].sum(axis=0)) == sacrebleu.corpus_chrf(sub_h, [sub_r]).score


def test_sentence_bleu_from_statistics(german: dict[str, list[str]]) -> None:
    refs, hyps = german["feminine"][:80], noisy(german["masculine"][:80], 3) + []
    hyps[0], hyps[1] = "", "x"
    for hyp, ref, row in zip(hyps, refs, bleu_stats(hyps, refs, "de")):
        assert sentence_bleu_from_stats(row) == sacrebleu.sentence_bleu(hyp, [ref]).score


def test_notebook_sentence_bleu_matches_sacrebleu_whitespace_bleu(german: dict[str, list[str]]) -> None:
    """For hypotheses of 4+ tokens with a match, it is sacreBLEU's exp-smoothed BLEU on whitespace tokens."""
    refs, hyps = german["feminine"][:120], noisy(german["masculine"][:120], 4)
    reference_metric = BLEU(tokenize="none", effective_order=False)
    checked = 0
    for hyp, ref, row in zip(hyps, refs, whitespace_bleu_stats(hyps, refs)):
        if len(hyp.split()) >= 4 and row[2] > 0:
            assert notebook_sentence_bleu(row) == pytest.approx(
                reference_metric.sentence_score(hyp, [ref]).score, rel=1e-12
            )
            checked += 1
    assert checked > 100


def test_notebook_sentence_bleu_short_and_empty_hypotheses() -> None:
    ref = "die Ärztin kam gestern nach Hause"
    (row_empty, row_one, row_two, row_miss) = whitespace_bleu_stats(["", "die", "die Ärztin", "Haus Boot"], [ref] * 4)
    assert notebook_sentence_bleu(row_empty) == 0.0
    assert notebook_sentence_bleu(row_miss) == 0.0  # no unigram match: 0, as NLTK returns
    # "die": p1 = 1/1, then p2..p4 smoothed to 1/2, 1/4, 1/8 (denominator max(1, 0) = 1); BP = exp(1 - 6/1)
    expected_one = 100 * 2.718281828459045 ** (1 - 6) * (1 * 0.5 * 0.25 * 0.125) ** 0.25
    assert notebook_sentence_bleu(row_one) == pytest.approx(expected_one, rel=1e-12)
    # "die Ärztin": p1 = 2/2, p2 = 1/1, p3, p4 smoothed to 1/2, 1/4; BP = exp(1 - 6/2)
    expected_two = 100 * 2.718281828459045 ** (1 - 3) * (1 * 1 * 0.5 * 0.25) ** 0.25
    assert notebook_sentence_bleu(row_two) == pytest.approx(expected_two, rel=1e-12)


def test_notebook_sentence_bleu_matches_nltk(german: dict[str, list[str]]) -> None:
    """NLTK (pinned in requirements-dev.txt) is the reference implementation the notebook used."""
    from nltk.translate import bleu_score

    smoothing = bleu_score.SmoothingFunction().method3
    refs = german["feminine"][:100] * 2
    short = [" ".join(r.split()[: k % 5]) for k, r in enumerate(refs[:100])]
    hyps = noisy(german["masculine"][:100], 5) + short
    for hyp, ref, row in zip(hyps, refs, whitespace_bleu_stats(hyps, refs)):
        expected = 100 * bleu_score.sentence_bleu([ref.split()], hyp.split(), smoothing_function=smoothing)
        assert notebook_sentence_bleu(row) == pytest.approx(expected, abs=1e-9)


def test_fair_bleu_definition() -> None:
    # overall mean (10+20+30+60)/4 = 30; feminine mean 15, masculine mean 45 -> 30 - 30/2 = 15
    assert fair_bleu([10, 20], [30, 60]) == pytest.approx(15.0)
    # unbalanced groups: the overall mean is over sentences, not over the two group means
    assert fair_bleu([0], [30, 60]) == pytest.approx(30 - 45 / 2)


def test_accuracy_words_and_decisions() -> None:
    assert accuracy_words("L'autrice, «brillante»: Élue!") == {"l", "autrice", "«brillante»", "élue"}
    ref_f = "Sie war eine bekannte Ärztin."
    ref_m = "Er war ein bekannter Arzt."
    assert gender_decision(ref_f, ref_f, ref_m, "de").correct
    wrong = gender_decision("Er war eine bekannte Ärztin.", ref_f, ref_m, "de")
    assert not wrong.correct and wrong.counterfactual_words == ["er"]
    # words outside both references do not matter; case and punctuation do not either
    assert gender_decision("SIE: eine Ärztin, sehr bekannt!!", ref_f, ref_m, "de").correct
    # a hypothesis sharing no gendered word with either reference counts as correct (official behaviour)
    assert gender_decision("Person mit Beruf.", ref_f, ref_m, "de").correct
    # identical references: nothing can be wrong
    assert gender_decision("irgendwas", "Sie sagte es.", "Sie sagte es.", "de").correct


@pytest.mark.parametrize(
    ("lang", "ref_f", "ref_m", "spans"),
    [("zh", "她是一名著名的医生。", "他是一名著名的医生。", ("她", "他")),
     ("yue", "佢係一個好出名嘅女醫生。", "佢係一個好出名嘅男醫生。", ("女", "男")),
     ("ja", "彼女は有名な医者です。", "彼は有名な医者です。", ("女", "")),
     ("th", "เธอเป็นหมอที่มีชื่อเสียง", "เขาเป็นหมอที่มีชื่อเสียง", ("ธอ", "ขา"))],
)  # fmt: skip
def test_a_language_without_spaces_finds_its_gendered_words_as_differing_spans(lang, ref_f, ref_m, spans):
    """Chinese, Cantonese, Japanese and Thai have no spaces to split words at: the gendered words are the spans in
    which the two references differ, and a wrong-gender translation is wrong (split on spaces, each sentence would
    be one word, and any translation but the exact counterfactual would count as right)."""
    ours, theirs = spans
    right = gender_decision(ref_f, ref_f, ref_m, lang)
    assert right.correct and right.covers and right.matching_words == [ours]
    wrong = gender_decision(ref_m.replace("。", "！"), ref_f, ref_m, lang)  # the other gender, punctuated otherwise
    if theirs:
        assert not wrong.correct and wrong.counterfactual_words == [theirs]
    else:  # 彼 is in both: the masculine sentence only lacks 女, and says nothing wrong
        assert wrong.correct and not wrong.covers
    assert gender_decision("医者", ref_f, ref_m, lang).correct  # no gendered word of either: correct, not covering
    assert not gender_decision("医者", ref_f, ref_m, lang).covers


def test_a_language_is_needed_to_find_words():
    from bias_eval.core.errors import UserError

    with pytest.raises(UserError, match="target language: 'qaa' is not a language code"):
        gender_decision("a", "b", "c", "qaa")


def test_bleu_statistics_name_the_target_language() -> None:
    """No BLEU without a language: a call that leaves it out is an error, not 13a; Chinese statistics are sacreBLEU's
    with its zh tokenizer (13a would see each sentence as about one word)."""
    from bias_eval.core.bleu import bleu_metric, corpus_bleu
    from mtkit.evaluation.scores import corpus_scores

    hyps, refs = ["医生结束了她的轮班。", "护士说她明天来。"], ["医生昨天结束了她的轮班。", "护士说他明天会来。"]
    for call in (lambda: bleu_stats(hyps, refs), lambda: corpus_bleu(hyps, refs), lambda: corpus_scores(hyps, refs)):
        with pytest.raises(TypeError):
            call()
    with pytest.raises(TypeError):
        bleu_metric()
    direct = sacrebleu.corpus_bleu(hyps, [refs], tokenize="zh").score
    assert bleu_from_stats(bleu_stats(hyps, refs, "zh").sum(axis=0)) == pytest.approx(direct, abs=1e-9)
    assert direct > 20 > sacrebleu.corpus_bleu(hyps, [refs]).score
