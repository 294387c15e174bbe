"""The notebooks run headless, top to bottom, with tiny models and the shared data (their parameters cell
overridden the way papermill does: a cell of new values right after it). With ``MTKIT_NOTEBOOK_OUT=<folder>`` the
executed notebooks are kept there, to render (``jupyter nbconvert --to html``) and look at."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import shutil
from pathlib import Path

import pytest
import sacrebleu
from geneval_helpers import make_subset
from testing_utils import MTGENEVAL, OFFLINE_ENV, REPO, free_port, greedy

nbformat = pytest.importorskip("nbformat")  # optional: not in every image (a GPU machine's)
NotebookClient = pytest.importorskip("nbclient").NotebookClient
CellExecutionError = pytest.importorskip("nbclient.exceptions").CellExecutionError

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
GERMAN_PROMPT = 'Translate the following sentence from English to German: "{}"'


@pytest.fixture(scope="module")
def geneval_slice(tmp_path_factory) -> Path:
    """MT-GenEval German in its repository layout, cut short: 300 dev pairs to train on, 60 test pairs to report."""
    if not MTGENEVAL.is_dir():
        pytest.skip("../shared/data/mt-geneval is not there")
    out = tmp_path_factory.mktemp("geneval") / "data"
    make_subset(MTGENEVAL, out, ["de"], 300, split="dev")
    return make_subset(MTGENEVAL, out, ["de"], 60, split="test")


def execute(name: str, monkeypatch, **params) -> nbformat.NotebookNode:
    """Run ``notebooks/<name>.ipynb`` with ``params`` injected after its parameters cell; return it executed."""
    for key, value in OFFLINE_ENV.items():
        monkeypatch.setenv(key, value)
    nb = nbformat.read(REPO / "notebooks" / f"{name}.ipynb", as_version=4)
    index = next(i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", []))
    source = "\n".join(f"{key} = {value!r}" for key, value in params.items())
    nb.cells.insert(index + 1, nbformat.v4.new_code_cell(source, metadata={"tags": ["injected-parameters"]}))
    client = NotebookClient(
        nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(REPO / "notebooks")}}
    )
    try:
        client.execute()
    except CellExecutionError:
        print(text(nb)[-6000:])  # what the failing command printed (pytest shows it with the failure)
        raise
    if os.environ.get("MTKIT_NOTEBOOK_OUT"):  # keep the executed notebook, to render and look at
        nbformat.write(nb, Path(os.environ["MTKIT_NOTEBOOK_OUT"]) / f"{name}.ipynb")
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    return nb


def outputs(nb, kind: str) -> list:
    """Every output of the code cells holding ``kind`` (a MIME type, or ``stream`` for printed text)."""
    found = []
    for cell in nb.cells:
        for o in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if kind == "stream" and o.output_type == "stream":
                found.append(o.text)
            elif kind in o.get("data", {}):
                found.append(o.data[kind])
    return found


def text(nb) -> str:
    return "".join(outputs(nb, "stream"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_committed_clean_and_imports_only_what_is_installed(path: Path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert [c for c in code if c.outputs or c.execution_count is not None] == [], "commit notebooks without outputs"
    assert sum("parameters" in c.metadata.get("tags", []) for c in code) == 1
    modules = set()
    for cell in code:
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.Import):
                modules |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                modules.add(node.module.split(".")[0])
    assert [m for m in sorted(modules) if importlib.util.find_spec(m) is None] == []


def test_pretrained_translation(tiny_t5, multi30k_small, tmp_path, monkeypatch):
    n, test = 16, multi30k_small / "test_2016_flickr"
    nb = execute(
        "01_pretrained_translation", monkeypatch, MODEL=str(tiny_t5),
        SOURCE_FILE=f"{test}.en", REFERENCE_FILE=f"{test}.de",
        MAX_SENTENCES=n, NUM_BEAMS=1, MAX_NEW_TOKENS=12, CT2_QUANTIZATION="int8", OUT=str(tmp_path),
    )  # fmt: skip
    sources = (multi30k_small / "test_2016_flickr.en").read_text().splitlines()[:n]
    references = (multi30k_small / "test_2016_flickr.de").read_text().splitlines()[:n]
    hyps = (tmp_path / "hypotheses.txt").read_text().splitlines()
    # batched, length-sorted, bounded decoding gives what transformers gives one sentence at a time
    assert hyps == greedy(tiny_t5, [GERMAN_PROMPT.format(s) for s in sources])
    printed = text(nb)
    assert f"transformers: BLEU {sacrebleu.corpus_bleu(hyps, [references]).score:.2f}" in printed
    ct2_hyps = (tmp_path / "hypotheses.ct2.txt").read_text().splitlines()
    assert len(ct2_hyps) == n
    assert f"CTranslate2 int8: BLEU {sacrebleu.corpus_bleu(ct2_hyps, [references]).score:.2f}" in printed


# slow: a ZeRO-3 launch and two bias reports (90 s); the default tier checks this notebook statically above and runs
# ZeRO-3 fine-tuning itself in tests/mtkit/train/test_finetune.py
@pytest.mark.slow
def test_finetune_flan_t5_deepspeed(tiny_t5, geneval_slice, tmp_path, monkeypatch):
    model = shutil.copytree(tiny_t5, tmp_path / "flan-t5-tiny")  # its "before" report writes into the model's card
    nb = execute(
        "02_finetune_flan_t5_deepspeed", monkeypatch, MODEL=str(model), RECIPE="recipes/flan_t5_small_mtgeneval.yaml",
        NUM_PROCESSES=1, MTGENEVAL_DIR=str(geneval_slice), REPORT_SPLIT="test", LANGS=["de"], OUT=str(tmp_path),
        LAUNCH_ARGS=["--mixed_precision", "no", "--main_process_port", free_port()],
        TRAIN_ARGS=["--max_steps", "4", "--eval_steps", "2", "--save_steps", "4", "--eval_max_samples", "10",
                    "--max_new_tokens", "12", "--num_beams", "1", "--mixed_precision", "no", "--max_tokens", "1024",
                    "--learning_rate", "3e-3", "--max_source_length", "64", "--max_target_length", "64"],
        REPORT_ARGS=["--max_new_tokens", "12", "--num_beams", "1", "--bootstrap_samples", "100"],
    )  # fmt: skip
    printed = text(nb)
    assert "DeepSpeed" in printed and "created sharded across processes (ZeRO-3 zero.Init)" in printed
    run = tmp_path / "run"
    assert json.loads((run / "results.json").read_text())["step"] == 4
    before = json.loads((tmp_path / "bias_before" / "metrics.json").read_text())
    after = json.loads((run / "bias_report" / "metrics.json").read_text())
    assert set(before["languages"]) == set(after["languages"]) == {"de"}
    # the curves (live and final) and each report's plots are in the notebook, and the comparison names both
    assert len(outputs(nb, "image/png")) >= 2 + 2 * 2
    comparison = [md for md in outputs(nb, "text/markdown") if "pretrained" in md and "fine-tuned" in md]
    assert comparison and f"{before['languages']['de']['bleu']:.2f}" in comparison[0]


# slow: two bias reports in a kernel (24 s); tests/bias_eval runs bias_report.py itself, the notebook's one call
@pytest.mark.slow
def test_gender_bias_report(tiny_t5, tiny_run, geneval_slice, tmp_path, monkeypatch):
    # copies: a bias report writes its figures into the model's card, and the shared models stay as their runs left them
    models = {name: tmp_path / "models" / name for name in ("flan-tiny", "scratch")}
    shutil.copytree(tiny_t5, models["flan-tiny"])
    shutil.copytree(tiny_run / "final", models["scratch"])
    nb = execute(
        "03_gender_bias_report", monkeypatch,
        MODELS={"flan-tiny": (str(models["flan-tiny"]), "instruction"), "scratch": (str(models["scratch"]), None)},
        MTGENEVAL_DIR=str(geneval_slice), SPLIT="test", LANGS=["de"], OUT=str(tmp_path),
        REPORT_ARGS=["--max_new_tokens", "12", "--num_beams", "1", "--bootstrap_samples", "100"], EXAMPLES=2,
    )  # fmt: skip
    tables = [md for md in outputs(nb, "text/markdown") if md.startswith("| language |")]
    assert len(tables) == 2
    shown = [h for h in outputs(nb, "text/html") if "mtkit-ex" in h]  # the worst examples, a table per model
    assert len(shown) == 2
    for name, table, examples in zip(("flan-tiny", "scratch"), tables, shown):
        metrics = json.loads((tmp_path / name / "metrics.json").read_text())["languages"]["de"]
        row = next(line for line in table.splitlines() if line.startswith("| de |"))
        assert f"{metrics['bleu_feminine']:.2f}" in row and f"{metrics['bleu_masculine']:.2f}" in row
        # the first worst example shown is the pair with the largest sentence-BLEU difference
        details = [json.loads(x) for x in (tmp_path / name / "de.details.jsonl").read_text().splitlines()]
        largest = max(abs(d["sentence_bleu_diff"]) for d in details)
        first = int(re.search(r'rowspan="4"[^>]*>(\d+)<', examples).group(1))
        assert abs(details[first]["sentence_bleu_diff"]) == largest
    assert len(outputs(nb, "image/png")) >= 2 * 2
    assert any("flan-tiny" in md and "scratch" in md and "change" in md.lower() for md in outputs(nb, "text/markdown"))


# slow: a training run in a kernel (21 s); the default tier checks this notebook statically and trains through
# scripts/train.py throughout, and runs the pretrained-translation notebook
@pytest.mark.slow
@pytest.mark.parametrize("data", ["multi30k", "builtin"])  # builtin: make demo's corpus
def test_train_from_scratch(data, multi30k_small, tmp_path, monkeypatch):
    small = ["--max_steps", "30", "--eval_steps", "15", "--save_steps", "15", "--eval_max_samples", "10",
             "--max_new_tokens", "24", "--report_to", "none", "--vocab_size", "1000"]  # fmt: skip
    if data == "multi30k":
        small += ["--model", "transformer-tiny", "--max_tokens", "2048", "--warmup_steps", "10"]
    nb = execute(
        "04_train_from_scratch", monkeypatch, DATA=data, DATA_DIR=str(multi30k_small), OUT=str(tmp_path),
        TRAIN_ARGS=small,
        CORPUS_ARGS=["--n_train", "3000", "--n_valid", "20", "--n_test", "20", "--n_gender_pairs", "20"],
    )  # fmt: skip
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["step"] == 30
    assert f'"test_bleu": {results["test_bleu"]}' in text(nb)
    assert outputs(nb, "image/png")  # the learning curves
    assert (tmp_path / "bias_report" / "metrics.json").is_file() == (data == "builtin")
