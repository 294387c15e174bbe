"""scripts/compare_reports.py on two real reports of scripts/bias_report.py (the first 300 sentence pairs of MT-GenEval
dev, de and es): the table
against the two metrics.json files read here, the HTML against the markdown, and the bad-input errors."""

from __future__ import annotations

import json
import math
import re
import shutil
import string
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from geneval_helpers import assert_same_but_figures, make_subset
from testing_utils import MTGENEVAL, script_in_process

from mtkit.cli.bias_report import main as report_main
from mtkit.cli.compare_reports import main as compare_main

LANGS = ("de", "es")
GENDERS = ("feminine", "masculine")
#: table title -> metrics.json key, written out here rather than taken from the code under test
FIGURES = {
    "BLEU": "bleu",
    "BLEU f": "bleu_feminine",
    "BLEU m": "bleu_masculine",
    "BLEU gap": "bleu_gap",
    "chrF gap": "chrf_gap",
    "acc f": "accuracy_feminine",
    "acc m": "accuracy_masculine",
    "acc pair": "accuracy_pair",
    "strict acc f": "strict_accuracy_feminine",
    "strict acc m": "strict_accuracy_masculine",
    "acc gap": "accuracy_gap",
    "fair BLEU": "fair_bleu",
    "coverage": "coverage",
}


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").rstrip("\n").split("\n")


def _write(folder: Path, files: dict[str, list[str]]) -> Path:
    folder.mkdir(parents=True)
    for name, lines in files.items():
        (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def geneval(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 300 sentence pairs of MT-GenEval dev in de and es, in its layout."""
    if not (MTGENEVAL / "sentences" / "dev").is_dir():
        pytest.skip(f"shared MT-GenEval data not found at {MTGENEVAL}")
    return make_subset(MTGENEVAL, tmp_path_factory.mktemp("geneval"), LANGS, 300, split="dev")


@pytest.fixture(scope="module")
def reports(geneval: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Report 1: the references as hypotheses. Report 2: masculine output for every other feminine sentence and
    the first word dropped from every third masculine one."""
    tmp = tmp_path_factory.mktemp("compare")
    good, bad = {}, {}
    for lang in LANGS:
        ref = {
            g: _lines(geneval / f"sentences/dev/geneval-sentences-{g}-dev.en_{lang}.{lang}")
            for g in ("feminine", "masculine")
        }
        good |= {f"{lang}.{g}.txt": ref[g] for g in ref}
        bad[f"{lang}.feminine.txt"] = [
            m if i % 2 else f for i, (f, m) in enumerate(zip(ref["feminine"], ref["masculine"]))
        ]
        bad[f"{lang}.masculine.txt"] = [
            " ".join(m.split()[1:]) if i % 3 == 0 else m for i, m in enumerate(ref["masculine"])
        ]
    out = []
    for name, hyps in (("good", good), ("bad", bad)):
        report = tmp / f"report_{name}"
        res = script_in_process(
            report_main,
            *("--mtgeneval_dir", str(geneval), "--split", "dev", "--target_langs", *LANGS),
            *("--hyp_dir", str(_write(tmp / f"hyps_{name}", hyps)), "--out", str(report), "--bootstrap_samples", "200"),
            "--no_figures",  # a comparison reads the reports' metrics and details, never their figures
        )
        assert res.returncode == 0, res.stderr[-2000:]
        out.append(report)
    return out[0], out[1]


def _number(cell: str) -> float | None:
    """A cell's figure as metrics.json holds it: accuracies in percent and their changes in points are shares there."""
    if cell == "n/a":
        return None
    if cell.endswith(("%", " pts")):
        return float(cell.removesuffix("%").removesuffix(" pts")) / 100
    return float(cell)


def _interval(cell: str) -> list[float] | None:
    return None if cell == "n/a" else [_number(x) for x in re.fullmatch(r"\[(.+), (.+)\]", cell).groups()]


def _markdown_rows(text: str) -> list[list[str]]:
    rows = [line.strip("|").split(" | ") for line in text.splitlines() if line.startswith("| ")]
    return [[c.strip() for c in row] for row in rows]


def _metrics(folder: Path) -> dict:
    return json.loads((folder / "metrics.json").read_text(encoding="utf-8"))


def _check_table(rows: list[list[str]], before: dict, after: dict) -> list[str]:
    """Every cell against the two metrics.json files; returns the 'changed' column."""
    header, body = rows[0], rows[1:]
    assert header == ["lang", "figure", "base", "base 95% CI", "tuned", "tuned 95% CI", "change", "changed"]
    assert [(r[0], r[1]) for r in body] == [(scope, title) for scope in (*LANGS, "macro") for title in FIGURES]
    verdicts = []
    for scope, title, b, b_ci, a, a_ci, change, changed in body:
        key = FIGURES[title]
        mb = before["macro"] if scope == "macro" else before["languages"][scope]
        ma = after["macro"] if scope == "macro" else after["languages"][scope]
        tolerance = 0.0005001 if key.startswith(("accuracy", "coverage", "strict")) else 0.005  # half the last digit
        assert _number(b) == pytest.approx(mb[key], abs=tolerance), (scope, title)
        assert _number(a) == pytest.approx(ma[key], abs=tolerance), (scope, title)
        assert _number(change) == pytest.approx(ma[key] - mb[key], abs=tolerance), (scope, title)
        ci_b, ci_a = mb.get(f"{key}_ci95"), ma.get(f"{key}_ci95")
        if ci_b is None:
            assert b_ci == a_ci == "n/a" and changed == "n/a", (scope, title)
        else:
            assert _interval(b_ci) == pytest.approx(ci_b, abs=tolerance)
            assert _interval(a_ci) == pytest.approx(ci_a, abs=tolerance)
            change = ma[key] - mb[key]  # its interval from the two (MOVER), written out here
            low = change - math.hypot(ma[key] - ci_a[0], ci_b[1] - mb[key])
            high = change + math.hypot(ci_a[1] - ma[key], mb[key] - ci_b[0])
            assert changed == ("yes" if low > 0 or high < 0 else "no"), (scope, title)
        verdicts.append(changed)
    return verdicts


def test_table_matches_both_metrics_files(reports: tuple[Path, Path], tmp_path: Path) -> None:
    before, after = reports
    res = compare(str(before), str(after), "--names", "base,tuned")
    assert res.returncode == 0, res.stderr
    table = res.stdout.split("## Paired tests")[0]  # the paired tests: test_paired_tests_on_the_same_sentences
    verdicts = _check_table(_markdown_rows(table), _metrics(before), _metrics(after))
    assert {"yes", "no", "n/a"} <= set(verdicts)  # the damaged feminine side moves, the masculine accuracy not
    assert "Note: change = tuned - base" in res.stdout and "MOVER" in res.stdout

    out = tmp_path / "cmp"
    res = compare(str(before), str(after), "--names", "base,tuned", "--out", str(out))
    assert res.returncode == 0, res.stderr
    written = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    figure = [f"figures/comparison.{f}" for f in ("pdf", "png", "svg")]
    assert written == ["comparison.html", "comparison.json", "comparison.md", "comparison.tex", *figure]
    svg = ET.parse(out / "figures" / "comparison.svg").getroot()
    assert svg.tag == "{http://www.w3.org/2000/svg}svg" and {"base", "tuned"} <= set(svg.itertext())
    assert (out / figure[0]).read_bytes().startswith(b"%PDF-") and (out / figure[1]).read_bytes()[:4] == b"\x89PNG"
    markdown = (out / "comparison.md").read_text(encoding="utf-8")
    root = ET.fromstring((out / "comparison.html").read_text(encoding="utf-8").split("\n", 1)[1])
    ns = {"h": "http://www.w3.org/1999/xhtml"}
    html_rows = [[c.text or "" for c in tr] for tr in root.iter("{http://www.w3.org/1999/xhtml}tr")]
    assert html_rows == _markdown_rows(markdown)
    assert len(root.findall(".//h:tr[@class='changed']", ns)) == verdicts.count("yes")


def test_partly_overlapping_languages(reports: tuple[Path, Path], tmp_path: Path) -> None:
    before, after = reports
    only_de = tmp_path / "only_de"
    only_de.mkdir()
    metrics = _metrics(after)
    metrics["languages"] = {"de": metrics["languages"]["de"]}
    (only_de / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")
    res = compare(str(before), str(only_de))
    assert res.returncode == 0, res.stderr
    rows = _markdown_rows(res.stdout)[1:]
    assert {r[0] for r in rows} == {"de"} and len(rows) == len(FIGURES)
    assert "Languages only in before, left out: es." in res.stdout and "No macro rows" in res.stdout


def compare(*args: str):
    """``scripts/compare_reports.py ARGS`` by its ``main`` in this process (the script's own process: test_help)."""
    return script_in_process(compare_main, *args)


def _fails(*args: str, fragment: str, out: Path | None = None) -> None:
    res = script_in_process(compare_main, *args, *(["--out", str(out)] if out else []))  # the script: test_help
    assert res.returncode == 2, res.stdout
    assert res.stderr.count("\n") == 1 and res.stderr.startswith("error: "), res.stderr
    assert fragment in res.stderr, res.stderr
    assert res.stdout == ""
    if out is not None:
        assert not out.exists()


def test_bad_input(reports: tuple[Path, Path], tmp_path: Path) -> None:
    before, after = reports
    out = tmp_path / "out"
    _fails(
        str(tmp_path / "missing"),
        str(after),
        fragment=f"error: BEFORE: {tmp_path / 'missing'}: no such folder",
        out=out,
    )
    (tmp_path / "noreport").mkdir()  # a folder without a report (not --out's parent: that would be refused first)
    noreport = tmp_path / "noreport"
    _fails(str(before), str(noreport), fragment=f"error: AFTER: {noreport} has no metrics.json", out=out)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "metrics.json").write_text("{not json", encoding="utf-8")
    _fails(
        str(broken),
        str(after),
        fragment="error: BEFORE: " + f"{broken / 'metrics.json'}: invalid JSON (line 1",
        out=out,
    )
    (broken / "metrics.json").write_text('{"macro": {}}', encoding="utf-8")
    _fails(str(before), str(broken), fragment="no 'languages'", out=out)
    elsewhere = tmp_path / "fr_only"
    shutil.copytree(after, elsewhere)
    metrics = _metrics(after)
    metrics["languages"] = {"fr": metrics["languages"]["de"]}
    (elsewhere / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")
    _fails(
        str(before),
        str(elsewhere),
        fragment="AFTER: no language in common with BEFORE (BEFORE: de es; AFTER: fr)",
        out=out,
    )
    _fails(str(before), str(after), "--names", "only-one", fragment="error: --names:", out=out)
    afile = tmp_path / "afile"
    afile.write_text("x", encoding="utf-8")
    _fails(str(before), str(after), "--out", str(afile), fragment=f"error: --out {afile}: exists and is not a folder")
    assert afile.read_text(encoding="utf-8") == "x"


def test_without_figures_every_other_file_is_as_with_them(reports: tuple[Path, Path], tmp_path: Path) -> None:
    """``--no_figures``: the comparison's files but its figure, byte for byte (tests/bias_eval/geneval_helpers.py)."""
    for name, extra in (("drawn", ()), ("bare", ("--no_figures",))):
        res = script_in_process(compare_main, *map(str, reports), "--out", str(tmp_path / name), *extra)
        assert res.returncode == 0, res.stderr[-2000:]
    assert_same_but_figures(tmp_path / "drawn", tmp_path / "bare")


def test_help() -> None:
    res = script_in_process(compare_main, "--help")
    assert res.returncode == 0 and res.stderr == ""
    assert "BEFORE" in res.stdout and "--names" in res.stdout and "--out" in res.stdout


def _words(text: str) -> set[str]:
    """MT-GenEval's normalisation: lowercase, ASCII punctuation to spaces, split."""
    return set(text.lower().translate(str.maketrans(string.punctuation, " " * len(string.punctuation))).split())


def test_paired_tests_on_the_same_sentences(geneval: Path, reports: tuple[Path, Path], tmp_path: Path) -> None:
    """McNemar's discordant counts and exact p of the feminine accuracy against a count on the hypotheses written
    here (base: the references; tuned: the masculine reference on every odd feminine line); the BLEU change against
    the two metrics.json files; and the paired tests refused, in one line, once a reference differs."""
    before, after = reports
    out = tmp_path / "cmp"
    res = compare(str(before), str(after), "--names", "base,tuned", "--out", str(out))
    assert res.returncode == 0, res.stderr
    paired = json.loads((out / "comparison.json").read_text(encoding="utf-8"))["paired"]
    tests = len(paired["rows"])  # 200 resamples asked for; as many as Holm's adjustment over the tests needs
    assert paired["refused"] is None and paired["seed"] == 12345 and 2 / (paired["samples"] + 1) * tests <= 0.025
    rows = {(r["lang"], r["figure"]): r for r in paired["rows"]}
    for lang in LANGS:
        fem, masc = (_lines(geneval / f"sentences/dev/geneval-sentences-{g}-dev.en_{lang}.{lang}") for g in GENDERS)
        # tuned's odd feminine lines are the masculine reference: wrong where it has a word the feminine one lacks
        wrong = sum(1 for i, (f, m) in enumerate(zip(fem, masc)) if i % 2 and _words(m) - _words(f))
        row = rows[(lang, "accuracy_feminine")]
        assert (row["before_only"], row["after_only"]) == (wrong, 0)
        assert row["p_value"] == pytest.approx(min(1.0, 2 * 0.5**wrong)) and row["significant"]
        bleu = rows[(lang, "bleu")]
        m_b, m_a = _metrics(before)["languages"][lang], _metrics(after)["languages"][lang]
        assert bleu["change"] == pytest.approx(m_a["bleu"] - m_b["bleu"], abs=1e-9)
        assert bleu["ci95"][1] < 0 and bleu["p_value"] < 0.05 and bleu["significant"]
        gap = rows[(lang, "accuracy_gap")]
        assert gap["change"] == pytest.approx(m_a["accuracy_gap"] - m_b["accuracy_gap"], abs=1e-9)
    for key in ("bleu", "accuracy_feminine", "accuracy_gap"):  # macro: the mean over the languages, bootstrapped
        macro = rows[("macro", key)]
        assert macro["change"] == pytest.approx(sum(rows[(lang, key)]["change"] for lang in LANGS) / 2, abs=1e-12)
        assert macro["test"] == "paired bootstrap" and macro["ci95"][0] <= macro["change"] <= macro["ci95"][1]
    markdown = (out / "comparison.md").read_text(encoding="utf-8")
    assert "## Paired tests on the same sentences" in markdown and "McNemar exact (b=" in markdown
    # the first paragraph: base's accuracy gap is 0 (the references), tuned's widens it by |gap after| - |gap before|
    first = markdown.split("\n\n")[1]
    for lang in LANGS:
        m_b, m_a = _metrics(before)["languages"][lang], _metrics(after)["languages"][lang]
        size = 100 * (abs(m_a["accuracy_gap"]) - abs(m_b["accuracy_gap"]))
        assert m_b["accuracy_gap"] == 0 and size > 10
        low, high = (100 * x for x in rows[(lang, "accuracy_gap_size")]["ci95"])
        floor = 2 / (paired["samples"] + 1)  # every resample widens it: the bootstrap's smallest p
        said = f"In {lang}, tuned widens the accuracy gap by {size:.1f} points [{low:.1f}, {high:.1f}], p < {floor:.2g}"
        assert said in first, first
    assert first.startswith("Against base, on the same sentences: In de, tuned widens the accuracy gap by")
    assert json.loads((out / "comparison.json").read_text(encoding="utf-8"))["summary"] == first
    page = (out / "comparison.html").read_text(encoding="utf-8")
    assert page.index(first.split(":")[0]) < page.index('<figure id="fig-comparison">') < page.index("<details>")

    changed = tmp_path / "changed"
    shutil.copytree(after, changed)
    lines = (changed / "es.details.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["reference_feminine"] += " x"
    (changed / "es.details.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    res = compare(str(before), str(changed))
    assert res.returncode == 0, res.stderr
    said = "es: feminine sentence 0 has another reference in after: not the same sentences"
    assert res.stderr == f"note: paired tests not run: {said}\n"
    assert f"Paired tests not run: {said}." in res.stdout
    assert f"The paired tests did not run ({said}), so this comparison claims no change" in res.stdout
