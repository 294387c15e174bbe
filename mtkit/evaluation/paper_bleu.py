"""BLEU as the papers report it, beside sacreBLEU: ``multi-bleu.perl`` (and fairseq's BLEU4) on lowercased,
punctuation-normalised, Moses-tokenized text (the Multi30k literature), or on cased tokenized text (WMT14 EN-DE since
Vaswani et al., 2017). The preparation is the Moses scripts' (``lowercase.perl | normalize-punctuation.perl -l L |
tokenizer.perl -l L``) through sacremoses; the score is sacreBLEU's on whitespace tokens (``tokenize="none"``,
no smoothing, as multi-bleu). sacreBLEU on the detokenized text (:mod:`bias_eval.core.bleu`) stays the default and is
always shown: the two are not comparable (tokenized lowercased BLEU runs 1 to 2 points higher on the same output)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from importlib.metadata import version

from sacrebleu.metrics import BLEU

from bias_eval.core.bleu import signature
from bias_eval.core.langtag import base_language

#: ``--paper_bleu`` -> what the text is made before scoring
PREPARATIONS = {
    "moses-lc": "lowercased, punctuation-normalised and Moses-tokenized",
    "moses": "punctuation-normalised and Moses-tokenized (cased)",
    "tokenized": "taken as it is (already tokenized, e.g. Multi30k's tok/ files)",
}
#: multi-bleu.perl's corpus BLEU: whitespace tokens, case as given, no smoothing
MULTI_BLEU = BLEU(tokenize="none", force=True, smooth_method="none")


@functools.cache
def _moses(lang: str):
    from sacremoses import MosesPunctNormalizer, MosesTokenizer

    return MosesPunctNormalizer(lang=lang), MosesTokenizer(lang=lang)


def prepare(lines: Sequence[str], lang: str, how: str = "moses-lc") -> list[str]:
    """``lines`` of language ``lang`` as the papers prepare them (``how``: a key of :data:`PREPARATIONS`): lowercased
    (``moses-lc``), punctuation normalised, tokenized with Moses' escapes (``&quot;``, ``&apos;``)."""
    if how == "tokenized":
        return [line.strip() for line in lines]
    normalizer, tokenizer = _moses(base_language(lang) or "en")  # Moses' rules are per language
    lower = how == "moses-lc"
    return [
        tokenizer.tokenize(normalizer.normalize(line.lower() if lower else line), escape=True, return_str=True).strip()
        for line in lines
    ]


def paper_bleu(hypotheses: Sequence[str], references: Sequence[str], langs: str | Sequence[str], how: str) -> dict:
    """``paper_bleu`` (0-100) and ``paper_bleu_ref_len`` (reference tokens, the figure papers state) of a corpus
    prepared by :func:`prepare` for each sentence's target language (``langs``: one code, or one per sentence); with
    several languages also ``<lang>_paper_bleu`` each, from the same prepared text."""
    per = [langs] * len(hypotheses) if isinstance(langs, str) else list(langs)
    groups: dict[str, list[int]] = {}
    for i, lang in enumerate(per):
        groups.setdefault(lang, []).append(i)
    stats: dict[str, list[int]] = {}
    for lang, idx in groups.items():
        hyps = prepare([hypotheses[i] for i in idx], lang, how)
        refs = prepare([references[i] for i in idx], lang, how)
        rows = MULTI_BLEU._extract_corpus_statistics(hyps, [refs])
        stats[lang] = [int(sum(column)) for column in zip(*rows)] if rows else [0] * 10
    summed = [sum(column) for column in zip(*stats.values())] if stats else [0] * 10
    scores = {"paper_bleu": _score(summed), "paper_bleu_ref_len": summed[1]}
    if len(stats) > 1:
        scores |= {f"{lang}_paper_bleu": _score(row) for lang, row in stats.items()}
    return scores


def _score(stats: list[int]) -> float:
    return float(MULTI_BLEU._compute_score_from_stats(stats).score)


def description(how: str) -> str:
    """What ``paper_bleu`` is, for reports and the model card."""
    return (
        f"multi-bleu.perl's BLEU4 on text {PREPARATIONS[how]} (sacremoses {version('sacremoses')}; sacreBLEU "
        f"{signature(MULTI_BLEU)})"
    )
