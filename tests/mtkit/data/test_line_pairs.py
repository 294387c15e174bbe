"""Line-aligned files streamed into a memory-mapped Arrow cache: the same rows as reading the files whole, one cache
file per content, and a fingerprint (the tokenized cache's key) that follows the files, not the cache's place."""

from __future__ import annotations

import os
from pathlib import Path

import datasets.config
import pytest

from bias_eval.core.textio import read_lines
from mtkit.data import line_pairs
from mtkit.data.line_pairs import load_line_pairs
from mtkit.errors import UserError


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    src, tgt = tmp_path / "train.en", tmp_path / "train.de"
    src.write_text("".join(f"sentence {i}\n" for i in range(1234)), encoding="utf-8")
    tgt.write_text("".join(f"Satz {i}\n" for i in range(1234)), encoding="utf-8")
    return src, tgt


def test_rows_are_the_lines_in_batches_smaller_than_the_corpus(files, tmp_path, monkeypatch):
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "cache")
    monkeypatch.setattr(line_pairs, "BATCH_ROWS", 100)  # thirteen record batches
    pairs = load_line_pairs(*files, "de")
    table = pairs.with_format("arrow")[:]
    assert table["source"].to_pylist() == read_lines(files[0]) and table["target"].to_pylist() == read_lines(files[1])
    assert set(table["lang"].to_pylist()) == {"de"}
    assert len(list((tmp_path / "cache" / "mtkit-pairs").glob("pairs-*.arrow"))) == 1


def test_the_fingerprint_follows_the_files_not_the_cache_folder(files, tmp_path, monkeypatch):
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "node_a")
    a = load_line_pairs(*files, "de")
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "node_b")
    b = load_line_pairs(*files, "de")
    assert a.cache_files != b.cache_files and a._fingerprint == b._fingerprint
    files[1].write_text(files[1].read_text(encoding="utf-8").replace("Satz 7\n", "Satz sieben\n"), encoding="utf-8")
    os.utime(files[1], ns=(1, 1))  # another size and time: another corpus
    assert load_line_pairs(*files, "de")._fingerprint != a._fingerprint


def test_a_failed_check_leaves_no_cache_file(files, tmp_path, monkeypatch):
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "cache")
    monkeypatch.setattr(line_pairs, "BATCH_ROWS", 100)  # batches were written before the check at the end fails
    files[1].write_text("".join(f"Satz {i}\n" for i in range(1233)), encoding="utf-8")
    with pytest.raises(UserError, match="1234 source lines but 1233 target lines"):
        load_line_pairs(*files, "de")
    assert not [p for p in (tmp_path / "cache" / "mtkit-pairs").iterdir() if not p.name.endswith(".lock")]
