"""scripts/gpu_report.py on CPU: the plan checked (--dry_run: groups that fit one device command, files that come
back), the suite collected without the optional packages, the GPU steps skipped without a GPU, the steps' plumbing at
CPU size (--smoke), a step's log kept when it hangs, and a failing step recorded without costing the others."""

from __future__ import annotations

import json
import re
import sys

import pytest
from benchmarks import gpu_report
from testing_utils import data_root, run_script, script_in_process


def report(*args: str):
    """``scripts/gpu_report.py ARGS`` by its ``main`` in this process (each step is its own process anyway); the
    script's own process: test_smoke_runs_the_step_benchmark_and_reports_its_figures."""
    import importlib

    return script_in_process(importlib.import_module("gpu_report").main, *args)


def test_dry_run_checks_every_group_fits_one_device_command(tmp_path, monkeypatch):
    out = tmp_path / "out" / "gpu_report"
    monkeypatch.setenv("OUT", str(tmp_path / "out"))
    res = report("--dry_run")
    assert res.returncode == 0, res.stderr[-3000:]
    groups: dict[str, list] = {}
    for line in res.stdout.splitlines():
        if found := re.match(r"group (\S+): (\d+) s of 540 s", line):
            group = groups.setdefault(found[1], [int(found[2])])
        elif found := re.match(r"  (\S+) +(\d+) s(?:  GPU)?  -> (.+)$", line):
            group.append((found[1], int(found[2]), found[3].split(", ")))
    assert list(groups) == ["tests", "base", "flan-base", "flan-xl", "translate", "decoding"]
    for total, *steps in groups.values():  # each group's printed sum is its steps' limits, within the slot
        assert total == sum(seconds for _, seconds, _ in steps) <= 540
        files = [f for *_, fs in steps for f in fs]
        assert len(files) + 2 <= 8  # with report.md and report.json: what one command brings back
        assert all(f.startswith(f"{out}/") and "/" not in f[len(str(out)) + 1 :] for f in files)
    assert [name for name, *_ in groups["flan-xl"][1:]] == ["flan-t5-xl-zero3", "flan-t5-xl-zero3-gc"]
    assert "plan ok" in res.stdout


def test_dry_run_refuses_an_out_folder_outside_dollar_out(tmp_path, monkeypatch):
    monkeypatch.setenv("OUT", str(tmp_path / "out"))
    res = report("--dry_run", "--smoke", "--out", str(tmp_path / "elsewhere"))
    assert res.returncode == 2 and res.stderr.startswith("error: --dry_run: ") and "not under $OUT" in res.stderr


def test_flan_t5_xl_without_checkpointing_gets_a_budget_that_fits_80_gb():
    """Its activations measure ~9.4 MB per padded position; 8,192 positions (and 18 bytes of ZeRO-3 states per
    parameter) would not fit an 80 GB GPU, which the plan's budget must respect; checkpointing allows more."""
    budgets = gpu_report.t5_budgets("xl", 80e9)
    assert 1024 <= budgets[False] < 8192 and budgets[True] >= 8192


@pytest.mark.slow  # collects the whole suite in a second interpreter (what a device run does first)
def test_the_suite_collects_without_the_optional_packages():
    """The GPU image lacks these: a module needing one is skipped, never an error that stops collection."""
    blocked = ",".join(gpu_report.OPTIONAL_MODULES)
    # --assert=plain: collecting is the subject, not pytest's rewriting of every test module's asserts
    code = (f"import sys\nfor m in {blocked!r}.split(','): sys.modules[m] = None\nimport pytest\n"
            "sys.exit(pytest.main(['--collect-only', '-q', '-p', 'no:cacheprovider', '--assert=plain', "
            "'tests']))")  # fmt: skip
    res = run_script("-", sys.executable, "-c", code, timeout=900)
    assert res.returncode == 0, res.stdout[-3000:]
    assert re.search(r"\d+ tests? collected", res.stdout) and "error" not in res.stdout.lower().split("collected")[-1]


def test_data_is_found_in_the_carried_folder_without_the_shared_one(tmp_path):
    repo = tmp_path / "repo"
    (repo / ".gpu" / "data" / "multi30k").mkdir(parents=True)
    assert data_root(repo) == repo / ".gpu" / "data"
    (tmp_path / "shared" / "data" / "multi30k").mkdir(parents=True)
    assert data_root(repo) == tmp_path / "shared" / "data"


def test_a_step_cut_off_at_its_limit_keeps_what_it_printed(tmp_path):
    code = "import json, time; print(json.dumps({'tgt_tok_s': 7.0}), flush=True); time.sleep(60)"
    step = gpu_report.Step("slow", "g", [sys.executable, "-c", code], timeout=3)
    status, seconds, output = gpu_report.run_step(step, tmp_path / "slow.log")
    assert status == "timed out (3 s)" and seconds < 30
    assert gpu_report.figures("slow", (tmp_path / "slow.log").read_text()) == [{"step": "slow", "tgt_tok_s": 7.0}]


def test_without_a_gpu_every_gpu_step_is_skipped_and_reported(tmp_path):
    res = report("--out", str(tmp_path), "--only", "gpu-tests", "base")
    assert res.returncode == 0, res.stderr[-3000:]
    res = report("--out", str(tmp_path), "--only", "flan-*")  # a later command adds its records
    assert res.returncode == 0, res.stderr[-3000:]
    records = json.loads((tmp_path / "report.json").read_text())
    names = [r["step"] for r in records]
    assert names == ["gpu-tests", "base-bf16", "base-bf16-compiled", "base-fp32", *(
        f"flan-t5-{size}-zero3{gc}" for size in ("base", "xl") for gc in ("", "-gc"))]  # fmt: skip
    assert {r["status"] for r in records} == {"skipped (no CUDA GPU)"}
    assert "--mixed_precision bf16" in records[1]["command"] and "--max_tokens 25000" in records[1]["command"]
    assert "--torch_compile" in records[2]["command"] and "--mixed_precision no" in records[3]["command"]
    assert "flan-t5-xl" in records[-1]["command"]
    table = (tmp_path / "report.md").read_text().splitlines()
    assert len(table) == 2 + len(records) and all(f"| {name} |" in "\n".join(table) for name in names)


@pytest.mark.slow  # the step benchmark end to end: tests/scripts/test_benchmark_step_script.py runs it
def test_smoke_runs_the_step_benchmark_and_reports_its_figures(tmp_path):
    res = run_script("gpu_report.py", "--out", str(tmp_path), "--smoke", "--only", "base-bf16")
    assert res.returncode == 0, res.stderr[-3000:]
    (base,) = json.loads((tmp_path / "report.json").read_text())
    assert base["step"] == "base-bf16" and base["status"] == "ok" and base["tgt_tok_s"] > 0
    assert base["tokens_per_update"] == 1024 and base["steps"] == 3
    assert abs(base["step_ms"] * base["steps"] / 1000 - base["elapsed_s"]) < 1e-6
    assert "| base-bf16 | ok |" in res.stdout and f"report: {tmp_path / 'report.md'}" in res.stdout
    assert '"tgt_tok_s"' in (tmp_path / "base-bf16.log").read_text()  # the step's own output, kept
    assert "Self CPU" in (tmp_path / "base-bf16.profile.txt").read_text()  # the profile of a few updates


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
    res = report("--out", str(tmp_path / "r"), "--smoke", "--only", "translate", "--translate_model", str(missing))
    assert res.returncode == 0, res.stderr[-3000:]
    (record,) = json.loads((tmp_path / "r" / "report.json").read_text())
    assert record["status"] == "failed (exit 2)"
    assert f"error: --model {missing}: no such folder" in record["output_tail"]


def test_bad_flags_are_one_line(tmp_path):
    (tmp_path / "file").write_text("x")
    res = report("--out", str(tmp_path / "file"))
    assert res.returncode == 2 and res.stderr.strip() == f"error: --out {tmp_path / 'file'}: exists and is not a folder"
