"""A run without DeepSpeed never imports it: its import prints DeepSpeed's "Setting accelerator to CPU" warning
(and costs seconds), which used to appear in the middle of a plain run, at its first evaluation. A DeepSpeed run's
settings are checked for what its end needs before anything is written."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from testing_utils import FAST_RUN, REPO, launch, run_script, train_in_process

from mtkit.config import parse_config
from mtkit.distributed.deepspeed import GATHER, check_deepspeed_config

#: a plain run in a fresh interpreter (other tests' imports cannot interfere), then what it left in sys.modules
PLAIN_RUN = """
import sys
import pytest
from testing_utils import FAST_RUN, train_in_process
res = train_in_process(*FAST_RUN, *sys.argv[1:])
assert res.returncode == 0, res.stderr[-3000:]
print("deepspeed imported:", "deepspeed" in sys.modules)
print("warning printed:", "Setting accelerator" in res.stdout + res.stderr)
"""


def test_a_plain_run_leaves_deepspeed_unimported(multi30k_small, tmp_path):
    assert importlib.util.find_spec("deepspeed") is not None  # installed: the check below is not vacuous
    args = ["--data_dir", str(multi30k_small), "--output_dir", str(tmp_path / "run"), "--max_steps", "2"]
    args += ["--eval_steps", "1", "--save_steps", "2", "--export_ct2", "int8"]
    res = run_script("-", sys.executable, "-c", PLAIN_RUN, *args, env={"PYTHONPATH": str(REPO / "tests")})
    assert res.returncode == 0, res.stderr[-3000:]
    assert "deepspeed imported: False" in res.stdout and "warning printed: False" in res.stdout, res.stdout
    assert (tmp_path / "run" / "final" / "model.safetensors").is_file()
    assert (tmp_path / "run" / "final_ct2" / "model.bin").is_file()


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
