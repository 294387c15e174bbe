"""Benchmark: the same timed training updates (``scripts/benchmark_step.py``) on glibc's malloc and on each other
allocator installed (tcmalloc, jemalloc), each run a fresh process started with it preloaded."""

from __future__ import annotations

import ctypes.util
import json
import subprocess
import sys
from pathlib import Path

from mtkit.allocator import allocator, child_env, tcmalloc_library
from mtkit.errors import UserError

STEP = Path(__file__).resolve().parents[1] / "benchmark_step.py"
COLUMNS = [
    ("step_ms", "step ms", "{:.0f}"),
    ("tgt_tok_s", "tgt tok/s", "{:,.0f}"),
    ("peak_rss_gb", "peak RSS GiB", "{:.2f}"),
    ("speedup", "x glibc", "{:.2f}"),
]


def installed() -> dict[str, str | None]:
    """Allocator name -> the library to preload (None: glibc's malloc, the process's own)."""
    found = {"tcmalloc": tcmalloc_library(), "jemalloc": ctypes.util.find_library("jemalloc")}
    return {"glibc": None, **{name: lib for name, lib in found.items() if lib}}


def run(flags: list[str], warmup: int, steps: int, work: Path) -> list[dict]:
    """One row per allocator: the step benchmark's figures, and its speed-up over glibc's malloc."""
    if allocator() == "system":
        raise UserError("allocator: this benchmark reads each run's /proc/self/maps (Linux only)")
    rows = []
    for name, library in installed().items():
        env = child_env(library or None)
        out = work / f"{name}.json"
        command = [sys.executable, str(STEP), *flags, "--output_dir", str(work / "run"), "--overwrite_output_dir"]
        done = subprocess.run([*command, "--warmup", str(warmup), "--steps", str(steps), "--json", str(out)], env=env)
        if done.returncode:
            raise UserError(f"the step benchmark on {name} failed (exit {done.returncode}); its output is above")
        record = json.loads(out.read_text(encoding="utf-8"))
        if record["allocator"] != name:
            raise UserError(f"{name}: the run reports {record['allocator']} ({library} was not preloaded)")
        rows.append({"system": name, **record})
    for row in rows:
        row["speedup"] = rows[0]["step_ms"] / row["step_ms"]
    return rows
