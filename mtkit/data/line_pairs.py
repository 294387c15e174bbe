"""Line-aligned source and target files (``<split>.<lang>[.gz]``) streamed into one memory-mapped Arrow file.

Neither file is ever held in memory: lines are read a chunk at a time (:func:`bias_eval.core.textio.iter_lines`),
checked (UTF-8, equal counts, no empty side unless ``--skip_empty_pairs``) and written in record batches. The Arrow file
is a cache in the ``datasets`` cache folder (``HF_DATASETS_CACHE``), keyed by both files' path, size and modification
time, written to a temporary name and renamed when complete, and built by one process at a time (a file lock): the other
processes of the node, and every later run, open the same file, whose pages the operating system shares between them.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Iterator
from itertools import zip_longest
from pathlib import Path

import pyarrow as pa
from datasets import Dataset
from datasets.table import MemoryMappedTable
from filelock import FileLock

from bias_eval.core.textio import iter_lines
from mtkit.errors import UserError
from mtkit.processes import is_main_process

SCHEMA = pa.schema([("source", pa.string()), ("target", pa.string()), ("lang", pa.string())])
BATCH_ROWS = 50_000


def cache_folder() -> Path:
    """Where the Arrow files go: ``$HF_DATASETS_CACHE/mtkit-pairs`` (``datasets``' own cache, by default under
    ``~/.cache/huggingface``; point it at a shared filesystem to build each corpus once per cluster)."""
    import datasets.config

    return Path(datasets.config.HF_DATASETS_CACHE) / "mtkit-pairs"


def _key(source: Path, target: Path, lang: str, skip_empty: bool) -> str:
    parts = [lang, str(skip_empty), "v1"]
    for path in (source, target):
        try:
            stat = path.stat()
        except OSError:  # reported by the reader, with its usual message
            return "unreadable"
        parts += [str(path.resolve()), str(stat.st_size), str(stat.st_mtime_ns)]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:20]


def load_line_pairs(source: Path, target: Path, lang: str, skip_empty: bool = False) -> Dataset:
    """The pairs of two line-aligned files as a memory-mapped ``Dataset`` (columns ``source``, ``target``,
    ``lang``), from the cache when both files are unchanged."""
    folder = cache_folder()
    folder.mkdir(parents=True, exist_ok=True)
    key = _key(source, target, lang, skip_empty)
    path = folder / f"pairs-{key}.arrow"
    with FileLock(f"{path}.lock"):
        if not path.is_file():
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            try:
                _write(source, target, lang, skip_empty, tmp)
                os.replace(tmp, path)
            finally:
                tmp.unlink(missing_ok=True)
    # The fingerprint (which keys the tokenized cache) follows the files, not where this cache lies: every node of a
    # cluster finds the tokenized splits that scripts/preprocess.py wrote to the shared --output_dir.
    return Dataset(MemoryMappedTable.from_file(str(path)), fingerprint=f"mtkit-pairs-{key}")


def _write(source: Path, target: Path, lang: str, skip_empty: bool, out: Path) -> None:
    with pa.OSFile(str(out), "wb") as sink, pa.ipc.new_stream(sink, SCHEMA) as writer:
        for sources, targets in _checked_batches(source, target, f"{source} / {target.name}", skip_empty):
            columns = [pa.array(sources, pa.string()), pa.array(targets, pa.string()), pa.array([lang] * len(sources))]
            writer.write_batch(pa.record_batch(columns, schema=SCHEMA))


def _checked_batches(source: Path, target: Path, where: str, skip_empty: bool) -> Iterator[tuple[list[str], list[str]]]:
    """Batches of up to ``BATCH_ROWS`` pairs, pairs with an empty side left out; the checks that need the whole
    files (equal line counts, empty sides without ``--skip_empty_pairs``) raise at the end, with whole-file
    counts, and the caller then deletes what was written."""
    n_src = n_tgt = n_empty = 0
    first_empty = ""
    sources: list[str] = []
    targets: list[str] = []
    for src, tgt in zip_longest(iter_lines(source), iter_lines(target)):
        n_src += src is not None
        n_tgt += tgt is not None
        if src is None or tgt is None:
            continue
        if not src.strip() or not tgt.strip():
            n_empty += 1
            first_empty = first_empty or f"empty {'source' if not src.strip() else 'target'} sentence at line {n_src}"
            continue
        sources.append(src)
        targets.append(tgt)
        if len(sources) == BATCH_ROWS:
            yield sources, targets
            sources, targets = [], []
    if n_src != n_tgt:
        raise UserError(f"{where}: {n_src} source lines but {n_tgt} target lines")
    if n_empty and not skip_empty:
        raise UserError(f"{where}: {first_empty} ({n_empty} pair(s) with an empty side; --skip_empty_pairs drops them)")
    if n_empty == n_src:
        raise UserError(f"{where}: no usable sentence pairs (every one has an empty side)")
    if sources:
        yield sources, targets
    if n_empty and is_main_process():  # once, not per process
        print(f"{where}: dropped {n_empty} of {n_src} pairs with an empty side (--skip_empty_pairs)", file=sys.stderr)
