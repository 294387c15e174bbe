"""cluster/k8s/jobset.yaml and cluster/docker/Dockerfile, checked as far as a machine without Kubernetes or Docker
can: the JobSet's fields, and its pods' own command run for real as two "pods" on this host; the image's install
lines against the project's own install."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
from pathlib import Path

import pytest
import yaml
from testing_utils import BIN, FAST_RUN, OFFLINE_ENV, REPO, free_port, wait_for_port

JOBSET = REPO / "cluster" / "k8s" / "jobset.yaml"
DOCKERFILE = REPO / "cluster" / "docker" / "Dockerfile"


def jobset() -> dict:
    return yaml.safe_load(JOBSET.read_text())


def pod_parts(js: dict) -> tuple[dict, dict, dict]:
    """(the replicated job, its Job spec, its pod spec) of the JobSet's only replicated job."""
    (rjob,) = js["spec"]["replicatedJobs"]
    job = rjob["template"]["spec"]
    return rjob, job, job["template"]["spec"]


def expand_env(entries: list[dict], given: dict[str, str]) -> dict[str, str]:
    """A container's environment as the kubelet builds it: entries in order, ``$(NAME)`` replaced by the value of
    an earlier entry (left as is when undefined), values from fields and secrets taken from ``given``."""
    env: dict[str, str] = {}
    for entry in entries:
        name = entry["name"]
        if "value" in entry:
            env[name] = re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env.get(m[1], m[0]), entry["value"])
        elif name in given:
            env[name] = given[name]
    return env


def test_jobset_has_one_gpu_pod_per_node_and_the_first_pod_as_rendezvous():
    js = jobset()
    assert js["apiVersion"].startswith("jobset.x-k8s.io/") and js["kind"] == "JobSet"
    rjob, job, pod = pod_parts(js)
    (container,) = pod["containers"]
    env = {e["name"]: e for e in container["env"]}
    nodes = int(env["NUM_NODES"]["value"])
    assert rjob["replicas"] == 1 and job["parallelism"] == job["completions"] == nodes >= 2
    assert job["completionMode"] == "Indexed"
    assert js["spec"]["network"]["enableDNSHostnames"] is True
    rank = env["NODE_RANK"]["valueFrom"]["fieldRef"]["fieldPath"]
    assert rank == "metadata.annotations['batch.kubernetes.io/job-completion-index']"
    name = env["JOBSET_NAME"]["valueFrom"]["fieldRef"]["fieldPath"]
    assert name == "metadata.labels['jobset.sigs.k8s.io/jobset-name']"
    # pod 0 of job 0 of the replicated job, under the JobSet's subdomain (its name by default)
    expanded = expand_env(container["env"], {"JOBSET_NAME": js["metadata"]["name"]})
    name = js["metadata"]["name"]
    assert expanded["HEAD_NODE"] == f"{name}-{rjob['name']}-0-0.{name}"
    for kind in ("requests", "limits"):
        resources = container["resources"][kind]
        assert resources["nvidia.com/gpu"] == int(env["GPUS_PER_NODE"]["value"]) == 8
        assert resources["vpc.amazonaws.com/efa"] == 32
    # the W&B key comes from a Secret, never inline
    assert set(env["WANDB_API_KEY"]) == {"name", "valueFrom"} and "secretKeyRef" in env["WANDB_API_KEY"]["valueFrom"]
    assert "WANDB_API_KEY=" not in JOBSET.read_text()
    # a pod told to stop has time for its checkpoint: Kubernetes waits longer than torchrun waits for its workers
    assert pod["terminationGracePeriodSeconds"] > int(env["TORCH_ELASTIC_SHUTDOWN_TIMEOUT"]["value"]) >= 60
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    assert volumes[mounts["/dev/shm"]]["emptyDir"]["medium"] == "Memory"
    shared = [path for path, vol in mounts.items() if "persistentVolumeClaim" in volumes[vol]]
    assert len(shared) == 1
    args = shlex.split(expanded["TRAIN_ARGS"])
    assert args[args.index("--output_dir") + 1].startswith(shared[0] + "/")  # outputs on the shared volume
    assert (REPO / args[args.index("--config") + 1]).is_file()
    assert (REPO / expanded["ACCELERATE_CONFIG"]).is_file()


@pytest.mark.slow  # the Slurm tests start the same launcher as two nodes; this adds the pod's own shell line
def test_jobset_pod_command_trains_two_nodes(multi30k_small, tmp_path):
    """The container's command, with the environment the kubelet would give pods 0 and 1 (the rendezvous name
    pointed at this host, 1 process per node, a tiny run), started twice: the two "pods" must meet and train."""
    js = jobset()
    _, _, pod = pod_parts(js)
    (container,) = pod["containers"]
    assert container["command"] == ["bash", "-c"]
    script = container["args"][0]
    out = tmp_path / "run"
    train_args = [
        "--data_dir", str(multi30k_small), *FAST_RUN, "--output_dir", str(out), "--max_steps", "4",
        "--eval_steps", "4", "--eval_max_samples", "4", "--max_new_tokens", "4", "--test_split", "none",
        "--mixed_precision", "no",
    ]  # fmt: skip
    port = free_port()
    pods = []
    for rank in (0, 1):
        if rank:
            wait_for_port(port)  # pod 0 hosts the rendezvous; a second launcher on this machine must not race it
        env = expand_env(container["env"], {"NODE_RANK": str(rank), "JOBSET_NAME": "test"})
        env.update(HEAD_NODE="127.0.0.1", GPUS_PER_NODE="1", PORT=port, TRAIN_ARGS=shlex.join(train_args))
        env = {**os.environ, **OFFLINE_ENV, **env, "PATH": BIN + os.pathsep + os.environ["PATH"]}
        log = open(tmp_path / f"pod{rank}.log", "w")  # a file, not a pipe: an unread pipe would block a pod
        pods.append(
            subprocess.Popen(
                ["bash", "-c", script],
                cwd=REPO,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                text=True,
                start_new_session=True,
            )  # fmt: skip
        )
    try:
        for p in pods:
            p.wait(timeout=300)
    except subprocess.TimeoutExpired:
        for p in pods:
            os.killpg(p.pid, signal.SIGKILL)
        pytest.fail("the two pods did not finish in 300 s (never met?)")
    logs = [(tmp_path / f"pod{rank}.log").read_text() for rank in (0, 1)]
    assert [p.returncode for p in pods] == [0, 0], logs[0][-3000:] + logs[1][-3000:]
    assert "mtkit: node 1 of 2, rendezvous 127.0.0.1:" in logs[1]
    assert "2 process(es)" in logs[0] and "DEEPSPEED" in logs[0]
    ckpt = out / "checkpoints" / "checkpoint_last"
    assert {"random_states_0.pkl", "random_states_1.pkl"} <= {p.name for p in ckpt.iterdir()}
    assert (out / "final" / "model.safetensors").is_file()


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(instruction, arguments) of each line of the Dockerfile, continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in lines]


def pip_installs(command: str) -> list[list[str]]:
    """The arguments of each ``pip install`` in a shell command line (options like ``-q`` dropped)."""
    found = []
    for part in re.split(r"&&|;|\n", command):
        words = shlex.split(part.replace("$(VENV)/bin/", ""))
        if words[:2] == ["pip", "install"]:
            found.append([w for w in words[2:] if w not in ("-q", "--upgrade")])
    return found


def test_image_installs_the_project_as_the_makefile_does():
    steps = dockerfile_instructions()
    assert steps[0][0] in ("ARG", "FROM")
    base = dict(s[1].split("=", 1) for s in steps if s[0] == "ARG" and "=" in s[1])["CUDA_IMAGE"]
    assert base.startswith("nvidia/cuda:") and "-devel-" in base  # nvcc for DeepSpeed's ops
    runs = " && ".join(arg for kind, arg in steps if kind == "RUN")
    assert "efa_installer.sh" in runs and "--skip-kmod" in runs and "libnccl-net" in runs  # EFA + aws-ofi-nccl
    image = [args for args in pip_installs(runs) if args != ["pip"]]
    recipe = Path(REPO / "Makefile").read_text().split("$(STAMP):", 1)[1].split("\n\n", 1)[0]
    make = [args for args in pip_installs(recipe) if args != ["pip"]]
    # the Makefile installs requirements-dev.txt, which is requirements.txt plus the test tools
    assert make == [["-r", "requirements-dev.txt"], ["--no-deps", "-e", "."]]
    assert "-r requirements.txt" in (REPO / "requirements-dev.txt").read_text().splitlines()
    assert image == [["-r", "requirements.txt"], ["--no-deps", "-e", "."]]
    copied = [arg.split()[0] for kind, arg in steps if kind == "COPY"]
    assert copied[0] == "requirements.txt"  # the requirements layer does not change with the code


def test_dockerignore_keeps_local_state_out_of_the_image():
    ignored = {line.strip() for line in (REPO / ".dockerignore").read_text().splitlines() if line and line[0] != "#"}
    assert {".git", ".venv", "runs", "wandb"} <= ignored
    # and nothing the image needs is ignored
    for needed in ("mtkit", "scripts", "recipes", "accelerate_configs", "ds_configs", "cluster", "pyproject.toml"):
        assert needed not in ignored and (REPO / needed).exists()
