"""Sharing a model on the hub, tested up to the network boundary (no hub is reachable here): the folder that would be
uploaded is the whole model and its CTranslate2 conversion, loadable as they are; an upload without a token, offline,
or to an endpoint that does not answer fails in one line that never shows the token, and loses nothing."""

from __future__ import annotations

import contextlib
import hashlib
import io
from pathlib import Path

import pytest
import torch
from huggingface_hub import ModelCard
from testing_utils import FAST_RUN, ScriptRun, free_port, scripts_in_one_process

from mtkit.cli.push_to_hub import main as push_main
from mtkit.export.hub import staged

REPO_ID = "someone/tiny-mt"
TOKEN = "hf_NotARealTokenButSecret123"


def digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


def test_the_staged_repository_is_the_whole_model_and_its_conversion(tiny_run):
    import ctranslate2
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    final, ct2 = tiny_run / "final", tiny_run / "final_ct2"
    kept = digests(final)
    with staged(final, REPO_ID) as folder:
        files = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
        assert files == set(digests(final)) | {f"ctranslate2/{name}" for name in digests(ct2)}
        assert "README.md" in files and "generation_config.json" in files and "ctranslate2/model.bin" in files
        hub, local = AutoModelForSeq2SeqLM.from_pretrained(folder), AutoModelForSeq2SeqLM.from_pretrained(final)
        assert all(torch.equal(a, b) for a, b in zip(hub.state_dict().values(), local.state_dict().values()))
        assert hub.generation_config.num_beams == local.generation_config.num_beams == 2
        tokens = AutoTokenizer.from_pretrained(folder).convert_ids_to_tokens(
            AutoTokenizer.from_pretrained(folder)("A man is walking.").input_ids
        )
        decoded = [ctranslate2.Translator(str(d)).translate_batch([tokens], beam_size=1)[0].hypotheses[0]
                   for d in (folder / "ctranslate2", ct2)]  # fmt: skip
        assert decoded[0] == decoded[1]
        card = ModelCard.load(folder / "README.md")
        assert f'model_id = "{REPO_ID}"' in card.text  # the usage example names the repository
        assert card.data.pipeline_tag == "translation"
    assert not folder.exists()
    assert digests(final) == kept and f'model_id = "{final}"' in (final / "README.md").read_text()


def test_dry_run_lists_what_would_be_uploaded(tiny_run):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert push_main([str(tiny_run / "final"), REPO_ID, "--dry_run"]) == 0
    listed = dict(line.split("\t") for line in out.getvalue().splitlines())
    assert listed["ctranslate2/model.bin"] == str(tiny_run / "final_ct2" / "model.bin")
    assert listed["model.safetensors"] == str(tiny_run / "final" / "model.safetensors")


@pytest.fixture(scope="module")
def refused(tiny_run, multi30k_small, tmp_path_factory) -> tuple[Path, dict[str, ScriptRun]]:
    """(the run folder, each refused upload by name): a run that cannot push, then push_to_hub.py on tiny_run's
    final/ without a token, offline and to an endpoint that does not answer. huggingface_hub reads HF_HOME (a folder
    without a cached token), HF_HUB_OFFLINE and HF_ENDPOINT at import: one interpreter per setting of them, the
    token set or not for each script."""
    root = tmp_path_factory.mktemp("hub")
    push = [str(tiny_run / "final"), REPO_ID]
    train = ["--data_dir", str(multi30k_small), *FAST_RUN, "--output_dir", str(root / "run"), "--max_steps", "2"]
    train += ["--eval_steps", "2", "--save_steps", "2", "--push_to_hub", "--hub_model_id", REPO_ID]
    train += ["--eval_max_samples", "4", "--max_new_tokens", "4", "--test_split", "none"]  # what the upload needs
    no_login = {"HF_HOME": str(root / "hf")}
    runs = scripts_in_one_process(
        {
            "run": ("train.py", train, {}),
            "no token": ("push_to_hub.py", push, {}),
            # huggingface_hub's real create_repo call, refused at the (local, closed) endpoint
            "ConnectError": ("push_to_hub.py", push, {"HF_TOKEN": TOKEN}),
        },
        env={**no_login, "HF_HUB_OFFLINE": "0", "HF_ENDPOINT": f"http://127.0.0.1:{free_port()}"},
    )
    offline = {"offline": ("push_to_hub.py", push, {"HF_TOKEN": TOKEN})}
    return root / "run", runs | scripts_in_one_process(offline, env={**no_login, "HF_HUB_OFFLINE": "1"})


def test_an_upload_that_cannot_happen_is_one_line_and_loses_nothing(tiny_run, refused):
    final = tiny_run / "final"
    kept = digests(final)
    _, runs = refused
    cases = {
        "no token": "no Hugging Face token (set HF_TOKEN or run `hf auth login`)",
        "offline": "offline mode (HF_HUB_OFFLINE=1)",
        "ConnectError": "ConnectError",
    }
    for name, expected in cases.items():
        res = runs[name]
        lines = res.stderr.strip().splitlines()
        assert res.returncode == 2 and len(lines) == 1, res.stderr[-2000:]
        assert lines[0].startswith(f"error: push to {REPO_ID}") and expected in lines[0]
        assert f"upload it later with: python scripts/push_to_hub.py {final} {REPO_ID}" in lines[0]
        assert TOKEN not in res.stdout + res.stderr
    assert digests(final) == kept


def test_a_run_that_cannot_push_writes_everything_then_fails_in_one_line(refused):
    out, runs = refused
    res = runs["run"]
    assert res.returncode == 2, res.stderr[-3000:]
    errors = [line for line in res.stderr.splitlines() if line.startswith("error")]
    assert len(errors) == 1 and errors[0].startswith(f"error: push to {REPO_ID}: no Hugging Face token")
    assert res.stderr.startswith("warning: --push_to_hub: no Hugging Face token")  # said before training
    assert (out / "final" / "model.safetensors").is_file() and (out / "final" / "README.md").is_file()
    assert "environment" in (out / "results.json").read_text()
