"""scripts/prepare_text.py: raw Multi30k prepared into the release's own ``tok/`` files, MT-GenEval's layout prepared
for a model trained on such text (its marks kept around their words), names, compression and other files kept."""

from __future__ import annotations

import gzip
import re
import shutil

import pytest
from testing_utils import MTGENEVAL, MULTI30K, script_in_process

from mtkit.cli.prepare_text import main
from mtkit.data.mtgeneval import load_mtgeneval
from mtkit.errors import cli_entry

prepare_text = cli_entry(main)
pytestmark = pytest.mark.skipif(not MULTI30K.is_dir() or not MTGENEVAL.is_dir(), reason="../shared/data is not there")
MARK = re.compile(r"<([FM])>(.*?)</\1>")


def gz_lines(path) -> list[str]:
    return [line.strip() for line in gzip.decompress(path.read_bytes()).decode().rstrip("\n").split("\n")]


def test_raw_multi30k_becomes_the_release_tok_files(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    for name in ("test_2016_flickr.de.gz", "test_2016_flickr.en.gz", "val.en.gz"):
        shutil.copy(MULTI30K / name, raw / name)
    (raw / "NOTES").write_bytes(b"no language here\n")
    res = script_in_process(prepare_text, str(raw), str(tmp_path / "out"))
    assert res.returncode == 0, res.stderr
    assert "prepared 3 file(s) (moses-lc" in res.stdout and "copied 1" in res.stdout
    for name in ("test_2016_flickr.de", "test_2016_flickr.en", "val.en"):  # docs/scoring.md: these match exactly
        released = gz_lines(MULTI30K / "tok" / (name.replace(".", ".lc.norm.tok.", 1) + ".gz"))
        assert gz_lines(tmp_path / "out" / f"{name}.gz") == released, name
    assert sum(len(line.split()) for line in gz_lines(tmp_path / "out" / "test_2016_flickr.de.gz")) == 12103
    assert (tmp_path / "out" / "NOTES").read_bytes() == b"no language here\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "raw"]  # no work folder left behind


def test_mtgeneval_prepared_keeps_its_layout_and_marks(tmp_path):
    src = tmp_path / "geneval"
    for sub in ("sentences/dev", "sentences/dev/annotated"):
        (src / sub).mkdir(parents=True)
        for path in (MTGENEVAL / sub).glob("*.en_de.*"):
            (src / sub / path.name).write_text("\n".join(path.read_text().splitlines()[:300]) + "\n")
    res = script_in_process(prepare_text, str(src), str(tmp_path / "lc"))
    assert res.returncode == 0, res.stderr
    data = load_mtgeneval(tmp_path / "lc", "dev", ["de"]).languages["de"]  # the toolkit reads the copy as MT-GenEval
    plain = data.feminine.references
    assert plain[0] == "nach einigem hin und her akzeptierte blacket 50 pfund als vollen ausgleich für die ihr " \
                       "zustehenden gebühren ."  # fmt: skip
    assert data.feminine.sources[0].startswith("after some wrangling blacket accepted £ 50 in full settlement")
    annotated = (tmp_path / "lc" / "sentences/dev/annotated/geneval-sentences-feminine-dev.en_de.de").read_text()
    raw = (src / "sentences/dev/annotated/geneval-sentences-feminine-dev.en_de.de").read_text().splitlines()
    lines = annotated.splitlines()
    raw_plain = (src / "sentences/dev/geneval-sentences-feminine-dev.en_de.de").read_text().splitlines()
    same = [i for i, line in enumerate(raw) if MARK.sub(r"\2", line) == raw_plain[i]]  # not those quoted otherwise
    assert len(same) > 280 and all(MARK.sub(r"\2", lines[i]) == plain[i] for i in same)  # marks off: the plain text
    kept = sum(len(MARK.findall(line)) for line in lines)
    marks = sum(len(MARK.findall(line)) for line in raw)
    assert kept >= 0.98 * marks  # a few marks, in words the whole line tokenizes otherwise, are left out
    for line, raw_line in zip(lines, raw):  # each kept mark holds its own word, lowercased (or a word holding it)
        want, got = [w.lower() for _, w in MARK.findall(raw_line)], [w for _, w in MARK.findall(line)]
        if len(want) == len(got) and all(w.isalpha() for w in want):
            assert all(w in g for w, g in zip(want, got)), (want, got)
    assert data.feminine.keywords[1] == ["ihr", "sie", "ihren", "ihres", "ihres"]


def test_bad_input_is_one_line_and_writes_nothing(tmp_path):
    one = tmp_path / "notes.txt"
    one.write_text("a\n")
    res = script_in_process(prepare_text, str(one), str(tmp_path / "out"))
    assert res.returncode == 2 and res.stderr.strip().splitlines() == [
        f"error: INPUT {one}: its name ends in no language code Moses knows (such as .de or .en.gz)"
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
