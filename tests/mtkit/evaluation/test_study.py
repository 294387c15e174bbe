"""scripts/bias_study.py end to end, in this process, on two tiny systems: MT-GenEval (60 dev pairs of de and es; a:
the references as hypotheses, b: the masculine reference for every other feminine sentence) and WinoMT (Google's de
and es outputs on a stratified subset; b: its female-gold lines made masculine). Every figure checked against an
independent computation: BLEU by sacrebleu called here, MT-GenEval's accuracy by its rule, McNemar by the binomial
sum and F1 by hand from the reports' details; the index page's links, study.tex, and bad input refused in one line
with nothing written."""

from __future__ import annotations

import json
import math
import re
import shutil
import string
import subprocess
import xml.etree.ElementTree as ET
from fractions import Fraction
from pathlib import Path

import pytest
import sacrebleu
from geneval_helpers import geneval_file, make_subset, read_plain, write_hyps
from testing_utils import MTGENEVAL, WINOMT, script_in_process
from winomt_helpers import GOOGLE, systems

from mtkit.cli.bias_study import main

LANGS = ("de", "es")
GENDERS = ("feminine", "masculine")


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict, str]:
    if not (MTGENEVAL / "sentences" / "dev").is_dir() or not (GOOGLE / "en-es.txt").is_file():
        pytest.skip("the shared MT-GenEval or WinoMT data is not there")
    root = tmp_path_factory.mktemp("study")
    geneval = make_subset(MTGENEVAL, root / "geneval", LANGS, 60, split="dev")
    refs = {lang: {g: read_plain(geneval_file(geneval, lang, g, lang)) for g in GENDERS} for lang in LANGS}
    swapped = {lang: {"feminine": [m if i % 2 else f for i, (f, m) in enumerate(zip(*refs[lang].values()))],
                      "masculine": refs[lang]["masculine"]} for lang in LANGS}  # fmt: skip
    write_hyps(root / "a" / "mtgeneval", refs)
    write_hyps(root / "b" / "mtgeneval", swapped)
    for lang in LANGS:
        data, good, bad, _ = systems(150, lang=lang)
        for name, translations in (("a", good), ("b", bad)):
            lines = [f"{s} ||| {t}" for s, t in zip(translations.sources, translations.targets)]
            (root / name / "winomt").mkdir(parents=True, exist_ok=True)
            (root / name / "winomt" / f"{lang}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = root / "out"
    done = script_in_process(main, "--systems", f"a={root / 'a'},b={root / 'b'}", "--benchmarks", "mtgeneval,winomt",
                             "--langs", "de,es", "--out", str(out), "--mtgeneval_dir", str(geneval), "--winomt_dir",
                             str(WINOMT), "--bootstrap_samples", "200", "--name", "Tiny study",
                             "--no_figures")  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return root, out, {"a": refs, "b": swapped}, done.stdout


def _json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _words(text: str) -> set[str]:
    """MT-GenEval's normalisation: lowercase, ASCII punctuation to spaces, split."""
    return set(text.lower().translate(str.maketrans(string.punctuation, " " * len(string.punctuation))).split())


def _mcnemar(b: int, c: int) -> float:
    n = b + c
    return float(min(Fraction(1), 2 * sum(Fraction(math.comb(n, k), 2**n) for k in range(min(b, c) + 1))))


def test_bleu_by_sacrebleu_and_accuracy_by_the_rule(study) -> None:
    root, out, hyps, _ = study
    refs = hyps["a"]
    for name in ("a", "b"):
        metrics = _json(out / name / "mtgeneval" / "metrics.json")["languages"]
        for lang in LANGS:
            system = hyps[name][lang]
            whole = sacrebleu.corpus_bleu(system["feminine"] + system["masculine"],
                                          [refs[lang]["feminine"] + refs[lang]["masculine"]])  # fmt: skip
            assert metrics[lang]["bleu"] == pytest.approx(whole.score, abs=1e-9)
            fem = sacrebleu.corpus_bleu(system["feminine"], [refs[lang]["feminine"]])
            assert metrics[lang]["bleu_feminine"] == pytest.approx(fem.score, abs=1e-9)
    comparison = _json(out / "compare" / "mtgeneval" / "a_vs_b" / "comparison.json")
    rows = {(r["lang"], r["figure"]): r for r in comparison["paired"]["rows"]}
    for lang in LANGS:
        f, m = refs[lang]["feminine"], refs[lang]["masculine"]
        wrong = sum(1 for i, (x, y) in enumerate(zip(f, m)) if i % 2 and _words(y) - _words(x))
        metrics = _json(out / "b" / "mtgeneval" / "metrics.json")["languages"][lang]
        assert metrics["accuracy_feminine"] == pytest.approx(1 - wrong / len(f))
        row = rows[(lang, "accuracy_feminine")]
        assert (row["before_only"], row["after_only"]) == (wrong, 0)
        assert row["p_value"] == pytest.approx(_mcnemar(wrong, 0), rel=1e-12)


def _f1(rows: list[dict], gender: str) -> float:
    hits = sum(r["gold"] == r["predicted"] == gender for r in rows)
    return 100 * 2 * hits / (sum(r["predicted"] == gender for r in rows) + sum(r["gold"] == gender for r in rows))


def test_winomt_by_hand(study) -> None:
    _, out, _, _ = study
    comparison = _json(out / "compare" / "winomt" / "a_vs_b" / "comparison.json")
    assert comparison["benchmark"] == "winomt"
    rows = {(r["lang"], r["figure"]): r for r in comparison["paired"]["rows"]}
    for lang in LANGS:
        details = {n: [json.loads(x) for x in (out / n / "winomt" / lang / f"{lang}.details.jsonl").read_text(
            encoding="utf-8").splitlines()] for n in ("a", "b")}  # fmt: skip
        b = sum(x["correct"] and not y["correct"] for x, y in zip(details["a"], details["b"]))
        c = sum(y["correct"] and not x["correct"] for x, y in zip(details["a"], details["b"]))
        row = rows[(lang, "winomt_accuracy")]
        assert (row["before_only"], row["after_only"]) == (b, c) and b > c
        assert row["p_value"] == pytest.approx(_mcnemar(b, c), rel=1e-12)
        for side, name in (("before", "a"), ("after", "b")):
            gap = _f1(details[name], "male") - _f1(details[name], "female")
            assert rows[(lang, "winomt_delta_g")][side] == pytest.approx(gap)
            assert _json(out / name / "winomt" / lang / "metrics.json")["delta_g"] == pytest.approx(gap)
    for side, name in (("before", "a"), ("after", "b")):  # the mean over the languages, tested as one figure
        accuracies = [_json(out / name / "winomt" / lang / "metrics.json")["accuracy"] for lang in LANGS]
        assert rows[("mean", "winomt_accuracy")][side] == pytest.approx(sum(accuracies) / len(LANGS))
    assert rows[("mean", "winomt_accuracy")]["test"] == "paired bootstrap" and ("mean", "winomt_delta_g_size") in rows


def test_index_and_study_tex(study) -> None:
    _, out, hyps, _ = study
    page = (out / "index.html").read_text(encoding="utf-8")
    ET.fromstring(page)  # well-formed
    assert "<h1>Tiny study. Bias study: a, b</h1>" in page
    links = re.findall(r'href="([^"]+)"', page)
    assert len(links) == 2 * (1 + len(LANGS)) + 2 + 1  # reports, comparisons, study.tex
    assert all((out / link).is_file() for link in links), links
    tex = (out / "study.tex").read_text(encoding="utf-8")
    assert "\\caption{Tiny study. " in tex and "\\label{tab:study}" in tex
    bleu = _json(out / "b" / "mtgeneval" / "metrics.json")["languages"]["de"]["bleu"]
    assert f"{bleu:.1f}" in tex and tex.count("\\midrule") == 2  # under the header, between the two systems
    assert f'<td class="num">{bleu:.1f}</td>' in page  # the headline table on the index page too, numbers right
    cells = re.findall(r"<tr><td>([^<]*)</td><td>([^<]*)</td>", page)
    assert cells == [("a (baseline)", lang) for lang in LANGS] + [("b", lang) for lang in LANGS]
    assert "The baseline is a: each comparison sets another system against it." in page


def test_without_figures_no_report_or_comparison_draws_one(study) -> None:
    """``--no_figures`` reaches every report (its rebuild command says so) and comparison: no figure file, no figure on
    a page (a report or comparison without figures is otherwise the same: tests/bias_eval/test_cli.py and
    tests/scripts/test_compare_reports.py)."""
    _, out, _, _ = study
    assert not [p for p in out.rglob("*") if "figures" in p.relative_to(out).parts]
    pages = list(out.glob("*/*/**/*.html"))
    assert len(pages) == 2 * (1 + len(LANGS)) + 2  # the reports' pages, then one comparison's per benchmark
    assert not [p for p in pages if "<figure" in p.read_text(encoding="utf-8")]
    commands = [_json(p)["config"]["command"] for p in out.glob("*/*/**/metrics.json")]
    assert commands and all(c.endswith(" --no_figures") for c in commands)


def test_every_recorded_path_is_the_final_one(study) -> None:
    """Each report's rebuild command (``--out``), each comparison's sources and the console name folders that exist
    under the study's folder, never a staging folder beside it."""
    root, out, _, stdout = study
    written = {p: p.read_text(encoding="utf-8") for p in out.rglob("*") if p.suffix in {".html", ".md", ".json"}}
    commands = [_json(p)["config"]["command"] for p in out.glob("*/*/**/metrics.json")]
    assert len(commands) == 2 * (1 + len(LANGS))
    for command in commands:
        folder = Path(re.search(r"--out (\S+)", command).group(1))
        assert folder.is_dir() and out in folder.parents, command
    for comparison in out.glob("compare/*/*/comparison.json"):
        folders = [Path(s.split(": ", 1)[1].split(" (")[0]) for s in _json(comparison)["sources"]]
        assert len(folders) >= 2 and all(f.is_dir() and out in f.parents for f in folders), folders
    console = re.findall(r"report written to (\S+)/:", stdout)
    assert len(console) == len(commands) and all(Path(f).is_dir() and out in Path(f).parents for f in console)
    assert {p.name for p in root.iterdir()} == {"a", "b", "geneval", "out"}  # nothing staged beside the study
    for where, text in [*written.items(), ("console", stdout)]:
        assert ".tmp" not in text, where


def test_bad_input_one_line_and_nothing_written(study, tmp_path: Path) -> None:
    root, _, _, _ = study
    out = tmp_path / "bad"
    missing = script_in_process(main, "--systems", f"a={root / 'a'},b={root / 'nowhere'}", "--langs", "de",
                                "--out", str(out), "--mtgeneval_dir", str(root / "geneval"))  # fmt: skip
    assert missing.returncode != 0 and len(missing.stderr.strip().splitlines()) == 1
    assert "b:" in missing.stderr and "is missing" in missing.stderr
    one = script_in_process(main, "--systems", f"a={root / 'a'}", "--langs", "de", "--out", str(out))
    assert one.returncode != 0 and "at least two systems" in one.stderr
    two = f"a={root / 'a'},b={root / 'b'}"
    portuguese = script_in_process(main, "--systems", two, "--langs", "PT", "--benchmarks", "winomt", "--out", str(out))
    assert portuguese.returncode != 0 and "--langs pt: WinoMT is scored for" in portuguese.stderr
    unknown = script_in_process(main, "--systems", two, "--langs", "de,qqq9", "--out", str(out))
    assert unknown.returncode != 0 and len(unknown.stderr.strip().splitlines()) == 1 and "--langs" in unknown.stderr
    (root / "b" / "winomt" / "es.txt").rename(root / "b" / "winomt" / "es.keep")
    try:
        broken = script_in_process(main, "--systems", f"a={root / 'a'},b={root / 'b'}", "--langs", "de,es",
                                   "--benchmarks", "winomt", "--out", str(out))  # fmt: skip
    finally:
        (root / "b" / "winomt" / "es.keep").rename(root / "b" / "winomt" / "es.txt")
    assert broken.returncode != 0 and "es.txt is missing" in broken.stderr
    assert not out.exists() and not list(tmp_path.glob(".bad.*"))


def test_a_failure_midway_leaves_nothing(study, tmp_path: Path) -> None:
    root, _, _, _ = study
    shutil.copytree(root / "a" / "winomt", tmp_path / "c" / "winomt")
    (tmp_path / "c" / "winomt" / "es.txt").write_text("Not a sentence of WinoMT. ||| Nada.\n", encoding="utf-8")
    out = tmp_path / "out"
    done = script_in_process(main, "--systems", f"a={root / 'a'},c={tmp_path / 'c'}", "--langs", "de,es",
                             "--benchmarks", "winomt", "--out", str(out), "--bootstrap_samples", "50",
                             "--no_figures")  # fmt: skip
    assert done.returncode != 0 and "es.txt: line 1" in done.stderr.strip().splitlines()[-1]
    assert not out.exists() and not list(tmp_path.glob(".out.*"))


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no pdflatex on this machine")
def test_every_table_of_the_study_in_one_two_column_paper(study, tmp_path: Path) -> None:
    """Every .tex the study wrote (each report's, each comparison's, study.tex) in one two-column article: it
    compiles, with no label defined twice and no overfull box."""
    _, out, _, _ = study
    tables = sorted(out.rglob("*.tex"))
    assert len(tables) == 2 * (1 + len(LANGS)) + 2 + 1
    body = "".join(f"\\input{{{t}}}\n\\clearpage\n" for t in tables)
    (tmp_path / "paper.tex").write_text("\\documentclass[twocolumn]{article}\n\\usepackage{booktabs}\n"
                                        "\\usepackage{graphicx}\n\\begin{document}\n" + body + "\\end{document}\n",
                                        encoding="utf-8")  # fmt: skip
    for _ in range(2):  # the second run reads the labels of the first
        done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "paper.tex"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
        assert done.returncode == 0, done.stdout[-3000:]
    assert "multiply" not in done.stdout and "Overfull \\hbox" not in done.stdout, done.stdout[-3000:]
