"""Rows held out of the training data: a validation split, seeded, stratified by language and gender, and keeping
the rows of one ID (one ``pair_id``) on the same side, so that validation never sees the counterfactual of a training
sentence (:func:`heldout_split`); and gendered words held out with every pair that holds them
(:func:`word_holdout`), so that a verdict can judge words the training never saw."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

import numpy as np
from datasets import Dataset

from mtkit.errors import UserError


def check_fraction(fraction: float) -> None:
    """``--validation_fraction`` must lie strictly between 0 and 1."""
    if not 0 < fraction < 1:
        raise UserError(f"--validation_fraction: must be between 0 and 1 (exclusive), got {fraction}")


def heldout_split(data: Dataset, fraction: float, seed: int) -> tuple[Dataset, Dataset]:
    """``(train, validation)``: about ``fraction`` of every (language, gender) stratum goes to validation.

    The unit drawn is every row of one ``pair_id`` (an ID: a counterfactual pair, or any other rows sharing it,
    :mod:`mtkit.data.pairs`), never parted; a row without one is a unit of its own. A unit with a ``pair_id`` has
    its language as stratum. Each stratum is shuffled with its own generator seeded by ``seed`` and its name, so
    the split of one language does not depend on which other languages are in the run.
    """
    check_fraction(fraction)
    cols = set(data.column_names)
    n = len(data)
    langs = data["lang"] if "lang" in cols else [""] * n
    genders = data["gender"] if "gender" in cols else [""] * n
    pairs = data["pair_id"] if "pair_id" in cols else [""] * n
    units: dict[str, list[int]] = defaultdict(list)  # unit -> its rows
    stratum: dict[str, str] = {}
    for i, (lang, gender, pair) in enumerate(zip(langs, genders, pairs)):
        unit = pair or f"row{i}"
        units[unit].append(i)
        stratum[unit] = lang if pair else f"{lang}/{gender}"
    by_stratum: dict[str, list[str]] = defaultdict(list)
    for unit in units:  # first-seen order: deterministic for given data
        by_stratum[stratum[unit]].append(unit)
    held: list[int] = []
    for name in sorted(by_stratum):
        members = by_stratum[name]
        rng = np.random.default_rng([seed, *name.encode()])
        take = round(fraction * len(members))
        if len(members) > 1:
            take = min(max(take, 1), len(members) - 1)  # both sides keep every stratum
        for k in rng.permutation(len(members))[:take]:
            held.extend(units[members[k]])
    held_set = set(held)
    if not held_set or len(held_set) == n:
        raise UserError(f"--validation_fraction {fraction}: leaves an empty split of {n} training pairs")
    return (
        data.select([i for i in range(n) if i not in held_set]),
        data.select(sorted(held_set)),
    )


def word_holdout(
    units: Mapping[str, tuple[frozenset[str], frozenset[str]]],
    fraction: float,
    seed: int,
    candidates: Iterable[str] | None = None,
) -> tuple[set[str], set[str]]:
    """``(words, withheld)``: gendered words held out, and the units (``pair_id``) whose references hold any of them.

    ``units`` maps each unit to its gendered words and all the words of its references
    (:func:`mtkit.data.pairs.unit_words`). The candidate words (default: every unit's gendered words) are drawn in an
    order seeded by ``seed``; a word is held out when the units holding it, with those already withheld, stay at most
    ``fraction`` of the units (a pronoun or an article in most of them never is). No held-out word is anywhere in a
    unit that is not withheld."""
    if not fraction or not units:
        return set(), set()
    pool = sorted(set(candidates) if candidates is not None else set().union(*(g for g, _ in units.values())))
    holding = {word: {unit for unit, (_, text) in units.items() if word in text} for word in pool}
    words: set[str] = set()
    withheld: set[str] = set()
    for k in np.random.default_rng([seed, 11]).permutation(len(pool)):
        more = withheld | holding[pool[k]]
        if len(more) <= fraction * len(units):
            words.add(pool[k])
            withheld = more
    return words, withheld
