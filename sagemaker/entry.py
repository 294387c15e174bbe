"""SageMaker training-job entry point: ``scripts/train.py`` under accelerate, inside a job started by
``sagemaker/launch.py`` (the PyTorch estimator with ``distribution={"torch_distributed": {"enabled": True}}``).

SageMaker runs this file under torchrun on every host, one process per GPU, with the torchrun variables (RANK,
LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT) and its own (SM_HOSTS, SM_CURRENT_HOST, SM_NUM_GPUS,
SM_CHANNEL_<NAME>, SM_MODEL_DIR) set. The processes are already started, so no second launcher may run here:
each process computes what ``accelerate launch --config_file <yaml>`` would give it (the ACCELERATE_*, DeepSpeed
and FSDP variables) with accelerate's own launcher code, from the YAML plus ``--num_machines/--machine_rank/
--num_processes/--main_process_ip/--main_process_port`` derived from SageMaker's environment, sets them, then runs
``scripts/train.py`` in the same process.

Own flags: ``--accelerate_config`` (relative to the source dir) and ``--recipe`` (train.py's ``--config``); every
other argument (the job's hyperparameters) goes to train.py. Each input channel feeds the train.py flag of its name
(channel ``mtgeneval_dir`` -> ``--mtgeneval_dir $SM_CHANNEL_MTGENEVAL_DIR``). ``--output_dir`` defaults to
SageMaker's checkpoint folder, synced with ``checkpoint_s3_uri``, so a restarted job resumes; at the end global rank
0 copies the exported model and the run's results (not the checkpoints) into ``SM_MODEL_DIR``.
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: the folder holding scripts/train.py: this file's own in the uploaded source dir, the repository root in a checkout
SOURCE_DIR = HERE if (HERE / "scripts" / "train.py").is_file() else HERE.parent
if str(SOURCE_DIR) not in sys.path:
    sys.path.insert(0, str(SOURCE_DIR))  # mtkit and bias_eval are not installed in the container, only shipped

from mtkit.errors import UserError  # noqa: E402
from mtkit.processes import is_local_main_process, is_main_process  # noqa: E402

TRAIN_SCRIPT = "scripts/train.py"
DEFAULT_ACCELERATE_CONFIG = "accelerate_configs/deepspeed_zero3.yaml"
#: SageMaker's default checkpoint_local_path (synced with checkpoint_s3_uri); the variable points it elsewhere in tests
CHECKPOINT_DIR_VAR = "MTKIT_SM_CHECKPOINT_DIR"
DEFAULT_CHECKPOINT_DIR = "/opt/ml/checkpoints"
#: torchrun's default port: what SageMaker's single-host torchrun command uses (it passes 7777 for several hosts)
DEFAULT_PORT = 29500
#: the train.py flags an input channel may feed: channel NAME -> --NAME /opt/ml/input/data/NAME
CHANNEL_FLAGS = (
    "data_dir",
    "mtgeneval_dir",
    "model_name_or_path",
    "tokenizer_name",
    "train_file",
    "validation_file",
    "test_file",
    "output_dir",  # a shared file system (FSx for Lustre) for runs on several hosts
)
#: flags that take one file: their channel folder must hold exactly one
FILE_FLAGS = ("train_file", "validation_file", "test_file")
#: what goes into SM_MODEL_DIR (uploaded as model.tar.gz), when present
OUTPUTS = ("final", "final_ct2", "bias_report", "results.json", "metrics.jsonl", "curves.png", "config.yaml")
#: set by torchrun for each process: never changed here
TORCHRUN_VARS = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR", "MASTER_PORT")


@dataclass(frozen=True)
class LaunchArgs:
    """The ``accelerate launch`` flags that describe this job's processes."""

    num_machines: int
    machine_rank: int
    num_processes: int
    main_process_ip: str
    main_process_port: int

    def flags(self) -> list[str]:
        return [
            "--num_machines", str(self.num_machines), "--machine_rank", str(self.machine_rank),
            "--num_processes", str(self.num_processes), "--main_process_ip", self.main_process_ip,
            "--main_process_port", str(self.main_process_port),
        ]  # fmt: skip


def _required(env: Mapping[str, str], name: str) -> str:
    value = env.get(name)
    if not value:
        raise UserError(f"{name}: not set (this script runs inside a SageMaker training job; see sagemaker/README.md)")
    return value


def _whole(env: Mapping[str, str], name: str, default: int | None = None) -> int:
    if name not in env and default is not None:
        return default
    value = _required(env, name)
    try:
        number = int(value)
    except ValueError:
        number = -1
    if number < 0:
        raise UserError(f"{name}: expected a whole number >= 0, got {value!r}")
    return number


def launch_args(env: Mapping[str, str]) -> LaunchArgs:
    """The launch flags from SageMaker's environment: one machine per host in ``SM_HOSTS``, this one's rank its index
    there, the first host the main process, one process per GPU (one on a CPU instance, as SageMaker starts)."""
    raw = _required(env, "SM_HOSTS")
    try:
        hosts = json.loads(raw)
    except ValueError:
        hosts = None
    if not isinstance(hosts, list) or not hosts or not all(isinstance(h, str) and h for h in hosts):
        raise UserError(f"SM_HOSTS: expected a JSON list of host names, got {raw!r}")
    current = _required(env, "SM_CURRENT_HOST")
    if current not in hosts:
        raise UserError(f"SM_CURRENT_HOST: {current!r} is not one of SM_HOSTS {hosts}")
    gpus = _whole(env, "SM_NUM_GPUS")
    total = len(hosts) * max(gpus, 1)
    world = _whole(env, "WORLD_SIZE", default=1)
    if world != total:
        raise UserError(
            f"WORLD_SIZE: {world} process(es) started, but SM_HOSTS and SM_NUM_GPUS make {total} "
            f"({len(hosts)} host(s) x {max(gpus, 1)}); start the job with distribution torch_distributed"
        )
    port = _whole(env, "MASTER_PORT", default=DEFAULT_PORT)
    return LaunchArgs(len(hosts), hosts.index(current), total, hosts[0], port)


def channel_paths(env: Mapping[str, str]) -> dict[str, str]:
    """``{train.py flag: folder}`` of each input channel (``SM_CHANNEL_<NAME>``), named after the flag it feeds."""
    paths = {}
    for key in sorted(env):
        if key.startswith("SM_CHANNEL_"):
            name = key[len("SM_CHANNEL_") :].lower()
            if name not in CHANNEL_FLAGS:
                flags = ", ".join(CHANNEL_FLAGS)
                raise UserError(f"{key}: channel {name!r} feeds no train.py flag; name it after one of {flags}")
            paths[name] = env[key]
    return paths


def _single_file(flag: str, folder: str) -> str:
    files = sorted(p for p in Path(folder).iterdir() if p.is_file()) if Path(folder).is_dir() else []
    if len(files) != 1:
        raise UserError(f"SM_CHANNEL_{flag.upper()}: {folder} must hold one file for --{flag}, has {len(files)}")
    return str(files[0])


def _given(args: Sequence[str]) -> set[str]:
    return {token[2:].split("=", 1)[0] for token in args if token.startswith("--")}


def train_argv(recipe: str | None, channels: Mapping[str, str], rest: Sequence[str], checkpoint_dir: str) -> list[str]:
    """train.py's arguments: the recipe, one flag per channel, ``--output_dir`` (the checkpoint folder unless given),
    then the hyperparameters."""
    given = _given(rest)
    argv = ["--config", recipe] if recipe else []
    for flag, folder in channels.items():
        if flag in given:
            raise UserError(f"--{flag}: given both as a hyperparameter and as input channel SM_CHANNEL_{flag.upper()}")
        argv += [f"--{flag}", _single_file(flag, folder) if flag in FILE_FLAGS else folder]
    if "output_dir" not in given and "output_dir" not in channels:
        argv += ["--output_dir", checkpoint_dir]
    return argv + list(rest)


def accelerate_env(config_file: str, launch: LaunchArgs) -> dict[str, str]:
    """The variables ``accelerate launch --config_file X <launch flags>`` adds to (or changes in) this process's
    environment for its workers, computed by accelerate's launcher functions, dispatched as ``launch_command`` does."""
    from unittest import mock

    from accelerate.commands import launch as command
    from accelerate.commands.config.config_args import ComputeEnvironment
    from accelerate.utils import check_cuda_p2p_ib_support
    from accelerate.utils import launch as prepare

    if not Path(config_file).is_file():
        raise UserError(f"--accelerate_config {config_file}: file not found in {Path.cwd()}")
    args = command.launch_command_parser().parse_args(["--config_file", config_file, *launch.flags(), TRAIN_SCRIPT])
    # torchrun already listens on MASTER_PORT: accelerate's "port in use" check guards a launcher that is not started
    with mock.patch.object(prepare, "is_port_in_use", return_value=False):
        try:
            args, defaults, mp_from_config = command._validate_launch_command(args)
            if args.use_deepspeed and not args.cpu:
                fields = list(defaults.deepspeed_config) if defaults else []
                if mp_from_config:
                    fields.append("mixed_precision")
                args.deepspeed_fields_from_accelerate_config = ",".join(fields)
                env = prepare.prepare_deepspeed_cmd_env(args)[1]
            elif (args.use_fsdp or args.use_megatron_lm or args.multi_gpu) and not args.cpu:
                env = prepare.prepare_multi_gpu_env(args)
            elif args.tpu or (defaults and defaults.compute_environment == ComputeEnvironment.AMAZON_SAGEMAKER):
                raise UserError(f"--accelerate_config {config_file}: TPU and accelerate's SageMaker mode do not apply")
            elif launch.num_processes > 1:
                raise UserError(
                    f"--accelerate_config {config_file}: a one-process config, but the job has {launch.num_processes} "
                    "processes; pick multi_gpu, deepspeed_* or fsdp"
                )
            else:
                env = prepare.prepare_simple_launcher_cmd_env(args)[1]
        except (ValueError, AssertionError, KeyError) as err:
            raise UserError(f"--accelerate_config {config_file}: {err}") from None
    torchrun = args.use_deepspeed or args.use_fsdp or args.use_megatron_lm or args.multi_gpu
    if torchrun and not check_cuda_p2p_ib_support():
        env.setdefault("NCCL_P2P_DISABLE", "1")  # as accelerate's launchers do on consumer GPUs
        env.setdefault("NCCL_IB_DISABLE", "1")
    return {k: v for k, v in env.items() if os.environ.get(k) != v and not (k in TORCHRUN_VARS and k in os.environ)}


@dataclass
class Plan:
    """Everything this process does, decided before any training starts."""

    env: dict[str, str]
    argv: list[str]
    output_dir: Path
    model_dir: Path
    is_global_main: bool


def _own_args(argv: Sequence[str]) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(prog="entry.py", add_help=False, allow_abbrev=False)
    parser.add_argument("--accelerate_config", default=DEFAULT_ACCELERATE_CONFIG)
    parser.add_argument("--recipe", default=None)
    own, rest = parser.parse_known_args(list(argv))
    return own, rest


def plan(argv: Sequence[str], env: Mapping[str, str]) -> Plan:
    """Check SageMaker's environment and the arguments; work out train.py's arguments and accelerate's variables."""
    own, rest = _own_args(argv)
    launch = launch_args(env)
    model_dir = Path(_required(env, "SM_MODEL_DIR"))
    channels = channel_paths(env)
    checkpoint_dir = Path(env.get(CHECKPOINT_DIR_VAR) or DEFAULT_CHECKPOINT_DIR).absolute()
    os.chdir(SOURCE_DIR)  # SageMaker's working directory: the launcher YAMLs name ds_configs/ relative to it
    if own.recipe and not Path(own.recipe).is_file():
        raise UserError(f"--recipe {own.recipe}: file not found in {SOURCE_DIR}")
    args = train_argv(own.recipe, channels, rest, str(checkpoint_dir))

    from mtkit.config import parse_config

    output_dir = Path(parse_config(args).train.output_dir).absolute()  # the same checks train.py makes, up front
    if launch.num_machines > 1 and output_dir.is_relative_to(checkpoint_dir):
        raise UserError(
            f"--output_dir {output_dir}: local to each of the {launch.num_machines} hosts, but every process must "
            "write checkpoints into one folder; mount a shared file system as channel output_dir (launch.py "
            "--channel output_dir=fsx://...) or pass --output_dir on one"
        )
    accelerate = accelerate_env(own.accelerate_config, launch)
    return Plan(accelerate, args, output_dir, model_dir, is_main_process(env))


def copy_outputs(output_dir: Path, model_dir: Path) -> list[str]:
    """Copy the run's model and results (``OUTPUTS``, whichever exist) from ``output_dir`` into ``model_dir``."""
    model_dir.mkdir(parents=True, exist_ok=True)
    copied = []
    for name in OUTPUTS:
        source = output_dir / name
        if source.is_dir():
            shutil.copytree(source, model_dir / name, dirs_exist_ok=True)
        elif source.is_file():
            shutil.copy2(source, model_dir / name)
        else:
            continue
        copied.append(name)
    return copied


def main(argv: Sequence[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    try:
        job = plan(argv, os.environ)
    except UserError as err:
        if is_local_main_process():  # once per host, not once per GPU
            print(f"error: {err}", file=sys.stderr)
        sys.exit(2)
    os.environ.update(job.env)
    if "OMP_NUM_THREADS" in job.env:  # read by torch at start-up: apply it as a fresh process would
        import torch

        torch.set_num_threads(int(job.env["OMP_NUM_THREADS"]))
    script = SOURCE_DIR / TRAIN_SCRIPT
    sys.argv = [str(script), *job.argv]
    runpy.run_path(str(script), run_name="__main__")  # exits non-zero on failure or when stopped by a signal
    if job.is_global_main:
        copied = copy_outputs(job.output_dir, job.model_dir)
        print(f"mtkit: copied {', '.join(copied) or 'nothing'} from {job.output_dir} to {job.model_dir}", flush=True)


if __name__ == "__main__":
    from mtkit.allocator import start_on_tcmalloc

    start_on_tcmalloc()  # this program, not the train.py it runs inside itself, is what starts again on tcmalloc
    main()
