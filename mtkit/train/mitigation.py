"""The training loop's part in a gender-bias mitigation (``--gender_data``): the pulls toward the starting model, the
general-quality scores of each evaluation, and the checkpoint choice (:func:`mtkit.evaluation.selection.
keep_checkpoint`: the BLEU and levelling-down budgets a checkpoint must keep to be chosen).

Two pulls toward the start, alone or together: ``--l2_to_start x sum((w - w_start)^2)`` over the trained weights
(one frozen copy of the weights, no extra forward), and distillation (``--distill_to_start``: a share of each target
token's loss against a frozen copy of the starting model's distribution, one more forward per batch). EWC, the third
usual pull, needs a Fisher estimate first and is not built.

The start's general validation BLEU is measured at update 0 (before any update, which also makes the start a
candidate checkpoint: a run where no checkpoint keeps the budget and does better keeps the start) and saved in
``<output_dir>/mitigation_start.json``, so that a resumed run keeps the same budget.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import torch

from bias_eval.core.textio import atomic_write
from mtkit.config import RunConfig
from mtkit.errors import UserError
from mtkit.evaluation.selection import MEASURES, keep_checkpoint
from mtkit.model.loss import Teacher

START_FILE = "mitigation_start.json"


def check_pull(cfg: RunConfig, sharded: bool) -> None:
    """Refuse a pull (``--l2_to_start``, ``--distill_to_start``) where the weights are sharded across processes
    (DeepSpeed, FSDP): both keep a whole frozen copy of the starting weights."""
    m = cfg.mitigation
    for flag in ("l2_to_start", "distill_to_start"):
        if m.enabled() and getattr(m, flag) and sharded:
            raise UserError(f"--{flag}: not available with DeepSpeed or FSDP (sharded weights); use DDP or LoRA")


def check_export(cfg: RunConfig) -> None:
    """Refuse what would export other weights to ``final/`` than the update the BLEU budget kept (checkpoint_best,
    the update the verdict names): the last weights (``--load_best_model_at_end false``) or the mean of the last
    epoch checkpoints (``--average_last_epochs``), neither of them checked against the budget."""
    if not cfg.mitigation.enabled():
        return
    kept = "a mitigation exports the update its BLEU budget kept (--max_bleu_drop), which the verdict names"
    if not cfg.train.load_best_model_at_end:
        raise UserError(f"--load_best_model_at_end false: {kept}; the last weights may not keep the budget")
    if cfg.train.average_last_epochs:
        raise UserError(
            f"--average_last_epochs {cfg.train.average_last_epochs}: {kept}; the mean of the last epoch checkpoints "
            "is not checked against the budget"
        )


def frozen_copy(model: torch.nn.Module) -> torch.nn.Module:
    """A copy of ``model`` (unwrapped from DDP) in evaluation mode with no gradients: the starting model a run is
    distilled toward."""
    while hasattr(model, "module"):
        model = model.module
    return copy.deepcopy(model).eval().requires_grad_(False)


class Mitigation:
    """The mitigation state of one run; every method is a no-op (or always true) when the run is no mitigation."""

    def __init__(self, cfg: RunConfig, model: torch.nn.Module, out: Path) -> None:
        self.cfg, self.out, self.on = cfg, out, cfg.mitigation.enabled()
        #: the accuracy the checkpoint is kept by (``None`` outside a mitigation)
        self.measure = MEASURES[cfg.mitigation.mitigation_accuracy] if self.on else None
        self.strength = cfg.mitigation.l2_to_start if self.on else 0.0
        trained = [p for p in model.parameters() if p.requires_grad] if self.strength else []
        self.params = trained
        self.start = [p.detach().clone() for p in trained]  # frozen copy of the starting weights
        distill = cfg.mitigation.distill_to_start if self.on else 0.0
        self.teacher = Teacher(frozen_copy(model), distill) if distill else None  # token_loss_sum's distillation
        saved = out / START_FILE
        self.start_bleu: float | None = json.loads(saved.read_text())["valid_general_bleu"] if saved.is_file() else None

    def pull(self) -> torch.Tensor | float:
        """The pull term of one micro-batch's loss (0 without ``--l2_to_start``)."""
        if not self.strength:
            return 0.0
        return self.strength * sum(((p - s) ** 2).sum() for p, s in zip(self.params, self.start))

    def needs_start(self, step: int) -> bool:
        """Whether the start is to be measured: a mitigation at update 0 (not resumed past it; a run started afresh
        in a used folder measures it again)."""
        return self.on and step == 0

    def scores(self, trainer, step: int) -> dict[str, float]:
        """General validation BLEU/chrF (``valid_general_*``); at update 0 also the general test split's
        translations (``translations/test-start.jsonl``, for the cost)."""
        if not self.on:
            return {}
        cfg = self.cfg
        found = trainer.evaluate("general", cfg.eval.eval_max_samples, save_as=f"general-step{step}")
        scores = {f"valid_general_{k}": v for k, v in found.items() if k in ("bleu", "chrf")}
        if step == 0 or self.start_bleu is None:
            self.start_bleu = scores["valid_general_bleu"]
            if "test" in trainer.raw:
                trainer.evaluate("test", save_as="test-start")
            if trainer.accelerator.is_main_process:
                atomic_write(self.out / START_FILE, json.dumps(scores, indent=2).encode("utf-8"))
        floor = self.start_bleu - cfg.mitigation.max_bleu_drop
        trainer.accelerator.print(
            f"\nupdate {step}: general BLEU {scores['valid_general_bleu']:.2f} (budget >= {floor:.2f})"
        )
        return scores

    def chooses(self, scores: dict[str, float], state, plain: bool) -> bool:
        """Whether this evaluation (of ``state.step``) is the best so far: ``plain``, the metric's own choice, outside a
        mitigation; in one, :func:`keep_checkpoint` over the scheduled evaluations so far (``state.evaluations``,
        which a scheduled one joins) and this one."""
        if not self.on:
            return plain
        record, m = {"step": state.step, **scores}, self.cfg.mitigation
        metric = self.cfg.eval.metric_for_best_model
        kept = keep_checkpoint([*state.evaluations, record], metric, m.max_bleu_drop, m.max_accuracy_drop, self.measure)
        if state.step % self.cfg.eval.eval_steps == 0:  # training's own; one at the end of a run off the grid is not
            state.evaluations.append(record)
        return kept.step == state.step
