"""End-to-end runs of the training loop on a slice of Multi30k: learning, outputs, resume, 2 processes."""

import json
import math
import os
import subprocess

import pytest
import torch
from safetensors.torch import load_file
from testing_utils import (
    BIN,
    FAST_RUN,
    OFFLINE_ENV,
    REPO,
    free_port,
    launch,
    launch_command,
    train_in_process,
    wait_for_port,
)
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer, T5Config, T5ForConditionalGeneration

from mtkit.allocator import GPU_MARKERS, tcmalloc_library


def records(run, key):
    lines = (run / "metrics.jsonl").read_text().splitlines()
    return [(r["step"], r[key]) for r in map(json.loads, lines) if key in r]


def noam(step, peak=2e-3, warmup=10):
    return peak * min(step / warmup, math.sqrt(warmup / step))


def test_short_run_learns_and_writes_every_output(tiny_run):
    loss = records(tiny_run, "loss")
    assert [s for s, _ in loss] == [5, 10, 15, 20, 25, 30, 35, 40]
    assert loss[-1][1] < loss[0][1] - 1.0  # label-smoothed loss falls by more than a nat
    valid = records(tiny_run, "valid_loss")
    assert [s for s, _ in valid] == [20, 40] and valid[1][1] < valid[0][1]
    for step, lr in records(tiny_run, "lr"):  # the schedule counts optimizer updates
        assert lr == pytest.approx(noam(step))
    assert records(tiny_run, "test_bleu")
    for key in ("src_tok_s", "tgt_tok_s", "sent_s", "tflops", "mfu", "padding", "grad_norm"):
        assert len(records(tiny_run, key)) == 8 and all(v > 0 for _, v in records(tiny_run, key)), key
    for (_, tflops), (_, mfu) in zip(records(tiny_run, "tflops"), records(tiny_run, "mfu")):
        assert mfu == pytest.approx(tflops / 1.0)  # the fixture's --peak_tflops 1
    assert all(0 < v < 0.5 for _, v in records(tiny_run, "padding"))

    final = tiny_run / "final"
    assert {"config.json", "generation_config.json", "model.safetensors", "tokenizer.json"} <= {
        p.name for p in final.iterdir()
    }
    model, info = AutoModelForSeq2SeqLM.from_pretrained(final, output_loading_info=True)
    assert not info["missing_keys"] and not info["unexpected_keys"]
    tok = AutoTokenizer.from_pretrained(final)
    assert model.generation_config.num_beams == 2 and len(tok) == model.config.vocab_size
    ckpts = tiny_run / "checkpoints"
    assert (ckpts / "checkpoint_last").resolve().name == "step-0000040"
    assert (ckpts / "checkpoint_best").resolve().name.startswith("step-")
    state = json.loads((ckpts / "checkpoint_last" / "trainer_state.json").read_text())
    assert state["step"] == 40 and state["best_metric"] is not None
    results = json.loads((tiny_run / "results.json").read_text())
    assert set(results) >= {"best_valid_bleu", "test_bleu", "test_chrf"}
    assert (tiny_run / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tiny_run / "config.yaml").is_file()
    assert list((tiny_run / "logs").rglob("events.out.tfevents.*"))  # TensorBoard
    assert list((tiny_run.parent / "wandb").glob("offline-run-*"))  # W&B, offline


@pytest.mark.slow  # tests/mtkit/train/test_faults.py resumes after SIGTERM and SIGKILL with the same check
def test_interrupted_and_resumed_run_ends_with_the_same_weights(multi30k_small, tmp_path):
    common = [
        "--data_dir", str(multi30k_small), *FAST_RUN, "--eval_steps", "8", "--save_steps", "8",
        "--eval_max_samples", "4", "--max_new_tokens", "4", "--test_split", "none",
        "--no_load_best_model_at_end", "--max_train_samples", "1500", "--save_total_limit", "1",
    ]  # fmt: skip
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    assert train_in_process(*common, "--output_dir", str(straight), "--max_steps", "16").returncode == 0
    first = train_in_process(*common, "--output_dir", str(resumed), "--max_steps", "8")
    assert first.returncode == 0, first.stderr[-2000:]
    second = train_in_process(*common, "--output_dir", str(resumed), "--max_steps", "16")
    assert second.returncode == 0, second.stderr[-2000:]
    assert "resuming from" in second.stdout + second.stderr
    a = load_file(straight / "final" / "model.safetensors")
    b = load_file(resumed / "final" / "model.safetensors")
    assert a.keys() == b.keys()
    assert all((a[k] == b[k]).all() for k in a), "resumed weights differ from the uninterrupted run"
    steps = [s for s, _ in records(resumed, "loss")]
    assert steps == sorted(set(steps)) and steps[-1] == 16  # the log continues, nothing repeated
    # Rotation kept only the newest step folder (plus best).
    kept = sorted(p.name for p in (resumed / "checkpoints").glob("step-*"))
    assert kept[-1] == "step-0000016" and len(kept) <= 2


def test_two_processes_through_accelerate_launch(ddp_run):
    """The shared 2-process run (tests/conftest.py: ``ddp_run``), launched on glibc's malloc (nothing preloaded):
    where tcmalloc is installed (and no NVIDIA driver), each worker starts itself again on it; the main process,
    which prints the note about glibc's malloc, does not print it."""
    out, stdout = ddp_run, ddp_run.with_suffix(".stdout").read_text()
    assert "2 process(es)" in stdout
    restarts = tcmalloc_library() is not None and not any(marker.exists() for marker in GPU_MARKERS)
    assert ("glibc's malloc" in stdout) != restarts, stdout[:2000]
    ckpt = out / "checkpoints" / "checkpoint_last"
    assert {"random_states_0.pkl", "random_states_1.pkl"} <= {p.name for p in ckpt.iterdir()}
    lrs = records(out, "lr")
    assert [step for step, _ in lrs] == [2, 4]
    for step, lr in lrs:  # not stepped once per process
        assert lr == pytest.approx(noam(step))
    assert (out / "final" / "model.safetensors").is_file()


def test_gradient_accumulation_counts_updates_not_batches(multi30k_small, tmp_path):
    out = tmp_path / "accum"
    res = train_in_process(
        "--data_dir", str(multi30k_small), *FAST_RUN, "--output_dir", str(out), "--max_steps", "4",
        "--gradient_accumulation_steps", "3", "--eval_steps", "4", "--eval_max_samples", "2", "--max_new_tokens", "4",
        "--test_split", "none", "--logging_steps", "2",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    state = json.loads((out / "checkpoints" / "checkpoint_last" / "trainer_state.json").read_text())
    assert state["step"] == 4 and state["batches_in_epoch"] == 12
    for step, lr in records(out, "lr"):
        assert lr == pytest.approx(noam(step))


@pytest.mark.parametrize(
    "strategy",
    # slow: ZeRO-3 runs at 2 processes in test_finetune and at 3 in test_reshard; ZeRO-2 in the default tier is
    # test_deepspeed_clips_at_max_grad_norm and the always-skipped run of test_nonfinite (one process each)
    [pytest.param("deepspeed_zero2", marks=pytest.mark.slow), pytest.param("deepspeed_zero3", marks=pytest.mark.slow)],
)
def test_deepspeed_zero_on_two_cpu_processes(multi30k_small, tmp_path, strategy):
    """The same loop under DeepSpeed ZeRO-2/3 (gloo): trains, decodes with synced ranks, saves, exports."""
    out = tmp_path / strategy
    res = launch(
        strategy, "--data_dir", str(multi30k_small), *FAST_RUN, "--output_dir", str(out), "--max_steps", "6",
        "--eval_steps", "3", "--save_steps", "3", "--eval_max_samples", "6", "--max_new_tokens", "6",
        "--max_train_samples", "1000", "--test_split", "none",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    assert "2 process(es)" in res.stdout and "DEEPSPEED" in res.stdout
    ckpt = out / "checkpoints" / "checkpoint_last"
    assert {"random_states_0.pkl", "random_states_1.pkl", "pytorch_model"} <= {p.name for p in ckpt.iterdir()}
    model = AutoModelForSeq2SeqLM.from_pretrained(out / "final")  # consolidated, full-size weights
    n = sum(p.numel() for p in model.parameters())
    assert f"{n / 1e6:.1f}M parameters" in res.stdout


@pytest.mark.slow
def test_torch_compile_exports_plain_weights(multi30k_small, tmp_path):
    out = tmp_path / "compiled"
    res = train_in_process(
        "--data_dir", str(multi30k_small), *FAST_RUN, "--output_dir", str(out), "--max_steps", "4",
        "--eval_steps", "4", "--eval_max_samples", "2", "--max_new_tokens", "4", "--test_split", "none",
        "--torch_compile",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    _, info = AutoModelForSeq2SeqLM.from_pretrained(out / "final", output_loading_info=True)
    assert not info["missing_keys"] and not info["unexpected_keys"]


@pytest.mark.slow  # tests/cluster/test_slurm.py starts both launchers as two nodes through the Slurm script
@pytest.mark.parametrize("launcher", ["multi_node", "multi_node_p5"])
def test_two_nodes_on_one_machine(multi30k_small, tmp_path, launcher):
    """The multi-node launchers (DDP; DeepSpeed ZeRO-3 with every node started by its own launcher) with two
    machine ranks rendezvousing over loopback, one process each."""
    out = tmp_path / "nodes"
    port = free_port()

    def node(rank: int) -> subprocess.Popen:
        cmd = launch_command(
            launcher, "--data_dir", str(multi30k_small), *FAST_RUN, "--output_dir", str(out), "--max_steps", "6",
            "--eval_steps", "6", "--eval_max_samples", "4", "--max_new_tokens", "4", "--test_split", "none", port=port,
            launcher_args=("--num_machines", "2", "--machine_rank", str(rank), "--main_process_ip", "127.0.0.1"),
        )  # fmt: skip
        env = {**os.environ, **OFFLINE_ENV, "PATH": BIN + os.pathsep + os.environ["PATH"]}
        if launcher == "multi_node":
            env["ACCELERATE_USE_CPU"] = "1"
        log = open(tmp_path / f"node{rank}.log", "w")  # a file, not a pipe: an unread pipe would block a node
        return subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, text=True)

    nodes = [node(0)]
    wait_for_port(port)  # node 0 hosts the rendezvous; a second launcher on this machine must not race it
    nodes.append(node(1))
    for p in nodes:
        p.wait(timeout=600)
    logs = [(tmp_path / f"node{rank}.log").read_text() for rank in (0, 1)]
    assert [p.returncode for p in nodes] == [0, 0], logs[0][-2000:] + logs[1][-2000:]
    assert "2 process(es)" in logs[0]
    if launcher == "multi_node_p5":
        assert "DEEPSPEED" in logs[0] and "created sharded across processes" in logs[0]
    ckpt = out / "checkpoints" / "checkpoint_last"
    assert {"random_states_0.pkl", "random_states_1.pkl"} <= {p.name for p in ckpt.iterdir()}
    assert (out / "final" / "model.safetensors").is_file()


def test_fine_tunes_a_bf16_t5_checkpoint_with_fp32_master_weights(tiny_run, multi30k_small, tmp_path):
    """The same loop fine-tunes a pretrained seq2seq model (here a tiny T5 saved to disk in bf16, as flan-t5 is
    published): the weights it trains and saves are fp32, bf16 is only the compute precision."""
    tok = AutoTokenizer.from_pretrained(tiny_run / "tokenizer")
    config = T5Config(
        vocab_size=len(tok), d_model=64, d_ff=128, d_kv=16, num_layers=2, num_heads=4,
        pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id, decoder_start_token_id=tok.pad_token_id,
    )  # fmt: skip
    pretrained = tmp_path / "t5-tiny"
    T5ForConditionalGeneration(config).to(torch.bfloat16).save_pretrained(pretrained)
    assert {t.dtype for t in load_file(pretrained / "model.safetensors").values()} == {torch.bfloat16}
    tok.save_pretrained(pretrained)
    out = tmp_path / "ft"
    res = train_in_process(
        "--data_dir", str(multi30k_small), *FAST_RUN, "--output_dir", str(out),
        "--model_name_or_path", str(pretrained), "--prompt", "t5",
        "--max_steps", "20", "--eval_steps", "20", "--test_split", "none", "--lr_scheduler_type", "constant",
        "--learning_rate", "1e-3", "--mixed_precision", "bf16", "--eval_max_samples", "4", "--max_new_tokens", "4",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    assert "(torch.float32)" in res.stdout and "precision bf16" in res.stdout
    loss = records(out, "loss")
    assert loss[-1][1] < loss[0][1]
    for weights in (out / "final" / "model.safetensors", out / "checkpoints" / "checkpoint_last" / "model.safetensors"):
        assert {t.dtype for t in load_file(weights).values()} == {torch.float32}
    model = AutoModelForSeq2SeqLM.from_pretrained(out / "final")
    assert model.config.model_type == "t5"


#: One update from a fixed start whose weight change follows the gradient (see test_trainer_update.GRADIENT_PROBE):
#: 64 pairs in 8 batches of 8 sentences (the token budget never binds), so any split of them is exact.
ONE_UPDATE = [
    *FAST_RUN, "--max_train_samples", "64", "--max_sentences", "8", "--max_tokens", "100000", "--dropout", "0",
    "--adam_epsilon", "1", "--learning_rate", "1", "--lr_scheduler_type", "constant", "--eval_steps", "1",
    "--eval_max_samples", "1", "--max_new_tokens", "2", "--test_split", "none", "--no_load_best_model_at_end",
]  # fmt: skip


def flat_weights(run) -> torch.Tensor:
    """All weights of ``final/`` in one vector, each tied matrix once (exports may or may not repeat them)."""
    state = load_file(run / "final" / "model.safetensors")
    model = AutoModelForSeq2SeqLM.from_pretrained(run / "final")
    return torch.cat([state[k].flatten() for k, _ in sorted(model.named_parameters()) if k in state])


@pytest.fixture(scope="module")
def initial_weights(multi30k_small, tmp_path_factory) -> torch.Tensor:
    out = tmp_path_factory.mktemp("init") / "run"
    res = train_in_process("--data_dir", str(multi30k_small), *ONE_UPDATE, "--output_dir", str(out), "--max_steps", "0")
    assert res.returncode == 0, res.stderr[-2000:]
    return flat_weights(out)


def assert_same_update(a, b, start: torch.Tensor) -> None:
    da, db = flat_weights(a) - start, flat_weights(b) - start
    assert db.norm() > 0 and (da - db).norm() / db.norm() < 1e-4


def test_two_processes_over_a_split_equal_one_process_over_all(multi30k_small, tmp_path, initial_weights):
    """With loss summed over tokens and divided by the tokens of the whole update, an update depends on its
    sentences only: 2 DDP processes holding one batch each = 1 process accumulating the same 2 batches."""
    data = ["--data_dir", str(multi30k_small), *ONE_UPDATE, "--max_steps", "1"]
    one, two = tmp_path / "one", tmp_path / "two"
    res = train_in_process(*data, "--output_dir", str(one), "--gradient_accumulation_steps", "2")
    assert res.returncode == 0, res.stderr[-2000:]
    res = launch("multi_gpu", *data, "--output_dir", str(two))
    assert res.returncode == 0, res.stderr[-3000:]
    assert "2 process(es)" in res.stdout
    assert_same_update(two, one, initial_weights)


def test_deepspeed_clips_at_max_grad_norm(multi30k_small, tmp_path, initial_weights):
    """ZeRO-2 clips with --max_grad_norm (not accelerate's "auto" = 1.0): its update equals the plain loop's."""
    data = ["--data_dir", str(multi30k_small), *ONE_UPDATE, "--max_steps", "1", "--max_grad_norm", "0.05"]
    plain, zero = tmp_path / "plain", tmp_path / "zero2"
    res = train_in_process(*data, "--output_dir", str(plain), "--gradient_accumulation_steps", "2")
    assert res.returncode == 0, res.stderr[-2000:]
    assert records(plain, "grad_norm")[0][1] > 0.05 * 2  # the clipping bites
    res = launch("deepspeed_zero2", *data, "--output_dir", str(zero), "--gradient_accumulation_steps", "2", processes=1)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "DEEPSPEED" in res.stdout
    assert_same_update(zero, plain, initial_weights)


@pytest.mark.slow  # tests/mtkit/data/test_batching.py checks the dealing itself over 1, 2 and 3 ranks
def test_resume_on_another_number_of_processes(multi30k_small, tmp_path):
    """2 DDP processes -> 1 -> 2: each resume continues the epoch in the dealing the sampler derives from the saved
    segments (tests/mtkit/data/test_batching.py proves that covers every sentence once); the state records them."""
    out = tmp_path / "worlds"
    common = [
        "--data_dir", str(multi30k_small), *FAST_RUN, "--output_dir", str(out), "--eval_steps", "100",
        "--save_steps", "3", "--test_split", "none", "--eval_max_samples", "2", "--max_new_tokens", "4",
    ]  # fmt: skip

    def two(steps: int):
        return launch("cpu_ddp", *common, "--max_steps", str(steps), processes=None)

    def state() -> dict:
        return json.loads((out / "checkpoints" / "checkpoint_last" / "trainer_state.json").read_text())

    res = two(3)
    assert res.returncode == 0, res.stderr[-3000:]
    assert (state()["world_size"], state()["batches_in_epoch"], state()["epoch_segments"]) == (2, 3, [])
    res = train_in_process(*common, "--max_steps", "6")
    assert res.returncode == 0, res.stderr[-3000:]
    assert "written by 2 process(es), this run has 1" in res.stdout
    assert (state()["world_size"], state()["batches_in_epoch"], state()["epoch_segments"]) == (1, 3, [[2, 3]])
    res = two(9)
    assert res.returncode == 0, res.stderr[-3000:]
    assert (state()["world_size"], state()["batches_in_epoch"], state()["epoch_segments"]) == (2, 3, [[2, 3], [1, 3]])
    assert state()["epoch"] == 0 and state()["step"] == 9
