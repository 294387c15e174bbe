"""Every GPU figure of the README from one command, for a borrowed half hour on one GPU.

Steps, each a fresh process with its own time limit, so that one failure costs only itself:

1. ``torch-api``: the PyTorch behaviour the toolkit relies on, on the image's own torch (``tests/test_torch_api.py``);
   ``gpu-tests``: the tests marked ``gpu`` (what ``make test-gpu`` runs);
2. ``base-bf16`` / ``base-bf16-compiled``: ``scripts/benchmark_step.py``, transformer-base in bf16 at ~25k tokens per
   update, without and with ``--torch_compile``;
3. ``flan-t5-base-zero3`` / ``flan-t5-xl-zero3`` (each also ``-gc``, with gradient checkpointing): flan-t5's shapes
   (random weights; flan-t5-xl's exact configuration) under DeepSpeed ZeRO-3 bf16 on one GPU;
4. ``translate``: ``scripts/benchmark.py translate`` on Multi30k's test set, transformers' ``generate`` against
   CTranslate2 float16 and int8_float16, with a model trained for the purpose (``--translate_model`` to give one).

The folder ``--out`` receives ``report.md`` (one table: tokens/s, TFLOP/s, MFU, peak memory, BLEU, status) and
``report.json`` (every record and the command of each step), rewritten after every step. Without a CUDA GPU
every GPU step is recorded as skipped; ``--smoke`` shrinks every step to a CPU-sized run (the test suite's check
of the plumbing).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
COLUMNS = [
    ("status", "status", "{}"),
    ("seconds", "s", "{:.0f}"),
    ("tgt_tok_s", "tgt tok/s", "{:,.0f}"),
    ("tflops", "TFLOP/s", "{:.1f}"),
    ("mfu", "MFU", "{:.1%}"),
    ("peak_mem_gb", "peak GiB", "{:.1f}"),
    ("bleu", "BLEU", "{:.2f}"),
    ("sentences_per_s", "sent/s", "{:,.1f}"),
]


@dataclass
class Step:
    name: str
    command: list[str]
    timeout: int
    gpu: bool = True
    env: dict[str, str] = field(default_factory=dict)


def steps(data: Path, out: Path, smoke: bool, translate_model: str | None) -> list[Step]:
    """The report's steps; with ``smoke`` the same commands at CPU size."""
    py = sys.executable
    quiet = ["--report_to", "none", "--disable_tqdm"]
    multi30k = ["--data_dir", str(data / "multi30k"), "--source_lang", "en", "--target_lang", "de",
                "--validation_split", "val", "--test_split", "none", *quiet]  # fmt: skip
    geneval = ["--mtgeneval_dir", str(data / "mt-geneval"), "--target_langs", "de,es,fr,it,pt", "--prompt",
               "instruction", "--tokenizer_type", "unigram", "--report_to", "none", "--disable_tqdm"]  # fmt: skip
    if smoke:
        base = ["--model", "transformer-tiny", "--vocab_size", "1000", "--max_tokens", "1024", "--max_train_samples",
                "2000", "--steps", "3", "--warmup", "1"]  # fmt: skip
        t5 = {"base": ["--model", "transformer-tiny"], "xl": ["--model", "transformer-tiny"]}
        t5_common = ["--vocab_size", "1000", "--max_tokens", "1024", "--max_train_samples", "800", "--steps", "2",
                     "--warmup", "1"]  # fmt: skip
        precision, limit = "no", 300
    else:
        base = ["--model", "transformer-base", "--vocab_size", "37000", "--max_tokens", "25000", "--steps", "30",
                "--warmup", "5"]  # fmt: skip
        t5 = {"base": ["--model", "flan-t5-base", "--max_tokens", "16384"],
              "xl": ["--model", "flan-t5-xl", "--max_tokens", "8192"]}  # fmt: skip
        t5_common = ["--vocab_size", "8000", "--steps", "15", "--warmup", "3"]
        precision, limit = "bf16", 150
    bench = [py, "scripts/benchmark_step.py"]
    zero3 = [py, "-m", "accelerate.commands.launch", "--config_file", "accelerate_configs/deepspeed_zero3.yaml",
             "--num_processes", "1", "--mixed_precision", precision, "scripts/benchmark_step.py"]  # fmt: skip
    found = [
        Step("torch-api", [py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_torch_api.py"], 120, False),
        Step("gpu-tests", [py, "-m", "pytest", "-q", "-m", "gpu", "-p", "no:cacheprovider", "tests"], 240),
        Step(
            "base-bf16",
            [*bench, *multi30k, *base, "--mixed_precision", precision, "--output_dir", str(out / "runs" / "base")],
            limit,
        ),  # fmt: skip
        Step(
            "base-bf16-compiled",
            [
                *bench,
                *multi30k,
                *base,
                "--mixed_precision",
                precision,
                "--torch_compile",
                "--output_dir",
                str(out / "runs" / "base"),
            ],
            limit + 60,
        ),  # fmt: skip
    ]
    for size in ("base", "xl"):
        for gc in (False, True):
            name = f"flan-t5-{size}-zero3{'-gc' if gc else ''}"
            flags = [*geneval, *t5[size], *t5_common, "--output_dir", str(out / "runs" / name)]
            found.append(Step(name, [*zero3, *flags, *(["--gradient_checkpointing"] if gc else [])], limit + 30))
    model = translate_model or str(out / "runs" / "translate" / "final")
    if translate_model is None:
        recipe = ["--config", "recipes/multi30k_en_de_small.yaml", "--data_dir", str(data / "multi30k"),
                  "--output_dir", str(out / "runs" / "translate"), *quiet, "--test_split", "none",
                  "--max_steps", "40" if smoke else "1500", "--eval_steps", "100000"]  # fmt: skip
        if smoke:
            recipe += ["--model", "transformer-tiny", "--vocab_size", "1000", "--max_train_samples", "2000"]
        found.append(Step("translate-model", [py, "scripts/train.py", *recipe], 300, gpu=False))
    ct2 = "float32,int8" if smoke else "float16,int8_float16"
    test = data / "multi30k" / "test_2016_flickr"
    found.append(Step("translate", [
        py, "scripts/benchmark.py", "translate", "--model", model, "--source", f"{test}.en.gz",
        "--reference", f"{test}.de.gz", "--ct2_types", ct2, "--batch_size", "64",
        *(["--max_sentences", "50"] if smoke else []),
    ], 240, gpu=False))  # fmt: skip
    found.append(Step("decoding", [
        py, "scripts/benchmark.py", "decoding", "--model", model, "--source", f"{test}.en.gz",
        "--reference", f"{test}.de.gz", "--batch_size", "64",
        *(["--max_sentences", "20", "--samples", "2,4"] if smoke else ["--samples", "8,16,32"]),
    ], 600, gpu=False))  # fmt: skip
    return found


def run_step(step: Step) -> tuple[str, float, str]:
    """(status, seconds, output) of one step in its own process group, killed whole at its time limit."""
    start = time.perf_counter()
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **step.env}
    proc = subprocess.Popen(step.command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)  # fmt: skip
    try:
        output, _ = proc.communicate(timeout=step.timeout)
        status = "ok" if proc.returncode == 0 else f"failed (exit {proc.returncode})"
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        status = f"timed out ({step.timeout} s)"
    return status, time.perf_counter() - start, output


def figures(name: str, output: str) -> list[dict]:
    """The records a step printed: benchmark_step's JSON line, the translate benchmark's systems, pytest's summary."""
    records = []
    for line in reversed(output.splitlines()):
        if not line.startswith("{"):
            continue
        try:
            found = json.loads(line)
        except json.JSONDecodeError:
            continue
        if "systems" in found:  # scripts/benchmark.py: one row per system
            return [{"step": f"{name}: {s['system']}", **s} for s in found["systems"]]
        return [{"step": name, **found}]
    summary = [line for line in output.splitlines() if " passed" in line or " failed" in line]
    return [{"step": name, "summary": summary[-1].strip("= ")}] if summary else records


def report(records: list[dict], out: Path) -> str:
    """Write ``report.json`` and ``report.md``; return the markdown table."""
    from mtkit.textio import atomic_write, markdown_table

    table = markdown_table(records, COLUMNS, label="step")
    atomic_write(out / "report.json", (json.dumps(records, indent=2) + "\n").encode())
    atomic_write(out / "report.md", (table + "\n").encode())
    return table


def run(data: Path, out: Path, smoke: bool, only: list[str], translate_model: str | None) -> list[dict]:
    """Every step (or those ``only`` names: names or shell patterns), in order; the report is rewritten after each."""
    import torch

    has_gpu = torch.cuda.is_available()
    records: list[dict] = []
    for step in steps(data, out, smoke, translate_model):
        if only and not any(fnmatch(step.name, pattern) for pattern in only):
            continue
        base = {"step": step.name, "command": " ".join(step.command)}
        if step.gpu and not has_gpu and not smoke:
            records.append({**base, "status": "skipped (no CUDA GPU)"})
        else:
            status, seconds, output = run_step(step)
            found = figures(step.name, output) or [{}]
            records += [{**base, **r, "status": status, "seconds": seconds} for r in found]
            if status != "ok":
                records[-1]["output_tail"] = output[-3000:]
        print(f"{step.name}: {records[-1]['status']}", file=sys.stderr, flush=True)
        report(records, out)
    return records
