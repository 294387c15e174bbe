"""A hub id the hub cannot serve is one line within seconds, naming how the user gave it: the hub out of reach
(``HF_ENDPOINT`` on a closed local port stands for a machine without network, ``HF_HUB_OFFLINE`` unset), the hub's
own cache used when it has the model, and ``HF_HUB_OFFLINE=1`` without it.

huggingface_hub reads these variables when it is imported, so each environment gets a fresh interpreter, in which the
scripts run one after the other (``testing_utils.scripts_in_one_process``): two interpreters for all the cases below."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from testing_utils import ScriptRun, scripts_in_one_process

#: a machine without network: nothing listens on the discard port, so every connection is refused at once
NO_HUB = {"HF_ENDPOINT": "http://127.0.0.1:9", "HF_HUB_OFFLINE": "0", "HF_DATASETS_OFFLINE": "0"}
OFFLINE = {"HF_HUB_OFFLINE": "1"}
#: what transformers prints while it retries the hub (12 such lines over 53 s before this check)
RETRY = "Retrying in"
RECIPE = "recipes/flan_t5_small_mtgeneval.yaml"


def cache_copy(model: Path, hf_home: Path, repo_id: str) -> None:
    """``model``'s files laid out as huggingface_hub's cache holds a downloaded ``repo_id`` (refs/main -> snapshot)."""
    commit = "0" * 40
    repo = hf_home / "hub" / f"models--{repo_id.replace('/', '--')}"
    shutil.copytree(model, repo / "snapshots" / commit)
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)


@pytest.fixture(scope="module")
def hub(tiny_t5, tmp_path_factory) -> tuple[Path, dict[str, ScriptRun], dict[str, ScriptRun]]:
    """(HF_HOME, the calls with the hub out of reach, the calls with ``HF_HUB_OFFLINE=1``): the cache holds the tiny
    T5 as someone/tiny-t5, none of the other hub ids; no call may create the run folder."""
    root = tmp_path_factory.mktemp("hub")
    cache_copy(tiny_t5, root / "hf", "someone/tiny-t5")
    env = {"HF_HOME": str(root / "hf")}
    recipe = ["--config", RECIPE, "--output_dir", str(root / "run")]
    flan = ["--model", "google/flan-t5-small", "--text", "Hello."]
    cached = ["--model", "someone/tiny-t5", "--text", "Hello.", "--max_new_tokens", "4", "--num_beams", "1"]
    no_hub = scripts_in_one_process(
        {
            "recipe": ("train.py", recipe, {}),
            "train flag": ("train.py", [*recipe, "--model_name_or_path", "google/mt5-small"], {}),
            "translate flag": ("translate.py", flan, {}),
            "cached": ("translate.py", cached, {}),
        },
        env={**NO_HUB, **env},
    )
    offline = scripts_in_one_process(
        {"recipe": ("train.py", recipe, {}), "translate": ("translate.py", flan, {})}, env={**OFFLINE, **env}
    )
    assert not (root / "run").exists()
    return root / "hf", no_hub, offline


def one_error_line(res) -> str:
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert res.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), res.stderr[-3000:]
    assert RETRY not in res.stderr and "Traceback" not in res.stderr
    return lines[0]


def test_a_recipe_s_hub_model_out_of_reach_is_one_line_within_seconds_naming_the_recipe_key(hub):
    _, no_hub, offline = hub
    line = one_error_line(no_hub["recipe"])
    assert line.startswith(f"error: model_name_or_path: google/flan-t5-small (from {RECIPE}): ")
    assert "cannot be reached" in line and "local model folder" in line and "HF_HUB_OFFLINE=1" in line
    assert "--tokenizer_name" not in line  # no such flag was given
    # the same call under HF_HUB_OFFLINE=1, which asks nothing of the network: the probe's own time is the
    # difference (the retries took 53 s)
    assert "HF_HUB_OFFLINE=1 and the model is not in the local Hugging Face cache" in one_error_line(offline["recipe"])
    elapsed, baseline = no_hub["recipe"].seconds, offline["recipe"].seconds
    assert elapsed - baseline < 8, f"{elapsed:.1f} s with the hub out of reach, {baseline:.1f} s offline"


def test_hub_ids_given_as_flags_are_named_as_flags(hub):
    _, no_hub, _ = hub
    assert one_error_line(no_hub["train flag"]).startswith(
        "error: --model_name_or_path google/mt5-small: the Hugging Face Hub"
    )
    assert one_error_line(no_hub["translate flag"]).startswith(
        "error: --model google/flan-t5-small: the Hugging Face Hub"
    )


def test_offline_without_the_model_in_the_cache_is_one_line(hub):
    line = one_error_line(hub[2]["translate"])
    assert line.startswith("error: --model google/flan-t5-small: HF_HUB_OFFLINE=1 and the model is not in the local")


def test_a_cached_model_with_the_hub_out_of_reach_is_used_at_once(hub):
    from huggingface_hub import try_to_load_from_cache

    hf_home, no_hub, _ = hub
    found = try_to_load_from_cache("someone/tiny-t5", "config.json", cache_dir=hf_home / "hub")
    assert isinstance(found, str)  # the layout of cache_copy is the library's own
    res = no_hub["cached"]
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
