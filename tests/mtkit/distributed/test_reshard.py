"""Resuming a sharded checkpoint on another number of processes (mtkit/distributed/reshard.py): a 2-process ZeRO-3
checkpoint goes on on 3 processes (in the slow tier, FSDP from 2 to 3 and ZeRO-2 from 2 to 1), and its optimizer
state really carried over: the update made after the resume is checked against torch's AdamW formulas applied to the
saved state, both read back whole by the libraries' own converters (DeepSpeed's ``ds_to_universal``, torch's
``dcp_to_torch_save``)."""

from __future__ import annotations

import argparse
import math
import shutil
from pathlib import Path

import pytest
import torch
from testing_utils import FAST_RUN, LANGS, finetune_args, greedy, launch, rows

from mtkit.errors import UserError

NAMES = {"de": "German", "es": "Spanish", "fr": "French", "it": "Italian", "pt": "Portuguese"}


def instruction(row: dict) -> str:
    """The source as the ``instruction`` prompt put it to the model."""
    return f'Translate the following sentence from English to {NAMES[row["lang"]]}: "{row["source"]}"'


def universal(checkpoint: Path, out: Path) -> tuple[dict[str, dict[str, torch.Tensor]], dict, set[int]]:
    """Every parameter's fp32 weights and Adam moments in a ZeRO checkpoint, the optimizer's hyper-parameters and its
    step counts, as DeepSpeed's ``ds_to_universal`` writes them out whole (whatever the number of processes that
    saved them)."""
    from deepspeed.checkpoint import ds_to_universal

    args = argparse.Namespace(
        input_folder=str(checkpoint / "pytorch_model"), output_folder=str(out / "pytorch_model"),
        num_extract_workers=1, num_merge_workers=1, keep_temp_folder=False, strict=True, inject_missing_state=True,
    )  # fmt: skip
    ds_to_universal.main(args)
    zero = out / "pytorch_model" / "zero"
    folders = [d for d in zero.iterdir() if (d / "exp_avg.pt").is_file()]  # ZeRO-1/2: tied copies hold fp32 only

    def read(path: Path) -> torch.Tensor:
        saved = torch.load(path, weights_only=False)
        return torch.as_tensor(saved["param"] if isinstance(saved, dict) else saved).double()

    params = {d.name: {k: read(d / f"{k}.pt") for k in ("fp32", "exp_avg", "exp_avg_sq")} for d in folders}
    optim = torch.load(zero / "optimizer_state.pt", weights_only=False)
    if "optimizer_state_dict" in optim:  # ZeRO-3: one step count for the flat group
        optim = optim["optimizer_state_dict"]
        steps = {int(s["step"]) for s in optim["state"].values()}
    else:  # ZeRO-1/2: one per parameter
        steps = {int(read(d / "step.pt")) for d in folders}
    return params, optim["param_groups"][0], steps


def test_a_two_process_zero3_checkpoint_resumes_on_three_with_its_optimizer_state(zero3_run, tiny_t5, tmp_path):
    out = tmp_path / "run"
    shutil.copytree(zero3_run, out, symlinks=True)  # the shared run stays as it is for the other tests
    # Evaluation at update 5 on the fixture's 10 rows in five languages: 3 processes get unequal call counts if
    # sentences were dealt (tests/mtkit/train/test_rank_parity.py), so this resume decodes in step too (a few tokens
    # each: every decoding step under ZeRO-3 is a collective; a resume may change the decoding).
    res = launch(
        "deepspeed_zero3",
        *finetune_args(tiny_t5, out, "--max_steps", "5", "--eval_steps", "4", "--save_steps", "4",
                       "--no_load_best_model_at_end", "--eval_max_samples", "10", "--mixed_precision", "no",
                       "--max_new_tokens", "6"),
        processes=3, timeout=900,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    assert "the checkpoint was written by 2 process(es), this run has 3" in res.stdout, res.stdout[-3000:]
    assert "universal checkpoint" in res.stdout
    root = out / "checkpoints"
    assert not list(root.glob(".universal-*")), "the converted copy is removed once loaded"
    assert len(list((root / "step-0000005" / "pytorch_model").glob("*optim_states.pt"))) == 3
    assert (out / "final" / "model.safetensors").is_file()
    # the 3 processes decoded in step what the exported weights decode in one plain process, every row
    translated = rows(out / "translations" / "valid-step5.jsonl")
    assert len(translated) >= 10 and {r["lang"] for r in translated} == set(LANGS)
    hypotheses = greedy(out / "final", [instruction(r) for r in translated], max_new_tokens=6)
    assert hypotheses == [r["hypothesis"] for r in translated]

    before, group, steps_before = universal(root / "step-0000004", tmp_path / "u4")
    after, _, steps_after = universal(root / "step-0000005", tmp_path / "u5")
    assert steps_before == {4} and steps_after == {5}  # {1} if the optimizer had started afresh
    assert_adam_update(before, after, group, step=5)


def assert_adam_update(before: dict, after: dict, group: dict, step: int) -> None:
    """``after`` (each parameter's fp32 weights, ``exp_avg``, ``exp_avg_sq``) is update ``step`` made by torch's
    AdamW with hyper-parameters ``group`` (the lr of that update) from ``before``: the gradient is unknown, but the
    two moments must agree on it (m' = b1 m + (1-b1) g, v' = b2 v + (1-b2) g^2), and the weights must follow from
    m' and v'. An optimizer started afresh at the resume (m = v = 0, step 1) fails both."""
    lr, wd, eps, (b1, b2) = group["lr"], group["weight_decay"], group["eps"], group["betas"]
    assert before.keys() == after.keys() and len(before) > 10
    g_from_m, g2_from_v, predicted, actual, previous = [], [], [], [], []
    for name, b in before.items():
        a = after[name]
        g_from_m.append(((a["exp_avg"] - b1 * b["exp_avg"]) / (1 - b1)).flatten())
        g2_from_v.append(((a["exp_avg_sq"] - b2 * b["exp_avg_sq"]) / (1 - b2)).flatten())
        denom = a["exp_avg_sq"].sqrt() / math.sqrt(1 - b2**step) + eps
        predicted.append((b["fp32"] * (1 - lr * wd) - lr / (1 - b1**step) * a["exp_avg"] / denom).flatten())
        actual.append(a["fp32"].flatten())
        previous.append(b["fp32"].flatten())
    g2_m, g2_v = torch.cat(g_from_m) ** 2, torch.cat(g2_from_v)
    assert g2_v.norm() > 0  # a real update
    assert (g2_m - g2_v).norm() / g2_v.norm() < 1e-4, "the saved moments are not those the update started from"
    actual, moved = torch.cat(actual), (torch.cat(actual) - torch.cat(previous)).abs().max().item()
    assert moved > 1e-4
    torch.testing.assert_close(actual, torch.cat(predicted), rtol=0, atol=moved * 1e-3)


def fsdp_state(checkpoint: Path, tmp: Path) -> tuple[dict[str, dict[str, torch.Tensor]], dict, set[int]]:
    """Every parameter's weights and Adam moments in an FSDP checkpoint (its torch.distributed.checkpoint folders
    read back whole by torch's converter), the optimizer's hyper-parameters and its step counts."""
    from torch.distributed.checkpoint.format_utils import dcp_to_torch_save

    tmp.mkdir()
    for folder in ("pytorch_model_fsdp_0", "optimizer_0"):
        dcp_to_torch_save(str(checkpoint / folder), str(tmp / f"{folder}.pt"))
    model = torch.load(tmp / "pytorch_model_fsdp_0.pt", weights_only=False)["model"]
    optim = torch.load(tmp / "optimizer_0.pt", weights_only=False)["optimizer"]
    params = {
        name: {"fp32": model[name].double(), "exp_avg": s["exp_avg"].double(), "exp_avg_sq": s["exp_avg_sq"].double()}
        for name, s in optim["state"].items()
    }
    return params, optim["param_groups"][0], {int(s["step"]) for s in optim["state"].values()}


@pytest.mark.slow  # two FSDP launches; the default tier keeps the ZeRO-3 resume above (same code path in the trainer)
def test_a_two_process_fsdp_checkpoint_resumes_on_three_with_its_optimizer_state(multi30k_small, tmp_path):
    out = tmp_path / "run"

    def run(processes: int, steps: str):
        res = launch(
            "fsdp", "--mixed_precision", "no", "--no_load_best_model_at_end", "--data_dir", str(multi30k_small),
            *FAST_RUN, "--output_dir", str(out), "--max_steps", steps, "--eval_steps", "2", "--save_steps", "2",
            "--eval_max_samples", "8", "--max_new_tokens", "6", "--num_beams", "1", "--test_split", "none",
            script="tests/mtkit/distributed/fsdp_on_cpu.py", processes=processes,
        )  # fmt: skip
        assert res.returncode == 0, res.stderr[-3000:]
        return res

    run(2, "2")
    res = run(3, "3")
    assert "the checkpoint was written by 2 process(es), this run has 3: the FSDP" in res.stdout, res.stdout[-3000:]
    root = out / "checkpoints"
    assert len(list((root / "step-0000003").glob("random_states_*.pkl"))) == 3
    before, group, steps_before = fsdp_state(root / "step-0000002", tmp_path / "s2")
    after, _, steps_after = fsdp_state(root / "step-0000003", tmp_path / "s3")
    assert steps_before == {2} and steps_after == {3}  # {1} if the optimizer had started afresh
    assert_adam_update(before, after, group, step=3)


@pytest.mark.slow  # the default tier keeps the ZeRO-3 resume; this adds the ZeRO-1/2 branch of ds_to_universal
def test_a_two_process_zero2_checkpoint_resumes_on_one_with_its_optimizer_state(multi30k_small, tmp_path):
    out = tmp_path / "zero2"
    common = [
        "--data_dir", str(multi30k_small), *FAST_RUN, "--output_dir", str(out), "--save_steps", "2",
        "--eval_steps", "100", "--test_split", "none", "--eval_max_samples", "2", "--max_new_tokens", "4",
        "--mixed_precision", "no",
    ]  # fmt: skip
    res = launch("deepspeed_zero2", *common, "--max_steps", "2")
    assert res.returncode == 0, res.stderr[-3000:]
    res = launch("deepspeed_zero2", *common, "--max_steps", "3", processes=1)  # a cluster back smaller
    assert res.returncode == 0, res.stderr[-3000:]
    assert "the checkpoint was written by 2 process(es), this run has 1: the ZeRO-2" in res.stdout, res.stdout
    root = out / "checkpoints"
    before, group, steps_before = universal(root / "step-0000002", tmp_path / "u2")
    after, _, steps_after = universal(root / "step-0000003", tmp_path / "u3")
    assert steps_before == {2} and steps_after == {3}
    assert_adam_update(before, after, group, step=3)


def test_a_checkpoint_deepspeed_cannot_convert_is_one_line_and_leaves_nothing(tmp_path):
    from accelerate import Accelerator

    from mtkit.distributed.reshard import universal_copy

    checkpoint = tmp_path / "checkpoints" / "step-0000004"
    (checkpoint / "pytorch_model").mkdir(parents=True)  # no ZeRO files in it: DeepSpeed's converter fails
    with pytest.raises(UserError, match=r"cannot convert .*step-0000004 to DeepSpeed's universal checkpoint"):
        universal_copy(Accelerator(cpu=True), checkpoint)
    assert sorted(p.name for p in checkpoint.parent.iterdir()) == ["step-0000004"]
