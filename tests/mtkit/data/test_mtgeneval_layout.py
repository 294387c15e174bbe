"""MT-GenEval's repository layout (:mod:`mtkit.data.mtgeneval`): the shared copy, reduced layouts, errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from geneval_helpers import LANGS, geneval_file, make_subset, read_plain

from bias_eval.core.textio import read_lines, split_lines
from mtkit.data.mtgeneval import available_languages, load_mtgeneval
from mtkit.errors import UserError


def test_shared_dev_split_all_languages(shared_geneval: Path) -> None:
    data = load_mtgeneval(shared_geneval, "dev", context=True)
    assert sorted(data.languages) == list(LANGS)
    for lang, ld in data.languages.items():
        assert ld.paired
        for gender, other in (("feminine", "masculine"), ("masculine", "feminine")):
            side = ld.side(gender)
            assert len(side.sources) == len(side.references) == 1200
            assert side.references == read_plain(geneval_file(shared_geneval, lang, gender, lang))
            assert side.sources == read_plain(geneval_file(shared_geneval, lang, gender, "en"))
            assert side.counterfactuals == read_plain(geneval_file(shared_geneval, lang, other, lang))
            assert side.keywords is not None and len(side.keywords) == 1200
        assert ld.context is not None
        ctx_name = f"geneval-context-wikiprofessions-original-dev.en_{lang}.{lang}"
        n_ctx = len(read_plain(shared_geneval / "context" / ctx_name))
        assert len(ld.context.sources) == len(ld.context.original) == len(ld.context.flipped) == n_ctx
        assert all("<sep>" in s for s in ld.context.sources)


def test_shared_keywords_come_from_annotated_files(shared_geneval: Path) -> None:
    ld = load_mtgeneval(shared_geneval, "dev", ["de"]).languages["de"]
    assert ld.feminine.keywords[0] == ["ihr"]
    assert ld.masculine.keywords[0] == ["ihm"]
    assert ld.context is None  # only loaded on request


def test_reduced_layout_without_context_or_annotated(small_geneval: Path) -> None:
    assert available_languages(small_geneval, "test") == ["de", "es"]
    data = load_mtgeneval(small_geneval, "test")  # langs default: all present for the split
    assert sorted(data.languages) == ["de", "es"]
    assert data.languages["es"].feminine.keywords is None
    assert len(data.languages["es"].masculine.references) == 25


def test_repository_root_with_data_folder(shared_geneval: Path, tmp_path: Path) -> None:
    make_subset(shared_geneval, tmp_path / "repo" / "data", ["it"], 5, split="dev", annotated=True)
    data = load_mtgeneval(tmp_path / "repo", "dev")
    assert list(data.languages) == ["it"]
    assert data.languages["it"].feminine.keywords is not None


@pytest.mark.parametrize(
    ("split", "langs", "context", "message"),
    [
        ("dev", None, False, "split 'dev' not present"),
        ("test", ["fr"], False, "language 'fr' not present for split test"),
        ("test", None, True, "--context:"),
    ],
)
def test_missing_split_language_or_context(small_geneval: Path, split, langs, context, message) -> None:
    with pytest.raises(UserError, match=message):
        load_mtgeneval(small_geneval, split, langs, context=context)


def test_not_a_geneval_folder(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="has no sentences/ folder"):
        load_mtgeneval(tmp_path, "dev")


def test_unequal_line_counts_name_the_file(small_geneval: Path) -> None:
    path = geneval_file(small_geneval, "es", "masculine", "es", "test")
    path.write_text("\n".join(read_plain(path)[:-1]) + "\n", encoding="utf-8")
    with pytest.raises(UserError, match=rf"{path.name}: 24 lines"):
        load_mtgeneval(small_geneval, "test", ["es"])


def test_line_reading_edge_cases(tmp_path: Path) -> None:
    assert split_lines("a\nb\n") == ["a", "b"]
    assert split_lines("a\r\nb") == ["a", "b"]
    assert split_lines("a\u2028b\n\n") == ["a\u2028b", ""]  # only \n separates lines
    bom = tmp_path / "bom.txt"
    bom.write_bytes("\ufeffx\n".encode())
    assert read_lines(bom) == ["x"]
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok\n\xff\xfe broken\n")
    with pytest.raises(UserError, match=r"bad.txt: invalid UTF-8 at line 2"):
        read_lines(bad)
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    with pytest.raises(UserError, match="empty.txt: file is empty"):
        read_lines(empty)
    with pytest.raises(UserError, match="missing.txt: file not found"):
        read_lines(tmp_path / "missing.txt")
