"""Checkpoint averaging (as fairseq's ``average_checkpoints.py``): the element-wise mean of the weights of the last
N checkpoints of a run, of the N best by ``--metric_for_best_model``, or of its last N epoch checkpoints
(``--last_epochs``, fairseq's ``--num-epoch-checkpoints``; the run keeps them with ``--keep_last_epochs``), exported
like ``final/``.

Averaging the last few checkpoints of a from-scratch transformer usually gains some BLEU over the last one alone;
keep enough of them with ``--save_total_limit`` (the run deletes older ones).
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from mtkit.errors import UserError
from mtkit.evaluation.selection import selection_value
from mtkit.export.card import Weights
from mtkit.export.checkpoint import check_out, check_tokenizer, read_run_config, run_inputs, write_model
from mtkit.paths import check_apart
from mtkit.train.checkpoint import CheckpointManager, problem_with, step_folder, step_folders, step_of
from mtkit.train.tracking import read_metrics, validation_records
from mtkit.train.weights import mean_weights


def complete_checkpoints(run: Path) -> list[Path]:
    """The run's complete step folders, oldest first (damaged or half-written ones left out)."""
    return [p for p in step_folders(run / "checkpoints") if problem_with(p) is None]


def epoch_checkpoints(run: Path) -> list[Path]:
    """The run's complete epoch checkpoints (``--keep_last_epochs``), oldest first, as its newest checkpoint lists
    them."""
    folders = complete_checkpoints(run)
    if not folders:
        return []
    listed = CheckpointManager.read_state(folders[-1]).epoch_steps
    return [f for _, step in listed if (f := step_folder(run / "checkpoints", step)) in folders]


def choose(run: Path, last: int | None, best: int | None, metric: str, last_epochs: int | None = None) -> list[Path]:
    """The checkpoints to average: the ``last`` newest, the ``best`` best by ``metric`` among those evaluated, or the
    ``last_epochs`` newest epoch checkpoints."""
    given = {name: n for name, n in (("last", last), ("best", best), ("last_epochs", last_epochs)) if n is not None}
    if len(given) != 1:
        raise UserError("--last/--best/--last_epochs: give exactly one of them")
    ((flag, n),) = given.items()
    if n < 1:
        raise UserError(f"--{flag}: must be >= 1, got {n}")
    if last_epochs is not None:
        chosen = epoch_checkpoints(run)[-n:]
        if len(chosen) < n:
            raise UserError(
                f"RUN {run}: {len(chosen)} epoch checkpoints, {n} asked for (keep more with --keep_last_epochs)"
            )
        return chosen
    folders = complete_checkpoints(run)
    if last is None:
        scores = validation_records(read_metrics(run))
        step = {p: step_of(p) for p in folders}
        folders = [p for p in folders if step[p] in scores]
        folders = sorted(folders, key=lambda p: selection_value(scores[step[p]], metric), reverse=True)
    chosen = folders[-n:] if last is not None else folders[:n]
    if len(chosen) < n:
        what = "complete checkpoints" if last is not None else f"complete checkpoints with a validation {metric}"
        raise UserError(f"RUN {run}: {len(chosen)} {what}, {n} asked for (keep more with --save_total_limit)")
    return sorted(chosen)


def average_checkpoints(
    run: str | Path,
    out: str | Path,
    last: int | None = None,
    best: int | None = None,
    log=print,
    last_epochs: int | None = None,
) -> list[Path]:
    """Average the chosen checkpoints of ``run`` into a model folder ``out``; return the checkpoints used."""
    run, out = Path(os.path.abspath(run)), Path(out)
    check_out(out)
    check_apart({"RUN": run_inputs(run)}, {"OUT": out})
    cfg = read_run_config(run)
    check_tokenizer(cfg, run)
    chosen = choose(run, last, best, cfg.eval.metric_for_best_model, last_epochs)
    log(f"averaging {len(chosen)} checkpoints of {run}: {', '.join(p.name for p in chosen)}")
    mean = mean_weights(chosen)  # as the run averages its last epochs (--average_last_epochs)
    steps = [step_of(p) for p in chosen]
    given = (("last", last), ("best", best), ("last_epochs", last_epochs))
    which = next(f"--{flag} {n}" for flag, n in given if n is not None)
    what = f"the mean of {len(chosen)} checkpoints ({which}: updates {', '.join(map(str, steps))})"
    command = shlex.join(["python", "scripts/average_checkpoints.py", str(run), str(out), *which.split()])
    weights = Weights(what, max(steps), None, test=False, command=command)
    write_model(cfg, run, mean, out, f"RUN {run}", weights)
    log(f"averaged model in {out}")
    return chosen
