"""cluster/slurm/train.sbatch run for real on this machine: stand-in `scontrol` and `srun` make it a two-node
allocation whose "nodes" are two names of this host, so the script's own launch line starts two `accelerate
launch` processes that must find each other (one CPU process per node over gloo)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
from testing_utils import BIN, FAST_RUN, OFFLINE_ENV, REPO, free_port

SBATCH = REPO / "cluster" / "slurm" / "train.sbatch"

#: `scontrol show hostnames LIST`: the allocation's two node names, both this host; refuses any other use.
SCONTROL = """#!/bin/bash
if [[ "$1" == requeue && "$2" == "$SLURM_JOB_ID" ]]; then
    echo "$2" >> "$SCONTROL_REQUEUED"
    exit 0
fi
if [[ "$1 $2" != "show hostnames" || "$3" != "$SLURM_JOB_NODELIST" ]]; then
    echo "scontrol stand-in: unexpected arguments: $*" >&2
    exit 2
fi
printf '%s\\n' localhost 127.0.0.1
"""

#: `srun [--options=...] CMD ARGS...`: CMD once per node (of --nodes=N when given, else of the allocation), all in
#: parallel, each with its own SLURM_NODEID (as real srun sets it in every task); output lines labelled with the
#: task like `srun --label`. As with
#: `--kill-on-bad-exit=1`, the first task to fail ends the others (each task is its own process group). Like real
#: srun, it passes SIGTERM on to every task.
SRUN = """#!/bin/bash
set -m
nodes=$SLURM_NNODES
while [[ "${1:-}" == -* ]]; do
    [[ "$1" == --nodes=* ]] && nodes=${1#--nodes=}
    shift
done
pids=()
trap 'for pid in "${pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null; done' TERM
for ((node = 0; node < nodes; node++)); do
    if (( node > 0 )); then  # one machine plays every node: let node 0 host the rendezvous port first
        for _ in $(seq 600); do (: < "/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.2; done
    fi
    (
        trap '' TERM  # this shell and the output labelling outlive a SIGTERM, as slurmstepd does
        set -o pipefail
        export SLURM_NODEID=$node SLURM_PROCID=$node SLURM_LOCALID=0 SLURM_STEP_NUM_NODES=$SLURM_NNODES
        "$@" 2>&1 | sed -u "s/^/$node: /"
    ) &
    pids+=($!)
done
rc=0
left=${#pids[@]}
while (( left > 0 )); do
    unset done_pid
    wait -n -p done_pid
    code=$?
    [[ -z "${done_pid:-}" ]] && continue  # the trap interrupted wait: no task ended
    left=$((left - 1))
    if (( code != 0 && rc == 0 )); then
        rc=1
        for pid in "${pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null; done
    fi
done
exit $rc
"""


def fake_slurm(bin_dir: Path) -> None:
    bin_dir.mkdir()
    for name, text in (("scontrol", SCONTROL), ("srun", SRUN)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)


def run_sbatch(tmp_path: Path, env: dict, args: list[str], timeout: int = 300) -> subprocess.CompletedProcess:
    """`bash train.sbatch ARGS` in its own process group, killed whole on timeout (a failed rendezvous hangs)."""
    proc = subprocess.Popen(
        ["bash", str(SBATCH), *args],
        cwd=tmp_path,  # the script must cd to $SLURM_SUBMIT_DIR itself, as sbatch runs it from a spool copy
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        pytest.fail(f"train.sbatch did not finish in {timeout} s (nodes never met?):\n{out[-4000:]}")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, "")


def slurm_env(tmp_path: Path, launcher: str, rdzv_backend: str, port: str) -> dict:
    """The environment of a 2-node allocation whose nodes are this host, stand-in Slurm tools first on PATH."""
    fake_slurm(tmp_path / "bin")
    env = {
        **os.environ,
        **OFFLINE_ENV,
        "PATH": os.pathsep.join([str(tmp_path / "bin"), os.environ["PATH"]]),
        "VENV": str(Path(BIN).parent),
        "SLURM_JOB_ID": "4242",
        "SLURM_JOB_NODELIST": "node-[1-2]",
        "SLURM_NNODES": "2",
        "SLURM_NODEID": "0",  # what the batch step itself sees; each task must get its own
        "SLURM_SUBMIT_DIR": str(REPO),
        "SCONTROL_REQUEUED": str(tmp_path / "requeued"),
        "GPUS_PER_NODE": "1",
        "ACCELERATE_CONFIG": f"accelerate_configs/{launcher}.yaml",
        "RDZV_BACKEND": rdzv_backend,
        "PORT": port,
        "LOGLEVEL": "INFO",  # torchrun prints its launch configuration, rendezvous endpoint included
    }
    env.pop("VIRTUAL_ENV", None)
    if launcher == "multi_node":
        env["ACCELERATE_USE_CPU"] = "1"
    return env


@pytest.mark.parametrize(
    "launcher, rdzv_backend",
    [
        # static rendezvous: ranks come from --machine_rank, so this fails if $SLURM_NODEID were expanded on the
        # batch host (0 there: both nodes would claim rank 0 and the second could not host or join the store).
        ("multi_node", "static"),
        # the YAMLs' c10d rendezvous, which must meet at HEAD:PORT (not torchrun's default localhost:29400); slow: on
        # one machine both are this host, and the static variant runs the same script and launch
        pytest.param("multi_node", "", marks=pytest.mark.slow),
        # the p5 default: DeepSpeed ZeRO-3, standard launcher, c10d (slow: the same script and rendezvous)
        pytest.param("multi_node_p5", "", marks=pytest.mark.slow),
    ],
)
def test_train_sbatch_runs_two_nodes(multi30k_small, tmp_path, launcher, rdzv_backend):
    out = tmp_path / "run"
    port = free_port()
    env = slurm_env(tmp_path, launcher, rdzv_backend, port)
    res = run_sbatch(
        tmp_path, env,
        ["--data_dir", str(multi30k_small), *FAST_RUN, "--output_dir", str(out), "--max_steps", "4",
         "--eval_steps", "4", "--eval_max_samples", "4", "--max_new_tokens", "4", "--test_split", "none",
         "--mixed_precision", "no", "--max_train_samples", "80"],
    )  # fmt: skip
    log = res.stdout
    assert res.returncode == 0, log[-4000:]
    assert f"2 nodes (localhost 127.0.0.1), 2 processes, head localhost:{port}" in log
    # each node's launcher met the others at the head node's port (not torchrun's default localhost:29400)
    for node in (0, 1):
        assert re.search(rf"^{node}: .*rdzv_endpoint\s*: localhost:{port}$", log, re.M), log[-4000:]
    assert "2 process(es)" in log
    # the first job step preprocessed once, on one node, and the training processes read what it wrote
    assert len(re.findall(r"^0: preprocessed train 80, validation 64 pairs into ", log, re.M)) == 1, log[-4000:]
    assert not re.search(r"^1: preprocessed", log, re.M) and "tokenizing train" not in log.split("preprocessed")[-1]
    if launcher == "multi_node_p5":
        assert "DEEPSPEED" in log
    ckpt = out / "checkpoints" / "checkpoint_last"
    assert {"random_states_0.pkl", "random_states_1.pkl"} <= {p.name for p in ckpt.iterdir()}
    assert (out / "final" / "model.safetensors").is_file()


# slow (60 s): the default tier stops a two-process run by SIGTERM and resumes it exactly
# (tests/mtkit/train/test_faults.py); this adds the batch script's trap and requeue
@pytest.mark.slow
def test_sigterm_to_the_batch_script_checkpoints_and_requeues(multi30k_small, tmp_path):
    """Slurm's `--signal=B:TERM@300` (or preemption) signals the batch script: it passes SIGTERM to the run, which
    writes a checkpoint and stops, then requeues the job; the requeued job resumes from that checkpoint."""
    out = tmp_path / "run"
    env = slurm_env(tmp_path, "multi_node", "static", free_port())
    args = ["--data_dir", str(multi30k_small), *FAST_RUN, "--output_dir", str(out), "--max_steps", "60",
            "--eval_steps", "60", "--save_steps", "60", "--eval_max_samples", "4", "--max_new_tokens", "4",
            "--test_split", "none", "--mixed_precision", "no"]  # fmt: skip
    log = open(tmp_path / "job.log", "w")
    proc = subprocess.Popen(
        ["bash", str(SBATCH), *args], cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    deadline = time.time() + 300
    while not (out / "metrics.jsonl").is_file() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.2)
    assert proc.poll() is None, (tmp_path / "job.log").read_text()[-3000:]
    proc.send_signal(signal.SIGTERM)  # the batch shell only, as `--signal=B:TERM` does
    try:
        proc.wait(timeout=300)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("the job did not stop after SIGTERM")
    text = (tmp_path / "job.log").read_text()
    assert "stopped by SIGTERM after update" in text and "requeueing job 4242" in text, text[-3000:]
    assert (tmp_path / "requeued").read_text().split() == ["4242"]
    step = json.loads((out / "checkpoints" / "checkpoint_last" / "trainer_state.json").read_text())["step"]
    assert 0 < step < 60 and not (out / "final").exists()
    res = run_sbatch(tmp_path, env, args)  # the requeued job
    assert res.returncode == 0, res.stdout[-3000:]
    assert "resuming from" in res.stdout and (out / "final" / "model.safetensors").is_file()
