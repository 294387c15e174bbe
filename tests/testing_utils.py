"""Helpers shared by the tests: where the real data is, script runners, small-run flags."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[1]


def data_root(repo: Path = REPO) -> Path:
    """The real data: ``../shared/data`` beside the checkout, else ``.gpu/data`` inside it (where
    ``scripts/gpu_prepare.sh`` copies it for a GPU machine, which gets the checkout alone)."""
    candidates = [repo.parent / "shared" / "data", repo / ".gpu" / "data"]
    return next((d for d in candidates if (d / "multi30k").is_dir()), candidates[0])


SHARED_DATA = data_root()
MULTI30K = SHARED_DATA / "multi30k"
MTGENEVAL = SHARED_DATA / "mt-geneval"
WINOMT = SHARED_DATA / "winomt"

BIN = str(Path(sys.executable).parent)  # the venv's bin: accelerate, torchrun
OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "HF_EVALUATE_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "WANDB_MODE": "offline",
    "PYTHONUNBUFFERED": "1",
}


def run_script(script: str, *args: str, env: dict | None = None, cwd: Path = REPO, timeout: int = 600, stdin=None):
    """Run ``scripts/<script>`` (or any command list when ``script`` is ``"-"``) in a subprocess.

    It runs in its own process group; on timeout the whole group is killed (a launcher's workers included), so
    that a hung run cannot hold CPUs, ports or locks while the next tests run."""
    cmd = list(args) if script == "-" else [sys.executable, str(REPO / "scripts" / script), *args]
    with subprocess.Popen(
        cmd,
        cwd=cwd,
        env={**os.environ, **OFFLINE_ENV, "PATH": BIN + os.pathsep + os.environ.get("PATH", ""), **(env or {})},
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as proc:
        try:
            stdout, stderr = proc.communicate(stdin, timeout=timeout)
        except subprocess.TimeoutExpired as timed_out:
            os.killpg(proc.pid, signal.SIGKILL)
            stdout, stderr = proc.communicate()
            raise subprocess.TimeoutExpired(cmd, timeout, stdout, stderr) from timed_out
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # nothing of this run outlives it
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)


def script_in_process(main, *args: str) -> subprocess.CompletedProcess:
    """A script's ``main`` (``mtkit/cli/<script>.py``, wrapped by ``cli_entry``) run in this process on ``args``, as
    :func:`run_script` would report it (exit status, standard output and error), without a fresh interpreter's three
    seconds of imports. For tests whose subject is what the script does, not its process."""
    out, err = io.StringIO(), io.StringIO()
    code = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main(list(args))
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    return subprocess.CompletedProcess([main.__module__, *args], code, out.getvalue(), err.getvalue())


#: what :func:`scripts_in_one_process` runs: each script as ``python scripts/<script>`` runs it, between marker lines
SCRIPTS = """
import json, os, runpy, sys, time

calls, mark, end = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
results = []
for path, args, env in calls:
    print(mark, flush=True)
    print(mark, file=sys.stderr, flush=True)
    saved, sys.argv, sys.path[0] = dict(os.environ), [path, *args], os.path.dirname(path)
    os.environ.update(env)
    start, code = time.perf_counter(), 0
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    results.append((code, time.perf_counter() - start))
    os.environ.clear()
    os.environ.update(saved)
print(end, json.dumps(results), flush=True)
"""
_MARK, _END = "@@script", "@@results"


class ScriptRun(NamedTuple):
    """One script run by :func:`scripts_in_one_process`: its exit status, what it printed, its seconds."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float


def scripts_in_one_process(calls: dict[str, tuple], env: dict | None = None) -> dict[str, ScriptRun]:
    """Each ``name: (script, args, call_env)`` of ``calls`` run as ``python scripts/<script> ARGS`` runs it, one after
    the other in one fresh interpreter under ``env`` (what libraries read at import: huggingface_hub's variables),
    ``call_env`` set while that script runs. What went to each stream between one script's start and the next is
    that script's, the libraries' loggers included. For cases that need a fresh interpreter's environment, not one
    each (tcmalloc's restart is off: it would start the interpreter again)."""
    todo = [(str(REPO / "scripts" / script), list(args), call_env) for script, args, call_env in calls.values()]
    env = {**(env or {}), "MTKIT_TCMALLOC": "0"}
    res = run_script("-", sys.executable, "-c", SCRIPTS, json.dumps(todo), _MARK, _END, env=env)
    assert _END in res.stdout, res.stderr[-3000:]
    printed, results = res.stdout.rsplit(_END, 1)
    outs, errs = printed.split(f"{_MARK}\n")[1:], res.stderr.split(f"{_MARK}\n")[1:]
    assert len(outs) == len(errs) == len(calls), res.stderr[-3000:]
    return {
        name: ScriptRun(code, out, err, seconds)
        for name, out, err, (code, seconds) in zip(calls, outs, errs, json.loads(results), strict=True)
    }


@contextlib.contextmanager
def fresh_run_state(env: dict | None = None, argv: list[str] | None = None):
    """accelerate's state reset before and after, ``env`` set and ``sys.argv`` replaced by ``argv`` (when given)
    while the block runs: what a run in this process needs to start as a fresh interpreter would."""
    from accelerate.state import AcceleratorState, GradientState

    saved = {k: os.environ.get(k) for k in (env or {})}
    saved_argv = sys.argv
    os.environ.update(env or {})
    if argv is not None:
        sys.argv = argv
    AcceleratorState._reset_state(reset_partial_state=True)
    GradientState._reset_state()
    try:
        yield
    finally:
        AcceleratorState._reset_state(reset_partial_state=True)
        GradientState._reset_state()
        sys.argv = saved_argv
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def train_in_process(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """``scripts/train.py ARGS`` run by its own ``main`` in this process (:func:`script_in_process`), with the
    accelerate state reset before and after and ``env`` set while it runs. For tests whose subject is the run, not
    the process: signals, launchers and environment leaks keep real processes."""
    from mtkit.cli.train import main

    with fresh_run_state(env):
        res = script_in_process(main, *args)
    return subprocess.CompletedProcess(["train.py", *args], res.returncode, res.stdout, res.stderr)


def argv_script_in_process(script: str, *args: str) -> subprocess.CompletedProcess:
    """``scripts/<script> ARGS`` for a script whose ``main()`` reads ``sys.argv`` itself (``benchmark_step.py``): its
    ``main`` run in this process as :func:`script_in_process` runs one, ``sys.argv`` set to the command line and the
    accelerate state reset around it."""
    import importlib

    main = importlib.import_module(script.removesuffix(".py")).main
    with fresh_run_state(argv=[str(REPO / "scripts" / script), *args]):
        res = script_in_process(lambda _argv: main(), *args)
    return subprocess.CompletedProcess([script, *args], res.returncode, res.stdout, res.stderr)


def launch_command(
    config: str,
    *args: str,
    script: str = "scripts/train.py",
    processes: int | None = 2,
    port: str | None = None,
    launcher_args: tuple[str, ...] = (),
    precision: str = "no",
) -> list[str]:
    """``accelerate launch --config_file accelerate_configs/<config>.yaml [launcher_args] <script> <args>`` on
    ``processes`` processes (``None``: the config's own count), its rendezvous on a free port, computing in
    ``precision`` (fp32 by default: the GPU configs' bf16 means nothing on a CPU)."""
    cmd = ["accelerate", "launch", "--config_file", f"accelerate_configs/{config}.yaml", "--mixed_precision", precision]
    if processes is not None:
        cmd += ["--num_processes", str(processes)]
    return [*cmd, *launcher_args, "--main_process_port", port or free_port(), script, *args]


def launch(config: str, *args: str, env: dict | None = None, timeout: int = 600, **kw) -> subprocess.CompletedProcess:
    """:func:`launch_command` run and waited for, like :func:`run_script`. The DDP launchers for GPUs run on the CPU
    here (``ACCELERATE_USE_CPU``; DeepSpeed picks gloo by itself)."""
    cpu = {"ACCELERATE_USE_CPU": "1"} if config in ("multi_gpu", "multi_node") else {}
    return run_script("-", *launch_command(config, *args, **kw), env={**cpu, **(env or {})}, timeout=timeout)


def worker_pids(out) -> dict[int, int]:
    """rank -> pid of the training processes writing to ``out`` (read from /proc)."""
    found = {}
    for proc in Path("/proc").iterdir():
        try:
            cmd = (proc / "cmdline").read_bytes().split(b"\0")
            if str(out).encode() not in cmd or not any(c.endswith(b"scripts/train.py") for c in cmd):
                continue
            env = dict(v.split(b"=", 1) for v in (proc / "environ").read_bytes().split(b"\0") if b"=" in v)
            found[int(env.get(b"RANK", b"0"))] = int(proc.name)
        except (OSError, ValueError):
            continue
    return found


def make_demo(
    out: Path, corpus_args: str, demo_args: str, timeout: int, target: str = "demo"
) -> subprocess.CompletedProcess:
    """The Makefile's ``demo`` target (or ``target``, such as ``demo-mitigate``) into ``out`` (its corpus in
    ``<out>_corpus``), with extra flags for the corpus and for training; ``-o``: never rebuild the venv from inside
    the test suite; ``PY``: this interpreter."""
    return run_script(
        "-", "make", "-o", ".venv/.installed", target, f"PY={sys.executable}", f"DEMO={out}",
        f"CORPUS_ARGS={corpus_args}", f"DEMO_ARGS={demo_args}", timeout=timeout,
    )  # fmt: skip


#: ``make demo`` in small: the corpus's sizes and the training flags of :func:`make_demo` for the suite's demo run
DEMO_SMALL = (
    "--n_train 4000 --n_valid 40 --n_test 40 --n_gender_pairs 30",
    "--max_steps 20 --eval_steps 20 --save_steps 20 --eval_max_samples 20 --max_new_tokens 32 --report_to none",
)


def write_slice(src: Path, dst: Path, n: int) -> None:
    """The first ``n`` lines of a (gzipped) corpus file, as a plain text file."""
    with gzip.open(src, "rt", encoding="utf-8") as f:
        lines = [next(f) for _ in range(n)]
    dst.write_text("".join(lines), encoding="utf-8")


def read_gz_lines(path: Path, n: int) -> list[str]:
    """The first ``n`` lines of a gzipped corpus file, without their newlines."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [next(f).rstrip("\n") for _ in range(n)]


#: Flags that make a run small and fast; tests add their own on top.
FAST_RUN = [
    "--source_lang", "en", "--target_lang", "de",
    "--validation_split", "val", "--test_split", "test_2016_flickr",
    "--model", "transformer-tiny", "--vocab_size", "1000",
    "--max_tokens", "1024", "--warmup_steps", "10", "--learning_rate", "2e-3",
    "--eval_max_samples", "16", "--max_new_tokens", "16", "--num_beams", "2",
    "--report_to", "none", "--disable_tqdm", "--logging_steps", "5",
]  # fmt: skip


#: The shared two-process run (``tests/conftest.py``: ``ddp_run``), with flags the SageMaker entry's run repeats:
#: 80 sentence pairs are two updates of 2 processes, so final/ is the mean of the epochs ending at updates 2 and 4.
DDP_RUN = [
    *FAST_RUN, "--max_steps", "4", "--eval_steps", "4", "--save_steps", "4", "--eval_max_samples", "4",
    "--max_new_tokens", "4", "--test_split", "none", "--mixed_precision", "no", "--logging_steps", "2",
    "--max_train_samples", "80", "--average_last_epochs", "2",
]  # fmt: skip


def system_library(name: str) -> str | None:
    """The path the loader's cache (``ldconfig -p``) gives for ``name``, or None (not installed, no ldconfig)."""
    ldconfig = shutil.which("ldconfig") or "/sbin/ldconfig"
    try:
        out = subprocess.run([ldconfig, "-p"], capture_output=True, text=True).stdout
    except OSError:
        return None
    return next((line.split("=>")[-1].strip() for line in out.splitlines() if name in line), None)


def free_port() -> str:
    """A TCP port nothing listens on now, for a launcher's rendezvous (fixed ports collide across runs)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return str(sock.getsockname()[1])


def wait_for_port(port: str, timeout: float = 120) -> None:
    """Until something listens on ``port`` here: with several "nodes" on one machine, the others start once the
    first one's rendezvous store is up (each launcher refuses to start if the port is taken when it checks)."""
    import time

    deadline = time.time() + timeout
    while time.time() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", int(port))) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(f"nothing listens on port {port} after {timeout} s")


#: MT-GenEval's five target languages
LANGS = ["de", "es", "fr", "it", "pt"]


def finetune_args(tiny_t5, out, *extra: str) -> list[str]:
    return [
        "--mtgeneval_dir", str(MTGENEVAL), "--target_langs", ",".join(LANGS), "--prompt", "instruction",
        "--model_name_or_path", str(tiny_t5), "--output_dir", str(out), "--max_tokens", "1024",
        "--max_source_length", "64", "--max_target_length", "64", "--learning_rate", "3e-3",
        "--lr_scheduler_type", "constant", "--warmup_steps", "0", "--eval_max_samples", "40",
        "--max_new_tokens", "12", "--num_beams", "1", "--eval_batch_size", "40", "--report_to", "none",
        "--disable_tqdm", "--logging_steps", "2", "--test_split", "none", "--label_smoothing", "0", *extra,
    ]  # fmt: skip


def rows(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def greedy(model_dir, inputs: list[str], max_new_tokens: int = 12) -> list[str]:
    """Translations by transformers directly (not the toolkit's translate code)."""
    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForSeq2SeqLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    out = []
    for text in inputs:
        ids = model.generate(**tok([text], return_tensors="pt"), num_beams=1, do_sample=False,
                             max_new_tokens=max_new_tokens)  # fmt: skip
        out.append(tok.decode(ids[0], skip_special_tokens=True).strip())
    return out


def script_parsers() -> dict:
    """Every script's argument parser, by script (train.py and preprocess.py share the run config's)."""
    import benchmark

    from mtkit.cli import (
        average_checkpoints,
        bias_report,
        compare_reports,
        demo_corpus,
        export_ct2,
        export_model,
        push_to_hub,
        translate,
    )
    from mtkit.config import train_parser

    return {
        "train.py": train_parser(),
        "translate.py": translate.build_parser(),
        "bias_report.py": bias_report.build_parser(),
        "compare_reports.py": compare_reports.build_parser(),
        "export_model.py": export_model.build_parser(),
        "average_checkpoints.py": average_checkpoints.build_parser(),
        "export_ct2.py": export_ct2.build_parser(),
        "demo_corpus.py": demo_corpus.build_parser(),
        "push_to_hub.py": push_to_hub.build_parser(),
        "benchmark.py": benchmark.parser(),
    }


def parser_actions(parser):
    """Every action of ``parser`` and of its subcommands."""
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from parser_actions(sub)
        else:
            yield action


def as_written(tensor, like):
    """A checkpoint's ``tensor`` cut to the shape of ``like``, its counterpart in a model written for use: a
    vocabulary rounded up for training (mtkit/model/vocab.py) loses its extra rows there."""
    return tensor[tuple(slice(0, n) for n in like.shape)]
