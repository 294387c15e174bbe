"""Reading a report's per-sentence details for the paired tests
(:func:`bias_eval.compare.mtgeneval_tests.sentences` of :meth:`bias_eval.core.report.Report.rows`): each line one
sentence pair, whatever line-separator characters the sentences hold; a p-value at the bootstrap's floor printed as the
bound it is."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bias_eval.compare.mtgeneval_tests import _row, paired_cells, sentences
from bias_eval.core.bootstrap import resample_counts
from bias_eval.core.files import jsonl
from bias_eval.core.paired import compare_figure, gap_figure, p_text, share_figure
from bias_eval.core.report import Refused, Report


@pytest.mark.parametrize("brk", ["\u2028", "\u2029", "\x85"])  # raw in JSON (control characters are escaped)
def test_details_with_line_separators_inside_sentences_read_whole(tmp_path: Path, brk: str) -> None:
    """The report writes details with ``ensure_ascii=False`` (U+2028 raw): only ``\\n`` ends a row."""
    rows = [{f"{key}_{g}": f"{key} {i}{brk}{g}" for key in ("source", "reference", "hypothesis") for g in ("feminine",
            "masculine")} | {"correct_feminine": True, "correct_masculine": i % 2 == 0, "correct_pair": i % 2 == 0}
            for i in range(3)]  # fmt: skip
    (tmp_path / "de.details.jsonl").write_text(jsonl(rows), encoding="utf-8")
    found = sentences(Report({}, tmp_path), "de", "BEFORE")
    held = Report.written({}, {"de.details.jsonl": jsonl(rows).encode("utf-8")}, tmp_path)  # as make_report holds them
    assert held.details["de"] == rows and sentences(held, "de", "BEFORE") == found
    assert found.paired and found.size("feminine") == found.size("masculine") == 3
    assert found.columns["masculine"]["hypothesis"] == [f"hypothesis {i}{brk}masculine" for i in range(3)]
    assert found.columns["masculine"]["correct"] == [True, False, True]


def test_details_that_are_not_json_are_refused_with_their_line(tmp_path: Path) -> None:
    (tmp_path / "de.details.jsonl").write_text('{"index": 0}\n{"index": \n', encoding="utf-8")
    with pytest.raises(Refused, match=r"^AFTER: .*de.details.jsonl: line 2 is not valid JSON"):
        sentences(Report({}, tmp_path), "de", "AFTER")
    with pytest.raises(Refused, match=r"^AFTER: .*fr.details.jsonl is missing"):
        sentences(Report({}, tmp_path), "fr", "AFTER")


@pytest.mark.parametrize(("samples", "shown"), [(1000, "< 0.002"), (300, "< 0.0067")])
def test_a_bootstrap_p_at_its_floor_is_printed_as_the_bound(samples: int, shown: str) -> None:
    """An accuracy gap of 0.5 that closes to 0 on 200 pairs: no resample on the other side of 0, so p is at its
    floor 2 / (B + 1) (0.001998 for 1000 resamples), which is printed as the bound it is, not as "0.002"."""
    right, half = np.ones(200), (np.arange(200) % 2).astype(float)
    counted = {g: np.ones(200) for g in ("feminine", "masculine")}
    gap = {
        name: gap_figure(share_figure({"feminine": f}, counted), share_figure({"masculine": right}, counted))
        for name, f in (("before", half), ("after", right))
    }
    counts = dict.fromkeys(("feminine", "masculine"), resample_counts(np.random.default_rng(0), 200, samples))
    change = compare_figure(gap["before"], gap["after"], {"feminine": 200, "masculine": 200}, counts)
    assert change.p_value == pytest.approx(2 / (samples + 1))  # k = 0
    cells = paired_cells(_row("de", "acc gap", "accuracy_gap", "paired bootstrap", change, {}))
    assert cells[7] == shown
    assert float(shown.removeprefix("< ")) > change.p_value  # a bound above the p, rounded up


@pytest.mark.parametrize(
    ("p", "floor", "shown"), [(0.0312, 2 / 1001, "0.0312"), (0.0004, None, "< 0.001"), (1.0, 2 / 1001, "1")]
)
def test_other_p_values_print_as_they_are(p: float, floor: float | None, shown: str) -> None:
    assert p_text(p, floor) == shown
