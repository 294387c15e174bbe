"""Each target language's BLEU: the tokenizer :func:`bias_eval.core.bleu.bleu_tokenizer` chooses, and scores equal to
sacreBLEU called directly with that tokenizer (and unequal to 13a where 13a is wrong)."""

from __future__ import annotations

import logging

import pytest
import sacrebleu
from sacrebleu.metrics import BLEU

from bias_eval.core.bleu import bleu_signatures, bleu_tokenizer, corpus_bleu
from bias_eval.core.errors import UserError

JA_REFS = ["猫が庭で寝ている。", "私は毎朝コーヒーを飲みます。", "駅までバスで行きました。"]
JA_HYPS = ["猫が庭で寝ています。", "私は毎朝お茶を飲みます。", "駅まで電車で行きました。"]
ZH_REFS = ["一只猫在花园里睡觉。", "我每天早上喝咖啡。", "我们坐公共汽车去车站。"]
ZH_HYPS = ["一只猫在院子里睡觉。", "我每天早上喝茶。", "我们坐公交车去车站。"]
DE_REFS = ["Eine Katze schläft im Garten.", "Ich trinke jeden Morgen Kaffee."]
DE_HYPS = ["Eine Katze schläft im Hof.", "Ich trinke jeden Morgen Tee."]


@pytest.mark.parametrize(
    "lang, tokenizer",
    [("ja", "ja-mecab"), ("zh", "zh"), ("zh-Hant", "zh"), ("zh_TW", "zh"), ("ko", "ko-mecab"), ("th", "char"),
     ("de", "13a"), ("pt_BR", "13a"), (None, "13a"), ("", "13a"), ("yue", "zh"), ("chi", "zh"), ("ZH-hk", "zh"),
     ("jpn", "ja-mecab"), ("nob", "13a"), ("zh-Latn", "13a"), ("wuu", "zh"), ("shn", "char")],
)  # fmt: skip
def test_the_tokenizer_of_each_language(lang, tokenizer):
    assert bleu_tokenizer(lang) == tokenizer


def test_one_text_scores_alike_under_every_tag_of_its_language():
    """The tokenizer follows the language (its script), not how its code is spelled: Cantonese as ``yue`` and as
    ``zh-HK``, Chinese as ``chi`` and ``zh``, Norwegian Bokmål as ``nb`` and ``nob``."""
    yue_refs, yue_hyps = ["佢哋今日去咗公園。", "我哋一齊食飯。"], ["佢哋今日去公園。", "我哋一齊食晏。"]
    chinese = sacrebleu.corpus_bleu(yue_hyps, [yue_refs], tokenize="zh").score
    assert corpus_bleu(yue_hyps, yue_refs, "yue") == corpus_bleu(yue_hyps, yue_refs, "zh-HK") == pytest.approx(chinese)
    assert chinese > sacrebleu.corpus_bleu(yue_hyps, [yue_refs]).score + 5
    assert corpus_bleu(ZH_HYPS, ZH_REFS, "chi") == corpus_bleu(ZH_HYPS, ZH_REFS, "zh")
    assert corpus_bleu(DE_HYPS, DE_REFS, "nob") == corpus_bleu(DE_HYPS, DE_REFS, "nb")


@pytest.mark.parametrize("lang", ["usa-ZZ", "qaa", "und", "xx"])
def test_a_tag_that_names_no_language_is_refused_not_scored_with_13a(lang):
    with pytest.raises(UserError, match=rf"^target language: {lang!r} is not a language code"):
        corpus_bleu(DE_HYPS, DE_REFS, lang)


@pytest.mark.parametrize(
    "lang, tokenizer, hyps, refs", [("ja", "ja-mecab", JA_HYPS, JA_REFS), ("zh", "zh", ZH_HYPS, ZH_REFS)]
)
def test_a_cjk_target_is_scored_with_its_own_tokenizer(lang, tokenizer, hyps, refs):
    own = sacrebleu.corpus_bleu(hyps, [refs], tokenize=tokenizer).score
    assert corpus_bleu(hyps, refs, lang) == pytest.approx(own, abs=1e-9)
    assert abs(own - sacrebleu.corpus_bleu(hyps, [refs]).score) > 5  # 13a sees each sentence as about one word
    assert f"tok:{tokenizer}" in bleu_signatures([lang])


def test_a_mixed_language_corpus_sums_each_languages_statistics():
    ja = sacrebleu.corpus_bleu(JA_HYPS, [JA_REFS], tokenize="ja-mecab")
    de = sacrebleu.corpus_bleu(DE_HYPS, [DE_REFS])
    expected = BLEU.compute_bleu(
        [a + b for a, b in zip(ja.counts, de.counts)], [a + b for a, b in zip(ja.totals, de.totals)],
        ja.sys_len + de.sys_len, ja.ref_len + de.ref_len,
    ).score  # fmt: skip
    langs = ["ja"] * 3 + ["de"] * 2
    assert corpus_bleu(JA_HYPS + DE_HYPS, JA_REFS + DE_REFS, langs) == pytest.approx(expected, abs=1e-9)
    assert bleu_signatures(langs).startswith("de: nrefs:1|case:mixed|eff:no|tok:13a|") and "; ja: " in bleu_signatures(
        langs
    )


def test_sacrebleus_warning_about_tokenized_text_is_shown_once(caplog):
    """Every score of tokenized text makes sacreBLEU warn; a run trained on prepared text scores it at every
    evaluation, so the warning comes once per process, not with each of them."""
    hyps = ["a cat sits on the mat ."] * 120  # 100 lines ending in " ." make sacreBLEU warn
    with caplog.at_level(logging.WARNING, logger="sacrebleu"):
        for _ in range(3):
            corpus_bleu(hyps, hyps, "de")
    warned = [r for r in caplog.records if "forgot to detokenize" in r.getMessage()]
    assert len(warned) <= 1
    assert sacrebleu.corpus_bleu(hyps, [hyps]).score == corpus_bleu(hyps, hyps, "de")  # the score itself unchanged
