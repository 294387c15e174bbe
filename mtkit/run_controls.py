"""The recipe keys that decide when training stops and which epoch checkpoints it keeps and averages: early
stopping with patience, epoch checkpoints, the mean of the last of them as ``final/`` (fairseq's ``--patience``,
``--keep-last-epochs`` and ``average_checkpoints.py --num-epoch-checkpoints``). Read by
:mod:`mtkit.train.stopping` and :mod:`mtkit.train.epochs`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def _key(default: Any, help: str) -> Any:
    return field(default=default, metadata={"help": help})


@dataclass
class TrainingControls:
    """Early stopping and epoch checkpoints (docs/training.md, "Stopping early, epoch checkpoints")."""

    early_stopping_patience: int | None = _key(
        None,
        "Stop once N evaluations in a row bring no new best --metric_for_best_model (fairseq's --patience; none: "
        "train to --max_steps); the run then exports as a finished one, and a relaunch does not train on.",
    )
    keep_last_epochs: int = _key(
        0, "Also checkpoint the end of every epoch and keep the last N of these beyond --save_total_limit (0: none)."
    )
    average_last_epochs: int = _key(
        0,
        "Export the mean of the last N epoch checkpoints' weights to final/ (and score it on the test split) instead "
        "of checkpoint_best; keeps N epoch checkpoints (0: no averaging).",
    )
