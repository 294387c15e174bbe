"""Helpers for the Jupyter notebooks in ``notebooks/``: run the toolkit's scripts from a cell with their output
streamed and the learning curves redrawn while a run trains, fetch the public data sets, and show bias reports and
their comparison inline. The notebooks call these and the scripts; they hold no logic of their own."""

from __future__ import annotations

import codecs
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
import warnings
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from IPython.display import HTML, Image, Markdown, display
from tqdm import TqdmWarning

# Progress bars in this kernel are the console ones (ipywidgets is not a requirement): no warning about it.
warnings.filterwarnings("ignore", category=TqdmWarning)

#: The public homes of the data sets the notebooks use (users have the internet; tests pass local copies).
MULTI30K_URL = "https://github.com/multi30k/dataset/raw/master/data/task1/raw/{name}.gz"
MULTI30K_FILES = [f"{split}.{lang}" for split in ("train", "val", "test_2016_flickr") for lang in ("en", "de")]
MTGENEVAL_GIT = "https://github.com/amazon-science/machine-translation-gender-eval"


def repo_root() -> Path:
    """The repository's root (the folder with ``pyproject.toml`` at or above the working directory), made the
    working directory so that the scripts' relative paths (recipes, configs) resolve."""
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / "pyproject.toml").is_file() and (folder / "mtkit").is_dir():
            os.chdir(folder)
            return folder
    raise FileNotFoundError(f"no mtkit checkout at or above {here}; start Jupyter inside the repository")


def show_curves(run_dir: str | Path, handle=None):
    """The run's learning curves (loss, validation BLEU, gender figures) drawn from its ``metrics.jsonl``; updates
    ``handle`` (from an earlier call) in place when given. Returns the display handle, or ``None`` before the first
    logged update."""
    from mtkit.train.tracking import plot_curves

    with tempfile.TemporaryDirectory() as tmp:
        png = plot_curves(Path(run_dir), Path(tmp) / "curves.png")
        if png is None:
            return handle
        image = Image(data=png.read_bytes(), format="png")
    if handle is None:
        return display(image, display_id=True)
    handle.update(image)
    return handle


def run(*args: str | Path, watch: str | Path | None = None, every: float = 30.0) -> None:
    """Run a command from the repository root with its output streamed into the cell, and raise if it fails.

    With ``watch`` (a run's output folder), the learning curves below the output are redrawn every ``every``
    seconds while the command runs, and once more at the end.
    """
    cmd = [str(a) for a in args]
    print("$", " ".join(cmd), flush=True)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    # Raw chunks, not lines: a progress bar's carriage returns then redraw one line in the cell, as in a terminal.
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    handle, last = None, time.monotonic()
    assert proc.stdout is not None
    while chunk := proc.stdout.read1(65536):
        sys.stdout.write(decoder.decode(chunk))
        if watch is not None and time.monotonic() - last >= every:
            handle, last = show_curves(watch, handle), time.monotonic()
    if watch is not None:
        show_curves(watch, handle)
    if proc.wait() != 0:
        raise subprocess.CalledProcessError(proc.returncode, cmd)


def python(script: str, *args: str | Path, **kwargs) -> None:
    """:func:`run` a script of ``scripts/`` (or ``-m module``) with this kernel's Python."""
    run(sys.executable, script, *args, **kwargs)


def fetch_multi30k(folder: str | Path) -> Path:
    """Multi30k EN-DE (train, val, test_2016_flickr) from its GitHub repository into ``folder``, unless there."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name in MULTI30K_FILES:
        target = folder / f"{name}.gz"
        if not target.is_file():
            part = target.with_suffix(".part")
            urllib.request.urlretrieve(MULTI30K_URL.format(name=name), part)
            part.rename(target)
    return folder


def fetch_mtgeneval(folder: str | Path) -> Path:
    """MT-GenEval's data folder (``<clone>/data``, the layout ``--mtgeneval_dir`` reads), cloned into ``folder``
    unless there."""
    folder = Path(folder)
    if not (folder / "data" / "sentences").is_dir():
        run("git", "clone", "--depth", "1", MTGENEVAL_GIT, folder)
    return folder / "data"


def gpus() -> str:
    """One line per visible CUDA device (name, memory), or a line saying there is none."""
    import torch

    if not torch.cuda.is_available():
        return "no CUDA GPU: running on the CPU"
    lines = []
    for i in range(torch.cuda.device_count()):
        props = torch.cuda.get_device_properties(i)
        lines.append(f"cuda:{i} {props.name}, {props.total_memory / 2**30:.0f} GiB")
    return "\n".join(lines)


def _metrics(report: str | Path) -> dict[str, Any]:
    return json.loads((Path(report) / "metrics.json").read_text(encoding="utf-8"))


def bias_table(report: str | Path) -> Markdown:
    """The report's per-language table (BLEU, gap with its CI, gender accuracy, fair BLEU) as rendered markdown."""
    from bias_eval.core.markdown import table
    from bias_eval.mtgeneval.report import table_rows

    return Markdown("\n".join(table(*table_rows(_metrics(report)))))


def bias_figures(report: str | Path) -> list[Image]:
    """The report's plots (gaps with CIs, BLEU by gender, accuracy by gender) as inline images."""
    from bias_eval.mtgeneval.plots import make_figures

    return [Image(data=fig["png"], format="png") for fig in make_figures(_metrics(report)).values()]


def worst_examples(report: str | Path, lang: str, n: int = 5) -> HTML:
    """The ``n`` sentence pairs of ``lang`` whose feminine and masculine translations differ most in sentence
    BLEU, feminine and masculine side by side (from the report's ``<lang>.details.jsonl``)."""
    from bias_eval.core.textio import read_jsonl

    rows = [row for _, row in read_jsonl(Path(report) / f"{lang}.details.jsonl")]
    if not rows or "sentence_bleu_diff" not in rows[0]:
        return HTML(f"<p>{escape(lang)}: the sentences are not paired across genders.</p>")
    rows.sort(key=lambda r: (-abs(r["sentence_bleu_diff"]), r["index"]))
    # inline styles: JupyterLab's own table CSS (right-aligned cells) outranks a class rule
    left = ' style="text-align:left;vertical-align:top"'
    head = f"<tr><th{left}>#</th><th></th><th{left}>feminine</th><th{left}>masculine</th></tr>"
    body = []
    for r in rows[:n]:
        for label, key in (("source", "source"), ("hypothesis", "hypothesis"), ("reference", "reference")):
            first = f'<td rowspan="4"{left}>{r["index"]}</td>' if label == "source" else ""
            cells = "".join(f"<td{left}>{escape(str(r[f'{key}_{g}']))}</td>" for g in ("feminine", "masculine"))
            body.append(f"<tr>{first}<th{left}>{label}</th>{cells}</tr>")
        scores = "".join(
            f"<td{left}>BLEU {r[f'sentence_bleu_{g}']:.1f}, gender {'correct' if r[f'correct_{g}'] else 'wrong'}</td>"
            for g in ("feminine", "masculine")
        )
        body.append(f"<tr><th{left}>scores</th>{scores}</tr>")
    return HTML(f'<table class="mtkit-ex"><thead>{head}</thead><tbody>{"".join(body)}</tbody></table>')


def show_bias_report(report: str | Path, examples: int = 3) -> None:
    """Everything a bias report holds, inline: the table, the plots and the worst examples of each language."""
    display(bias_table(report))
    for image in bias_figures(report):
        display(image)
    for lang in _metrics(report)["languages"]:
        display(Markdown(f"**{lang}: the {examples} pairs with the largest feminine/masculine difference**"))
        display(worst_examples(report, lang, examples))
    print(f"full report: {Path(report) / 'report.html'}")


def compare_reports(reports: Mapping[str, str | Path]) -> Markdown:
    """Two reports' figures side by side with their change, and whether the change is beyond both CIs (the same
    table as ``scripts/compare_reports.py``)."""
    from bias_eval.compare.rows import compare, describe_sources, render_markdown
    from bias_eval.core.report import Report

    if len(reports) != 2:
        raise ValueError(f"compare_reports: give two reports (before and after), got {len(reports)}")
    names = list(reports)
    read = [Report.read(folder, name) for name, folder in reports.items()]
    rows, notes = compare(read[0].metrics, read[1].metrics, names)
    return Markdown(render_markdown(rows, notes, names, describe_sources(read, names)))


def bleu(hypotheses: Sequence[str], references: Sequence[str], lang: str) -> str:
    """sacreBLEU (cased, tokenized for target language ``lang``) and chrF of ``hypotheses`` against one reference
    each, as one line."""
    from bias_eval.core.bleu import bleu_tokenizer
    from mtkit.evaluation.scores import corpus_scores

    scores = corpus_scores(list(hypotheses), list(references), lang)
    return f"BLEU {scores['bleu']:.2f}  chrF {scores['chrf']:.2f}  (sacreBLEU {bleu_tokenizer(lang)}, cased)"


def local_model(model: str | Path) -> Path:
    """A local folder of ``model``: the folder itself, or the hub snapshot of a model id (weights as safetensors,
    configs and tokenizer files only), for tools that need files on disk such as the CTranslate2 converter."""
    if Path(model).is_dir():
        return Path(model)
    from huggingface_hub import snapshot_download

    patterns = ["*.json", "*.safetensors", "*.model", "*.txt"]
    return Path(snapshot_download(str(model), allow_patterns=patterns))
