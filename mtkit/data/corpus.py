"""Load parallel data into a ``DatasetDict`` with string columns ``source``, ``target`` and ``lang`` (the row's
target language), plus ``gender``, ``pair_id`` and ``counterfactual`` for gendered data.

Four sources: a folder of line-aligned ``<split>.<lang>[.gz]`` files, CSV/TSV/JSONL files (one or many
language pairs), a hub dataset with the standard ``translation`` column, or MT-GenEval in its repository
layout. Local files are checked (UTF-8, equal line counts, nothing empty) before anything is trained on them.
Without a validation split, one is held out of the training data (:mod:`mtkit.data.heldout`).
"""

from __future__ import annotations

import csv
import json
import os
import sys
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

from datasets import Dataset, DatasetDict

from mtkit.config import DataConfig
from mtkit.data.gendered import GENDERS, GenderedData, normalise_gender, target_language
from mtkit.data.heldout import check_fraction, heldout_split
from mtkit.data.line_pairs import load_line_pairs
from mtkit.data.mtgeneval import available_splits, load_mtgeneval, mtgeneval_root
from mtkit.errors import UserError
from mtkit.textio import csv_records, read_lines

#: Column pairs recognised in CSV/TSV/JSONL files, in order of preference (then <source_lang>/<target_lang>).
KNOWN_COLUMNS = [("source", "target"), ("input_to_translate", "label"), ("src", "tgt")]


def _find(folder: Path, split: str, lang: str) -> Path:
    for name in (f"{split}.{lang}", f"{split}.{lang}.gz"):
        if (folder / name).is_file():
            return folder / name
    raise UserError(f"--data_dir {folder}: no file {split}.{lang} or {split}.{lang}.gz")


def _pairs(
    sources: list[str],
    targets: list[str],
    where: str,
    langs: list[str],
    skip_empty: bool = False,
    lines: list[int] | None = None,
    **extra: list[str],
) -> Dataset:
    """The pairs as a dataset; ``lines`` are the file lines of the pairs (default: one pair a line)."""
    if len(sources) != len(targets):
        raise UserError(f"{where}: {len(sources)} source lines but {len(targets)} target lines")
    if not sources:
        raise UserError(f"{where}: no sentence pairs")
    empty = [i for i, (s, t) in enumerate(zip(sources, targets)) if not s.strip() or not t.strip()]
    if empty and not skip_empty:
        i = empty[0]
        side, line = "source" if not sources[i].strip() else "target", lines[i] if lines else i + 1
        raise UserError(
            f"{where}: empty {side} sentence at line {line} "
            f"({len(empty)} pair(s) with an empty side; --skip_empty_pairs drops them)"
        )
    if empty:
        if len(empty) == len(sources):
            raise UserError(f"{where}: no usable sentence pairs (every one has an empty side)")
        dropped = set(empty)
        keep = [i for i in range(len(sources)) if i not in dropped]
        sources, targets, langs = ([col[i] for i in keep] for col in (sources, targets, langs))
        extra = {name: [col[i] for i in keep] for name, col in extra.items()}
        if os.environ.get("RANK", "0") == "0":  # once, not per process
            print(f"{where}: dropped {len(empty)} of {len(keep) + len(empty)} pairs with an empty side "
                  "(--skip_empty_pairs)", file=sys.stderr)  # fmt: skip
    return Dataset.from_dict({"source": sources, "target": targets, "lang": langs, **extra})


def load_folder(folder: Path, split: str, src: str, tgt: str, skip_empty: bool = False) -> Dataset:
    """One split of a folder of line-aligned files, streamed into a memory-mapped Arrow file
    (:mod:`mtkit.data.line_pairs`): a WMT-sized corpus never sits in a process's own memory."""
    return load_line_pairs(_find(folder, split, src), _find(folder, split, tgt), tgt, skip_empty)


def _read_table(path: Path) -> tuple[list[dict], list[int]]:
    """The rows of a table and the line each ends on (for messages)."""
    lines = read_lines(path)  # missing, a folder, unreadable, empty, not UTF-8: one line each
    if path.suffix in (".jsonl", ".json"):
        rows, numbers = [], []
        for i, line in enumerate(lines, start=1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as err:
                    raise UserError(f"{path}: line {i} is not valid JSON ({err.msg})") from None
                numbers.append(i)
        return rows, numbers
    if path.suffix not in (".csv", ".tsv"):
        raise UserError(f"{path}: expected a .csv, .tsv or .jsonl file")
    reader = csv.DictReader(lines, delimiter="\t" if path.suffix == ".tsv" else ",")
    records = csv_records(reader, path)
    return [row for _, row in records], [line for line, _ in records]


def load_table(path: Path, cfg: DataConfig) -> Dataset:
    """A CSV/TSV/JSONL file. With a ``language_pair`` column, rows of every pair are kept (only those of
    ``--target_langs`` when given); with a ``gender`` column, the rows are gendered, and two rows of one language
    sharing an ``ID`` with both genders are a counterfactual pair."""
    rows, numbers = _read_table(path)
    if not rows:
        raise UserError(f"{path}: no rows")
    columns = set(rows[0])
    if cfg.source_column or cfg.target_column:
        src_col, tgt_col = cfg.source_column or "source", cfg.target_column or "target"
    else:
        candidates = [*KNOWN_COLUMNS, (cfg.source_lang, cfg.target_lang)]
        found = [(s, t) for s, t in candidates if s in columns and t in columns]
        if not found:
            raise UserError(f"{path}: no source/target columns; set --source_column and --target_column")
        src_col, tgt_col = found[0]
    for col, flag in ((src_col, "--source_column"), (tgt_col, "--target_column")):
        if col not in columns:
            raise UserError(f"{path}: no column '{col}' ({flag}); columns are {sorted(columns)}")
    if "language_pair" in columns:
        langs = [target_language(str(r["language_pair"])) for r in rows]
        if cfg.target_langs:
            wanted = set(cfg.languages())
            keep = [i for i, lang in enumerate(langs) if lang in wanted]
            rows, numbers, langs = [rows[i] for i in keep], [numbers[i] for i in keep], [langs[i] for i in keep]
            if not rows:
                raise UserError(f"--target_langs: no rows of {path} have a language_pair into {cfg.target_langs}")
    else:
        langs = [cfg.target_lang] * len(rows)
    sources, targets = [str(r[src_col] or "") for r in rows], [str(r[tgt_col] or "") for r in rows]
    if "gender" not in columns:
        return _pairs(sources, targets, str(path), langs, cfg.skip_empty_pairs, numbers)
    genders = [normalise_gender(str(r["gender"] or ""), f"{path}: line {n}") for n, r in zip(numbers, rows)]
    ids = [str(next((r[k] for k in ("ID", "id") if r.get(k) not in (None, "")), "")) for r in rows]
    members: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, (lang, row_id) in enumerate(zip(langs, ids)):
        if row_id:
            members[(lang, row_id)].append(i)
    pair_ids, counterfactuals = [f"{lang}:row{i}" for i, lang in enumerate(langs)], [""] * len(rows)
    for (lang, row_id), idx in members.items():
        if len(idx) == 2 and {genders[i] for i in idx} == {"feminine", "masculine"}:
            for i, j in (idx, idx[::-1]):
                pair_ids[i], counterfactuals[i] = f"{lang}:{row_id}", targets[j]
    return _pairs(
        sources, targets, str(path), langs, cfg.skip_empty_pairs, numbers,
        gender=genders, pair_id=pair_ids, counterfactual=counterfactuals,
    )  # fmt: skip


def mtgeneval_rows(data: GenderedData) -> Dataset:
    """MT-GenEval's sentences as rows: both genders of every language, line i of each a counterfactual pair."""
    cols: dict[str, list[str]] = defaultdict(list)
    for lang, ld in data.languages.items():
        for gender in GENDERS:
            side = ld.side(gender)
            cols["source"] += side.sources
            cols["target"] += side.references
            cols["lang"] += [lang] * len(side.sources)
            cols["gender"] += [gender] * len(side.sources)
            cols["pair_id"] += [f"{lang}:{i}" for i in range(len(side.sources))]
            cols["counterfactual"] += side.counterfactuals or [""] * len(side.sources)
    where = data.name
    return _pairs(cols.pop("source"), cols.pop("target"), where, cols.pop("lang"), **cols)


def _load_mtgeneval(cfg: DataConfig, split: str, split_flag: str) -> Dataset:
    """One MT-GenEval split as rows; bias_eval's flags in its errors renamed to this script's."""
    lang_flag = "--target_langs" if cfg.target_langs else "--target_lang"
    flags = {"--split:": f"{split_flag}:", "--target_langs:": f"{lang_flag}:"}
    try:
        return mtgeneval_rows(load_mtgeneval(Path(cfg.mtgeneval_dir), split, cfg.languages()))
    except UserError as err:
        message = str(err)
        for theirs, ours in flags.items():
            if message.startswith(theirs):
                message = ours + message[len(theirs) :]
        raise UserError(message) from None


def load_mtgeneval_splits(cfg: DataConfig) -> DatasetDict:
    """``train`` from ``--mtgeneval_split`` of ``--mtgeneval_dir`` and, when ``--test_split`` names another split
    present there, ``test``."""
    out = DatasetDict({"train": _load_mtgeneval(cfg, cfg.mtgeneval_split, "--mtgeneval_split")})
    test = cfg.test_split
    if test and test != cfg.mtgeneval_split and test in available_splits(mtgeneval_root(Path(cfg.mtgeneval_dir))):
        out["test"] = _load_mtgeneval(cfg, test, "--test_split")
    return out


def held_out(cfg: DataConfig) -> bool:
    """Whether the validation split is held out of the training data (no validation source was given)."""
    return bool(cfg.mtgeneval_dir) or bool(cfg.train_file and not cfg.validation_file)


def load_hub(cfg: DataConfig) -> DatasetDict:
    """A hub dataset with a ``translation`` column of ``{lang: text}`` dicts."""
    from datasets import load_dataset

    try:
        raw = load_dataset(cfg.dataset_name, cfg.dataset_config_name)
    except Exception as err:  # noqa: BLE001 - the hub raises many kinds; the user needs one line
        raise UserError(f"--dataset_name {cfg.dataset_name}: cannot load ({str(err).splitlines()[0]})") from None
    src, tgt = cfg.source_lang, cfg.target_lang

    def flatten(batch: dict) -> dict:
        pairs = batch["translation"]
        return {"source": [t[src] for t in pairs], "target": [t[tgt] for t in pairs], "lang": [tgt] * len(pairs)}

    if "translation" not in raw[next(iter(raw))].column_names:
        raise UserError(f"--dataset_name {cfg.dataset_name}: no 'translation' column")
    return DatasetDict(
        {name: split.map(flatten, batched=True, remove_columns=split.column_names) for name, split in raw.items()}
    )


def load_parallel(cfg: DataConfig, seed: int = 1) -> DatasetDict:
    """``train``, ``validation`` and (if present) ``test`` splits (columns: see the module docstring)."""
    given = [x for x in (cfg.data_dir, cfg.train_file, cfg.dataset_name, cfg.mtgeneval_dir) if x]
    if len(given) != 1:
        raise UserError("data: give exactly one of --data_dir, --train_file, --dataset_name or --mtgeneval_dir")
    if held_out(cfg):
        check_fraction(cfg.validation_fraction)  # before any data is read
    out = DatasetDict()
    test_split = None if str(cfg.test_split).lower() in ("", "none") else cfg.test_split
    if cfg.data_dir:
        folder = Path(cfg.data_dir)
        if not folder.is_dir():
            raise UserError(f"--data_dir {folder}: not a folder")
        names = {"train": cfg.train_split, "validation": cfg.validation_split, "test": test_split}
        for key, split in names.items():
            if split and (key != "test" or any(folder.glob(f"{split}.{cfg.source_lang}*"))):
                out[key] = load_folder(folder, split, cfg.source_lang, cfg.target_lang, cfg.skip_empty_pairs)
    elif cfg.train_file:
        files = {"train": cfg.train_file, "validation": cfg.validation_file, "test": cfg.test_file}
        for key, path in files.items():
            if path:
                out[key] = load_table(Path(path), cfg)
    elif cfg.mtgeneval_dir:
        out = load_mtgeneval_splits(replace(cfg, test_split=test_split))
    else:
        hub = load_hub(cfg)
        names = {"train": cfg.train_split, "validation": cfg.validation_split}
        names.update({"test": test_split} if test_split else {})
        for key, split in names.items():
            split = split if split in hub else key  # hub datasets name their splits train/validation/test
            if split in hub:
                out[key] = hub[split]
            elif key != "test":
                raise UserError(f"--{key}_split: '{split}' not in {cfg.dataset_name} (has {list(hub)})")
    if held_out(cfg):
        out["train"], out["validation"] = heldout_split(out["train"], cfg.validation_fraction, seed)
    if cfg.max_train_samples:
        out["train"] = out["train"].select(range(min(cfg.max_train_samples, len(out["train"]))))
    return DatasetDict({key: out[key] for key in ("train", "validation", "test") if key in out})
