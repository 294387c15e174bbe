"""The one table reader (:mod:`mtkit.data.tables`): a language column honoured, language values read or refused
with their line, a language asked for that the data lacks refused, rows of other languages left out and counted."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import pytest
from transformers import AutoTokenizer

from mtkit.config import DataConfig
from mtkit.data.corpus import load_parallel
from mtkit.data.languages import table_language
from mtkit.data.preprocess import tokenize_split
from mtkit.errors import UserError

#: NLLB's own codes, written here by hand: the first label token of a pair into each language.
NLLB = {"de": "deu_Latn", "es": "spa_Latn"}


def write_csv(path: Path, header: list[str], rows: list[list]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as f:
        csv.writer(f, delimiter="\t" if path.suffix == ".tsv" else ",").writerows([header, *rows])
    return path


def two_languages(path: Path, column: str = "lang", de: str = "de", es: str = "es") -> Path:
    """Six German and four Spanish rows, the target's words saying which language each row is in."""
    rows = [[f"The cat {i}.", f"Die Katze {i}.", de] for i in range(6)]
    rows += [[f"The dog {i}.", f"El perro {i}.", es] for i in range(4)]
    return write_csv(path, ["source", "target", column], rows)


def test_a_lang_column_is_honoured_in_training(family_dir, tmp_path):
    """Each row is tokenized into its own language: the NLLB code starting its labels is the one its lang says."""
    table = two_languages(tmp_path / "train.csv")
    cfg = DataConfig(train_file=str(table), validation_file=str(table), target_langs="de,es")
    train = load_parallel(cfg)["train"]
    tokenizer = AutoTokenizer.from_pretrained(str(family_dir("nllb")))
    labels = tokenize_split(train, tokenizer, cfg)["labels"]
    first = [tokenizer.convert_ids_to_tokens(ids[0]) for ids in labels]
    expected = [NLLB["de" if "Katze" in t else "es"] for t in train["target"]]
    assert first == expected and Counter(first) == {"deu_Latn": 6, "spa_Latn": 4}


@pytest.mark.parametrize(
    ("value", "lang"),
    [("de", "de"), ("en-de", "de"), ("en_de", "de"), ("EN_DE", "de"), ("deu_Latn", "de"), ("de_DE", "de"),
     ("eng_Latn-spa_Latn", "es"), ("spa", "es"), ("pt_BR", "pt"), ("fr_CA", "fr"), ("en_ca", "ca"),
     ("English-German", None), ("German", None), ("", None), ("en/de", None)],
)  # fmt: skip
def test_language_values(value, lang):
    assert table_language(value) == lang


def test_a_language_value_it_cannot_read_is_refused_with_its_line(tmp_path):
    table = two_languages(tmp_path / "train.csv", column="language_pair", de="en-de", es="en_es")
    lines = table.read_text(encoding="utf-8").splitlines()
    lines[3] = lines[3].replace("en-de", "English-German")
    table.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(UserError) as refused:  # the row is not dropped: the run stops before anything is written
        load_parallel(DataConfig(train_file=str(table), target_langs="de,es"))
    assert str(refused.value) == (
        f"{table}: line 4: target language 'English-German' is not a language code "
        "(de, deu, de_DE, deu_Latn, or a pair en-de, en_de, eng_Latn-deu_Latn)"
    )


def test_a_target_language_the_data_lacks_is_refused(tmp_path):
    table = two_languages(tmp_path / "train.csv")
    refused = r"^--target_langs: fr has no rows in .*train.csv \(its rows are in: de 6, es 4\)$"
    with pytest.raises(UserError, match=refused):
        load_parallel(DataConfig(train_file=str(table), target_langs="de,es,fr"))
    with pytest.raises(UserError, match=r"^--target_lang: it has no rows in .*\(its rows are in: de 6, es 4\)$"):
        load_parallel(DataConfig(train_file=str(table), target_lang="it"))


def test_rows_of_languages_not_asked_for_are_left_out_and_counted(tmp_path, capsys):
    jsonl = tmp_path / "train.jsonl"
    codes = ["deu_Latn", "es_ES", "fra"]
    rows = [{"src": f"s{i}", "label": f"t{i}", "target_language": codes[i % 3]} for i in range(9)]
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    data = load_parallel(DataConfig(train_file=str(jsonl), target_langs="de,fr", validation_fraction=0.5))
    assert sorted([*data["train"]["lang"], *data["validation"]["lang"]]) == ["de"] * 3 + ["fr"] * 3
    assert data.left_out == {str(jsonl): {"es": 3}}
    said = f"{jsonl}: left out 3 rows in languages not in --target_langs (es 3); kept 6 in de, fr"
    assert said in capsys.readouterr().err


def test_one_language_without_a_column_and_several_refused(tmp_path):
    table = write_csv(tmp_path / "t.tsv", ["en", "es"], [["hello", "hola"], ["bye", "adiós"]])
    assert load_parallel(DataConfig(train_file=str(table), validation_file=str(table), target_lang="es"))["train"][
        "lang"
    ] == ["es", "es"]
    table = write_csv(tmp_path / "u.tsv", ["source", "target"], [["hello", "hola"], ["bye", "adiós"]])
    with pytest.raises(UserError, match=r"u.tsv: no target-language column .* --target_langs names 2 languages"):
        load_parallel(DataConfig(train_file=str(table), target_langs="es,de"))


def test_a_hub_dataset_with_a_table_s_columns_is_read_as_a_table(tmp_path):
    """A hub dataset without a ``translation`` column (a local folder through the same ``load_dataset``): its rows
    in their own languages, the others left out, a bad value named by its row."""
    langs = ["en-de", "en-es", "en-fr"]
    for split, n in (("train", 6), ("validation", 3)):
        rows = [{"source": f"{split} {i}", "target": f"t {i}", "lang": langs[i % 3]} for i in range(n)]
        (tmp_path / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = load_parallel(DataConfig(dataset_name=str(tmp_path), validation_split="validation", target_langs="de,es"))
    assert data["train"]["lang"] == ["de", "es", "de", "es"] and data["validation"]["lang"] == ["de", "es"]
    assert data.left_out == {
        f"--dataset_name {tmp_path} ({split})": {"fr": n} for split, n in (("train", 2), ("validation", 1))
    }
    (tmp_path / "validation.jsonl").write_text(json.dumps({"source": "a", "target": "b", "lang": "Deutsch"}) + "\n")
    with pytest.raises(UserError, match=r"\(validation\): row 1: target language 'Deutsch' is not a language code"):
        load_parallel(DataConfig(dataset_name=str(tmp_path), validation_split="validation", target_langs="de,es"))
