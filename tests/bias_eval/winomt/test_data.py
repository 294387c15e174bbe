"""Reading WinoMT and translations of it (bias_eval.winomt.data): both file formats, how lines are matched to the
benchmark, and each bad input as one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from bias_eval.errors import UserError
from bias_eval.winomt.data import load_winomt, read_translations

ROWS = [
    ("female", 1, "The developer argued with the designer because she did not like the design.", "developer"),
    ("male", 5, "The developer argued with the designer because his idea cannot be implemented.", "designer"),
    ("neutral", 1, "The technician told the customer that they could pay with cash.", "technician"),
]


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    folder = tmp_path / "winomt"
    folder.mkdir()
    lines = ["\t".join(map(str, row)) for row in ROWS]
    (folder / "en.txt").write_text("\n".join(lines) + "\n")
    (folder / "en_pro.txt").write_text(lines[0] + "\n")
    (folder / "en_anti.txt").write_text(lines[1] + "\n")
    return folder


def test_both_formats(bench: Path, tmp_path: Path) -> None:
    data = load_winomt(bench)
    assert [i.gold for i in data.items] == ["female", "male", "neutral"] and data.pro == {ROWS[0][2]}
    plain = tmp_path / "plain.txt"
    plain.write_text("A\nB\nC\n")
    read = read_translations(plain, data)
    assert read.targets == ("A", "B", "C") and read.items == data.items and (read.moved, read.untranslated) == (0, 0)
    bitext = tmp_path / "bitext.txt"  # the benchmark's lines, in another order, one sentence missing
    bitext.write_text(f"{ROWS[1][2]} ||| B\n{ROWS[0][2]} ||| A\n")
    read = read_translations(bitext, data)
    assert [i.gold for i in read.items] == ["male", "female"] and read.targets == ("B", "A")
    assert (read.moved, read.untranslated) == (2, 1)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("A\nB\n", r"2 lines, but .*en.txt has 3 sentences"),
        ("Not a sentence of it ||| X\n", r"line 1: its source is not a sentence of"),
        (f"{ROWS[0][2]} ||| A\nB\nC\n", r"line 1: some lines are 'source \|\|\| translation' and some are not"),
        (f"{ROWS[0][2]} ||| A ||| B\n", r"line 1 has more than one '\|\|\|'"),
    ],
)
def test_bad_translations(bench: Path, tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "hyp.txt"
    path.write_text(text)
    with pytest.raises(UserError, match=message):
        read_translations(path, load_winomt(bench))


def test_bad_benchmark(bench: Path, tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"--winomt_dir .*nowhere: not a folder"):
        load_winomt(tmp_path / "nowhere")
    (bench / "en.txt").write_text("male\t9\tThe cook left.\tcook\n")
    with pytest.raises(UserError, match=r"en.txt: line 1: word index 9 is past the end"):
        load_winomt(bench)
