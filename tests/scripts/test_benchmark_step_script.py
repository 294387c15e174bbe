"""scripts/benchmark_step.py end to end on CPU (the GPU variant is in tests/mtkit/train/test_trainer_gpu.py)."""

import json

import pytest
from testing_utils import FAST_RUN, argv_script_in_process


def test_prints_a_table_and_writes_consistent_json(multi30k_small, tmp_path):
    report = tmp_path / "bench.json"
    res = argv_script_in_process(  # in this process; the script's own process: tests/scripts/test_gpu_report.py's smoke
        "benchmark_step.py", "--data_dir", str(multi30k_small), *FAST_RUN, "--output_dir", str(tmp_path / "run"),
        "--steps", "4", "--warmup", "1", "--gradient_accumulation_steps", "2", "--peak_tflops", "0.5",
        "--json", str(report),
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    record = json.loads(report.read_text())
    assert record["steps"] == 4 and record["tokens_per_update"] == 1024 * 2
    assert record["step_ms"] == pytest.approx(1000 * record["elapsed_s"] / 4)
    assert record["mfu"] == pytest.approx(record["tflops"] / 0.5)
    assert record["tgt_tok_s"] > 0 and 0 < record["padding"] < 1
    lines = res.stdout.splitlines()
    table = lines[next(i for i, line in enumerate(lines) if line.startswith("| run |")) :]
    assert table[0].startswith("| run | step ms |") and "transformer-tiny NO x1 no" in table[2]
    assert json.loads(table[3]) == record


def test_bad_flag_is_one_line(tmp_path):
    res = argv_script_in_process("benchmark_step.py", "--steps", "0", "--output_dir", str(tmp_path / "x"))
    assert res.returncode == 2 and res.stderr.strip() == "error: --steps must be at least 1 and --warmup at least 0"


def test_times_the_loop_with_and_without_workers_and_reports_the_host_share(multi30k_small, tmp_path):
    report = tmp_path / "bench.json"
    res = argv_script_in_process(  # the two DataLoader workers are processes of their own
        "benchmark_step.py", "--data_dir", str(multi30k_small), *FAST_RUN, "--output_dir", str(tmp_path / "run"),
        "--steps", "4", "--warmup", "1", "--workers", "0,2", "--max_train_samples", "600", "--json", str(report),
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    record = json.loads(report.read_text())
    inline, workers = record["by_workers"]
    assert (inline["workers"], workers["workers"]) == (0, 2) and inline["speedup"] == 1.0
    assert workers["speedup"] == pytest.approx(inline["step_ms"] / workers["step_ms"])
    for row in (inline, workers):
        assert 0 <= row["fetch_ms"] < row["step_ms"] and row["host_share"] == pytest.approx(
            row["fetch_ms"] / row["step_ms"]
        )
    assert "| transformer-tiny NO x1 no, 0 workers |" in res.stdout and ", 2 workers |" in res.stdout
