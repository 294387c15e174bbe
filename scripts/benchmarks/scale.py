"""Memory and time against corpus size: synthetic WMT-like corpora (Multi30k's training lines repeated to N pairs)
are preprocessed once (``scripts/preprocess.py``, as a cluster does in its first job step), then trained on by one
process and by two (``accelerate_configs/cpu_ddp.yaml``) reading the same cache. Every process tree is sampled
while it runs: peak RSS of each process, and the peak of the training processes' summed PSS (memory shared
through the page cache counted once, split among its sharers)."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[2]
COLUMNS = [
    ("pairs", "pairs", "{:,}"),
    ("preprocess_s", "preprocess s", "{:.0f}"),
    ("preprocess_peak_gb", "preprocess peak RSS GiB", "{:.2f}"),
    ("start_s", "train start to first update s", "{:.0f}"),
    ("train_peak_rss_gb", "train peak RSS GiB (1 process)", "{:.2f}"),
    ("ddp_peak_rss_gb", "train peak RSS GiB per process (2)", "{:.2f}"),
    ("ddp_peak_pss_gb", "summed PSS GiB (2 processes)", "{:.2f}"),
]
GIB = 1024**3
DDP_CONFIG = "accelerate_configs/cpu_ddp.yaml"


def make_corpus(multi30k: Path, out: Path, pairs: int, src: str = "en", tgt: str = "de") -> Path:
    """``out/train.{src,tgt}`` of ``pairs`` lines (Multi30k's training lines over and over) and its real ``val``."""
    from bias_eval.core.textio import read_lines

    out.mkdir(parents=True, exist_ok=True)
    for lang in (src, tgt):
        lines = read_lines(multi30k / f"train.{lang}.gz")
        with open(out / f"train.{lang}", "w", encoding="utf-8") as f:
            for line in itertools.islice(itertools.cycle(lines), pairs):
                f.write(line + "\n")
        (out / f"val.{lang}").write_text("\n".join(read_lines(multi30k / f"val.{lang}.gz")) + "\n", encoding="utf-8")
    return out


def watch(cmd: list[str], env: dict, first_update: Path | None = None, timeout: float = 3600) -> dict:
    """Run ``cmd``; sample its process tree every 0.2 s: wall time, time until ``first_update`` has a loss record,
    each process's peak RSS, and the peak of the summed PSS of the processes running ``scripts/train.py``."""
    start = time.perf_counter()
    log = tempfile.TemporaryFile("w+")  # not a pipe: a full pipe nobody reads would stop the process mid-write
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=log, text=True)
    peak_rss: dict[int, int] = {}
    trainers: set[int] = set()
    peak_pss, first = 0, None
    root = psutil.Process(proc.pid)
    while proc.poll() is None:
        if time.perf_counter() - start > timeout:
            proc.kill()
            raise TimeoutError(" ".join(cmd))
        pss = 0
        for p in [root, *root.children(recursive=True)]:
            try:
                info = p.memory_full_info()
                peak_rss[p.pid] = max(peak_rss.get(p.pid, 0), info.rss)
                if any(part.endswith("train.py") for part in p.cmdline()):
                    pss += info.pss
                    trainers.add(p.pid)
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
        peak_pss = max(peak_pss, pss)
        if first is None and first_update is not None and first_update.is_file():
            if '"loss"' in first_update.read_text(encoding="utf-8"):
                first = time.perf_counter() - start
        time.sleep(0.2)
    log.seek(0)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{log.read()[-3000:]}")
    return {
        "seconds": time.perf_counter() - start,
        "first_update_s": first,
        "peak_rss": max(peak_rss.values()),
        "trainer_peak_rss": max((peak_rss[pid] for pid in trainers), default=0),
        "peak_pss": peak_pss,
    }


def run(multi30k: Path, work: Path, sizes: list[int], flags: list[str]) -> list[dict]:
    """One record per corpus size (see the module docstring); ``flags`` are recipe flags for every step."""
    env = {**os.environ, "HF_DATASETS_CACHE": str(work / "hf"), "TOKENIZERS_PARALLELISM": "false"}
    train_py = [sys.executable, "scripts/train.py"]
    records = []
    for pairs in sizes:
        data = make_corpus(multi30k, work / f"corpus-{pairs}", pairs)
        run_dir = work / f"run-{pairs}"
        common = ["--data_dir", str(data), "--validation_split", "val", "--test_split", "none", *flags]
        prep = watch([sys.executable, "scripts/preprocess.py", *common, "--output_dir", str(run_dir)], env)
        train_flags = [*common, "--logging_steps", "1", "--report_to", "none", "--disable_tqdm"]
        one = watch([*train_py, *train_flags, "--output_dir", str(run_dir)], env, run_dir / "metrics.jsonl")
        two_dir = work / f"run-{pairs}-ddp"
        two_dir.mkdir(exist_ok=True)
        for name in ("tokenizer", "cache"):  # the same preprocessed data, as on a shared filesystem
            if not (two_dir / name).exists():
                (two_dir / name).symlink_to(run_dir / name)
        launch = [
            sys.executable,
            "-m",
            "accelerate.commands.launch",
            "--config_file",
            "accelerate_configs/cpu_ddp.yaml",
        ]
        two = watch([*launch, "scripts/train.py", *train_flags, "--output_dir", str(two_dir)], env)
        records.append(
            {
                "system": f"{pairs:,} pairs",
                "pairs": pairs,
                "preprocess_s": prep["seconds"],
                "preprocess_peak_gb": prep["peak_rss"] / GIB,
                "start_s": one["first_update_s"],
                "train_peak_rss_gb": one["trainer_peak_rss"] / GIB,
                "ddp_peak_rss_gb": two["trainer_peak_rss"] / GIB,
                "ddp_peak_pss_gb": two["peak_pss"] / GIB,
            }
        )
        print(json.dumps(records[-1]), file=sys.stderr, flush=True)
    return records
