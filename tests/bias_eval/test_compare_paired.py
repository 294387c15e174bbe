"""Reading a report's per-sentence details for the paired tests (:func:`bias_eval.compare_paired.read_sentences`):
each line one sentence pair, whatever line-separator characters the sentences hold."""

from __future__ import annotations

from pathlib import Path

import pytest

from bias_eval.compare_paired import Refused, read_sentences
from bias_eval.report import jsonl


@pytest.mark.parametrize("brk", ["\u2028", "\u2029", "\x85"])  # raw in JSON (control characters are escaped)
def test_details_with_line_separators_inside_sentences_read_whole(tmp_path: Path, brk: str) -> None:
    """The report writes details with ``ensure_ascii=False`` (U+2028 raw): only ``\\n`` ends a row."""
    rows = [{f"{key}_{g}": f"{key} {i}{brk}{g}" for key in ("source", "reference", "hypothesis") for g in ("feminine",
            "masculine")} | {"correct_feminine": True, "correct_masculine": i % 2 == 0, "correct_pair": i % 2 == 0}
            for i in range(3)]  # fmt: skip
    (tmp_path / "de.details.jsonl").write_text(jsonl(rows), encoding="utf-8")
    sentences = read_sentences(tmp_path, "de", "BEFORE")
    assert sentences.paired and sentences.size("feminine") == sentences.size("masculine") == 3
    assert sentences.columns["masculine"]["hypothesis"] == [f"hypothesis {i}{brk}masculine" for i in range(3)]
    assert sentences.columns["masculine"]["correct"] == [True, False, True]


def test_details_that_are_not_json_are_refused_with_their_line(tmp_path: Path) -> None:
    (tmp_path / "de.details.jsonl").write_text('{"index": 0}\n{"index": \n', encoding="utf-8")
    with pytest.raises(Refused, match=r"^AFTER: .*de.details.jsonl: line 2 is not valid JSON"):
        read_sentences(tmp_path, "de", "AFTER")
    with pytest.raises(Refused, match=r"^AFTER: .*fr.details.jsonl is missing"):
        read_sentences(tmp_path, "fr", "AFTER")
