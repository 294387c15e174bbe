import gzip
import json
import os
import subprocess
import sys
import tempfile
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bias_eval.core.bleu import corpus_bleu
from bias_eval.core.textio import (
    LINE_BREAKS,
    MAX_LINE_CHARS,
    atomic_write,
    iter_lines,
    line_break,
    normal_text,
    read_jsonl,
    read_lines,
    read_sentences,
)
from bias_eval.mtgeneval.metrics import chrf_from_stats, chrf_stats, gender_decision
from mtkit.errors import UserError


def test_plain_gz_bom_and_crlf(tmp_path):
    (tmp_path / "a.txt").write_bytes("\ufeffeins\r\nzwei\r\n".encode())
    assert read_lines(tmp_path / "a.txt") == ["eins", "zwei"]
    with gzip.open(tmp_path / "b.de.gz", "wt", encoding="utf-8") as f:
        f.write("drei\nvier\u2028noch vier\n")
    assert read_lines(tmp_path / "b.de.gz") == ["drei", "vier\u2028noch vier"]  # only \n ends a line


@pytest.mark.parametrize(
    ("data", "message"),
    [(b"", "file is empty"), (b"ok\nbad \xff\n", "invalid UTF-8 at line 2"), (b"\x1f\x8b broken", "cannot read")],
)
def test_bad_files(tmp_path, data, message):
    path = tmp_path / ("x.gz" if data.startswith(b"\x1f\x8b") else "x.txt")
    path.write_bytes(data)
    with pytest.raises(UserError, match=message):
        read_lines(path)
    with pytest.raises(UserError, match="file not found"):
        read_lines(tmp_path / "missing.txt")


def test_atomic_write_replaces_and_leaves_no_temp(tmp_path):
    target = tmp_path / "sub" / "out.txt"
    atomic_write(target, b"one\n")
    atomic_write(target, b"two\n")
    assert target.read_bytes() == b"two\n"
    assert [p.name for p in target.parent.iterdir()] == ["out.txt"]


def test_atomic_write_the_file_system_refuses_is_one_error_naming_the_file(tmp_path):
    (tmp_path / "file").write_bytes(b"kept\n")
    with pytest.raises(UserError, match=f"^{tmp_path / 'file' / 'out.txt'}: cannot write \\(File exists\\)$"):
        atomic_write(tmp_path / "file" / "out.txt", b"x\n")
    (tmp_path / "folder").mkdir()
    with pytest.raises(UserError, match="folder: cannot write"):
        atomic_write(tmp_path / "folder", b"x\n")  # a folder where the file goes
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["file", "folder"]  # no temporary file left
    assert (tmp_path / "file").read_bytes() == b"kept\n"


CASES = {
    "plain": b"a\nb\r\nc\n",
    "no final newline": b"a\nb",
    "bom": "\ufeffh\u00e9\nx\n".encode(),
    "invalid utf-8": b"ok\nfine\n\xff\xfe\n",
    "nul": b"a\nb\x00c\n",
    "empty": b"",
    "blank lines": b"\n\n\n",
    "line separator": "a\u2028b\nc\n".encode(),
    "long": "".join(f"l\u00ednea {i} {'x' * (i * 37 % 301)}\n" for i in range(5000)).encode(),
}
CASES["long, invalid late"] = CASES["long"][:100_000] + b"\xc3" + CASES["long"][100_000:]
CASES["utf-16"] = "a\nb\n".encode("utf-16")
CASES["a line too long"] = b"a\n" + b"w" * (MAX_LINE_CHARS + 1) + b"\nb\n"


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("name", list(CASES))
def test_streamed_lines_equal_the_whole_file_read(tmp_path, name, gz):
    """iter_lines (a chunk at a time, chunks far smaller than the file) gives read_lines' lines or its error."""
    path = tmp_path / ("f.gz" if gz else "f.txt")
    path.write_bytes(gzip.compress(CASES[name]) if gz else CASES[name])

    def outcome(read):
        try:
            return read()
        except UserError as err:
            return f"error: {err}"

    assert outcome(lambda: list(iter_lines(path, chunk_bytes=777))) == outcome(lambda: read_lines(path))


FOLLOW = """
import os, stat, sys
from pathlib import Path
from bias_eval.core.textio import atomic_write
os.umask(int(sys.argv[2], 8))
folder = Path(sys.argv[1])
atomic_write(folder / "atomic.txt", b"x")
(folder / "plain.txt").write_bytes(b"x")
(folder / "existing.txt").write_bytes(b"old")
os.chmod(folder / "existing.txt", 0o600)
atomic_write(folder / "existing.txt", b"new")
print(" ".join(oct(stat.S_IMODE((folder / n).stat().st_mode)) for n in ("atomic.txt", "plain.txt", "existing.txt")))
"""


@pytest.mark.parametrize("mask", ["022", "002", "077"])
def test_atomic_write_gives_the_mode_an_ordinary_write_gives_under_the_umask(tmp_path, mask):
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    res = subprocess.run([sys.executable, "-c", FOLLOW, str(tmp_path), mask], capture_output=True, text=True, env=env)
    assert res.returncode == 0, res.stderr
    atomic, plain, replaced = res.stdout.split()
    assert atomic == plain == oct(0o666 & ~int(mask, 8))
    assert replaced == oct(0o600)  # a file written over keeps its mode, as with open(path, "w")


TREE = """
import os, stat, sys, tempfile
from pathlib import Path
from bias_eval.core.textio import follow_umask_tree, tree_modes
os.umask(0o022)
root = Path(sys.argv[1])
(root / "old").mkdir()
(root / "old" / "private.txt").write_bytes(b"x")
os.chmod(root / "old" / "private.txt", 0o600)
(root / "run.sh").write_bytes(b"#!/bin/sh")
os.chmod(root / "run.sh", 0o750)
(root / "weights.bin").write_bytes(b"old")
kept = tree_modes(root)
fd, tmp = tempfile.mkstemp(dir=root)  # a library writing privately, over a file and beside it
os.close(fd)
os.replace(tmp, root / "weights.bin")
fd, tmp = tempfile.mkstemp(dir=root)
os.close(fd)
os.replace(tmp, root / "new.bin")
Path(tempfile.mkdtemp(dir=root)).rename(root / "newdir")
follow_umask_tree(root, kept)
names = ("old/private.txt", "run.sh", "weights.bin", "new.bin", "newdir")
print(" ".join(oct(stat.S_IMODE((root / n).stat().st_mode)) for n in names))
"""


def test_follow_umask_tree_gives_new_paths_the_umask_mode_and_leaves_existing_ones_theirs(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    res = subprocess.run([sys.executable, "-c", TREE, str(tmp_path)], capture_output=True, text=True, env=env)
    assert res.returncode == 0, res.stderr
    private, script, replaced, new, folder = res.stdout.split()
    assert (private, script) == (oct(0o600), oct(0o750))  # not written: as they were
    assert replaced == oct(0o644)  # written over: the mode it had, as open(path, "w") keeps it
    assert (new, folder) == (oct(0o644), oct(0o755))  # new: what an ordinary write gives under umask 022


def test_jsonl_is_cut_at_line_feeds_only(tmp_path):
    """One reader for every JSON-lines file: ``\\n`` ends a line (a ``\\r`` before it is dropped), U+2028 and its
    kind inside a string are text; blank lines are skipped; a bad line is named."""
    rows = [{"s": "a\u2028b\x85c\u2029"}, [1, 2], "x\ny"]
    path = tmp_path / "m.jsonl"
    text = json.dumps(rows[0], ensure_ascii=False) + "\r\n\n" + "".join(json.dumps(r) + "\n" for r in rows[1:])
    path.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    assert read_jsonl(path) == [(1, rows[0]), (3, rows[1]), (4, rows[2])]
    path.write_text('{"step": 1}\n{"step": \n', encoding="utf-8")
    with pytest.raises(UserError, match=r"m.jsonl: line 2 is not valid JSON \("):
        read_jsonl(path)
    path.write_bytes(b"")
    assert read_jsonl(path, missing_ok=True) == read_jsonl(tmp_path / "none.jsonl", missing_ok=True) == []
    with pytest.raises(UserError, match="m.jsonl: file is empty"):
        read_jsonl(path)


def test_line_breaks_are_every_character_splitlines_splits_on():
    splits = [c for c in map(chr, range(0x110000)) if len(f"a{c}b".splitlines()) > 1]  # asked of splitlines
    assert sorted(LINE_BREAKS) == splits
    assert [line_break(t) for t in ("a b", "a\u2028b", "a\r\nb", "\x1c")] == [None, "U+2028", "U+000D", "U+001C"]


#: any character a cell of a line can hold (no line breaks, tab, NUL, surrogates or byte-order mark), decomposable ones
#: often
LINE_TEXT = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters=LINE_BREAKS + "\t\x00\ufeff")
    | st.sampled_from("éèüöäñçÅåøßŒœ ẞǅḉ\u0301\u0308\u0327한글ếệ"),
    min_size=1,
    max_size=30,
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(LINE_TEXT, LINE_TEXT, LINE_TEXT), min_size=1, max_size=4), st.sampled_from(["de", "zh"]))
def test_text_in_nfc_or_nfd_reads_and_scores_alike(rows, lang):
    """Hypotheses and references written composed (NFC) or decomposed (NFD) are the same text once read: the same
    lines, BLEU, chrF and accuracy decisions."""
    read = {}
    with tempfile.TemporaryDirectory() as folder:
        for form in ("NFC", "NFD"):
            path = Path(folder) / form
            path.write_text("".join(unicodedata.normalize(form, "\t".join(row)) + "\n" for row in rows), "utf-8")
            read[form] = [line.split("\t") for line in read_sentences(path)]
    assert read["NFC"] == read["NFD"] == [[normal_text(x) for x in row] for row in rows]
    hyps, refs, cfs = (list(col) for col in zip(*read["NFD"]))
    composed = [unicodedata.normalize("NFC", "\t".join(row)).split("\t") for row in rows]
    hyps_c, refs_c, cfs_c = (list(col) for col in zip(*composed))
    assert corpus_bleu(hyps, refs, lang) == corpus_bleu(hyps_c, refs_c, lang)
    assert chrf_from_stats(chrf_stats(hyps, refs).sum(axis=0)) == chrf_from_stats(
        chrf_stats(hyps_c, refs_c).sum(axis=0)
    )
    assert [gender_decision(*x, lang) for x in zip(hyps, refs, cfs)] == [
        gender_decision(*x, lang) for x in zip(hyps_c, refs_c, cfs_c)
    ]


def test_normal_text_composes_and_leaves_composed_text_alone():
    assert normal_text("e\u0301") == "\u00e9" == normal_text("\u00e9")
    assert normal_text("Ärztin") == unicodedata.normalize("NFC", "A\u0308rztin")
