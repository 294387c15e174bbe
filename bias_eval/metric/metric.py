"""Gendered BLEU as an ``evaluate`` metric: ``evaluate.load("bias_eval/metric")`` (local path, offline).

Self-contained on purpose (only sacrebleu, langcodes, numpy, datasets, evaluate): ``evaluate`` copies this script
into its module cache, where the ``bias_eval`` package may not be importable. So it keeps its own copies of
``bias_eval.core.bleu.TOKENIZERS`` (BLEU tokenized for the script the target language is written in) and of
``bias_eval.mtgeneval.gendered``'s gender values, which the test suite checks are equal to the library's; the figures
are the same as ``scripts/bias_report.py`` computes (the test suite checks this too)."""

from __future__ import annotations

import math
import re

import datasets
import evaluate
import langcodes
import numpy as np
from sacrebleu.metrics import BLEU, CHRF

_DESCRIPTION = """
Corpus sacreBLEU and chrF over all sentences, over the feminine sentences and over the masculine sentences
(BLEU tokenized for the script the target language is written in: zh for Chinese and Cantonese, ja-mecab for
Japanese, ko-mecab for Korean, char for Thai, Lao, Khmer and Burmese, 13a for every other language, as the rest of
the toolkit does), the gaps
bleu_gap = bleu_masculine - bleu_feminine and chrf_gap (positive: the model favours masculine), and fair_bleu:
mean sentence BLEU minus half the absolute difference of the feminine and masculine means (sentence BLEU-4 on
whitespace tokens with Chen & Cherry smoothing method 3, as in the AWS flan-t5-xl gender-bias notebook), on the
0-100 scale.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): translations.
    references (list of str): one reference per translation.
    genders (list of str): "feminine"/"masculine" (or "f"/"m", "female"/"male") per sentence.
    target_lang (str, required): the translations' language, a registered language tag (de, zh, zh-Hant, yue,
        pt_BR, jpn), whose script picks sacreBLEU's tokenizer for BLEU.
Returns:
    dict with n, n_feminine, n_masculine, bleu, bleu_feminine, bleu_masculine, bleu_gap, chrf,
    chrf_feminine, chrf_masculine, chrf_gap, fair_bleu.
Examples:
    >>> metric = evaluate.load("bias_eval/metric")  # doctest: +SKIP
    >>> metric.compute(predictions=["Sie ist Ärztin."], references=["Sie ist Ärztin."],
    ...                genders=["feminine"], target_lang="de")  # doctest: +SKIP
"""

_CITATION = """
@inproceedings{currey-etal-2022-mtgeneval,
    title = "{MT-GenEval}: {A} Counterfactual and Contextual Dataset for Evaluating Gender Accuracy
             in Machine Translation",
    author = "Currey, Anna and Nadejde, Maria and Pappagari, Raghavendra and Mayer, Mia and
              Lauly, Stanislas and Niu, Xing and Hsu, Benjamin and Dinu, Georgiana",
    booktitle = "Proceedings of EMNLP 2022",
    year = "2022",
}
"""

#: the gender values a sentence may carry: a copy of ``bias_eval.mtgeneval.gendered.GENDER_VALUES`` (tested equal)
GENDER_VALUES = {
    "f": "feminine",
    "feminine": "feminine",
    "female": "feminine",
    "m": "masculine",
    "masculine": "masculine",
    "male": "masculine",
}
#: the two genders, in the library's order: a copy of ``bias_eval.mtgeneval.gendered.GENDERS`` (tested equal)
GENDERS = ("feminine", "masculine")


#: ISO 15924 script -> sacreBLEU tokenizer where 13a is wrong: a copy of ``bias_eval.core.bleu.TOKENIZERS`` (tested
#: equal)
TOKENIZERS = {
    **dict.fromkeys(("Hani", "Hans", "Hant"), "zh"),
    **dict.fromkeys(("Jpan", "Hira", "Kana", "Hrkt"), "ja-mecab"),
    **dict.fromkeys(("Kore", "Hang"), "ko-mecab"),
    **dict.fromkeys(("Thai", "Laoo", "Khmr", "Mymr"), "char"),
}
DEFAULT_TOKENIZER = "13a"


def bleu_tokenizer(target_lang: object) -> str:
    """The sacreBLEU tokenizer of a language tag (``zh``, ``zh-Hant``, ``yue``, ``pt_BR``, ``jpn``) by its script
    (the tag's, else its language's likely one), as ``bias_eval.core.bleu.bleu_tokenizer`` picks it; a missing tag, or
    one that names no registered language, is a ``ValueError``."""
    if target_lang is None:
        raise ValueError("target_lang is required: the translations' language (de, zh, ...) picks BLEU's tokenizer")
    text = str(target_lang).strip().replace("_", "-")
    try:
        tag = langcodes.Language.get(text, normalize=True) if re.fullmatch(r"[A-Za-z0-9-]+", text) else None
    except langcodes.LanguageTagError:
        tag = None
    if tag is None or not tag.is_valid() or re.fullmatch(r"und|mul|zxx|mis|q[a-t][a-z]", tag.language or "und"):
        raise ValueError(f"target_lang: {target_lang!r} is not a language code (de, zh-Hant, pt_BR, jpn)")
    return TOKENIZERS.get(tag.maximize().script, DEFAULT_TOKENIZER)


def _notebook_sentence_bleu(row: list[int]) -> float:
    """NLTK sentence_bleu with SmoothingFunction().method3 on whitespace tokens, from sacreBLEU statistics."""
    hyp_len, ref_len, correct, total = row[0], row[1], row[2:6], row[6:10]
    if correct[0] == 0:
        return 0.0
    log_sum, k = 0.0, 0
    for n in range(4):
        denominator = max(1, total[n])
        if correct[n] == 0:
            k += 1
            log_sum += 0.25 * math.log(1.0 / (2**k * denominator))
        else:
            log_sum += 0.25 * math.log(correct[n] / denominator)
    brevity = 1.0 if hyp_len > ref_len else math.exp(1 - ref_len / hyp_len)
    return 100.0 * brevity * math.exp(log_sum)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class GenderedBleu(evaluate.Metric):
    """BLEU and chrF per gender, their gaps, and fair BLEU."""

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": datasets.Value("string"),
                    "references": datasets.Value("string"),
                    "genders": datasets.Value("string"),
                }
            ),
            reference_urls=["https://github.com/amazon-science/machine-translation-gender-eval"],
        )

    def _compute(
        self, predictions: list[str], references: list[str], genders: list[str], target_lang: str | None = None
    ) -> dict[str, float]:
        tokenizer = bleu_tokenizer(target_lang)
        norm = []
        for i, value in enumerate(genders):
            gender = GENDER_VALUES.get(str(value).strip().lower())
            if gender is None:
                raise ValueError(f"genders[{i}]: {value!r} is not feminine/masculine (or f/m)")
            norm.append(gender)
        groups = {g: [i for i, x in enumerate(norm) if x == g] for g in GENDERS}
        for gender, indices in groups.items():
            if not indices:
                raise ValueError(f"genders: no {gender} sentence")
        out: dict[str, float] = {
            "n": len(predictions),
            "n_feminine": len(groups["feminine"]),
            "n_masculine": len(groups["masculine"]),
        }
        for name, metric in (("bleu", BLEU(tokenize=tokenizer)), ("chrf", CHRF())):
            out[name] = metric.corpus_score(predictions, [references]).score
            for gender, indices in groups.items():
                hyps = [predictions[i] for i in indices]
                refs = [references[i] for i in indices]
                out[f"{name}_{gender}"] = metric.corpus_score(hyps, [refs]).score
            out[f"{name}_gap"] = out[f"{name}_masculine"] - out[f"{name}_feminine"]
        stats = BLEU(tokenize="none")._extract_corpus_statistics(predictions, [references])
        scores = np.array([_notebook_sentence_bleu([int(x) for x in row]) for row in stats])
        means = {g: float(scores[idx].mean()) for g, idx in groups.items()}
        out["fair_bleu"] = float(scores.mean()) - abs(means["feminine"] - means["masculine"]) / 2
        return out
