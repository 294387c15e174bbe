"""Gendered CSV/TSV/JSONL tables (:mod:`mtkit.data.gendered_tables`): the notebook layout, JSONL, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mtkit.data.gendered_tables import load_table
from mtkit.errors import UserError


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
    with pytest.raises(
        UserError, match=r"--target_langs: fr has no rows in .*training.csv \(its rows are in: de 2, es 2\)"
    ):
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
        ("source,reference,language\na,b,es\n", "no gender column"),
        ("source,reference,gender,language\na,b,f,es\n", "language es has no masculine rows"),
        ("source,reference,gender,language\na,b,f\n", "line 2 has 3 fields, its header line 4"),
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
    with pytest.raises(UserError, match="bad.jsonl: line 2 is not valid JSON"):
        load_table(path)
