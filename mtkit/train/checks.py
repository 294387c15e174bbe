"""Input checks a run makes before it writes anything: the launch (its DeepSpeed settings, its trackers), model and
tokenizer sources, the end-of-run steps asked for (a CTranslate2 quantization it knows and the model decodes in, an
MT-GenEval split it can score), and a resume's settings against those the run folder was made with
(:data:`RESUMABLE`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from bias_eval.winomt.data import load_winomt
from mtkit.config import FIELDS, RunConfig
from mtkit.data.mtgeneval import available_splits, mtgeneval_root
from mtkit.decode.ct2 import QUANTIZATIONS
from mtkit.decode.mbr import MBR_KEYS
from mtkit.decode.settings import SAVED
from mtkit.distributed.deepspeed import check_deepspeed_config
from mtkit.errors import UserError
from mtkit.model.lora import check_strategy
from mtkit.model.precision import FP16_UNSAFE
from mtkit.model.presets import preset_model_type
from mtkit.paths import check_apart
from mtkit.train.mitigation import check_export
from mtkit.train.tracking import tracker_names


def check_run_apart(cfg: RunConfig) -> None:
    """Refuse an ``--output_dir`` that is, contains or lies inside one of the run's inputs (its data, model or
    tokenizer; the recipe may lie in it: a resume's ``--config <output_dir>/config.yaml``)."""
    d, names = cfg.data, ("data_dir", "train_file", "validation_file", "test_file", "mtgeneval_dir")
    inputs = {f"--{key}": getattr(d, key) for key in names} | {"--winomt_dir": cfg.eval.winomt_dir}
    inputs |= {"--model_name_or_path": cfg.model.model_name_or_path, "--tokenizer_name": cfg.tokenizer.tokenizer_name}
    check_apart(inputs, {"--output_dir": cfg.train.output_dir})


def check_position_limit(cfg: RunConfig) -> None:
    """Refuse length limits beyond a pretrained model's position table (learned or sinusoidal: BART, Marian, NLLB,
    mBART's ``max_position_embeddings``), which training would index past at the first long batch; T5's relative
    positions have no such limit."""
    if not cfg.model.model_name_or_path:
        return  # a preset is built with positions for the run's lengths
    limit = run_model_config(cfg).get("max_position_embeddings")
    for flag in ("max_source_length", "max_target_length"):
        asked = getattr(cfg.data, flag)
        if isinstance(limit, int) and asked > limit:
            raise UserError(
                f"--{flag} {asked}: {cfg.model.model_name_or_path} has {limit} positions (max_position_embeddings); "
                f"at most {limit}"
            )


def check_launch(cfg: RunConfig) -> None:
    """Refuse, before the data is even read, what the launch asks for and the run could not do: DeepSpeed settings
    its end could not export with, or a gradient accumulation they contradict (:func:`check_deepspeed_config`), and
    trackers accelerate does not know or cannot import (:func:`~mtkit.train.tracking.tracker_names`), LoRA under
    ZeRO-3 (:func:`~mtkit.model.lora.check_strategy`), and a mitigation's export of other weights than its budget
    kept (:func:`~mtkit.train.mitigation.check_export`)."""
    stage = check_deepspeed_config(cfg)
    if cfg.model.lora_r:
        check_strategy(stage)
    tracker_names(cfg.logging.report_to)
    check_export(cfg)  # a mitigation's final/ is the update its BLEU budget kept


def bias_report_split(cfg: RunConfig) -> str | None:
    """``--bias_report_split``, with ``none`` (or empty) meaning no report."""
    split = cfg.eval.bias_report_split
    return None if not split or split.lower() == "none" else split


#: ``--quantization auto``: int8 without a CUDA device, int8_bfloat16 with one (:func:`mtkit.export.ct2.resolve`).
AUTO = "auto"
#: CTranslate2's types that compute in IEEE float16, each with the bfloat16 type a T5-family model takes instead.
FLOAT16_TYPES = {"float16": "bfloat16", "int8_float16": "int8_bfloat16"}


def check_quantization(quantization: str, flag: str) -> None:
    """Refuse a weight type CTranslate2 does not have (``auto`` is one)."""
    if quantization != AUTO and quantization not in QUANTIZATIONS:
        raise UserError(f"{flag}: {quantization!r} is not one of {', '.join((AUTO, *QUANTIZATIONS))}")


def t5_family(config: dict[str, Any]) -> bool:
    """Whether a model's ``config.json`` (as a dict) is of the T5 family: its ``model_type`` is one of
    :data:`~mtkit.model.precision.FP16_UNSAFE` (t5, mt5, umt5, longt5, switch_transformers), an architecture it
    names is a T5 class (``T5ForConditionalGeneration``, ``UMT5Model``, ...), or it has T5's ``feed_forward_proj``
    key, which every T5-derived config carries."""
    return (
        config.get("model_type") in FP16_UNSAFE
        or any("T5" in str(name) for name in config.get("architectures") or ())
        or "feed_forward_proj" in config
    )


def check_float16(quantization: str, config: dict[str, Any], flag: str, force_fp16: bool) -> None:
    """Refuse float16 and int8_float16 for a T5-family model (:func:`t5_family`), unless ``force_fp16``: CTranslate2
    decodes them into padding or garbage (CTranslate2 issue #1074; its maintainers recommend bfloat16)."""
    if quantization in FLOAT16_TYPES and not force_fp16 and t5_family(config):
        kind = config.get("model_type") or "T5-like"
        raise UserError(
            f"{flag} {quantization}: {kind} models decode into padding or garbage in CTranslate2's float16 "
            f"(CTranslate2 issue #1074); use {FLOAT16_TYPES[quantization]} (or auto), or pass --force_fp16 to "
            "convert anyway"
        )


def run_model_config(cfg: RunConfig) -> dict[str, Any]:
    """The ``config.json`` (as a dict) of the run's model: the pretrained one's, read without building it, or the
    from-scratch model's type (its preset's and shape's)."""
    name = cfg.model.model_name_or_path
    if not name:
        return {"model_type": preset_model_type(cfg.model)}
    from transformers import PretrainedConfig

    try:
        return PretrainedConfig.get_config_dict(name)[0]
    except (OSError, ValueError) as err:
        raise UserError(f"--model_name_or_path: {str(err).splitlines()[0]}") from None


def check_ct2(cfg: RunConfig) -> None:
    """Refuse, before training, a ``--export_ct2`` quantization CTranslate2 does not have, or float16 for a T5-family
    model (:func:`check_float16`; the model's config is read only then)."""
    quantization = cfg.eval.export_ct2
    if not quantization:
        return
    check_quantization(quantization, "--export_ct2")
    if quantization in FLOAT16_TYPES and not cfg.train.force_fp16:
        check_float16(quantization, run_model_config(cfg), "--export_ct2", cfg.train.force_fp16)


def check_bias_report(cfg: RunConfig) -> None:
    """Refuse, before training, a ``--bias_report_split`` or a ``--winomt_dir`` (:func:`check_winomt`) the end of the
    run could not score."""
    check_winomt(cfg)
    split = bias_report_split(cfg)
    if not split:
        return
    if not cfg.data.mtgeneval_dir:
        raise UserError(f"--bias_report_split {split}: needs --mtgeneval_dir (MT-GenEval in its repository layout)")
    present = available_splits(mtgeneval_root(Path(cfg.data.mtgeneval_dir)))
    if split not in present:
        raise UserError(
            f"--bias_report_split: split {split!r} not in {cfg.data.mtgeneval_dir} (present: {', '.join(present)})"
        )


def check_winomt(cfg: RunConfig) -> None:
    """Refuse, before training, a ``--winomt_dir`` the end of the run could not read (each file checked)."""
    if cfg.eval.winomt_dir:
        load_winomt(Path(cfg.eval.winomt_dir))


_EVALUATION = "evaluation never draws from the training random streams nor changes the weights"
_END = "what the end of the run does with final/; training never sees it"
_LOGGING = "logging and progress only"

#: The keys a relaunch may give other values than the run folder's ``config.yaml``, each with why that is safe. A
#: relaunch continues the run its checkpoint holds, so any other difference is refused before anything is built:
#: another architecture, vocabulary or tokenizer does not fit the checkpoint, and the optimizer's settings would be
#: silently restored from it.
RESUMABLE: dict[str, str] = {
    "max_steps": "trains further (ending as a run straight to the new number) or stops; inverse_sqrt and constant "
    "schedules do not depend on it, linear and cosine ones change shape",
    "output_dir": "the run folder itself, however it is spelled",
    "overwrite_output_dir": "acts at the start only",
    "force_coverage": "a check at the start only: it changes nothing the checkpoint holds",
    "save_steps": "when checkpoints are written: the state they hold is the same",
    "save_total_limit": "how many checkpoints are kept",
    "keep_last_epochs": "how many epoch checkpoints are kept",
    "average_last_epochs": _END + " (and how many epoch checkpoints are kept for it)",
    "early_stopping_patience": "read at each evaluation: a larger one lets a run that stopped early train on",
    "eval_steps": _EVALUATION,
    "eval_max_samples": _EVALUATION,
    "eval_batch_size": _EVALUATION,
    **dict.fromkeys(("decoding", *MBR_KEYS), _EVALUATION),
    **dict.fromkeys(SAVED, "decoding of evaluations and of final/ (its generation config)"),
    "load_best_model_at_end": _END,
    "export_ct2": _END,
    "bias_report_split": _END,
    "winomt_dir": _END,
    "winomt_max_samples": _END,
    "push_to_hub": _END,
    "hub_model_id": _END,
    "hub_private_repo": _END,
    "logging_steps": _LOGGING,
    "report_to": _LOGGING,
    "project_name": _LOGGING,
    "run_name": _LOGGING,
    "disable_tqdm": _LOGGING,
    "peak_tflops": _LOGGING + " (the MFU figure)",
    "ddp_timeout": "how long a collective may wait",
    "preprocessing_num_workers": "how fast the data is tokenized, not what comes out",
    "max_grad_norm": "read at every update: the remedy for a run that diverged (exit status 3)",
    "max_nonfinite_updates": "read at every update: how many non-finite updates in a row stop the run",
    "gradient_checkpointing": "memory only: activations are recomputed in the backward pass, the gradients are equal",
    "torch_compile": "speed only: the model is compiled in place, its weights and their names stay",
    "torch_compile_mode": "speed only: how the compiled model runs, not what it computes",
    "fuse_norms": "speed only: T5's norms compiled in place, the same outputs",
    "dataloader_num_workers": "speed only: the same batches in the same order, collated in other processes",
}

#: What a trained ``tokenizer/`` in the run folder was made from: a start without a checkpoint reuses it.
TOKENIZER_KEYS = ("tokenizer_type", "vocab_size", "tokenizer_train_samples")


def saved_settings(out: Path) -> dict[str, Any]:
    """The flat ``{key: value}`` of ``out/config.yaml`` (empty when there is none; keys of other versions dropped)."""
    path = out / "config.yaml"
    if not path.is_file():
        return {}
    try:
        saved = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        why = getattr(err, "strerror", None) or type(err).__name__
        raise UserError(
            f"--output_dir {out}: its config.yaml cannot be read ({why}), so a resume cannot be checked; restore "
            "it, or train into a new --output_dir"
        ) from None
    sections = saved.values() if isinstance(saved, dict) else []
    return {k: v for group in sections if isinstance(group, dict) for k, v in group.items() if k in FIELDS}


def check_resume(cfg: RunConfig, out: Path, resuming: bool) -> bool:
    """Compare ``cfg`` with the settings ``out`` was made with, when a checkpoint is to be resumed (every key outside
    :data:`RESUMABLE`) or a trained ``tokenizer/`` reused (:data:`TOKENIZER_KEYS`). A difference is one
    :class:`UserError` naming the keys, unless ``--overwrite_output_dir``: then True, start afresh."""
    reuses_tokenizer = (out / "tokenizer" / "tokenizer.json").is_file()
    if not resuming and not reuses_tokenizer:
        return False
    saved, given = saved_settings(out), cfg.flat()
    keys = [k for k in FIELDS if k not in RESUMABLE] if resuming else TOKENIZER_KEYS
    changed = [f"{k} {saved[k]!r} -> {given[k]!r}" for k in keys if k in saved and saved[k] != given[k]]
    if not changed or cfg.train.overwrite_output_dir:
        return bool(changed)
    what = "its checkpoints were" if resuming else "its tokenizer/ was"
    raise UserError(
        f"--output_dir {out}: {what} made with other settings ({', '.join(changed)}), which cannot change on resume; "
        "train into a new --output_dir, or pass --overwrite_output_dir to start this one afresh (docs/training.md, "
        "'What may change on resume', lists the keys that may)"
    )
