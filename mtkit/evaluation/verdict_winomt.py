"""The verdict's WinoMT section: the start, the control and the mitigated model scored out of domain on WinoMT (the
mitigation tuned on MT-GenEval's pairs), each model's accuracy, ΔG and ΔS per language, and the change of mitigated
against control and against the start, with McNemar's exact test of the accuracy on the same sentences
(:func:`bias_eval.paired.mcnemar`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bias_eval.paired import mcnemar
from bias_eval.textio import read_jsonl
from mtkit.evaluation.outcome import COMPARISONS
from mtkit.evaluation.winomt_run import HEADLINE, headline

#: the comparisons the section reports (before, after)
CHANGES = {name: pair for name, pair in COMPARISONS.items() if name.startswith("mitigated_vs_")}


def decisions(folder: Path, lang: str) -> list[bool]:
    """Whether each sentence of a WinoMT report in ``folder`` got the profession's gender right, in order."""
    return [bool(row["correct"]) for _, row in read_jsonl(folder / f"{lang}.details.jsonl")]


def change(before: Mapping[str, Any], after: Mapping[str, Any], right: Sequence[Sequence[bool]]) -> dict[str, Any]:
    """One language's change from ``before`` to ``after`` (their WinoMT ``metrics.json``): each headline figure's
    difference (``None`` where either is undefined), and McNemar's test of the accuracy on the sentences judged right
    or wrong (``right``: before, after)."""
    out: dict[str, Any] = {
        key: None if before[key] is None or after[key] is None else after[key] - before[key] for key in HEADLINE
    }
    test = mcnemar(*right)
    out["accuracy_test"] = {"test": "mcnemar", "n": test.n, "before_only": test.before_only,
                            "after_only": test.after_only, "p_value": test.p_value}  # fmt: skip
    return out


def winomt_section(
    reports: Mapping[str, Mapping[str, Mapping[str, Any]]], right: Mapping[str, Mapping[str, Sequence[bool]]]
) -> dict[str, Any]:
    """``verdict.json``'s ``winomt``: ``reports`` are each model's WinoMT ``metrics.json`` by name and language,
    ``right`` its per-sentence :func:`decisions` alike; the models' headline figures and the changes of
    :data:`CHANGES` whose two models were scored."""
    langs = sorted(set.intersection(*(set(by_lang) for by_lang in reports.values())))
    out: dict[str, Any] = {"languages": langs, "n": {lang: reports["mitigated"][lang]["n"] for lang in langs}}
    out["models"] = {name: {lang: headline(dict(by_lang[lang])) for lang in langs} for name, by_lang in reports.items()}
    for name, (before, after) in CHANGES.items():
        if before in reports and after in reports:
            out[name] = {
                lang: change(reports[before][lang], reports[after][lang], (right[before][lang], right[after][lang]))
                for lang in langs
            }
        else:
            out[name] = None
    return out
