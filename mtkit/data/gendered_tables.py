"""Gendered parallel data from a CSV, TSV or JSONL table (one row per sentence), read by :mod:`mtkit.data.tables`
as training reads it, and paired by :mod:`mtkit.data.pairs` as training's validation pairs it."""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from bias_eval.core.textio import normal_text
from bias_eval.mtgeneval.gendered import GENDERS, GenderedData, LanguageData
from mtkit.data.pairs import language_data, table_pairs
from mtkit.data.tables import ROLES, read_table
from mtkit.errors import UserError


def load_table(path: Path, langs: Sequence[str] | None = None) -> GenderedData:
    """The gendered rows of ``path`` in ``langs`` (default: every language of the table).

    Columns (any of each role's names, :data:`mtkit.data.tables.ROLES`): source, target (or reference), gender
    (f/m or feminine/masculine), target language (``es``, ``en_es``, ``spa_Latn``, ...; not needed with one
    language in ``langs``), and optionally an id and the counterfactual (opposite-gender) reference. A feminine and
    a masculine row sharing an id and a language are a counterfactual pair, each the other's counterfactual when no
    column gives one; a language with pairs is scored on its pairs alone (pair accuracy, worst examples), a language
    without one on all its rows. Its text is read in one Unicode normal form
    (:func:`bias_eval.core.textio.normal_text`). The rows in no pair of a language with pairs are left out, named on
    stderr."""
    table = read_table(path, langs, line_aligned=True)  # hypotheses are read one a line
    if table.gender is None:
        raise UserError(f"{path}: no gender column ({'/'.join(ROLES['gender'])})")
    pairs, counterfactuals = table_pairs(table)
    rows: dict[str, list[dict[str, str]]] = defaultdict(list)
    for i, lang in enumerate(table.lang):
        rows[lang].append({
            "source": normal_text(table.source[i]), "target": normal_text(table.target[i]), "gender": table.gender[i],
            "pair_id": pairs.keys[i], "counterfactual": normal_text(counterfactuals[i]),
        })  # fmt: skip
    languages: dict[str, LanguageData] = {}
    for lang in sorted(rows):
        data, _ = language_data(lang, rows[lang], str(path))
        for gender in GENDERS:
            if not data.side(gender).sources:
                raise UserError(f"{path}: language {lang} has no {gender} rows")
        languages[lang] = data
    unpaired = [lang for lang, data in languages.items() if not data.paired]
    done = "left out where their language has pairs (it is scored on its pairs alone)"
    done += f"; {', '.join(unpaired)}: no complete pair, scored unpaired on every row" if unpaired else ""
    note = pairs.note(str(path), done)
    if note:
        print(note, file=sys.stderr)
    return GenderedData(name=str(path), split=None, languages=languages)
