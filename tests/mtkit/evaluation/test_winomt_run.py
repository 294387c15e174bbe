"""``bias_report.py --benchmark winomt`` (mtkit.evaluation.winomt_run): Google Translate's outputs shipped with WinoMT
score what Stanovsky et al. (2019) published, a model's translations of en.txt are scored end to end, and bad input
is one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from testing_utils import WINOMT, script_in_process

from bias_eval.winomt.report import ANCHORS
from mtkit.cli.bias_report import main
from mtkit.evaluation.winomt_run import scored_languages, warn_unscored

#: Stanovsky et al. 2019, Table 2 (Google Translate): accuracy and ΔG
PUBLISHED = {"de": (59.4, 12.5), "es": (53.1, 23.4), "fr": (63.6, 6.4)}
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
    args = ["--benchmark", "winomt", "--winomt_dir", str(WINOMT), "--hyp_file", str(google(lang))]
    res = script_in_process(main, *args, "--target_lang", lang, "--out", str(out), *extra)
    assert res.returncode == 0, res.stderr
    return json.loads((out / "metrics.json").read_text())


def test_google_german_is_the_published_figure(tmp_path: Path) -> None:
    """The default tier's anchor: German, whose scorer is the benchmark's rules, gives the benchmark's own counts
    sentence class by sentence class, so accuracy and ΔG are the published ones (Spanish and French: the slow test
    below)."""
    metrics = report("de", tmp_path / "de", "--bootstrap_samples", "0")
    assert metrics["confusion"] == GERMAN_CONFUSION
    assert (round(metrics["accuracy"], 1), round(metrics["delta_g"], 1)) == PUBLISHED["de"] == ANCHORS["de"]["here"]
    assert {lang: a["published"] for lang, a in ANCHORS.items()} == PUBLISHED  # the reports cite the paper's figures
    assert "within a point, so these figures can be set beside published ones" in metrics["anchor"]
    assert {p.name for p in (tmp_path / "de").iterdir()} == {"metrics.json", "report.md", "professions.tsv",
                                                              "de.details.jsonl"}  # fmt: skip
    text = (tmp_path / "de" / "report.md").read_text()
    assert "| nurse | 86 |" in text and "--benchmark winomt" in text


@pytest.mark.slow  # the default tier keeps German, exact (above)
@pytest.mark.parametrize("lang", ["es", "fr"])
def test_google_spanish_and_french_as_the_reports_say(tmp_path: Path, lang: str) -> None:
    """ΔG within a point of the paper's for both; accuracy within a point for Spanish, and for French 1.4 points above
    (the benchmark's spaCy 2 tagger read some elided phrases against their noun's gender, L'instructeur a: female,
    which no French rule does: docs/bias_evaluation.md#winomt), as every French report says beside its figures."""
    metrics = report(lang, tmp_path / lang, "--bootstrap_samples", "0")
    accuracy, delta_g = PUBLISHED[lang]
    assert abs(metrics["delta_g"] - delta_g) <= 1.0
    assert (round(metrics["accuracy"], 1), round(metrics["delta_g"], 1)) == ANCHORS[lang]["here"]
    page = (tmp_path / lang / "report.md").read_text(encoding="utf-8")
    assert f"Beside published figures: {metrics['anchor']}" in page
    if lang == "es":
        assert abs(metrics["accuracy"] - accuracy) <= 1.0 and "within a point" in metrics["anchor"]
    else:
        assert 1.0 < metrics["accuracy"] - accuracy <= 1.5
        assert "figures of fr here run 1.4 points above that paper's in accuracy" in metrics["anchor"]


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


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--target_lang", "it"], "error: --target_lang it: not scored on WinoMT: Italian needs"),
        ([], "error: --target_lang: WinoMT is scored one target language at a time"),
        (["--target_lang", "de", "--mtgeneval_dir", "d"], "error: --mtgeneval_dir: not used with --benchmark winomt"),
    ],
)
def test_bad_input(tmp_path: Path, extra: list[str], message: str) -> None:
    res = script_in_process(main, "--benchmark", "winomt", "--hyp_file", "x.txt", "--out", str(tmp_path / "o"), *extra)
    assert res.returncode == 2 and res.stderr.strip().splitlines() == [res.stderr.strip()]
    assert res.stderr.startswith(message)
    assert not (tmp_path / "o").exists()


def test_winomt_flags_refused_for_mtgeneval(tmp_path: Path) -> None:
    res = script_in_process(main, "--hub", "--hyp_file", "x", "--out", str(tmp_path / "o"))
    assert res.returncode == 2 and "--hyp_file: only used with --benchmark winomt" in res.stderr


def test_a_runs_languages_without_winomt_are_named_once_and_skipped(capsys) -> None:
    assert scored_languages(["de", "it", "fr", "ja"]) == ["de", "fr"] and capsys.readouterr().err == ""
    warn_unscored(["de", "it", "fr", "ja"])
    assert capsys.readouterr().err.strip().splitlines() == ["warning: WinoMT scores de, es, fr only: it, ja skipped"]
    warn_unscored(["es"])
    assert scored_languages(["es"]) == ["es"] and capsys.readouterr().err == ""
