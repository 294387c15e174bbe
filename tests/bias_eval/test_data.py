"""Loaders: MT-GenEval layout (shared copy and reduced layouts), hub records, CSV/JSONL tables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from geneval_helpers import LANGS, geneval_file, make_subset, read_plain

from bias_eval.data import (
    annotated_keywords,
    available_languages,
    language_from_hub_records,
    load_mtgeneval,
    load_table,
    normalise_gender,
    target_language,
)
from mtkit.errors import UserError
from mtkit.textio import read_lines, split_lines


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


def test_small_helpers() -> None:
    assert annotated_keywords("<F>Die Lehrerin</F> sagte, <F>sie</F> komme.") == ["Die Lehrerin", "sie"]
    assert normalise_gender(" F ", "x") == "feminine"
    assert normalise_gender("Masculine", "x") == "masculine"
    with pytest.raises(UserError, match="gender 'n' is not feminine/masculine"):
        normalise_gender("n", "file.csv: line 3")
    assert target_language("en_es") == target_language("EN-ES") == target_language("es") == "es"


def test_hub_records_conversion() -> None:
    rows = [
        {
            "orig_id": 0,
            "source_feminine": "She is a doctor.",
            "reference_feminine": "Sie ist Ärztin.",
            "source_masculine": "He is a doctor.",
            "reference_masculine": "Er ist Arzt.",
            "reference_feminine_annotated": "<F>Sie</F> ist <F>Ärztin</F>.",
            "reference_masculine_annotated": "<M>Er</M> ist <M>Arzt</M>.",
        }
    ]
    context = [
        {
            "context": "Ann works.",
            "source": "The doctor came.",
            "reference_original": "Die Ärztin kam.",
            "reference_flipped": "Der Arzt kam.",
        }
    ]
    ld = language_from_hub_records("de", rows, context, "hub")
    assert ld.feminine.counterfactuals == ["Er ist Arzt."]
    assert ld.masculine.keywords == [["Er", "Arzt"]]
    assert ld.context.sources == ["Ann works. <sep> The doctor came."]
    with pytest.raises(UserError, match="lack the column 'source_feminine'"):
        language_from_hub_records("de", [{"x": "y"}], None, "hub")


def test_notebook_csv_layout(tmp_path: Path) -> None:
    path = tmp_path / "training.csv"
    path.write_text(
        "\ufeffID,input_to_translate,label,gender,language_pair\n"
        "0,She started training.,Comenzó a entrenar.,f,en_es\n"
        '1,"He said ""hi"", then left.","Dijo ""hola"", y se fue.",m,en_es\n'
        "2,He joined.,Er kam.,m,en_de\n"
        "3,She joined.,Sie kam.,f,en_de\n",
        encoding="utf-8",
    )
    data = load_table(path)
    assert sorted(data.languages) == ["de", "es"]
    es = data.languages["es"]
    assert not es.paired
    assert es.masculine.sources == ['He said "hi", then left.']
    assert es.feminine.references == ["Comenzó a entrenar."]
    assert es.feminine.counterfactuals is None
    assert sorted(load_table(path, ["de"]).languages) == ["de"]
    with pytest.raises(UserError, match="language 'fr' not in"):
        load_table(path, ["fr"])


def test_jsonl_with_counterfactual(tmp_path: Path) -> None:
    path = tmp_path / "data.jsonl"
    rows = [
        {
            "source": "She is a doctor.",
            "reference": "Sie ist Ärztin.",
            "gender": "feminine",
            "language": "de",
            "counterfactual": "Er ist Arzt.",
        },
        {
            "source": "He is a doctor.",
            "reference": "Er ist Arzt.",
            "gender": "masculine",
            "language": "de",
            "counterfactual": "Sie ist Ärztin.",
        },
    ]
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    ld = load_table(path).languages["de"]
    assert ld.feminine.counterfactuals == ["Er ist Arzt."]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("source,reference,gender,language\na,b,x,es\n", r"line 2: gender 'x' is not feminine/masculine"),
        ("source,reference,language\na,b,es\n", "missing column"),
        ("source,reference,gender,language\na,b,f,es\n", "language es has no masculine rows"),
        ("source,reference,gender,language\na,b,f\n", "line 2: no value for column 'language'"),
    ],
)
def test_bad_tables(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(UserError, match=message):
        load_table(path)


def test_bad_jsonl_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"source": "a"}\n{broken\n', encoding="utf-8")
    with pytest.raises(UserError, match="bad.jsonl: line 2: invalid JSON"):
        load_table(path)
