"""Shared types, constants and small helpers of the gendered test sets.

Every loader (:mod:`mtkit.data.mtgeneval` for MT-GenEval's repository layout, :mod:`mtkit.data.mtgeneval_hub`
for its hub copy, :mod:`mtkit.data.gendered_tables` for CSV/TSV/JSONL tables) returns a :class:`GenderedData`: per
target language, the feminine and the masculine sentences (sources and references, in dataset order) and, for
MT-GenEval, the counterfactual (opposite-gender) reference of every sentence, which the gender-accuracy metric
needs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bias_eval.core.errors import UserError

GENDERS: tuple[str, str] = ("feminine", "masculine")
GENDER_VALUES = {
    "f": "feminine",
    "feminine": "feminine",
    "female": "feminine",
    "m": "masculine",
    "masculine": "masculine",
    "male": "masculine",
}
SPLITS = ("dev", "test")  # MT-GenEval's splits (repository layout and hub copy)
SEP = "<sep>"

#: the marks of an annotated MT-GenEval line around its gendered words: ``<F>sie</F>``, ``<M>er</M>``
GENDER_MARK = re.compile(r"<([FM])>(.*?)</\1>")


@dataclass(frozen=True)
class Side:
    """The sentences of one gender for one target language, in dataset order."""

    sources: list[str]
    references: list[str]
    counterfactuals: list[str] | None  # opposite-gender reference of each sentence, when known
    keywords: list[list[str]] | None  # annotated gendered words of each reference, when known
    origin: str  # where the references came from, for messages


@dataclass(frozen=True)
class ContextSet:
    """MT-GenEval contextual subset: sources with preceding context, original and flipped references."""

    sources: list[str]  # "<context> <sep> <sentence>" lines of the 2to1 file
    original: list[str]
    flipped: list[str]
    origin: str


@dataclass(frozen=True)
class LanguageData:
    """Everything about one target language."""

    lang: str
    feminine: Side
    masculine: Side
    paired: bool  # line i of the feminine side is the counterfactual of line i of the masculine side
    context: ContextSet | None = None

    def side(self, gender: str) -> Side:
        """The :class:`Side` of ``gender`` ("feminine" or "masculine")."""
        return self.feminine if gender == "feminine" else self.masculine


@dataclass(frozen=True)
class GenderedData:
    """A gendered test set: one :class:`LanguageData` per target language (sorted by code)."""

    name: str
    split: str | None
    languages: dict[str, LanguageData]
    demo: bool = False  # the gender pairs of the toolkit's synthetic demo corpus (MT-GenEval's layout, not its data)


def annotated_keywords(line: str) -> list[str]:
    """The gendered words marked ``<F>..</F>`` or ``<M>..</M>`` in an annotated MT-GenEval line."""
    return [match.group(2) for match in GENDER_MARK.finditer(line)]


def normalise_gender(value: str, where: str) -> str:
    """Map f/m/feminine/masculine (any case) to "feminine"/"masculine"; anything else is an error."""
    gender = GENDER_VALUES.get(value.strip().lower())
    if gender is None:
        raise UserError(f"{where}: gender {value!r} is not feminine/masculine (or f/m)")
    return gender
