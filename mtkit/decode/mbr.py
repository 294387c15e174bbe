"""Minimum-Bayes-risk (MBR) decoding: draw several candidate translations per source, and keep the one whose
expected utility against all candidates (the model's samples standing in for references) is highest.

The candidates come from epsilon sampling (Freitag et al., 2023: "Epsilon Sampling Rocks"), from nucleus sampling
(CTranslate2, which has no epsilon cutoff) or from the beam's n-best list; the engines in :mod:`mtkit.decode` draw
them with the prompts and output bounds of beam search. The utility is pluggable (:data:`UTILITIES`): any function
scoring aligned lists of hypotheses and references; chrF from sacreBLEU is the default.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from mtkit.config import CT2_TOP_P, EPSILON, MBR_SAMPLES
from mtkit.errors import UserError

#: scores ``hyps[i]`` against ``refs[i]`` for every ``i`` (higher is better); called once per batch of sources
Utility = Callable[[Sequence[str], Sequence[str]], Sequence[float]]

DECODINGS = ("beam", "mbr")
CANDIDATES = ("sample", "beam")
#: MBR decoding's settings, as flags, recipe keys and :class:`mtkit.decode.settings.DecodingSettings` fields name
#: them (the one list: every parser, recipe check and command line builds on it)
MBR_KEYS = ("mbr_samples", "mbr_candidates", "epsilon", "top_p")


def chrf_utility(hyps: Sequence[str], refs: Sequence[str]) -> list[float]:
    """Sentence chrF (sacreBLEU's defaults: character 6-grams, beta 2) of each hypothesis against its reference."""
    from sacrebleu.metrics import CHRF

    metric = CHRF()
    return [metric.sentence_score(h, [r]).score for h, r in zip(hyps, refs)]


UTILITIES: dict[str, Utility] = {"chrf": chrf_utility}


@dataclass(frozen=True)
class MBR:
    """How MBR decoding draws candidates and chooses among them.

    ``epsilon`` (transformers only) drops tokens whose probability is below it; ``top_p`` keeps the smallest set of
    tokens whose probability reaches it (both engines); ``seed`` makes the samples reproducible for the same
    inputs, batch size and engine.
    """

    samples: int = MBR_SAMPLES
    candidates: str = "sample"
    epsilon: float | None = None
    top_p: float | None = None
    utility: str = "chrf"
    seed: int = 0

    def __post_init__(self) -> None:
        if self.samples < 1:
            raise UserError(f"--mbr_samples: must be > 0, got {self.samples}")
        if self.candidates not in CANDIDATES:
            raise UserError(f"--mbr_candidates: {self.candidates!r} is not one of {', '.join(CANDIDATES)}")
        if self.epsilon is not None and not 0 <= self.epsilon < 1:
            raise UserError(f"--epsilon: must be in [0, 1), got {self.epsilon}")
        if self.top_p is not None and not 0 < self.top_p <= 1:
            raise UserError(f"--top_p: must be in (0, 1], got {self.top_p}")
        if self.utility not in UTILITIES:
            raise UserError(f"--mbr_utility: {self.utility!r} is not one of {', '.join(UTILITIES)}")

    def sampling(self, engine: str) -> dict[str, float]:
        """The truncation ``engine`` (hf or ct2) samples with: ``epsilon`` and ``top_p`` as they apply."""
        if engine == "ct2":
            if self.epsilon:
                raise UserError("--epsilon: CTranslate2 has no epsilon sampling; with --engine ct2 use --top_p")
            return {"top_p": CT2_TOP_P if self.top_p is None else self.top_p}
        return {"epsilon": EPSILON if self.epsilon is None else self.epsilon, "top_p": self.top_p or 1.0}


def expected_utilities(candidates: Sequence[str], utility: Utility) -> np.ndarray:
    """For each candidate, its mean utility against every candidate (itself included: each sample is one draw
    from the model, and a translation the model samples twice counts twice)."""
    return expected_utilities_batch([candidates], utility)[0]


def expected_utilities_batch(groups: Sequence[Sequence[str]], utility: Utility) -> list[np.ndarray]:
    """:func:`expected_utilities` for several sources' candidate lists, with one call of ``utility`` for all the
    distinct (hypothesis, reference) pairs of the batch."""
    pairs: dict[tuple[str, str], int] = {}
    for group in groups:
        for h in set(group):
            for r in set(group):
                pairs.setdefault((h, r), len(pairs))
    keys = list(pairs)
    scores = np.asarray(utility([h for h, _ in keys], [r for _, r in keys]), dtype=np.float64)
    return [np.array([np.mean([scores[pairs[h, r]] for r in group]) for h in group]) for group in groups]


def choose(groups: Sequence[Sequence[str]], utility: str | Utility = "chrf") -> list[str]:
    """The MBR choice of each candidate list: the candidate of highest expected utility (the first such one)."""
    function = UTILITIES[utility] if isinstance(utility, str) else utility
    return [group[int(np.argmax(eu))] for group, eu in zip(groups, expected_utilities_batch(groups, function))]


def translations(groups: Sequence[Sequence[str]], mbr: MBR | None) -> list[str]:
    """Each sentence's translation from its candidates: the beam's one without ``mbr``, else the MBR choice."""
    return [group[0] for group in groups] if mbr is None else choose(groups, mbr.utility)


def mbr_settings(options, seed: int) -> MBR | None:
    """The :class:`MBR` that ``options`` (a :class:`mtkit.decode.settings.DecodingSettings` or a script's
    arguments: ``decoding`` and :data:`MBR_KEYS`, ``None`` where not given) ask for, under ``seed``; ``None`` for beam
    search, which refuses MBR keys that are given."""
    if options.decoding not in DECODINGS:
        raise UserError(f"--decoding: {options.decoding!r} is not one of {', '.join(DECODINGS)}")
    given = {key: getattr(options, key) for key in MBR_KEYS if getattr(options, key) is not None}
    if options.decoding == "beam":
        if given:
            raise UserError(f"--{next(iter(given))}: only used with --decoding mbr")
        return None
    names = {"mbr_samples": "samples", "mbr_candidates": "candidates"}  # MBR's own names
    utility = getattr(options, "utility", "chrf")  # a library caller's (UTILITIES); no flag sets it
    return MBR(**{names.get(key, key): value for key, value in given.items()}, utility=utility, seed=seed)
