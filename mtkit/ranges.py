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


def _open_fraction(v) -> bool:
    return 0 < v < 1


#: the seeds numpy takes (``np.random.seed`` and ``RandomState`` refuse others: "Seed must be between 0 and
#: 2**32 - 1"); torch's and Python's generators take them too
SEED_MAX = 2**32 - 1


def _seed(v) -> bool:
    return 0 <= v <= SEED_MAX


#: the special tokens a trained vocabulary holds before any subword (``<s> <pad> </s> <unk>``:
#: :data:`mtkit.data.tokenizer.SPECIAL_TOKENS`); a vocabulary needs room for subwords beyond them
SPECIAL_TOKENS = 4


def _vocabulary(v) -> bool:
    return v > SPECIAL_TOKENS


def _at_least_one(v) -> bool:
    return v >= 1


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
            "pad_to_multiple_of",
            "gradient_accumulation_steps",
            "save_steps",
            "save_total_limit",
            "eval_steps",
            "eval_max_samples",
            "winomt_max_samples",
            "eval_batch_size",
            "num_beams",
            "max_new_tokens",
            "logging_steps",
            "max_source_length",
            "max_target_length",
            "max_train_samples",
            "preprocessing_num_workers",
            "tokenizer_train_samples",
            "ddp_timeout",
            "mbr_samples",
            "d_model",
            "encoder_attention_heads",
            "decoder_attention_heads",
            "encoder_ffn_dim",
            "decoder_ffn_dim",
        ),
        (_positive, "> 0"),
    ),  # fmt: skip
    **dict.fromkeys(("max_steps", "warmup_steps", "weight_decay", "max_grad_norm"), (_non_negative, ">= 0")),
    **dict.fromkeys(("max_nonfinite_updates", "lora_r", "max_len_a", "max_len_b"), (_non_negative, ">= 0")),
    **dict.fromkeys(("dataloader_num_workers", "keep_last_epochs", "average_last_epochs"), (_non_negative, ">= 0")),
    **dict.fromkeys(("encoder_layers", "decoder_layers", "early_stopping_patience"), (_at_least_one, ">= 1")),
    **dict.fromkeys(
        ("adam_beta1", "adam_beta2", "label_smoothing", "dropout", "lora_dropout", "epsilon")
        + ("attention_dropout", "activation_dropout"),
        (_fraction, "in [0, 1)"),
    ),
    "top_p": (_probability, "in (0, 1]"),
    "length_penalty": (math.isfinite, "finite"),
    "seed": (_seed, f"in [0, {SEED_MAX}] (numpy's seeds)"),
    "vocab_size": (_vocabulary, f"> {SPECIAL_TOKENS} (the special tokens <s> <pad> </s> <unk>, and subwords)"),
    "validation_fraction": (_open_fraction, "in (0, 1)"),
    **dict.fromkeys(("verdict_fraction", "selection_fraction"), (_open_fraction, "in (0, 1)")),
    **dict.fromkeys(("replay_ratio", "distill_to_start", "unseen_fraction"), (_fraction, "in [0, 1)")),
    **dict.fromkeys(("l2_to_start", "max_bleu_drop", "max_accuracy_drop", "min_effect"), (_non_negative, ">= 0")),
}

#: the numeric flags of the scripts that are no run-config key, each with its range: counts of sentences,
#: checkpoints, resamples, threads and updates, and two shares
SCRIPT_RANGES: dict[str, tuple[Callable[[Any], bool], str]] = {
    **dict.fromkeys(
        ("n_train", "n_valid", "n_test", "n_gender_pairs", "check_samples", "bootstrap_samples", "examples")
        + ("base_updates", "warmup_updates"),
        (_non_negative, ">= 0"),
    ),
    **dict.fromkeys(
        ("last", "best", "last_epochs", "steps", "warmup", "workers", "threads", "updates", "repeats")
        + ("profile_update",),
        (_at_least_one, ">= 1"),
    ),
    "max_length": (_positive, "> 0"),
    "minutes": (_positive, "> 0"),
    "feminine_scale": (_probability, "in (0, 1]"),
}
#: the flags of :data:`SCRIPT_RANGES` that take a float (the others take an integer)
SCRIPT_FLOATS = frozenset({"minutes", "feminine_scale"})
