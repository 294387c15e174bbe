"""Run configuration: grouped, typed dataclasses filled from a YAML recipe and ``--key value`` overrides.

A recipe is YAML with one section per group (``data``, ``tokenizer``, ``model``, ``optim``, ``train``, ``eval``,
``logging``, ``mitigation``); a key may also stand at top level. Every key name is unique across groups, so the
command line uses the plain Hugging Face style names (``--max_steps 100``).
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import sys
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from transformers import HfArgumentParser

from mtkit.errors import UserError
from mtkit.flags import DefaultsHelpFormatter, first_names, join_lists
from mtkit.logging_config import LoggingConfig
from mtkit.mitigation_config import MitigationConfig
from mtkit.model_shape import ModelShape
from mtkit.overrides import settle
from mtkit.ranges import RANGES
from mtkit.run_controls import TrainingControls
from mtkit.textio import atomic_write

#: Default output bound per batch: ``MAX_LEN_A * longest source + MAX_LEN_B`` tokens (fairseq's ``--max-len-a/b``).
#: Generous between European languages (targets run to about 1.3x the source in subwords); it stops a degenerate
#: hypothesis from keeping its whole batch decoding to ``max_new_tokens``.
MAX_LEN_A = 1.5
MAX_LEN_B = 10
#: MBR decoding's candidates per sentence, and its sampling cutoffs where none is given: epsilon sampling's
#: (transformers; Freitag et al., 2023, "Epsilon Sampling Rocks") and the nucleus mass CTranslate2 samples from (it
#: has no epsilon sampling)
EPSILON = 0.02
MBR_SAMPLES = 16
CT2_TOP_P = 0.9
#: ``--metric_for_best_model``'s choices
BestMetric = Literal["bleu", "chrf", "loss", "paper_bleu", "fair_bleu", "accuracy_pair", "bleu_gap_abs"]


def _f(default: Any, help: str, **kw) -> Any:
    return field(default=default, metadata={"help": help, **kw})


@dataclass
class DataConfig:
    """Where the parallel data comes from and how it is cut."""

    data_dir: str | None = _f(None, "Folder of line-aligned files <split>.<lang> or <split>.<lang>.gz.")
    train_file: str | None = _f(None, "CSV/TSV/JSONL training file with source and target columns.")
    validation_file: str | None = _f(None, "CSV/TSV/JSONL validation file.")
    test_file: str | None = _f(None, "CSV/TSV/JSONL test file.")
    dataset_name: str | None = _f(None, "Hugging Face hub dataset with a `translation` column (e.g. wmt14).")
    dataset_config_name: str | None = _f(None, "Hub dataset configuration (e.g. de-en).")
    source_lang: str = _f("en", "Source language code.")
    target_lang: str = _f("de", "Target language code.")
    train_split: str = _f("train", "Name of the training split.")
    validation_split: str = _f("valid", "Name of the validation split (Multi30k: val; hub: validation).")
    test_split: str | None = _f("test", "Name of the test split, evaluated once at the end (none to skip).")
    source_column: str | None = _f(None, "Source column of a CSV/TSV/JSONL file (default: detected).")
    target_column: str | None = _f(None, "Target column of a CSV/TSV/JSONL file (default: detected).")
    mtgeneval_dir: str | None = _f(
        None, "MT-GenEval in its repository layout: train on the counterfactual sentences of --target_langs."
    )
    mtgeneval_split: str = _f("dev", "MT-GenEval split to train on with --mtgeneval_dir (dev or test).")
    target_langs: str | None = _f(
        None, "Comma-separated target languages of a multilingual run (e.g. de,es,fr,it,pt); default --target_lang."
    )
    skip_empty_pairs: bool = _f(
        False, "Drop pairs with an empty side (counted in the log) instead of refusing the file; for large corpora."
    )
    validation_fraction: float = _f(
        0.1,
        "Without a validation split: the share held out, seeded, stratified by language and gender, "
        "counterfactual pairs kept together (written to <output_dir>/validation_split.jsonl).",
    )
    prompt: str | None = _f(
        None,
        "Source prompt: a preset (t5, instruction) or a template with {source} and optionally {lang_name}, "
        "{lang}, {src_lang_name}; saved with the model.",
    )
    max_source_length: int = _f(256, "Longest source in tokens (longer training pairs: --long_pairs).")
    max_target_length: int = _f(256, "Longest target in tokens (longer training pairs: --long_pairs).")
    long_pairs: Literal["drop", "truncate"] = _f(
        "drop",
        "Training pairs longer than the length limits: drop them (counted in the log; a cut target still ends in "
        "</s> and teaches the model to stop early) or truncate them. Validation and test pairs are truncated.",
    )
    max_train_samples: int | None = _f(None, "Use only the first N training pairs (debugging).")
    preprocessing_num_workers: int | None = _f(None, "Processes for tokenization (datasets.map num_proc).")

    def languages(self) -> list[str]:
        """The run's target languages: ``--target_langs`` split on commas, else ``[--target_lang]``."""
        if not self.target_langs:
            return [self.target_lang]
        return [code.strip() for code in self.target_langs.split(",") if code.strip()]


@dataclass
class TokenizerConfig:
    """The shared subword vocabulary."""

    tokenizer_name: str | None = _f(None, "Existing tokenizer (dir or hub id); default: train one on the data.")
    tokenizer_type: Literal["bpe", "unigram"] = _f("bpe", "Subword model trained on source+target text.")
    vocab_size: int = _f(8000, "Subword vocabulary size (the paper's WMT14 EN-DE: 37000).")
    tokenizer_train_samples: int | None = _f(None, "Train the tokenizer on at most N sentence pairs.")


@dataclass
class ModelConfig(ModelShape):
    """Architecture preset or pretrained model (and, inherited, a from-scratch model's shape keys)."""

    model: str = _f(
        "transformer-base",
        "Architecture preset for training from scratch: transformer-tiny, transformer-small, transformer-base, "
        "transformer-big, flan-t5-small, flan-t5-base, flan-t5-large or flan-t5-xl.",
    )
    model_name_or_path: str | None = _f(None, "Pretrained seq2seq model to fine-tune (dir or hub id).")
    lora_r: int = _f(0, "LoRA rank (peft); 0 trains every weight.")
    lora_alpha: float = _f(32.0, "LoRA scaling numerator (updates are scaled by alpha / r).")
    lora_dropout: float = _f(0.05, "Dropout on the LoRA path.")
    lora_target_modules: str | None = _f(
        None, "Comma-separated module names LoRA adapts (default: the attention projections of the model type)."
    )


@dataclass
class OptimConfig:
    """Optimizer and learning-rate schedule (all steps are optimizer updates)."""

    learning_rate: float = _f(7e-4, "Peak learning rate (Noam base: 512**-0.5 * 4000**-0.5 = 7e-4).")
    lr_scheduler_type: str = _f("inverse_sqrt", "transformers scheduler name: inverse_sqrt, linear, cosine, ...")
    warmup_steps: int = _f(4000, "Linear warm-up updates.")
    adam_beta1: float = _f(0.9, "Adam beta1.")
    adam_beta2: float = _f(0.98, "Adam beta2.")
    adam_epsilon: float = _f(1e-9, "Adam epsilon.")
    weight_decay: float = _f(0.0, "Decoupled weight decay (AdamW); 0 is plain Adam.")
    max_grad_norm: float = _f(1.0, "Gradient clipping norm (0 disables).")
    max_nonfinite_updates: int = _f(
        10, "Updates with a NaN/inf loss or gradient are skipped; stop after this many in a row (0: never stop)."
    )
    label_smoothing: float = _f(0.1, "Label smoothing of the cross-entropy.")


@dataclass
class TrainConfig(TrainingControls):
    """The loop: length, batching, precision, checkpoints, early stopping (keys inherited)."""

    output_dir: str = _f("runs/default", "Run folder: checkpoints, logs, final model. Re-running resumes.")
    overwrite_output_dir: bool = _f(
        False,
        "Start afresh in an output_dir whose checkpoints cannot be read or were made with settings that cannot "
        "change on resume (they are otherwise never overwritten).",
    )
    seed: int = _f(1, "Random seed.")
    max_steps: int = _f(100000, "Optimizer updates to train for.")
    max_tokens: int = _f(4096, "Token budget per batch and process (padded source or target tokens).")
    max_sentences: int | None = _f(None, "Cap on sentences per batch.")
    gradient_accumulation_steps: int = _f(1, "Batches accumulated per update.")
    mixed_precision: Literal["auto", "no", "fp16", "bf16"] | None = _f(
        None, "Compute precision; default auto: a launcher's bf16/fp16, else bf16 on GPUs with bf16, else fp32 (TF32)."
    )
    save_steps: int = _f(1000, "Save a checkpoint every N updates.")
    save_total_limit: int = _f(3, "Keep the last N step checkpoints (checkpoint_best is always kept).")
    load_best_model_at_end: bool = _f(
        True, "Export checkpoint_best (by --metric_for_best_model) to final/ instead of the last."
    )
    force_fp16: bool = _f(
        False, "Allow --mixed_precision fp16 and --export_ct2 float16/int8_float16 with a T5-family model (overflows)."
    )
    force_coverage: bool = _f(
        False, "Train even if the given tokenizer cannot write over 1 in 100 characters of a target language."
    )
    gradient_checkpointing: bool = _f(False, "Recompute activations in the backward pass: less memory, ~30% slower.")
    torch_compile: bool = _f(False, "Compile the model with torch.compile.")
    dataloader_num_workers: int | None = _f(
        None, "Processes collating training batches (default: 2 on a GPU, 0 on a CPU)."
    )
    ddp_timeout: int = _f(
        1800, "Seconds a collective may wait (process-group timeout); raise it for long preprocessing."
    )
    push_to_hub: bool = _f(
        False, "At the end, upload final/ (card included; final_ct2/ as ctranslate2/) to the Hugging Face hub."
    )
    hub_model_id: str | None = _f(None, "Hub repository for --push_to_hub (user/name; default: output_dir's name).")
    hub_private_repo: bool = _f(False, "Create the hub repository private (an existing one keeps its visibility).")


@dataclass
class EvalConfig:
    """Validation during training and decoding settings."""

    eval_steps: int = _f(1000, "Evaluate (loss + BLEU) every N updates.")
    eval_max_samples: int | None = _f(None, "Decode at most N validation sentences for BLEU.")
    eval_batch_size: int = _f(64, "Sentences per generation batch.")
    num_beams: int = _f(4, "Beam size.")
    length_penalty: float = _f(0.6, "Beam-search length penalty.")
    max_new_tokens: int = _f(256, "Longest generated translation.")
    max_len_a: float = _f(
        MAX_LEN_A, "Each decoding batch stops after max_len_a x its longest source + max_len_b tokens (fairseq's)."
    )
    max_len_b: int = _f(MAX_LEN_B, "See --max_len_a.")
    decoding: Literal["beam", "mbr"] = _f(
        "beam", "beam: the beam's best translation; mbr: the minimum-Bayes-risk choice among --mbr_samples candidates."
    )
    mbr_samples: int = _f(MBR_SAMPLES, "Candidates per sentence for --decoding mbr.")
    mbr_candidates: Literal["sample", "beam"] = _f(
        "sample", "MBR's candidates: epsilon (or nucleus) samples, or the beam's n-best (beam raised to the count)."
    )
    epsilon: float | None = _f(None, f"Epsilon sampling's cutoff for MBR candidates (default {EPSILON}; 0: none).")
    top_p: float | None = _f(None, f"Nucleus mass for MBR samples (default 1; {CT2_TOP_P} with CTranslate2).")
    metric_for_best_model: BestMetric = _f(
        "bleu",
        "What selects checkpoint_best: validation bleu/chrf/paper_bleu/fair_bleu/accuracy_pair (higher is better) or "
        "loss/bleu_gap_abs (lower); paper_bleu needs --paper_bleu, the gender metrics gendered validation data.",
    )
    paper_bleu: Literal["none", "moses-lc", "moses", "tokenized"] = _f(
        "none",
        "Also score paper_bleu: multi-bleu on lowercased (moses-lc) or cased Moses-tokenized text (docs/scoring.md).",
    )
    bias_report_split: str | None = _f(
        None, "At the end, write the bias_eval report of this MT-GenEval split (dev/test) to <output_dir>/bias_report."
    )
    export_ct2: str | None = _f(
        None,
        "At the end, also convert final/ to CTranslate2 with this quantization (auto: int8 without CUDA, "
        "int8_bfloat16 with a GPU; int8, int8_float16, int8_bfloat16, int16, float16, bfloat16, float32; float16 types "
        "refused for T5) into <output_dir>/final_ct2, checked against transformers on the validation sources.",
    )


GROUPS: dict[str, type] = {
    "data": DataConfig,
    "tokenizer": TokenizerConfig,
    "model": ModelConfig,
    "optim": OptimConfig,
    "train": TrainConfig,
    "eval": EvalConfig,
    "logging": LoggingConfig,
    "mitigation": MitigationConfig,
}


@dataclass
class RunConfig:
    """All groups of one run."""

    data: DataConfig = field(default_factory=DataConfig)
    tokenizer: TokenizerConfig = field(default_factory=TokenizerConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    optim: OptimConfig = field(default_factory=OptimConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    logging: LoggingConfig = field(default_factory=LoggingConfig)
    mitigation: MitigationConfig = field(default_factory=MitigationConfig)

    def to_dict(self) -> dict[str, dict[str, Any]]:
        return {name: dataclasses.asdict(getattr(self, name)) for name in GROUPS}

    def flat(self) -> dict[str, Any]:
        return {k: v for group in self.to_dict().values() for k, v in group.items()}

    def save(self, path: str | Path) -> None:
        """Write the recipe atomically (a full disk is one :class:`UserError` naming the file)."""
        atomic_write(Path(path), yaml.safe_dump(self.to_dict(), sort_keys=False).encode("utf-8"))


FIELDS: dict[str, tuple[str, dataclasses.Field]] = {
    f.name: (group, f) for group, cls in GROUPS.items() for f in dataclasses.fields(cls)
}


def _unknown(key: str, where: str) -> UserError:
    close = difflib.get_close_matches(key, FIELDS, n=1)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    return UserError(f"{where}: unknown key '{key}'{hint}")


def _coerce(key: str, value: Any, where: str) -> Any:
    """Check a recipe value against the field's type; return it (ints accepted for floats)."""
    hint = typing.get_type_hints(GROUPS[FIELDS[key][0]])[key]
    optional = typing.get_origin(hint) is not Literal and type(None) in typing.get_args(hint)
    if value is None:
        if optional:
            return None
        raise UserError(f"{where}: key '{key}' may not be empty")
    base = next(a for a in typing.get_args(hint) if a is not type(None)) if optional else hint
    if typing.get_origin(base) is Literal:
        if value not in typing.get_args(base):
            raise UserError(f"{where}: key '{key}' must be one of {list(typing.get_args(base))}, got {value!r}")
        return value
    if base is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if base is float and isinstance(value, str):
        try:
            return float(value)  # YAML reads 7e-4 as a string
        except ValueError:
            pass
    if not isinstance(value, base) or (base is int and isinstance(value, bool)):
        raise UserError(f"{where}: key '{key}' expects {base.__name__}, got {value!r}")
    return value


def load_recipe(path: str | Path) -> dict[str, Any]:
    """Read a YAML recipe into a flat ``{key: value}`` dict, checking every key and type."""
    where = f"--config {path}"
    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{where}: file not found") from None
    except (OSError, UnicodeDecodeError) as err:
        raise UserError(f"{where}: cannot read ({getattr(err, 'strerror', None) or 'not UTF-8 text'})") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f" at line {mark.line + 1}" if mark else ""
        raise UserError(f"{where}: malformed YAML{line}") from None
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise UserError(f"{where}: expected a mapping of sections/keys, got {type(raw).__name__}")
    flat: dict[str, Any] = {}
    for key, value in raw.items():
        if key in GROUPS:
            if not isinstance(value, dict):
                raise UserError(f"{where}: section '{key}' must be a mapping")
            for sub, v in value.items():
                if sub not in FIELDS:
                    raise _unknown(sub, where)
                if FIELDS[sub][0] != key:
                    raise UserError(f"{where}: key '{sub}' belongs in section '{FIELDS[sub][0]}', not '{key}'")
                flat[sub] = _coerce(sub, v, where)
        elif key in FIELDS:
            flat[key] = _coerce(key, value, where)
        else:
            raise _unknown(key, where)
    return flat


def check_ranges(cfg: RunConfig) -> None:
    """One :class:`UserError` naming the first flag whose value is out of its range."""
    for key, (ok, wanted) in RANGES.items():
        value = getattr(getattr(cfg, FIELDS[key][0]), key)
        if value is not None and not ok(value):
            raise UserError(f"--{key}: must be {wanted}, got {value}")


class _Parser(HfArgumentParser):
    """HfArgumentParser whose errors are one-line :class:`UserError` s."""

    def error(self, message: str) -> typing.NoReturn:
        raise UserError(first_names(message))


#: the keys that take a list: comma-separated (``--target_langs de,es``), words after the flag also accepted
LIST_KEYS = ("target_langs", "lora_target_modules", "report_to")


def train_parser(recipe: dict[str, Any] | None = None) -> HfArgumentParser:
    """The parser of ``train.py``: ``--config`` first, then one group per recipe section."""
    parser = _Parser(None, allow_abbrev=False, description="Train a translation model.",
                     formatter_class=DefaultsHelpFormatter)  # fmt: skip
    parser.add_argument("--config", help="YAML recipe (recipes/*.yaml); flags given after it override it.")
    for name, cls in GROUPS.items():
        cls._argument_group_name = f"{name} ({cls.__doc__.rstrip('.')})"  # a recipe section, as --help shows it
        parser._add_dataclass_arguments(cls)
    parser.dataclass_types = list(GROUPS.values())
    parser.set_defaults(**(recipe or {}))
    return parser


def parse_config(argv: list[str] | None = None) -> RunConfig:
    """Build a :class:`RunConfig` from ``--config recipe.yaml`` plus ``--key value`` overrides."""
    argv = sys.argv[1:] if argv is None else list(argv)
    pre = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    pre.add_argument("--config")
    known, rest = pre.parse_known_args(argv)
    recipe = load_recipe(known.config) if known.config else {}
    parser, flags = train_parser(recipe), set()
    for token in rest:
        if token.startswith("--"):
            key = token[2:].split("=", 1)[0].replace("-", "_")  # --max-steps: HfArgumentParser's alias
            plain = key[3:] if key.startswith("no_") else key
            if key not in FIELDS and plain not in FIELDS and key not in ("help", "config"):
                raise _unknown(key, "command line")
            flags.add(key)
    *groups, stray = parser.parse_args_into_dataclasses(args=join_lists(argv, LIST_KEYS), return_remaining_strings=True)
    if stray:
        before = argv[: argv.index(stray[0])][-2:] if stray[0] in argv else []
        where = f" after {' '.join(before)}" if before else ""
        raise UserError(f"command line: unexpected {stray[0]!r}{where} (not a flag, nor a value of the flag before it)")
    cfg = RunConfig(**dict(zip(GROUPS, [g for g in groups if dataclasses.is_dataclass(g)])))
    settle(cfg, recipe, flags, known.config)  # `--mtgeneval_dir none` clears what the recipe set; one data source
    check_ranges(cfg)
    return cfg
