"""A hub id the hub cannot serve is one line within seconds, naming how the user gave it: the hub out of reach
(``HF_ENDPOINT`` on a closed local port stands for a machine without network, ``HF_HUB_OFFLINE`` unset), the hub's
own cache used when it has the model, and ``HF_HUB_OFFLINE=1`` without it."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from testing_utils import run_script

#: a machine without network: nothing listens on the discard port, so every connection is refused at once
NO_HUB = {"HF_ENDPOINT": "http://127.0.0.1:9", "HF_HUB_OFFLINE": "0", "HF_DATASETS_OFFLINE": "0"}
OFFLINE = {"HF_HUB_OFFLINE": "1"}
#: what transformers prints while it retries the hub (12 such lines over 53 s before this check)
RETRY = "Retrying in"


def timed(script: str, *args: str, env: dict) -> tuple[float, object]:
    start = time.perf_counter()
    res = run_script(script, *args, env=env, timeout=300)
    return time.perf_counter() - start, res


def one_error_line(res) -> str:
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert res.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), res.stderr[-3000:]
    assert RETRY not in res.stderr and "Traceback" not in res.stderr
    return lines[0]


def test_a_recipe_s_hub_model_out_of_reach_is_one_line_within_seconds_naming_the_recipe_key(tmp_path):
    env = {**NO_HUB, "HF_HOME": str(tmp_path / "hf")}
    recipe = "recipes/flan_t5_small_mtgeneval.yaml"
    elapsed, res = timed("train.py", "--config", recipe, "--output_dir", str(tmp_path / "run"), env=env)
    line = one_error_line(res)
    assert line.startswith(f"error: model_name_or_path: google/flan-t5-small (from {recipe}): ")
    assert "cannot be reached" in line and "local model folder" in line and "HF_HUB_OFFLINE=1" in line
    assert "--tokenizer_name" not in line  # no such flag was given
    assert not (tmp_path / "run").exists()
    # the same start under HF_HUB_OFFLINE=1, which asks nothing of the network: the probe's own time is the difference
    # (the interpreter's imports take seconds, more on a busy machine; the retries took 53 s)
    baseline, res = timed("train.py", "--config", recipe, "--output_dir", str(tmp_path / "run"), env={**env, **OFFLINE})
    assert "HF_HUB_OFFLINE=1 and the model is not in the local Hugging Face cache" in one_error_line(res)
    assert elapsed - baseline < 8, f"{elapsed:.1f} s with the hub out of reach, {baseline:.1f} s offline"


def test_hub_ids_given_as_flags_are_named_as_flags(tmp_path):
    env = {**NO_HUB, "HF_HOME": str(tmp_path / "hf")}
    args = ["--config", "recipes/flan_t5_small_mtgeneval.yaml", "--output_dir", str(tmp_path / "run")]
    res = run_script("train.py", *args, "--model_name_or_path", "google/mt5-small", env=env)
    assert one_error_line(res).startswith("error: --model_name_or_path google/mt5-small: the Hugging Face Hub")
    res = run_script("translate.py", "--model", "google/flan-t5-small", "--text", "Hello.", env=env)
    assert one_error_line(res).startswith("error: --model google/flan-t5-small: the Hugging Face Hub")


def test_offline_without_the_model_in_the_cache_is_one_line(tmp_path):
    env = {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1"}
    res = run_script("translate.py", "--model", "google/flan-t5-small", "--text", "Hello.", env=env)
    line = one_error_line(res)
    assert line.startswith("error: --model google/flan-t5-small: HF_HUB_OFFLINE=1 and the model is not in the local")


def cache_copy(model: Path, hf_home: Path, repo_id: str) -> None:
    """``model``'s files laid out as huggingface_hub's cache holds a downloaded ``repo_id`` (refs/main -> snapshot)."""
    commit = "0" * 40
    repo = hf_home / "hub" / f"models--{repo_id.replace('/', '--')}"
    shutil.copytree(model, repo / "snapshots" / commit)
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)


def test_a_cached_model_with_the_hub_out_of_reach_is_used_at_once(tiny_t5, tmp_path):
    from huggingface_hub import try_to_load_from_cache

    cache_copy(tiny_t5, tmp_path / "hf", "someone/tiny-t5")
    found = try_to_load_from_cache("someone/tiny-t5", "config.json", cache_dir=tmp_path / "hf" / "hub")
    assert isinstance(found, str)  # the layout above is the library's own
    env = {**NO_HUB, "HF_HOME": str(tmp_path / "hf")}
    args = ["--model", "someone/tiny-t5", "--text", "Hello.", "--max_new_tokens", "4", "--num_beams", "1"]
    res = run_script("translate.py", *args, env=env)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "the Hugging Face Hub cannot be reached; using the cached copy" in res.stderr and RETRY not in res.stderr
    assert len(res.stdout.strip().splitlines()) == 1


def test_paths_on_this_machine_are_never_taken_for_hub_ids(tmp_path, monkeypatch):
    from mtkit.hubcheck import is_hub_id

    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    (tmp_path / "model").mkdir()
    assert is_hub_id("google/flan-t5-small") and is_hub_id("t5-small")
    assert not any(map(is_hub_id, ["model", "runs/finale", "runs/demo/final", "./m", "/m", "~/m"]))
