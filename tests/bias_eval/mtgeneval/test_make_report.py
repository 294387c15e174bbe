"""``bias_eval.make_report`` and ``bias_eval.compare_reports`` called in memory write what the two scripts write on
the same inputs (the first 300 sentence pairs of MT-GenEval dev, German), and the report's BLEU is sacreBLEU's
own."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
import sacrebleu
from geneval_helpers import make_subset
from testing_utils import MTGENEVAL, script_in_process

import bias_eval
from mtkit.cli.bias_report import main as report_main
from mtkit.cli.compare_reports import main as compare_main
from mtkit.data.mtgeneval import load_mtgeneval

GENDERS = ("feminine", "masculine")
FILES = ("metrics.json", "report.md", "report.html", "de.details.jsonl", "figures/gap.svg")


@pytest.fixture(scope="module")
def data_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 300 German sentence pairs of MT-GenEval dev, in its layout."""
    if not (MTGENEVAL / "sentences" / "dev").is_dir():
        pytest.skip(f"shared MT-GenEval data not found at {MTGENEVAL}")
    return make_subset(MTGENEVAL, tmp_path_factory.mktemp("geneval"), ("de",), 300, split="dev")


@pytest.fixture(scope="module")
def hyp_dir(data_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """German references as hypotheses: every fourth feminine one replaced by its masculine counterpart."""
    folder = tmp_path_factory.mktemp("hyps")
    ref = {g: _lines(data_root / f"sentences/dev/geneval-sentences-{g}-dev.en_de.de") for g in GENDERS}
    hyps = {"feminine": [m if i % 4 == 0 else f for i, (f, m) in enumerate(zip(*ref.values()))]}
    hyps["masculine"] = ref["masculine"]
    for g, lines in hyps.items():
        (folder / f"de.{g}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").rstrip("\n").split("\n")


def test_make_report_writes_what_the_script_writes_and_compare_reports_too(
    data_root: Path, hyp_dir: Path, tmp_path: Path
) -> None:
    cli_out, mem_out = tmp_path / "cli", tmp_path / "mem"
    flags = ["--mtgeneval_dir", str(data_root), "--split", "dev", "--target_langs", "de", "--hyp_dir", str(hyp_dir)]
    flags += ["--out", str(cli_out), "--bootstrap_samples", "30", "--seed", "7", "--examples", "3"]
    assert script_in_process(report_main, *flags).returncode == 0

    data = load_mtgeneval(data_root, "dev", ["de"])
    hypotheses = {"de": {g: _lines(hyp_dir / f"de.{g}.txt") for g in GENDERS}}
    settings = bias_eval.ReportSettings(
        hypotheses={"hyp_dir": str(hyp_dir)},
        description=f"files in {hyp_dir}",
        command=shlex.join(["python", "scripts/bias_report.py", *flags]),  # the script's own, written out here
        hyp_dir=hyp_dir,
        options=bias_eval.ReportOptions(bootstrap_samples=30, seed=7, examples=3),
    )
    report = bias_eval.make_report(data, hypotheses, settings, mem_out, log=None)
    metrics = report.metrics
    for name in FILES:
        assert (mem_out / name).read_bytes() == (cli_out / name).read_bytes(), name
    bib = (mem_out / "references.bib").read_text(encoding="utf-8")  # the benchmark's paper, on the page too
    assert bib.startswith("@inproceedings{currey-etal-2022-mt,") and "Currey, Anna" in bib
    assert "currey-etal-2022-mt" in (mem_out / "report.html").read_text(encoding="utf-8")

    de = metrics["languages"]["de"]  # against sacreBLEU itself, with its default (13a) tokenizer for German
    for g in GENDERS:
        refs = _lines(data_root / f"sentences/dev/geneval-sentences-{g}-dev.en_de.de")
        assert de[f"bleu_{g}"] == pytest.approx(sacrebleu.corpus_bleu(hypotheses["de"][g], [refs]).score)
    assert de["bleu_feminine"] < de["bleu_masculine"]  # a quarter of the feminine hypotheses are masculine

    names = ["script", "memory"]
    cmp_out = tmp_path / "cmp"
    assert (
        script_in_process(
            compare_main, str(cli_out), str(mem_out), "--out", str(cmp_out), "--names", "script,memory"
        ).returncode
        == 0
    )
    read = bias_eval.Report.read(cli_out, "BEFORE")  # the script's report read back; the other one held in memory
    assert read.metrics == report.metrics and read.rows("de", "BEFORE") == report.rows("de", "AFTER")
    done = bias_eval.compare_reports(read, report, names, tmp_path / "cmp_mem")
    for name in ("comparison.md", "comparison.html", "comparison.json"):
        assert (tmp_path / "cmp_mem" / name).read_bytes() == (cmp_out / name).read_bytes(), name
    assert done.paired["refused"] is None and done.paired["rows"]
    tested = [row for row in done.paired["rows"] if not row.get("missing")]
    assert tested and all(row["change"] == 0 for row in tested)  # the same sentences, the same hypotheses
    refused = {row["refused"] for row in done.paired["rows"] if row.get("refused")}
    # the reports' 30 resamples are too few for a 95% interval; under Holm the comparison draws enough for the
    # bootstrap's smallest p to stay at half the level over its tests, so nothing is refused
    assert refused == set() and 2 / (done.paired["samples"] + 1) * len(done.paired["rows"]) <= 0.025
