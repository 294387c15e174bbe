"""The ``optim`` section of a recipe: optimizer and learning-rate schedule."""

from __future__ import annotations

from dataclasses import dataclass

from mtkit.config.keys import key


@dataclass
class OptimConfig:
    """Optimizer and learning-rate schedule (all steps are optimizer updates)."""

    learning_rate: float = key(7e-4, "Peak learning rate (Noam base: 512**-0.5 * 4000**-0.5 = 7e-4).")
    lr_scheduler_type: str = key("inverse_sqrt", "transformers scheduler name: inverse_sqrt, linear, cosine, ...")
    warmup_steps: int = key(4000, "Linear warm-up updates.")
    adam_beta1: float = key(0.9, "Adam beta1.")
    adam_beta2: float = key(0.98, "Adam beta2.")
    adam_epsilon: float = key(1e-9, "Adam epsilon.")
    weight_decay: float = key(0.0, "Decoupled weight decay (AdamW); 0 is plain Adam.")
    max_grad_norm: float = key(1.0, "Gradient clipping norm (0 disables).")
    max_nonfinite_updates: int = key(
        10, "Updates with a NaN/inf loss or gradient are skipped; stop after this many in a row (0: never stop)."
    )
    label_smoothing: float = key(0.1, "Label smoothing of the cross-entropy.")
