"""Updates that DeepSpeed's overflow check skips, for real: a ZeRO-2 run in fp32 whose learning rate (1e30) makes
the first update blow the weights up to ~1e30, so that every later forward pass overflows and every gradient is
NaN. DeepSpeed then skips each update itself (its fp32 check of the gradient norm, the same path as an fp16 loss
scaler's overflow) and accelerate reports it (``optimizer_step_was_skipped``); the step never advances again.
(The device-side guard of non-finite updates outside DeepSpeed is tested in ``test_faults.py``.)"""

from __future__ import annotations

import json
import os
import signal
import subprocess

import pytest
from testing_utils import BIN, OFFLINE_ENV, REPO, free_port, launch, launch_command, run_script

from mtkit.train.checkpoint import newest_complete

#: one process of ZeRO-2 started as accelerate's launcher starts each worker, so that its exit status is the run's
ZERO2_WORKER = {
    "ACCELERATE_USE_DEEPSPEED": "true",
    "RANK": "0",
    "LOCAL_RANK": "0",
    "WORLD_SIZE": "1",
    "LOCAL_WORLD_SIZE": "1",
    "MASTER_ADDR": "127.0.0.1",
}


def blown_up(data, out, *extra: str) -> list[str]:
    """A run whose first update takes the weights to ~1e30 and whose later updates all have NaN gradients."""
    return [
        "--data_dir", str(data), "--source_lang", "en", "--target_lang", "de", "--validation_split", "val",
        "--test_split", "none", "--model", "transformer-tiny", "--vocab_size", "1000", "--max_tokens", "1024",
        "--max_train_samples", "1500", "--learning_rate", "1e30", "--lr_scheduler_type", "constant",
        "--warmup_steps", "0", "--mixed_precision", "no", "--max_steps", "10", "--save_steps", "1",
        "--eval_steps", "10", "--eval_max_samples", "4", "--max_new_tokens", "4", "--num_beams", "1",
        "--report_to", "none", "--disable_tqdm", "--logging_steps", "1", "--output_dir", str(out), *extra,
    ]  # fmt: skip


def skip_lines(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if "an update skipped by DeepSpeed's overflow check" in line]


def test_updates_deepspeed_keeps_skipping_stop_the_run_with_exit_3(multi30k_small, tmp_path):
    """Update 1 is applied and checkpointed; the next three are skipped, each told in a line, and the third stops
    the run (--max_nonfinite_updates 3) with exit status 3 and one error line; the checkpoint of update 1 is
    intact and nothing after it was written. Before, such a run went on skipping without end."""
    out, config = tmp_path / "run", tmp_path / "zero2_sentences.json"
    # a user's JSON with sentence counts, as copied from elsewhere: with token batches they mean nothing, and such
    # a train_batch_size (not 16 x 1 x 1) used to stop DeepSpeed at its start; now one line says they are not used
    counts = {"train_micro_batch_size_per_gpu": 16, "train_batch_size": 256}
    config.write_text(json.dumps({**json.loads((REPO / "ds_configs" / "zero2.json").read_text()), **counts}))
    env = {**ZERO2_WORKER, "ACCELERATE_DEEPSPEED_CONFIG_FILE": str(config), "MASTER_PORT": free_port()}
    res = run_script("train.py", *blown_up(multi30k_small, out, "--max_nonfinite_updates", "3"), env=env, timeout=300)
    assert res.returncode == 3, res.stderr[-3000:]
    assert f"deepspeed_config_file {config}: train_micro_batch_size_per_gpu 16 and train_batch_size 256 not used" in (
        res.stdout
    )
    errors = [line for line in res.stderr.splitlines() if line.startswith("error:")]
    assert errors == [res.stderr.strip().splitlines()[-1]]
    assert errors[0].startswith(
        "error: training diverged: the last 3 updates after update 1 had non-finite gradients and were skipped by "
        "DeepSpeed's overflow check, so the weights are those of update 1; the last checkpoint (step-0000001) is "
        "intact."
    )
    lines = skip_lines(res.stdout)
    assert [line.split("; ")[1] for line in lines] == [f"{n} in a row, {n} in the run)" for n in (1, 2, 3)]
    assert newest_complete(out / "checkpoints").name == "step-0000001"
    state = json.loads((out / "checkpoints" / "step-0000001" / "trainer_state.json").read_text())
    assert (state["step"], state["skipped_updates"]) == (1, 0)
    assert [r["step"] for r in map(json.loads, (out / "metrics.jsonl").read_text().splitlines())] == [1]
    assert not (out / "final").exists()


@pytest.mark.slow  # the default tier keeps the one-process stop above; this adds SIGTERM and two processes
def test_sigterm_stops_a_run_whose_updates_are_all_skipped_on_every_process(multi30k_small, tmp_path):
    """Two ZeRO-2 processes whose updates are all skipped and never stop on their own (--max_nonfinite_updates 0):
    SIGTERM still ends in a checkpoint of update 1 holding the skipped updates, on both processes together; the
    relaunch resumes it and both stop at the third skip in a row (exit status 3 each, no collective mismatch)."""
    out = tmp_path / "run"
    cmd = launch_command("deepspeed_zero2", *blown_up(multi30k_small, out, "--max_nonfinite_updates", "0"))
    with subprocess.Popen(
        cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
        env={**os.environ, **OFFLINE_ENV, "PATH": BIN + os.pathsep + os.environ["PATH"]},
    ) as proc:  # fmt: skip
        try:
            seen = []
            for line in proc.stdout:
                seen.append(line)
                if "an update skipped by DeepSpeed's overflow check" in line:
                    os.killpg(proc.pid, signal.SIGTERM)
                    break
            seen += proc.stdout.readlines()
            proc.wait(timeout=120)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
    text = "".join(seen)
    assert text.count("mtkit: stopped by SIGTERM after update 1; checkpoint written") == 2, text[-3000:]
    state = json.loads((out / "checkpoints" / "checkpoint_last" / "trainer_state.json").read_text())
    assert state["step"] == 1 and state["skipped_updates"] >= 1

    res = launch("deepspeed_zero2", *blown_up(multi30k_small, out, "--max_nonfinite_updates", "3"), timeout=300)
    assert res.stderr.count("exitcode  : 3") == 1 and "rank      : " in res.stderr, res.stderr[-3000:]
    assert res.stderr.count("error: training diverged: the last 3 updates after update 1") == 2
    assert f"resuming from {out / 'checkpoints' / 'step-0000001'}" in res.stdout
    assert newest_complete(out / "checkpoints").name == "step-0000001"
