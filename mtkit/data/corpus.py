"""Load parallel data into a ``DatasetDict`` with string columns ``source``, ``target`` and ``lang`` (the row's
target language), plus ``gender``, ``pair_id`` and ``counterfactual`` for gendered data (and ``words``, the words that
carry a row's gender, where the data names them).

Four sources: a folder of line-aligned ``<split>.<lang>[.gz]`` files, CSV/TSV/JSONL files (one or many
language pairs, read by :mod:`mtkit.data.tables`), a hub dataset with the standard ``translation`` column or with
a table's columns, or MT-GenEval in its repository layout. Local files are checked (UTF-8, equal line counts,
nothing empty) before anything is trained on them. Without a validation split, one is held out of the training
data (:mod:`mtkit.data.heldout`). :func:`language_counts` says how many rows of each language each split holds.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

from datasets import Dataset, DatasetDict

from bias_eval.mtgeneval.gendered import GENDERS, GenderedData
from mtkit.config import DataConfig
from mtkit.data.heldout import check_fraction, heldout_split
from mtkit.data.line_pairs import load_line_pairs
from mtkit.data.mtgeneval import available_splits, load_mtgeneval, mtgeneval_root
from mtkit.data.pairs import table_pairs
from mtkit.data.tables import Table, read_table, table_of, text_value
from mtkit.errors import UserError
from mtkit.overrides import DATA_SOURCES
from mtkit.processes import is_main_process


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
        if is_main_process():  # once, not per process
            print(f"{where}: dropped {len(empty)} of {len(keep) + len(empty)} pairs with an empty side "
                  "(--skip_empty_pairs)", file=sys.stderr)  # fmt: skip
    return Dataset.from_dict({"source": sources, "target": targets, "lang": langs, **extra})


def load_folder(folder: Path, split: str, src: str, tgt: str, skip_empty: bool = False) -> Dataset:
    """One split of a folder of line-aligned files, streamed into a memory-mapped Arrow file
    (:mod:`mtkit.data.line_pairs`): a WMT-sized corpus never sits in a process's own memory."""
    return load_line_pairs(_find(folder, split, src), _find(folder, split, tgt), tgt, skip_empty)


def table_rows(table: Table, skip_empty: bool = False) -> Dataset:
    """A :class:`~mtkit.data.tables.Table` as rows; gendered rows get their ``pair_id`` and ``counterfactual``
    (:mod:`mtkit.data.pairs`)."""
    if table.gender is None:
        return _pairs(table.source, table.target, table.where, table.lang, skip_empty, table.lines)
    pairs, counterfactuals = table_pairs(table)
    note = pairs.note(table.where, "in no pair, out of the paired figures; each ID's rows kept together in every split")
    if note and is_main_process():  # once, not per process
        print(note, file=sys.stderr)
    words = {"words": table.words} if table.words is not None else {}
    return _pairs(
        table.source, table.target, table.where, table.lang, skip_empty, table.lines,
        gender=table.gender, pair_id=pairs.keys, counterfactual=counterfactuals, **words,
    )  # fmt: skip


def table_options(cfg: DataConfig, flag: str | None = None) -> dict:
    """What :func:`mtkit.data.tables.table_of` needs of a run's data settings."""
    return {
        "flag": flag or ("--target_langs" if cfg.target_langs else "--target_lang"),
        "source_column": cfg.source_column,
        "target_column": cfg.target_column,
        "source_lang": cfg.source_lang,
    }


def load_table(path: Path, cfg: DataConfig, need_all: bool = True, line_aligned: bool = False) -> Table:
    """A CSV/TSV/JSONL file (:mod:`mtkit.data.tables`) in the run's languages; with ``need_all``, each of them must
    have rows; with ``line_aligned``, no cell may hold a line break."""
    return read_table(path, cfg.languages(), need_all=need_all, line_aligned=line_aligned, **table_options(cfg))


def mtgeneval_rows(data: GenderedData) -> Dataset:
    """MT-GenEval's sentences as rows: both genders of every language, line i of each a counterfactual pair; ``words``
    holds a row's marked gendered words (``annotated/``; empty without those files)."""
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
            cols["words"] += [" ".join(k) for k in side.keywords] if side.keywords else [""] * len(side.sources)
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


def load_hub(cfg: DataConfig) -> tuple[DatasetDict, dict[str, dict[str, int]]]:
    """A hub dataset: a ``translation`` column of ``{lang: text}`` dicts, else columns read as a table's
    (:mod:`mtkit.data.tables`), and the rows of each split left out by language."""
    from datasets import load_dataset

    try:
        raw = load_dataset(cfg.dataset_name, cfg.dataset_config_name)
    except Exception as err:  # noqa: BLE001 - the hub raises many kinds; the user needs one line
        raise UserError(f"--dataset_name {cfg.dataset_name}: cannot load ({str(err).splitlines()[0]})") from None
    src, tgt = cfg.source_lang, cfg.target_lang

    def flatten(batch: dict) -> dict:
        pairs = batch["translation"]
        return {"source": [t[src] for t in pairs], "target": [t[tgt] for t in pairs], "lang": [tgt] * len(pairs)}

    if "translation" in raw[next(iter(raw))].column_names:
        splits = {
            name: split.map(flatten, batched=True, remove_columns=split.column_names) for name, split in raw.items()
        }
        return DatasetDict(splits), {}
    tables = {}
    for name, split in raw.items():
        records = [(i + 1, {k: text_value(v) for k, v in row.items()}) for i, row in enumerate(split)]
        where = f"--dataset_name {cfg.dataset_name} ({name})"
        need_all = name in (cfg.train_split, "train")
        tables[name] = table_of(records, where, cfg.languages(), unit="row", need_all=need_all, **table_options(cfg))
    splits = DatasetDict({name: table_rows(t, cfg.skip_empty_pairs) for name, t in tables.items()})
    return splits, {t.where: t.left_out for t in tables.values() if t.left_out}


#: The file of a run folder, beside ``config.yaml``, that holds :func:`language_counts` of the run's data.
DATA_COUNTS = "data_counts.json"


class Splits(DatasetDict):
    """A run's splits, and the rows its tables left out for languages the run does not ask for
    (``left_out``: ``{file: {lang: rows}}``)."""

    def __init__(self, splits: dict[str, Dataset], left_out: dict[str, dict[str, int]] | None = None) -> None:
        super().__init__(splits)
        self.left_out = dict(left_out or {})


def language_counts(splits, left_out: dict) -> dict[str, dict[str, int]]:
    """``{split: {lang: rows}}`` of ``splits`` (loaded or tokenized, with their ``lang`` column), and ``left_out``
    (``{file: {lang: rows}}``, what tables left out: :attr:`Splits.left_out`) when rows were left out."""
    counts = {name: _rows_per_language(split) for name, split in splits.items()}
    return {**counts, "left_out": left_out} if left_out else counts


def _rows_per_language(split) -> dict[str, int]:
    """``{lang: rows}`` of a split, counted in Arrow (no Python object per row of a large corpus)."""
    column = split.select_columns(["lang"]).with_format("arrow")[:].column("lang")
    return dict(sorted((str(c["values"]), int(c["counts"])) for c in column.value_counts().to_pylist()))


def describe_counts(counts: dict[str, dict[str, int]]) -> str:
    """``train: de 120, es 120; validation: ...`` (and what was left out), for the log."""
    said = [f"{name}: {', '.join(f'{lang} {n:,}' for lang, n in langs.items())}" for name, langs in counts.items()
            if name != "left_out"]  # fmt: skip
    for where, langs in counts.get("left_out", {}).items():
        said.append(f"left out of {where}: {', '.join(f'{lang} {n:,}' for lang, n in langs.items())}")
    return "; ".join(said)


def load_parallel(cfg: DataConfig, seed: int = 1) -> Splits:
    """``train``, ``validation`` and (if present) ``test`` splits (columns: see the module docstring)."""
    given = [key for key in DATA_SOURCES if getattr(cfg, key)]
    if len(given) != 1:
        raise UserError(f"data: give exactly one of {', '.join(f'--{k}' for k in DATA_SOURCES)}")
    if held_out(cfg):
        check_fraction(cfg.validation_fraction)  # before any data is read
    out, left_out = DatasetDict(), {}
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
                table = load_table(Path(path), cfg, need_all=key == "train")
                out[key] = table_rows(table, cfg.skip_empty_pairs)
                left_out.update({table.where: table.left_out} if table.left_out else {})
    elif cfg.mtgeneval_dir:
        out = load_mtgeneval_splits(replace(cfg, test_split=test_split))
    else:
        hub, left_out = load_hub(cfg)
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
    return Splits({key: out[key] for key in ("train", "validation", "test") if key in out}, left_out)
