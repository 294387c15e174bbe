"""The one reader of a user's tables: CSV, TSV and JSONL files, and the splits of a hub dataset without a
``translation`` column. Training, preprocessing, evaluation and the bias report all read them here, with one set
of column roles (:data:`ROLES`) and one reading of the target language (:func:`mtkit.data.languages.table_language`).

A row's target language comes from its language column, else from the run's one target language; a value that is
not a language is one error naming the file, the line and the value. Rows in a language the run did not ask for
are left out and counted (printed once); a language asked for that has no rows is refused.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mtkit.data.gendered import normalise_gender
from mtkit.data.languages import TABLE_LANGUAGE_FORMS, table_language
from mtkit.errors import UserError
from mtkit.processes import is_main_process
from mtkit.textio import csv_records, read_lines

#: Each role a column can play and the header names (any case) that give it, in order of preference.
ROLES: dict[str, tuple[str, ...]] = {
    "source": ("source", "src", "input_to_translate", "input"),
    "target": ("target", "tgt", "reference", "ref", "label", "translation"),
    "lang": ("lang", "language", "target_lang", "target_language", "tgt_lang", "language_pair", "lang_pair"),
    "gender": ("gender",),
    "pair_id": ("pair_id", "pair", "id"),
    "counterfactual": ("counterfactual", "counterfactual_reference", "contrastive_reference", "wrong_reference"),
}
#: The suffixes read as JSON lines, and as tab-separated values (anything else but .csv is refused).
JSON_SUFFIXES = (".jsonl", ".ndjson", ".json")
TSV_SUFFIXES = (".tsv", ".tab")

Records = list[tuple[int, dict[str, str]]]  # (line or row number, {column: value})


@dataclass
class Table:
    """A table's rows in the run's languages: one list per role (``gender``, ``ids``, ``counterfactual``: ``None``
    without the column), the line of each row, and the rows left out per language."""

    where: str
    lines: list[int]
    source: list[str]
    target: list[str]
    lang: list[str]
    gender: list[str] | None = None
    ids: list[str] | None = None
    counterfactual: list[str] | None = None
    left_out: dict[str, int] = field(default_factory=dict)


def text_value(value: object) -> str:
    """A cell as text: ``None`` empty, a string as it is, a number or a list as JSON."""
    return "" if value is None else value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def read_records(path: Path) -> Records:
    """``(line, row)`` of each row of a CSV, TSV (by its suffix) or JSONL file; ragged rows, bad JSON and lines that
    are not objects are one error each."""
    lines = read_lines(path)  # missing, a folder, unreadable, empty, not UTF-8, overlong lines: one line each
    suffix = path.suffix.lower()
    if suffix in JSON_SUFFIXES:
        rows: Records = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as err:
                raise UserError(f"{path}: line {number} is not valid JSON ({err.msg})") from None
            if not isinstance(obj, dict):
                raise UserError(f"{path}: line {number} is not a JSON object")
            rows.append((number, {str(k): text_value(v) for k, v in obj.items()}))
        return rows
    if suffix != ".csv" and suffix not in TSV_SUFFIXES:
        raise UserError(f"{path}: expected a .csv, .tsv or .jsonl file")
    delimiter = "\t" if suffix in TSV_SUFFIXES else ","
    reader = csv.DictReader(io.StringIO("\n".join(lines) + "\n", newline=""), delimiter=delimiter)
    return csv_records(reader, path)


def find_columns(names: Iterable[str], extra: dict[str, str | None] | None = None) -> dict[str, str]:
    """``{role: column}`` for the roles whose names (:data:`ROLES`, any case, then ``extra``'s) are among ``names``."""
    lowered = {name.strip().lower(): name for name in names if name is not None}
    found = {}
    for role, aliases in ROLES.items():
        more = (extra or {}).get(role)
        for alias in (*aliases, *([more.lower()] if more else [])):
            if alias in lowered:
                found[role] = lowered[alias]
                break
    return found


def _columns(records: Records, where: str, single: str | None, explicit: dict[str, str | None], source_lang: str):
    """The role -> column map of a table: ``explicit`` columns (``--source_column``) as named, the rest found."""
    names = list(records[0][1])
    columns = find_columns(names, {"source": source_lang, "target": single})
    for role, name in explicit.items():
        if name:
            if name not in names:
                raise UserError(f"{where}: no column '{name}' (--{role}_column); columns are {sorted(names)}")
            columns[role] = name
    missing = [role for role in ("source", "target") if role not in columns]
    if missing:
        wanted = "; ".join(f"{role}: one of {'/'.join(ROLES[role])}" for role in missing)
        raise UserError(f"{where}: no source/target columns ({wanted}); set --source_column and --target_column")
    return columns


def _languages(
    records: Records, where: str, column: str | None, asked: Sequence[str] | None, flag: str, unit: str
) -> list[str]:
    """Each row's target language, spelled as ``asked`` spells it (every language read when nothing is asked)."""
    if column is None:
        if asked and len(asked) == 1:
            return [asked[0]] * len(records)
        names = "/".join(ROLES["lang"])
        why = f"{flag} names {len(asked)} languages" if asked else "the languages are not given (--target_langs)"
        raise UserError(f"{where}: no target-language column ({names}), and {why}: each row must say its language")
    spelled = {table_language(code) or code: code for code in asked or ()}
    langs = []
    for number, row in records:
        value = row.get(column) or ""
        code = table_language(value)
        if code is None:
            raise UserError(
                f"{where}: {unit} {number}: target language {value!r} is not a language code ({TABLE_LANGUAGE_FORMS})"
            )
        langs.append(spelled.get(code, code))
    return langs


def _describe(counts: Counter) -> str:
    return ", ".join(f"{lang} {n}" for lang, n in sorted(counts.items()))


def table_of(
    records: Records,
    where: str,
    asked: Sequence[str] | None,
    *,
    flag: str = "--target_langs",
    unit: str = "line",
    source_column: str | None = None,
    target_column: str | None = None,
    source_lang: str = "en",
    need_all: bool = True,
) -> Table:
    """The :class:`Table` of ``records`` (from ``where``, named in errors with each row's ``unit`` number) in the
    languages ``asked`` (``None``: every language of the table). With ``need_all``, each language asked must have
    rows; ``flag`` names where the languages were asked."""
    if not records:
        raise UserError(f"{where}: no rows")
    single = asked[0] if asked and len(asked) == 1 else None
    explicit = {"source": source_column, "target": target_column}
    columns = _columns(records, where, single, explicit, source_lang)
    langs = _languages(records, where, columns.get("lang"), asked, flag, unit)
    present = Counter(langs)
    keep = [i for i, lang in enumerate(langs) if not asked or lang in asked]
    left_out = Counter(lang for lang in langs if asked and lang not in asked)
    missing = [lang for lang in asked or () if lang not in present]
    if (missing and need_all) or not keep:
        which = ", ".join(missing or asked or ())
        raise UserError(f"{flag}: {which} has no rows in {where} (its rows are in: {_describe(present)})")
    if left_out and is_main_process():  # once, not per process
        print(f"{where}: left out {sum(left_out.values())} rows in languages not in {flag} "
              f"({_describe(left_out)}); kept {len(keep)} in {', '.join(sorted(set(asked or ())))}",
              file=sys.stderr)  # fmt: skip
    rows = [records[i] for i in keep]

    def column(role: str) -> list[str] | None:
        name = columns.get(role)
        return None if name is None else [row.get(name) or "" for _, row in rows]

    genders = column("gender")
    if genders is not None:
        genders = [normalise_gender(g, f"{where}: {unit} {n}") for g, (n, _) in zip(genders, rows)]
    return Table(
        where=where,
        lines=[n for n, _ in rows],
        source=column("source") or [],
        target=column("target") or [],
        lang=[langs[i] for i in keep],
        gender=genders,
        ids=column("pair_id"),
        counterfactual=column("counterfactual"),
        left_out=dict(sorted(left_out.items())),
    )


def read_table(path: Path, asked: Sequence[str] | None, **options) -> Table:
    """The :class:`Table` of a CSV, TSV or JSONL file (``options``: those of :func:`table_of`)."""
    return table_of(read_records(path), str(path), asked, **options)
