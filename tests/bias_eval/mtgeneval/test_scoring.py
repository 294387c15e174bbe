"""Every per-language figure against sacreBLEU called directly, and the known answers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import sacrebleu
from geneval_helpers import make_subset, read_plain

from bias_eval.mtgeneval.gendered import LanguageData, Side
from bias_eval.mtgeneval.metrics import accuracy_words
from bias_eval.mtgeneval.scoring import METRIC_KEYS, context_hypothesis, macro_average, score_dataset, score_language
from mtkit.data.gendered_tables import load_table
from mtkit.data.mtgeneval import load_mtgeneval


@pytest.fixture(scope="module")
def subset(shared_geneval: Path, tmp_path_factory: pytest.TempPathFactory):
    root = make_subset(
        shared_geneval,
        tmp_path_factory.mktemp("sub"),
        ("de", "fr"),
        150,
        split="dev",
        annotated=True,
        context=True,
    )
    return load_mtgeneval(root, "dev", context=True)


def _refs(data, lang):
    ld = data.languages[lang]
    return ld.feminine.references, ld.masculine.references


def test_hypotheses_equal_references(subset) -> None:
    hyps = {
        lang: {
            "feminine": _refs(subset, lang)[0],
            "masculine": _refs(subset, lang)[1],
            "context": subset.languages[lang].context.original,
        }
        for lang in subset.languages
    }
    results, macro = score_dataset(subset, hyps, samples=200, seed=1)
    for m in [*(r.metrics for r in results), macro]:
        assert m["bleu"] == m["bleu_feminine"] == m["bleu_masculine"] == pytest.approx(100.0)
        assert m["bleu_gap"] == pytest.approx(0.0, abs=1e-9)
        assert m["bleu_gap_ci95"] == pytest.approx([0.0, 0.0], abs=1e-9)
        assert m["chrf_gap"] == 0.0 and m["chrf_feminine"] == 100.0
        assert m["accuracy_feminine"] == m["accuracy_masculine"] == m["accuracy_pair"] == 1.0
        assert m["accuracy_context"] == 1.0
        assert m["fair_bleu"] == pytest.approx(100.0)


def test_masculine_references_for_everyone(subset) -> None:
    """A system that always produces the masculine reference: every figure checked against sacreBLEU."""
    for lang in subset.languages:
        ref_f, ref_m = _refs(subset, lang)
        result = score_language(
            subset.languages[lang],
            {"feminine": ref_m, "masculine": ref_m, "context": subset.languages[lang].context.flipped},
            samples=300,
            seed=3,
        )
        m = result.metrics
        assert m["accuracy_masculine"] == 1.0
        expected_f = np.mean([not (accuracy_words(m_) - accuracy_words(f_)) for f_, m_ in zip(ref_f, ref_m)])
        assert m["accuracy_feminine"] == pytest.approx(expected_f)
        assert m["accuracy_pair"] == m["accuracy_feminine"]
        assert m["accuracy_feminine"] < 0.5
        assert m["bleu_masculine"] == sacrebleu.corpus_bleu(ref_m, [ref_m]).score
        assert m["bleu_feminine"] == sacrebleu.corpus_bleu(ref_m, [ref_f]).score
        assert m["bleu"] == sacrebleu.corpus_bleu(ref_m + ref_m, [ref_f + ref_m]).score
        assert m["bleu_gap"] == m["bleu_masculine"] - m["bleu_feminine"] > 0
        assert m["chrf_feminine"] == sacrebleu.corpus_chrf(ref_m, [ref_f]).score
        assert m["chrf_masculine"] == sacrebleu.corpus_chrf(ref_m, [ref_m]).score
        assert m["chrf"] == sacrebleu.corpus_chrf(ref_m + ref_m, [ref_f + ref_m]).score
        lo, hi = m["bleu_gap_ci95"]
        assert lo <= m["bleu_gap"] <= hi
        lo, hi = m["chrf_gap_ci95"]
        assert lo <= m["chrf_gap"] <= hi
        # flipped context references as hypotheses are wrong wherever the references differ in words
        ctx = subset.languages[lang].context
        pairs = zip(ctx.flipped, ctx.original)
        differ = np.mean([bool(accuracy_words(f) - accuracy_words(o)) for f, o in pairs])
        assert m["accuracy_context"] == pytest.approx(1 - differ)
        # details: one row per pair with sentence BLEU as sacrebleu.sentence_bleu computes it
        row = result.details[7]
        assert row["sentence_bleu_feminine"] == sacrebleu.sentence_bleu(ref_m[7], [ref_f[7]]).score
        assert row["correct_masculine"] is True
        assert len(result.worst) == 10
        diffs = [abs(result.details[i]["sentence_bleu_diff"]) for i in result.worst]
        assert diffs == sorted(diffs, reverse=True)
        assert diffs[0] == max(abs(d["sentence_bleu_diff"]) for d in result.details)


def test_macro_is_unweighted_mean(subset) -> None:
    hyps = {
        lang: {
            "feminine": _refs(subset, lang)[1],
            "masculine": _refs(subset, lang)[1],
            "context": subset.languages[lang].context.original,
        }
        for lang in subset.languages
    }
    results, macro = score_dataset(subset, hyps, samples=100, seed=9)
    assert set(METRIC_KEYS) <= set(macro)
    for key in ("bleu", "bleu_gap", "chrf_gap", "accuracy_feminine", "fair_bleu", "accuracy_context"):
        assert macro[key] == pytest.approx(np.mean([r.metrics[key] for r in results]))
    assert macro["n"] == sum(r.metrics["n"] for r in results)
    lo, hi = macro["bleu_gap_ci95"]
    assert lo <= macro["bleu_gap"] <= hi
    assert macro_average(results) == macro  # deterministic


def test_unpaired_table_data(tmp_path: Path, shared_geneval: Path) -> None:
    ref_f = read_plain(shared_geneval / "sentences/dev/geneval-sentences-feminine-dev.en_es.es")[:40]
    ref_m = read_plain(shared_geneval / "sentences/dev/geneval-sentences-masculine-dev.en_es.es")[40:70]
    rows = ["source,reference,gender,language"]
    rows += [f'"src {i}","{r.replace(chr(34), chr(34) * 2)}",f,es' for i, r in enumerate(ref_f)]
    rows += [f'"src {i}","{r.replace(chr(34), chr(34) * 2)}",m,es' for i, r in enumerate(ref_m)]
    path = tmp_path / "d.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    data = load_table(path)
    hyp_f = [" ".join(s.split()[:-2]) for s in ref_f]
    results, _ = score_dataset(data, {"es": {"feminine": hyp_f, "masculine": ref_m}}, samples=200, seed=0)
    m = results[0].metrics
    assert m["n"] == 70 and m["n_feminine"] == 40
    assert m["bleu_feminine"] == sacrebleu.corpus_bleu(hyp_f, [ref_f]).score
    assert m["accuracy_feminine"] is None and m["accuracy_pair"] is None
    assert m["bleu_gap_ci95"][0] <= m["bleu_gap"] <= m["bleu_gap_ci95"][1]
    assert len(results[0].details) == 70 and results[0].worst == []


def test_context_hypothesis_takes_text_after_last_separator() -> None:
    assert context_hypothesis("Kontext. <sep> Satz.") == "Satz."
    assert context_hypothesis("Nur ein Satz.") == "Nur ein Satz."


def test_a_japanese_target_gets_sacrebleus_japanese_tokenizer() -> None:
    fem, masc = ["彼女は医者です。", "姉は先生です。"], ["彼は医者です。", "兄は先生です。"]
    hyps = {"feminine": ["彼女は医者だ。", "姉は教師です。"], "masculine": ["彼は医者です。", "兄は教師です。"]}
    sides = {g: Side(["x", "y"], refs, None, None, "test") for g, refs in (("feminine", fem), ("masculine", masc))}
    result = score_language(LanguageData("ja", sides["feminine"], sides["masculine"], True), hyps, samples=0, seed=0)
    own = sacrebleu.corpus_bleu(hyps["feminine"], [fem], tokenize="ja-mecab").score
    assert result.metrics["bleu_feminine"] == pytest.approx(own)
    assert own != pytest.approx(sacrebleu.corpus_bleu(hyps["feminine"], [fem]).score)


@pytest.mark.parametrize("lang", ["zh", "zh-Hant", "yue", "de"])
def test_a_wrong_gender_translation_is_wrong_whatever_the_script(lang) -> None:
    """Feminine sentences translated as masculine ones (worded a little otherwise, as a model would) score 0%
    feminine accuracy with full coverage and an all-masculine M:F count, in Chinese (no spaces: gendered words found
    as differing spans) as in German; split on spaces, the Chinese sentences were one word each, and all right."""
    pairs = {
        "de": [("Sie ist Ärztin.", "Er ist Arzt."), ("Sie singt gern.", "Er singt gern.")],
        "zh": [("她是一名医生。", "他是一名医生。"), ("她喜欢唱歌。", "他喜欢唱歌。")],
    }[lang if lang == "de" else "zh"]
    fem, masc = [f for f, _ in pairs], [m for _, m in pairs]
    sides = {g: Side(["s", "t"], refs, other, None, "test") for g, refs, other in
             (("feminine", fem, masc), ("masculine", masc, fem))}  # fmt: skip
    hyps = {"feminine": [m.replace("。", "！").replace(".", "!") for m in masc], "masculine": masc}
    result = score_language(LanguageData(lang, sides["feminine"], sides["masculine"], True), hyps, samples=0, seed=0)
    m = result.metrics
    assert m["accuracy_feminine"] == 0.0 and m["accuracy_masculine"] == 1.0 and m["coverage"] == 1.0
    assert (m["predicted_masculine"], m["predicted_feminine"]) == (4, 0)
