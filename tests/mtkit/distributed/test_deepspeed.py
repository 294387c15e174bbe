"""A run without DeepSpeed never imports it: its import prints DeepSpeed's "Setting accelerator to CPU" warning
(and costs seconds), which used to appear in the middle of a plain run, at its first evaluation."""

from __future__ import annotations

import importlib.util
import sys

from testing_utils import REPO, run_script

#: a plain run in a fresh interpreter (other tests' imports cannot interfere), then what it left in sys.modules
PLAIN_RUN = """
import sys
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
