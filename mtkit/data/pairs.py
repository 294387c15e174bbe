"""Counterfactual pairs of gendered rows, found one way for training, its held-out splits, the bias report and the
verdict (:func:`find_pairs`), the words that carry a row's gender (:func:`gendered_words`) and the words some texts
hold (:class:`TextWords`), in each language as its script has words: whitespace words, or, in a language written
without spaces (Chinese, Japanese, Thai, ...), character spans found inside the text.

Rows sharing an id and a target language are one unit, ``pair_id`` ``<lang>:<id>``, which a split never parts. A
unit is a counterfactual pair when it is exactly one feminine and one masculine row; each of them carries the other's
reference as its ``counterfactual`` when no column gives one. Any other id (one row, two of one gender, three rows)
is odd: in no pair, counted and named (:meth:`Pairs.note`). A row without an id is a unit of its own,
``<lang>:row<i>``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from bias_eval.mtgeneval.gendered import GENDERS, LanguageData, Side
from bias_eval.mtgeneval.metrics import accuracy_text, accuracy_words, differing_words, spaced
from mtkit.data.tables import Table

#: how many odd ids a note names
NAMED = 5


@dataclass(frozen=True)
class Pairs:
    """The units of some gendered rows and which of them are pairs."""

    keys: list[str]  # each row's unit (its ``pair_id``)
    complete: dict[str, tuple[int, int]]  # unit -> (feminine row, masculine row), in order of first row
    odd: dict[str, list[int]]  # unit of an id that is not one feminine and one masculine row -> its rows
    alone: list[int]  # rows without an id

    def note(self, where: str, done: str) -> str | None:
        """One line counting and naming (the first :data:`NAMED`) odd ids, and rows without an id where others have
        one, and saying what is ``done`` with them; ``None`` when there are none."""
        loose = len(self.alone) if len(self.alone) < len(self.keys) else 0
        if not self.odd and not loose:
            return None
        said = []
        if self.odd:
            named = ", ".join(list(self.odd)[:NAMED]) + (", ..." if len(self.odd) > NAMED else "")
            rows = sum(len(idx) for idx in self.odd.values())
            said.append(f"{len(self.odd)} ID(s) not exactly one feminine and one masculine row ({rows} rows: {named})")
        if loose:
            said.append(f"{loose} row(s) without an ID")
        return f"note: {where}: {' and '.join(said)}: {done}"


def find_pairs(langs: Sequence[str], genders: Sequence[str], ids: Sequence[str]) -> Pairs:
    """The :class:`Pairs` of rows given by their target languages, genders and ids (``""``: none)."""
    members: dict[str, list[int]] = defaultdict(list)
    keys = []
    for i, (lang, row_id) in enumerate(zip(langs, ids)):
        keys.append(f"{lang}:{row_id}" if row_id else f"{lang}:row{i}")
        if row_id:
            members[keys[i]].append(i)
    complete, odd = {}, {}
    for key, idx in members.items():
        if sorted(genders[i] for i in idx) == list(GENDERS):
            complete[key] = (idx[0], idx[1]) if genders[idx[0]] == GENDERS[0] else (idx[1], idx[0])
        else:
            odd[key] = idx
    return Pairs(keys, complete, odd, [i for i, row_id in enumerate(ids) if not row_id])


def gendered_words(row: Mapping[str, str]) -> frozenset[str]:
    """The words that carry a row's gender, as the accuracy reads words (lowercased, punctuation dropped): those the
    data names (``words``: MT-GenEval's marked words, a table's word column), else the words of its reference that
    its counterfactual lacks (*la ingeniera* against *el ingeniero*; in a language written without spaces, the
    character spans in which the two differ: :func:`bias_eval.mtgeneval.metrics.differing_words`)."""
    if row.get("words"):
        return frozenset(accuracy_words(row["words"]))
    return frozenset(differing_words(row["target"], row.get("counterfactual") or "", row.get("lang") or "en")[0])


@dataclass(frozen=True)
class TextWords:
    """The words some texts hold, as the accuracy reads them: the whitespace words of those in a language written
    with spaces, and the whole (normalised) text of those written without, in which a word is found as a span."""

    words: frozenset[str] = frozenset()
    unspaced: tuple[str, ...] = ()

    @classmethod
    def of(cls, rows: Iterable[Mapping[str, str]], key: str = "target") -> TextWords:
        """The words of each row's ``key`` text, in the row's language (``lang``)."""
        words: set[str] = set()
        whole: list[str] = []
        for row in rows:
            if spaced(row.get("lang") or "en"):
                words |= accuracy_words(row[key])
            else:
                whole.append(accuracy_text(row[key]))
        return cls(frozenset(words), tuple(whole))

    def __contains__(self, word: object) -> bool:
        return word in self.words or any(isinstance(word, str) and word in text for text in self.unspaced)

    def lacks(self, words: Iterable[str]) -> set[str]:
        """Those of ``words`` these texts do not hold."""
        return {w for w in words if w not in self}


def unit_words(rows: Sequence[Mapping[str, str]]) -> dict[str, tuple[frozenset[str], TextWords]]:
    """Each unit's (``pair_id``) gendered words and the words of its references, over its rows (a pair: both genders'
    forms)."""
    by_unit: dict[str, list[Mapping[str, str]]] = defaultdict(list)
    for row in rows:
        by_unit[row["pair_id"]].append(row)
    return {
        unit: (frozenset().union(*(gendered_words(r) for r in group)), TextWords.of(group))
        for unit, group in by_unit.items()
    }


def table_pairs(table: Table) -> tuple[Pairs, list[str]]:
    """The :class:`Pairs` of a gendered :class:`~mtkit.data.tables.Table` (rows without an id column pair by nothing
    but their own) and each row's counterfactual reference (its column's, else its partner's, else ``""``)."""
    pairs = find_pairs(table.lang, table.gender, table.ids or [""] * len(table.lang))
    out = [value or "" for value in table.counterfactual or [""] * len(table.lang)]
    for f, m in pairs.complete.values():
        out[f], out[m] = out[f] or table.target[m], out[m] or table.target[f]
    return pairs, out


def language_data(
    lang: str, rows: Sequence[Mapping[str, str]], origin: str
) -> tuple[LanguageData, dict[str, list[int]]]:
    """One language's gendered rows (``source``, ``target``, ``gender``, ``pair_id``, ``counterfactual``) as
    ``bias_eval`` data, and which rows make each gender's side, in order.

    With a complete pair (:func:`find_pairs`), the sides are paired: line ``i`` of each is one pair, in the order of
    the feminine rows, and rows in no pair are left out. Otherwise each side holds its gender's rows in their order.
    Counterfactuals are kept when every row of a side has one."""
    genders = [row["gender"] for row in rows]
    complete = sorted(
        find_pairs([lang] * len(rows), genders, [row.get("pair_id") or "" for row in rows]).complete.values()
    )
    if complete:
        order = {g: [pair[k] for pair in complete] for k, g in enumerate(GENDERS)}
    else:
        order = {g: [i for i, gender in enumerate(genders) if gender == g] for g in GENDERS}

    def side(g: str) -> Side:
        idx = order[g]
        counterfactuals = [rows[i].get("counterfactual") or "" for i in idx]
        return Side(
            sources=[rows[i]["source"] for i in idx],
            references=[rows[i]["target"] for i in idx],
            counterfactuals=counterfactuals if all(counterfactuals) else None,
            keywords=None,
            origin=f"{origin} ({lang}, {g})",
        )

    paired = bool(complete)
    return LanguageData(lang, feminine=side("feminine"), masculine=side("masculine"), paired=paired), order
