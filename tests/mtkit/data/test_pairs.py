"""Counterfactual pairs (:mod:`mtkit.data.pairs`) found one way: the bias report of a table whose rows share ids
pairs them as training's validation does, and reads TSV as training does."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from mtkit.cli.bias_report import main as report_main
from mtkit.config import DataConfig
from mtkit.data.corpus import load_parallel
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
    assert report_main([*argv, "--bootstrap_samples", "0"]) == 0
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
