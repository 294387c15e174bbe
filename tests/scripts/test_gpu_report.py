"""scripts/gpu_report.py on CPU: the GPU steps skipped without a GPU, the steps' plumbing at CPU size (--smoke), and a
failing step recorded without costing the others."""

from __future__ import annotations

import json

import pytest
from testing_utils import run_script


def test_without_a_gpu_every_gpu_step_is_skipped_and_reported(tmp_path):
    res = run_script("gpu_report.py", "--out", str(tmp_path), "--only", "gpu-tests", "base-*", "flan-*")
    assert res.returncode == 0, res.stderr[-3000:]
    records = json.loads((tmp_path / "report.json").read_text())
    names = [r["step"] for r in records]
    assert names == ["gpu-tests", "base-bf16", "base-bf16-compiled", *(
        f"flan-t5-{size}-zero3{gc}" for size in ("base", "xl") for gc in ("", "-gc"))]  # fmt: skip
    assert {r["status"] for r in records} == {"skipped (no CUDA GPU)"}
    assert "--mixed_precision bf16" in records[1]["command"] and "--max_tokens 25000" in records[1]["command"]
    assert "--torch_compile" in records[2]["command"] and "flan-t5-xl" in records[-1]["command"]
    table = (tmp_path / "report.md").read_text().splitlines()
    assert len(table) == 2 + len(records) and all(f"| {name} |" in "\n".join(table) for name in names)


def test_smoke_runs_the_step_benchmark_and_reports_its_figures(tmp_path):
    res = run_script("gpu_report.py", "--out", str(tmp_path), "--smoke", "--only", "base-bf16")
    assert res.returncode == 0, res.stderr[-3000:]
    (base,) = json.loads((tmp_path / "report.json").read_text())
    assert base["step"] == "base-bf16" and base["status"] == "ok" and base["tgt_tok_s"] > 0
    assert base["tokens_per_update"] == 1024 and base["steps"] == 3
    assert abs(base["step_ms"] * base["steps"] / 1000 - base["elapsed_s"]) < 1e-6
    assert "| base-bf16 | ok |" in res.stdout and f"report: {tmp_path / 'report.md'}" in res.stdout


@pytest.mark.slow  # the translation benchmark itself is in tests/scripts/test_benchmark_script.py
def test_smoke_translation_step_reports_every_system(tiny_run, tmp_path):
    res = run_script("gpu_report.py", "--out", str(tmp_path), "--smoke", "--only", "translate",
                     "--translate_model", str(tiny_run / "final"))  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    systems = json.loads((tmp_path / "report.json").read_text())
    assert {r["status"] for r in systems} == {"ok"} and all(0 <= r["bleu"] <= 100 for r in systems)
    assert {r["system"] for r in systems} >= {"hf generate", "ctranslate2 float32", "ctranslate2 int8"}


def test_a_failing_step_is_recorded_and_the_report_still_written(tmp_path):
    missing = tmp_path / "no_model"
    res = run_script("gpu_report.py", "--out", str(tmp_path / "r"), "--smoke", "--only", "translate",
                     "--translate_model", str(missing))  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    (record,) = json.loads((tmp_path / "r" / "report.json").read_text())
    assert record["status"] == "failed (exit 2)" and f"error: --model: {missing}" in record["output_tail"]


def test_bad_flags_are_one_line(tmp_path):
    (tmp_path / "file").write_text("x")
    res = run_script("gpu_report.py", "--out", str(tmp_path / "file"))
    assert res.returncode == 2 and res.stderr.strip() == f"error: --out {tmp_path / 'file'}: exists and is not a folder"
