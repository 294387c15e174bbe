"""`make demo` end to end: the real Makefile target, with a smaller corpus and fewer updates."""

import json
import re

import pytest
from huggingface_hub import ModelCard
from testing_utils import REPO, make_demo

#: the header of the README's table of the demo's showcase sentences and what the demo model makes of them
SHOWCASE_HEADER = "| English (`make demo`) | the demo model's Spanish |"


def makefile_sentences() -> list[str]:
    """The sentences `make demo` translates (its ``--text`` arguments)."""
    recipe = (REPO / "Makefile").read_text(encoding="utf-8").split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    return re.findall(r'--text "([^"]+)"', recipe)


def readme_showcase(text: str) -> list[tuple[str, str]]:
    """(English, Spanish) rows of the README's showcase table."""
    table = text.split(SHOWCASE_HEADER + "\n", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    return [tuple(cell.strip() for cell in row.strip("|").split("|")[:2]) for row in table]


def test_the_readme_shows_what_the_demo_model_makes_of_each_showcase_sentence():
    sentences = makefile_sentences()
    assert len(sentences) == 3
    shown = readme_showcase((REPO / "README.md").read_text(encoding="utf-8"))
    assert [english for english, _ in shown] == sentences
    assert all(spanish for _, spanish in shown)


def check_outputs(out, stdout: str):
    assert (out / "final" / "model.safetensors").is_file()
    results = json.loads((out / "results.json").read_text())
    assert "test_bleu" in results
    printed = stdout.split("translate.py", 1)[1]
    assert len([line for line in printed.splitlines() if line and not line.startswith(("\t", " "))]) >= 3
    metrics = json.loads((out / "bias_report" / "metrics.json").read_text())
    assert set(metrics["languages"]) == {"es"}
    assert metrics["languages"]["es"]["n"] > 0
    assert (out / "bias_report" / "report.html").is_file()
    card = ModelCard.load(out / "final" / "README.md")  # the demo's model card, with the report's figures
    assert "\n## Gender bias: demo corpus test, es\n" in card.text
    assert {r.dataset_config for r in card.data.eval_results} == {"en-es"}
    return results, metrics


def test_make_demo_small(demo_run):
    """``make demo`` in small (the suite's shared demo run, ``tests/conftest.py``): every output is there."""
    check_outputs(demo_run, demo_run.with_suffix(".out").read_text(encoding="utf-8"))


@pytest.mark.slow
def test_make_demo_full(tmp_path):
    """The demo exactly as a newcomer runs it; its model must really translate (held-out BLEU > 20)."""
    out = tmp_path / "demo"
    res = make_demo(out, "", "", timeout=1800)
    assert res.returncode == 0, (res.stdout[-3000:], res.stderr[-3000:])
    results, metrics = check_outputs(out, res.stdout)
    assert results["test_bleu"] > 20
    assert metrics["languages"]["es"]["bleu"] > 20
    # the README shows the showcase's translations as they come out
    printed = res.stdout.split("translate.py", 1)[1].split("bias_report.py", 1)[0]
    hyps = [line for line in printed.splitlines() if line and not line.startswith(("\t", " "))]
    shown = readme_showcase((REPO / "README.md").read_text(encoding="utf-8"))
    assert hyps[: len(makefile_sentences())] == [spanish for _, spanish in shown]
