import gzip
import json

import pytest
from testing_utils import MULTI30K

from mtkit.config import DataConfig
from mtkit.data import load_parallel, read_lines
from mtkit.errors import UserError


def folder(tmp_path, **files: str):
    for name, text in files.items():
        (tmp_path / name.replace("_", ".")).write_text(text, encoding="utf-8")
    return tmp_path


def test_multi30k_folder_with_gz_files():
    if not MULTI30K.is_dir():
        pytest.skip("../shared/data/multi30k is not there")
    cfg = DataConfig(data_dir=str(MULTI30K), target_lang="fr", validation_split="val", test_split="test_2016_flickr")
    data = load_parallel(cfg)
    assert {k: len(v) for k, v in data.items()} == {"train": 29000, "validation": 1014, "test": 1000}
    with gzip.open(MULTI30K / "val.fr.gz", "rt", encoding="utf-8") as f:
        assert data["validation"][0]["target"] == f.readline().rstrip("\n")


def test_plain_folder_without_test_split(tmp_path):
    d = folder(tmp_path, train_en="a\nb\n", train_de="x\ny\n", valid_en="c\n", valid_de="z\n")
    data = load_parallel(DataConfig(data_dir=str(d)))
    assert data["train"]["source"] == ["a", "b"] and data["train"]["target"] == ["x", "y"]
    assert "test" not in data


NOTEBOOK_CSV = (
    "ID,input_to_translate,label,gender,language_pair\n"
    '1,"The nurse, she said.","Die Krankenschwester, sagte sie.",feminine,en_de\n'
    "2,The doctor.,El doctor.,masculine,en_es\n"
    '1,"The nurse, he said.","Der Krankenpfleger, sagte er.",masculine,en_de\n'
    "3,The doctor.,Der Arzt.,m,en_de\n"
)


def test_gender_bias_notebook_csv_keeps_every_language_pair(tmp_path):
    csv = tmp_path / "train.csv"
    csv.write_text(NOTEBOOK_CSV)
    data = load_parallel(DataConfig(train_file=str(csv), validation_file=str(csv), target_lang="fr"))
    train = data["train"]
    assert train["lang"] == ["de", "es", "de", "de"]
    assert train["gender"] == ["feminine", "masculine", "masculine", "masculine"]
    # ID 1 in German has both genders: a counterfactual pair; the others stand alone.
    assert train["pair_id"][0] == train["pair_id"][2] == "de:1" and len(set(train["pair_id"])) == 3
    assert train["counterfactual"] == ["Der Krankenpfleger, sagte er.", "", "Die Krankenschwester, sagte sie.", ""]
    only_de = load_parallel(DataConfig(train_file=str(csv), validation_file=str(csv), target_langs="de"))
    assert only_de["validation"]["target"] == [
        "Die Krankenschwester, sagte sie.", "Der Krankenpfleger, sagte er.", "Der Arzt."
    ]  # fmt: skip
    with pytest.raises(UserError, match="^--target_langs: no rows of .* into it$"):
        load_parallel(DataConfig(train_file=str(csv), validation_file=str(csv), target_langs="it"))


def test_jsonl_of_the_same_shape_and_a_held_out_validation(tmp_path):
    jsonl = tmp_path / "train.jsonl"
    rows = [
        {"ID": i // 2, "input_to_translate": f"s{i}", "label": f"t{i}", "gender": "fm"[i % 2], "language_pair": lp}
        for lp in ("en_de", "en_it") for i in range(40)
    ]  # fmt: skip
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = load_parallel(DataConfig(train_file=str(jsonl), validation_fraction=0.25), seed=3)
    assert len(data["train"]) == 60 and len(data["validation"]) == 20
    assert sorted(data["validation"]["lang"]) == ["de"] * 10 + ["it"] * 10
    assert not set(data["train"]["pair_id"]) & set(data["validation"]["pair_id"])


def test_tsv_and_jsonl_with_named_columns(tmp_path):
    tsv = tmp_path / "d.tsv"
    tsv.write_text("en\tfr\nhello\tbonjour\n")
    jsonl = tmp_path / "d.jsonl"
    jsonl.write_text(json.dumps({"src": "hi", "tgt": "salut"}) + "\n")
    data = load_parallel(DataConfig(train_file=str(tsv), validation_file=str(jsonl), target_lang="fr"))
    assert data["train"][0] == {"source": "hello", "target": "bonjour", "lang": "fr"}
    assert data["validation"][0] == {"source": "hi", "target": "salut", "lang": "fr"}


@pytest.mark.parametrize(
    ("files", "message"),
    [
        (
            {"train_en": "a\nb\n", "train_de": "x\n", "valid_en": "c\n", "valid_de": "z\n"},
            "2 source lines but 1 target",
        ),
        ({"train_en": "", "train_de": "", "valid_en": "c\n", "valid_de": "z\n"}, "file is empty"),
        (
            {"train_en": "a\n\n", "train_de": "x\ny\n", "valid_en": "c\n", "valid_de": "z\n"},
            "empty source sentence at line 2",
        ),
        ({"train_en": "a\n", "train_de": "x\n"}, "no file valid.en or valid.en.gz"),
    ],
)
def test_bad_folders(tmp_path, files, message):
    with pytest.raises(UserError, match=message):
        load_parallel(DataConfig(data_dir=str(folder(tmp_path, **files))))


def test_invalid_utf8_names_file_and_line(tmp_path):
    bad = tmp_path / "train.en"
    bad.write_bytes(b"fine\nalso fine\nbroken \xff\xfe\n")
    with pytest.raises(UserError, match=r"train.en: invalid UTF-8 at line 3"):
        read_lines(bad)


def test_needs_exactly_one_source(tmp_path):
    with pytest.raises(UserError, match="exactly one of"):
        load_parallel(DataConfig())
    with pytest.raises(UserError, match="not a folder"):
        load_parallel(DataConfig(data_dir=str(tmp_path / "nope")))
    with pytest.raises(UserError, match="x.csv: file not found"):
        load_parallel(DataConfig(train_file=str(tmp_path / "x.csv")))


def test_hub_translation_schema_through_load_dataset(tmp_path):
    """A local folder in the hub's `translation` layout goes through the same `load_dataset` path as wmt14."""
    for split, n in (("train", 5), ("validation", 2), ("test", 3)):
        rows = [{"translation": {"en": f"{split} {i}", "de": f"{split} de {i}"}} for i in range(n)]
        (tmp_path / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = load_parallel(DataConfig(dataset_name=str(tmp_path), validation_split="valid"))
    assert {k: len(v) for k, v in data.items()} == {"train": 5, "validation": 2, "test": 3}
    assert data["test"][2] == {"source": "test 2", "target": "test de 2", "lang": "de"}
    assert "test" not in load_parallel(DataConfig(dataset_name=str(tmp_path), test_split="none"))
