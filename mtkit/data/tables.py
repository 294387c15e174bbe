"""The one reader of a user's tables: CSV, TSV and JSONL files, and the splits of a hub dataset without a
``translation`` column. Training, preprocessing, evaluation and the bias report all read them here, with one set
of column roles (:data:`ROLES`) and one reading of language tags (:class:`bias_eval.core.langtag.LanguageTag`).

A row's target language comes from its language columns (every one the table has, which must agree), else from
the run's one target language; a value that is not a language is one error naming the file, the line and the
value. A language asked for takes its rows and its variants' (``pt`` takes ``pt-BR`` and ``pt-PT``; ``pt-BR``
takes ``pt-BR`` only, not rows that say just ``pt``), each row labelled as the language was asked. Rows in a
language the run did not ask for are left out and counted (printed once); a language asked for that has no rows
is refused.
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

from bias_eval.core.langtag import FORMS, LanguageTag, pair_readings
from bias_eval.core.textio import decode_utf8, line_break, read_bytes, read_jsonl, read_lines
from bias_eval.mtgeneval.gendered import normalise_gender
from mtkit.errors import UserError
from mtkit.processes import is_main_process

#: Each role a column can play and the header names (any case) that give it, in order of preference.
ROLES: dict[str, tuple[str, ...]] = {
    "source": ("source", "src", "input_to_translate", "input"),
    "target": ("target", "tgt", "reference", "ref", "label", "translation"),
    "lang": ("lang", "language", "target_lang", "target_language", "tgt_lang", "language_pair", "lang_pair"),
    "gender": ("gender",),
    "pair_id": ("pair_id", "pair", "id"),
    "counterfactual": ("counterfactual", "counterfactual_reference", "contrastive_reference", "wrong_reference"),
    "words": ("words", "word", "gendered_words", "profession"),
}
#: The suffixes read as JSON lines, and as tab-separated values (anything else but .csv is refused).
JSON_SUFFIXES = (".jsonl", ".ndjson", ".json")
TSV_SUFFIXES = (".tsv", ".tab")
#: The language columns that hold a pair ``SOURCE-TARGET`` (the others hold the target language alone).
PAIR_COLUMNS = ("language_pair", "lang_pair")
PAIR_FORMS = "SOURCE-TARGET: en-de, en_de, eng_Latn-deu_Latn"

Records = list[tuple[int, dict[str, str]]]  # (line or row number, {column: value})


@dataclass
class Table:
    """A table's rows in the run's languages: one list per role (``gender``, ``ids``, ``counterfactual``, ``words``
    (the words that carry a row's gender, a profession for instance): ``None`` without the column), the line of each
    row, and the rows left out per language."""

    where: str
    lines: list[int]
    source: list[str]
    target: list[str]
    lang: list[str]
    gender: list[str] | None = None
    ids: list[str] | None = None
    counterfactual: list[str] | None = None
    words: list[str] | None = None
    left_out: dict[str, int] = field(default_factory=dict)


def text_value(value: object) -> str:
    """A cell as text: ``None`` empty, a string as it is, a number or a list as JSON."""
    return "" if value is None else value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def read_records(path: Path) -> Records:
    """``(line, row)`` of each row of a CSV, TSV (by its suffix) or JSONL file, ``line`` the file line the row starts
    on. CSV is read with its quoting (a quoted cell may hold a comma, a quote or a line end); TSV is not quoted: each
    line a row, cut at every tab, quotes kept as written; JSONL is one JSON object a line (:func:`read_jsonl`). A row
    with more or fewer fields than the header, malformed CSV or JSON, and a line that is not an object are one error
    each, naming the file and the line."""
    suffix = path.suffix.lower()
    if suffix in JSON_SUFFIXES:
        rows: Records = []
        for number, obj in read_jsonl(path):
            if not isinstance(obj, dict):
                raise UserError(f"{path}: line {number} is not a JSON object")
            rows.append((number, {str(k): text_value(v) for k, v in obj.items()}))
        return rows
    if suffix in TSV_SUFFIXES:
        lines = read_lines(path)  # missing, a folder, unreadable, empty, not UTF-8, overlong lines: one line each
        return _by_header([(n, line.split("\t")) for n, line in enumerate(lines, start=1) if line], path)
    if suffix != ".csv":
        read_bytes(path)  # missing, a folder, unreadable: said first
        raise UserError(f"{path}: expected a .csv, .tsv or .jsonl file")
    reader = csv.reader(io.StringIO(decode_utf8(read_bytes(path), path), newline=""))
    cells, end = [], 0
    try:
        for row in reader:
            start, end = end + 1, reader.line_num
            if row:  # a blank line is no row
                cells.append((start, row))
    except csv.Error as err:
        raise UserError(f"{path}: malformed CSV at line {reader.line_num} ({err})") from None
    return _by_header(cells, path)


def _by_header(rows: list[tuple[int, list[str]]], path: Path) -> Records:
    """The rows after the first (the header) as ``{column: cell}``; a row of another width, and two columns of one
    name (any case), are one error each."""
    if not rows:
        return []
    line, header = rows[0]
    seen: dict[str, str] = {}
    for name in header:
        if (key := name.strip().lower()) in seen:
            raise UserError(f"{path}: line {line}: columns {seen[key]!r} and {name!r} have one name: which to read?")
        seen[key] = name
    for line, cells in rows[1:]:
        if len(cells) != len(header):
            n = len(cells)
            raise UserError(f"{path}: line {line} has {n} field{'s' * (n != 1)}, its header line {len(header)}")
    return [(line, dict(zip(header, cells))) for line, cells in rows[1:]]


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
    """The role -> column map of a table (``explicit`` columns, ``--source_column``, as named; the rest found), and
    every language column it has."""
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
    return columns, [name for name in names if name.strip().lower() in ROLES["lang"]]


def cell_language(value: str, column: str, where: str, source_lang: str = "en") -> LanguageTag:
    """The target language a language column's cell gives (``where``: the file and line, for errors): a language
    column's tag, or the target of a pair column's ``SOURCE-TARGET`` (:data:`PAIR_COLUMNS`). A pair that reads two
    ways (``en-pt-BR``: en into pt-BR, or en-PT into Breton) is read with ``source_lang`` as its source, if one
    reading has it."""
    if column.strip().lower() not in PAIR_COLUMNS:
        tag = LanguageTag.read(value)
        if tag is None:
            hint = f"; for a language pair, name the column {PAIR_COLUMNS[0]}" if pair_readings(value) else ""
            raise UserError(f"{where}: {column} {value!r} is not a language code ({FORMS}){hint}")
        return tag
    readings = pair_readings(value)
    if len(readings) > 1:
        ours = [target for source, target in readings if source == LanguageTag.read(source_lang)]
        if len(ours) == 1:  # the run's source language decides
            return ours[0]
        said = " or ".join(f"{source} into {target}" for source, target in readings)
        raise UserError(f"{where}: {column} {value!r} reads two ways ({said}); give the target in a lang column")
    if not readings:
        raise UserError(f"{where}: {column} {value!r} is not a language pair ({PAIR_FORMS})")
    return readings[0][1]


def _asked_tags(asked: Sequence[str] | None, flag: str) -> list[tuple[str, LanguageTag]]:
    """``(code, tag)`` of each language asked; two that overlap (``pt`` and ``pt_BR``) are refused."""
    tags = [(code, LanguageTag.parse(code, flag)) for code in asked or ()]
    for i, (one, tag) in enumerate(tags):
        for other, its in tags[i + 1 :]:
            if tag.overlaps(its):
                both = LanguageTag(tag.base, tag.script or its.script, tag.region or its.region)
                raise UserError(f"{flag}: {one} and {other} overlap (a {both} row would be both); ask for each "
                                f"variant, or for {tag.base} alone")  # fmt: skip
    return tags


def _languages(
    records: Records,
    where: str,
    columns: list[str],
    asked: Sequence[str] | None,
    flag: str,
    unit: str,
    source_lang: str,
) -> tuple[list[str], list[str | None]]:
    """Each row's target language as its language columns give it (a tag, as BCP 47 writes it) and its label: the
    language asked that covers it, as asked (``None``: none does), or the tag itself when nothing is asked."""
    if not columns:
        if asked and len(asked) == 1:
            return [asked[0]] * len(records), [asked[0]] * len(records)
        names = "/".join(ROLES["lang"])
        why = f"{flag} names {len(asked)} languages" if asked else "the languages are not given (--target_langs)"
        raise UserError(f"{where}: no target-language column ({names}), and {why}: each row must say its language")
    wanted = _asked_tags(asked, flag)
    read: dict[tuple[str, str], LanguageTag] = {}  # each distinct cell read once
    found: list[str] = []
    labels: list[str | None] = []
    for number, row in records:
        tags = []
        for column in columns:
            value = row.get(column) or ""
            if (column, value) not in read:
                read[column, value] = cell_language(value, column, f"{where}: {unit} {number}", source_lang)
            tags.append(read[column, value])
        if len(set(tags)) > 1:
            said = ", ".join(f"{column} {row.get(column)!r}" for column in columns)
            raise UserError(f"{where}: {unit} {number}: the language columns disagree ({said})")
        found.append(str(tags[0]))
        labels.append(next((code for code, tag in wanted if tag.covers(tags[0])), None) if asked else found[-1])
    return found, labels


def _no_line_breaks(rows: Records, columns: dict[str, str], where: str, unit: str) -> None:
    """Refuse a text cell with a line break (:func:`bias_eval.core.textio.line_break`): one line naming its line and
    column."""
    names = [columns[role] for role in ("source", "target", "counterfactual") if role in columns]
    for number, row in rows:
        for name in names:
            kind = line_break(row.get(name) or "")
            if kind:
                raise UserError(f"{where}: {unit} {number}, column {name!r}: a line break ({kind}) in the cell; this "
                                "table's sentences are written one a line, so no cell may hold one")  # fmt: skip


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
    line_aligned: bool = False,
) -> Table:
    """The :class:`Table` of ``records`` (from ``where``, named in errors with each row's ``unit`` number) in the
    languages ``asked`` (``None``: every language of the table). With ``need_all``, each language asked must have
    rows; ``flag`` names where the languages were asked. With ``line_aligned`` (the rows will be written one sentence
    a line), a cell holding a line break is refused."""
    if not records:
        raise UserError(f"{where}: no rows")
    single = asked[0] if asked and len(asked) == 1 else None
    explicit = {"source": source_column, "target": target_column}
    columns, lang_columns = _columns(records, where, single, explicit, source_lang)
    found, labels = _languages(records, where, lang_columns, asked, flag, unit, source_lang)
    keep = [i for i, label in enumerate(labels) if label is not None]
    left_out = Counter(found[i] for i, label in enumerate(labels) if label is None)
    missing = [lang for lang in asked or () if lang not in set(labels)]
    if (missing and need_all) or not keep:
        which = ", ".join(missing or asked or ())
        raise UserError(f"{flag}: {which} has no rows in {where} (its rows are in: {_describe(Counter(found))})")
    if left_out and is_main_process():  # once, not per process
        print(f"{where}: left out {sum(left_out.values())} rows in languages not in {flag} "
              f"({_describe(left_out)}); kept {len(keep)} in {', '.join(sorted(set(asked or ())))}",
              file=sys.stderr)  # fmt: skip
    rows = [records[i] for i in keep]
    if line_aligned:
        _no_line_breaks(rows, columns, where, unit)

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
        lang=[str(labels[i]) for i in keep],
        gender=genders,
        ids=column("pair_id"),
        counterfactual=column("counterfactual"),
        words=column("words"),
        left_out=dict(sorted(left_out.items())),
    )


def read_table(path: Path, asked: Sequence[str] | None, **options) -> Table:
    """The :class:`Table` of a CSV, TSV or JSONL file (``options``: those of :func:`table_of`)."""
    return table_of(read_records(path), str(path), asked, **options)
