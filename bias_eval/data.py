"""Loaders for gendered test sets: MT-GenEval (original layout or hub copy) and CSV/JSONL tables.

Every loader returns a :class:`GenderedData`: per target language, the feminine and the masculine
sentences (sources and references, in dataset order) and, for MT-GenEval, the counterfactual
(opposite-gender) reference of every sentence, which the gender-accuracy metric needs.

MT-GenEval references are the *plain* files ``sentences/<split>/geneval-sentences-<gender>-...``,
read verbatim: the official ``accuracy_metric.py`` of amazon-science/machine-translation-gender-eval
uses exactly those files as correct and counterfactual references. The square brackets found in a few
lines (``[citation needed]``-style Wikipedia remarks) are part of the text in both the English source
and the reference, so they are kept. The ``annotated/`` files are the same sentences with the gendered
words wrapped in ``<F>..</F>`` / ``<M>..</M>``; they are only used to list those words in the details.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from mtkit.errors import UserError
from mtkit.textio import decode_utf8, read_bytes, read_lines

GENDERS: tuple[str, str] = ("feminine", "masculine")
GENDER_VALUES = {
    "f": "feminine",
    "feminine": "feminine",
    "female": "feminine",
    "m": "masculine",
    "masculine": "masculine",
    "male": "masculine",
}
SPLITS = ("dev", "test")
HUB_ID = "gsarti/mt_geneval"
HUB_SPLITS = {"dev": "train", "test": "test"}  # the hub copy calls the dev split "train"
HUB_LANGS = ("ar", "de", "es", "fr", "hi", "it", "pt", "ru")
SEP = "<sep>"

_TAG = re.compile(r"<([FM])>(.*?)</\1>")


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


def annotated_keywords(line: str) -> list[str]:
    """The gendered words marked ``<F>..</F>`` or ``<M>..</M>`` in an annotated MT-GenEval line."""
    return [match.group(2) for match in _TAG.finditer(line)]


def normalise_gender(value: str, where: str) -> str:
    """Map f/m/feminine/masculine (any case) to "feminine"/"masculine"; anything else is an error."""
    gender = GENDER_VALUES.get(value.strip().lower())
    if gender is None:
        raise UserError(f"{where}: gender {value!r} is not feminine/masculine (or f/m)")
    return gender


def target_language(value: str) -> str:
    """The target language code of ``es``, ``en_es``, ``en-es`` or ``EN_ES`` (here: ``es``)."""
    return re.split(r"[_\-]", value.strip().lower())[-1]


# ---------------------------------------------------------------------------------------------------
# MT-GenEval in its original repository layout
# ---------------------------------------------------------------------------------------------------


def mtgeneval_root(directory: Path) -> Path:
    """The folder holding ``sentences/`` (the repository's ``data/`` folder or the folder itself)."""
    if not directory.is_dir():
        raise UserError(f"--mtgeneval-dir: {directory} is not a directory")
    for candidate in (directory, directory / "data"):
        if (candidate / "sentences").is_dir():
            return candidate
    raise UserError(
        f"--mtgeneval-dir: {directory} has no sentences/ folder "
        "(expected the MT-GenEval layout sentences/<split>/geneval-sentences-<gender>-<split>.en_<lang>.*)"
    )


def _sentence_file(
    root: Path,
    split: str,
    gender: str,
    lang: str,
    side: str,
    annotated: bool = False,
) -> Path:
    folder = root / "sentences" / split / ("annotated" if annotated else "")
    return folder / f"geneval-sentences-{gender}-{split}.en_{lang}.{side}"


def _context_file(root: Path, split: str, kind: str, lang: str) -> Path:
    side = "en" if kind == "2to1" else lang
    return root / "context" / f"geneval-context-wikiprofessions-{kind}-{split}.en_{lang}.{side}"


def available_splits(root: Path) -> list[str]:
    """Splits with a folder under ``sentences/``."""
    return sorted(p.name for p in (root / "sentences").iterdir() if p.is_dir())


def available_languages(root: Path, split: str) -> list[str]:
    """Languages whose four sentence files (sources and references of both genders) exist for ``split``."""
    folder = root / "sentences" / split
    if not folder.is_dir():
        return []
    pattern = re.compile(rf"geneval-sentences-feminine-{re.escape(split)}\.en_([A-Za-z]+)\.en$")
    langs = []
    for path in folder.iterdir():
        match = pattern.match(path.name)
        if match is None:
            continue
        lang = match.group(1)
        needed = [_sentence_file(root, split, g, lang, s) for g in GENDERS for s in ("en", lang)]
        if all(p.is_file() for p in needed):
            langs.append(lang)
    return sorted(langs)


def _require_same_length(columns: Mapping[Path, Sequence[str]]) -> int:
    lengths = {path: len(lines) for path, lines in columns.items()}
    first_path, first = next(iter(lengths.items()))
    for path, count in lengths.items():
        if count != first:
            raise UserError(f"{path}: {count} lines, but {first_path} has {first}")
    return first


def _load_mtgeneval_language(root: Path, split: str, lang: str, context: bool) -> LanguageData:
    src = {g: _sentence_file(root, split, g, lang, "en") for g in GENDERS}
    ref = {g: _sentence_file(root, split, g, lang, lang) for g in GENDERS}
    lines = {p: read_lines(p) for p in [*src.values(), *ref.values()]}
    _require_same_length(lines)

    keywords: dict[str, list[list[str]] | None] = {g: None for g in GENDERS}
    ann = {g: _sentence_file(root, split, g, lang, lang, annotated=True) for g in GENDERS}
    if all(p.is_file() for p in ann.values()):
        ann_lines = {p: read_lines(p) for p in ann.values()}
        _require_same_length({**lines, **ann_lines})
        keywords = {g: [annotated_keywords(line) for line in ann_lines[ann[g]]] for g in GENDERS}

    other = {"feminine": "masculine", "masculine": "feminine"}
    sides = {
        g: Side(
            sources=lines[src[g]],
            references=lines[ref[g]],
            counterfactuals=lines[ref[other[g]]],
            keywords=keywords[g],
            origin=str(ref[g]),
        )
        for g in GENDERS
    }
    ctx = _load_context(root, split, lang) if context else None
    return LanguageData(lang, sides["feminine"], sides["masculine"], paired=True, context=ctx)


def _load_context(root: Path, split: str, lang: str) -> ContextSet:
    files = {kind: _context_file(root, split, kind, lang) for kind in ("2to1", "original", "flipped")}
    for path in files.values():
        if not path.is_file():
            raise UserError(f"--context: {path} not found (the contextual subset needs context/ files)")
    lines = {p: read_lines(p) for p in files.values()}
    _require_same_length(lines)
    return ContextSet(
        sources=lines[files["2to1"]],
        original=lines[files["original"]],
        flipped=lines[files["flipped"]],
        origin=str(files["original"]),
    )


def load_mtgeneval(
    directory: Path, split: str, langs: Sequence[str] | None = None, context: bool = False
) -> GenderedData:
    """Load MT-GenEval from its repository layout; ``langs=None`` means every language of ``split``."""
    root = mtgeneval_root(directory)
    splits = available_splits(root)
    if split not in splits:
        found = " ".join(splits) or "none"
        raise UserError(f"--split: split {split!r} not present in {root / 'sentences'} (found: {found})")
    present = available_languages(root, split)
    if not present:
        raise UserError(f"--split: {root / 'sentences' / split} holds no complete language")
    wanted = list(langs) if langs else present
    for lang in wanted:
        if lang not in present:
            available = " ".join(present)
            raise UserError(
                f"--langs: language {lang!r} not present for split {split} in {root} (available: {available})"
            )
    languages = {lang: _load_mtgeneval_language(root, split, lang, context) for lang in sorted(set(wanted))}
    return GenderedData(name=f"MT-GenEval {split} ({root})", split=split, languages=languages)


# ---------------------------------------------------------------------------------------------------
# MT-GenEval hub copy
# ---------------------------------------------------------------------------------------------------


def language_from_hub_records(
    lang: str,
    records: Iterable[Mapping[str, str]],
    context_records: Iterable[Mapping[str, str]] | None,
    origin: str,
) -> LanguageData:
    """A :class:`LanguageData` from rows of the hub configs ``sentences_en_<lang>``, ``context_en_<lang>``."""
    rows = list(records)
    if not rows:
        raise UserError(f"{origin}: no rows for {lang}")
    try:
        src = {g: [r[f"source_{g}"] for r in rows] for g in GENDERS}
        ref = {g: [r[f"reference_{g}"] for r in rows] for g in GENDERS}
        ann = {g: [r.get(f"reference_{g}_annotated") for r in rows] for g in GENDERS}
    except KeyError as err:
        raise UserError(f"{origin}: rows lack the column {err.args[0]!r}") from None
    keywords: dict[str, list[list[str]] | None] = {}
    for g in GENDERS:
        complete = all(isinstance(a, str) for a in ann[g])
        keywords[g] = [annotated_keywords(a) for a in ann[g]] if complete else None
    other = {"feminine": "masculine", "masculine": "feminine"}
    sides = {g: Side(src[g], ref[g], ref[other[g]], keywords[g], f"{origin} reference_{g}") for g in GENDERS}
    ctx = None
    if context_records is not None:
        crow = list(context_records)
        try:
            ctx = ContextSet(
                sources=[f"{r['context']} {SEP} {r['source']}" for r in crow],
                original=[r["reference_original"] for r in crow],
                flipped=[r["reference_flipped"] for r in crow],
                origin=f"{origin} context_en_{lang}",
            )
        except KeyError as err:
            raise UserError(f"{origin}: context rows lack the column {err.args[0]!r}") from None
    return LanguageData(lang, sides["feminine"], sides["masculine"], paired=True, context=ctx)


def _hub_rows(hub_id: str, config: str, split: str) -> list[dict[str, str]]:
    """Rows of one hub config; tries the dataset itself, then its auto-converted parquet branch."""
    from datasets import load_dataset

    errors = []
    for kwargs in ({"name": config}, {"data_dir": config, "revision": "refs/convert/parquet"}):
        try:
            return [dict(row) for row in load_dataset(hub_id, split=split, **kwargs)]
        except Exception as err:  # noqa: BLE001 - any hub failure (offline, removed script) is reported below
            errors.append(str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__)
    raise UserError(f"--hub: cannot load {hub_id} config {config} split {split}: {errors[0]}")


def load_hub(
    split: str, langs: Sequence[str] | None = None, context: bool = False, hub_id: str = HUB_ID
) -> GenderedData:
    """Load the hub copy of MT-GenEval (configs ``sentences_en_<lang>``, ``context_en_<lang>``)."""
    if split not in HUB_SPLITS:
        raise UserError(f"--split: {split!r} is not one of {', '.join(HUB_SPLITS)}")
    wanted = sorted(set(langs)) if langs else list(HUB_LANGS)
    for lang in wanted:
        if lang not in HUB_LANGS:
            raise UserError(f"--langs: language {lang!r} not in {hub_id} (available: {' '.join(HUB_LANGS)})")
    languages = {}
    for lang in wanted:
        rows = _hub_rows(hub_id, f"sentences_en_{lang}", HUB_SPLITS[split])
        crow = _hub_rows(hub_id, f"context_en_{lang}", HUB_SPLITS[split]) if context else None
        languages[lang] = language_from_hub_records(lang, rows, crow, f"{hub_id}:sentences_en_{lang}")
    return GenderedData(name=f"MT-GenEval {split} ({hub_id})", split=split, languages=languages)


# ---------------------------------------------------------------------------------------------------
# CSV / JSONL tables
# ---------------------------------------------------------------------------------------------------

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
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        return [(reader.line_num, row) for row in reader]
    except csv.Error as err:
        raise UserError(f"{path}: malformed CSV ({err})") from None


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
            raise UserError(f"--langs: language {lang!r} not in {path} (present: {' '.join(present)})")
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
