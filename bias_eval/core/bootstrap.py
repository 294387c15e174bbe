"""Bootstrap confidence intervals for a gender gap computed from summable per-sentence statistics.

Paired data (MT-GenEval: line i of each gender is the same sentence) resamples pair indices, so both
genders of a pair enter a replicate together; unpaired data resamples each gender on its own
(stratified bootstrap). A replicate's corpus scores come from the statistics summed with the resample
counts, so nothing is tokenised again.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from bias_eval.core.memory import check_fits

Scorer = Callable[[np.ndarray], float]

#: every bootstrap's resamples and seed unless told otherwise (a report, a comparison, a verdict)
SAMPLES, SEED = 1000, 12345


def resampling(config: Mapping[str, Any]) -> tuple[int, int]:
    """The resamples and seed a report's ``config`` records (``bootstrap_samples``, ``seed``), else :data:`SAMPLES`
    and :data:`SEED`: a comparison draws as its reports drew."""
    seed = config.get("seed")
    return int(config.get("bootstrap_samples") or SAMPLES), seed if isinstance(seed, int) else SEED


def language_rng(seed: int, lang: str) -> np.random.Generator:
    """A generator seeded by ``seed`` and the language code, so one language's CI ignores the others."""
    return np.random.default_rng([seed, zlib.crc32(lang.encode("utf-8"))])


def check_resamples(samples: int, n: int, memory: int | None) -> None:
    """Refuse ``samples`` resamples of ``n`` items whose counts (:func:`resample_counts`: the counts and the draws
    they are counted from, three ``samples x n`` arrays of 8-byte integers) exceed ``memory`` bytes, in one line
    naming ``--bootstrap_samples``, before any is drawn."""
    what = f"{samples:,} resamples of {n:,} sentences (their draws and counts)"
    check_fits(3 * 8 * samples * n, memory, f"--bootstrap_samples {samples}", what)


def resample_counts(rng: np.random.Generator, n: int, samples: int) -> np.ndarray:
    """``samples x n`` matrix: how often each of ``n`` items is drawn in each bootstrap resample."""
    draws = rng.integers(0, n, size=(samples, n))
    flat = (np.arange(samples)[:, None] * n + draws).ravel()
    return np.bincount(flat, minlength=samples * n).reshape(samples, n)


def replicate_scores(counts: np.ndarray, stats: np.ndarray, scorer: Scorer) -> np.ndarray:
    """Corpus score of every resample: ``scorer`` applied to the count-weighted sum of the statistics."""
    sums = counts @ stats
    return np.array([scorer(row) for row in sums], dtype=float)


def gap_replicates(
    stats_feminine: np.ndarray,
    stats_masculine: np.ndarray,
    scorer: Scorer,
    counts_feminine: np.ndarray,
    counts_masculine: np.ndarray,
) -> np.ndarray:
    """Bootstrap replicates of ``score(masculine) - score(feminine)``."""
    masculine = replicate_scores(counts_masculine, stats_masculine, scorer)
    feminine = replicate_scores(counts_feminine, stats_feminine, scorer)
    return masculine - feminine


def percentile_interval(replicates: np.ndarray, level: float = 0.95) -> list[float]:
    """The two-sided percentile interval ``[lo, hi]`` of the replicates (NaN replicates, e.g. a share of
    nothing, left out)."""
    tail = 100.0 * (1.0 - level) / 2.0
    low, high = np.nanpercentile(replicates, [tail, 100.0 - tail])
    return [float(low), float(high)]


def significant(ci: Sequence[float] | None) -> bool | None:
    """Whether an interval excludes 0 (``None`` without an interval)."""
    if ci is None:
        return None
    return ci[0] > 0 or ci[1] < 0


def replicate_shares(
    counts: Mapping[str, np.ndarray], hits: Mapping[str, np.ndarray], counted: Mapping[str, np.ndarray]
) -> np.ndarray:
    """Per resample: hits over counted items, summed over the genders in ``hits`` (NaN where none is counted)."""
    numerator = sum(counts[g] @ hits[g] for g in hits)
    denominator = sum(counts[g] @ counted[g] for g in hits)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(numerator, dtype=float) / np.asarray(denominator, dtype=float)
