"""The ``train`` section of a recipe: the loop's length, batching, precision and checkpoints, the hub upload, and
when training stops and which epoch checkpoints it keeps and averages: early stopping with patience, epoch
checkpoints, the mean of the last of them as ``final/`` (fairseq's ``--patience``, ``--keep-last-epochs`` and
``average_checkpoints.py --num-epoch-checkpoints``; read by :mod:`mtkit.train.stopping` and
:mod:`mtkit.train.epochs`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mtkit.config.keys import key


@dataclass
class TrainConfig:
    """The loop: length, batching, precision, checkpoints, early stopping."""

    # early stopping and epoch checkpoints (docs/training.md, "Stopping early, epoch checkpoints"): first, where
    # --help and a run's config.yaml list them
    early_stopping_patience: int | None = key(
        None,
        "Stop once N evaluations in a row bring no new best --metric_for_best_model (fairseq's --patience; none: "
        "train to --max_steps); the run then exports as a finished one, and a relaunch does not train on.",
    )
    keep_last_epochs: int = key(
        0, "Also checkpoint the end of every epoch and keep the last N of these beyond --save_total_limit (0: none)."
    )
    average_last_epochs: int = key(
        0,
        "Export the mean of the last N epoch checkpoints' weights to final/ (and score it on the test split) instead "
        "of checkpoint_best; keeps N epoch checkpoints (0: no averaging).",
    )
    output_dir: str = key("runs/default", "Run folder: checkpoints, logs, final model. Re-running resumes.")
    overwrite_output_dir: bool = key(
        False,
        "Start afresh in an output_dir whose checkpoints cannot be read or were made with settings that cannot "
        "change on resume (they are otherwise never overwritten).",
    )
    seed: int = key(1, "Random seed.")
    max_steps: int = key(100000, "Optimizer updates to train for.")
    max_tokens: int = key(4096, "Token budget per batch and process (padded source or target tokens).")
    max_sentences: int | None = key(None, "Cap on sentences per batch.")
    pad_to_multiple_of: int = key(
        1, "Pad each batch's source and target length to a multiple of N (1: to the longest sentence only)."
    )
    gradient_accumulation_steps: int = key(1, "Batches accumulated per update.")
    mixed_precision: Literal["auto", "no", "fp16", "bf16"] | None = key(
        None, "Compute precision; default auto: a launcher's bf16/fp16, else bf16 on GPUs with bf16, else fp32 (TF32)."
    )
    save_steps: int = key(1000, "Save a checkpoint every N updates.")
    save_total_limit: int = key(3, "Keep the last N step checkpoints (checkpoint_best is always kept).")
    load_best_model_at_end: bool = key(
        True, "Export checkpoint_best (by --metric_for_best_model) to final/ instead of the last."
    )
    force_fp16: bool = key(
        False, "Allow --mixed_precision fp16 and --export_ct2 float16/int8_float16 with a T5-family model (overflows)."
    )
    force_coverage: bool = key(
        False, "Train even if the given tokenizer cannot write over 1 in 100 characters of a target language."
    )
    gradient_checkpointing: bool = key(False, "Recompute activations in the backward pass: less memory, ~30% slower.")
    torch_compile: bool = key(False, "Compile the model with torch.compile (with the loss; dynamic shapes).")
    torch_compile_mode: Literal["default", "reduce-overhead", "max-autotune"] = key(
        "default", "torch.compile's mode: reduce-overhead replays CUDA graphs (with --static_shapes)."
    )
    fuse_norms: bool = key(
        False, "GPU: run each T5 RMS norm as one compiled kernel (for ZeRO-3 and FSDP, which refuse --torch_compile)."
    )
    static_shapes: bool = key(
        False,
        "Batches from a few fixed shapes (pairs bucketed by length: 8, 16, 24, 32, 48, 64, 96, ... tokens; a fixed "
        "number per bucket), compiled without dynamic shapes.",
    )
    dataloader_num_workers: int | None = key(
        None, "Processes collating training batches (default: 2 on a GPU, 0 on a CPU)."
    )
    ddp_timeout: int = key(
        1800, "Seconds a collective may wait (process-group timeout); raise it for long preprocessing."
    )
    push_to_hub: bool = key(
        False, "At the end, upload final/ (card included; final_ct2/ as ctranslate2/) to the Hugging Face hub."
    )
    hub_model_id: str | None = key(None, "Hub repository for --push_to_hub (user/name; default: output_dir's name).")
    hub_private_repo: bool = key(False, "Create the hub repository private (an existing one keeps its visibility).")
