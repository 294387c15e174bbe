"""Helpers shared by the tests: where the real data is, script runners, small-run flags."""

from __future__ import annotations

import gzip
import os
import socket
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
MULTI30K = SHARED_DATA / "multi30k"
MTGENEVAL = SHARED_DATA / "mt-geneval"

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
    """Run ``scripts/<script>`` (or any command list when ``script`` is ``"-"``) in a subprocess."""
    cmd = list(args) if script == "-" else [sys.executable, str(REPO / "scripts" / script), *args]
    return subprocess.run(
        cmd,
        cwd=cwd,
        env={**os.environ, **OFFLINE_ENV, "PATH": BIN + os.pathsep + os.environ.get("PATH", ""), **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        input=stdin,
    )


def write_slice(src: Path, dst: Path, n: int) -> None:
    """The first ``n`` lines of a (gzipped) corpus file, as a plain text file."""
    with gzip.open(src, "rt", encoding="utf-8") as f:
        lines = [next(f) for _ in range(n)]
    dst.write_text("".join(lines), encoding="utf-8")


#: Flags that make a run small and fast; tests add their own on top.
FAST_RUN = [
    "--source_lang", "en", "--target_lang", "de",
    "--validation_split", "val", "--test_split", "test_2016_flickr",
    "--model", "transformer-tiny", "--vocab_size", "1000",
    "--max_tokens", "1024", "--warmup_steps", "10", "--learning_rate", "2e-3",
    "--eval_max_samples", "16", "--max_new_tokens", "16", "--num_beams", "2",
    "--report_to", "none", "--disable_tqdm", "--logging_steps", "5",
]  # fmt: skip


def free_port() -> str:
    """A TCP port nothing listens on now, for a launcher's rendezvous (fixed ports collide across runs)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return str(sock.getsockname()[1])
