"""The comparison page flags what makes two reports unequal: each report's low-signal warnings, different decoding
settings, different data. Crafted metrics.json files, compared by scripts/compare_reports.py in-process."""

from __future__ import annotations

import copy
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from mtkit.cli.compare_reports import main

GENERATION = {
    "engine": "hf", "beam_size": 4, "length_penalty": 1.0, "max_new_tokens": 254, "max_len_a": 1.5, "max_len_b": 10,
    "prompt": None, "mbr": None, "dtype": "auto", "batch_size": 32, "device": None,
}  # fmt: skip
FIGURES = {"bleu": 31.0, "coverage": 0.92, "accuracy_feminine": 0.7, "accuracy_masculine": 0.9}


def report(folder: Path, *, langs: dict, generation: dict | None, **config) -> Path:
    hypotheses = {"model": "base-model", "generation": generation} if generation else {"hyp_dir": "hyps"}
    config = {"data": "MT-GenEval dev (data)", "split": "dev", "hypotheses": hypotheses, "seed": 1} | config
    metrics = {"languages": langs, "macro": {"bleu": 1.0}, "config": config}
    folder.mkdir()
    (folder / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")
    return folder


@pytest.fixture
def base(tmp_path) -> Path:
    langs = {"de": {"n": 200, **FIGURES}, "es": {"n": 200, **FIGURES}}
    return report(tmp_path / "base", langs=langs, generation=GENERATION)


def caution_lines(markdown: str) -> list[str]:
    return [line[4:] for line in markdown.splitlines() if line.startswith("> - ")]


def test_warnings_and_different_decoding_and_data_come_first(base, tmp_path, capsys):
    garbage = {"n": 100, "bleu": 1.2, "coverage": 0.021, "accuracy_feminine": 1.0, "accuracy_masculine": 1.0}
    langs = {"de": garbage, "es": {"n": 200, **FIGURES}}
    tuned = report(tmp_path / "tuned", langs=langs, generation=GENERATION | {"max_new_tokens": 128, "beam_size": 5},
                   max_samples=100)  # fmt: skip
    assert main([str(base), str(tuned), "--names", "base,tuned", "--out", str(tmp_path / "cmp")]) == 0
    markdown = (tmp_path / "cmp" / "comparison.md").read_text(encoding="utf-8")
    lines = caution_lines(markdown)
    warning = [line for line in lines if line.startswith("tuned: de:")]
    assert len(warning) == 1 and f"{0.021:.1%}" in warning[0] and "BLEU is 1.20" in warning[0]
    assert not [line for line in lines if line.startswith(("base:", "tuned: es"))]  # nothing low there
    decoding = [line for line in lines if "decoded with different settings" in line]
    assert len(decoding) == 1
    assert "max new tokens: 254 against 128" in decoding[0] and "beam size: 4 against 5" in decoding[0]
    assert "length penalty" not in decoding[0]  # the same in both
    assert "different data, subset size (--max_samples): base none, tuned 100." in markdown
    assert "de: base scored 200 hypotheses, tuned 100." in lines
    assert markdown.index("Read with care") < markdown.index("| lang |")  # before the table
    page = ET.fromstring((tmp_path / "cmp" / "comparison.html").read_text(encoding="utf-8").split("\n", 1)[1])
    box = page.find(".//{*}div[@class='cautions']")
    assert [li.text for li in box.iter("{http://www.w3.org/1999/xhtml}li")] == lines
    said = capsys.readouterr().err
    assert [line for line in said.splitlines() if line.startswith("warning: ")] == [f"warning: {x}" for x in lines]


def test_hypotheses_from_files_and_like_for_like(base, tmp_path, capsys):
    read = report(
        tmp_path / "read", langs=json.loads((base / "metrics.json").read_text())["languages"], generation=None
    )
    assert main([str(base), str(read)]) == 0
    lines = caution_lines(capsys.readouterr().out)
    assert len(lines) == 1 and lines[0].startswith("after scored hypotheses read from files (--hyp_dir)")
    same = tmp_path / "same"
    same.mkdir()
    (same / "metrics.json").write_text((base / "metrics.json").read_text())
    assert main([str(base), str(same)]) == 0
    assert "Read with care" not in capsys.readouterr().out


def test_each_report_warning_is_named_after_its_report(base, tmp_path, capsys):
    metrics = json.loads((base / "metrics.json").read_text())
    low = copy.deepcopy(metrics)
    low["languages"]["es"]["coverage"] = 0.3
    (tmp_path / "low").mkdir()
    (tmp_path / "low" / "metrics.json").write_text(json.dumps(low))
    assert main([str(tmp_path / "low"), str(base), "--names", "old,new"]) == 0
    lines = caution_lines(capsys.readouterr().out)
    assert len(lines) == 1 and lines[0].startswith("old: es:") and "30.0%" in lines[0]


def test_an_older_reports_beam_size_is_compared_with_a_newer_reports_num_beams(base, tmp_path):
    """Reports before the one decoding settings object wrote ``beam_size`` (``base``: that format); newer ones write
    ``num_beams`` (:meth:`mtkit.evaluation.generation.ReportDecoding.record`'s keys)."""
    newer = {("num_beams" if key == "beam_size" else key): value for key, value in GENERATION.items()}
    newer |= {"source_lang": "en", "max_source_tokens": None}
    langs = {"de": {"n": 200, **FIGURES}, "es": {"n": 200, **FIGURES}}
    same = report(tmp_path / "same", langs=langs, generation=newer)
    other = report(tmp_path / "other", langs=langs, generation=newer | {"num_beams": 5})
    for folder, expected in ((same, []), (other, ["beam size: 4 against 5"])):
        out = tmp_path / f"cmp-{folder.name}"
        assert main([str(base), str(folder), "--names", "old,new", "--out", str(out)]) == 0
        lines = [line for line in caution_lines((out / "comparison.md").read_text()) if "decoded with" in line]
        assert [part for line in lines for part in expected if part in line] == expected and len(lines) == len(expected)
