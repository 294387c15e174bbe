"""The values each numeric run-config key accepts: the one table training's config and every script's flags
(:func:`mtkit.cli.args.ranged`) check against."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any


def _positive(v) -> bool:
    return v > 0


def _non_negative(v) -> bool:
    return v >= 0


def _fraction(v) -> bool:
    return 0 <= v < 1


def _probability(v) -> bool:
    return 0 < v <= 1


#: the values each numeric key accepts (None, where allowed, always is): key -> (test, what the test asks for)
RANGES: dict[str, tuple[Callable[[Any], bool], str]] = {
    **dict.fromkeys(
        (
            "learning_rate",
            "adam_epsilon",
            "lora_alpha",
            "peak_tflops",
            "max_tokens",
            "max_sentences",
            "gradient_accumulation_steps",
            "save_steps",
            "save_total_limit",
            "eval_steps",
            "eval_max_samples",
            "eval_batch_size",
            "num_beams",
            "max_new_tokens",
            "logging_steps",
            "max_source_length",
            "max_target_length",
            "max_train_samples",
            "preprocessing_num_workers",
            "tokenizer_train_samples",
            "vocab_size",
            "ddp_timeout",
            "mbr_samples",
        ),
        (_positive, "> 0"),
    ),  # fmt: skip
    **dict.fromkeys(("max_steps", "warmup_steps", "weight_decay", "max_grad_norm"), (_non_negative, ">= 0")),
    **dict.fromkeys(("max_nonfinite_updates", "lora_r", "max_len_a", "max_len_b"), (_non_negative, ">= 0")),
    "dataloader_num_workers": (_non_negative, ">= 0"),
    **dict.fromkeys(
        ("adam_beta1", "adam_beta2", "label_smoothing", "dropout", "lora_dropout", "epsilon"), (_fraction, "in [0, 1)")
    ),
    "top_p": (_probability, "in (0, 1]"),
    "length_penalty": (math.isfinite, "finite"),
}
