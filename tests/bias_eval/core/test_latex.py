"""``report.tex`` and ``comparison.tex`` of real scores (60 German pairs of MT-GenEval dev) compile with pdflatex, with
system names full of LaTeX's special characters; where no pdflatex is installed (a clean CI clone has no TeX), that
test is skipped and a syntax check of the two files still runs."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from bias_eval.benchmarks import compare_reports
from bias_eval.compare.mtgeneval_paper import render_latex as comparison_latex
from bias_eval.core.files import jsonl
from bias_eval.core.latex import escape
from bias_eval.core.report import Report
from bias_eval.mtgeneval.gendered import LanguageData, Side
from bias_eval.mtgeneval.report import metrics_document, render_latex
from bias_eval.mtgeneval.scoring import macro_average, score_language
from mtkit.data.mtgeneval import load_mtgeneval

PDFLATEX = shutil.which("pdflatex")
NAMES = ["base & co_1", "tuned 100% {$#~^\\}"]
N = 60


@pytest.fixture(scope="module")
def tables(shared_geneval: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """report.tex of the references as hypotheses, and comparison.tex against the masculine form for every third
    feminine sentence (the paired tests read the two systems' details)."""
    whole = load_mtgeneval(shared_geneval, "dev", ["de"]).languages["de"]
    ref_f, ref_m = whole.feminine.references[:N], whole.masculine.references[:N]
    data = LanguageData("de", Side(whole.feminine.sources[:N], ref_f, ref_m, None, "f"),
                        Side(whole.masculine.sources[:N], ref_m, ref_f, None, "m"), paired=True)  # fmt: skip
    tuned = [m if i % 3 == 0 else f for i, (f, m) in enumerate(zip(ref_f, ref_m))]
    config = {"data": "MT-GenEval dev (x)", "split": "dev", "languages": ["de"], "hypotheses": {"hyp_dir": "h"}}
    folders, metrics = [], []
    for name, feminine in zip(NAMES, (ref_f, tuned)):
        result = score_language(data, {"feminine": feminine, "masculine": ref_m}, samples=100, seed=1)
        metrics.append(metrics_document([result], macro_average([result]), config | {"name": name}))
        folders.append(tmp_path_factory.mktemp("report"))
        (folders[-1] / "de.details.jsonl").write_text(jsonl(result.details), encoding="utf-8")
    done = compare_reports(*(Report(m, f) for m, f in zip(metrics, folders)), NAMES)
    assert done.paired["refused"] is None
    return {"report": render_latex(metrics[0]), "comparison": comparison_latex(done.rows, done.paired, NAMES),
            "metrics": metrics[0]}  # fmt: skip


def test_tables_are_well_formed_and_escaped(tables: dict[str, str]) -> None:
    """A syntax check that needs no TeX: environments closed in order, braces balanced, no bare special character."""
    for name, text in ((k, v) for k, v in tables.items() if isinstance(v, str)):
        opened = []
        for kind, env in re.findall(r"\\(begin|end)\{(\w+)\}", text):
            if kind == "begin":
                opened.append(env)
            else:
                assert opened.pop() == env, name
        assert not opened, name
        bare = re.sub(r"\\[{}%&$#_]", "", text.split("\n", 1)[1])  # the escaped ones; the first line is a comment
        assert bare.count("{") == bare.count("}"), name
        plain = bare.replace(" & ", " ").replace("{%\n", "{\n")  # & between cells, % ending \resizebox's line
        assert not re.search(r"[%&#_]", plain), name
    assert escape(NAMES[1]) in tables["comparison"] and "booktabs" in tables["report"]


@pytest.mark.skipif(PDFLATEX is None, reason="no pdflatex on this machine (a clean CI clone has no TeX)")
def test_tables_compile_with_pdflatex(tables: dict[str, str], tmp_path: Path) -> None:
    for name, text in ((k, v) for k, v in tables.items() if isinstance(v, str)):
        (tmp_path / f"{name}.tex").write_text(text, encoding="utf-8")
    (tmp_path / "paper.tex").write_text(
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\usepackage{graphicx}\n\\begin{document}\n"
        "\\input{report.tex}\n\\input{comparison.tex}\n\\end{document}\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", "paper.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    assert (tmp_path / "paper.pdf").read_bytes().startswith(b"%PDF-")
    assert "Missing" not in done.stdout and "Undefined control sequence" not in done.stdout


def test_a_one_language_comparison_has_no_macro_block(tables: dict[str, str]) -> None:
    """One language: its rows are the whole comparison, never repeated as a macro average; the table shows the
    Holm-adjusted p beside the raw one and names each interval it shows."""
    assert "macro" not in tables["comparison"] and "\\textbf" not in tables["comparison"]
    assert "p adj." in tables["comparison"] and "Holm" in tables["comparison"]
    assert "Newcombe" in tables["comparison"] and "Wilson" in tables["comparison"]


def _compile(tmp_path: Path, tables: dict[str, str], options: str = "") -> str:
    """pdflatex's log of a paper that inputs every table of ``tables``; the log is the stdout."""
    for name, text in tables.items():
        (tmp_path / f"{name}.tex").write_text(text, encoding="utf-8")
    body = "".join(f"\\input{{{name}.tex}}\n" for name in tables)
    (tmp_path / "paper.tex").write_text(
        f"\\documentclass[{options}]{{article}}\n\\usepackage{{booktabs}}\n\\usepackage{{graphicx}}\n"
        f"\\begin{{document}}\n{body}\\end{{document}}\n",
        encoding="utf-8",
    )
    for _ in range(2):  # the second run reads the labels of the first: a label defined twice is reported then
        done = subprocess.run([PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", "paper.tex"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
        assert done.returncode == 0, done.stdout[-3000:]
    return done.stdout


@pytest.mark.slow
@pytest.mark.skipif(PDFLATEX is None, reason="no pdflatex on this machine (a clean CI clone has no TeX)")
def test_a_two_column_paper_with_labels_and_table_star(tables: dict[str, str], tmp_path: Path) -> None:
    """Every table in a two-column paper, the report's compact table beside its full one, a second copy of each
    under its own --label and as table*: no overfull box, no label defined twice."""
    from bias_eval.core.latex import Layout

    metrics = tables["metrics"]
    again = render_latex(metrics, Layout("tab:second", wide=True))
    assert "\\begin{table*}" in again and "\\label{tab:second-compact}" in again and "\\label{tab:second}" in again
    texts = {"report": tables["report"], "comparison": tables["comparison"], "second": again}
    log = _compile(tmp_path, texts, "twocolumn")
    assert "Overfull \\hbox" not in log and "multiply" not in log, log[-3000:]
    assert tables["report"].count("\\begin{table}") == 2  # the compact table and the full one
