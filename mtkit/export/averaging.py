"""Checkpoint averaging (as fairseq's ``average_checkpoints.py``): the element-wise mean of the weights of the last
N checkpoints of a run, or of the N best by ``--metric_for_best_model``, exported like ``final/``.

Averaging the last few checkpoints of a from-scratch transformer usually gains some BLEU over the last one alone;
keep enough of them with ``--save_total_limit`` (the run deletes older ones).
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import torch

from mtkit.errors import UserError
from mtkit.evaluation.selection import selection_value
from mtkit.export.card import Weights
from mtkit.export.checkpoint import (
    check_out,
    check_tokenizer,
    checkpoint_weights,
    read_run_config,
    run_inputs,
    write_model,
)
from mtkit.paths import check_apart
from mtkit.train.checkpoint import problem_with


def complete_checkpoints(run: Path) -> list[Path]:
    """The run's complete step folders, oldest first (damaged or half-written ones left out)."""
    root = run / "checkpoints"
    folders = sorted(p for p in root.glob("step-*") if p.is_dir()) if root.is_dir() else []
    return [p for p in folders if problem_with(p) is None]


def validation_scores(run: Path) -> dict[int, dict]:
    """The validation scores the run logged, by update."""
    path = run / "metrics.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.is_file() else []
    return {row["step"]: row for row in rows if "valid_loss" in row}


def choose(run: Path, last: int | None, best: int | None, metric: str) -> list[Path]:
    """The checkpoints to average: the ``last`` newest, or the ``best`` best by ``metric`` among those evaluated."""
    if (last is None) == (best is None):
        raise UserError("--last/--best: give exactly one of them")
    n = last if last is not None else best
    if n < 1:
        raise UserError(f"--{'last' if last is not None else 'best'}: must be >= 1, got {n}")
    folders = complete_checkpoints(run)
    if last is None:
        scores = validation_scores(run)
        step = {p: int(p.name.removeprefix("step-")) for p in folders}
        folders = [p for p in folders if step[p] in scores]
        folders = sorted(folders, key=lambda p: selection_value(scores[step[p]], metric), reverse=True)
    chosen = folders[-n:] if last is not None else folders[:n]
    if len(chosen) < n:
        what = "complete checkpoints" if last is not None else f"complete checkpoints with a validation {metric}"
        raise UserError(f"RUN {run}: {len(chosen)} {what}, {n} asked for (keep more with --save_total_limit)")
    return sorted(chosen)


def average(state_dicts: list[dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """The element-wise mean of ``state_dicts`` (same keys and shapes), summed in float64 and returned in each
    tensor's own dtype; integer buffers are taken from the first."""
    first = state_dicts[0]
    for other in state_dicts[1:]:
        if other.keys() != first.keys():
            raise UserError("checkpoints hold different weights (not from the same run?)")
    mean = {}
    for key, tensor in first.items():
        if not tensor.is_floating_point():
            mean[key] = tensor
            continue
        total = torch.zeros(tensor.shape, dtype=torch.float64)
        for sd in state_dicts:
            total += sd[key].to(torch.float64)
        mean[key] = (total / len(state_dicts)).to(tensor.dtype)
    return mean


def average_checkpoints(
    run: str | Path, out: str | Path, last: int | None = None, best: int | None = None, log=print
) -> list[Path]:
    """Average the chosen checkpoints of ``run`` into a model folder ``out``; return the checkpoints used."""
    run, out = Path(os.path.abspath(run)), Path(out)
    check_out(out)
    check_apart({"RUN": run_inputs(run)}, {"OUT": out})
    cfg = read_run_config(run)
    check_tokenizer(cfg, run)
    chosen = choose(run, last, best, cfg.eval.metric_for_best_model)
    log(f"averaging {len(chosen)} checkpoints of {run}: {', '.join(p.name for p in chosen)}")
    mean = average([checkpoint_weights(p)[0] for p in chosen])
    steps = [int(p.name.removeprefix("step-")) for p in chosen]
    which = f"--last {last}" if last is not None else f"--best {best}"
    what = f"the mean of {len(chosen)} checkpoints ({which}: updates {', '.join(map(str, steps))})"
    command = shlex.join(["python", "scripts/average_checkpoints.py", str(run), str(out), *which.split()])
    write_model(cfg, run, mean, out, f"RUN {run}", Weights(what, max(steps), None, test=False, command=command))
    log(f"averaged model in {out}")
    return chosen
