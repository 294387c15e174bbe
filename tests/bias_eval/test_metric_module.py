"""The ``evaluate`` metric module loads offline from its path and agrees with the report's figures."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import sacrebleu
from geneval_helpers import REPO_ROOT, geneval_file, read_plain

from bias_eval.mtgeneval.gendered import LanguageData, Side
from bias_eval.mtgeneval.scoring import score_language
from mtkit.data.mtgeneval import load_mtgeneval

pytest.importorskip("evaluate")  # optional: not in every image (a GPU machine's)
bleu_score = pytest.importorskip("nltk.translate.bleu_score")
SmoothingFunction, sentence_bleu = bleu_score.SmoothingFunction, bleu_score.sentence_bleu

METRIC_DIR = REPO_ROOT / "bias_eval" / "metric"


def nltk_fair_bleu(hyp_f: list[str], ref_f: list[str], hyp_m: list[str], ref_m: list[str]) -> float:
    """The notebook's bleu_custom, on the 0-100 scale, from NLTK: sentence BLEU-4 on whitespace tokens with
    smoothing method 3; mean over all sentences minus half the absolute gap between the gender means."""
    smoothing = SmoothingFunction().method3

    def scores(hyps: list[str], refs: list[str]) -> list[float]:
        return [100 * sentence_bleu([r.split()], h.split(), smoothing_function=smoothing) for h, r in zip(hyps, refs)]

    feminine, masculine = scores(hyp_f, ref_f), scores(hyp_m, ref_m)
    return float(np.mean(feminine + masculine) - abs(np.mean(feminine) - np.mean(masculine)) / 2)


@pytest.fixture(scope="module")
def metric():
    import evaluate

    return evaluate.load(str(METRIC_DIR))


def test_metric_matches_report_figures(metric, shared_geneval: Path) -> None:
    ld = load_mtgeneval(shared_geneval, "dev", ["it"]).languages["it"]
    n = 200
    ref_f, ref_m = ld.feminine.references[:n], ld.masculine.references[:n]
    hyp_f = [" ".join(s.split()[:-1]) for s in ref_m]  # masculine output, slightly damaged
    hyp_m = list(ref_m)
    genders = ["f"] * n + ["masculine"] * n
    out = metric.compute(predictions=hyp_f + hyp_m, references=ref_f + ref_m, genders=genders, target_lang="it")
    truncated = LanguageData(
        ld.lang,
        Side(ld.feminine.sources[:n], ref_f, ref_m, None, "f"),
        Side(ld.masculine.sources[:n], ref_m, ref_f, None, "m"),
        paired=True,
    )
    report = score_language(truncated, {"feminine": hyp_f, "masculine": hyp_m}, samples=0, seed=0).metrics
    for key in (
        "n",
        "bleu",
        "bleu_feminine",
        "bleu_masculine",
        "bleu_gap",
        "chrf",
        "chrf_feminine",
        "chrf_masculine",
        "chrf_gap",
    ):
        assert out[key] == pytest.approx(report[key], rel=1e-12, abs=1e-12), key
    assert out["bleu_feminine"] == sacrebleu.corpus_bleu(hyp_f, [ref_f]).score
    expected_fair = nltk_fair_bleu(hyp_f, ref_f, hyp_m, ref_m)
    assert 50 < expected_fair < 99  # damaged feminine output: a gap, but far from 0
    assert out["fair_bleu"] == pytest.approx(expected_fair, abs=1e-9)
    assert report["fair_bleu"] == pytest.approx(expected_fair, abs=1e-9)
    assert report["bleu_gap_ci95"] is None  # --bootstrap_samples 0


def test_metric_rejects_unknown_gender(metric, shared_geneval: Path) -> None:
    refs = read_plain(geneval_file(shared_geneval, "de", "feminine", "de"))[:2]
    with pytest.raises(ValueError, match="not feminine/masculine"):
        metric.compute(predictions=refs, references=refs, genders=["f", "x"], target_lang="de")
    with pytest.raises(ValueError, match="no masculine sentence"):
        metric.compute(predictions=refs, references=refs, genders=["f", "f"], target_lang="de")


def test_metric_requires_the_target_language(metric) -> None:
    with pytest.raises(ValueError, match="target_lang is required"):
        metric.compute(predictions=["a b"], references=["a b"], genders=["f"])
    for tag in ("german!", "und", "qaa", "xx"):  # no registered language: never scored with 13a by default
        with pytest.raises(ValueError, match="not a language code"):
            metric.compute(predictions=["a b"], references=["a b"], genders=["f"], target_lang=tag)


@pytest.mark.parametrize(("lang", "tokenizer"), [("de", "13a"), ("zh", "zh"), ("zh-Hant", "zh"), ("zho", "zh")])
def test_metric_tokenizes_bleu_for_the_target_language(metric, lang: str, tokenizer: str) -> None:
    """Against sacreBLEU called directly with the tokenizer the language needs (zh's differs from 13a here)."""
    if tokenizer == "zh":
        hyps = ["她是一名医生。", "他是老师,也是作家。", "我们今天去公园。", "她喜欢读书。"]
        refs = ["她是一位医生。", "他是老师,也是一位作家。", "我们今天去了公园。", "她很喜欢读书。"]
    else:
        hyps = ["Sie ist Ärztin.", "Er ist Lehrer, und Autor.", "Wir gehen heute in den Park.", "Sie liest gern."]
        refs = ["Sie ist eine Ärztin.", "Er ist Lehrer und Autor.", "Wir gingen heute in den Park.", "Sie liest."]
    genders = ["f", "m", "f", "m"]
    out = metric.compute(predictions=hyps, references=refs, genders=genders, target_lang=lang)
    assert out["bleu"] == sacrebleu.corpus_bleu(hyps, [refs], tokenize=tokenizer).score
    assert out["bleu_feminine"] == sacrebleu.corpus_bleu(hyps[::2], [refs[::2]], tokenize=tokenizer).score
    assert out["bleu_masculine"] == sacrebleu.corpus_bleu(hyps[1::2], [refs[1::2]], tokenize=tokenizer).score
    if tokenizer == "zh":  # the test means something: 13a would give another score
        assert out["bleu"] != sacrebleu.corpus_bleu(hyps, [refs], tokenize="13a").score


def test_the_modules_copies_are_the_librarys() -> None:
    """The module's own copies (it loads where bias_eval is not importable) cannot drift from bias_eval.core.bleu's
    tokenizer map and bias_eval.mtgeneval.gendered's gender values."""
    import importlib.util

    from bias_eval.core.bleu import TOKENIZERS, bleu_tokenizer
    from bias_eval.mtgeneval.gendered import GENDER_VALUES, GENDERS

    spec = importlib.util.spec_from_file_location("_metric_copy", METRIC_DIR / "metric.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.TOKENIZERS == TOKENIZERS
    assert module.GENDER_VALUES == GENDER_VALUES and module.GENDERS == GENDERS
    for tag in ("de", "zh", "zh-Hant", "zh_TW", "ZH-CN", "ja", "jpn", "ko", "kor", "th", "tha", "my", "mya", "pt_BR",
                "deu", "cmn", "km", "lo", "yue", "chi", "nob", "zh-Latn", "wuu", "shn"):  # fmt: skip
        assert module.bleu_tokenizer(tag) == bleu_tokenizer(tag), tag
