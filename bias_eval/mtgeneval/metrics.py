"""Scores: sacreBLEU BLEU/chrF from per-sentence sufficient statistics, MT-GenEval gender accuracy, fair BLEU.

Corpus BLEU and chrF are sacreBLEU's (chrF with its defaults; BLEU with its defaults but for the tokenizer, which is
:data:`bias_eval.core.bleu.TOKENIZER_RULE`, so every statistics call names the target language). Each sentence is
tokenised and counted once (``_extract_corpus_statistics``, the routine sacreBLEU's own significance tests use); a
corpus score is sacreBLEU's ``_compute_score_from_stats`` on the summed statistics, which is exactly what
``corpus_score`` does, so summing over any subset (one gender, a bootstrap resample) reproduces
``sacrebleu.corpus_bleu`` on that subset without tokenising again."""

from __future__ import annotations

import math
import string
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

import numpy as np
from sacrebleu.metrics import BLEU, CHRF

from bias_eval.core.bleu import bleu_statistics
from bias_eval.core.langtag import LanguageTag

CORPUS_BLEU = BLEU()  # scores from summed statistics (exp smoothing); its tokenizer is never used
SENTENCE_BLEU = BLEU(effective_order=True)  # sacrebleu.sentence_bleu's scoring of one sentence's statistics
CHRF_METRIC = CHRF()  # sacrebleu.corpus_chrf defaults (chrF2, char order 6)
WHITESPACE_BLEU = BLEU(tokenize="none")  # whitespace tokens, for the notebook-compatible sentence BLEU

ACCURACY_DEFINITION = (
    "MT-GenEval gender accuracy (Currey et al., EMNLP 2022; accuracy_metric.py of "
    "amazon-science/machine-translation-gender-eval): hypothesis and both references are lowercased, "
    "ASCII punctuation (string.punctuation) becomes spaces, and each is split into a set of words; a "
    "hypothesis is incorrect when it contains a word that occurs in the counterfactual (opposite-gender) "
    "reference but not in the correct reference, otherwise correct. accuracy_pair counts a sentence pair "
    "as correct only if both its feminine and masculine translations are correct (the figure the "
    "official script prints for the counterfactual subset). References are the plain sentences/ files. "
    "A target language written without spaces between words (its script: Chinese, Japanese, Thai, Lao, Khmer, "
    "Burmese, ...) has no words to split: there the words compared are the character spans in which the two "
    "references differ (difflib's matching blocks after the same lowercasing and punctuation), and a hypothesis "
    "uses such a span when it contains it"
)
FAIR_BLEU_DEFINITION = (
    "fair_bleu = mean sentence BLEU over all sentences - |mean over feminine - mean over masculine| / 2, "
    "the combined score of the AWS flan-t5-xl gender-bias notebook (bleu_custom). As there, sentence "
    "BLEU is BLEU-4 on whitespace tokens with Chen & Cherry smoothing method 3 (NLTK "
    "sentence_bleu(..., smoothing_function=SmoothingFunction().method3)), 0 when no unigram matches; "
    "reported here on the 0-100 scale (divide by 100 to compare with the notebook's 0-1 figures)."
)

COVERAGE_DEFINITION = (
    "share of hypotheses that contain at least one distinguishing gendered word of their sentence: a word "
    "(after the accuracy normalisation above: lowercased, ASCII punctuation to spaces, split on whitespace; a "
    "differing character span in a language written without spaces) "
    "that occurs in the correct reference but not in the counterfactual one, or in the counterfactual but "
    "not in the correct one. Only sentences whose two references differ in some word count (gender-neutral "
    "targets, e.g. Spanish 'su', have no such word and are left out; a reference whose words all occur in its "
    "counterfactual does not cover itself). coverage_feminine and "
    "coverage_masculine over one gender's hypotheses, coverage over both. A hypothesis that does not cover is "
    "counted correct by the accuracy metric, so low coverage means the accuracies say little. coverage_ci95 "
    "as the accuracy CIs (Wilson score interval of covered out of counted hypotheses)"
)

_PUNCT_TO_SPACE = str.maketrans(string.punctuation, " " * len(string.punctuation))


# ---------------------------------------------------------------------------------------------------
# sacreBLEU statistics
# ---------------------------------------------------------------------------------------------------


def bleu_stats(
    hypotheses: Sequence[str], references: Sequence[str], langs: str | Sequence[str | None] | None
) -> np.ndarray:
    """Per-sentence BLEU statistics ``[hyp_len, ref_len, correct_1..4, total_1..4]`` (int64, n x 10), each sentence
    tokenized for its target language (``langs``: one code for all or one per sentence; :mod:`bias_eval.core.bleu`)."""
    stats = bleu_statistics(list(hypotheses), list(references), langs)
    return np.asarray(stats, dtype=np.int64).reshape(len(hypotheses), -1)


def whitespace_bleu_stats(hypotheses: Sequence[str], references: Sequence[str]) -> np.ndarray:
    """Per-sentence BLEU statistics on whitespace tokens: the notebook-compatible sentence BLEU's
    (:func:`notebook_sentence_bleu`), which splits on spaces whatever the language."""
    stats = WHITESPACE_BLEU._extract_corpus_statistics(list(hypotheses), [list(references)])
    return np.asarray(stats, dtype=np.int64).reshape(len(hypotheses), -1)


def chrf_stats(hypotheses: Sequence[str], references: Sequence[str]) -> np.ndarray:
    """Per-sentence chrF statistics (character and word n-gram counts), int64, one row per sentence."""
    stats = CHRF_METRIC._extract_corpus_statistics(list(hypotheses), [list(references)])
    return np.asarray(stats, dtype=np.int64).reshape(len(hypotheses), -1)


def bleu_from_stats(summed: np.ndarray) -> float:
    """Corpus BLEU (0-100) of summed statistics, as ``sacrebleu.corpus_bleu`` computes it."""
    return float(CORPUS_BLEU._compute_score_from_stats([int(x) for x in summed]).score)


def chrf_from_stats(summed: np.ndarray) -> float:
    """Corpus chrF (0-100) of summed statistics, as ``sacrebleu.corpus_chrf`` computes it."""
    return float(CHRF_METRIC._compute_score_from_stats([int(x) for x in summed]).score)


def sentence_bleu_from_stats(row: np.ndarray) -> float:
    """``sacrebleu.sentence_bleu`` (exp smoothing, effective order) of one sentence's statistics."""
    return float(SENTENCE_BLEU._compute_score_from_stats([int(x) for x in row]).score)


def notebook_sentence_bleu(row: np.ndarray) -> float:
    """NLTK-style smoothed sentence BLEU-4 (method 3) of whitespace-token statistics, 0-100.

    Equals ``100 * nltk.translate.bleu_score.sentence_bleu([ref.split()], hyp.split(),
    smoothing_function=SmoothingFunction().method3)``: an n-gram order with no match gets precision
    ``1 / (2**k * max(1, total))`` for the k-th such order, and the score is 0 without any unigram match.
    """
    hyp_len, ref_len = int(row[0]), int(row[1])
    correct, total = row[2:6], row[6:10]
    if correct[0] == 0:
        return 0.0
    log_sum, k = 0.0, 0
    for n in range(4):
        denominator = max(1, int(total[n]))
        if correct[n] == 0:
            k += 1
            precision = 1.0 / (2**k * denominator)
        else:
            precision = int(correct[n]) / denominator
        log_sum += 0.25 * math.log(precision)
    brevity = 1.0 if hyp_len > ref_len else math.exp(1 - ref_len / hyp_len)
    return 100.0 * brevity * math.exp(log_sum)


def fair_bleu(feminine_scores: Sequence[float], masculine_scores: Sequence[float]) -> float:
    """Mean of all sentence scores minus half the absolute gap between the two gender means."""
    mean_f, mean_m = float(np.mean(feminine_scores)), float(np.mean(masculine_scores))
    overall = float(np.mean([*feminine_scores, *masculine_scores]))
    return overall - abs(mean_f - mean_m) / 2


# ---------------------------------------------------------------------------------------------------
# MT-GenEval gender accuracy
# ---------------------------------------------------------------------------------------------------


def accuracy_words(text: str) -> set[str]:
    """Lowercase, ASCII punctuation to spaces, split on whitespace: the word set the accuracy compares."""
    return set(text.lower().translate(_PUNCT_TO_SPACE).split())


@dataclass(frozen=True)
class GenderDecision:
    """Accuracy decision for one hypothesis, with the words that decided it."""

    correct: bool
    counterfactual_words: list[str]  # words of the hypothesis found only in the counterfactual reference
    matching_words: list[str]  # words of the hypothesis found only in the correct reference
    gendered: bool = True  # the two references differ in some word (False: gender-neutral in the target)

    @property
    def covers(self) -> bool:
        """Whether the hypothesis uses a distinguishing word of either reference (see COVERAGE_DEFINITION)."""
        return bool(self.counterfactual_words or self.matching_words)


def gender_decision(hypothesis: str, reference: str, counterfactual: str, lang: str) -> GenderDecision:
    """Correct unless the hypothesis uses a word unique to the counterfactual (opposite-gender) reference; the words
    of target language ``lang`` as its script has them (:func:`differing_words`)."""
    hyp = accuracy_text(hypothesis)
    ours, theirs = differing_words(reference, counterfactual, lang)
    if spaced(lang):
        words = set(hyp.split())
        wrong, right = sorted(words & theirs), sorted(words & ours)
    else:
        wrong, right = sorted(w for w in theirs if w in hyp), sorted(w for w in ours if w in hyp)
    return GenderDecision(
        correct=not wrong, counterfactual_words=wrong, matching_words=right, gendered=bool(ours or theirs)
    )


def spaced(lang: str) -> bool:
    """Whether target language ``lang`` (a tag) writes spaces between words (:attr:`LanguageTag.spaced`); a tag that
    names no language is a one-line :class:`~bias_eval.core.errors.UserError`, never a silent whitespace split."""
    return LanguageTag.parse(lang, "target language").spaced


def accuracy_text(text: str) -> str:
    """Lowercase, ASCII punctuation to spaces: the text in which the accuracy finds words (:func:`accuracy_words` are
    its whitespace words)."""
    return text.lower().translate(_PUNCT_TO_SPACE)


def differing_words(reference: str, counterfactual: str, lang: str) -> tuple[set[str], set[str]]:
    """The words of ``reference`` its counterfactual lacks, and those of the counterfactual it lacks: whitespace
    words (:func:`accuracy_words`), or, in a language written without spaces, the character spans in which the two
    differ (each span that does not occur in the other sentence at all)."""
    if spaced(lang):
        ref, cf = accuracy_words(reference), accuracy_words(counterfactual)
        return ref - cf, cf - ref
    ref, cf = accuracy_text(reference), accuracy_text(counterfactual)
    ours, theirs = set(), set()
    for op, i1, i2, j1, j2 in SequenceMatcher(None, ref, cf, autojunk=False).get_opcodes():
        if op != "equal":
            ours.add(ref[i1:i2].strip())
            theirs.add(cf[j1:j2].strip())
    return {w for w in ours if w and w not in cf}, {w for w in theirs if w and w not in ref}
