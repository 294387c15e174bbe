"""A run without DeepSpeed never imports it: its import prints DeepSpeed's "Setting accelerator to CPU" warning
(and costs seconds), which used to appear in the middle of a plain run, at its first evaluation. A DeepSpeed run's
settings are checked for what its end needs before anything is written. Under ZeRO-3 the model is created sharded
within one scope, and every model created outside it is a plain one."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from testing_utils import FAST_RUN, REPO, free_port, launch, run_script, train_in_process

from mtkit.config import parse_config
from mtkit.distributed.deepspeed import GATHER, check_deepspeed_config


def test_a_plain_run_leaves_deepspeed_unimported(tiny_run):
    """The shared plain run (tests/conftest.py: ``tiny_run``, its own interpreter: evaluated, tested, exported and
    converted to CTranslate2) listed each module its interpreter imported (``PYTHONPROFILEIMPORTTIME``): DeepSpeed is
    not among them, and its warning was not printed."""
    assert importlib.util.find_spec("deepspeed") is not None  # installed: the check below is not vacuous
    stdout, stderr = (tiny_run.with_suffix(suffix).read_text(encoding="utf-8") for suffix in (".stdout", ".stderr"))
    imported = {line.rsplit("|", 1)[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")}
    assert {"torch", "transformers", "accelerate", "ctranslate2", "mtkit.train.trainer"} <= imported  # the whole list
    assert not [name for name in imported if name.split(".")[0] == "deepspeed"]
    assert "Setting accelerator" not in stdout + stderr
    assert (tiny_run / "final_ct2" / "model.bin").is_file()


#: one ZeRO-3 process: the accelerator and the run's model built as the trainer builds them, then a model loaded after
SHARDED_SCOPE = """
import sys
import torch
from safetensors.torch import load_file
from transformers import AutoModelForSeq2SeqLM
from transformers.integrations.deepspeed import is_deepspeed_zero3_enabled
from mtkit.config import parse_config
from mtkit.distributed.deepspeed import sharded_creation, zero_stage
from mtkit.train.build import build_accelerator, build_model
model_dir, out = sys.argv[1:]
cfg = parse_config(["--model_name_or_path", model_dir, "--output_dir", out])
acc = build_accelerator(cfg)
print("stage:", zero_stage(acc), "registered before:", is_deepspeed_zero3_enabled())
with sharded_creation(acc):
    print("registered within:", is_deepspeed_zero3_enabled())
    model = build_model(cfg, None, zero_stage(acc))
print("run's model sharded:", all(hasattr(p, "ds_id") for p in model.parameters()))
later = AutoModelForSeq2SeqLM.from_pretrained(model_dir, dtype=torch.float32)
state, saved = later.state_dict(), load_file(f"{model_dir}/model.safetensors")
print("registered after:", is_deepspeed_zero3_enabled())
print("later model sharded:", any(hasattr(p, "ds_id") for p in later.parameters()))
print("later model whole:", all(torch.equal(state[k], w.float()) for k, w in saved.items()))
"""


def test_zero3_creates_the_run_s_model_sharded_and_every_later_model_plain(tiny_t5, tmp_path):
    """accelerate registers ZeRO-3 with transformers when it creates the Accelerator, for the life of the process;
    the run's model is created sharded (zero.Init) within ``sharded_creation`` alone, and a model loaded afterwards in
    the same process (as the bias report loads final/) is whole: its weights equal to the file's."""
    env = deepspeed_env(str(REPO / "ds_configs" / "zero3.json"), PYTHONPATH=str(REPO), RANK="0", LOCAL_RANK="0")
    env |= {"WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": free_port()}
    res = run_script("-", sys.executable, "-c", SHARDED_SCOPE, str(tiny_t5), str(tmp_path / "run"), env=env)
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stdout.splitlines()[-6:] == [
        "stage: 3 registered before: False",
        "registered within: True",
        "run's model sharded: True",
        "registered after: False",
        "later model sharded: False",
        "later model whole: True",
    ], res.stdout


def no_gather(tmp_path) -> Path:
    """Our ZeRO-3 JSON less the one key the end of the run needs, as a user's own file often is."""
    config = json.loads((REPO / "ds_configs" / "zero3.json").read_text())
    del config["zero_optimization"][GATHER]
    path = tmp_path / "my_zero3.json"
    path.write_text(json.dumps(config))
    return path


def no_gather_line(path: Path) -> str:
    return (
        f"error: deepspeed_config_file {path}: ZeRO-3 without {GATHER}, so the weights could not be gathered into "
        f'final/ at the end of the run; add "{GATHER}": true to its zero_optimization'
    )


def deepspeed_env(config_file: str = "none", **extra: str) -> dict[str, str]:
    """The variables accelerate's launcher sets for a DeepSpeed worker (those the settings are read from)."""
    return {"ACCELERATE_USE_DEEPSPEED": "true", "ACCELERATE_DEEPSPEED_CONFIG_FILE": config_file, **extra}


def refusal(res) -> str:
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), res.stderr[-3000:]
    return lines[0]


def test_what_the_end_of_a_zero3_run_needs_is_checked_before_writing(multi30k_small, tmp_path, monkeypatch):
    """A ZeRO-3 JSON without stage3_gather_16bit_weights_on_model_save (the export at the end of the run could not
    gather the weights), an inline ZeRO-3 config without zero3_save_16bit_model, and a JSON whose
    gradient_accumulation_steps contradicts the flag: one line each, exit status 2, no run folder. The repository's
    own ZeRO-3 JSON and the inline config with the flag pass the check."""
    args = ["--data_dir", str(multi30k_small), *FAST_RUN]
    path = no_gather(tmp_path)
    out = tmp_path / "run"
    line = refusal(train_in_process(*args, "--output_dir", str(out), env=deepspeed_env(str(path))))
    assert line == no_gather_line(path)
    assert not out.exists()
    inline = deepspeed_env(ACCELERATE_DEEPSPEED_ZERO_STAGE="3")  # accelerate launch --use_deepspeed --zero_stage 3
    line = refusal(train_in_process(*args, "--output_dir", str(out), env=inline))
    assert line.endswith("add zero3_save_16bit_model: true") and not out.exists()
    inline["ACCELERATE_DEEPSPEED_ZERO3_SAVE_16BIT_MODEL"] = "true"
    accumulation = {**inline, "ACCELERATE_GRADIENT_ACCUMULATION_STEPS": "4"}  # a launcher config's own value
    line = refusal(train_in_process(*args, "--output_dir", str(out), env=accumulation))
    assert "gradient_accumulation_steps 4 " in line and "--gradient_accumulation_steps 1;" in line
    assert not out.exists()
    cfg = parse_config(args)
    for passing in (deepspeed_env(str(REPO / "ds_configs" / "zero3.json")), inline):  # the repository's, fixed
        for key, value in passing.items():
            monkeypatch.setenv(key, value)
        check_deepspeed_config(cfg)


@pytest.mark.slow  # ~30 s of launcher and imports; the default tier keeps the same refusal in process (above)
def test_a_launch_with_a_json_without_the_gather_flag_stops_at_once(multi30k_small, tmp_path):
    """The same refusal through the launcher, two processes: each says the one line and starts nothing."""
    path, out = no_gather(tmp_path), tmp_path / "run"
    args = ["--data_dir", str(multi30k_small), *FAST_RUN, "--output_dir", str(out)]
    res = launch("deepspeed_zero3", *args, launcher_args=("--deepspeed_config_file", str(path)), timeout=300)
    errors = [line for line in res.stderr.splitlines() if line.startswith("error: ")]
    assert errors == [no_gather_line(path)] * 2, res.stderr[-3000:]
    assert res.returncode != 0 and "exitcode  : 2" in res.stderr and not out.exists()
    assert "model transformer-tiny" not in res.stdout  # no model was built
