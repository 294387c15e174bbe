"""The one table reader (:mod:`mtkit.data.tables`): a language column honoured, language values read or refused
with their line, a language asked for that the data lacks refused, rows of other languages left out and counted."""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from pathlib import Path

import pytest
from datasets import DatasetDict
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from transformers import AutoTokenizer

from mtkit.config import DataConfig, parse_config
from mtkit.data import tables
from mtkit.data.corpus import load_parallel
from mtkit.data.gendered_tables import load_table as load_gendered_table
from mtkit.data.mitigation_data import mitigation_splits
from mtkit.data.preprocess import tokenize_split
from mtkit.data.tables import read_records, read_table
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
    ("column", "value", "lang"),
    [("lang", "de", "de"), ("lang", "deu", "de"), ("lang", "de_DE", "de-DE"), ("lang", "deu_Latn", "de-Latn"),
     ("lang", "ZH-CN", "zh-CN"), ("lang", "PT-BR", "pt-BR"), ("lang", "EN-US", "en-US"), ("lang", "pt_br", "pt-BR"),
     ("lang", "zh_hant", "zh-Hant"), ("lang", "es-419", "es-419"), ("target_language", "spa", "es"),
     ("language_pair", "en-de", "de"), ("language_pair", "en_de", "de"), ("language_pair", "EN_DE", "de"),
     ("language_pair", "eng_Latn-spa_Latn", "es-Latn"), ("language_pair", "en_ca", "ca"),
     ("language_pair", "en-zh_Hant", "zh-Hant"), ("lang_pair", "en-pt-BR", "pt-BR")],
)  # fmt: skip
def test_language_values(column, value, lang):
    """A language column holds one tag (a two-letter subtag after the language is its region); a pair column holds
    SOURCE-TARGET, read with the run's source language where it reads two ways."""
    assert str(tables.cell_language(value, column, "t.csv: line 2")) == lang


@pytest.mark.parametrize(
    ("column", "value", "why"),
    [("lang", "German", "is not a language code"), ("lang", "us", "is not a language code"),
     ("lang", "", "is not a language code"), ("lang", "en/de", "is not a language code"),
     ("lang", "eng_Latn-deu_Latn", "is not a language code .*; for a language pair, name the column language_pair"),
     ("language_pair", "de", "is not a language pair"), ("language_pair", "English-German", "is not a language pair"),
     ("language_pair", "pt-BR-es", r"reads two ways \(pt into br-ES or pt-BR into es\); give the target in a lang")],
)  # fmt: skip
def test_language_values_refused(column, value, why):
    with pytest.raises(UserError, match=rf"^t.csv: line 2: {column} {re.escape(repr(value))} {why}"):
        tables.cell_language(value, column, "t.csv: line 2")


def test_a_language_value_it_cannot_read_is_refused_with_its_line(tmp_path):
    table = two_languages(tmp_path / "train.csv", column="language_pair", de="en-de", es="en_es")
    lines = table.read_text(encoding="utf-8").splitlines()
    lines[3] = lines[3].replace("en-de", "English-German")
    table.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(UserError) as refused:  # the row is not dropped: the run stops before anything is written
        load_parallel(DataConfig(train_file=str(table), target_langs="de,es"))
    assert str(refused.value) == (
        f"{table}: line 4: language_pair 'English-German' is not a language pair "
        "(SOURCE-TARGET: en-de, en_de, eng_Latn-deu_Latn)"
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
    assert data.left_out == {str(jsonl): {"es-ES": 3}}
    said = f"{jsonl}: left out 3 rows in languages not in --target_langs (es-ES 3); kept 6 in de, fr"
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
        rows = [{"source": f"{split} {i}", "target": f"t {i}", "language_pair": langs[i % 3]} for i in range(n)]
        (tmp_path / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = load_parallel(DataConfig(dataset_name=str(tmp_path), validation_split="validation", target_langs="de,es"))
    assert data["train"]["lang"] == ["de", "es", "de", "es"] and data["validation"]["lang"] == ["de", "es"]
    assert data.left_out == {
        f"--dataset_name {tmp_path} ({split})": {"fr": n} for split, n in (("train", 2), ("validation", 1))
    }
    row = {"source": "a", "target": "b", "language_pair": "en-Deutsch"}
    (tmp_path / "validation.jsonl").write_text(json.dumps(row) + "\n")
    with pytest.raises(UserError, match=r"\(validation\): row 1: language_pair 'en-Deutsch' is not a language pair"):
        load_parallel(DataConfig(dataset_name=str(tmp_path), validation_split="validation", target_langs="de,es"))


def rows_of(path: Path) -> list[dict[str, str]]:
    return [row for _, row in read_records(path)]


def test_tsv_is_read_without_quoting(tmp_path):
    """TSV is not quoted: quotes are text, an unclosed one swallows nothing; a row of another width is refused."""
    pairs = [('"Hello," she said.', '"Hallo", sagte sie.'), ('"An open quote', "no close"), ("Third.", "Dritte.")]
    path = tmp_path / "t.tsv"
    path.write_text("".join(f"{s}\t{t}\n" for s, t in [("source", "target"), *pairs]), encoding="utf-8")
    assert rows_of(path) == [{"source": s, "target": t} for s, t in pairs]
    path.write_text("source\ttarget\na\tb\nc\td\te\n", encoding="utf-8")
    with pytest.raises(UserError, match=rf"^{re.escape(str(path))}: line 3 has 3 fields, its header line 2$"):
        read_records(path)


@pytest.mark.parametrize("suffix", [".csv", ".tsv"])
@pytest.mark.parametrize("second", ["source", "Source ", "SOURCE"])
def test_two_columns_of_one_name_are_refused(tmp_path, suffix, second):
    """A header that names one column twice (in any case) is refused with its line: which cell to read is unsaid."""
    path = write_csv(tmp_path / f"t{suffix}", ["source", "target", second], [["a", "b", "c"]])
    message = f"^{re.escape(str(path))}: line 1: columns 'source' and {second!r} have one name: which to read\\?$"
    with pytest.raises(UserError, match=message):
        read_records(path)


def test_a_csv_row_is_named_by_the_file_line_it_starts_on(tmp_path):
    """Lines count the header, blank lines and the line ends inside quoted cells; a ragged row is refused."""
    path = tmp_path / "t.csv"
    path.write_text('source,target\n\n"x\ny",z\nc,d\n', encoding="utf-8")
    assert [(line, row["source"]) for line, row in read_records(path)] == [(3, "x\ny"), (5, "c")]
    path.write_text('source,target\na,b\n"two\nlines",x\nc\n', encoding="utf-8")
    with pytest.raises(UserError, match=rf"^{re.escape(str(path))}: line 5 has 1 field, its header line 2$"):
        read_records(path)


def lang_table(path: Path, langs: list[str], column: str = "lang") -> Path:
    return write_csv(path, ["source", "target", column], [[f"s{i}", f"t{i}", lang] for i, lang in enumerate(langs)])


def test_language_variants_are_kept_apart(tmp_path, capsys):
    """``pt_BR`` takes pt-BR rows only (not pt-PT, not a row that says just pt); ``pt`` takes every variant; zh-Hans
    and zh-Hant asked together each take their own; region subtags are regions, whatever their case."""
    path = lang_table(tmp_path / "pt.csv", ["pt-BR", "pt_PT", "PT-BR", "pt", "pt-pt"])
    table = read_table(path, ["pt_BR"])
    assert (table.source, table.lang, table.left_out) == (["s0", "s2"], ["pt_BR"] * 2, {"pt": 1, "pt-PT": 2})
    said = "left out 3 rows in languages not in --target_langs (pt 1, pt-PT 2); kept 2 in pt_BR"
    assert said in capsys.readouterr().err
    assert read_table(path, ["pt"]).lang == ["pt"] * 5
    both = read_table(path, ["pt-BR", "pt_PT"])
    assert (both.source, both.lang) == (["s0", "s1", "s2", "s4"], ["pt-BR", "pt_PT", "pt-BR", "pt_PT"])
    with pytest.raises(UserError, match=r"^--target_langs: pt and pt_BR overlap \(a pt-BR row would be both\)"):
        read_table(path, ["pt", "pt_BR"])
    path = lang_table(tmp_path / "zh.csv", ["zh-Hans", "zh_Hant", "zh-hant-TW", "ZH-CN"])
    table = read_table(path, ["zh_Hans", "zh_Hant"])
    assert (table.source, table.lang, table.left_out) == (["s0", "s1", "s2"], ["zh_Hans", "zh_Hant", "zh_Hant"],
                                                          {"zh-CN": 1})  # fmt: skip
    path = lang_table(tmp_path / "tags.csv", ["ZH-CN", "PT-BR", "EN-US", "de"])
    assert read_table(path, None).lang == ["zh-CN", "pt-BR", "en-US", "de"]
    assert read_table(path, ["zh", "pt", "en", "de"]).lang == ["zh", "pt", "en", "de"]  # none dropped


def test_language_columns_that_disagree_are_refused(tmp_path):
    path = write_csv(tmp_path / "t.csv", ["source", "target", "lang", "language_pair"],
                     [["a", "b", "de", "en-de"], ["c", "d", "de", "en-es"]])  # fmt: skip
    with pytest.raises(UserError) as refused:
        read_table(path, ["de", "es"])
    assert str(refused.value) == f"{path}: line 3: the language columns disagree (lang 'de', language_pair 'en-es')"
    path = write_csv(tmp_path / "u.csv", ["source", "target", "lang", "language_pair"], [["a", "b", "deu", "en-de"]])
    assert read_table(path, ["de"]).lang == ["de"]


def gendered_rows(target: str) -> list[dict[str, str]]:
    rows = [{"id": "1", "gender": "f", "source": "She came.", "target": "Sie kam.", "lang": "de"},
            {"id": "1", "gender": "m", "source": "He came.", "target": "Er kam.", "lang": "de"}]  # fmt: skip
    rows[1]["target"] = target
    return rows


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
@pytest.mark.parametrize("brk", ["\n", "\r\n", "\u2028", "\u2029", "\x85"])
def test_a_line_break_in_a_cell_is_refused_where_rows_are_written_one_a_line(tmp_path, suffix, brk):
    """The bias report's table and a mitigation's --gender_data are written one sentence a line: a cell with a line
    break is refused when read (before any training), naming the file, the line and the column."""
    rows = gendered_rows(f"Er{brk}kam.")
    path = tmp_path / f"g{suffix}"
    if suffix == ".csv":
        write_csv(path, list(rows[0]), [list(r.values()) for r in rows])
    else:
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    line = 3 if suffix == ".csv" else 2  # after the header, or none
    said = rf"^{re.escape(str(path))}: line {line}, column 'target': a line break \(U\+{ord(brk[0]):04X}\) in the cell"
    with pytest.raises(UserError, match=said):
        load_gendered_table(path, ["de"])
    cfg = parse_config(["--train_file", str(path), "--target_lang", "de", "--model_name_or_path", "m",
                        "--gender_data", str(path)])  # fmt: skip
    with pytest.raises(UserError, match=said):
        mitigation_splits(cfg, DatasetDict())
    assert read_table(path, ["de"]).target[1] == f"Er{brk}kam."  # training's own tables may hold one


#: Every character str.splitlines() ends a line at, found by asking it.
SPLITS = "".join(c for c in map(chr, range(0x110000)) if len(f"a{c}b".splitlines()) > 1)
BOM = b"\xef\xbb\xbf"
HYPOTHESIS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def cells(exclude: str = "") -> st.SearchStrategy[str]:
    """Any text (NUL, refused in every text file, left out), less ``exclude``."""
    return st.text(st.characters(codec="utf-8", exclude_characters="\x00" + exclude), max_size=8)


@st.composite
def any_tables(draw, cell: st.SearchStrategy[str], header_cell: st.SearchStrategy[str], min_rows: int = 0):
    header = draw(st.lists(header_cell, min_size=1, max_size=4, unique_by=lambda name: name.strip().lower()))
    rows = draw(st.lists(st.lists(cell, min_size=len(header), max_size=len(header)), min_size=min_rows, max_size=5))
    return header, rows


def write_csv_text(header: list[str], rows: list[list[str]], eol: str) -> tuple[str, list[int]]:
    """The CSV Python's ``csv`` writes, and the line each row starts on (line ends counted before it)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator=eol)
    writer.writerow(header)
    starts = []
    for row in rows:
        starts.append(len(re.findall(r"\r\n|\r|\n", buffer.getvalue())) + 1)
        writer.writerow(row)
    return buffer.getvalue(), starts


def write_bytes(path: Path, text: str, bom: bool) -> Path:
    path.write_bytes((BOM if bom else b"") + text.encode("utf-8"))
    return path


@HYPOTHESIS
@given(any_tables(cells(), cells("\ufeff")), st.booleans(), st.booleans())
def test_any_csv_reads_back_as_written(tmp_path, table, bom, crlf):
    """Any text in any cell (line ends too: CSV quotes them); with LF line ends, no lone \\r in a cell: Python's
    writer leaves it unquoted then, and no reader could tell it from a line end."""
    header, rows = table
    assume(crlf or "\r" not in "".join(map("".join, rows)) + "".join(header))
    text, starts = write_csv_text(header, rows, "\r\n" if crlf else "\n")
    records = read_records(write_bytes(tmp_path / "t.csv", text, bom))
    assert records == [(line, dict(zip(header, row))) for line, row in zip(starts, rows)]


@HYPOTHESIS
@given(any_tables(cells("\t\n\r"), cells("\t\n\r\ufeff")), st.booleans(), st.booleans())
def test_any_tsv_reads_back_as_written(tmp_path, table, bom, crlf):
    """Cells without tabs or line ends, joined by tabs (quotes and U+2028 are text); blank lines are no rows."""
    header, rows = table
    assume(all("\t".join(row) for row in [header, *rows]))  # one empty cell alone is a blank line, no row
    eol = "\r\n" if crlf else "\n"
    text = "".join("\t".join(row) + eol for row in [header, *rows])
    records = read_records(write_bytes(tmp_path / "t.tsv", text, bom))
    assert records == [(i + 2, dict(zip(header, row))) for i, row in enumerate(rows)]


@HYPOTHESIS
@given(any_tables(cells(), cells(), min_rows=1), st.booleans(), st.booleans(), st.booleans())
def test_any_jsonl_reads_back_as_written(tmp_path, table, bom, crlf, ascii_only):
    """``json.dumps`` per line, with U+2028 and its kind written raw or escaped: they are text, not line ends."""
    header, rows = table
    eol = "\r\n" if crlf else "\n"
    text = "".join(json.dumps(dict(zip(header, row)), ensure_ascii=ascii_only) + eol for row in rows)
    records = read_records(write_bytes(tmp_path / "t.jsonl", text, bom))
    assert records == [(i + 1, dict(zip(header, row))) for i, row in enumerate(rows)]


@HYPOTHESIS
@given(
    st.lists(st.tuples(cells(SPLITS), cells(SPLITS)), min_size=1, max_size=4),
    st.data(),
    st.sampled_from(SPLITS),
    st.sampled_from([".csv", ".jsonl"]),
)
def test_a_cell_with_a_line_break_is_refused_where_line_aligned(tmp_path, pairs, data, brk, suffix):
    """Without line breaks a line-aligned table reads as written; with one anywhere in a sentence cell, it is
    refused naming the file, the row's line and the column."""
    header = ["source", "target", "lang"]
    rows = [[s, t, "de"] for s, t in pairs]
    path = tmp_path / f"t{suffix}"

    def write() -> list[int]:
        if suffix == ".csv":
            text, starts = write_csv_text(header, rows, "\r\n")
        else:
            text, starts = "".join(json.dumps(dict(zip(header, r)), ensure_ascii=False) + "\n" for r in rows), []
        write_bytes(path, text, bom=False)
        return starts or list(range(1, len(rows) + 1))

    write()
    table = read_table(path, ["de"], line_aligned=True)
    assert list(zip(table.source, table.target)) == pairs
    row, column = data.draw(st.integers(0, len(rows) - 1)), data.draw(st.sampled_from([0, 1]))
    at = data.draw(st.integers(0, len(rows[row][column])))
    rows[row][column] = rows[row][column][:at] + brk + rows[row][column][at:]
    line = write()[row]
    said = rf"^{re.escape(str(path))}: line {line}, column '{header[column]}': a line break \(U\+{ord(brk):04X}\)"
    with pytest.raises(UserError, match=said):
        read_table(path, ["de"], line_aligned=True)
    assert read_table(path, ["de"]).source == [r[0] for r in rows]  # read as written where not line-aligned
