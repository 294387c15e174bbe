"""The paired tests of two WinoMT reports on the same sentences, per language: McNemar's exact test of the accuracy
(:func:`bias_eval.core.paired.mcnemar`) and the paired bootstrap (the same resamples of the sentences for both systems)
of ΔG, each F1, ΔS and the sizes of ΔG and ΔS, every figure recomputed by :func:`bias_eval.winomt.figures.summary` from
each report's per-sentence details (held, or its folder's ``<lang>.details.jsonl``: gold, predicted and the pro- and
anti-stereotypical items a line counts for); each row then decided by the comparison's rule
(:func:`bias_eval.core.decision.decide`: Holm over every test of the comparison by default)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bias_eval.core.bootstrap import language_rng, resample_counts, resampling
from bias_eval.core.decision import Rule, decide
from bias_eval.core.paired import (
    Change,
    bootstrap_refusal,
    compare_figure,
    mcnemar,
    mcnemar_interval,
    mean_change,
    size_change,
)
from bias_eval.core.report import Refused, Report
from bias_eval.winomt.figures import CELLS, summary

#: (title, key of :func:`~bias_eval.winomt.figures.summary`) of the figures tested with the paired bootstrap
BOOTSTRAPPED = (("ΔG", "delta_g"), ("F1 male", "f1_male"), ("F1 female", "f1_female"), ("ΔS", "delta_s"))
#: (title, key) of the differences whose size, |after| - |before|, is tested too
SIZES = (("ΔG size", "delta_g"), ("ΔS size", "delta_s"))
#: the figures that need the pro/anti columns of the details (reports of earlier versions lack them)
HALVES = ("delta_s",)
PREFIX = "winomt_"
NOTE = (
    "Paired tests on the same sentences, per language. Accuracy: McNemar's exact test on the sentences judged "
    "differently (b: right in {before} only, c: right in {after} only), p = min(1, 2 P(X <= min(b, c))), X ~ "
    "Binomial(b + c, 1/2), with the interval of the changes it does not reject. ΔG, F1 and ΔS: paired bootstrap, the "
    "same {samples} resamples of the translations (seed {seed}, {before}'s bootstrap settings) for both systems, each "
    "figure recomputed from every resampled line's gold and predicted gender (and, for ΔS, the pro- and "
    "anti-stereotypical items it counts for); p = min(1, 2 (k + 1) / (B + 1)) with k the resamples on the smaller "
    "side of 0, and the 95% interval runs from the j-th smallest to the j-th largest change, j = ceil(0.05 (B + 1) / "
    "2) - 1, so that it excludes 0 exactly when p < 0.05. ΔG size and ΔS size rows: the change of the size, |after| - "
    "|before|, on each resample (below 0: the difference shrank, whichever side it favours). mean (both reports of "
    "the same languages): each figure's unweighted mean over the languages, tested by the mean of their bootstrap "
    "changes (the accuracy's too; a size's mean is the mean of the languages' sizes). Accuracies and F1 in "
    "percent, ΔG, ΔS and changes in points. {rule}"
)


@dataclass(frozen=True)
class Judged:
    """One WinoMT report's translations of one language: each line's source, whether it was right, and its counted
    cells (:func:`bias_eval.winomt.figures.cells`; the pro/anti columns zero when ``halves`` is false)."""

    sources: tuple[str, ...]
    correct: tuple[bool, ...]
    cells: np.ndarray
    halves: bool

    @classmethod
    def of(cls, rows: Sequence[Mapping[str, Any]], where: str = "details") -> Judged:
        """From a report's per-sentence details (``source``, ``gold``, ``predicted``, ``correct``, ``pro``, ``anti``;
        ``where`` names them in a :class:`Refused`)."""
        cells = np.zeros((len(rows), len(CELLS) + 4))
        for k, row in enumerate(rows):
            cell = (row.get("gold"), row.get("predicted"))
            if cell not in CELLS:
                raise Refused(f"{where}: line {k + 1} has no gold and predicted gender of WinoMT's")
            cells[k, CELLS.index(cell)] = 1
            cells[k, len(CELLS) :] = [*row.get("pro", (0, 0)), *row.get("anti", (0, 0))]
        halves = all("pro" in row and "anti" in row for row in rows)
        correct = tuple(bool(r.get("correct", r.get("gold") == r.get("predicted"))) for r in rows)
        return cls(tuple(r.get("source", "") for r in rows), correct, cells, halves)


def judged(report: Report, lang: str, argument: str) -> Judged:
    """``report``'s translations of ``lang``, judged (its per-sentence details, :meth:`Report.rows`);
    :class:`Refused` when they are missing or unreadable."""
    where = f"{argument}: {report.folder}/{lang}.details.jsonl" if report.folder is not None else argument
    return Judged.of(report.rows(lang, argument), where)


def check_same(lang: str, before: Judged, after: Judged, names: Sequence[str]) -> None:
    """:class:`Refused` unless both reports judged the same sentences, line for line."""
    if len(before.sources) != len(after.sources):
        n_b, n_a = len(before.sources), len(after.sources)
        raise Refused(f"{lang}: {names[0]} has {n_b} translations, {names[1]} {n_a}: not the same sentences")
    for i, (x, y) in enumerate(zip(before.sources, after.sources), start=1):
        if x != y:
            raise Refused(f"{lang}: line {i} translates another sentence in {names[1]}: not the same sentences")


def _row(lang: str, title: str, key: str, test: str, change: Change) -> dict[str, Any]:
    row = {"lang": lang, "title": title, "figure": PREFIX + key, "test": test}
    if any(v is None or np.isnan(v) for v in (change.before, change.after, *change.ci95)):
        return row | {"missing": True}
    row |= {"before": change.before, "after": change.after, "change": change.change, "ci95": change.ci95}
    return row | {"p_value": change.p_value, "p_floor": change.p_floor}


def accuracy_test(lang: str, before: Judged, after: Judged) -> dict[str, Any]:
    """McNemar's exact test of the accuracy, in percent (its interval too)."""
    test = mcnemar(before.correct, after.correct)
    row = {"lang": lang, "title": "accuracy", "figure": f"{PREFIX}accuracy", "test": "McNemar exact"}
    row |= {"before_only": test.before_only, "after_only": test.after_only}
    if not test.n:
        return row | {"missing": True}
    shares = [sum(j.correct) / test.n for j in (before, after)]
    low, high = mcnemar_interval(test, shares[0])
    row |= {"before": 100 * shares[0], "after": 100 * shares[1], "change": 100 * (shares[1] - shares[0])}
    return row | {"ci95": [100 * low, 100 * high], "p_value": test.p_value, "p_floor": None}


def language_tests(
    lang: str, before: Judged, after: Judged, samples: int, seed: int, keep: dict[str, Change] | None = None
) -> list[dict[str, Any]]:
    """Every paired test of one language (the sentences already checked to be the same); each bootstrapped
    :class:`~bias_eval.core.paired.Change` (the accuracy's too, for the mean over languages) also goes into ``keep``."""
    rows = [accuracy_test(lang, before, after)]
    n = len(before.sources)
    refused = bootstrap_refusal(n, samples, paired=False)
    counts = {} if refused else {"all": resample_counts(language_rng(seed, f"winomt:{lang}"), n, samples)}
    earlier = "a report's details lack the pro/anti items of each line (a report of an earlier version)"
    changes: dict[str, Change] = {}
    why: dict[str, str] = {}
    for _, key in (*BOOTSTRAPPED, ("accuracy", "accuracy")):
        why[key] = why[f"{key}_size"] = refused or (earlier if key in HALVES and not (before.halves and after.halves)
                                                    else "")  # fmt: skip
        if why[key]:
            continue
        per = [lambda c, x=j.cells, k=key: summary(c["all"] @ x)[k] for j in (before, after)]
        try:
            changes[key] = compare_figure(*per, {"all": n}, counts)
        except ValueError as err:  # the figure undefined on (nearly) every resample: no pro or no anti items
            why[key] = why[f"{key}_size"] = f"{key}: {err}"
    sizes = {f"{key}_size": size_change(changes[key]) for _, key in SIZES if key in changes}
    for title, key in (*BOOTSTRAPPED, *((t, f"{k}_size") for t, k in SIZES)):
        found = changes.get(key) or sizes.get(key)
        if found is None:
            rows.append({"lang": lang, "title": title, "figure": PREFIX + key, "test": "paired bootstrap",
                         "missing": True, "refused": why[key]})  # fmt: skip
        else:
            rows.append(_row(lang, title, key, "paired bootstrap", found))
    if keep is not None:
        keep.update(changes | sizes)
    return rows


def mean_tests(kept: Mapping[str, Mapping[str, Change]]) -> list[dict[str, Any]]:
    """The ``mean`` rows: each figure's unweighted mean over the languages and the paired bootstrap of its change
    (:func:`bias_eval.core.paired.mean_change`; the accuracy's too, McNemar testing one set of sentences; a size's mean
    is the mean of the languages' sizes), where every language has the figure's test."""
    rows = []
    for title, key in (("accuracy", "accuracy"), *BOOTSTRAPPED, *((t, f"{k}_size") for t, k in SIZES)):
        changes = [figures.get(key) for figures in kept.values()]
        if all(c is not None for c in changes):
            rows.append(_row("mean", title, key, "paired bootstrap", mean_change(changes)))  # type: ignore[arg-type]
    return rows


def winomt_paired(
    judged: Mapping[str, Sequence[Judged]],
    names: Sequence[str],
    config: Mapping[str, Any],
    rule: Rule = Rule(),
    mean: bool = False,
) -> dict[str, Any]:
    """``comparison.json``'s ``paired`` of WinoMT reports: ``judged`` holds each language's two :class:`Judged`
    (before, after), checked here to be the same sentences; resampled with ``config``'s (BEFORE's) bootstrap
    settings; with ``mean`` (both reports of the same languages, several), the :func:`mean_tests` too; every row
    decided by ``rule`` over all the comparison's tests."""
    samples, seed = resampling(config)
    out: dict[str, Any] = {"samples": samples, "seed": seed, "level": rule.level, "refused": None, "rows": []}
    out["rule"] = rule.describe()
    try:
        for lang, pair in judged.items():
            check_same(lang, *pair, names)
    except Refused as why:
        out["refused"] = str(why)
        return out
    kept: dict[str, dict[str, Change]] = {lang: {} for lang in judged}
    for lang, pair in judged.items():
        out["rows"] += language_tests(lang, *pair, samples=samples, seed=seed, keep=kept[lang])
    out["rows"] += mean_tests(kept) if mean and len(judged) > 1 else []
    decide(out["rows"], rule)
    return out
