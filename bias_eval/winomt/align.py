"""Word alignment with fast_align's model (Dyer et al., NAACL 2013), as WinoMT runs it: ``fast_align -d -o -v``.

IBM Model 2 with a diagonal prior: target word ``j`` (1-based) of ``m`` aligns to source word ``i`` of ``n`` with
probability ``(1 - p0) exp(-tension |i/n - j/m|) / Z`` and to the null word with ``p0``; the lexical table is
learnt by EM with a Dirichlet prior (variational Bayes, ``alpha``), the tension is fitted to the expected links
after every iteration but the first and the last (``-o``), and the last iteration writes each target word's most
probable source word (none when the null word is more probable). Words are the whitespace-separated tokens, case
kept. Everything is computed for the whole corpus at once with numpy; the defaults are fast_align's, and so are
its arithmetic's details: the closed forms of ``Z`` and of its derivative (with their arguments as fast_align passes
them), its digamma series and a first iteration in which every lexical probability is equal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: a link: (source word index, target word index), both 0-based, as fast_align writes ``i-j``
Link = tuple[int, int]


@dataclass(frozen=True)
class AlignSettings:
    """fast_align's options and their defaults (``-I``, ``-q``, ``-T``, ``-a``)."""

    iterations: int = 5
    p_null: float = 0.08
    tension: float = 4.0
    alpha: float = 0.01


def _digamma(x: np.ndarray) -> np.ndarray:
    """The digamma function by fast_align's series: shift ``x`` to 7 or more, then the asymptotic expansion."""
    x = np.asarray(x, dtype=float).copy()
    result = np.zeros_like(x)
    for _ in range(7):
        low = x < 7
        result -= np.where(low, 1.0 / np.where(low, x, 1.0), 0.0)
        x = np.where(low, x + 1, x)
    x = x - 0.5
    inv2 = 1.0 / (x * x)
    inv4 = inv2 * inv2
    return result + np.log(x) + inv2 / 24 - 7 * inv4 / 960 + 31 * inv4 * inv2 / 8064 - 127 * inv4 * inv4 / 30720


def _feature(i, j, m, n):
    """The diagonal feature ``-|j/n - i/m|`` of target position ``i`` of ``m`` and source position ``j`` of ``n``."""
    return -np.abs(j / n - i / m)


def _halves(i, m, n, tension):
    """Where the diagonal splits source positions 1..n for target position ``i``: the first position above it and
    its weight, the last at or below it and its weight, how many lie above (as fast_align's unsigned arithmetic
    makes it: wrapped when the split lies past ``n``) and the ratio between neighbours."""
    split = i * n / m
    floor = np.floor(split)
    ceil = floor + 1
    above = np.where(n - floor < 0, n - floor + 2.0**32, n - floor)
    ratio = np.exp(-tension / n)
    top = np.exp(_feature(i, ceil, m, n) * tension)
    bottom = np.exp(_feature(i, floor, m, n) * tension)
    return ceil, floor, above, ratio, top, bottom


def _z(i, m, n, tension):
    """``Z``: the diagonal weights of source positions 1..n summed for target position ``i`` of ``m`` (two
    geometric series, one each side of the diagonal)."""
    _, floor, above, ratio, top, bottom = _halves(i, m, n, tension)
    upper = np.where(above > 0, top * (1 - ratio**above) / (1 - ratio), 0.0)
    lower = np.where(floor > 0, bottom * (1 - ratio**floor) / (1 - ratio), 0.0)
    return upper + lower


def _series(first, weight, ratio, step, count):
    """Sum over k < count of ``(first + k step) weight ratio**k`` (an arithmetico-geometric series)."""
    after = weight * ratio**count
    last = step * (count - 1) + first
    r1 = ratio - 1
    return (last * after - first * weight) / r1 - step * (after - weight * ratio) / (r1 * r1)


def _dlogz(i, m, n, tension):
    """d log Z / d tension at target position ``i``, with ``Z`` taken as fast_align takes it there (``m`` and ``n``
    swapped)."""
    z = _z(i, n, m, tension)
    ceil, floor, above, ratio, top, bottom = _halves(i, m, n, tension)
    step = -1.0 / n
    upper = np.where(above > 0, _series(_feature(i, ceil, m, n), top, ratio, step, above), 0.0)
    lower = np.where(floor > 0, _series(_feature(i, floor, m, n), bottom, ratio, step, floor), 0.0)
    return (upper + lower) / z


def _fit_tension(tension: float, observed: float, sizes: np.ndarray, counts: np.ndarray, tokens: int) -> float:
    """fast_align's 8 gradient steps moving the model's expected feature toward the ``observed`` one, the tension
    kept in [0.1, 14]. ``sizes`` holds each distinct (target length, source length), ``counts`` how many pairs."""
    m = np.repeat(sizes[:, 0], sizes[:, 0]).astype(float)
    n = np.repeat(sizes[:, 1], sizes[:, 0]).astype(float)
    j = np.concatenate([np.arange(1, size + 1) for size in sizes[:, 0]]).astype(float)
    weight = np.repeat(counts, sizes[:, 0]).astype(float)
    for _ in range(8):
        expected = float(np.sum(weight * _dlogz(j, m, n, tension))) / tokens
        tension = min(max(tension + (observed - expected) * 20.0, 0.1), 14.0)
    return tension


@dataclass
class _Cells:
    """One entry per (target word, source word or null) of every pair: the corpus laid out flat."""

    target: np.ndarray  # the running index of the target word (all pairs' target words in a row)
    j: np.ndarray  # its 0-based position in its sentence
    i: np.ndarray  # 0 for the null word, else the 1-based source position
    m: np.ndarray  # target length
    n: np.ndarray  # source length
    pair: np.ndarray  # index of the (source word, target word) pair in the lexical table
    pair_source: np.ndarray  # per lexical pair, its source word's id (0: the null word)
    owner: np.ndarray  # per target word, the index of its sentence pair
    sizes: np.ndarray  # per sentence pair aligned, (target length, source length)


def _cells(pairs: Sequence[tuple[Sequence[str], Sequence[str]]]) -> _Cells:
    """The flat layout of ``pairs``; a pair with an empty side is left out."""
    source_ids: dict[str, int] = {}
    target_ids: dict[str, int] = {}
    parts: list[list[np.ndarray]] = [[] for _ in range(6)]
    owner, sizes, offset = [], [], 0
    for k, (source, target) in enumerate(pairs):
        if not source or not target:
            continue
        n, m = len(source), len(target)
        e = np.array([0] + [source_ids.setdefault(w, len(source_ids) + 1) for w in source])
        f = np.array([target_ids.setdefault(w, len(target_ids)) for w in target])
        j, i = np.divmod(np.arange(m * (n + 1)), n + 1)
        key = e[i] * (1 << 32) + f[j]  # the (source word, target word) pair as one number
        for part, value in zip(parts, (offset + j, j, i, np.full(j.size, m), np.full(j.size, n), key)):
            part.append(value)
        owner += [k] * m
        sizes.append((m, n))
        offset += m
    target, j, i, m, n, key = (np.concatenate(p) if p else np.zeros(0, dtype=np.int64) for p in parts)
    keys, pair = np.unique(key, return_inverse=True)
    return _Cells(target, j, i, m.astype(float), n.astype(float), pair, keys >> 32, np.array(owner), np.array(sizes))


def align(
    pairs: Sequence[tuple[Sequence[str], Sequence[str]]], settings: AlignSettings = AlignSettings()
) -> list[list[Link]]:
    """The links of every (source words, target words) pair, fast_align ``-d -o -v`` trained on ``pairs`` alone
    (the source predicting the target: each target word has at most one source word). A pair with an empty side
    has no links and, as in fast_align, no weight in the fit."""
    cells = _cells(pairs)
    words = cells.owner.size
    links: list[list[Link]] = [[] for _ in pairs]
    if not words or settings.iterations < 1:
        return links
    sizes, counts = np.unique(cells.sizes, axis=0, return_counts=True)
    real = cells.i > 0
    lexical = np.full(cells.pair_source.size, 1e-9)  # fast_align's value before the first normalisation
    tension = settings.tension
    for iteration in range(settings.iterations):
        prior = np.exp(_feature(cells.j + 1.0, cells.i, cells.m, cells.n) * tension)
        prior = prior * (1 - settings.p_null) / _z(cells.j + 1.0, cells.m, cells.n, tension)
        prob = lexical[cells.pair] * np.where(real, prior, settings.p_null)
        if iteration == settings.iterations - 1:
            break
        posterior = prob / np.bincount(cells.target, prob, minlength=words)[cells.target]
        feature = np.where(real, _feature(cells.j, cells.i, cells.m, cells.n), 0.0)  # j 0-based, as fast_align
        observed = float(np.sum(feature * posterior)) / words
        if iteration > 0:
            tension = _fit_tension(tension, observed, sizes, counts, words)
        expected = np.bincount(cells.pair, posterior, minlength=lexical.size) + settings.alpha
        total = np.bincount(cells.pair_source, expected)[cells.pair_source]
        lexical = np.exp(_digamma(expected) - _digamma(total))
    for cell in _best(cells.target, prob, words):
        if cells.i[cell] > 0:
            links[cells.owner[cells.target[cell]]].append((int(cells.i[cell]) - 1, int(cells.j[cell])))
    return links


def _best(target: np.ndarray, prob: np.ndarray, words: int) -> np.ndarray:
    """Per target word, its cell of highest probability: the first of equals, so the null word (first) wins a
    tie, as in fast_align."""
    best = np.full(words, -np.inf)
    np.maximum.at(best, target, prob)
    top = np.flatnonzero(prob == best[target])
    return top[np.unique(target[top], return_index=True)[1]]
