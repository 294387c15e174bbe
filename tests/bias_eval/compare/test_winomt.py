"""Two WinoMT reports compared (bias_eval.benchmarks, bias_eval.compare.winomt), each system's report made by
bias_eval's one call: Google's German outputs on a stratified subset against a copy whose female-gold lines are made
masculine. McNemar's p from the two reports' per-sentence details by the binomial sum, F1, ΔG and ΔS by hand from the
details and the benchmark's files, Holm's adjustment by its definition; the files, the LaTeX label and table*, an
earlier report's details without the pro/anti items, and two benchmarks refused in one line through the command line."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from fractions import Fraction
from pathlib import Path

import pytest
from geneval_helpers import assert_same_but_figures
from testing_utils import WINOMT, script_in_process
from winomt_helpers import GOOGLE, systems

from bias_eval.benchmarks import compare_reports, make_report
from bias_eval.core.errors import UserError
from bias_eval.core.latex import Layout
from bias_eval.core.report import Report
from bias_eval.core.settings import ReportOptions, ReportSettings
from mtkit.cli.compare_reports import main as compare_main

NAMES = ["google", "degraded"]


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Report, Report]:
    """Two sets of one German report each (``<set>/de``), as the one call returns them."""
    if not (GOOGLE / "en-de.txt").is_file():
        pytest.skip(f"{GOOGLE} is not there")
    data, good, bad, _ = systems(200)
    root = tmp_path_factory.mktemp("winomt_compare")
    found = {}
    for name, translations in zip(NAMES, (good, bad)):  # bias_eval's one call: a set of <lang>/ reports
        settings = ReportSettings(
            {"hyp_file": name}, name, "cmd", options=ReportOptions(bootstrap_samples=200, name=name)
        )
        found[name] = make_report(data, {"de": translations}, settings, root / name, log=None)
    return root / NAMES[0], root / NAMES[1], found[NAMES[0]], found[NAMES[1]]


def test_make_report_returns_the_set_it_writes(reports) -> None:
    """The one call's WinoMT set is what reading the folder back gives (``<lang>/metrics.json`` and the details)."""
    a, _, made, _ = reports
    read = Report.read(a, "BEFORE")
    assert read.metrics == made.metrics and read.folder == made.folder == a
    assert json.loads((a / "de" / "metrics.json").read_text(encoding="utf-8")) == made.metrics["languages"]["de"]
    assert made.rows("de", "BEFORE") == read.rows("de", "BEFORE") == _details(a)  # held, and read from the file


@pytest.fixture(scope="module")
def compared(reports, tmp_path_factory: pytest.TempPathFactory):
    a, b, _, _ = reports
    out = tmp_path_factory.mktemp("cmp") / "out"
    read = [Report.read(f, arg) for f, arg in ((a, "BEFORE"), (b, "AFTER"))]
    return out, compare_reports(*read, NAMES, out, layout=Layout("tab:wino-de", wide=True))


def test_a_comparison_of_held_reports_is_that_of_the_folders(reports, compared, tmp_path: Path) -> None:
    """The reports as the one call returns them (details in memory) compare exactly as the same reports read back
    from their folders: every file of the comparison, byte for byte."""
    _, _, made_a, made_b = reports
    out, _ = compared
    held = tmp_path / "held"
    compare_reports(made_a, made_b, NAMES, held, layout=Layout("tab:wino-de", wide=True))
    for name in ("comparison.md", "comparison.html", "comparison.json", "comparison.tex"):
        assert (held / name).read_bytes() == (out / name).read_bytes(), name


def test_without_figures_every_other_file_is_as_with_them(reports, compared, tmp_path: Path) -> None:
    """``figures=False``: the comparison's files but its figure, byte for byte (tests/bias_eval/geneval_helpers.py)."""
    _, _, made_a, made_b = reports
    out, _ = compared
    compare_reports(made_a, made_b, NAMES, tmp_path / "bare", layout=Layout("tab:wino-de", wide=True), figures=False)
    assert_same_but_figures(out, tmp_path / "bare")


def _details(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "de" / "de.details.jsonl").read_text(encoding="utf-8").splitlines()]


def _rows(compared) -> dict[str, dict]:
    return {r["figure"]: r for r in compared[1].paired["rows"]}


def test_mcnemar_by_the_binomial_sum(reports, compared) -> None:
    a, b, made_a, made_b = reports
    ma, mb = (r.metrics["languages"]["de"] for r in (made_a, made_b))
    before, after = _details(a), _details(b)
    only_b = sum(x["correct"] and not y["correct"] for x, y in zip(before, after))
    only_c = sum(y["correct"] and not x["correct"] for x, y in zip(before, after))
    n = only_b + only_c
    assert n > 0  # the degraded copy is judged differently somewhere
    p = min(Fraction(1), 2 * sum(Fraction(math.comb(n, k), 2**n) for k in range(min(only_b, only_c) + 1)))
    row = _rows(compared)["winomt_accuracy"]
    assert (row["before_only"], row["after_only"]) == (only_b, only_c)
    assert row["p_value"] == pytest.approx(float(p), rel=1e-12)
    assert row["before"] == pytest.approx(ma["accuracy"]) and row["after"] == pytest.approx(mb["accuracy"])
    assert row["change"] == pytest.approx(100 * (only_c - only_b) / len(before))


def _f1(rows: list[dict], gender: str) -> float:
    hits = sum(r["gold"] == r["predicted"] == gender for r in rows)
    return 100 * 2 * hits / (sum(r["predicted"] == gender for r in rows) + sum(r["gold"] == gender for r in rows))


def _delta_s(rows: list[dict]) -> float:
    """Accuracy on en_pro.txt minus on en_anti.txt, each item judged by the last line translating its sentence."""
    last = {r["source"]: r["predicted"] for r in rows}
    shares = []
    for name in ("en_pro.txt", "en_anti.txt"):
        items = [line.split("\t") for line in (WINOMT / name).read_text(encoding="utf-8").splitlines()]
        judged = [last[sentence] == gold for gold, _, sentence, _ in items if sentence in last]
        shares.append(100 * sum(judged) / len(judged))
    return shares[0] - shares[1]


def test_delta_g_and_delta_s_by_hand(reports, compared) -> None:
    a, b, _, _ = reports
    rows = _rows(compared)
    for side, folder in (("before", a), ("after", b)):
        details = _details(folder)
        male, female = _f1(details, "male"), _f1(details, "female")
        assert rows["winomt_f1_male"][side] == pytest.approx(male)
        assert rows["winomt_delta_g"][side] == pytest.approx(male - female)
        assert rows["winomt_delta_g_size"][side] == pytest.approx(abs(male - female))
        assert rows["winomt_delta_s"][side] == pytest.approx(_delta_s(details))
    for row in rows.values():  # each bootstrap interval excludes 0 exactly when its raw p is below 0.05
        lo, hi = row["ci95"]
        assert (lo > 0 or hi < 0) == (row["p_value"] < 0.05)


def test_holm_by_its_definition(compared) -> None:
    rows = [r for r in compared[1].paired["rows"] if not r.get("missing")]
    m, order = len(rows), sorted(rows, key=lambda r: r["p_value"])
    running = 0.0
    for rank, row in enumerate(order):
        running = max(running, min(1.0, (m - rank) * row["p_value"]))
        assert row["p_adjusted"] == pytest.approx(running)
        assert row["significant"] == (running < 0.05)


def test_files_page_and_latex(compared) -> None:
    out, done = compared
    for name in ("comparison.md", "comparison.json", "comparison.tex", "figures/comparison.svg",
                 "figures/comparison.pdf", "figures/comparison.png"):  # fmt: skip
        assert (out / name).is_file(), name
    page = (out / "comparison.html").read_text(encoding="utf-8")
    ET.fromstring(page)
    assert "<h1>WinoMT comparison</h1>" in page and "McNemar exact (b=" in page
    tex = (out / "comparison.tex").read_text(encoding="utf-8")
    assert "\\begin{table*}" in tex and "\\label{tab:wino-de}" in tex and "\\textwidth" in tex
    assert json.loads((out / "comparison.json").read_text(encoding="utf-8"))["benchmark"] == "winomt"
    assert done.summary.startswith("On WinoMT de, degraded ") and done.summary in done.markdown


def test_earlier_details_without_halves(reports, tmp_path: Path) -> None:
    a, b, made_a, made_b = reports
    old = tmp_path / "old" / "de"
    old.mkdir(parents=True)
    rows = _details(b)
    lines = [json.dumps({k: v for k, v in r.items() if k not in ("pro", "anti")}) for r in rows]
    (old / "de.details.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    before = Report(made_a.metrics["languages"]["de"], a / "de")
    done = compare_reports(before, Report(made_b.metrics["languages"]["de"], old), NAMES)
    by = {r["figure"]: r for r in done.paired["rows"]}
    assert by["winomt_delta_s"].get("missing") and "earlier version" in by["winomt_delta_s"]["refused"]
    assert not by["winomt_delta_g"].get("missing")


def test_the_command_line_and_two_benchmarks_refused(reports, tmp_path: Path) -> None:
    a, b, _, _ = reports
    cli = tmp_path / "cli"
    done = script_in_process(compare_main, str(a), str(b), "--out", str(cli), "--label", "tab:x", "--table_star")
    assert done.returncode == 0, done.stderr
    assert (cli / "comparison.md").read_text(encoding="utf-8").startswith("# WinoMT comparison")
    tex = (cli / "comparison.tex").read_text(encoding="utf-8")
    assert "\\label{tab:x}" in tex and "\\begin{table*}" in tex
    geneval = tmp_path / "geneval"
    geneval.mkdir()
    (geneval / "metrics.json").write_text(json.dumps({"languages": {"de": {"n": 1}}, "macro": {}}), encoding="utf-8")
    refused = script_in_process(compare_main, str(geneval), str(a / "de"), "--out", str(tmp_path / "mixed"))
    assert refused.returncode != 0 and len(refused.stderr.strip().splitlines()) == 1
    assert "cannot be compared" in refused.stderr and not (tmp_path / "mixed").exists()
    with pytest.raises(UserError, match="no language in common"):
        sets = Report({"benchmark": "winomt", "languages": {}}, a), Report({"benchmark": "winomt", "language": "de"}, b)
        compare_reports(*sets, NAMES)
