"""The loop on a CUDA GPU (``make test-gpu``; skipped without one): bf16 training of the paper's base model,
no host-device synchronisation inside updates, DeepSpeed ZeRO-2/3 and FSDP on one GPU with export and reload, and the
step benchmark end to end. Written to run unchanged on any machine with one GPU and ../shared/data (or .gpu/data)."""

import json

import pytest
import torch
from testing_utils import FAST_RUN, launch, run_script
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

from mtkit.decode.generate import generate_translations
from mtkit.model.flops import peak_tflops_of

pytestmark = pytest.mark.gpu

#: transformer-base (6+6, d512) in bf16 on the Multi30k slice: a few dozen updates of 4096 tokens.
BASE_BF16 = [
    *FAST_RUN, "--model", "transformer-base", "--vocab_size", "8000", "--max_tokens", "4096",
    "--mixed_precision", "bf16", "--learning_rate", "7e-4", "--warmup_steps", "20",
]  # fmt: skip


def metrics(run) -> list[dict]:
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


def test_bf16_transformer_base_learns_on_one_gpu(multi30k_small, tmp_path):
    out = tmp_path / "base"
    res = run_script(
        "train.py", "--data_dir", str(multi30k_small), *BASE_BF16, "--output_dir", str(out),
        "--max_steps", "60", "--eval_steps", "60", "--logging_steps", "10",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    assert "on cuda" in res.stdout and "precision bf16" in res.stdout
    train = [r for r in metrics(out) if "loss" in r]
    assert train[-1]["loss"] < train[0]["loss"] - 1.0
    for r in train:
        assert r["peak_mem_gb"] > 0 and r["tflops"] > 0
        if peak_tflops_of(torch.cuda.get_device_name()) is not None:  # MFU wherever the GPU is in the table
            assert 0 < r["mfu"] < 1
    model = AutoModelForSeq2SeqLM.from_pretrained(out / "final").cuda()
    hyps = generate_translations(model, AutoTokenizer.from_pretrained(out / "final"), ["A man is walking."])
    assert isinstance(hyps[0], str)


def test_no_device_sync_inside_updates(multi30k_small, tmp_path):
    """CUDA's sync debug mode in "error": any operation that waits for the device inside an update raises, ours and
    the libraries' alike (transformers' padding check is avoided by the 4-D masks)."""
    from accelerate.state import AcceleratorState, GradientState

    from mtkit.config import parse_config
    from mtkit.train.trainer import Trainer

    AcceleratorState._reset_state(reset_partial_state=True)
    GradientState._reset_state()
    cfg = parse_config(
        ["--data_dir", str(multi30k_small), *BASE_BF16, "--output_dir", str(tmp_path / "sync"), "--test_split", "none",
         "--gradient_accumulation_steps", "2"]
    )  # fmt: skip
    trainer = Trainer(cfg)
    batches = trainer.micro_batches()
    trainer.update([next(batches), next(batches)])
    groups = [[next(batches), next(batches)] for _ in range(3)]
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        for group in groups:
            trainer.update(group)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    assert trainer.throughput.report()["loss"] > 0
    AcceleratorState._reset_state(reset_partial_state=True)
    GradientState._reset_state()


@pytest.mark.parametrize("strategy", ["deepspeed_zero2", "deepspeed_zero3", "fsdp"])
def test_sharded_strategies_on_one_gpu_export_a_model_that_reloads(multi30k_small, tmp_path, strategy):
    out = tmp_path / strategy
    res = launch(
        strategy, "--data_dir", str(multi30k_small), *BASE_BF16, "--output_dir", str(out), "--max_steps", "20",
        "--eval_steps", "20", "--logging_steps", "10", "--test_split", "none", processes=1, precision="bf16",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    assert ("FSDP" if strategy == "fsdp" else "DEEPSPEED") in res.stdout
    train = [r for r in metrics(out) if "loss" in r]
    assert train[-1]["loss"] < train[0]["loss"]
    model = AutoModelForSeq2SeqLM.from_pretrained(out / "final")
    n = sum(p.numel() for p in model.parameters())
    assert f"{n / 1e6:.1f}M parameters" in res.stdout  # consolidated, full-size weights


def test_benchmark_step_end_to_end(multi30k_small, tmp_path):
    report = tmp_path / "bench.json"
    res = run_script(
        "benchmark_step.py", "--data_dir", str(multi30k_small), *BASE_BF16, "--output_dir", str(tmp_path / "bench"),
        "--steps", "10", "--warmup", "3", "--json", str(report),
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    record = json.loads(report.read_text())
    assert record["device"].startswith("cuda") and record["precision"] == "bf16"
    assert record["step_ms"] > 0 and record["peak_mem_gb"] > 0 and record["tflops"] > 0
    assert "| run |" in res.stdout


@pytest.mark.parametrize("checkpointing", [False, True])
def test_flan_t5_base_shape_under_zero3_bf16_on_one_gpu(tmp_path, checkpointing):
    """flan-t5-base's architecture (random weights: no hub here) fine-tuned on MT-GenEval's five languages with
    the instruction prompt under ZeRO-3 bf16, with and without gradient checkpointing; the export reloads."""
    from testing_utils import MTGENEVAL

    if not MTGENEVAL.is_dir():
        pytest.skip("../shared/data/mt-geneval is not there")
    out = tmp_path / "flan"
    res = launch(
        "deepspeed_zero3",
        "--mtgeneval_dir", str(MTGENEVAL), "--target_langs", "de,es,fr,it,pt", "--prompt", "instruction",
        "--model", "flan-t5-base", "--tokenizer_type", "unigram", "--vocab_size", "8000", "--max_tokens", "8192",
        "--learning_rate", "1e-4", "--warmup_steps", "5", "--max_steps", "20", "--eval_steps", "20",
        "--eval_max_samples", "50", "--max_new_tokens", "32", "--num_beams", "1", "--report_to", "none",
        "--disable_tqdm", "--logging_steps", "10", "--test_split", "none", "--output_dir", str(out),
        *(["--gradient_checkpointing"] if checkpointing else []), processes=1, precision="bf16",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    assert "created sharded across processes" in res.stdout and "precision bf16" in res.stdout
    evals = [r for r in metrics(out) if "valid_loss" in r]
    assert "valid_de_bleu" in evals[-1] and "valid_bleu_gap" in evals[-1]
    model = AutoModelForSeq2SeqLM.from_pretrained(out / "final")
    assert model.config.model_type == "t5" and model.config.d_model == 768
