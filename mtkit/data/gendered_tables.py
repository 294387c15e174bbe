"""Gendered parallel data from CSV or JSONL tables (one row per sentence), including the
``ID,input_to_translate,label,gender,language_pair`` layout of gender-bias fine-tuning notebooks."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from mtkit.data.gendered import GENDERS, GenderedData, LanguageData, Side, normalise_gender, target_language
from mtkit.errors import UserError
from mtkit.textio import csv_records, decode_utf8, read_bytes

COLUMN_ALIASES: dict[str, tuple[str, ...]] = {
    "source": ("source", "src", "input_to_translate", "input", "en"),
    "reference": ("reference", "ref", "label", "target", "translation"),
    "gender": ("gender",),
    "language": ("language", "lang", "target_language", "tgt_lang", "language_pair", "lang_pair"),
    "counterfactual": (
        "counterfactual",
        "counterfactual_reference",
        "contrastive_reference",
        "wrong_reference",
    ),
}
REQUIRED_COLUMNS = ("source", "reference", "gender", "language")


def _resolve_columns(names: Iterable[str], path: Path) -> dict[str, str]:
    lowered = {name.strip().lower(): name for name in names if name is not None}
    resolved = {}
    for role, aliases in COLUMN_ALIASES.items():
        for alias in aliases:
            if alias in lowered:
                resolved[role] = lowered[alias]
                break
    missing = [role for role in REQUIRED_COLUMNS if role not in resolved]
    if missing:
        wanted = "; ".join(f"{role}: one of {'/'.join(COLUMN_ALIASES[role])}" for role in missing)
        raise UserError(f"{path}: missing column(s) -> {wanted}")
    return resolved


def _table_rows(path: Path) -> list[tuple[int, dict[str, str]]]:
    """(line number, row) pairs of a CSV (header line first) or JSONL file."""
    text = decode_utf8(read_bytes(path), path)
    if path.suffix.lower() in (".jsonl", ".ndjson", ".json"):
        rows = []
        for number, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as err:
                raise UserError(f"{path}: line {number}: invalid JSON ({err.msg})") from None
            if not isinstance(obj, dict):
                raise UserError(f"{path}: line {number}: expected a JSON object")
            rows.append((number, {str(k): "" if v is None else str(v) for k, v in obj.items()}))
        return rows
    return csv_records(csv.DictReader(io.StringIO(text, newline="")), path)


def load_table(path: Path, langs: Sequence[str] | None = None) -> GenderedData:
    """Load gendered parallel data from CSV or JSONL (one row per sentence).

    Columns: source, reference, gender (f/m or feminine/masculine), target language (``es`` or a
    ``en_es`` language pair), optionally the counterfactual (opposite-gender) reference. The
    ``ID,input_to_translate,label,gender,language_pair`` layout of gender-bias fine-tuning notebooks is
    understood. Rows are not paired across genders, so pair accuracy is not defined for such data.
    """
    rows = _table_rows(path)
    if not rows:
        raise UserError(f"{path}: no data rows")
    columns = _resolve_columns(rows[0][1].keys(), path)
    grouped: dict[str, dict[str, list[dict[str, str]]]] = {}
    for number, row in rows:
        values = {}
        for role, column in columns.items():
            value = row.get(column)
            if value is None:
                if role == "counterfactual":
                    continue
                raise UserError(f"{path}: line {number}: no value for column {column!r}")
            values[role] = value
        gender = normalise_gender(values["gender"], f"{path}: line {number}")
        lang = target_language(values["language"])
        if not lang:
            raise UserError(f"{path}: line {number}: empty language value")
        grouped.setdefault(lang, {g: [] for g in GENDERS})[gender].append(values)
    present = sorted(grouped)
    wanted = sorted(set(langs)) if langs else present
    for lang in wanted:
        if lang not in grouped:
            raise UserError(f"--target_langs: language {lang!r} not in {path} (present: {' '.join(present)})")
    languages = {}
    for lang in wanted:
        sides = {}
        for gender in GENDERS:
            items = grouped[lang][gender]
            if not items:
                raise UserError(f"{path}: language {lang} has no {gender} rows")
            has_cf = all("counterfactual" in v for v in items)
            sides[gender] = Side(
                sources=[v["source"] for v in items],
                references=[v["reference"] for v in items],
                counterfactuals=[v["counterfactual"] for v in items] if has_cf else None,
                keywords=None,
                origin=f"{path} ({lang}, {gender})",
            )
        languages[lang] = LanguageData(lang, sides["feminine"], sides["masculine"], paired=False)
    return GenderedData(name=str(path), split=None, languages=languages)
