"""Faults a long run meets, each survived with nothing lost: evaluation that must not steer training, a stop
signal (spot reclaim, Slurm preemption, Ctrl-C) that ends in a checkpoint and a requeue status."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file
from testing_utils import BIN, FAST_RUN, OFFLINE_ENV, REPO, free_port, run_script

SMALL = [
    *FAST_RUN, "--eval_max_samples", "4", "--max_new_tokens", "4", "--test_split", "none",
    "--no_load_best_model_at_end", "--max_train_samples", "1500",
]  # fmt: skip


def same_final_weights(a, b) -> bool:
    x, y = load_file(a / "final" / "model.safetensors"), load_file(b / "final" / "model.safetensors")
    return x.keys() == y.keys() and all(torch.equal(x[k], y[k]) for k in x)


def test_evaluation_does_not_change_the_trained_weights(multi30k_small, tmp_path):
    """Weights depend on seed, data and schedule only: evaluating every 3 updates or only at the end (or stopping
    at 4, which evaluates there, and resuming) ends with the same weights after 8 updates."""
    common = ["--data_dir", str(multi30k_small), *SMALL, "--max_steps", "8"]
    often, once, stopped = tmp_path / "often", tmp_path / "once", tmp_path / "stopped"
    for out, extra in ((often, ["--eval_steps", "3"]), (once, ["--eval_steps", "8"])):
        res = run_script("train.py", *common, *extra, "--save_steps", "8", "--output_dir", str(out))
        assert res.returncode == 0, res.stderr[-2000:]
    assert same_final_weights(often, once)
    res = run_script("train.py", *common, "--max_steps", "4", "--eval_steps", "8", "--output_dir", str(stopped))
    assert res.returncode == 0, res.stderr[-2000:]
    res = run_script("train.py", *common, "--eval_steps", "8", "--save_steps", "8", "--output_dir", str(stopped))
    assert res.returncode == 0 and "resuming from" in res.stdout, res.stderr[-2000:]
    assert same_final_weights(stopped, once)


def metrics_steps(out) -> list[int]:
    path = out / "metrics.jsonl"
    if not path.is_file():
        return []
    return [int(line.split('"step": ')[1].split(",")[0]) for line in path.read_text().splitlines() if '"loss"' in line]


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


def start(args: list[str], processes: int, out) -> subprocess.Popen:
    if processes == 1:
        cmd = [sys.executable, "scripts/train.py", *args]
    else:
        cmd = [
            "accelerate", "launch", "--config_file", "accelerate_configs/cpu_ddp.yaml", "--num_processes",
            str(processes), "--main_process_port", free_port(), "scripts/train.py", *args,
        ]  # fmt: skip
    env = {**os.environ, **OFFLINE_ENV, "PATH": BIN + os.pathsep + os.environ["PATH"]}
    log = open(out.parent / f"{out.name}.log", "w")
    return subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, text=True)


@pytest.mark.parametrize("processes", [1, 2])
def test_sigterm_writes_a_checkpoint_and_the_relaunch_loses_nothing(multi30k_small, tmp_path, processes):
    """SIGTERM to one process only (rank 1 of 2: the others learn of it at the update boundary): the run writes a
    checkpoint at the update where it stops and exits 75 (one process; under a launcher the launcher reports the
    workers' exit); relaunching ends with the same weights as a run never stopped."""
    args = ["--data_dir", str(multi30k_small), *SMALL, "--max_steps", "24", "--eval_steps", "24",
            "--save_steps", "24"]  # fmt: skip
    straight, stopped = tmp_path / "straight", tmp_path / "stopped"
    assert start([*args, "--output_dir", str(straight)], processes, straight).wait(timeout=600) == 0
    proc = start([*args, "--output_dir", str(stopped)], processes, stopped)
    deadline = time.time() + 300
    while not metrics_steps(stopped) and proc.poll() is None and time.time() < deadline:
        time.sleep(0.2)
    assert proc.poll() is None, "the run ended before it could be signalled"
    pids = worker_pids(stopped)
    os.kill(pids[processes - 1], signal.SIGTERM)
    code = proc.wait(timeout=300)
    log = (tmp_path / "stopped.log").read_text()
    assert "stopped by SIGTERM after update" in log, log[-3000:]
    assert code == (75 if processes == 1 else 1)  # torchrun turns a worker's exit into its own failure
    step = int(log.split("stopped by SIGTERM after update ")[1].split(";")[0])
    assert 5 <= step < 24
    state = json.loads((stopped / "checkpoints" / "checkpoint_last" / "trainer_state.json").read_text())
    assert state["step"] == step and not (stopped / "final").exists()
    assert start([*args, "--output_dir", str(stopped)], processes, stopped).wait(timeout=600) == 0
    assert f"resuming from {stopped / 'checkpoints'}" in (tmp_path / "stopped.log").read_text()
    assert same_final_weights(straight, stopped)
