import csv
import gzip
import json
from collections import Counter

import pytest
from testing_utils import MTGENEVAL, MULTI30K

from bias_eval.core.textio import read_lines
from mtkit.config import DataConfig
from mtkit.data.corpus import load_parallel
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
    assert {name: set(split["lang"]) for name, split in data.items()} == {k: {"fr"} for k in data}
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
    data = load_parallel(DataConfig(train_file=str(csv), validation_file=str(csv), target_langs="de,es"))
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
    with pytest.raises(
        UserError, match=r"^--target_langs: it has no rows in .*train.csv \(its rows are in: de 3, es 1\)$"
    ):
        load_parallel(DataConfig(train_file=str(csv), validation_file=str(csv), target_langs="it"))


def test_jsonl_of_the_same_shape_and_a_held_out_validation(tmp_path):
    jsonl = tmp_path / "train.jsonl"
    rows = [
        {"ID": i // 2, "input_to_translate": f"s{i}", "label": f"t{i}", "gender": "fm"[i % 2], "language_pair": lp}
        for lp in ("en_de", "en_it") for i in range(40)
    ]  # fmt: skip
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = load_parallel(DataConfig(train_file=str(jsonl), validation_fraction=0.25, target_langs="de,it"), seed=3)
    assert len(data["train"]) == 60 and len(data["validation"]) == 20
    assert sorted(data["validation"]["lang"]) == ["de"] * 10 + ["it"] * 10
    assert not set(data["train"]["pair_id"]) & set(data["validation"]["pair_id"])


def mtgeneval_csv(path, n: int) -> dict[tuple[str, str], list[str]]:
    """The first ``n`` MT-GenEval dev sentences of each language and gender as one gendered CSV, ID = line index;
    returns the references read straight from the files."""
    refs, writer_rows = {}, []
    for lang in ("de", "es", "fr", "it", "pt"):
        for gender in ("feminine", "masculine"):
            stem = MTGENEVAL / "sentences" / "dev" / f"geneval-sentences-{gender}-dev.en_{lang}"
            src = stem.with_name(stem.name + ".en").read_text(encoding="utf-8").splitlines()[:n]
            refs[(lang, gender)] = stem.with_name(f"{stem.name}.{lang}").read_text(encoding="utf-8").splitlines()[:n]
            writer_rows += [[i, s, t, gender, f"en_{lang}"] for i, (s, t) in enumerate(zip(src, refs[(lang, gender)]))]
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([["ID", "input_to_translate", "label", "gender", "language_pair"], *writer_rows])
    return refs


@pytest.mark.skipif(not MTGENEVAL.is_dir(), reason="../shared/data/mt-geneval is not there")
def test_csv_of_every_language_pair_with_counterfactuals_and_a_held_out_split(tmp_path):
    refs = mtgeneval_csv(tmp_path / "all.csv", 20)
    cfg = DataConfig(train_file=str(tmp_path / "all.csv"), validation_fraction=0.2, target_langs="de,es,fr,it,pt")
    data = load_parallel(cfg, seed=4)
    rows = [*data["train"], *data["validation"]]
    assert Counter((r["lang"], r["gender"]) for r in rows) == {key: len(lines) for key, lines in refs.items()}
    for r in rows:
        lang, i = r["pair_id"].split(":")
        other = "masculine" if r["gender"] == "feminine" else "feminine"
        assert lang == r["lang"] and r["target"] == refs[(lang, r["gender"])][int(i)]
        assert r["counterfactual"] == refs[(lang, other)][int(i)]
    assert not set(data["train"]["pair_id"]) & set(data["validation"]["pair_id"])
    assert Counter(data["validation"]["lang"]) == {lang: 2 * 4 for lang in ("de", "es", "fr", "it", "pt")}
    two = load_parallel(DataConfig(train_file=str(tmp_path / "all.csv"), target_langs="fr,pt"), seed=4)
    assert sorted({*two["train"]["lang"], *two["validation"]["lang"]}) == ["fr", "pt"]
    assert len(two["train"]) + len(two["validation"]) == sum(
        len(v) for (lang, _), v in refs.items() if lang in ("fr", "pt")
    )


def test_gendered_table_without_pairs_and_errors_by_line(tmp_path):
    path = tmp_path / "g.jsonl"
    rows = [
        {"input_to_translate": "a", "label": "b", "gender": "F", "language_pair": "en_de"},
        {"input_to_translate": "c", "label": "d", "gender": "female", "language_pair": "en-es"},
        {"input_to_translate": "e", "label": "f", "gender": "m", "language_pair": "EN_ES"},
        {"input_to_translate": "g", "label": "h", "gender": "m", "language_pair": "en_de"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = load_parallel(DataConfig(train_file=str(path), validation_file=str(path), target_langs="de,es"))["train"]
    assert list(data["lang"]) == ["de", "es", "es", "de"]
    assert list(data["gender"]) == ["feminine", "feminine", "masculine", "masculine"]
    assert list(data["pair_id"]) == ["de:row0", "es:row1", "es:row2", "de:row3"]
    assert list(data["counterfactual"]) == [""] * 4
    path.write_text("\n" + path.read_text().replace('"m", "language_pair": "EN_ES"', '"x", "language_pair": "EN_ES"'))
    with pytest.raises(UserError, match=r"g.jsonl: line 4: gender 'x' is not"):  # the file's line, after filtering
        load_parallel(DataConfig(train_file=str(path), validation_file=str(path), target_langs="es"))


def test_max_train_samples_applies_after_the_held_out_split(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_text("source\ttarget\n" + "".join(f"s{i}\tt{i}\n" for i in range(50)))
    full = load_parallel(DataConfig(train_file=str(path), validation_fraction=0.2, target_lang="it"))
    capped = load_parallel(
        DataConfig(train_file=str(path), validation_fraction=0.2, target_lang="it", max_train_samples=7)
    )
    assert len(full["validation"]) == 10 and list(capped["validation"]["source"]) == list(full["validation"]["source"])
    assert list(capped["train"]["source"]) == list(full["train"]["source"])[:7] and set(capped["train"]["lang"]) == {
        "it"
    }
    with pytest.raises(UserError, match=r"^--validation_fraction: must be between 0 and 1 \(exclusive\), got 2.0$"):
        load_parallel(DataConfig(train_file=str(path), validation_fraction=2.0))


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
