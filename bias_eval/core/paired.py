"""Paired tests between two systems on the same sentences: McNemar's exact test for an accuracy, a paired bootstrap
for every other figure (corpus BLEU and chrF, the gender gaps, the accuracies' changes).

McNemar looks only at the discordant sentences: ``b`` right before and wrong after, ``c`` wrong before and right
after. Under no change each discordant sentence goes either way with probability 1/2, so the two-sided exact p-value
is ``min(1, 2 P(X <= min(b, c)))`` with ``X ~ Binomial(b + c, 1/2)``, computed here in exact integer arithmetic (the
value of ``scipy.stats.binomtest(b, b + c).pvalue``). It is valid for any count; the chi-square approximation with
continuity correction is not used, since it is unreliable for few discordant sentences and saves nothing here.

McNemar's interval is the set of changes its test does not reject, centred on the change: ``[x - h, x + h]``
clipped to the shares' range, ``h`` the largest ``|c - b| / n`` that the exact test does not reject at 0.05, so it
excludes 0 exactly when p is below 0.05 (``[0, 0]`` with p 1 when no sentence is judged differently).

The paired bootstrap draws the sentences (both genders of a pair together, as the report's CIs) with replacement,
the same draws for both systems, and recomputes the figure of each system on each resample; below
:data:`MIN_BOOTSTRAP` sentences of a gender (pairs, for paired data) it is refused, its interval then having no
coverage worth the name. Its two-sided p-value is ``min(1, 2 (k + 1) / (B + 1))``, ``k`` being the number of the
``B`` replicates of the change on the smaller side of 0 (``<= 0`` or ``>= 0``), and its 95% interval runs from the
j-th smallest to the j-th largest replicate, ``j = ceil(0.05 (B + 1) / 2) - 1`` (25 of 1000): it excludes 0 exactly
when p is below 0.05. ``sacrebleu.significance.PairedTest`` is not used: it tests one corpus score on one reference
set and gives no interval of the difference, so it cannot resample a gender gap with both genders of a pair together.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from bias_eval.core.bootstrap import replicate_shares
from bias_eval.core.decision import LEVEL

#: a replicate closer to 0 than this is 0 (a difference of equal shares computed in two ways)
TIE = 1e-12
#: the fewest sentences of a gender (pairs, for paired data) a paired bootstrap runs on
MIN_BOOTSTRAP = 30
Figure = Callable[[Mapping[str, np.ndarray]], np.ndarray]  # gender -> resample counts (samples x n) -> values


@dataclass(frozen=True)
class McNemar:
    """McNemar's exact test of two systems' per-sentence decisions."""

    n: int  # sentences compared
    before_only: int  # right before, wrong after (b)
    after_only: int  # wrong before, right after (c)
    p_value: float


def mcnemar_p(before_only: int, after_only: int) -> float:
    """Two-sided exact McNemar p-value for ``b`` and ``c`` discordant sentences (1.0 with none)."""
    n = before_only + after_only
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(before_only, after_only) + 1))
    return min(1.0, 2 * tail / 2**n)  # integer division of exact integers: correctly rounded


def mcnemar_interval(test: McNemar, before: float, level: float = LEVEL) -> list[float]:
    """The changes of a share from ``before`` that McNemar's exact test does not reject, around the change seen
    (see the module docstring): excludes 0 exactly when ``test.p_value`` is below ``level``."""
    discordant = test.before_only + test.after_only
    k = next(k for k in range(discordant // 2 + 1) if mcnemar_p(k, discordant - k) >= level)
    change, half = (test.after_only - test.before_only) / test.n, (discordant - 2 * k) / test.n
    return [max(change - half, -before) + 0.0, min(change + half, 1 - before) + 0.0]  # + 0.0: never -0.0


def mcnemar(before: Sequence[bool], after: Sequence[bool]) -> McNemar:
    """McNemar's exact test of the same sentences judged right or wrong for two systems."""
    if len(before) != len(after):
        raise ValueError(f"McNemar needs the same sentences: {len(before)} decisions before, {len(after)} after")
    b = sum(1 for x, y in zip(before, after) if x and not y)
    c = sum(1 for x, y in zip(before, after) if y and not x)
    return McNemar(len(before), b, c, mcnemar_p(b, c))


def bootstrap_floor(changes: np.ndarray) -> float:
    """The smallest p-value :func:`bootstrap_test` can give with these replicates (NaN ones left out): ``2 / (B + 1)``,
    when no replicate lies on the other side of 0. A p at its floor says only that the p-value is below it."""
    return min(1.0, 2 / (int((~np.isnan(changes)).sum()) + 1))


def p_text(p: float, floor: float | None = None) -> str:
    """A p-value for a reader: three significant digits, ``< 0.001`` below 0.001 (an exact p), and a bootstrap p at
    its ``floor`` (:func:`bootstrap_floor`) as a bound, ``< 0.002`` for 1000 replicates: the floor rounded up at
    its second significant digit, so that the bound is never below it."""
    if floor is not None and p <= floor:
        step = 10.0 ** (math.floor(math.log10(floor)) - 1)
        return f"< {(math.floor(round(floor / step, 6)) + 1) * step:.2g}"
    return "< 0.001" if p < 0.001 else f"{p:.3g}"


def p_relation(row: Mapping[str, Any]) -> tuple[str, str | None]:
    """A tested row's raw p and its adjusted p for a sentence (``p_value``, ``p_adjusted``, ``p_floor``): ``= 0.012``
    or, at a bootstrap's floor, ``< 0.002`` (:func:`p_text`); the adjusted one the same way, ``≤ 0.02`` when
    the raw p is a bound (the adjusted p made from it is one too), ``None`` where it does not differ."""
    floor, raw, adjusted = row.get("p_floor"), row["p_value"], row.get("p_adjusted")
    said = p_text(raw, floor)
    said = said if said.startswith("<") else f"= {said}"
    if adjusted is None or adjusted == raw:
        return said, None
    text = p_text(adjusted, floor)
    bound = floor is not None and raw <= floor
    return said, text if text.startswith("<") else f"{'≤' if bound else '='} {text}"


def bootstrap_refusal(n: int, samples: int, paired: bool, level: float = LEVEL) -> str | None:
    """Why a paired bootstrap of ``n`` sentences of a gender (pairs, when ``paired``) with ``samples`` resamples is
    refused (:data:`MIN_BOOTSTRAP`; too few resamples for a two-sided interval at ``level``), ``None`` if it runs."""
    if n < MIN_BOOTSTRAP:
        what = "pairs" if paired else "sentences of a gender"
        return f"{n} {what}, fewer than the {MIN_BOOTSTRAP} a paired bootstrap needs for its interval to hold"
    if math.ceil(Fraction(str(level)) * (samples + 1) / 2) < 2:
        return f"{samples} bootstrap resamples cannot give a {1 - level:.0%} interval (at least {round(2 / level)})"
    return None


def bootstrap_test(changes: np.ndarray, level: float = LEVEL) -> tuple[list[float], float]:
    """The 95% interval and the two-sided p-value of a change from its replicates (NaN ones left out), made so that
    the interval excludes 0 exactly when p is below ``level`` (see the module docstring)."""
    valid = changes[~np.isnan(changes)]
    valid = np.sort(np.where(np.abs(valid) < TIE, 0.0, valid))  # rounding noise is no side of 0
    size = len(valid)
    j = math.ceil(Fraction(str(level)) * (size + 1) / 2) - 1
    if j < 1:
        raise ValueError(f"{size} bootstrap replicates cannot give a {1 - level:.0%} interval")
    far = min(int((valid <= 0).sum()), int((valid >= 0).sum()))
    return [float(valid[j - 1]), float(valid[size - j])], min(1.0, 2 * (far + 1) / (size + 1))


@dataclass(frozen=True)
class Change:
    """A figure of two systems on the same sentences, its change and the change's paired-bootstrap CI and p."""

    before: float
    after: float
    ci95: list[float]
    p_value: float
    changes: np.ndarray | None = field(default=None, repr=False, compare=False)  # the replicates of the change
    replicates: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False, compare=False)  # each system's

    @property
    def change(self) -> float:
        """``after - before``."""
        return self.after - self.before

    @property
    def p_floor(self) -> float | None:
        """The smallest p its replicates can give (:func:`bootstrap_floor`; ``None`` without replicates)."""
        return None if self.changes is None else bootstrap_floor(self.changes)


def paired_change(before: float, after: float, before_replicates: np.ndarray, after_replicates: np.ndarray) -> Change:
    """The change ``after - before`` with the percentile CI and p-value of its replicates (same resamples)."""
    b, a = np.asarray(before_replicates, dtype=float), np.asarray(after_replicates, dtype=float)
    changes = a - b
    return Change(before, after, *bootstrap_test(changes), changes, (b, a))


def mean_change(changes: Sequence[Change]) -> Change:
    """The unweighted mean of independent changes (one per language, resampled on its own): replicate b of the mean
    is the mean of the replicates b, as for a report's macro intervals."""
    before = float(np.mean([c.before for c in changes]))
    after = float(np.mean([c.after for c in changes]))
    if all(c.replicates is not None for c in changes):
        b, a = (np.mean([c.replicates[i] for c in changes], axis=0) for i in (0, 1))  # type: ignore[index]
        return paired_change(before, after, b, a)
    replicates = np.mean([c.changes for c in changes], axis=0)
    return Change(before, after, *bootstrap_test(replicates), replicates)


def size_change(gap: Change) -> Change:
    """The change of a gap's size, ``|after| - |before|``, over the same resamples as the gap's own change: below 0
    when the gap shrank whichever gender it favours (a gap that changes sign is not narrowed by that alone)."""
    if gap.replicates is None:
        raise ValueError("the size of a gap needs each system's replicates")
    b, a = gap.replicates
    return paired_change(abs(gap.before), abs(gap.after), np.abs(b), np.abs(a))


def corpus_figure(stats: Mapping[str, np.ndarray], scorer: Callable[[np.ndarray], float]) -> Figure:
    """A corpus score (BLEU, chrF) over the genders in ``stats`` (per-sentence sufficient statistics), as a
    function of resample counts: the statistics of every gender are summed with their counts, then scored."""

    def figure(counts: Mapping[str, np.ndarray]) -> np.ndarray:
        summed = sum(counts[g] @ stats[g] for g in stats)
        return np.array([scorer(row) for row in np.atleast_2d(summed)], dtype=float)

    return figure


def gap_figure(feminine: Figure, masculine: Figure) -> Figure:
    """``masculine - feminine`` of two figures."""
    return lambda counts: masculine(counts) - feminine(counts)


def share_figure(hits: Mapping[str, np.ndarray], counted: Mapping[str, np.ndarray]) -> Figure:
    """A share (an accuracy) over the genders in ``hits``: counted hits over counted items (NaN with none), per
    resample, as a report's intervals compute it (:func:`bias_eval.core.bootstrap.replicate_shares`)."""
    return lambda counts: replicate_shares(counts, hits, counted)


def ones(sizes: Mapping[str, int]) -> dict[str, np.ndarray]:
    """Counts that take every sentence once: the figure on the whole test set."""
    return {g: np.ones((1, n), dtype=np.int64) for g, n in sizes.items()}


def compare_figure(before: Figure, after: Figure, sizes: Mapping[str, int], counts: Mapping[str, np.ndarray]) -> Change:
    """One figure of both systems on the whole set and on every resample (``counts``, shared), and its change."""
    whole = ones(sizes)
    point_b, point_a = float(before(whole)[0]), float(after(whole)[0])
    return paired_change(point_b, point_a, before(counts), after(counts))
