"""FSDP (accelerate_configs/fsdp.yaml, FSDP2) with two processes, forced on the CPU
(tests/mtkit/distributed/fsdp_on_cpu.py): a BART preset (four tied embeddings) and a tiny T5 (three) train with
sharded checkpoints, decode sharded, and their checkpoints export to the same model as final/; the BART run resumes
exactly (the slow tier)."""

from __future__ import annotations

import shutil

import pytest
import torch
from safetensors.torch import load_file
from testing_utils import FAST_RUN, MTGENEVAL, finetune_args, greedy, launch, rows

from mtkit.cli.export_model import main as export_main


def fsdp(*args: str):
    res = launch(
        "fsdp", "--mixed_precision", "no", "--no_load_best_model_at_end", *args,
        script="tests/mtkit/distributed/fsdp_on_cpu.py",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    return res


def assert_sharded_checkpoint(out) -> None:
    ckpt = out / "checkpoints" / "checkpoint_last"
    names = {p.name for p in ckpt.iterdir()}
    assert {"pytorch_model_fsdp_0", "optimizer_0", "random_states_0.pkl", "random_states_1.pkl"} <= names
    assert "model.safetensors" not in names  # sharded, not gathered, while training


def same_weights(a, b) -> bool:
    x, y = load_file(a / "final" / "model.safetensors"), load_file(b / "final" / "model.safetensors")
    return x.keys() == y.keys() and all(torch.equal(x[k], y[k]) for k in x)


def assert_export_equals_final(out, tmp_path, capsys) -> None:
    export_main([str(out / "checkpoints" / "checkpoint_last"), str(tmp_path / "exported")])
    assert "FSDP shards in pytorch_model_fsdp_0/" in capsys.readouterr().out
    exported, final = (
        load_file(tmp_path / "exported" / "model.safetensors"),
        load_file(out / "final" / "model.safetensors"),
    )
    assert exported.keys() == final.keys() and all(torch.equal(exported[k], final[k]) for k in final)


def train_bart(data, out, steps: int):
    """The BART preset on the Multi30k slice by 2 FSDP processes, evaluated and checkpointed every 2 updates."""
    return fsdp(
        "--data_dir", str(data), *FAST_RUN, "--output_dir", str(out), "--max_steps", str(steps),
        "--eval_steps", "2", "--save_steps", "2", "--eval_max_samples", "8", "--max_new_tokens", "6",
        "--num_beams", "1", "--test_split", "none",
    )  # fmt: skip


@pytest.fixture(scope="module")
def bart_run(multi30k_small, tmp_path_factory):
    """:func:`train_bart` to update 2; what the launch printed is in ``<run>.stdout``."""
    out = tmp_path_factory.mktemp("fsdp") / "run"
    out.with_suffix(".stdout").write_text(train_bart(multi30k_small, out, 2).stdout, encoding="utf-8")
    return out


def test_bart_preset_trains_decodes_and_exports(bart_run, tmp_path, capsys):
    stdout = bart_run.with_suffix(".stdout").read_text(encoding="utf-8")
    assert "2 process(es) on cpu" in stdout and ", FSDP, " in stdout
    assert_sharded_checkpoint(bart_run)
    # the translations made sharded, during training, are those of the exported weights in one plain process
    translated = rows(bart_run / "translations" / "valid-step2.jsonl")
    assert greedy(bart_run / "final", [r["source"] for r in translated], max_new_tokens=6) == [
        r["hypothesis"] for r in translated
    ]
    assert_export_equals_final(bart_run, tmp_path, capsys)


@pytest.mark.slow  # two more 2-process launches; the default tier keeps the run above (FSDP, 2 processes: train,
# sharded checkpoints, decoding sharded, export)
def test_bart_preset_resumes_exactly(bart_run, multi30k_small, tmp_path):
    # the 2-update run relaunched to update 4 goes on from its update-2 checkpoint sharded and ends with the weights
    # of a run straight to update 4
    resumed, straight = tmp_path / "resumed", tmp_path / "straight"
    shutil.copytree(bart_run, resumed, symlinks=True)
    shutil.rmtree(resumed / "final")
    assert (resumed / "checkpoints" / "step-0000002" / "manifest.json").is_file()
    res = train_bart(multi30k_small, resumed, 4)
    assert "resuming from" in res.stdout and "step-0000002" in res.stdout
    train_bart(multi30k_small, straight, 4)
    assert same_weights(straight, resumed)


@pytest.mark.slow  # the BART test covers the FSDP path; this adds T5's three tied holders
def test_t5_fine_tunes_and_exports(tiny_t5, tmp_path, capsys):
    if not MTGENEVAL.is_dir():
        pytest.skip("../shared/data/mt-geneval is not there")
    out = tmp_path / "t5"
    fsdp(*finetune_args(tiny_t5, out, "--max_steps", "2", "--eval_steps", "2", "--save_steps", "2",
                        "--eval_max_samples", "10"))  # fmt: skip
    assert_sharded_checkpoint(out)
    translated = rows(out / "translations" / "valid-step2.jsonl")
    name = {"de": "German", "es": "Spanish", "fr": "French", "it": "Italian", "pt": "Portuguese"}
    inputs = [
        f'Translate the following sentence from English to {name[r["lang"]]}: "{r["source"]}"' for r in translated
    ]
    assert greedy(out / "final", inputs) == [r["hypothesis"] for r in translated]
    assert_export_equals_final(out, tmp_path, capsys)


def test_gradients_are_reduced_in_fp32_whatever_accelerates_bf16_policy_says():
    import torch
    from torch.distributed.fsdp import MixedPrecisionPolicy

    from mtkit.distributed.fsdp import fp32_reduce

    bf16 = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.bfloat16, output_dtype=torch.bfloat16)
    policy = fp32_reduce(bf16)
    assert policy.reduce_dtype == torch.float32
    assert (policy.param_dtype, policy.output_dtype) == (torch.bfloat16, torch.bfloat16)
    assert fp32_reduce(None) is None and fp32_reduce(MixedPrecisionPolicy()) == MixedPrecisionPolicy()
