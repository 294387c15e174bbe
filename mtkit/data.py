"""Load parallel data into a ``DatasetDict`` with ``source`` and ``target`` string columns.

Three sources: a folder of line-aligned ``<split>.<lang>[.gz]`` files, CSV/TSV/JSONL files, or a hub
dataset with the standard ``translation`` column. Local files are checked (UTF-8, equal line counts,
nothing empty) before anything is trained on them.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from datasets import Dataset, DatasetDict

from mtkit.config import DataConfig
from mtkit.errors import UserError
from mtkit.textio import read_lines

#: Column pairs recognised in CSV/TSV/JSONL files, in order of preference (then <source_lang>/<target_lang>).
KNOWN_COLUMNS = [("source", "target"), ("input_to_translate", "label"), ("src", "tgt")]


def _find(folder: Path, split: str, lang: str) -> Path:
    for name in (f"{split}.{lang}", f"{split}.{lang}.gz"):
        if (folder / name).is_file():
            return folder / name
    raise UserError(f"--data_dir {folder}: no file {split}.{lang} or {split}.{lang}.gz")


def _pairs(sources: list[str], targets: list[str], where: str) -> Dataset:
    if len(sources) != len(targets):
        raise UserError(f"{where}: {len(sources)} source lines but {len(targets)} target lines")
    if not sources:
        raise UserError(f"{where}: no sentence pairs")
    for i, (s, t) in enumerate(zip(sources, targets), start=1):
        if not s.strip() or not t.strip():
            raise UserError(f"{where}: empty {'source' if not s.strip() else 'target'} sentence at line {i}")
    return Dataset.from_dict({"source": sources, "target": targets})


def load_folder(folder: Path, split: str, src: str, tgt: str) -> Dataset:
    """One split of a folder of line-aligned files."""
    s, t = _find(folder, split, src), _find(folder, split, tgt)
    return _pairs(read_lines(s), read_lines(t), f"{s} / {t.name}")


def _read_table(path: Path) -> list[dict]:
    if not path.is_file():
        raise UserError(f"{path}: file not found")
    text = "\n".join(read_lines(path))
    if path.suffix in (".jsonl", ".json"):
        rows = []
        for i, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as err:
                    raise UserError(f"{path}: line {i} is not valid JSON ({err.msg})") from None
        return rows
    if path.suffix not in (".csv", ".tsv"):
        raise UserError(f"{path}: expected a .csv, .tsv or .jsonl file")
    return list(csv.DictReader(text.splitlines(), delimiter="\t" if path.suffix == ".tsv" else ","))


def load_table(path: Path, cfg: DataConfig) -> Dataset:
    """A CSV/TSV/JSONL file; rows of another ``language_pair`` than the target language are left out."""
    rows = _read_table(path)
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
        rows = [r for r in rows if str(r["language_pair"]).replace("-", "_").endswith(cfg.target_lang)]
        if not rows:
            raise UserError(f"{path}: no rows with language_pair ending in '{cfg.target_lang}'")
    return _pairs([str(r[src_col] or "") for r in rows], [str(r[tgt_col] or "") for r in rows], str(path))


def load_hub(cfg: DataConfig) -> DatasetDict:
    """A hub dataset with a ``translation`` column of ``{lang: text}`` dicts."""
    from datasets import load_dataset

    try:
        raw = load_dataset(cfg.dataset_name, cfg.dataset_config_name)
    except Exception as err:  # noqa: BLE001 - the hub raises many kinds; the user needs one line
        raise UserError(f"--dataset_name {cfg.dataset_name}: cannot load ({str(err).splitlines()[0]})") from None
    src, tgt = cfg.source_lang, cfg.target_lang

    def flatten(batch: dict) -> dict:
        return {"source": [t[src] for t in batch["translation"]], "target": [t[tgt] for t in batch["translation"]]}

    if "translation" not in raw[next(iter(raw))].column_names:
        raise UserError(f"--dataset_name {cfg.dataset_name}: no 'translation' column")
    return DatasetDict(
        {name: split.map(flatten, batched=True, remove_columns=split.column_names) for name, split in raw.items()}
    )


def load_parallel(cfg: DataConfig) -> DatasetDict:
    """``train``, ``validation`` and (if present) ``test`` splits as ``source``/``target`` pairs."""
    given = [x for x in (cfg.data_dir, cfg.train_file, cfg.dataset_name) if x]
    if len(given) != 1:
        raise UserError("data: give exactly one of --data_dir, --train_file or --dataset_name")
    out = DatasetDict()
    test_split = None if str(cfg.test_split).lower() in ("", "none") else cfg.test_split
    if cfg.data_dir:
        folder = Path(cfg.data_dir)
        if not folder.is_dir():
            raise UserError(f"--data_dir {folder}: not a folder")
        names = {"train": cfg.train_split, "validation": cfg.validation_split, "test": test_split}
        for key, split in names.items():
            if split and (key != "test" or any(folder.glob(f"{split}.{cfg.source_lang}*"))):
                out[key] = load_folder(folder, split, cfg.source_lang, cfg.target_lang)
    elif cfg.train_file:
        files = {"train": cfg.train_file, "validation": cfg.validation_file, "test": cfg.test_file}
        if not cfg.validation_file:
            raise UserError("--validation_file: required with --train_file")
        for key, path in files.items():
            if path:
                out[key] = load_table(Path(path), cfg)
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
    if cfg.max_train_samples:
        out["train"] = out["train"].select(range(min(cfg.max_train_samples, len(out["train"]))))
    return out
