"""`make demo` end to end: the real Makefile target, with a smaller corpus and fewer updates."""

import json
import re
import sys

import pytest
from huggingface_hub import ModelCard
from testing_utils import REPO, run_script

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


def make_demo(out, corpus_args: str, demo_args: str, timeout: int):
    # -o: never rebuild the venv from inside the test suite; PY: this interpreter.
    return run_script(
        "-", "make", "-o", ".venv/.installed", "demo", f"PY={sys.executable}", f"DEMO={out}",
        f"CORPUS_ARGS={corpus_args}", f"DEMO_ARGS={demo_args}", timeout=timeout,
    )  # fmt: skip


def check_outputs(out, res):
    assert res.returncode == 0, (res.stdout[-3000:], res.stderr[-3000:])
    assert (out / "final" / "model.safetensors").is_file()
    results = json.loads((out / "results.json").read_text())
    assert "test_bleu" in results
    printed = res.stdout.split("translate.py", 1)[1]
    assert len([line for line in printed.splitlines() if line and not line.startswith(("\t", " "))]) >= 3
    metrics = json.loads((out / "bias_report" / "metrics.json").read_text())
    assert set(metrics["languages"]) == {"es"}
    assert metrics["languages"]["es"]["n"] > 0
    assert (out / "bias_report" / "report.html").is_file()
    card = ModelCard.load(out / "final" / "README.md")  # the demo's model card, with the report's figures
    assert "\n## Gender bias: demo corpus test, es\n" in card.text
    assert {r.dataset_config for r in card.data.eval_results} == {"en-es"}
    return results, metrics


def test_make_demo_small(tmp_path):
    out = tmp_path / "demo"
    res = make_demo(
        out,
        "--n_train 4000 --n_valid 40 --n_test 40 --n_gender_pairs 30",
        "--max_steps 40 --eval_steps 20 --save_steps 20 --eval_max_samples 20 --max_new_tokens 32 --report_to none",
        timeout=900,
    )
    check_outputs(out, res)


@pytest.mark.slow
def test_make_demo_full(tmp_path):
    """The demo exactly as a newcomer runs it; its model must really translate (held-out BLEU > 20)."""
    out = tmp_path / "demo"
    res = make_demo(out, "", "", timeout=1800)
    results, metrics = check_outputs(out, res)
    assert results["test_bleu"] > 20
    assert metrics["languages"]["es"]["bleu"] > 20
    # the README shows the showcase's translations as they come out
    printed = res.stdout.split("translate.py", 1)[1].split("bias_report.py", 1)[0]
    hyps = [line for line in printed.splitlines() if line and not line.startswith(("\t", " "))]
    shown = readme_showcase((REPO / "README.md").read_text(encoding="utf-8"))
    assert hyps[: len(makefile_sentences())] == [spanish for _, spanish in shown]
