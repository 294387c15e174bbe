"""WinoMT's data (Stanovsky et al., ACL 2019): the benchmark's English sentences with the gender and position of one
profession each (``en.txt``, and its pro- and anti-stereotypical halves ``en_pro.txt``, ``en_anti.txt``), and
translations of them, read as the benchmark's ``source ||| translation`` lines or one translation per line; a subset of
the benchmark drawn in its proportions of pro-stereotypical, anti-stereotypical and neutral sentences. Every line is
read in :mod:`bias_eval.core.textio`'s one normal form (NFC), so that text compares as text whatever form a file is
in."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

import numpy as np

from bias_eval.core.errors import UserError
from bias_eval.core.textio import read_sentences

#: WinoMT's gold genders, as its files spell them
GOLD = ("male", "female", "neutral")
#: the benchmark's separator between a source and its translation
BITEXT_SEP = " ||| "
#: the files of the benchmark's folder that are read
FILES = ("en.txt", "en_pro.txt", "en_anti.txt")
#: the benchmark's strata: its pro- and anti-stereotypical halves and the other (gold neutral) sentences
STRATA = ("pro", "anti", "neutral")


@dataclass(frozen=True)
class Item:
    """One line of ``en.txt``: the gold gender of the profession, its word's position in the sentence (0-based, the
    sentence split on spaces), the sentence and the profession."""

    gold: str
    index: int
    sentence: str
    profession: str


@dataclass(frozen=True)
class WinoMT:
    """The benchmark: its items in file order and those of its pro- and anti-stereotypical files (as the benchmark
    scores them, each file in a run of its own); ``sample``: how a subset was drawn (``None``: the whole benchmark)."""

    folder: Path
    items: tuple[Item, ...]
    pro_items: tuple[Item, ...]
    anti_items: tuple[Item, ...]
    sample: dict[str, int] | None = None

    @cached_property
    def pro(self) -> frozenset[str]:
        """The sentences of the pro-stereotypical file."""
        return frozenset(item.sentence for item in self.pro_items)

    @cached_property
    def anti(self) -> frozenset[str]:
        """The sentences of the anti-stereotypical file."""
        return frozenset(item.sentence for item in self.anti_items)

    def by_sentence(self) -> dict[str, Item]:
        """Each sentence's item (a sentence that occurs twice has the same item both times)."""
        return {item.sentence: item for item in self.items}

    def stratum(self, item: Item) -> str:
        """Which of :data:`STRATA` ``item`` belongs to."""
        return "pro" if item.sentence in self.pro else "anti" if item.sentence in self.anti else "neutral"


def _items(path: Path) -> list[Item]:
    items = []
    for number, line in enumerate(read_sentences(path), start=1):
        fields = line.split("\t")
        if len(fields) != 4:
            raise UserError(f"{path}: line {number} has {len(fields)} tab-separated fields, expected 4")
        gold, index, sentence, profession = fields
        if gold not in GOLD or not index.isdigit():
            raise UserError(f"{path}: line {number}: expected a gender ({', '.join(GOLD)}) and a word index")
        if int(index) >= len(sentence.split(" ")):
            raise UserError(f"{path}: line {number}: word index {index} is past the end of the sentence")
        items.append(Item(gold, int(index), sentence, profession))
    return items


def load_winomt(folder: Path) -> WinoMT:
    """The benchmark in ``folder`` (``en.txt``, ``en_pro.txt``, ``en_anti.txt``), each line checked."""
    if not folder.is_dir():
        raise UserError(f"--winomt_dir {folder}: not a folder (WinoMT's data: {', '.join(FILES)})")
    items = _items(folder / "en.txt")
    known = {item.sentence for item in items}
    halves = []
    for name in FILES[1:]:
        half = _items(folder / name)
        stray = next((n for n, item in enumerate(half, start=1) if item.sentence not in known), None)
        if stray is not None:
            raise UserError(f"{folder / name}: line {stray}: a sentence that {folder / 'en.txt'} lacks")
        halves.append(tuple(half))
    return WinoMT(folder, tuple(items), halves[0], halves[1])


def subset(data: WinoMT, size: int | None, seed: int) -> WinoMT:
    """``size`` sentences of the benchmark drawn without replacement from each of :data:`STRATA` in the benchmark's
    proportions (largest remainders), with numpy's Generator seeded with ``seed``, kept in file order; the whole
    benchmark when ``size`` is ``None`` or not below its size."""
    if size is None or size >= len(data.items):
        return data
    strata = {name: [k for k, item in enumerate(data.items) if data.stratum(item) == name] for name in STRATA}
    quotas = {name: size * len(rows) / len(data.items) for name, rows in strata.items()}
    counts = {name: int(q) for name, q in quotas.items()}
    for name in sorted(STRATA, key=lambda n: counts[n] - quotas[n])[: size - sum(counts.values())]:
        counts[name] += 1
    rng = np.random.default_rng(seed)
    chosen = sorted(int(k) for n in STRATA for k in rng.choice(strata[n], counts[n], replace=False))
    return replace(data, items=tuple(data.items[k] for k in chosen), sample={"seed": seed, **counts})


@dataclass(frozen=True)
class Translations:
    """Translations to score: per line, the benchmark item it translates, its source and its translation."""

    items: tuple[Item, ...]
    sources: tuple[str, ...]
    targets: tuple[str, ...]
    moved: int = 0  # lines whose source is not en.txt's sentence of the same line number
    untranslated: int = 0  # items of en.txt that no line translates


def pair_translations(data: WinoMT, sources: Sequence[str], targets: Sequence[str], name: str) -> Translations:
    """Each (source, translation) paired with the item of its source sentence; a source that is not in the benchmark
    is an error naming its line (``name``: the file)."""
    known = data.by_sentence()
    items = []
    for number, source in enumerate(sources, start=1):
        if source not in known:
            raise UserError(f"{name}: line {number}: its source is not a sentence of {data.folder / 'en.txt'}")
        items.append(known[source])
    moved = sum(source != item.sentence for source, item in zip(sources, data.items))
    translated = set(sources)
    untranslated = sum(item.sentence not in translated for item in data.items)
    return Translations(tuple(items), tuple(sources), tuple(targets), moved, untranslated)


def read_translations(path: Path, data: WinoMT) -> Translations:
    """A translation file: the benchmark's ``source ||| translation`` lines (each scored against the item of its
    source, as the benchmark matches them), or one translation per line of ``en.txt``, in its order."""
    lines = read_sentences(path)
    split = [line.split(BITEXT_SEP) for line in lines]
    bitext = sum(len(parts) > 1 for parts in split)
    if bitext and bitext < len(lines):
        first = next(n for n, parts in enumerate(split, start=1) if (len(parts) > 1) != (bitext > len(lines) / 2))
        raise UserError(f"{path}: line {first}: some lines are 'source ||| translation' and some are not")
    if bitext:
        bad = next((n for n, parts in enumerate(split, start=1) if len(parts) != 2), None)
        if bad is not None:
            raise UserError(f"{path}: line {bad} has more than one '{BITEXT_SEP.strip()}'")
        return pair_translations(data, [p[0].strip() for p in split], [p[1].strip() for p in split], str(path))
    if len(lines) != len(data.items):
        raise UserError(
            f"{path}: line {min(len(lines), len(data.items)) + 1}: {len(lines)} lines, but the benchmark has "
            f"{len(data.items)} sentences (one translation per line of {data.folder / 'en.txt'}, in its order, or "
            "the benchmark's 'source ||| translation' lines)"
        )
    return Translations(data.items, tuple(i.sentence for i in data.items), tuple(line.strip() for line in lines))
