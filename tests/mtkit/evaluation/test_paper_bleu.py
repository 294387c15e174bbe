"""The papers' BLEU: the preparation reproduces the Multi30k release's own lowercased, normalised, tokenized files
(``tok/``) line for line, but for the two differences docs/scoring.md names; the score is sacreBLEU's on whitespace
tokens of that text, and the German reference of test_2016_flickr has the 12,103 tokens the papers state."""

from __future__ import annotations

import gzip
import re

import pytest
import sacrebleu
from datasets import Dataset
from testing_utils import MULTI30K

from mtkit.evaluation.paper_bleu import paper_bleu, prepare
from mtkit.evaluation.scores import split_scores

pytestmark = pytest.mark.skipif(not MULTI30K.is_dir(), reason="../shared/data/multi30k is not there")


def lines(path) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return f.read().rstrip("\n").split("\n")


def old_moses_case(raw: str) -> bool:
    """The two things the release's Moses (3a0631a) normalised otherwise: a right single quote (’) became a double
    quote, and a sentence-final period inside closing double quotes moved after them (German, French)."""
    return "’" in raw or re.search(r"\.\s*[\"“”]\s*$", raw) is not None


@pytest.mark.parametrize("split", ["val", "test_2016_flickr"])
@pytest.mark.parametrize("lang", ["de", "en", "fr"])
def test_the_preparation_reproduces_the_release_files(split, lang):
    raw, released = lines(MULTI30K / f"{split}.{lang}.gz"), lines(MULTI30K / "tok" / f"{split}.lc.norm.tok.{lang}.gz")
    ours = prepare(raw, lang, "moses-lc")
    assert len(ours) == len(released) == len(raw)
    differ = [i for i, (a, b) in enumerate(zip(ours, released)) if a != b.strip()]
    assert all(old_moses_case(raw[i]) for i in differ), [raw[i] for i in differ if not old_moses_case(raw[i])]
    assert len(differ) <= 1  # val de, val fr, test fr: one line each; none in English
    if (split, lang) == ("test_2016_flickr", "de"):
        assert differ == [] and sum(len(line.split()) for line in released) == 12103


def test_paper_bleu_is_sacrebleu_on_the_prepared_text():
    raw = lines(MULTI30K / "test_2016_flickr.de.gz")
    released = [line.strip() for line in lines(MULTI30K / "tok" / "test_2016_flickr.lc.norm.tok.de.gz")]
    hyps = [re.sub(r"\bein\b", "der", line).replace("Mann", "MANN") for line in raw]  # some wrong words, odd case
    rows = Dataset.from_dict({"source": raw, "target": raw, "lang": ["de"] * len(raw)})
    scores = split_scores(rows, hyps, "moses-lc")
    direct = sacrebleu.corpus_bleu(prepare(hyps, "de"), [released], tokenize="none", force=True)
    assert scores["paper_bleu"] == pytest.approx(direct.score) and scores["paper_bleu_ref_len"] == 12103
    assert scores["bleu"] == pytest.approx(sacrebleu.corpus_bleu(hyps, [raw]).score)  # sacreBLEU stays beside it
    assert paper_bleu(hyps, raw, "de", "moses")["paper_bleu"] < scores["paper_bleu"]  # cased: MANN is wrong


#: sentences of each language in the two-language split (the release's first ones)
N = 100


def test_each_language_gets_its_own_paper_bleu_from_the_same_prepared_text():
    """Two target languages in one split: overall and per-language paper BLEU are sacreBLEU's on the release's own
    prepared references (German and English of test_2016_flickr, which the preparation matches line for line)."""
    released = {
        lang: [line.strip() for line in lines(MULTI30K / "tok" / f"test_2016_flickr.lc.norm.tok.{lang}.gz")]
        for lang in ("de", "en")
    }
    raw = {lang: lines(MULTI30K / f"test_2016_flickr.{lang}.gz")[:N] for lang in ("de", "en")}
    hyps = {
        "de": [re.sub(r"\bein\b", "der", x) for x in raw["de"]],
        "en": [x.replace(" a ", " an ") for x in raw["en"]],
    }
    langs = ["de"] * N + ["en"] * N
    scores = paper_bleu(hyps["de"] + hyps["en"], raw["de"] + raw["en"], langs, "moses-lc")

    def direct(hyp: list[str], ref: list[str]) -> float:
        return sacrebleu.corpus_bleu(hyp, [ref], tokenize="none", force=True).score

    prepared = {lang: prepare(hyps[lang], lang) for lang in ("de", "en")}
    refs = {lang: released[lang][:N] for lang in ("de", "en")}
    assert scores["de_paper_bleu"] == pytest.approx(direct(prepared["de"], refs["de"]))
    assert scores["en_paper_bleu"] == pytest.approx(direct(prepared["en"], refs["en"]))
    both = direct(prepared["de"] + prepared["en"], refs["de"] + refs["en"])
    assert scores["paper_bleu"] == pytest.approx(both) and scores["de_paper_bleu"] != scores["en_paper_bleu"]
    assert scores["paper_bleu_ref_len"] == sum(len(line.split()) for lang in refs for line in refs[lang])
    assert "de_paper_bleu" not in paper_bleu(hyps["de"], raw["de"], "de", "moses-lc")  # one language: no split
    rows = Dataset.from_dict({"source": raw["en"] * 2, "target": raw["de"] + raw["en"], "lang": langs})
    evaluation = split_scores(rows, hyps["de"] + hyps["en"], "moses-lc")  # what training's evaluation records
    assert evaluation["de_paper_bleu"] == pytest.approx(direct(prepared["de"], refs["de"]))
    assert evaluation["en_paper_bleu"] == pytest.approx(direct(prepared["en"], refs["en"]))
    assert evaluation["paper_bleu"] == pytest.approx(both) and "de_bleu" in evaluation
