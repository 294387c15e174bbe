"""A WinoMT report (bias_eval.winomt.report) of the first 400 of Google's German lines: every figure recomputed from the
report's own per-sentence decisions (accuracy, F1 by hand, Wilson by its formula), the page well-formed with its
figures and the benchmark's BibTeX, the LaTeX table narrow and the published figures left out for part of the
benchmark."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from testing_utils import WINOMT

from bias_eval.core.settings import ReportOptions, ReportSettings
from bias_eval.winomt.data import load_winomt, pair_translations
from bias_eval.winomt.report import make_winomt_report

GOOGLE_DE = WINOMT / "translations" / "google" / "en-de.txt"
Z = 1.959963984540054


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    if not GOOGLE_DE.is_file():
        pytest.skip(f"{GOOGLE_DE} is not there")
    data = load_winomt(WINOMT)
    pairs = [line.split(" ||| ") for line in GOOGLE_DE.read_text(encoding="utf-8").splitlines()[:400]]
    translations = pair_translations(data, [s for s, _ in pairs], [t for _, t in pairs], str(GOOGLE_DE))
    settings = ReportSettings({"hyp_file": str(GOOGLE_DE)}, "Google's first 400", "cmd",
                              options=ReportOptions(bootstrap_samples=50, name="system A"))  # fmt: skip
    out = tmp_path_factory.mktemp("winomt") / "de"
    return out, make_winomt_report(data, translations, "de", settings, out, log=None).metrics


def _wilson(k: int, n: int) -> list[float]:
    p = k / n
    centre = (p + Z**2 / (2 * n)) / (1 + Z**2 / n)
    half = Z / (1 + Z**2 / n) * math.sqrt(p * (1 - p) / n + Z**2 / (4 * n**2))
    return [100 * (centre - half), 100 * (centre + half)]


def test_figures_from_the_reports_own_decisions(report) -> None:
    out, metrics = report
    rows = [json.loads(line) for line in (out / "de.details.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) == metrics["n"] == 400
    right = sum(r["predicted"] == r["gold"] for r in rows)
    assert metrics["accuracy"] == pytest.approx(100 * right / 400)
    assert metrics["accuracy_ci95"] == pytest.approx(_wilson(right, 400))
    f1 = {}
    for g in ("male", "female"):
        hits = sum(r["predicted"] == r["gold"] == g for r in rows)
        precision = hits / sum(r["predicted"] == g for r in rows)
        recall = hits / sum(r["gold"] == g for r in rows)
        f1[g] = 100 * 2 * precision * recall / (precision + recall)
        gold = [r for r in rows if r["gold"] == g]
        assert metrics["by_gold"][g]["accuracy"] == pytest.approx(100 * hits / len(gold))
    assert (metrics["f1_male"], metrics["f1_female"]) == (pytest.approx(f1["male"]), pytest.approx(f1["female"]))
    assert metrics["delta_g"] == pytest.approx(f1["male"] - f1["female"])
    for profession in metrics["professions"][:5]:
        for g in ("male", "female"):
            mine = [r for r in rows if r["profession"].lower() == profession["profession"] and r["gold"] == g]
            k = sum(r["correct"] for r in mine)
            assert profession["by_gold"][g]["n"] == len(mine)
            if mine:
                assert profession["by_gold"][g]["accuracy_ci95"] == pytest.approx(_wilson(k, len(mine)))


def test_the_files_the_page_and_the_table(report) -> None:
    out, metrics = report
    names = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}
    figures = {f"figures/{n}.{f}" for n in ("accuracy", "professions") for f in ("svg", "pdf", "png")}
    assert names == {"metrics.json", "report.md", "report.html", "report.tex", "references.bib", "professions.tsv",
                     "de.details.jsonl"} | figures  # fmt: skip
    page = (out / "report.html").read_text(encoding="utf-8")
    root = ET.fromstring(page.split("\n", 1)[1])  # well-formed XHTML after the doctype
    assert root.find(".//{*}h1").text == "Gender bias on WinoMT, EN→de: system A"
    assert {f.get("id") for f in root.iter("{http://www.w3.org/1999/xhtml}figure")} == {"fig-accuracy",
                                                                                         "fig-professions"}  # fmt: skip
    assert "@inproceedings{stanovsky-etal-2019-evaluating" in page
    assert "Not set beside published figures: 400 lines translate part of the benchmark" in page
    assert metrics["config"]["untranslated"] == 3888 - 400 and metrics["config"]["moved"] == 0
    tex = (out / "report.tex").read_text(encoding="utf-8")
    assert "\\begin{tabular}{lrrr}" in tex and "resizebox" not in tex and "\\label{tab:winomt}" in tex
    low, high = metrics["accuracy_ci95"]
    assert f"accuracy & {metrics['accuracy']:.1f} & {low:.1f}, {high:.1f} &  \\\\" in tex  # no published figure


#: a two-column page with the column of ACL's style (16 cm of text, 0.6 cm between columns: 7.7 cm each), 11 pt
PAPER = r"""\documentclass[11pt,twocolumn]{article}
\usepackage[utf8]{inputenc}
\usepackage{booktabs}
\setlength{\textwidth}{16cm}
\setlength{\columnsep}{0.6cm}
\begin{document}
Text.
\input{report.tex}
\end{document}
"""


@pytest.mark.slow  # pdflatex (Debian's texlive-latex-base and texlive-latex-recommended)
def test_the_table_fits_a_column_of_a_two_column_paper(report, tmp_path: Path) -> None:
    """report.tex compiles in a two-column document with no overfull box, at its own size (not scaled)."""
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed")
    out, _ = report
    shutil.copy(out / "report.tex", tmp_path / "report.tex")
    (tmp_path / "paper.tex").write_text(PAPER, encoding="utf-8")
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "paper.tex"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    log = (tmp_path / "paper.log").read_text(encoding="latin-1")
    assert run.returncode == 0, log[-2000:]
    assert "Overfull" not in log


def test_latex_label_and_table_star(report) -> None:
    """--label and --table_star (a Layout) reach report.tex: the label given and a table* across both columns."""
    from bias_eval.core.latex import Layout
    from bias_eval.winomt.page import render_latex
    from bias_eval.winomt.report import title

    out, metrics = report
    assert "\\label{tab:winomt}" in (out / "report.tex").read_text(encoding="utf-8")
    tex = render_latex(metrics, title(metrics), Layout("tab:wino-a", wide=True))
    assert "\\begin{table*}" in tex and "\\end{table*}" in tex and "\\label{tab:wino-a}" in tex
    assert "system A" in tex.split("\\caption{", 1)[1]
