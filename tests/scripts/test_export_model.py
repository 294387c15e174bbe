"""scripts/export_model.py: a checkpoint of every kind of run, exported after the fact on one CPU process, equals the
run's own ``final/`` (the runs use --no_load_best_model_at_end, so final/ is the last checkpoint); bad input."""

import json
import shutil

import pytest
import torch
from safetensors.torch import load_file, save_file
from testing_utils import FAST_RUN, MTGENEVAL, as_written, launch, script_in_process, train_in_process
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

import mtkit.train.final
from mtkit.cli.export_model import main
from mtkit.errors import UserError, cli_entry
from mtkit.train.checkpoint import write_manifest

TINY = [
    *FAST_RUN, "--max_steps", "2", "--eval_steps", "2", "--save_steps", "2", "--eval_max_samples", "2",
    "--max_new_tokens", "4", "--test_split", "none", "--no_load_best_model_at_end", "--max_train_samples", "500",
]  # fmt: skip


def train(out, *args, launcher=None, env=None):
    """A tiny run into ``out``: plain ``python scripts/train.py``, or two processes under an accelerate config."""
    if launcher is None:
        res = train_in_process(*args, "--output_dir", str(out))
    else:
        res = launch(launcher, "--mixed_precision", "no", *args, "--output_dir", str(out), env=env)
    assert res.returncode == 0, res.stderr[-3000:]
    return out


def export(checkpoint, out, capsys) -> str:
    """What exporting ``checkpoint`` to ``out`` prints, in this process."""
    main([str(checkpoint), str(out)])
    return capsys.readouterr().out


def assert_exported_equals_final(run, out):
    """Every tensor of the run's final/ in the exported model (reloaded by transformers), and the same files."""
    final = run / "final"
    model, info = AutoModelForSeq2SeqLM.from_pretrained(out, dtype=torch.float32, output_loading_info=True)
    assert not info["missing_keys"] and not info["unexpected_keys"]
    exported = model.state_dict()
    expected = load_file(final / "model.safetensors")
    assert set(load_file(out / "model.safetensors")) <= set(expected) <= set(exported)
    for key, tensor in expected.items():
        assert exported[key].dtype == tensor.dtype and torch.equal(exported[key], tensor), key
    assert json.loads((out / "generation_config.json").read_text()) == json.loads(
        (final / "generation_config.json").read_text()
    )
    assert AutoTokenizer.from_pretrained(out).get_vocab() == AutoTokenizer.from_pretrained(final).get_vocab()
    assert (out / "prompt.json").is_file() == (final / "prompt.json").is_file()
    if (final / "prompt.json").is_file():
        assert (out / "prompt.json").read_text() == (final / "prompt.json").read_text()
    assert not list(out.parent.glob(f".{out.name}.export-*"))  # the temporary folder was renamed


@pytest.fixture(scope="module")
def single_run(multi30k_small, tmp_path_factory):
    return train(tmp_path_factory.mktemp("export") / "single", "--data_dir", str(multi30k_small), *TINY)


def test_single_process_checkpoint(single_run, tmp_path, capsys):
    printed = export(single_run / "checkpoints" / "checkpoint_last", tmp_path / "model", capsys)
    assert "update 2, 1 process(es)" in printed and "model.safetensors" in printed
    assert_exported_equals_final(single_run, tmp_path / "model")
    assert not (tmp_path / "model" / "prompt.json").exists()


@pytest.mark.parametrize(
    "launcher,env",
    [
        # slow: a DDP checkpoint holds one model as a one-process checkpoint does
        pytest.param("multi_gpu", {"ACCELERATE_USE_CPU": "1"}, marks=pytest.mark.slow),
        pytest.param("deepspeed_zero2", None, marks=pytest.mark.slow),  # the same DeepSpeed path as ZeRO-3's
        ("deepspeed_zero3", None),
    ],
)
def test_two_process_checkpoint(multi30k_small, tmp_path, launcher, env, capsys, request):
    if launcher == "deepspeed_zero3":  # the fine-tuning tests' ZeRO-3 run (tiny T5, prompt), made once
        run = request.getfixturevalue("zero3_run")
    else:
        run = train(tmp_path / launcher, "--data_dir", str(multi30k_small), *TINY, launcher=launcher, env=env)
    ckpt = run / "checkpoints" / "checkpoint_last"
    assert json.loads((ckpt / "trainer_state.json").read_text())["world_size"] == 2
    deepspeed = launcher.startswith("deepspeed")
    assert (ckpt / "pytorch_model").is_dir() == deepspeed  # ZeRO shards, not one weights file
    if deepspeed:
        assert len(list((ckpt / "pytorch_model").glob("*optim_states.pt"))) == 2
    printed = export(ckpt, tmp_path / "model", capsys)
    assert "2 process(es)" in printed
    assert ("DeepSpeed ZeRO shards" in printed) == deepspeed
    assert_exported_equals_final(run, tmp_path / "model")


def test_lora_run_exports_adapter_and_merged_model(tiny_t5, tmp_path, capsys):
    if not MTGENEVAL.is_dir():
        pytest.skip("../shared/data/mt-geneval is not there")
    run = train(
        tmp_path / "lora", "--mtgeneval_dir", str(MTGENEVAL), "--target_langs", "de", "--prompt", "instruction",
        "--model_name_or_path", str(tiny_t5), "--max_tokens", "1024", "--max_source_length", "64",
        "--max_target_length", "64", "--learning_rate", "2e-2", "--lr_scheduler_type", "constant", "--warmup_steps",
        "0", "--max_new_tokens", "4", "--num_beams", "1", "--report_to", "none", "--disable_tqdm", "--test_split",
        "none", "--max_steps", "2", "--eval_steps", "2", "--save_steps", "2", "--eval_max_samples", "2",
        "--lora_r", "4", "--mixed_precision", "no", "--no_load_best_model_at_end",
    )  # fmt: skip
    printed = export(run, tmp_path / "model", capsys)  # the run folder: the checkpoint the run exported
    assert "exporting the newest checkpoint: step-0000002" in printed
    assert_exported_equals_final(run, tmp_path / "model")
    adapter, expected = (
        load_file(d / "adapter" / "adapter_model.safetensors") for d in (tmp_path / "model", run / "final")
    )
    assert adapter and adapter.keys() == expected.keys() and all(torch.equal(adapter[k], expected[k]) for k in adapter)
    assert json.loads((tmp_path / "model" / "prompt.json").read_text())["languages"] == ["de"]
    base = load_file(tiny_t5 / "model.safetensors")
    merged = load_file(tmp_path / "model" / "model.safetensors")
    assert any(not torch.equal(merged[k], base[k]) for k in base if k in merged)  # the adapters were merged in


# -- choosing the checkpoint, and bad input --------------------------------------------------------------


def copy_run(run, dst, load_best: bool):
    """The parts of ``run`` an export reads, with load_best_model_at_end set, and a worse-named checkpoint_best."""
    dst.mkdir()
    shutil.copytree(run / "tokenizer", dst / "tokenizer")
    shutil.copytree(run / "checkpoints", dst / "checkpoints", symlinks=True)
    config = (run / "config.yaml").read_text()
    (dst / "config.yaml").write_text(
        config.replace("load_best_model_at_end: false", f"load_best_model_at_end: {load_best}".lower())
    )
    best = dst / "checkpoints" / "step-0000001"
    shutil.copytree(dst / "checkpoints" / "step-0000002", best)
    weights = load_file(best / "model.safetensors")
    weights["model.shared.weight"] += 1
    save_file(weights, best / "model.safetensors")
    write_manifest(best)  # a checkpoint in its own right, as if saved at that step
    (dst / "checkpoints" / "checkpoint_best").unlink()
    (dst / "checkpoints" / "checkpoint_best").symlink_to(best.name)
    return dst


@pytest.mark.parametrize("load_best", [True, False])
def test_run_folder_exports_the_checkpoint_the_run_would(single_run, tmp_path, load_best, capsys):
    run = copy_run(single_run, tmp_path / "run", load_best)
    main([str(run), str(tmp_path / "model")])
    chosen = (
        "the best checkpoint (the run keeps the best model at the end): step-0000001"
        if load_best
        else ("the newest checkpoint: step-0000002")
    )
    assert f"exporting {chosen}" in capsys.readouterr().out
    exported = load_file(tmp_path / "model" / "model.safetensors")["model.shared.weight"]
    source = run / "checkpoints" / ("checkpoint_best" if load_best else "checkpoint_last") / "model.safetensors"
    assert torch.equal(exported, as_written(load_file(source)["model.shared.weight"], exported))


def test_bad_input_is_one_line_naming_the_argument(single_run, tmp_path):
    ckpt = single_run / "checkpoints" / "checkpoint_last"
    out = tmp_path / "model"
    cases = {
        "CHECKPOINT": [str(tmp_path / "nowhere"), str(out)],
        "not a checkpoint": [str(single_run / "final"), str(out)],
        "--run_dir": [str(ckpt), str(out), "--run_dir", str(tmp_path)],  # no config.yaml
    }
    for expected, args in cases.items():
        with pytest.raises(UserError, match=expected) as err:
            main(args)
        assert "\n" not in str(err.value)
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "x").write_text("")
    with pytest.raises(UserError, match="OUT .*exists and is not empty"):
        main([str(ckpt), str(tmp_path / "taken")])
    (tmp_path / "file").write_text("")
    with pytest.raises(UserError, match="OUT .*not a folder"):
        main([str(ckpt), str(tmp_path / "file")])
    # a step folder away from its run, with a run folder given, and the weights of another model
    other = tmp_path / "other"
    other.mkdir()
    shutil.copytree(single_run / "tokenizer", other / "tokenizer")
    (other / "config.yaml").write_text(
        (single_run / "config.yaml").read_text().replace("transformer-tiny", "transformer-small")
    )
    with pytest.raises(UserError, match="do not fit the run's model"):
        main([str(ckpt), str(out), "--run_dir", str(other)])
    assert not out.exists() and [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_cli_error_exits_2_and_writes_nothing(single_run, tmp_path):
    """The script's exit status and stream, its ``main`` wrapped as the script wraps it (its real interpreter exports
    a run in tests/mtkit/train/test_faults.py, with secrets in its environment)."""
    res = script_in_process(cli_entry(main), str(single_run / "final"), str(tmp_path / "model"))
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == [
        f"error: CHECKPOINT {single_run / 'final'}: not a checkpoint of a run (no trainer_state.json; incomplete or "
        "not written by mtkit)"
    ]
    assert list(tmp_path.iterdir()) == []


def test_failure_while_writing_leaves_nothing(single_run, tmp_path, monkeypatch):
    def broken(cfg, acc, model, tokenizer, final, prompt):
        (final / "config.json").write_text("{}")
        raise RuntimeError("disk full")

    monkeypatch.setattr(mtkit.train.final, "export_model", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        main([str(single_run / "checkpoints" / "checkpoint_last"), str(tmp_path / "model")])
    assert list(tmp_path.iterdir()) == []
