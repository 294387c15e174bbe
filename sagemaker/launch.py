"""Start a SageMaker training job that runs ``scripts/train.py`` on ``ml.p5.48xlarge`` x N (or any GPU instance).

Run it from a checkout on a laptop or notebook instance with AWS credentials and the SageMaker Python SDK v2
(``pip install "sagemaker>=2.200,<3"``, imported only when a job is started)::

    python sagemaker/launch.py --recipe recipes/flan_t5_xl_mtgeneval_p5.yaml --role arn:aws:iam::123:role/sm \\
        --channel mtgeneval_dir=s3://bucket/mt-geneval --checkpoint_s3_uri s3://bucket/ckpt/run1 --spot

It stages the repository's tracked files (``git ls-files``) plus ``sagemaker/entry.py`` at the root into a folder
that becomes the job's source dir, and starts the PyTorch estimator with ``torch_distributed``: SageMaker runs
``entry.py`` under torchrun, one process per GPU on every host. ``--dry_run`` prints the estimator's keyword
arguments and the channels as JSON and exits, without the SDK.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, NoReturn

from entry import CHANNEL_FLAGS, DEFAULT_ACCELERATE_CONFIG, DEFAULT_CHECKPOINT_DIR  # this file's folder

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SDK_HINT = 'pip install "sagemaker>=2.200,<3"'
#: Environment of every training process. The p5 notes (cluster/p5/env.sh) need no EFA/NCCL variable with the
#: aws-ofi-nccl >= 1.7 the PyTorch DLCs ship, and SageMaker's torchrun runner already sets FI_PROVIDER=efa and
#: FI_EFA_USE_DEVICE_RDMA=1 on p4d/p5; RDMAV_*, NCCL_MIN_CHANNELS and NCCL_BUFFSIZE stay unset on purpose. Only
#: the NCCL log level is set: `--env NCCL_DEBUG=INFO` shows the transport ("Selected Provider is EFA").
ENVIRONMENT = {"NCCL_DEBUG": "WARN", "TOKENIZERS_PARALLELISM": "false"}
#: The DLC's CUDA build of torch stays: the staged requirements.txt drops the repository's torch pin, which names the
#: CPU wheel of the dev machines; keeping it would make pip replace the DLC's torch (built against the image's CUDA,
#: NCCL and aws-ofi-nccl) with a multi-GB PyPI wheel on every host at every start. transformers 5.x needs torch >= 2.6.
REQUIREMENTS_NOTE = (
    "# Staged by sagemaker/launch.py from requirements.txt without its torch pin: the PyTorch DLC's own CUDA build\n"
    "# of torch (matched to the image's CUDA, NCCL and EFA plugin) stays; pinning it would reinstall torch from PyPI.\n"
)
NEVER_STAGED = ("runs", ".venv")
TORCH_PIN = re.compile(r"torch\s*(\[.*\])?\s*([=<>!~;]|$)", re.IGNORECASE)


class LaunchError(Exception):
    """Bad flags or environment: one ``error:`` line, exit status 2."""


def _fail(message: str) -> NoReturn:
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        _fail(message)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = _Parser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    p.add_argument("--recipe", help="Recipe for train.py (tracked, relative to the repository root).")
    p.add_argument(
        "--accelerate_config",
        default=DEFAULT_ACCELERATE_CONFIG,
        help="accelerate launcher YAML (tracked, relative to the repository root) each process gets the "
        "environment of; the default ZeRO-3 one serves one host or several.",
    )
    p.add_argument("--instance_type", default="ml.p5.48xlarge", help="Training instance type (8x H100 80 GB).")
    p.add_argument("--instance_count", type=int, default=1, help="Number of hosts; one process per GPU on each.")
    p.add_argument("--role", help="IAM role ARN SageMaker assumes (default: the notebook's execution role).")
    p.add_argument(
        "--channel",
        action="append",
        default=[],
        metavar="NAME=URI",
        help="Input channel feeding the train.py flag NAME (one of: " + ", ".join(CHANNEL_FLAGS) + "); "
        "URI s3://bucket/prefix, or fsx://<file-system-id>/<mount-name>[/path] for a shared FSx "
        "for Lustre folder (output_dir=fsx://... is what runs on several hosts need). Repeatable.",
    )
    p.add_argument(
        "--hyperparameter",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="A train.py flag for the job (max_steps=500, learning_rate=1e-4, ...). Repeatable.",
    )
    p.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="Extra environment variable of every process (NCCL_DEBUG=INFO, WANDB_API_KEY=...).",
    )
    p.add_argument("--output_path", help="S3 URI for model.tar.gz (default: the SDK's default bucket).")
    p.add_argument(
        "--checkpoint_s3_uri",
        help=f"S3 URI synced with {DEFAULT_CHECKPOINT_DIR}, the run's --output_dir: a restarted or spot-"
        "interrupted job resumes from it.",
    )
    p.add_argument("--max_run", type=int, default=24 * 3600, help="Seconds the job may run (default 1 day).")
    p.add_argument("--spot", action="store_true", help="Managed spot training (needs --checkpoint_s3_uri).")
    p.add_argument("--max_wait", type=int, help="With --spot: seconds to wait for capacity plus run (default 2x).")
    p.add_argument(
        "--framework_version",
        default="2.8.0",
        help="PyTorch DLC version: 2.8.0 (py312) is the newest the SDK v2 offers with torch_distributed; "
        "its CUDA torch is kept.",
    )
    p.add_argument("--py_version", default="py312", help="Python of the DLC (2.8.0: py312).")
    p.add_argument("--volume_size", type=int, default=512, help="GB of EBS storage (ignored with NVMe, as on p5).")
    p.add_argument("--subnet", action="append", default=[], help="VPC subnet (needed by fsx:// channels).")
    p.add_argument("--security_group_id", action="append", default=[], help="Security group (with --subnet).")
    p.add_argument("--base_job_name", default="mtkit", help="Job name prefix.")
    p.add_argument("--staging_dir", help="Empty folder to stage the source dir in (default: a new temporary one).")
    p.add_argument("--wait", action="store_true", help="Stream the job's logs and wait for it to finish.")
    p.add_argument("--dry_run", action="store_true", help="Print the estimator arguments as JSON; start nothing.")
    return p.parse_args(argv)


def _pairs(values: list[str], flag: str, form: str = "KEY=VALUE") -> dict[str, str]:
    pairs = {}
    for value in values:
        key, sep, rest = value.partition("=")
        if not sep or not key or not rest:
            raise LaunchError(f"--{flag} {value}: expected {form}")
        pairs[key] = rest
    return pairs


def channel_inputs(values: list[str]) -> dict[str, Any]:
    """``{channel: S3 URI or FSx description}`` from ``--channel NAME=URI`` values."""
    inputs: dict[str, Any] = {}
    for name, uri in _pairs(values, "channel", "NAME=URI").items():
        if name not in CHANNEL_FLAGS:
            raise LaunchError(f"--channel {name}={uri}: {name!r} is no train.py path flag (one of {CHANNEL_FLAGS})")
        if uri.startswith("fsx://") and len(uri[6:].split("/")) >= 2 and all(uri[6:].split("/")[:2]):
            fs_id, path = uri[6:].split("/", 1)
            inputs[name] = {
                "file_system_id": fs_id,
                "file_system_type": "FSxLustre",
                "directory_path": "/" + path,
                "file_system_access_mode": "rw",
            }
        elif uri.startswith("s3://") and len(uri) > 5 and name != "output_dir":
            inputs[name] = uri
        else:
            wanted = "fsx://<id>/<mount-name>[/path]" if name == "output_dir" else "s3://bucket/prefix or fsx://..."
            raise LaunchError(f"--channel {name}={uri}: expected {wanted}")
    return inputs


def staged_requirements(text: str) -> str:
    """requirements.txt for the DLC: the same pins less torch's (see REQUIREMENTS_NOTE)."""
    lines = [line.strip() for line in text.splitlines()]
    kept = [line for line in lines if line and not line.startswith("#") and not TORCH_PIN.match(line)]
    return REQUIREMENTS_NOTE + "\n".join(kept) + "\n"


def tracked_files(repo: Path) -> list[str]:
    """The repository's tracked files that exist in the work tree (never under runs/ or .venv)."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=repo, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        raise LaunchError(f"{repo}: not a git checkout (git ls-files failed); run launch.py from one") from None
    names = [n for n in out.decode().split("\0") if n]
    return [n for n in names if n.split("/")[0] not in NEVER_STAGED and (repo / n).is_file()]


def stage_source(repo: Path, staging: Path) -> None:
    """Copy the tracked files, entry.py (at the root) and the DLC's requirements.txt into ``staging``."""
    if staging.exists() and any(staging.iterdir()):
        raise LaunchError(f"--staging_dir {staging}: not empty")
    staging.mkdir(parents=True, exist_ok=True)
    files = tracked_files(repo)
    for name in files:
        (staging / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(repo / name, staging / name)
    shutil.copy2(HERE / "entry.py", staging / "entry.py")
    (staging / "requirements.txt").write_text(staged_requirements((repo / "requirements.txt").read_text()))


def estimator_kwargs(args: argparse.Namespace, source_dir: str, staged: list[str]) -> dict[str, Any]:
    """``{"estimator": PyTorch keyword arguments, "inputs": fit's channels}``, JSON-serialisable (FSx channels become
    the SDK's FileSystemInput at launch). ``staged``: the files the source dir will hold."""
    for flag in ("accelerate_config", "recipe"):
        path = getattr(args, flag)
        if path is not None and path not in staged:
            raise LaunchError(f"--{flag} {path}: not a tracked file of the repository, so it would not be uploaded")
    if args.instance_count < 1:
        raise LaunchError(f"--instance_count: must be >= 1, got {args.instance_count}")
    inputs = channel_inputs(args.channel)
    hyperparameters = _pairs(args.hyperparameter, "hyperparameter")
    for key in hyperparameters:
        if key in ("accelerate_config", "recipe", "config") or key in inputs:
            raise LaunchError(f"--hyperparameter {key}=...: set it with --{'recipe' if key == 'config' else key}")
    if args.spot and not args.checkpoint_s3_uri:
        raise LaunchError("--spot: needs --checkpoint_s3_uri, else an interrupted job starts over")
    kwargs: dict[str, Any] = {
        "entry_point": "entry.py",
        "source_dir": source_dir,
        "role": args.role,
        "framework_version": args.framework_version,
        "py_version": args.py_version,
        "instance_type": args.instance_type,
        "instance_count": args.instance_count,
        "distribution": {"torch_distributed": {"enabled": True}},
        "hyperparameters": {"accelerate_config": args.accelerate_config, **hyperparameters},
        "environment": {**ENVIRONMENT, **_pairs(args.env, "env")},
        "max_run": args.max_run,
        "volume_size": args.volume_size,
        "checkpoint_local_path": DEFAULT_CHECKPOINT_DIR,
        "base_job_name": args.base_job_name,
        "disable_profiler": True,
        "debugger_hook_config": False,
    }
    if args.recipe:
        kwargs["hyperparameters"]["recipe"] = args.recipe
    for key in ("checkpoint_s3_uri", "output_path"):
        if getattr(args, key):
            kwargs[key] = getattr(args, key)
    if args.spot:
        kwargs["use_spot_instances"] = True
        kwargs["max_wait"] = args.max_wait or 2 * args.max_run
        if kwargs["max_wait"] < args.max_run:
            raise LaunchError(f"--max_wait {args.max_wait}: must be >= --max_run {args.max_run}")
    if any(isinstance(v, dict) for v in inputs.values()):
        if not args.subnet or not args.security_group_id:
            raise LaunchError(
                "--channel ...=fsx://...: FSx needs the job in its VPC: pass --subnet, --security_group_id"
            )
    if args.subnet:
        kwargs["subnets"], kwargs["security_group_ids"] = args.subnet, args.security_group_id
    return {"estimator": kwargs, "inputs": inputs}


def start(job: dict[str, Any], wait: bool) -> Any:
    """Start the training job with the SDK; return the estimator."""
    try:
        from sagemaker.inputs import FileSystemInput
        from sagemaker.pytorch import PyTorch
        from sagemaker.session import get_execution_role
    except ImportError:
        _fail(f"the SageMaker Python SDK v2 is not installed: {SDK_HINT}")
    kwargs = dict(job["estimator"])
    if not kwargs["role"]:
        try:
            kwargs["role"] = get_execution_role()
        except ValueError:
            _fail("--role: needed outside a SageMaker notebook (an IAM role ARN SageMaker can assume)")
    inputs = {k: FileSystemInput(**v) if isinstance(v, dict) else v for k, v in job["inputs"].items()}
    estimator = PyTorch(**kwargs)
    estimator.fit(inputs=inputs or None, wait=wait)
    return estimator


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if not args.dry_run:
        try:
            import sagemaker.pytorch  # noqa: F401  (fail before staging anything)
        except ImportError:
            _fail(f"the SageMaker Python SDK v2 is not installed: {SDK_HINT}")
    try:
        staged = sorted({*tracked_files(REPO), "entry.py", "requirements.txt"})
        job = estimator_kwargs(args, "", staged)  # checks every flag before anything is copied
        staging = Path(args.staging_dir or tempfile.mkdtemp(prefix="mtkit-sagemaker-")).resolve()
        job["estimator"]["source_dir"] = str(staging)
        stage_source(REPO, staging)
    except LaunchError as err:
        _fail(str(err))
    if args.dry_run:
        print(json.dumps(job, indent=2))
        return
    estimator = start(job, args.wait)
    name = estimator.latest_training_job.name
    where = estimator.model_data if args.wait else f"{estimator.output_path.rstrip('/')}/{name}/output/model.tar.gz"
    print(f"training job {name}: model and results in {where}")
    if not args.staging_dir:
        shutil.rmtree(staging, ignore_errors=True)  # fit() has uploaded it


if __name__ == "__main__":
    main()
