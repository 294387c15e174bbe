"""Turn a checkpoint of a run into a ``save_pretrained`` model, after the fact, on one CPU process.

A checkpoint (``<output_dir>/checkpoints/step-NNNNNNN/``, see :mod:`mtkit.train.checkpoint`) holds the whole training
state as ``accelerator.save_state`` wrote it; its model weights, in the layout of whichever strategy wrote them, are
read whole by :func:`mtkit.train.weights.checkpoint_weights`, the one reader of a checkpoint's weights.

The model is rebuilt from the run's ``config.yaml`` and tokenizer by the run's own :func:`mtkit.train.build.build_model`
(preset, or the pretrained base model; LoRA adapters wrapped the same way), the weights are loaded strictly (only
tied copies may be absent), and :func:`mtkit.train.final.export_model` writes what a run writes to ``final/``: weights,
tokenizer, generation config, ``prompt.json``, and for LoRA the adapter plus the merged model; the model card
(:mod:`mtkit.export.card`) says which checkpoint it is. The output is written into a temporary folder next to ``OUT``
and renamed, so a failure leaves nothing half-written.
"""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

import torch

from bias_eval.core.textio import check_writable
from mtkit.config import RunConfig, parse_config
from mtkit.errors import UserError
from mtkit.export.card import Weights, write_card
from mtkit.paths import check_apart
from mtkit.train.checkpoint import STATE_FILE, CheckpointManager, best_complete, newest_complete, problem_with
from mtkit.train.tracking import METRICS_FILE
from mtkit.train.weights import checkpoint_weights, load_weights_strictly

CONFIG_FILE = "config.yaml"


def _complete_checkpoint(path: Path, arg: str) -> Path:
    if not path.is_dir():
        raise UserError(f"{arg}: no such checkpoint ({path} is missing)")
    if not (path / STATE_FILE).is_file():
        raise UserError(f"{arg}: not a checkpoint of a run (no {STATE_FILE}; incomplete or not written by mtkit)")
    problem = problem_with(path)
    if problem is not None:
        raise UserError(f"{arg}: incomplete or damaged checkpoint {path.name} ({problem})")
    return path


def resolve_checkpoint(checkpoint: str | Path, run_dir: str | Path | None = None) -> tuple[Path, Path, str]:
    """``(checkpoint folder, run folder, what was chosen)`` for a step folder, a ``checkpoint_*`` link, a run's
    ``checkpoints/`` folder or the run folder itself (then the checkpoint the run exports: the best one when it
    keeps the best model at the end and has one, else the newest complete one; links are not needed)."""
    given = Path(os.path.abspath(checkpoint))  # unresolved: a link's grandparent is its run
    arg = f"CHECKPOINT {checkpoint}"
    if not given.exists():
        raise UserError(f"{arg}: no such folder")
    if not given.is_dir():
        raise UserError(f"{arg}: not a folder")
    if (given / "checkpoints").is_dir() or given.name == "checkpoints":
        run = given if (given / "checkpoints").is_dir() else given.parent
        root = run / "checkpoints"
        run = Path(os.path.abspath(run_dir)) if run_dir else run
        cfg = read_run_config(run)
        try:
            last = newest_complete(root)
        except UserError:
            last = None
        if last is None:
            raise UserError(f"{arg}: the run has no complete checkpoint in {root}")
        best = best_complete(root)
        if cfg.train.load_best_model_at_end and best is not None:
            return best, run, f"the best checkpoint (the run keeps the best model at the end): {best.name}"
        return last, run, f"the newest checkpoint: {last.name}"
    _complete_checkpoint(given, arg)
    run = Path(os.path.abspath(run_dir)) if run_dir else given.parent.parent
    return given.resolve(), run, given.name


def read_run_config(run_dir: Path) -> RunConfig:
    """The run's configuration, from the ``config.yaml`` it wrote at its start."""
    path = run_dir / CONFIG_FILE
    if not path.is_file():
        raise UserError(f"--run_dir {run_dir}: no {CONFIG_FILE} (not a run folder? name it with --run_dir)")
    try:
        return parse_config(["--config", str(path)])
    except UserError as err:
        raise UserError(f"--run_dir {run_dir}: {str(err).removeprefix('--config ')}") from None


def run_inputs(run: Path) -> list[Path]:
    """What an export reads from a run folder: its checkpoints, tokenizer, recipe and logged scores (an export may go
    into the run folder beside them, not over or inside them)."""
    return [run / name for name in ("checkpoints", "tokenizer", CONFIG_FILE, METRICS_FILE)]


def check_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise UserError(f"OUT {out}: exists and is not a folder")
    if out.is_dir() and any(out.iterdir()):
        raise UserError(f"OUT {out}: exists and is not empty")
    check_writable(out, "OUT")


def export_checkpoint(checkpoint: str | Path, out: str | Path, run_dir: str | Path | None = None, log=print) -> Path:
    """Write the model of ``checkpoint`` to ``out`` as a run writes ``final/``; return ``out``."""
    out = Path(out)
    check_out(out)
    ckpt, run, chosen = resolve_checkpoint(checkpoint, run_dir)
    check_apart({"CHECKPOINT": ckpt, "--run_dir" if run_dir else "CHECKPOINT's run": run_inputs(run)}, {"OUT": out})
    cfg = read_run_config(run)
    check_tokenizer(cfg, run)
    state = CheckpointManager.read_state(ckpt)
    log(f"exporting {chosen} (update {state.step}, {state.world_size} process(es)) of run {run}")
    state_dict, layout = checkpoint_weights(ckpt)
    command = shlex.join(["python", "scripts/export_model.py", str(checkpoint), str(out)])
    weights = Weights(f"{chosen} (update {state.step})", state.step, state.step, test=False, command=command)
    write_model(cfg, run, state_dict, out, f"CHECKPOINT {ckpt}", weights)
    log(f"weights: {layout}; model, tokenizer and generation config in {out}")
    return out


def check_tokenizer(cfg: RunConfig, run: Path) -> None:
    """Refuse a run whose model cannot be rebuilt for want of its trained tokenizer."""
    pretrained = cfg.tokenizer.tokenizer_name or cfg.model.model_name_or_path
    if not pretrained and not (run / "tokenizer" / "tokenizer.json").is_file():
        raise UserError(f"--run_dir {run}: no tokenizer/tokenizer.json (the run's trained tokenizer)")


def write_model(
    cfg: RunConfig, run: Path, state_dict: dict[str, torch.Tensor], out: Path, where: str, weights: Weights
) -> None:
    """Rebuild the run's model, load ``state_dict`` into it strictly and write it to ``out`` as the run writes
    ``final/``, with its model card (into a temporary folder beside ``out``, renamed at the end)."""
    from accelerate import Accelerator

    from mtkit.data.preprocess import prepare_tokenizer
    from mtkit.data.prompts import Prompt
    from mtkit.train.build import build_model
    from mtkit.train.final import export_model

    try:  # the run's own construction: a pretrained base model is loaded, so it must be reachable
        tokenizer = prepare_tokenizer(cfg, None, run)  # loads, never trains: checked above
        model = build_model(cfg, tokenizer)
    except UserError as err:
        raise UserError(f"--run_dir {run}: the model or tokenizer {CONFIG_FILE} names cannot be built: {err}") from None
    load_weights_strictly(model, state_dict, where)
    del state_dict
    model.eval()
    prompt = None
    if cfg.data.prompt:  # as the run saves it: the template and the target languages it was trained for
        prompt = Prompt.parse(cfg.data.prompt, cfg.data.source_lang).with_languages(cfg.data.languages())

    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".{out.name}.export-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        tmp.mkdir()
        acc = Accelerator(cpu=True)  # one process, nothing prepared: export_model's collectives are no-ops
        export_model(cfg, acc, model, tokenizer, tmp, prompt)
        write_card(tmp, cfg, run, weights)
        check_out(out)  # still free
        if out.is_dir():
            out.rmdir()
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
