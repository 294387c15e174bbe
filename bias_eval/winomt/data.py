"""WinoMT's data (Stanovsky et al., ACL 2019): the benchmark's English sentences with the gender and position of one
profession each (``en.txt``, and its pro- and anti-stereotypical halves ``en_pro.txt``, ``en_anti.txt``), and
translations of them, read as the benchmark's ``source ||| translation`` lines or one translation per line."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bias_eval.errors import UserError
from bias_eval.textio import read_lines

#: WinoMT's gold genders, as its files spell them
GOLD = ("male", "female", "neutral")
#: the benchmark's separator between a source and its translation
BITEXT_SEP = " ||| "
#: the files of the benchmark's folder that are read
FILES = ("en.txt", "en_pro.txt", "en_anti.txt")


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
    """The benchmark: its items in file order, and the sentences of its pro- and anti-stereotypical halves."""

    folder: Path
    items: tuple[Item, ...]
    pro: frozenset[str]
    anti: frozenset[str]

    def by_sentence(self) -> dict[str, Item]:
        """Each sentence's item (a sentence that occurs twice has the same item both times)."""
        return {item.sentence: item for item in self.items}


def _items(path: Path) -> list[Item]:
    items = []
    for number, line in enumerate(read_lines(path), start=1):
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
        sentences = frozenset(item.sentence for item in _items(folder / name))
        if not sentences <= known:
            raise UserError(f"{folder / name}: {len(sentences - known)} sentences that en.txt lacks")
        halves.append(sentences)
    return WinoMT(folder, tuple(items), halves[0], halves[1])


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
    moved += abs(len(sources) - len(data.items))
    untranslated = len(known.keys() - set(sources))
    return Translations(tuple(items), tuple(sources), tuple(targets), min(moved, len(sources)), untranslated)


def read_translations(path: Path, data: WinoMT) -> Translations:
    """A translation file: the benchmark's ``source ||| translation`` lines (each scored against the item of its
    source, as the benchmark matches them), or one translation per line of ``en.txt``, in its order."""
    lines = read_lines(path)
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
            f"{path}: {len(lines)} lines, but {data.folder / 'en.txt'} has {len(data.items)} sentences (one "
            "translation per line, in its order, or the benchmark's 'source ||| translation' lines)"
        )
    return Translations(data.items, tuple(i.sentence for i in data.items), tuple(line.strip() for line in lines))
