"""The one reader of a checkpoint's model weights and the one mean of several, on real checkpoints: the one-process
layout against its safetensors loaded here, a sharded one (ZeRO-3) against the run's own final/, and the mean against
the mean computed here."""

import pytest
import torch
from safetensors.torch import load_file, save_file

from mtkit.errors import UserError
from mtkit.export.averaging import average_checkpoints
from mtkit.train.weights import WeightMean, checkpoint_weights, mean_weights


def step(run, update: int):
    return run / "checkpoints" / f"step-{update:07d}"


def test_a_one_process_checkpoint_reads_as_its_safetensors(tiny_run):
    got, layout = checkpoint_weights(step(tiny_run, 20))
    expected = load_file(step(tiny_run, 20) / "model.safetensors")
    assert layout == "model.safetensors" and got.keys() == expected.keys() and len(got) > 10
    assert all(torch.equal(got[k], v) and got[k].dtype == v.dtype for k, v in expected.items())


def test_weights_saved_from_a_wrapped_model_are_read_under_the_model_s_own_names(tiny_run, tmp_path):
    # a state dict of a wrapped model (DDP's "module.", torch.compile's "_orig_mod."): the model's own names back
    expected = load_file(step(tiny_run, 20) / "model.safetensors")
    save_file({f"module._orig_mod.{k}": v for k, v in expected.items()}, tmp_path / "model.safetensors")
    got, _ = checkpoint_weights(tmp_path)
    assert got.keys() == expected.keys() and all(torch.equal(got[k], v) for k, v in expected.items())


def test_the_mean_of_real_checkpoints_is_their_element_wise_mean(tiny_run):
    folders = [step(tiny_run, 20), step(tiny_run, 40)]
    loaded = [load_file(f / "model.safetensors") for f in folders]
    expected = {k: torch.stack([w[k].double() for w in loaded]).mean(0).to(v.dtype) for k, v in loaded[0].items()}
    got = mean_weights(folders)
    assert got.keys() == expected.keys()
    for key, value in expected.items():  # two float32 numbers: their float64 sum is exact, the mean rounds once
        assert got[key].dtype == value.dtype and torch.equal(got[key], value), key
    assert not torch.equal(got["model.shared.weight"], loaded[1]["model.shared.weight"])


def test_zero3_shards_average_to_the_run_s_own_final(zero3_run, tmp_path):
    # the ZeRO-3 run's final/ is its last checkpoint (--no_load_best_model_at_end), gathered by the run itself; the
    # shards are read on this one process and the one checkpoint averaged (the script's own process:
    # tests/mtkit/export/test_averaging.py)
    out = tmp_path / "avg"
    assert average_checkpoints(zero3_run, out, last=1, log=lambda _: None) == [step(zero3_run, 4)]
    expected, got = load_file(zero3_run / "final" / "model.safetensors"), load_file(out / "model.safetensors")
    assert got.keys() == expected.keys() and len(got) > 10
    assert all(torch.equal(got[k], v) for k, v in expected.items())


def test_the_mean_keeps_dtypes_and_integer_buffers():
    mean = WeightMean()
    mean.add({"w": torch.tensor([1.0, 2.0], dtype=torch.bfloat16), "n": torch.tensor([3])})
    mean.add({"w": torch.tensor([2.0, 4.0], dtype=torch.bfloat16), "n": torch.tensor([5])})
    got = mean.result()
    assert got["w"].dtype == torch.bfloat16 and got["w"].tolist() == [1.5, 3.0]
    assert got["n"].tolist() == [3]
    with pytest.raises(UserError, match="different weights"):
        mean.add({"b": torch.zeros(1)})


def test_a_folder_without_weights_is_one_line_naming_what_it_holds(tmp_path):
    (tmp_path / "trainer_state.json").write_text("{}")
    with pytest.raises(UserError, match=r"no model weights .* it holds trainer_state\.json"):
        checkpoint_weights(tmp_path)
