"""Counterfactual pairs (:mod:`mtkit.data.pairs`) found one way: the bias report of a table whose rows share ids
pairs them as training's validation does, and reads TSV as training does; ids that are not one feminine and one
masculine row are counted and named, and drop out of the report alone."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from hypothesis import given
from pair_tables import PROPERTY, TABLES, complete_ids, ids_of, table

from mtkit.cli.bias_report import main as report_main
from mtkit.config import DataConfig
from mtkit.data.corpus import load_parallel, table_rows
from mtkit.data.pairs import NAMED, gendered_words, table_pairs
from mtkit.data.tables import read_table
from mtkit.evaluation.scores import split_scores

REFERENCES = {  # (lang, gender) -> the reference of pair i
    ("de", "feminine"): "Die Ärztin {i} kam heute.",
    ("de", "masculine"): "Der Arzt {i} kam heute.",
    ("es", "feminine"): "La doctora {i} llegó hoy.",
    ("es", "masculine"): "El doctor {i} llegó hoy.",
}
SOURCES = {"feminine": "The doctor {i} came today, she said.", "masculine": "The doctor {i} came today, he said."}
PAIRS = {"de": 4, "es": 3}
#: The rows translated into the other gender (their hypothesis is their counterfactual): every other row is right.
WRONG = {("de", 2, "masculine"), ("de", 3, "feminine"), ("de", 3, "masculine"), ("es", 1, "feminine")}


def rows() -> list[dict[str, str]]:
    """Both genders of every pair, masculine rows of one language before its feminine ones, ids shared across
    languages (a pair is an id within one language)."""
    out = []
    for lang, n in PAIRS.items():
        for gender in ("masculine", "feminine"):
            for i in range(n):
                target = REFERENCES[(lang, gender)].format(i=i)
                source = SOURCES[gender].format(i=i)
                out.append({"ID": str(i), "source": source, "target": target, "gender": gender[0], "lang": lang})
    return out


def hypothesis(lang: str, i: int, gender: str) -> str:
    other = "feminine" if gender == "masculine" else "masculine"
    return REFERENCES[(lang, other if (lang, i, gender) in WRONG else gender)].format(i=i)


def write(path: Path, table: list[dict[str, str]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, list(table[0]), delimiter="\t" if path.suffix == ".tsv" else ",")
        writer.writeheader()
        writer.writerows(table)
    return path


def hyp_dir(folder: Path) -> Path:
    """The report's hypothesis files: line i of ``<lang>.feminine.txt`` and ``<lang>.masculine.txt`` one pair, in
    the order of the feminine rows."""
    folder.mkdir()
    for lang, n in PAIRS.items():
        for gender in ("feminine", "masculine"):
            lines = [hypothesis(lang, i, gender) for i in range(n)]
            (folder / f"{lang}.{gender}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def report(tmp_path: Path, table: Path) -> dict:
    out = tmp_path / "report"
    argv = ["--data", str(table), "--hyp_dir", str(hyp_dir(tmp_path / "hyps")), "--out", str(out)]
    assert report_main([*argv, "--bootstrap_samples", "0", "--no_figures"]) == 0
    return json.loads((out / "metrics.json").read_text(encoding="utf-8"))


def test_shared_ids_pair_the_report_as_they_pair_training_validation(tmp_path):
    table = write(tmp_path / "gendered.csv", rows())
    metrics = report(tmp_path, table)
    expected = {
        lang: sum(all((lang, i, g) not in WRONG for g in SOURCES) for i in range(n)) / n for lang, n in PAIRS.items()
    }  # pairs whose two rows are both translated into their own gender
    assert {lang: metrics["languages"][lang]["accuracy_pair"] for lang in PAIRS} == pytest.approx(expected)
    validation = load_parallel(DataConfig(train_file=str(table), validation_file=str(table), target_langs="de,es"))
    split = validation["validation"]
    hyps = [hypothesis(r["lang"], int(r["pair_id"].split(":")[1]), r["gender"]) for r in split]
    scores = split_scores(split, hyps)
    assert metrics["config"]["paired"] is True
    for lang, n in PAIRS.items():
        assert scores[f"{lang}_accuracy_pair"] == pytest.approx(expected[lang])
        assert metrics["languages"][lang]["n"] == 2 * n == sum(1 for r in split if r["lang"] == lang)
        # each row judged against the other row's reference as its counterfactual (no column gives one)
        details = (tmp_path / "report" / f"{lang}.details.jsonl").read_text(encoding="utf-8").splitlines()
        judged = {(i, g): json.loads(line)[f"correct_{g}"] for i, line in enumerate(details) for g in SOURCES}
        assert judged == {(i, g): (lang, i, g) not in WRONG for i in range(n) for g in SOURCES}
    page = (tmp_path / "report" / "report.html").read_text(encoding="utf-8")
    assert all(f"{lang}: the {n} sentence pairs whose sentence BLEU" in page for lang, n in PAIRS.items())


def test_the_report_reads_tsv(tmp_path):
    table = write(tmp_path / "gendered.tsv", rows())
    metrics = report(tmp_path, table)
    assert {lang: m["n"] for lang, m in metrics["languages"].items()} == {"de": 8, "es": 6}
    assert metrics["config"]["paired"] is True


@PROPERTY
@given(TABLES)
def test_odd_ids_are_counted_and_named_and_every_row_is_accounted_for(rows):
    pairs, counterfactuals = table_pairs(table(rows))
    by_id, complete = ids_of(rows), complete_ids(rows)
    odd = [key for key in by_id if key not in complete]  # in order of their first row
    assert set(pairs.complete) == complete and list(pairs.odd) == odd
    assert {key: pairs.odd[key] for key in odd} == {key: by_id[key] for key in odd}
    without = [i for i, (_, row_id, _) in enumerate(rows) if not row_id]
    assert pairs.alone == without
    assert 2 * len(pairs.complete) + sum(len(idx) for idx in pairs.odd.values()) + len(without) == len(rows)
    for key, (f, m) in pairs.complete.items():  # one feminine and one masculine row of that id
        assert by_id[key] == sorted((f, m)) and (rows[f][2], rows[m][2]) == ("feminine", "masculine")
        assert (counterfactuals[f], counterfactuals[m]) == (f"t{m}", f"t{f}")
    paired = {i for pair in pairs.complete.values() for i in pair}
    assert all(counterfactuals[i] == "" for i in range(len(rows)) if i not in paired)
    assert all(pairs.keys[i] == key for key, idx in by_id.items() for i in idx)
    assert len(set(pairs.keys)) == len(by_id) + len(without)  # a row without an id is a unit of its own
    note = pairs.note("random.csv", "what is done")
    if not odd and len(without) in (0, len(rows)):
        assert note is None
        return
    assert note is not None and "\n" not in note and note.endswith(": what is done")
    if odd:
        rows_odd = sum(len(by_id[key]) for key in odd)
        named = ", ".join(odd[:NAMED]) + (", ..." if len(odd) > NAMED else "")
        assert f"{len(odd)} ID(s) not exactly one feminine and one masculine row ({rows_odd} rows: {named})" in note


def test_a_duplicated_row_drops_its_id_alone_from_the_report(tmp_path, capsys):
    """One feminine row of German pair 2 twice: pair 2 is left out of the German figures, named on stderr, and German
    is still scored as pairs; Spanish is untouched."""
    table_rows = rows()
    table_rows.append(next(r for r in table_rows if (r["lang"], r["ID"], r["gender"]) == ("de", "2", "f")))
    path = write(tmp_path / "gendered.csv", table_rows)
    kept = {"de": [0, 1, 3], "es": list(range(PAIRS["es"]))}
    hyps = tmp_path / "hyps"
    hyps.mkdir()
    for lang, ids in kept.items():  # line k of both files: the k-th kept pair, in the order of the feminine rows
        for gender in ("feminine", "masculine"):
            lines = [hypothesis(lang, i, gender) for i in ids]
            (hyps / f"{lang}.{gender}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "report"
    argv = ["--data", str(path), "--hyp_dir", str(hyps), "--out", str(out), "--bootstrap_samples", "0", "--no_figures"]
    assert report_main(argv) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if "not exactly one feminine" in line]
    assert notes == [
        f"note: {path}: 1 ID(s) not exactly one feminine and one masculine row (3 rows: de:2): left out where their "
        "language has pairs (it is scored on its pairs alone)"
    ]
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["config"]["paired"] is True
    for lang, ids in kept.items():
        both_right = [all((lang, i, g) not in WRONG for g in SOURCES) for i in ids]
        assert metrics["languages"][lang]["accuracy_pair"] == pytest.approx(sum(both_right) / len(ids))
        assert metrics["languages"][lang]["n"] == 2 * len(ids)


def test_the_words_that_carry_a_rows_gender_are_those_the_data_names_else_the_references_difference(tmp_path):
    """A table's ``profession`` column names them (read as the accuracy reads words); without it, the words of the
    reference that its counterfactual lacks."""
    path = tmp_path / "pairs.csv"
    path.write_text("ID,gender,source,target,profession\n1,f,The judge left.,La jueza se fue.,La Jueza\n"
                    "1,m,The judge left.,El juez se fue.,el juez\n", encoding="utf-8")  # fmt: skip
    rows = table_rows(read_table(path, ["es"], flag="--data")).to_list()
    assert [gendered_words(r) for r in rows] == [frozenset({"la", "jueza"}), frozenset({"el", "juez"})]
    derived = [{k: v for k, v in r.items() if k != "words"} for r in rows]
    assert [gendered_words(r) for r in derived] == [frozenset({"la", "jueza"}), frozenset({"el", "juez"})]
    assert gendered_words({"target": "Ella llegó.", "counterfactual": "Él llegó."}) == {"ella"}
