"""The ``logging`` section of a recipe: progress and experiment tracking (a group of :class:`mtkit.config.RunConfig`,
in its own module to keep ``config`` short)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def _f(default: Any, help: str) -> Any:
    return field(default=default, metadata={"help": help})


@dataclass
class LoggingConfig:
    """Progress and experiment tracking."""

    logging_steps: int = _f(50, "Log training metrics every N updates.")
    report_to: str = _f("tensorboard", "Trackers: tensorboard, wandb, trackio, comma-separated, or none.")
    project_name: str = _f("mtkit", "Tracker project name (W&B project).")
    run_name: str | None = _f(None, "Tracker run name (default: output_dir name).")
    disable_tqdm: bool = _f(False, "No progress bar.")
    peak_tflops: float | None = _f(None, "Peak dense TFLOP/s of one device for MFU (default: from the GPU's name).")
