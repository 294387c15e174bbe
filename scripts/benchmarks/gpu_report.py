"""Every GPU figure of the README from a few commands, each fitting one 10-minute slot of a borrowed GPU.

Steps, each a fresh process with its own time limit, so that one failure costs only itself, in groups
(``--only GROUP``) whose time limits add up to at most :data:`SLOT_S` seconds, one device command each:

* ``tests``: ``torch-api``, the PyTorch behaviour the toolkit relies on, on the image's own torch
  (``tests/test_torch_api.py``), and ``gpu-tests``, the tests marked ``gpu`` (``make test-gpu``);
* ``base``: ``scripts/benchmark_step.py``, transformer-base at ~25k tokens per update in bf16 (eager and
  ``--torch_compile``) and in fp32 (TF32 matrix products), with a profile of the bf16 step;
* ``flan-base`` / ``flan-xl``: flan-t5's shapes (random weights; flan-t5-xl's exact configuration) under DeepSpeed
  ZeRO-3 bf16 on one GPU, without and with gradient checkpointing (``-gc``), each at the largest token budget
  whose measured activations fit beside the model states (:func:`mtkit.model.memory.token_budget`);
* ``translate``: a Multi30k model trained for the purpose (``translate-model``, kept in the work folder for the next
  group, or ``--translate_model``), then ``scripts/benchmark.py translate`` on the GPU: transformers' ``generate``
  against CTranslate2 float16 and int8_float16 (needs ``.whl-ct2`` carried);
* ``decoding``: the same model, beam search against MBR (``scripts/benchmark.py decoding``).

The folder ``--out`` receives ``report.md`` (one table), ``report.json`` (every record and the command of each
step; records of other groups already there are kept), ``<step>.log`` (streamed while the step runs) and the
profiles: every file there as soon as its step ends, so a command cut off later loses nothing. Runs, checkpoints
and models go to the work folder, outside ``--out``. Without a CUDA GPU every GPU step is recorded as skipped;
``--smoke`` shrinks every step to a CPU-sized run (the test suite's check of the plumbing); ``--dry_run`` prints
and checks the plan (:func:`check_plan`).
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
#: Seconds of step time limits one group may add up to: a device command runs 600 s at most, and the wheels'
#: install and the interpreter's start come first.
SLOT_S = 540
#: Files one device command brings back from $OUT, and how many folders down.
MAX_FILES, MAX_DEPTH = 8, 2
#: GPU memory assumed for the plan where no GPU is present (an H100's 80 GB).
ASSUMED_GPU_BYTES = 80e9
#: Modules the GPU image lacks that no step installs (tests needing them are skipped; collection must not fail).
OPTIONAL_MODULES = ("nbformat", "nbclient", "ctranslate2", "evaluate", "nltk", "wandb", "trackio", "ipykernel")
COLUMNS = [
    ("status", "status", "{}"),
    ("seconds", "s", "{:.0f}"),
    ("tgt_tok_s", "tgt tok/s", "{:,.0f}"),
    ("tflops", "TFLOP/s", "{:.1f}"),
    ("mfu", "MFU", "{:.1%}"),
    ("peak_mem_gb", "peak GiB", "{:.1f}"),
    ("max_tokens", "max tokens", "{}"),
    ("bleu", "BLEU", "{:.2f}"),
    ("sentences_per_s", "sent/s", "{:,.1f}"),
]


@dataclass
class Step:
    name: str
    group: str
    command: list[str]
    timeout: int
    gpu: bool = True
    env: dict[str, str] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)  # what the step writes into --out besides its log
    skip_if: Path | None = None  # done already when this exists (a model trained by an earlier command)

    @property
    def log(self) -> str:
        return f"{self.name}.log"


def default_work(out: Path) -> Path:
    """Where runs and models go: outside ``$OUT`` when it is set (only a few small files may come back), else
    ``<out>/runs``."""
    return Path("/tmp/mtkit_gpu_report") if os.environ.get("OUT") else out / "runs"


def gpu_memory_bytes() -> float:
    """Total memory of the first CUDA device, or :data:`ASSUMED_GPU_BYTES` without one."""
    import torch

    return float(torch.cuda.mem_get_info()[1]) if torch.cuda.is_available() else ASSUMED_GPU_BYTES


def t5_budgets(size: str, memory: float) -> dict[bool, int]:
    """flan-t5-``size``'s ``--max_tokens`` without and with gradient checkpointing under ZeRO-3 on one device."""
    from mtkit.model.memory import token_budget
    from mtkit.model.presets import preset_config

    config = preset_config(f"flan-t5-{size}", vocab_size=8000, pad_token_id=0, bos_token_id=1, eos_token_id=1)
    return {gc: token_budget(config, memory, checkpointing=gc) for gc in (False, True)}


def steps(data: Path, out: Path, smoke: bool, translate_model: str | None, work: Path | None = None) -> list[Step]:
    """The report's steps; with ``smoke`` the same commands at CPU size."""
    py = sys.executable
    work = work or default_work(out)
    quiet = ["--report_to", "none", "--disable_tqdm"]
    multi30k = ["--data_dir", str(data / "multi30k"), "--source_lang", "en", "--target_lang", "de",
                "--validation_split", "val", "--test_split", "none", *quiet]  # fmt: skip
    geneval = ["--mtgeneval_dir", str(data / "mt-geneval"), "--target_langs", "de,es,fr,it,pt", "--prompt",
               "instruction", "--tokenizer_type", "unigram", "--report_to", "none", "--disable_tqdm"]  # fmt: skip
    if smoke:
        base = ["--model", "transformer-tiny", "--vocab_size", "1000", "--max_tokens", "1024", "--max_train_samples",
                "800", "--steps", "3", "--warmup", "1"]  # fmt: skip
        t5 = {"base": ["--model", "transformer-tiny"], "xl": ["--model", "transformer-tiny"]}
        budgets = {size: {False: 1024, True: 1024} for size in t5}
        t5_common = ["--vocab_size", "1000", "--max_train_samples", "800", "--steps", "2", "--warmup", "1"]
        precision, limit = "no", 100
    else:
        base = ["--model", "transformer-base", "--vocab_size", "37000", "--max_tokens", "25000", "--steps", "30",
                "--warmup", "5"]  # fmt: skip
        t5 = {"base": ["--model", "flan-t5-base"], "xl": ["--model", "flan-t5-xl"]}
        memory = gpu_memory_bytes()
        budgets = {size: t5_budgets(size, memory) for size in t5}
        t5_common = ["--vocab_size", "8000", "--steps", "15", "--warmup", "3"]
        precision, limit = "bf16", 150
    bench = [py, "scripts/benchmark_step.py"]
    zero3 = [py, "-m", "accelerate.commands.launch", "--config_file", "accelerate_configs/deepspeed_zero3.yaml",
             "--num_processes", "1", "--mixed_precision", precision, "scripts/benchmark_step.py"]  # fmt: skip
    profile = "base-bf16.profile.txt"
    found = [
        Step(
            "torch-api",
            "tests",
            [py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_torch_api.py"],
            60,
            gpu=False,
        ),  # fmt: skip
        Step("gpu-tests", "tests", [py, "-m", "pytest", "-q", "-m", "gpu", "-p", "no:cacheprovider", "tests"], 460),
        Step(
            "base-bf16",
            "base",
            [
                *bench,
                *multi30k,
                *base,
                "--mixed_precision",
                precision,
                "--profile",
                str(out / profile),
                "--output_dir",
                str(work / "base"),
            ],
            limit,
            files=[profile],
        ),  # fmt: skip
        Step(
            "base-bf16-compiled",
            "base",
            [
                *bench,
                *multi30k,
                *base,
                "--mixed_precision",
                precision,
                "--torch_compile",
                "--output_dir",
                str(work / "base"),
            ],
            limit + 90,
        ),  # fmt: skip
        Step(
            "base-fp32",
            "base",
            [*bench, *multi30k, *base, "--mixed_precision", "no", "--output_dir", str(work / "base")],
            limit,
        ),  # fmt: skip
    ]
    for size, group, seconds in (("base", "flan-base", limit + 50), ("xl", "flan-xl", limit + 110)):
        for gc in (False, True):
            name = f"flan-t5-{size}-zero3{'-gc' if gc else ''}"
            flags = [*geneval, *t5[size], *t5_common, "--max_tokens", str(budgets[size][gc]),
                     "--output_dir", str(work / name), *(["--gradient_checkpointing"] if gc else [])]  # fmt: skip
            found.append(Step(name, group, [*zero3, *flags], seconds))
    model = Path(translate_model) if translate_model else work / "translate" / "final"
    for group in ("translate", "decoding"):
        if translate_model is None:
            recipe = ["--config", "recipes/multi30k_en_de_small.yaml", "--data_dir", str(data / "multi30k"),
                      "--output_dir", str(work / "translate"), *quiet, "--test_split", "none",
                      "--max_steps", "40" if smoke else "1500", "--eval_steps", "100000"]  # fmt: skip
            if smoke:
                recipe += ["--model", "transformer-tiny", "--vocab_size", "1000", "--max_train_samples", "2000"]
            found.append(Step(f"{group}-model", group, [py, "scripts/train.py", *recipe], 240, gpu=False,
                              skip_if=model / "config.json"))  # fmt: skip
    test = data / "multi30k" / "test_2016_flickr"
    corpus = ["--model", str(model), "--source", f"{test}.en.gz", "--reference", f"{test}.de.gz", "--batch_size", "64"]
    ct2 = "float32,int8" if smoke else "float16,int8_float16"
    found.append(Step("translate", "translate", [py, "scripts/benchmark.py", "translate", *corpus, "--ct2_types", ct2,
                      *(["--max_sentences", "50"] if smoke else [])], 240, gpu=False))  # fmt: skip
    sizes = (
        ["--max_sentences", "20", "--samples", "2,4"] if smoke else ["--max_sentences", "500", "--samples", "8,16,32"]
    )
    found.append(
        Step("decoding", "decoding", [py, "scripts/benchmark.py", "decoding", *corpus, *sizes], 290, gpu=False)
    )
    return found


def groups(found: list[Step]) -> dict[str, list[Step]]:
    """The steps by group, in order."""
    by: dict[str, list[Step]] = {}
    for step in found:
        by.setdefault(step.group, []).append(step)
    return by


def select(found: list[Step], only: list[str]) -> list[Step]:
    """The steps ``only`` names (groups, step names or shell patterns of either); all without ``only``."""
    return [s for s in found if not only or any(fnmatch(s.name, p) or fnmatch(s.group, p) for p in only)]


def check_plan(found: list[Step], out: Path) -> list[str]:
    """What is wrong with the plan for one-command-per-group runs: a group whose time limits exceed
    :data:`SLOT_S`, or that writes more files into ``out`` than come back (or deeper than they come back from)."""
    problems = []
    for group, members in groups(found).items():
        total = sum(s.timeout for s in members)
        if total > SLOT_S:
            problems.append(f"group {group}: time limits add up to {total} s, over {SLOT_S} s")
        files = ["report.md", "report.json", *(f for s in members for f in (s.log, *s.files))]
        if len(files) > MAX_FILES:
            problems.append(f"group {group}: {len(files)} files into --out, over {MAX_FILES}")
        for name in files:
            if len(Path(name).parts) > 1:
                problems.append(f"group {group}: {name} is not at the top of --out")
    root = Path(os.environ["OUT"]).resolve() if os.environ.get("OUT") else None
    if root is not None and root not in (out.resolve(), *out.resolve().parents):
        problems.append(f"--out {out} is not under $OUT ({root}): nothing would come back")
    elif root is not None and len(out.resolve().relative_to(root).parts) > MAX_DEPTH:
        problems.append(f"--out {out}: files there are more than {MAX_DEPTH} folders below $OUT")
    return problems


def plan(found: list[Step], out: Path) -> str:
    """The plan as text: each group, its steps, their time limits and sum, and the files it writes."""
    lines = []
    for group, members in groups(found).items():
        total = sum(s.timeout for s in members)
        lines.append(f"group {group}: {total} s of {SLOT_S} s (bash scripts/gpu_report.sh --only {group})")
        for s in members:
            files = ", ".join(str(out / f) for f in (s.log, *s.files))
            lines.append(f"  {s.name:<22} {s.timeout:>4} s{'  GPU' if s.gpu else ''}  -> {files}")
    return "\n".join(lines)


def run_step(step: Step, log: Path) -> tuple[str, float, str]:
    """(status, seconds, output) of one step in its own process group, killed whole at its time limit; its output
    goes to ``log`` as it comes (a step cut off later keeps what it printed)."""
    start = time.perf_counter()
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **step.env}
    with open(log, "w", encoding="utf-8") as sink:
        proc = subprocess.Popen(step.command, cwd=REPO, env=env, stdout=sink, stderr=subprocess.STDOUT,
                                start_new_session=True)  # fmt: skip
        try:
            proc.wait(timeout=step.timeout)
            status = "ok" if proc.returncode == 0 else f"failed (exit {proc.returncode})"
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            status = f"timed out ({step.timeout} s)"
    return status, time.perf_counter() - start, log.read_text(encoding="utf-8", errors="replace")


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
    from bias_eval.core.markdown import records_table
    from bias_eval.core.textio import atomic_write

    table = records_table(records, COLUMNS, label="step")
    atomic_write(out / "report.json", (json.dumps(records, indent=2) + "\n").encode())
    atomic_write(out / "report.md", (table + "\n").encode())
    return table


def run(
    data: Path, out: Path, smoke: bool, only: list[str], translate_model: str | None, work: Path | None = None
) -> list[dict]:
    """The steps ``only`` selects (all without it), in order; ``report.json``/``report.md`` are rewritten after each,
    keeping the records of steps not run this time."""
    import torch

    has_gpu = torch.cuda.is_available()
    chosen = select(steps(data, out, smoke, translate_model, work), only)
    print(f"{len(chosen)} step(s), time limits adding up to {sum(s.timeout for s in chosen)} s", file=sys.stderr)
    try:
        kept = json.loads((out / "report.json").read_text())
    except (OSError, ValueError):
        kept = []
    names = {s.name for s in chosen}
    kept = [r for r in kept if r.get("step", "").split(":")[0] not in names]
    records: list[dict] = []
    for step in chosen:
        base = {"step": step.name, "command": " ".join(step.command)}
        if step.gpu and not has_gpu and not smoke:
            records.append({**base, "status": "skipped (no CUDA GPU)"})
        elif step.skip_if is not None and step.skip_if.exists():
            records.append({**base, "status": f"skipped ({step.skip_if.parent} is there)"})
        else:
            status, seconds, output = run_step(step, out / step.log)
            found = figures(step.name, output) or [{}]
            records += [{**base, **r, "status": status, "seconds": seconds} for r in found]
            if status != "ok":
                records[-1]["output_tail"] = output[-3000:]
        print(f"{step.name}: {records[-1]['status']}", file=sys.stderr, flush=True)
        report(kept + records, out)
    return kept + records
