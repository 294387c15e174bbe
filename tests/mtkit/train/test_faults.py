"""Faults a long run meets, each survived with nothing lost: evaluation that must not steer training, a stop
signal (spot reclaim, Slurm preemption, Ctrl-C) that ends in a checkpoint and a requeue status, damaged or
unreadable checkpoints, links lost in a copy."""

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
from testing_utils import (
    BIN,
    FAST_RUN,
    OFFLINE_ENV,
    REPO,
    as_written,
    launch_command,
    script_in_process,
    train_in_process,
    worker_pids,
)

import mtkit.train.trainer
from mtkit.cli.export_model import main as export_main
from mtkit.config import parse_config
from mtkit.errors import UserError

SMALL = [
    *FAST_RUN, "--eval_max_samples", "4", "--max_new_tokens", "4", "--test_split", "none",
    "--no_load_best_model_at_end", "--max_train_samples", "1500",
]  # fmt: skip


def same_final_weights(a, b) -> bool:
    x, y = load_file(a / "final" / "model.safetensors"), load_file(b / "final" / "model.safetensors")
    return x.keys() == y.keys() and all(torch.equal(x[k], y[k]) for k in x)


def test_evaluation_does_not_change_the_trained_weights(multi30k_small, straight_runs, tmp_path):
    """Weights depend on seed, data and schedule only: evaluating every 3 updates ends with the weights of the
    never-stopped run of the signal tests below, evaluated only at the end."""
    often = tmp_path / "often"
    res = train_in_process(*stop_args(multi30k_small), "--eval_steps", "3", "--output_dir", str(often))
    assert res.returncode == 0, res.stderr[-2000:]
    assert (often / "metrics.jsonl").read_text().count('"valid_loss"') == STEPS // 3 + 1  # at 3, 6, ... and the end
    assert same_final_weights(often, straight_runs(1))


def test_extending_a_finished_evaluated_run_ends_as_a_run_straight_to_the_end(multi30k_small, tmp_path):
    """A run finished at update 1 (validated, test split decoded, final/ exported) relaunched with --max_steps 4 ends
    with the checkpoint, results and final/ of a run straight to 4. The learning rate is high enough that validation
    loss rises after update 1: the finished run's own end-of-run evaluation (off the --eval_steps grid) beats every
    later one, so were it kept as training's best, the extended run would export update 1 instead of 2."""
    args = [
        "--data_dir", str(multi30k_small), *FAST_RUN, "--eval_max_samples", "4", "--max_new_tokens", "4",
        "--max_train_samples", "1500", "--learning_rate", "0.1", "--lr_scheduler_type", "constant",
        "--warmup_steps", "0", "--metric_for_best_model", "loss", "--eval_steps", "2", "--save_steps", "2",
    ]  # fmt: skip
    extended, straight = tmp_path / "extended", tmp_path / "straight"
    res = train_in_process(*args, "--max_steps", "1", "--output_dir", str(extended))
    assert res.returncode == 0, res.stderr[-2000:]
    first = json.loads((extended / "results.json").read_text())
    assert first["best_step"] == 1 and "test_bleu" in first  # evaluated, tested, exported
    for out, steps in ((extended, "4"), (straight, "4")):
        res = train_in_process(*args, "--max_steps", steps, "--output_dir", str(out))
        assert res.returncode == 0, res.stderr[-2000:]
    results = [json.loads((out / "results.json").read_text()) for out in (extended, straight)]
    assert first["best_valid_loss"] < results[1]["best_valid_loss"]  # update 1 would have won
    assert results[0]["best_step"] == results[1]["best_step"] == 2
    assert results[0] == results[1]
    assert same_final_weights(extended, straight)
    for name in ("model.safetensors", "optimizer.bin", "scheduler.bin", "random_states_0.pkl", "trainer_state.json"):
        last = [out / "checkpoints" / "step-0000004" / name for out in (extended, straight)]
        assert last[0].read_bytes() == last[1].read_bytes(), name
    for out in (extended, straight):
        assert (out / "checkpoints" / "checkpoint_best").resolve().name == "step-0000002"


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_resume_with_another_architecture_is_refused_and_the_run_left_untouched(multi30k_small, tmp_path):
    """Another preset or vocabulary on a run folder with a checkpoint: one line naming the keys and what to do,
    status 2, not a byte of the run changed (before: a size-mismatch traceback, or the old vocabulary silently
    reused). Keys listed in RESUMABLE may change; --overwrite_output_dir starts afresh with the new settings."""
    args = ["--data_dir", str(multi30k_small), *SMALL, "--eval_steps", "2", "--save_steps", "2"]
    out = tmp_path / "run"
    assert train_in_process(*args, "--max_steps", "2", "--output_dir", str(out)).returncode == 0
    before = tree(out)
    for changed, named in (
        (["--model", "transformer-small"], "model 'transformer-tiny' -> 'transformer-small'"),
        (["--vocab_size", "500", "--tokenizer_type", "unigram"], "tokenizer_type 'bpe' -> 'unigram', vocab_size 1000"),
        (["--learning_rate", "1e-3"], "learning_rate 0.002 -> 0.001"),
    ):
        res = train_in_process(*args, *changed, "--max_steps", "4", "--output_dir", str(out))
        lines = res.stderr.strip().splitlines()
        assert res.returncode == 2 and len(lines) == 1 and "Traceback" not in res.stderr, res.stderr[-2000:]
        assert lines[0].startswith(f"error: --output_dir {out}: its checkpoints were made with other settings (")
        assert named in lines[0] and "--overwrite_output_dir" in lines[0] and "new --output_dir" in lines[0]
        assert tree(out) == before
    res = train_in_process(*args, "--max_steps", "3", "--eval_steps", "3", "--num_beams", "1", "--output_dir", str(out))
    assert res.returncode == 0 and "resuming from" in res.stdout, res.stderr[-2000:]
    res = train_in_process(*args, "--vocab_size", "500", "--max_steps", "2", "--output_dir", str(out),
                           "--overwrite_output_dir")  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    assert "deleting the checkpoints made with other settings" in res.stdout and "resuming" not in res.stdout
    vocab = len(json.loads((out / "final" / "tokenizer.json").read_text())["model"]["vocab"])
    assert vocab <= 500 < len(json.loads(before["tokenizer/tokenizer.json"])["model"]["vocab"])


def metrics_steps(out) -> list[int]:
    path = out / "metrics.jsonl"
    if not path.is_file():
        return []
    return [int(line.split('"step": ')[1].split(",")[0]) for line in path.read_text().splitlines() if '"loss"' in line]


def start(args: list[str], processes: int, out, env: dict | None = None, launcher: str = "cpu_ddp") -> subprocess.Popen:
    """``scripts/train.py ARGS`` on ``processes`` processes: plain ``python`` for one, unless ``launcher`` is
    ``single_gpu``; else ``accelerate launch`` with ``launcher``. What they print goes to ``<out>.log`` by ``out``."""
    if processes == 1 and launcher != "single_gpu":
        cmd = [sys.executable, "scripts/train.py", *args]
    else:
        cmd = launch_command(launcher, *args, processes=None if launcher == "single_gpu" else processes)
    env = {**os.environ, **OFFLINE_ENV, "PATH": BIN + os.pathsep + os.environ["PATH"], **(env or {})}
    log = open(out.parent / f"{out.name}.log", "w")
    return subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, text=True)


#: the updates of the signal tests' runs: a checkpoint every 4, evaluated at the end only
STEPS = 16


def stop_args(data) -> list[str]:
    return ["--data_dir", str(data), *SMALL, "--max_steps", str(STEPS), "--eval_steps", str(STEPS), "--save_steps", "4"]


SECRETS = {
    "WANDB_API_KEY": "local-0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c",  # shaped like a key, valid nowhere
    "HF_TOKEN": "hf_mtkitLeakTestTokenNotRealAbCdEfGhIjKl",
    "HUGGING_FACE_HUB_TOKEN": "hf_mtkitLeakTestTokenNotRealMnOpQrStUvWx",
}


@pytest.fixture(scope="module")
def straight_runs(multi30k_small, tmp_path_factory):
    """``straight(processes)``: a run of stop_args never stopped, made once per process count, with known fake
    secrets in its environment and logging to TensorBoard and W&B (offline), for the secrets test below; what the
    processes printed is in ``<run>.log`` beside it. One process is started by ``accelerate launch`` with
    ``accelerate_configs/single_gpu.yaml`` (tests/test_recipes.py: every launcher is started by a test): one process,
    no DeepSpeed, final/ written."""
    made = {}

    def straight(processes: int):
        if processes not in made:
            out = tmp_path_factory.mktemp("straight") / f"x{processes}"
            args = [*stop_args(multi30k_small), "--report_to", "tensorboard,wandb", "--output_dir", str(out)]
            env = {**SECRETS, "WANDB_DIR": str(out.parent)}
            launcher = "single_gpu" if processes == 1 else "cpu_ddp"
            code = start(args, processes, out, env=env, launcher=launcher).wait(600)
            log = (out.parent / f"{out.name}.log").read_text()
            assert code == 0, log[-3000:]
            assert f"{processes} process(es)" in log and "DEEPSPEED" not in log, log[-3000:]
            assert (out / "final" / "model.safetensors").is_file()
            made[processes] = out
        return made[processes]

    return straight


def signal_mid_run(args: list[str], processes: int, out, sig: int, ready) -> tuple[int, str]:
    """Start the run, wait until ``ready(out)``, send ``sig`` to its last rank only; (exit status, log)."""
    proc = start(args, processes, out)
    deadline = time.time() + 300
    while not ready(out) and proc.poll() is None and time.time() < deadline:
        time.sleep(0.2)
    assert proc.poll() is None, "the run ended before it could be signalled"
    os.kill(worker_pids(out)[processes - 1], sig)
    code = proc.wait(timeout=300)
    return code, (out.parent / f"{out.name}.log").read_text()


# two processes (rank 1 signalled, rank 0 told at the update boundary) in the slow tier: about three times the time
# of one process, whose never-stopped run the secrets test below shares
@pytest.mark.parametrize("processes", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_sigterm_then_sigkill_and_each_relaunch_loses_nothing(multi30k_small, straight_runs, tmp_path, processes):
    """SIGTERM to one process only (rank 1 of 2: the others learn of it at the update boundary): the run writes a
    checkpoint at the update where it stops and exits 75 (one process; under a launcher the launcher reports the
    workers' exit). Relaunched, it resumes from that checkpoint; SIGKILL (no chance to save) to one process after
    the next periodic checkpoint, at whatever update it is in; relaunched again, it resumes from the newest complete
    checkpoint and ends bit-identical to a run never stopped."""
    out = tmp_path / "run"
    args, root = [*stop_args(multi30k_small), "--output_dir", str(out)], out / "checkpoints"
    code, log = signal_mid_run(args, processes, out, signal.SIGTERM, metrics_steps)
    assert "stopped by SIGTERM after update" in log, log[-3000:]
    assert code == (75 if processes == 1 else 1)  # torchrun turns a worker's exit into its own failure
    step = int(log.split("stopped by SIGTERM after update ")[1].split(";")[0])
    assert 5 <= step < STEPS - 4  # room for a periodic checkpoint after it (every 4 updates) before the end
    state = json.loads((root / "checkpoint_last" / "trainer_state.json").read_text())
    assert state["step"] == step and not (out / "final").exists()

    def checkpointed_after_the_stop(_out) -> bool:
        return (root / f"step-{4 * (step // 4 + 1):07d}" / "manifest.json").is_file()

    code, log = signal_mid_run(args, processes, out, signal.SIGKILL, checkpointed_after_the_stop)
    assert f"resuming from {root / f'step-{step:07d}'}" in log, log[-3000:]
    assert code != 0 and not (out / "final").exists(), log[-3000:]
    if processes == 1:  # the relaunch's subject is the resume, not its process
        res = train_in_process(*args)
        assert res.returncode == 0, res.stderr[-2000:]
        log = res.stdout
    else:
        assert start(args, processes, out).wait(timeout=600) == 0
        log = (tmp_path / "run.log").read_text()
    assert f"resuming from {root}" in log, log[-3000:]
    assert same_final_weights(straight_runs(processes), out)


def test_a_damaged_newest_checkpoint_is_skipped_without_links(multi30k_small, straight_runs, tmp_path):
    """The newest checkpoint truncated (a copy cut short) and the links gone (copied through S3) or dangling: the
    relaunch warns, resumes from the newest complete one and ends with the weights of a run never stopped (the signal
    tests')."""
    args, damaged = stop_args(multi30k_small), tmp_path / "damaged"
    assert train_in_process(*args, "--max_steps", "8", "--output_dir", str(damaged)).returncode == 0
    root = damaged / "checkpoints"
    weights = root / "step-0000008" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    (root / "checkpoint_best").unlink()
    (root / "checkpoint_last").unlink()
    (root / "checkpoint_last").symlink_to("step-0000099")  # dangling
    res = train_in_process(*args, "--output_dir", str(damaged))
    assert res.returncode == 0, res.stderr[-2000:]
    warning = "warning: skipping checkpoint step-0000008: model.safetensors has "
    assert warning in res.stdout and "resuming from step-0000004" in res.stdout
    assert f"resuming from {root / 'step-0000004'}" in res.stdout
    assert same_final_weights(straight_runs(1), damaged)


def test_checkpoints_that_cannot_be_read_are_never_overwritten_silently(multi30k_small, tmp_path):
    args = ["--data_dir", str(multi30k_small), *SMALL, "--eval_steps", "4", "--save_steps", "4", "--max_steps", "4"]
    out = tmp_path / "run"
    assert train_in_process(*args, "--output_dir", str(out)).returncode == 0
    (out / "checkpoints" / "step-0000004" / "manifest.json").unlink()  # as if the copy stopped before it
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    res = train_in_process(*args, "--max_steps", "8", "--output_dir", str(out))
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == [
        f"error: --output_dir {out}: none of its 1 checkpoint(s) can be read (step-0000004: no manifest.json "
        "(incomplete)); pass --overwrite_output_dir to start afresh and delete them"
    ]
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before  # nothing written, nothing lost
    res = train_in_process(*args, "--max_steps", "2", "--output_dir", str(out), "--overwrite_output_dir")
    assert res.returncode == 0 and "deleting the unreadable checkpoints" in res.stdout, res.stderr[-2000:]
    assert "resuming" not in res.stdout and (out / "final" / "model.safetensors").is_file()


def test_secrets_in_the_environment_reach_nothing_a_run_writes(straight_runs, tmp_path, monkeypatch):
    """Known fake secrets in the environment of a run logging to TensorBoard and W&B (offline; the never-stopped
    run of the signal tests, in its own processes), then of an export (in this one): not one of them in any file
    written, nor in what the processes print (the run's in its log)."""
    run = straight_runs(1)
    for var, secret in SECRETS.items():
        monkeypatch.setenv(var, secret)
    exported = script_in_process(export_main, str(run), str(tmp_path / "exported"))
    assert exported.returncode == 0, exported.stderr[-2000:]
    written = [p for folder in (run.parent, tmp_path) for p in folder.rglob("*") if p.is_file()]
    assert any("wandb" in p.parts or p.name.endswith(".wandb") for p in written)  # W&B did write its files
    assert any("events.out.tfevents" in p.name for p in written)
    assert (run.parent / f"{run.name}.log") in written
    for secret in SECRETS.values():
        assert secret not in exported.stdout and secret not in exported.stderr
        leaks = [p for p in written if secret.encode() in p.read_bytes()]
        assert not leaks, leaks


def test_secrets_are_not_accepted_as_flags():
    for flag in ("--wandb_api_key", "--hub_token", "--token"):
        with pytest.raises(UserError, match=f"unknown key '{flag[2:]}'") as err:
            parse_config([flag, SECRETS["HF_TOKEN"]])
        assert SECRETS["HF_TOKEN"] not in str(err.value)  # not even echoed back


def train_with_nan_from(update: int, *args: str):
    """A run whose training loss is NaN in every update from ``update`` on (counted in micro-batches, one per update
    without accumulation): the trainer's loss function wrapped for this run only."""
    loss_sum, calls = mtkit.train.trainer.token_loss_sum, 0

    def poisoned(model, batch, label_smoothing, teacher=None):
        nonlocal calls
        calls += 1
        loss = loss_sum(model, batch, label_smoothing, teacher)
        return loss * float("nan") if calls >= update else loss

    mtkit.train.trainer.token_loss_sum = poisoned
    try:
        return train_in_process(*args)
    finally:
        mtkit.train.trainer.token_loss_sum = loss_sum


def test_non_finite_updates_are_skipped_then_stop_the_run(multi30k_small, tmp_path):
    """NaN in the loss from update 3 on: those updates change nothing (the weights stay those of update 2,
    bit for bit) and are counted; with --max_nonfinite_updates 3 the run stops at the third with exit status 3,
    one line, and finite checkpoints."""
    args = ["--data_dir", str(multi30k_small), *SMALL, "--save_steps", "2", "--logging_steps", "1"]
    skipped, stopped = tmp_path / "skipped", tmp_path / "stopped"
    res = train_with_nan_from(3, *args, "--max_steps", "6", "--eval_steps", "6", "--output_dir", str(skipped))
    assert res.returncode == 0, res.stderr[-2000:]
    records = [json.loads(line) for line in (skipped / "metrics.jsonl").read_text().splitlines()]
    counts = {r["step"]: r["nonfinite_updates"] for r in records if "loss" in r}
    assert counts == {1: 0, 2: 0, 3: 1, 4: 2, 5: 3, 6: 4}
    before = load_file(skipped / "checkpoints" / "step-0000002" / "model.safetensors")
    final = load_file(skipped / "final" / "model.safetensors")
    assert all(torch.equal(final[k], as_written(before[k], final[k])) for k in final)

    res = train_with_nan_from(
        3,
        *args,
        "--max_steps",
        "10",
        "--eval_steps",
        "10",
        "--max_nonfinite_updates",
        "3",
        "--output_dir",
        str(stopped),
    )
    assert res.returncode == 3
    assert (
        res.stderr.strip()
        .splitlines()[-1]
        .startswith(
            "error: training diverged: the last 3 updates (to update 5) had a non-finite loss or gradient and were "
            "skipped, so the weights are those from before them; the last checkpoint (step-0000004) is intact."
        )
    )
    kept = load_file(stopped / "checkpoints" / "step-0000004" / "model.safetensors")
    assert all(torch.isfinite(t).all() for t in kept.values()) and not (stopped / "final").exists()
