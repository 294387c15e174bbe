"""The report script end to end: a five-language dev report, its files, and the bad-input cases."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import unicodedata
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
import sacrebleu
from geneval_helpers import (
    LANGS,
    assert_same_but_figures,
    geneval_file,
    make_subset,
    read_plain,
    reference_hyps,
    write_hyps,
)
from testing_utils import run_script, script_in_process

KEYS = {
    "n",
    "bleu",
    "bleu_feminine",
    "bleu_masculine",
    "bleu_gap",
    "bleu_gap_ci95",
    "chrf_feminine",
    "chrf_masculine",
    "chrf_gap",
    "accuracy_feminine",
    "accuracy_masculine",
    "accuracy_pair",
    "fair_bleu",
}
#: sentence pairs per language of the five-language report (the first of MT-GenEval dev; every line of the files is
#: read as MT-GenEval's own reader reads it: tests/mtkit/data/test_mtgeneval_layout.py)
LINES = 240


def bias_report(*args: str) -> subprocess.CompletedProcess[str]:
    """``scripts/bias_report.py ARGS`` by its ``main`` in this process (the script's own process, with its exit status
    and one-line error: test_error_from_the_script_is_one_line)."""
    from mtkit.cli.bias_report import main

    return script_in_process(main, *args)


@pytest.fixture(scope="module")
def dev_root(shared_geneval: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first :data:`LINES` sentence pairs of MT-GenEval dev in its five languages, in its layout."""
    return make_subset(shared_geneval, tmp_path_factory.mktemp("dev"), LANGS, LINES, split="dev")


@pytest.fixture(scope="module")
def full_report(dev_root: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """Five-language dev report of a system that always outputs the masculine reference."""
    tmp = tmp_path_factory.mktemp("full")
    hyp_dir = write_hyps(tmp / "hyps", reference_hyps(dev_root, LANGS, "dev", lambda g: "masculine"))
    out = tmp / "report"
    proc = bias_report(
        "--mtgeneval_dir",
        str(dev_root),
        "--split",
        "dev",
        "--target_langs",
        *LANGS,
        "--hyp_dir",
        str(hyp_dir),
        "--out",
        str(out),
        "--bootstrap_samples",
        "300",
        "--seed",
        "7",
    )
    assert proc.returncode == 0, proc.stderr
    return out, proc.stdout


def test_full_report_numbers_match_sacrebleu(full_report: tuple[Path, str], dev_root: Path) -> None:
    out, _ = full_report
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert sorted(metrics["languages"]) == list(LANGS)
    for lang, m in metrics["languages"].items():
        assert KEYS <= set(m) and KEYS <= set(metrics["macro"])
        ref_f = read_plain(geneval_file(dev_root, lang, "feminine", lang))
        ref_m = read_plain(geneval_file(dev_root, lang, "masculine", lang))
        assert m["n"] == 2 * LINES
        assert m["bleu_feminine"] == sacrebleu.corpus_bleu(ref_m, [ref_f]).score
        assert m["bleu_masculine"] == sacrebleu.corpus_bleu(ref_m, [ref_m]).score
        assert m["bleu"] == sacrebleu.corpus_bleu(ref_m + ref_m, [ref_f + ref_m]).score
        if lang == "de":  # chrF is slow to recompute; the other languages go through the same code
            assert m["chrf_feminine"] == sacrebleu.corpus_chrf(ref_m, [ref_f]).score
        assert m["bleu_gap"] == pytest.approx(m["bleu_masculine"] - m["bleu_feminine"])
        assert m["bleu_gap_ci95"][0] <= m["bleu_gap"] <= m["bleu_gap_ci95"][1]
        assert m["accuracy_masculine"] == 1.0
        assert 0.0 <= m["accuracy_feminine"] < 0.2
        assert m["accuracy_pair"] == m["accuracy_feminine"]
    macro = metrics["macro"]
    assert macro["bleu_gap"] == pytest.approx(sum(m["bleu_gap"] for m in metrics["languages"].values()) / 5)
    assert macro["bleu_gap_ci95"][0] <= macro["bleu_gap"] <= macro["bleu_gap_ci95"][1]
    config = metrics["config"]
    assert config["bootstrap_samples"] == 300 and config["seed"] == 7
    assert config["bleu_signature"].startswith("nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp")
    assert "fair_bleu" in config["definitions"] and "accuracy" in config["definitions"]


def test_without_figures_every_other_file_is_as_with_them(full_report: tuple[Path, str], dev_root: Path) -> None:
    """``--no_figures``: the full report's files but its figures, byte for byte (tests/bias_eval/geneval_helpers.py)."""
    out, _ = full_report
    hyp_dir = out.parent / "hyps"
    bare = out.parent / "bare"
    args = ["--split", "dev", "--target_langs", *LANGS, "--hyp_dir", str(hyp_dir), "--out", str(bare)]
    proc = bias_report("--mtgeneval_dir", str(dev_root), *args, "--bootstrap_samples", "300", "--seed", "7",
                       "--no_figures")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert_same_but_figures(out, bare)


def test_full_report_files(full_report: tuple[Path, str]) -> None:
    out, stdout = full_report
    assert "macro" in stdout and "Gap, masculine" in stdout  # main table printed
    for lang in LANGS:
        text = (out / f"{lang}.details.jsonl").read_text(encoding="utf-8")
        rows = [json.loads(line) for line in text.splitlines()]
        assert len(rows) == LINES
        row = rows[0]
        for key in (
            "source_feminine",
            "source_masculine",
            "hypothesis_feminine",
            "reference_masculine",
            "sentence_bleu_feminine",
            "correct_feminine",
            "correct_pair",
        ):
            assert key in row
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "| language | n | BLEU |" in md and "## Definitions" in md and "fair_bleu" in md
    assert not any(p.name.endswith(".tmp") for p in out.parent.iterdir())


class _TagBalance(HTMLParser):
    """Checks that every opened element is closed in order."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.problems: list[str] = []

    def handle_starttag(self, tag, attrs) -> None:
        self.stack.append(tag)

    def handle_endtag(self, tag) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"unexpected </{tag}> with open {self.stack[-3:]}")
        else:
            self.stack.pop()


def test_html_well_formed_with_embedded_figures(full_report: tuple[Path, str]) -> None:
    out, _ = full_report
    text = (out / "report.html").read_text(encoding="utf-8")
    checker = _TagBalance()
    checker.feed(text)
    checker.close()
    assert checker.problems == [] and checker.stack == []
    root = ET.fromstring(text.split("\n", 1)[1])  # strict XML parse (after the doctype line)
    ns = {"h": "http://www.w3.org/1999/xhtml"}
    images = root.findall(".//h:img", ns)
    assert len(images) == 3
    for img in images:
        src = img.get("src")
        assert src.startswith("data:image/svg+xml;base64,")
        ET.fromstring(base64.b64decode(src.split(",", 1)[1]))  # the embedded SVG parses as XML
    assert "http" not in "".join(img.get("src") for img in images)
    assert len(root.findall(".//h:table", ns)) == 2 + len(LANGS)  # main table, every figure, examples per language


def test_help_is_clean() -> None:
    proc = bias_report("--help")
    assert proc.returncode == 0 and proc.stderr == ""
    for flag in ("--mtgeneval_dir", "--hyp_dir", "--model", "--bootstrap_samples"):
        assert flag in proc.stdout


def test_error_from_the_script_is_one_line(small_geneval: Path, tmp_path: Path) -> None:
    """The script's own process: its exit status and its one-line error through a fresh interpreter."""
    out = tmp_path / "out"
    proc = run_script(
        "bias_report.py",
        "--mtgeneval_dir",
        str(small_geneval),
        "--split",
        "test",
        "--hyp_dir",
        str(tmp_path / "nohyps"),
        "--out",
        str(out),
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and proc.stderr.startswith("error: --hyp_dir:")
    assert not out.exists()


def test_hub_is_unreachable_offline(tmp_path: Path) -> None:
    proc = bias_report(
        "--hub",
        "--target_langs",
        "de",
        "--hyp_dir",
        str(tmp_path / "hyps"),  # not the report's parent: an output inside an input is refused first
        "--out",
        str(tmp_path / "o"),
    )  # offline: tests/conftest.py sets HF_HUB_OFFLINE and HF_DATASETS_OFFLINE for the whole run
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].startswith("error: --hub: cannot load gsarti/mt_geneval")


# ---------------------------------------------------------------------------------------------------
# bad input: one-line error naming the file, exit status 2, no report
# ---------------------------------------------------------------------------------------------------


@pytest.fixture
def good_hyps(small_geneval: Path, tmp_path: Path) -> Path:
    return write_hyps(tmp_path / "hyps", reference_hyps(small_geneval, ("de", "es"), "test", lambda g: g))


def _assert_clean_failure(status: int, err: str, out_dir: Path, *fragments: str) -> None:
    assert status == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    for fragment in fragments:
        assert fragment in lines[0]
    assert not out_dir.exists()


def _geneval_args(root: Path, hyps: Path, out: Path, *extra: str) -> list[str]:
    return [
        "--mtgeneval_dir",
        str(root),
        "--split",
        "test",
        "--hyp_dir",
        str(hyps),
        "--out",
        str(out),
        *extra,
    ]


def test_good_small_run_then_bad_runs_leave_it_untouched(
    run_cli, small_geneval: Path, good_hyps: Path, tmp_path: Path
) -> None:
    out = tmp_path / "report"
    status, stdout, _ = run_cli(*_geneval_args(small_geneval, good_hyps, out, "--bootstrap_samples", "50"))
    assert status == 0 and "macro" in stdout
    before = {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    figures = {f"figures/{n}.{f}" for n in ("gap", "bleu_by_gender", "accuracy") for f in ("svg", "pdf", "png")}
    files = {"metrics.json", "report.md", "report.html", "report.tex", "references.bib", "de.details.jsonl",
             "es.details.jsonl"}  # fmt: skip
    assert set(before) == {*files, *figures}
    (good_hyps / "es.masculine.txt").write_text("only one line\n", encoding="utf-8")
    status, _, err = run_cli(*_geneval_args(small_geneval, good_hyps, out))
    assert status == 2 and "es.masculine.txt: 1 lines, but the data has 25" in err
    assert {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_a_hyp_dir_without_target_langs_scores_its_languages_under_a_name(
    run_cli, shared_geneval: Path, tmp_path: Path
) -> None:
    """A folder of de and es hypotheses for data that also has fr: de and es are scored, stderr says so, and the
    command that rebuilds the report names them; --name is the report's title, metrics.json's name and in each
    caption of report.tex, whose two tables take --label (the compact one with -compact) and --table_star."""
    root = make_subset(shared_geneval, tmp_path / "geneval", ("de", "es", "fr"), 25)
    hyps = write_hyps(tmp_path / "hyps", reference_hyps(root, ("de", "es"), "test", lambda g: g))
    out = tmp_path / "report"
    args = ("--mtgeneval_dir", str(root), "--split", "test", "--hyp_dir", str(hyps), "--out", str(out))
    status, _, err = run_cli(*args, "--bootstrap_samples", "0", "--name", "system A & B", "--label", "tab:ab",
                             "--table_star")  # fmt: skip
    assert status == 0, err
    assert "--hyp_dir: scoring de, es" in err
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert sorted(metrics["languages"]) == ["de", "es"] and metrics["config"]["name"] == "system A & B"
    command = metrics["config"]["command"]
    assert "--target_langs de es" in command and "--name 'system A & B'" in command
    assert command.endswith("--label tab:ab --table_star")
    tex = (out / "report.tex").read_text(encoding="utf-8")  # the compact table, then the full one, each named
    assert tex.count("\\begin{table*}") == 2 and tex.count("\\caption{Gender bias of system A \\& B on") == 2
    assert tex.index("\\label{tab:ab-compact}") < tex.index("\\label{tab:ab}")
    title = "Gender bias of system A & B on MT-GenEval test, EN\u2192de, es"
    assert (out / "report.md").read_text(encoding="utf-8").startswith(f"# {title}\n")
    assert f"<h1>{title.replace('&', '&amp;')}</h1>" in (out / "report.html").read_text(encoding="utf-8")


def test_a_hyp_dir_without_hypothesis_files_is_one_line(run_cli, small_geneval: Path, tmp_path: Path) -> None:
    """Good data and a folder holding no ``<lang>.<gender>.txt`` file: one line naming the folder, nothing written."""
    empty = tmp_path / "hyps"
    empty.mkdir()
    (empty / "notes.txt").write_text("not a hypothesis file\n", encoding="utf-8")
    args = (
        "--mtgeneval_dir",
        str(small_geneval),
        "--split",
        "test",
        "--hyp_dir",
        str(empty),
        "--out",
        str(tmp_path / "o"),
    )
    status, _, err = run_cli(*args)
    _assert_clean_failure(status, err, tmp_path / "o", str(empty), "holds no <lang>.feminine.txt")


def test_hyp_line_count(run_cli, small_geneval: Path, good_hyps: Path, tmp_path: Path) -> None:
    path = good_hyps / "de.feminine.txt"
    path.write_text("\n".join(read_plain(path)[:-1]) + "\n", encoding="utf-8")
    status, _, err = run_cli(*_geneval_args(small_geneval, good_hyps, tmp_path / "o"))
    _assert_clean_failure(status, err, tmp_path / "o", str(path), "24 lines", "25 feminine")


def test_empty_hyp_file(run_cli, small_geneval: Path, good_hyps: Path, tmp_path: Path) -> None:
    path = good_hyps / "es.feminine.txt"
    path.write_bytes(b"")
    status, _, err = run_cli(*_geneval_args(small_geneval, good_hyps, tmp_path / "o"))
    _assert_clean_failure(status, err, tmp_path / "o", str(path), "empty")


def test_invalid_utf8_hyp_file(run_cli, small_geneval: Path, good_hyps: Path, tmp_path: Path) -> None:
    path = good_hyps / "de.masculine.txt"
    lines = read_plain(path)
    path.write_bytes(
        ("\n".join(lines[:3]) + "\n").encode()
        + "Ärztin".encode("latin-1")
        + b"\n"
        + ("\n".join(lines[4:]) + "\n").encode()
    )
    status, _, err = run_cli(*_geneval_args(small_geneval, good_hyps, tmp_path / "o"))
    _assert_clean_failure(status, err, tmp_path / "o", str(path), "invalid UTF-8 at line 4")


def test_missing_hyp_file(run_cli, small_geneval: Path, good_hyps: Path, tmp_path: Path) -> None:
    (good_hyps / "es.masculine.txt").unlink()
    status, _, err = run_cli(*_geneval_args(small_geneval, good_hyps, tmp_path / "o"))
    _assert_clean_failure(status, err, tmp_path / "o", "es.masculine.txt", "not found")


def test_language_not_present(run_cli, small_geneval: Path, good_hyps: Path, tmp_path: Path) -> None:
    status, _, err = run_cli(*_geneval_args(small_geneval, good_hyps, tmp_path / "o", "--target_langs", "de", "fr"))
    _assert_clean_failure(status, err, tmp_path / "o", "--target_langs", "'fr'", "available: de es")


def test_split_not_present(run_cli, small_geneval: Path, good_hyps: Path, tmp_path: Path) -> None:
    args = _geneval_args(small_geneval, good_hyps, tmp_path / "o")
    args[args.index("test")] = "dev"
    status, _, err = run_cli(*args)
    _assert_clean_failure(status, err, tmp_path / "o", "--split", "'dev' not present", "found: test")


def test_context_not_present(run_cli, small_geneval: Path, good_hyps: Path, tmp_path: Path) -> None:
    status, _, err = run_cli(*_geneval_args(small_geneval, good_hyps, tmp_path / "o", "--context"))
    _assert_clean_failure(status, err, tmp_path / "o", "--context", "not found")


def test_bad_gender_in_data_file(run_cli, tmp_path: Path) -> None:
    data = tmp_path / "data.csv"
    data.write_text("source,reference,gender,language\nA.,B.,f,es\nC.,D.,neutral,es\n", encoding="utf-8")
    status, _, err = run_cli("--data", str(data), "--hyp_dir", str(tmp_path / "hyps"), "--out", str(tmp_path / "o"))
    _assert_clean_failure(status, err, tmp_path / "o", str(data), "line 3", "'neutral'")


def test_out_is_a_file(run_cli, small_geneval: Path, good_hyps: Path, tmp_path: Path) -> None:
    out = tmp_path / "file"
    out.write_text("x", encoding="utf-8")
    status, _, err = run_cli(*_geneval_args(small_geneval, good_hyps, out))
    assert status == 2 and f"--out {out}: exists and is not a folder" in err and out.read_text(encoding="utf-8") == "x"


def test_data_file_report(run_cli, tmp_path: Path) -> None:
    data = tmp_path / "data.jsonl"
    rows = [
        {
            "source": f"s{i}",
            "reference": f"Die Ärztin Nummer {i} kam gestern.",
            "gender": "f",
            "language": "de",
        }
        for i in range(12)
    ]
    rows += [
        {"source": f"t{i}", "reference": f"Der Arzt Nummer {i} kam heute.", "gender": "m", "language": "de"}
        for i in range(9)
    ]
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    hyps = write_hyps(
        tmp_path / "h",
        {
            "de": {
                "feminine": [f"Der Arzt Nummer {i} kam gestern." for i in range(12)],
                "masculine": [r["reference"] for r in rows[12:]],
            }
        },
    )
    status, stdout, err = run_cli(
        "--data",
        str(data),
        "--hyp_dir",
        str(hyps),
        "--out",
        str(tmp_path / "o"),
        "--bootstrap_samples",
        "100",
        "--no_figures",
    )
    assert status == 0, err
    m = json.loads((tmp_path / "o" / "metrics.json").read_text(encoding="utf-8"))["languages"]["de"]
    assert (
        m["bleu_feminine"]
        == sacrebleu.corpus_bleu(
            [f"Der Arzt Nummer {i} kam gestern." for i in range(12)], [[r["reference"] for r in rows[:12]]]
        ).score
    )
    assert m["accuracy_pair"] is None
    assert "not paired" in (tmp_path / "o" / "report.md").read_text(encoding="utf-8")


def test_context_subset_report(run_cli, shared_geneval: Path, tmp_path: Path) -> None:
    root = make_subset(shared_geneval, tmp_path / "g", ("fr",), 30, split="dev", context=True)
    hyps = reference_hyps(root, ("fr",), "dev", lambda g: g)
    ctx_ref = root / "context" / "geneval-context-wikiprofessions-original-dev.en_fr.fr"
    hyps["fr"]["context"] = [f"Une phrase de contexte. <sep> {line}" for line in read_plain(ctx_ref)]
    hyp_dir = write_hyps(tmp_path / "h", hyps)
    out = tmp_path / "o"
    status, stdout, err = run_cli(
        *("--mtgeneval_dir", str(root), "--hyp_dir", str(hyp_dir), "--out", str(out), "--context"),
        *("--bootstrap_samples", "50", "--no_figures"),
    )
    assert status == 0, err
    assert "Accuracy in context" in stdout
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["languages"]["fr"]["accuracy_context"] == metrics["macro"]["accuracy_context"] == 1.0
    assert metrics["languages"]["fr"]["n_context"] == 30
    rows = (out / "fr.context.details.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(rows) == 30 and json.loads(rows[0])["scored_hypothesis"] == read_plain(ctx_ref)[0]


def test_sacrebleu_command_line_reproduces_the_report(full_report: tuple[Path, str]) -> None:
    out, _ = full_report
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    files = metrics["config"]["files"]["pt"]
    ref, hyp = files["reference_feminine"], files["hypothesis_feminine"]
    command = [sys.executable, "-m", "sacrebleu", ref, "-i", hyp, "-m", "bleu", "chrf", "-b", "-w", "6"]
    proc = subprocess.run(command, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    bleu, chrf = json.loads(proc.stdout)
    assert bleu == round(metrics["languages"]["pt"]["bleu_feminine"], 6)
    assert chrf == round(metrics["languages"]["pt"]["chrf_feminine"], 6)
    assert "sacrebleu " + files["reference_feminine"] in (out / "report.md").read_text(encoding="utf-8")


def _nfd(hyps: dict) -> dict:
    return {
        lang: {g: [unicodedata.normalize("NFD", x) for x in lines] for g, lines in k.items()}
        for lang, k in hyps.items()
    }


def test_decomposed_references_as_hypotheses_score_as_the_references(run_cli, dev_root: Path, tmp_path: Path) -> None:
    """Text is compared as text: each reference written decomposed (NFD: ``e`` and a combining accent) and given as
    its own hypothesis scores BLEU 100, and every figure as the reference itself does."""
    hyps = reference_hyps(dev_root, LANGS, "dev", lambda g: g)
    decomposed = _nfd(hyps)
    changed = sum(a != b for lang in LANGS for g in hyps[lang] for a, b in zip(hyps[lang][g], decomposed[lang][g]))
    assert changed > 100  # the test means something: many lines differ as code points
    reports = []
    for name, given in (("composed", hyps), ("decomposed", decomposed)):
        out = tmp_path / name
        args = ["--mtgeneval_dir", str(dev_root), "--split", "dev", "--target_langs", *LANGS, "--out", str(out)]
        code, _, err = run_cli(*args, "--hyp_dir", str(write_hyps(tmp_path / f"{name}_hyps", given)),
                               "--bootstrap_samples", "0", "--no_figures")  # fmt: skip
        assert code == 0, err
        reports.append(json.loads((out / "metrics.json").read_text(encoding="utf-8")))
    composed, metrics = reports
    assert metrics["config"]["normal_form"] == "NFC" and "NFC" in metrics["config"]["definitions"]["normal_form"]
    for lang, m in metrics["languages"].items():
        assert m["bleu"] == pytest.approx(100.0) and m["chrf"] == pytest.approx(100.0), lang
        assert m == composed["languages"][lang], lang  # strict accuracy and the rest: as the references score


def test_a_decomposed_table_scores_as_the_composed_one(run_cli, tmp_path: Path) -> None:
    """A table's references in NFD and hypotheses in NFC (as a model writes them) are the same text."""
    rows = [("1", "The nurse is tired.", "La enfermera está cansada.", "f"),
            ("1", "The nurse is tired.", "El enfermero está cansado.", "m"),
            ("2", "She is a café owner.", "Ella es dueña del café.", "f"),
            ("2", "He is a café owner.", "Él es dueño del café.", "m")]  # fmt: skip
    table = tmp_path / "t.csv"
    lines = [f"{i},{src},{unicodedata.normalize('NFD', ref)},{g},es\n" for i, src, ref, g in rows]
    table.write_text("ID,source,target,gender,lang\n" + "".join(lines), encoding="utf-8")
    write_hyps(tmp_path / "hyps", {"es": {"feminine": [rows[0][2], rows[2][2]], "masculine": [rows[1][2], rows[3][2]]}})
    out = tmp_path / "report"
    code, _, err = run_cli("--data", str(table), "--hyp_dir", str(tmp_path / "hyps"), "--out", str(out), "--no_figures")
    assert code == 0, err
    m = json.loads((out / "metrics.json").read_text(encoding="utf-8"))["languages"]["es"]
    assert m["bleu"] == pytest.approx(100.0) and m["accuracy_pair"] == 1.0


@pytest.mark.parametrize("asked", [None, "DE", "ger", "deu"])
def test_a_language_is_one_tag_from_the_flag_to_the_files(run_cli, small_geneval: Path, tmp_path: Path, asked) -> None:
    """German asked as ``DE``, ``ger`` or ``deu`` (or not asked), its hypothesis files named ``GER.feminine.txt``
    and ``deu.masculine.txt``: one report of ``de``, read from the layout's ``en_de`` files."""
    hyps = reference_hyps(small_geneval, ["de"], "test", lambda g: g)["de"]
    folder = tmp_path / "hyps"
    folder.mkdir()
    for name, gender in (("GER", "feminine"), ("deu", "masculine")):
        (folder / f"{name}.{gender}.txt").write_text("".join(x + "\n" for x in hyps[gender]), encoding="utf-8")
    out = tmp_path / "report"
    args = ["--mtgeneval_dir", str(small_geneval), "--split", "test", "--hyp_dir", str(folder), "--out", str(out)]
    status, _, err = run_cli(*args, *(["--target_langs", asked] if asked else []), "--bootstrap_samples", "0",
                             "--no_figures")  # fmt: skip
    assert status == 0, err
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert list(metrics["languages"]) == ["de"] and metrics["languages"]["de"]["bleu"] == pytest.approx(100.0)
    files = metrics["config"]["files"]["de"]  # the files read, as the page's sacrebleu commands name them
    assert (files["hypothesis_feminine"], files["hypothesis_masculine"]) == (
        str(folder / "GER.feminine.txt"), str(folder / "deu.masculine.txt"))  # fmt: skip
    (folder / "de.feminine.txt").write_text("".join(x + "\n" for x in hyps["feminine"]), encoding="utf-8")
    status, _, err = run_cli(*args[:-1], str(tmp_path / "again"))
    _assert_clean_failure(status, err, tmp_path / "again", "GER.feminine.txt and de.feminine.txt", "keep one")
