"""The ``logging`` section of a recipe: progress and experiment tracking."""

from __future__ import annotations

from dataclasses import dataclass

from mtkit.config.keys import key


@dataclass
class LoggingConfig:
    """Progress and experiment tracking."""

    logging_steps: int = key(50, "Log training metrics every N updates.")
    report_to: str = key("tensorboard", "Trackers: tensorboard, wandb, trackio, comma-separated, or none.")
    project_name: str = key("mtkit", "Tracker project name (W&B project).")
    run_name: str | None = key(None, "Tracker run name (default: output_dir name).")
    disable_tqdm: bool = key(False, "No progress bar.")
    peak_tflops: float | None = key(None, "Peak dense TFLOP/s of one device for MFU (default: from the GPU's name).")
