"""What a run leaves for use: ``final/`` (weights, tokenizer, generation settings, prompt; a LoRA run's adapter
and merged model) and, when asked, the ``bias_eval`` report of the exported model."""

from __future__ import annotations

from pathlib import Path

from accelerate import Accelerator
from transformers import GenerationConfig

from bias_eval.data import available_splits, mtgeneval_root
from mtkit.config import RunConfig
from mtkit.errors import UserError
from mtkit.fsdp import drop_tied_copies, uses_fsdp
from mtkit.lora import is_lora, save_lora
from mtkit.prompts import Prompt


def export_model(cfg: RunConfig, acc: Accelerator, model, tokenizer, final: Path, prompt: Prompt | None) -> None:
    """Write ``final/`` from every process' share: under ZeRO-3 the weights are gathered into one consolidated
    16-bit copy (``stage3_gather_16bit_weights_on_model_save``), under FSDP into a full fp32 one; elsewhere the fp32
    master weights are saved."""
    state_dict = acc.get_state_dict(model)  # a collective under ZeRO-3 and FSDP: every process takes part
    if uses_fsdp(acc):
        state_dict = drop_tied_copies(model, state_dict)
    if not acc.is_main_process:
        return
    unwrapped = acc.unwrap_model(model)
    unwrapped.config.use_cache = True  # off while training with gradient checkpointing; decoding wants it
    if is_lora(unwrapped):
        save_lora(unwrapped, state_dict, final)
    else:
        unwrapped.save_pretrained(str(final), state_dict=dict(state_dict), safe_serialization=True)
    tokenizer.save_pretrained(str(final))
    generation = GenerationConfig.from_model_config(unwrapped.config)
    generation.update(num_beams=cfg.eval.num_beams, max_new_tokens=cfg.eval.max_new_tokens)
    generation.max_len_a, generation.max_len_b = cfg.eval.max_len_a, cfg.eval.max_len_b  # read by translate.py
    generation._from_model_config = False  # our settings, not the model config's: else loading drops max_len_*
    if cfg.eval.num_beams > 1:  # transformers refuses to save a length penalty without beam search
        generation.update(length_penalty=cfg.eval.length_penalty)
    generation.save_pretrained(str(final))
    if prompt is not None:
        prompt.save(final)


def bias_report_split(cfg: RunConfig) -> str | None:
    """``--bias_report_split``, with ``none`` (or empty) meaning no report."""
    split = cfg.eval.bias_report_split
    return None if not split or split.lower() == "none" else split


def check_ct2(cfg: RunConfig) -> None:
    """Refuse, before training, a ``--export_ct2`` quantization CTranslate2 does not have."""
    from mtkit.ct2 import QUANTIZATIONS

    if cfg.eval.export_ct2 and cfg.eval.export_ct2 not in QUANTIZATIONS:
        raise UserError(f"--export_ct2: {cfg.eval.export_ct2!r} is not one of {', '.join(QUANTIZATIONS)}")


def convert_ct2(cfg: RunConfig, final: Path, out: Path) -> Path:
    """``final/`` converted to CTranslate2 with ``--export_ct2``'s quantization (replacing an earlier ``out``)."""
    from mtkit.ct2 import export_ct2

    export_ct2(final, out, cfg.eval.export_ct2, force=True)
    print(f"CTranslate2 model ({cfg.eval.export_ct2}) in {out}")
    return out


def check_bias_report(cfg: RunConfig) -> None:
    """Refuse, before training, a ``--bias_report_split`` the end of the run could not score."""
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


def bias_report(cfg: RunConfig, final: Path, out: Path) -> Path:
    """The full ``bias_eval`` report of the exported model on ``--bias_report_split`` of ``--mtgeneval_dir``,
    decoded with the model's saved prompt and generation settings."""
    from bias_eval.cli import main as report_main

    args = ["--mtgeneval-dir", str(cfg.data.mtgeneval_dir), "--split", str(bias_report_split(cfg))]
    args += ["--langs", *cfg.data.languages(), "--model", str(final), "--out", str(out)]
    args += ["--batch-size", str(cfg.eval.eval_batch_size)]
    report_main(args)
    return out
