"""sagemaker/: the entry script run for real under torchrun with a simulated SageMaker environment (it must train
exactly as `accelerate launch` does), its environment mapping, its errors, and launch.py's dry run."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import subprocess
import sys

import pytest
import yaml
from testing_utils import DDP_RUN, REPO, free_port, launch, run_script

from mtkit.config import FIELDS

ENTRY = REPO / "sagemaker" / "entry.py"
LAUNCH = REPO / "sagemaker" / "launch.py"


def load_entry():
    """sagemaker/entry.py as a module (its folder is no package: it must not shadow the SageMaker SDK)."""
    if "mtkit_sagemaker_entry" not in sys.modules:
        spec = importlib.util.spec_from_file_location("mtkit_sagemaker_entry", ENTRY)
        sys.modules[spec.name] = module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return sys.modules["mtkit_sagemaker_entry"]


def sm_env(hosts: list[str], current: str, gpus: int, **extra: str) -> dict[str, str]:
    """What SageMaker and its torchrun set in one process of a job on ``hosts``."""
    return {
        "SM_HOSTS": json.dumps(hosts), "SM_CURRENT_HOST": current, "SM_NUM_GPUS": str(gpus),
        "WORLD_SIZE": str(len(hosts) * max(gpus, 1)), **extra,
    }  # fmt: skip


def as_hyperparameters(args: list[str]) -> dict[str, object]:
    """``--key value`` / bare ``--flag`` arguments as the estimator's hyperparameters dict."""
    out: dict[str, object] = {}
    i = 0
    while i < len(args):
        key, value = args[i][2:], True
        if i + 1 < len(args) and not args[i + 1].startswith("--"):
            value, i = args[i + 1], i + 1
        out[key] = value
        i += 1
    return out


def to_cmd_args(hyperparameters: dict[str, object]) -> list[str]:
    """The entry point's arguments as SageMaker's training toolkit makes them: sorted keys, ``str`` values."""
    return [token for key in sorted(hyperparameters) for token in (f"--{key}", str(hyperparameters[key]))]


# --- the pure mapping --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "hosts, current, gpus, port, expected",
    [
        (["algo-1"], "algo-1", 8, None, (1, 0, 8, "algo-1", 29500)),
        (["algo-1", "algo-2"], "algo-2", 8, "7777", (2, 1, 16, "algo-1", 7777)),
        (["algo-1", "algo-2"], "algo-1", 8, "7777", (2, 0, 16, "algo-1", 7777)),
        (["algo-1", "algo-2", "algo-3"], "algo-3", 0, "7777", (3, 2, 3, "algo-1", 7777)),  # CPU: 1 per host
    ],
)
def test_launch_args_from_sagemaker_env(hosts, current, gpus, port, expected):
    env = sm_env(hosts, current, gpus, **({"MASTER_PORT": port} if port else {}))
    args = load_entry().launch_args(env)
    got = (args.num_machines, args.machine_rank, args.num_processes, args.main_process_ip, args.main_process_port)
    assert got == expected
    assert args.flags()[args.flags().index("--num_processes") + 1] == env["WORLD_SIZE"]


@pytest.mark.parametrize(
    "change, variable",
    [
        ({"SM_HOSTS": None}, "SM_HOSTS"),
        ({"SM_HOSTS": "algo-1"}, "SM_HOSTS"),
        ({"SM_HOSTS": "[]"}, "SM_HOSTS"),
        ({"SM_CURRENT_HOST": "algo-9"}, "SM_CURRENT_HOST"),
        ({"SM_NUM_GPUS": "eight"}, "SM_NUM_GPUS"),
        ({"WORLD_SIZE": "8"}, "WORLD_SIZE"),  # 2 hosts x 8 GPUs need 16 processes
        ({"MASTER_PORT": "-1"}, "MASTER_PORT"),
    ],
)
def test_launch_args_name_the_bad_variable(change, variable):
    entry = load_entry()
    env = {k: v for k, v in {**sm_env(["algo-1", "algo-2"], "algo-1", 8), **change}.items() if v is not None}
    with pytest.raises(entry.UserError, match=f"^{variable}: "):
        entry.launch_args(env)


def test_channels_feed_the_train_flags_of_their_names(tmp_path):
    entry = load_entry()
    assert set(entry.CHANNEL_FLAGS) <= set(FIELDS)  # each names a real train.py flag
    (tmp_path / "train").mkdir()
    (tmp_path / "train" / "pairs.jsonl").write_text("{}\n")
    env = {
        "SM_CHANNELS": '["data_dir","train_file"]', "SM_CHANNEL_DATA_DIR": "/opt/ml/input/data/data_dir",
        "SM_CHANNEL_TRAIN_FILE": str(tmp_path / "train"), "SM_MODEL_DIR": "/opt/ml/model",
    }  # fmt: skip
    channels = entry.channel_paths(env)
    assert channels == {"data_dir": env["SM_CHANNEL_DATA_DIR"], "train_file": env["SM_CHANNEL_TRAIN_FILE"]}
    argv = entry.train_argv("recipes/demo.yaml", channels, ["--max_steps", "5"], "/ckpt")
    assert argv == [
        "--config", "recipes/demo.yaml", "--data_dir", env["SM_CHANNEL_DATA_DIR"],
        "--train_file", str(tmp_path / "train" / "pairs.jsonl"), "--output_dir", "/ckpt", "--max_steps", "5",
    ]  # fmt: skip
    assert "/ckpt" not in entry.train_argv(None, {}, ["--output_dir", "/fsx/run"], "/ckpt")
    with pytest.raises(entry.UserError, match="^--data_dir: given both"):
        entry.train_argv(None, {"data_dir": "/a"}, ["--data_dir", "/b"], "/ckpt")
    with pytest.raises(entry.UserError, match="^SM_CHANNEL_MTGENEVAL: "):
        entry.channel_paths({"SM_CHANNEL_MTGENEVAL": "/opt/ml/input/data/mtgeneval"})


@pytest.mark.parametrize("launcher", ["deepspeed_zero3", "fsdp"])
def test_accelerate_env_is_what_accelerate_launch_gives_its_workers(tmp_path, monkeypatch, launcher):
    """A real `accelerate launch` of a script that records its environment, against the entry's computation from
    the same YAML and launch flags: every variable the entry sets, and every ACCELERATE_*/FSDP_* one, agree."""
    dump, seen = tmp_path / "dump_env.py", tmp_path / "env.json"
    dump.write_text(
        "import json, os, sys\nif os.environ['RANK'] == '0':\n    json.dump(dict(os.environ), open(sys.argv[1], 'w'))\n"
    )
    port = free_port()
    config = f"accelerate_configs/{launcher}.yaml"
    flags = ["--num_machines", "1", "--machine_rank", "0", "--num_processes", "2", "--main_process_ip", "127.0.0.1",
             "--main_process_port", port]  # fmt: skip
    res = run_script("-", "accelerate", "launch", "--config_file", config, *flags, str(dump), str(seen), timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    worker = json.loads(seen.read_text())
    entry = load_entry()
    monkeypatch.chdir(REPO)
    ours = entry.accelerate_env(config, entry.LaunchArgs(1, 0, 2, "127.0.0.1", int(port)))
    assert ours and {k: worker.get(k) for k in ours} == ours
    assert {k for k in worker if k.startswith(("ACCELERATE_", "FSDP_"))} <= set(ours)
    assert ours[{"deepspeed_zero3": "ACCELERATE_USE_DEEPSPEED", "fsdp": "ACCELERATE_USE_FSDP"}[launcher]] == "true"


# --- the entry script, for real ----------------------------------------------------------------------------------

RUN = DDP_RUN  # the flags of the shared 2-process run (tests/conftest.py: ddp_run)


@pytest.mark.parametrize(
    "launcher",
    [
        # slow: a third 2-process launch of the default tier's DDP run; the default tier keeps the entry's environment
        # checks against accelerate's (test_accelerate_env_is_what_accelerate_launch_gives_its_workers)
        pytest.param("cpu_ddp", marks=pytest.mark.slow),
        # the p5 default: the mapping's DeepSpeed variables decide how the model is built, sharded and saved
        pytest.param("deepspeed_zero3", marks=pytest.mark.slow),
    ],
)
def test_entry_under_torchrun_trains_exactly_as_accelerate_launch(multi30k_small, tmp_path, launcher, request):
    """SageMaker's way (torchrun starts the entry script on 2 "GPUs", the entry sets accelerate's variables and runs
    train.py in-process) against `accelerate launch` of the same flags: the same weights, tensor for tensor. For
    cpu_ddp, that launch is the suite's shared 2-process run (tests/conftest.py: ddp_run)."""
    from safetensors.torch import load_file
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    config = f"accelerate_configs/{launcher}.yaml"
    if launcher == "cpu_ddp":
        base = request.getfixturevalue("ddp_run")
    else:
        base = tmp_path / "accelerate_launch"
        res = launch(launcher, "--data_dir", str(multi30k_small), *RUN, "--output_dir", str(base))
        assert res.returncode == 0, res.stderr[-3000:]

    model_dir, checkpoints = tmp_path / "opt_ml" / "model", tmp_path / "opt_ml" / "checkpoints"
    model_dir.mkdir(parents=True)
    hyperparameters = {"accelerate_config": config, **as_hyperparameters(RUN)}
    env = {
        **sm_env(["algo-1"], "algo-1", 2), "SM_CHANNELS": '["data_dir"]', "SM_CHANNEL_DATA_DIR": str(multi30k_small),
        "SM_MODEL_DIR": str(model_dir), "SM_OUTPUT_DATA_DIR": str(tmp_path / "opt_ml" / "output" / "data"),
        "SM_HPS": json.dumps(hyperparameters), "MTKIT_SM_CHECKPOINT_DIR": str(checkpoints),
    }  # fmt: skip
    del env["WORLD_SIZE"]  # torchrun sets it
    res = run_script(
        "-", "torchrun", "--nproc_per_node", "2", "--master_port", free_port(), str(ENTRY),
        *to_cmd_args(hyperparameters), env=env, cwd=tmp_path,
    )  # fmt: skip
    log = res.stdout + res.stderr
    assert res.returncode == 0, log[-4000:]
    assert "2 process(es)" in log  # one job over both torchrun processes, not two independent runs
    assert ("DEEPSPEED" in log) == launcher.startswith("deepspeed")  # the YAML's strategy, set by the entry
    assert "mtkit: copied final, results.json, metrics.jsonl, curves.png, config.yaml" in log

    # the model dir: the exported model and the results, not the checkpoints (those stay, for a restart)
    assert sorted(p.name for p in model_dir.iterdir()) == [
        "config.yaml", "curves.png", "final", "metrics.jsonl", "results.json",
    ]  # fmt: skip
    assert (checkpoints / "checkpoints" / "step-0000004" / "manifest.json").is_file()
    model = AutoModelForSeq2SeqLM.from_pretrained(model_dir / "final")
    tokenizer = AutoTokenizer.from_pretrained(model_dir / "final")
    assert model.generate(**tokenizer(["A man rides a bike."], return_tensors="pt"), max_new_tokens=4).shape[0] == 1
    assert json.loads((model_dir / "results.json").read_text())["step"] == 4
    config = yaml.safe_load((model_dir / "config.yaml").read_text())
    assert config["data"]["data_dir"] == str(multi30k_small)  # from the channel
    assert config["train"]["output_dir"] == str(checkpoints)
    assert (model_dir / "metrics.jsonl").read_text().strip()

    ours, theirs = load_file(model_dir / "final" / "model.safetensors"), load_file(base / "final" / "model.safetensors")
    assert ours.keys() == theirs.keys()
    assert [k for k in ours if not (ours[k] == theirs[k]).all()] == [], "weights differ from accelerate launch's"


@pytest.mark.parametrize(
    "change, named",
    [
        ({"SM_HOSTS": None}, "SM_HOSTS"),
        ({"SM_HOSTS": "algo-1"}, "SM_HOSTS"),
        ({"SM_CURRENT_HOST": "algo-7"}, "SM_CURRENT_HOST"),
        ({"SM_NUM_GPUS": "8"}, "WORLD_SIZE"),  # started without torchrun: 1 process for 8 GPUs
        ({"SM_MODEL_DIR": None}, "SM_MODEL_DIR"),
        ({"SM_CHANNEL_MTGENEVAL": "/data"}, "SM_CHANNEL_MTGENEVAL"),
        # two hosts writing checkpoints into their own local folders: refused before training
        ({"SM_HOSTS": '["algo-1", "algo-2"]', "WORLD_SIZE": "2", "RANK": "0"}, "--output_dir"),
    ],
)
def test_bad_sagemaker_env_is_one_error_line(multi30k_small, tmp_path, change, named):
    model_dir, checkpoints = tmp_path / "model", tmp_path / "checkpoints"
    model_dir.mkdir()
    env = {
        **sm_env(["algo-1"], "algo-1", 1), "SM_CHANNEL_DATA_DIR": str(multi30k_small), "SM_MODEL_DIR": str(model_dir),
        "MTKIT_SM_CHECKPOINT_DIR": str(checkpoints), **change,
    }  # fmt: skip
    env = {k: v for k, v in env.items() if v is not None and (k != "WORLD_SIZE" or k in change)}  # no torchrun
    res = run_script("-", sys.executable, str(ENTRY), *RUN, env=env, cwd=tmp_path, timeout=120)
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {named}"), res.stderr[-2000:]
    assert list(model_dir.iterdir()) == [] and not checkpoints.exists()


# --- launch.py ---------------------------------------------------------------------------------------------------


def test_launch_dry_run_prints_the_estimator_and_stages_tracked_files(tmp_path):
    staging = tmp_path / "source"
    res = run_script(
        "-", sys.executable, str(LAUNCH), "--dry_run", "--staging_dir", str(staging), "--recipe",
        "recipes/flan_t5_xl_mtgeneval_p5_multinode.yaml", "--instance_count", "2", "--role", "arn:aws:iam::1:role/sm",
        "--channel", "mtgeneval_dir=s3://bucket/mt-geneval", "--channel", "output_dir=fsx://fs-0abc/fsx/runs/x",
        "--subnet", "subnet-1", "--security_group_id", "sg-1", "--hyperparameter", "max_steps=10",
        "--hyperparameter", "learning_rate=1e-4", "--spot", "--checkpoint_s3_uri", "s3://bucket/ckpt",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    job = json.loads(res.stdout)
    est = job["estimator"]
    assert est["distribution"] == {"torch_distributed": {"enabled": True}}
    assert (est["instance_type"], est["instance_count"], est["entry_point"]) == ("ml.p5.48xlarge", 2, "entry.py")
    assert est["hyperparameters"] == {
        "accelerate_config": "accelerate_configs/deepspeed_zero3.yaml", "max_steps": "10", "learning_rate": "1e-4",
        "recipe": "recipes/flan_t5_xl_mtgeneval_p5_multinode.yaml",
    }  # fmt: skip
    assert est["use_spot_instances"] and est["max_wait"] >= est["max_run"]
    assert est["checkpoint_local_path"] == "/opt/ml/checkpoints" and est["source_dir"] == str(staging)
    assert job["inputs"]["mtgeneval_dir"] == "s3://bucket/mt-geneval"
    assert job["inputs"]["output_dir"]["file_system_id"] == "fs-0abc"

    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout.decode()
    tracked = {n for n in listed.split("\0") if n and (REPO / n).is_file()}
    staged = {str(p.relative_to(staging)) for p in staging.rglob("*") if p.is_file()}
    assert staged == tracked | {"entry.py"}
    assert (staging / "entry.py").read_bytes() == ENTRY.read_bytes()
    pins = [line for line in (staging / "requirements.txt").read_text().splitlines() if not line.startswith("#")]
    original = [line for line in (REPO / "requirements.txt").read_text().splitlines() if not line.startswith("#")]
    assert pins == [line for line in original if not line.startswith("torch==")] and len(pins) == len(original) - 1


@pytest.mark.parametrize(
    "flags, named",
    [
        (["--channel", "mtgeneval_dir"], "--channel mtgeneval_dir: expected NAME=URI"),
        (["--channel", "mtgeneval=s3://bucket/x"], "--channel mtgeneval=s3://bucket/x: 'mtgeneval'"),
        (["--channel", "data_dir=/local/folder"], "--channel data_dir=/local/folder: expected s3://"),
        (["--recipe", "recipes/nope.yaml"], "--recipe recipes/nope.yaml: not a tracked file"),
        (["--spot"], "--spot: needs --checkpoint_s3_uri"),
    ],
)
def test_launch_bad_flags_are_one_error_line(tmp_path, flags, named):
    res = run_script("-", sys.executable, str(LAUNCH), "--dry_run", "--staging_dir", str(tmp_path / "s"), *flags)
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.strip().splitlines() == [res.stderr.strip()] and res.stderr.startswith(f"error: {named}")
    assert not (tmp_path / "s").exists()  # checked before anything is staged


def test_launch_without_the_sdk_says_how_to_install_it(tmp_path):
    try:
        importlib.metadata.distribution("sagemaker")
        pytest.skip("the SageMaker SDK is installed here")
    except importlib.metadata.PackageNotFoundError:
        pass
    res = run_script("-", sys.executable, str(LAUNCH), "--staging_dir", str(tmp_path / "s"))
    assert res.returncode == 2 and res.stderr.strip() == (
        'error: the SageMaker Python SDK v2 is not installed: pip install "sagemaker>=2.200,<3"'
    )
