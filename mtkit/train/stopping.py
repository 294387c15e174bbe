"""Early stopping with patience (``--early_stopping_patience``, fairseq's ``--patience``): a run stops once that many
evaluations in a row bring no new best ``--metric_for_best_model``, and exports as a finished run does.

The count lives in the checkpointed :class:`~mtkit.train.checkpoint.TrainerState` (``evaluations_since_best``), so a
relaunch of a run that stopped finds it exhausted and trains no further; a relaunch with a larger patience trains on.
Only the evaluations of the ``--eval_steps`` grid count: the one at the end of a run off the grid is not training's.
"""

from __future__ import annotations

from collections.abc import Callable

from mtkit.config import RunConfig
from mtkit.train.checkpoint import TrainerState


class Patience:
    """Counts the evaluations without a new best and says when the run is to stop."""

    def __init__(self, cfg: RunConfig, state: TrainerState, log: Callable[[str], None] = print) -> None:
        self.patience, self.eval_steps = cfg.train.early_stopping_patience, cfg.eval.eval_steps
        self.metric, self.log = cfg.eval.metric_for_best_model, log
        if self.exhausted(state):
            log(f"{self._why(state)}: the run stopped early at update {state.step}; not training on")

    def exhausted(self, state: TrainerState) -> bool:
        """Whether ``--early_stopping_patience`` evaluations in a row brought no new best."""
        return self.patience is not None and state.evaluations_since_best >= self.patience

    def after_evaluation(self, state: TrainerState, is_best: bool) -> bool:
        """Count this update's evaluation (when on the ``--eval_steps`` grid); True if the run is to stop here."""
        if state.step % self.eval_steps:
            return False
        state.evaluations_since_best = 0 if is_best else state.evaluations_since_best + 1
        if not self.exhausted(state):
            return False
        self.log(f"{self._why(state)}: stopping early at update {state.step} (best at update {state.best_step})")
        return True

    def _why(self, state: TrainerState) -> str:
        return (
            f"--early_stopping_patience {self.patience}: {state.evaluations_since_best} evaluations in a row without "
            f"a new best validation {self.metric}"
        )
