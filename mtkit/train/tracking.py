"""Metrics out of the loop: ``metrics.jsonl`` (written by :class:`MetricsLog`, read by :func:`read_metrics`),
accelerate trackers (TensorBoard, W&B), ``curves.png``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from accelerate import Accelerator
from accelerate.tracking import LOGGER_TYPE_TO_CLASS, get_available_trackers
from accelerate.utils import LoggerType

from bias_eval.core.textio import read_jsonl
from mtkit.errors import UserError

#: the file of a run folder that holds what the run logged, one JSON object a line
METRICS_FILE = "metrics.jsonl"


def tracker_names(report_to: str) -> list[str]:
    """``"tensorboard,wandb"`` -> ``["tensorboard", "wandb"]``; ``"none"`` -> ``[]``. A name accelerate does not
    know (it would end the run in a traceback), or one whose package is not installed (accelerate would drop it
    without a word), is a :class:`UserError` naming those it knows or those installed."""
    names = [n.strip() for n in report_to.split(",") if n.strip() not in ("", "none")]
    known = list(dict.fromkeys([*LoggerType.list(), *LOGGER_TYPE_TO_CLASS]))  # with trackers registered in-process
    installed = [str(t) for t in get_available_trackers()]
    for name in names:
        if name not in known:
            raise UserError(f"--report_to: unknown tracker {name!r}; accelerate knows {', '.join(known)}, or none")
        if name != "all" and name not in installed and name in LoggerType.list():
            raise UserError(
                f"--report_to: tracker {name!r} is not installed (pip install {name}); installed: "
                f"{', '.join(installed) or 'none'}"
            )
    return names


def read_metrics(run: Path) -> list[dict[str, Any]]:
    """The records ``run`` logged (its :data:`METRICS_FILE`), in order; none before the first."""
    return [row for _, row in read_jsonl(run / METRICS_FILE, missing_ok=True)]


def validation_records(records: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """The evaluations among ``records`` (those with a validation loss), by update."""
    return {row["step"]: row for row in records if "valid_loss" in row}


class MetricsLog:
    """Append-only ``metrics.jsonl`` (one JSON object per record) mirrored to the trackers."""

    def __init__(self, output_dir: Path, accelerator: Accelerator, resume_step: int) -> None:
        self.path = output_dir / METRICS_FILE
        self.accelerator = accelerator
        if accelerator.is_main_process and self.path.exists():
            # A resumed run rewrites what came after its checkpoint.
            kept = [row for row in read_metrics(output_dir) if row["step"] <= resume_step]
            self.path.write_text("".join(json.dumps(row) + "\n" for row in kept))

    def log(self, record: dict[str, Any], step: int) -> None:
        record = {"step": step, **record}
        if self.accelerator.is_main_process:
            with self.path.open("a") as f:
                f.write(json.dumps(record) + "\n")
        self.accelerator.log({k: v for k, v in record.items() if k != "step"}, step=step)


def plot_curves(run: Path, out_file: Path) -> Path | None:
    """Training/validation loss, validation BLEU and (for gendered data) the gender gap and accuracy against the
    update step, from what ``run`` logged, as a PNG; ``None`` before anything is logged."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records = read_metrics(run)
    if not records:
        return None
    keys = ("loss", "valid_loss", "valid_bleu", "valid_bleu_gap", "valid_accuracy_pair", "valid_fair_bleu")
    series = {key: [(r["step"], r[key]) for r in records if key in r] for key in keys}
    gendered = bool(series["valid_bleu_gap"])
    fig, axes = plt.subplots(1, 3 if gendered else 2, figsize=(15 if gendered else 10, 4))
    ax_loss, ax_bleu = axes[0], axes[1]
    for key in ("loss", "valid_loss"):
        if series[key]:
            ax_loss.plot(*zip(*series[key]), label=key, marker="." if key == "valid_loss" else None)
    ax_loss.set(xlabel="update", ylabel="loss (label-smoothed for training)", title="Loss")
    ax_loss.legend()
    if series["valid_bleu"]:
        ax_bleu.plot(*zip(*series["valid_bleu"]), marker="o", color="tab:green")
    ax_bleu.set(xlabel="update", ylabel="sacreBLEU", title="Validation BLEU")
    if gendered:  # the gender figures of bias_eval, macro-averaged over languages
        ax_gap = axes[2]
        ax_gap.plot(*zip(*series["valid_bleu_gap"]), marker="o", color="tab:purple", label="BLEU gap (m - f)")
        ax_gap.axhline(0, color="grey", linewidth=0.8)
        ax_gap.set(xlabel="update", ylabel="BLEU points", title="Gender gap and accuracy")
        ax_acc = ax_gap.twinx()
        for key, colour in (("valid_accuracy_pair", "tab:orange"), ("valid_fair_bleu", "tab:brown")):
            if series[key]:
                ax_acc.plot(*zip(*series[key]), marker="s", color=colour, label=key.removeprefix("valid_"))
        ax_acc.set(ylabel="accuracy / fair BLEU (0-1)", ylim=(0, 1))
        handles = ax_gap.get_legend_handles_labels()[0] + ax_acc.get_legend_handles_labels()[0]
        ax_gap.legend(handles=handles, loc="best")
    fig.tight_layout()
    fig.savefig(out_file, dpi=100)
    plt.close(fig)
    return out_file
