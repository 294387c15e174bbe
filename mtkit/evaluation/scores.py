"""Scores of a translated split: corpus sacreBLEU (each target language with its own tokenizer,
:func:`bias_eval.core.bleu.bleu_tokenizer`) and chrF overall and per target language, and, when the rows
carry gender labels, ``bias_eval``'s per-gender BLEU, gap, gender accuracy and fair BLEU, per language and
macro-averaged. The figures are the same as the bias report's (no bootstrap here: it runs at every evaluation).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import sacrebleu
from sacrebleu.metrics import CHRF

from bias_eval.core.bleu import bleu_signatures, corpus_bleu, signature
from bias_eval.mtgeneval.gendered import GENDERS
from bias_eval.mtgeneval.scoring import macro_average, score_language
from mtkit.data.pairs import language_data
from mtkit.evaluation.paper_bleu import description, paper_bleu

#: bias_eval figures logged at every evaluation (per language as ``<lang>_<key>``, macro-averaged as ``<key>``).
GENDER_KEYS = (
    "bleu_feminine",
    "bleu_masculine",
    "bleu_gap",
    "accuracy_feminine",
    "accuracy_masculine",
    "accuracy_pair",
    "strict_accuracy_feminine",  # a word of the sentence's gender and none of the other
    "strict_accuracy_masculine",
    "coverage",  # share of hypotheses with a gendered word at all: accuracy means little when it is low
    "fair_bleu",
)


def corpus_scores(
    hypotheses: list[str], references: list[str], langs: str | Sequence[str | None] | None
) -> dict[str, float]:
    """sacreBLEU and chrF of a corpus, on the 0-100 scale; BLEU with the tokenizer of each sentence's target language
    (``langs``: one code for all, or one per sentence; :func:`bias_eval.core.bleu.corpus_bleu`)."""
    return {
        "bleu": corpus_bleu(hypotheses, references, langs),
        "chrf": sacrebleu.corpus_chrf(hypotheses, [references]).score,
    }


def scoring(langs: Sequence[str], paper: str = "none") -> dict[str, str | None]:
    """Which score is which, for ``results.json`` and the model card: the sacreBLEU signatures of BLEU (each target
    language's tokenizer) and chrF, and what ``paper_bleu`` is (``None`` without ``--paper_bleu``)."""
    return {
        "bleu": bleu_signatures(langs),
        "chrf": signature(CHRF()),
        "paper_bleu": description(paper) if paper != "none" else None,
    }


def columns(rows: Mapping[str, Sequence] | Any) -> set[str]:
    return set(rows.column_names) if hasattr(rows, "column_names") else set(rows)


def balanced_subset(rows, n: int | None):
    """The first ``n`` rows taken evenly across languages and, for gendered data, in whole counterfactual pairs.

    Plain truncation of a split sorted by language would score one language only.
    """
    if n is None or n >= len(rows):
        return rows
    cols = columns(rows)
    langs = rows["lang"] if "lang" in cols else [""] * len(rows)
    units = rows["pair_id"] if "pair_id" in cols else [str(i) for i in range(len(rows))]
    groups: dict[str, dict[str, list[int]]] = defaultdict(dict)  # lang -> unit -> row indices
    for i, (lang, unit) in enumerate(zip(langs, units)):
        groups[lang].setdefault(unit or f"row{i}", []).append(i)
    queues = [list(by_unit.values()) for _, by_unit in sorted(groups.items())]
    chosen: list[int] = []
    for rank in range(max(len(q) for q in queues)):
        for queue in queues:
            if rank < len(queue) and len(chosen) < n:
                chosen.extend(queue[rank])
    return rows.select(sorted(chosen))


def split_scores(rows, hyps: Sequence[str], paper: str = "none") -> dict[str, float]:
    """``bleu``/``chrf`` of all rows; ``<lang>_bleu``/``<lang>_chrf`` when there are several languages; with ``paper``
    (``--paper_bleu``) the papers' ``paper_bleu`` and ``paper_bleu_ref_len`` too (``<lang>_paper_bleu`` per
    language); the :data:`GENDER_KEYS` per language and macro-averaged when every row has a gender."""
    cols = columns(rows)
    langs = list(rows["lang"]) if "lang" in cols else [""] * len(hyps)
    scores: dict[str, float] = corpus_scores(list(hyps), list(rows["target"]), langs)
    if paper != "none":
        scores |= paper_bleu(list(hyps), list(rows["target"]), langs, paper)
    by_lang: dict[str, list[int]] = defaultdict(list)
    for i, lang in enumerate(langs):
        by_lang[lang].append(i)
    if len(by_lang) > 1:
        for lang, idx in sorted(by_lang.items()):
            hyp, ref = [hyps[i] for i in idx], [rows["target"][i] for i in idx]
            own = corpus_scores(hyp, ref, lang)
            scores.update({f"{lang}_{k}": v for k, v in own.items()})
    if "gender" not in cols or not all(rows["gender"]):
        return scores
    records = rows.to_list() if hasattr(rows, "to_list") else [dict(zip(cols, v)) for v in zip(*rows.values())]
    results = []
    for lang, idx in sorted(by_lang.items()):
        data, order = language_data(lang, [records[i] for i in idx], "validation split")
        lang_hyps = {g: [hyps[idx[i]] for i in order[g]] for g in GENDERS}
        if not data.feminine.sources or not data.masculine.sources:
            continue  # one gender only: no gap to measure
        result = score_language(data, lang_hyps, samples=0, seed=0)
        results.append(result)
        if len(by_lang) > 1:
            scores.update({f"{lang}_{k}": result.metrics[k] for k in GENDER_KEYS if result.metrics[k] is not None})
    if results:
        macro = macro_average(results)
        scores.update({k: macro[k] for k in GENDER_KEYS if macro.get(k) is not None})
    return scores
