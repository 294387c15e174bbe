"""Reading WinoMT and translations of it (bias_eval.winomt.data): both file formats, how lines are matched to the
benchmark, and each bad input as one line."""

from __future__ import annotations

from collections import Counter
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from testing_utils import WINOMT

from bias_eval.core.errors import UserError
from bias_eval.winomt.data import load_winomt, read_translations, subset

_BENCH = cache(lambda: load_winomt(WINOMT))

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


def test_counts_of_a_partial_file(bench: Path, tmp_path: Path) -> None:
    """The first line alone: in place (nothing moved), two sentences untranslated; the benchmark's second and first
    sentences: both moved; a sentence of en.txt that occurs twice counts twice when untranslated."""
    data = load_winomt(bench)
    partial = tmp_path / "partial.txt"
    partial.write_text(f"{ROWS[0][2]} ||| A\n")
    assert (read_translations(partial, data).moved, read_translations(partial, data).untranslated) == (0, 2)
    partial.write_text(f"{ROWS[2][2]} ||| C\n{ROWS[0][2]} ||| A\n")
    assert (read_translations(partial, data).moved, read_translations(partial, data).untranslated) == (2, 1)
    (bench / "en.txt").write_text((bench / "en.txt").read_text() + "\t".join(map(str, ROWS[1])) + "\n")
    read = read_translations(partial, load_winomt(bench))
    assert (read.moved, read.untranslated) == (2, 2)


def test_lines_are_read_as_nfc(bench: Path, tmp_path: Path) -> None:
    """A source written decomposed (NFD) is the benchmark's sentence, and its translation is read composed."""
    import unicodedata

    path = tmp_path / "nfd.txt"
    path.write_text(unicodedata.normalize("NFD", f"{ROWS[0][2]} ||| la développeuse\n"), encoding="utf-8")
    read = read_translations(path, load_winomt(bench))
    assert read.targets == (unicodedata.normalize("NFC", "la développeuse"),) and read.items[0].gold == "female"


def _strata(data) -> dict[str, int]:
    return {name: sum(data.stratum(i) == name for i in data.items) for name in ("pro", "anti", "neutral")}


def test_a_stratified_subset() -> None:
    """On the real benchmark (1,584 pro, 1,584 anti, 720 neutral of 3,888): 100 sentences are 40.7, 40.7 and 18.5 by
    proportion, so 41, 41 and 18 by largest remainders (the two .74 first: 40 + 40 + 18 = 98, then +1 each); drawn
    from each stratum, in file order, the same for the same seed and not for another."""
    data = load_winomt(WINOMT)
    assert _strata(data) == {"pro": 1584, "anti": 1584, "neutral": 720}
    drawn = subset(data, 100, seed=7)
    assert _strata(drawn) == {"pro": 41, "anti": 41, "neutral": 18} and drawn.sample == {"seed": 7, **_strata(drawn)}
    order = {item: k for k, item in enumerate(data.items)}
    assert [order[i] for i in drawn.items] == sorted(order[i] for i in drawn.items)
    assert subset(data, 100, seed=7) == drawn and subset(data, 100, seed=8).items != drawn.items
    assert subset(data, None, seed=7) is data and subset(data, 10_000, seed=7) is data


@given(st.integers(1, 200), st.integers(0, 2**32 - 1))
@settings(max_examples=25, deadline=None)
def test_every_subset_keeps_the_proportions(size: int, seed: int) -> None:
    """For any size and seed: ``size`` lines of en.txt, none twice (en.txt repeats a few lines itself), each stratum
    within one of its exact share."""
    data = _BENCH()
    drawn = subset(data, size, seed)
    assert len(drawn.items) == size and Counter(drawn.items) <= Counter(data.items)  # lines drawn without replacement
    total = _strata(data)
    for name, count in _strata(drawn).items():
        assert abs(count - size * total[name] / len(data.items)) < 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("A\nB\n", r"hyp.txt: line 3: 2 lines, but the benchmark has 3 sentences"),
        ("A\nB\nC\nD\n", r"hyp.txt: line 4: 4 lines, but the benchmark has 3 sentences"),
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
    (bench / "en_anti.txt").write_text("male\t1\tThe cook left.\tcook\n")
    with pytest.raises(UserError, match=r"en_anti.txt: line 1: a sentence that .*en.txt lacks$"):
        load_winomt(bench)
    (bench / "en.txt").write_text("male\t9\tThe cook left.\tcook\n")
    with pytest.raises(UserError, match=r"en.txt: line 1: word index 9 is past the end"):
        load_winomt(bench)
