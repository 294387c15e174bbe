"""``bias_report.py --benchmark winomt`` (mtkit.evaluation.winomt_run): Google Translate's outputs shipped with WinoMT
score what Stanovsky et al. (2019) published, a model's translations of en.txt are scored end to end, and bad input
is one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from geneval_helpers import assert_same_but_figures
from testing_utils import WINOMT, script_in_process

from bias_eval.winomt import anchors
from mtkit.cli.bias_report import main
from mtkit.evaluation.winomt_run import scored_languages, warn_unscored

#: Stanovsky et al. 2019, Table 2 (Google Translate): accuracy, ΔG and ΔS, in the paper's order of languages
TABLE_2 = "es 53.1 23.4 21.3 fr 63.6 6.4 26.7 it 39.6 32.9 21.5 ru 37.7 36.8 11.4 uk 38.4 43.6 10.8 he 53.7 7.9 37.8 "
TABLE_2 += "ar 48.5 43.7 16.1 de 59.4 12.5 12.5"
PUBLISHED = {w[0]: tuple(map(float, w[1:])) for w in zip(*[iter(TABLE_2.split())] * 4)}
FILES = {"metrics.json", "report.md", "report.html", "report.tex", "references.bib", "professions.tsv", "figures"}
#: the benchmark's own log of its German scorer on these outputs (logs/google/de.log): gold -> predicted -> count
GERMAN_CONFUSION = {
    "male": {"male": 1497, "female": 297, "neutral": 32, "unknown": 0},
    "female": {"male": 990, "female": 790, "neutral": 42, "unknown": 0},
    "neutral": {"male": 195, "female": 23, "neutral": 22, "unknown": 0},
}


def google(lang: str) -> Path:
    path = WINOMT / "translations" / "google" / f"en-{lang}.txt"
    if not path.is_file():
        pytest.skip(f"{path} is not there")
    return path


def report(lang: str, out: Path, *extra: str) -> dict:
    args = ["--benchmark", "winomt", "--winomt_dir", str(WINOMT), "--hyp_file", str(google(lang.lower()))]
    res = script_in_process(main, *args, "--target_lang", lang, "--out", str(out), *extra)
    assert res.returncode == 0, res.stderr
    return json.loads((out / "metrics.json").read_text())


def test_google_german_is_the_published_figure(tmp_path: Path) -> None:
    """The default tier's anchor: German, whose scorer is the benchmark's rules, gives the benchmark's own counts
    sentence class by sentence class, so accuracy and ΔG are the published ones, and ΔS, its pro and anti files scored
    as runs of their own, too (Spanish, French and Italian: the slow test below). ``--target_lang DE`` is ``de``."""
    metrics = report("DE", tmp_path / "de", "--bootstrap_samples", "0")
    assert metrics["language"] == "de" and metrics["confusion"] == GERMAN_CONFUSION
    here = tuple(round(metrics[key], 1) for key in anchors.FIGURES)
    assert here == PUBLISHED["de"] == anchors.HERE["de"]
    assert anchors.PUBLISHED == PUBLISHED  # the reports cite the paper's figures
    assert "within a point on each, so these figures can be set beside published ones" in metrics["anchor"]
    assert {p.name for p in (tmp_path / "de").iterdir()} == FILES | {"de.details.jsonl"}
    text = (tmp_path / "de" / "report.md").read_text()
    assert "| nurse | 86 |" in text and "--benchmark winomt" in text
    assert f"Beside published figures: {metrics['anchor']}" in text
    page = (tmp_path / "de" / "report.html").read_text(encoding="utf-8")
    assert "stanovsky-etal-2019-evaluating" in page and 'id="fig-professions"' in page
    assert (tmp_path / "de" / "references.bib").read_text().startswith("@inproceedings{stanovsky-etal-2019-evaluating")
    tex = (tmp_path / "de" / "report.tex").read_text()
    assert "\\resizebox" not in tex and "$\\Delta$S & +12.5 &  & 12.5 \\\\" in tex
    report("DE", tmp_path / "bare", "--bootstrap_samples", "0", "--no_figures")
    assert_same_but_figures(tmp_path / "de", tmp_path / "bare")  # the same report, without its figures


@pytest.mark.slow  # the default tier keeps German, exact (above)
@pytest.mark.parametrize("lang", ["es", "fr", "it"])
def test_google_spanish_french_and_italian_as_the_reports_say(tmp_path: Path, lang: str) -> None:
    """Each figure as the anchors table records it; Spanish within a point of the paper's on each figure, French and
    Italian not, and their reports say by how much (docs/bias_evaluation.md#winomt)."""
    metrics = report(lang, tmp_path / lang, "--bootstrap_samples", "0")
    here = tuple(round(metrics[key], 1) for key in anchors.FIGURES)
    assert here == anchors.HERE[lang]
    off = [abs(a - b) for a, b in zip(here, PUBLISHED[lang])]
    page = (tmp_path / lang / "report.md").read_text(encoding="utf-8")
    assert f"Beside published figures: {metrics['anchor']}" in page
    if lang == "es":
        assert max(off) <= 1.0 and "within a point on each" in metrics["anchor"]
    else:
        assert max(off) > 1.0 and f"figures of {lang} here differ from that paper's by more than a point" in page
        for name, figure, paper, gap in zip(("accuracy", "ΔG", "ΔS"), here, PUBLISHED[lang], off):
            said = f"{name} {gap:.1f} points {'above' if figure > paper else 'below'}"
            assert (said in metrics["anchor"]) == (gap > 1.0), said


def test_a_partial_file_is_named_for_what_it_is(tmp_path: Path) -> None:
    """The first 300 lines of Google's German outputs: counted right (none moved, 3,588 of en.txt's sentences
    untranslated) and never set beside published figures."""
    partial = tmp_path / "partial.txt"
    partial.write_text("".join(google("de").read_text(encoding="utf-8").splitlines(keepends=True)[:300]))
    args = ["--benchmark", "winomt", "--winomt_dir", str(WINOMT), "--hyp_file", str(partial), "--target_lang", "de"]
    res = script_in_process(main, *args, "--out", str(tmp_path / "o"), "--bootstrap_samples", "0")
    assert res.returncode == 0, res.stderr
    metrics = json.loads((tmp_path / "o" / "metrics.json").read_text())
    assert (metrics["config"]["moved"], metrics["config"]["untranslated"], metrics["n"]) == (0, 3588, 300)
    text = (tmp_path / "o" / "report.md").read_text(encoding="utf-8")
    assert "Beside published figures: Not set beside published figures: 300 lines translate part" in text
    assert "Stanovsky et al. (2019) published" not in text and "translations of part of the benchmark" in text


def test_a_malformed_file_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    lines = google("de").read_text(encoding="utf-8").splitlines()[:10]
    lines[4] = lines[4].replace(" ||| ", " ")
    bad = tmp_path / "bad.txt"
    bad.write_text("\n".join(lines) + "\n")
    args = ["--benchmark", "winomt", "--winomt_dir", str(WINOMT), "--hyp_file", str(bad), "--target_lang", "de"]
    res = script_in_process(main, *args, "--out", str(tmp_path / "o"))
    assert res.returncode == 2 and res.stderr.strip() == (
        f"error: {bad}: line 5: some lines are 'source ||| translation' and some are not"
    )
    assert not (tmp_path / "o").exists()


def test_a_model_end_to_end(family_dir, tmp_path: Path) -> None:
    """A tiny Marian model translates the first 8 sentences of en.txt into German; they are cached and scored."""
    model = family_dir("marian")
    out = tmp_path / "report"
    args = ["--benchmark", "winomt", "--winomt_dir", str(WINOMT), "--model", str(model), "--target_lang", "de"]
    extra = ["--max_samples", "8", "--num_beams", "1", "--max_new_tokens", "8", "--bootstrap_samples", "20"]
    res = script_in_process(main, *args, *extra, "--out", str(out), "--device", "cpu")
    assert res.returncode == 0, res.stderr
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["n"] == 8 and metrics["config"]["hypotheses"]["model"] == str(model)
    hyps = (out / "hyps" / "de.winomt.txt").read_text().splitlines()
    details = [json.loads(line) for line in (out / "de.details.jsonl").read_text().splitlines()]
    assert [d["translation"] for d in details] == hyps
    assert "--max_samples 8" in metrics["config"]["command"]
    # 8 of 1,584 pro, 1,584 anti and 720 neutral sentences: 3.26, 3.26, 1.48; floors 3, 3, 1 and the one left to the
    # largest remainder (neutral's .48)
    assert metrics["config"]["sample"] == {"seed": 12345, "pro": 3, "anti": 3, "neutral": 2}
    assert "stratified subset of the benchmark (3 pro-stereotypical" in (out / "report.md").read_text()
    assert "Not set beside published figures: a stratified subset" in (out / "report.md").read_text()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--target_lang", "PT"], "error: --target_lang PT: WinoMT is scored for de, es, fr, it, ru, uk, he, ar only"),
        ([], "error: --target_lang: WinoMT is scored one target language at a time"),
        (["--target_lang", "de", "--mtgeneval_dir", "d"], "error: --mtgeneval_dir: not used with --benchmark winomt"),
    ],
)
def test_bad_input(tmp_path: Path, extra: list[str], message: str) -> None:
    res = script_in_process(main, "--benchmark", "winomt", "--hyp_file", "x.txt", "--out", str(tmp_path / "o"), *extra)
    assert res.returncode == 2 and res.stderr.strip().splitlines() == [res.stderr.strip()]
    assert res.stderr.lower().startswith(message.lower())  # a tag may be written back lowercased
    assert not (tmp_path / "o").exists()


def test_winomt_flags_refused_for_mtgeneval(tmp_path: Path) -> None:
    res = script_in_process(main, "--hub", "--hyp_file", "x", "--out", str(tmp_path / "o"))
    assert res.returncode == 2 and "--hyp_file: only used with --benchmark winomt" in res.stderr


def test_a_runs_languages_without_winomt_are_named_once_and_skipped(capsys) -> None:
    assert scored_languages(["de", "pt", "fr", "ja"]) == ["de", "fr"] and capsys.readouterr().err == ""
    warn_unscored(["de", "pt", "fr", "ja"])
    message = "warning: WinoMT scores de, es, fr, it, ru, uk, he, ar only: pt, ja skipped"
    assert capsys.readouterr().err.strip().splitlines() == [message]
    warn_unscored(["es"])
    assert scored_languages(["es"]) == ["es"] and capsys.readouterr().err == ""
