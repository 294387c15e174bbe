"""Checkpoint averaging on the ``tiny_run`` run (checkpoints at updates 20 and 40, both evaluated)."""

import json

import pytest
import torch
from safetensors.torch import load_file
from testing_utils import as_written, run_script, script_in_process

from mtkit.cli.average_checkpoints import main
from mtkit.errors import UserError, cli_entry
from mtkit.export.averaging import average_checkpoints


def weights(folder) -> dict[str, torch.Tensor]:
    return load_file(folder / "model.safetensors")


def test_last_two_is_the_element_wise_mean(tiny_run, tmp_path):
    out = tmp_path / "avg"
    # in this process, wrapped as the script wraps it (its own process: test_bad_input_is_one_line_and_writes_nothing)
    res = script_in_process(cli_entry(main), str(tiny_run), str(out), "--last", "2")
    assert res.returncode == 0, res.stderr[-2000:]
    a, b = (weights(tiny_run / "checkpoints" / f"step-{s:07d}") for s in (20, 40))
    got = weights(out)
    assert got.keys() <= a.keys() and len(got) > 10
    for key, value in got.items():  # the mean of two float32 numbers rounds once either way: exactly equal
        assert torch.equal(value, as_written((a[key] + b[key]) / 2, value)), key
    assert not torch.equal(got["model.shared.weight"], as_written(b["model.shared.weight"], got["model.shared.weight"]))
    for name in ("tokenizer.json", "generation_config.json", "config.json"):
        assert (out / name).is_file()


def test_best_one_is_the_checkpoint_with_the_best_validation_bleu(tiny_run, tmp_path):
    rows = [json.loads(x) for x in (tiny_run / "metrics.jsonl").read_text().splitlines()]
    bleu = {r["step"]: r["valid_bleu"] for r in rows if "valid_bleu" in r}
    assert set(bleu) == {20, 40} and bleu[20] != bleu[40]
    best = max(bleu, key=bleu.get)
    chosen = average_checkpoints(tiny_run, tmp_path / "best", best=1, log=lambda _: None)
    assert [p.name for p in chosen] == [f"step-{best:07d}"]
    expected = weights(tiny_run / "checkpoints" / f"step-{best:07d}")
    assert all(torch.equal(v, as_written(expected[k], v)) for k, v in weights(tmp_path / "best").items())


def test_bad_input_is_one_line_and_writes_nothing(tiny_run, tmp_path):
    out = tmp_path / "avg"
    res = run_script("average_checkpoints.py", str(tiny_run), str(out), "--last", "5")
    assert res.returncode == 2 and not out.exists()
    assert res.stderr.strip().splitlines() == [
        f"error: RUN {tiny_run}: 2 complete checkpoints, 5 asked for (keep more with --save_total_limit)"
    ]
    with pytest.raises(UserError, match="--last: must be >= 1"):
        average_checkpoints(tiny_run, out, last=0)
    with pytest.raises(UserError, match="exactly one"):
        average_checkpoints(tiny_run, out, last=1, best=1)
    with pytest.raises(UserError, match="no config.yaml"):
        average_checkpoints(tmp_path, out, last=1)
    assert not out.exists()
