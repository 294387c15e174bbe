"""Conversion of a ``save_pretrained`` model folder to CTranslate2, carrying what decoding needs from the original:
the tokenizer, ``generation_config.json`` (beam, length penalty, output bounds), ``prompt.json`` and
``mtkit_ct2.json`` (the source model, the quantization, the position limit and the self-check's figures). Float16
types are refused for T5-family models (:func:`mtkit.train.checks.check_float16`), and every conversion checks
itself against transformers before it is put in place (:mod:`mtkit.export.ct2_check`)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from mtkit.decode.bounds import position_limit
from mtkit.decode.ct2 import CARRIED, INFO
from mtkit.errors import UserError
from mtkit.export.ct2_check import CHECK_SAMPLES, check_sample, self_check
from mtkit.model.folders import check_pretrained_source
from mtkit.train.checks import AUTO, check_float16, check_quantization


def resolve(quantization: str) -> str:
    """``auto`` resolved on this machine: ``int8`` without a CUDA device (CTranslate2's fast CPU type),
    ``int8_bfloat16`` with one (int8 weights, the rest in bfloat16, which T5 models decode in); any other type as
    given."""
    if quantization != AUTO:
        return quantization
    import ctranslate2

    return "int8_bfloat16" if ctranslate2.get_cuda_device_count() > 0 else "int8"


def export_ct2(
    model_dir: str | Path,
    out: str | Path,
    quantization: str = AUTO,
    force: bool = False,
    *,
    force_fp16: bool = False,
    check_samples: int = CHECK_SAMPLES,
    check_source: str | Path | None = None,
    check_reference: str | Path | None = None,
    flag: str = "--quantization",
) -> Path:
    """Convert the ``save_pretrained`` model in ``model_dir`` to a CTranslate2 folder ``out`` (written to a
    temporary folder beside it and renamed at the end, so ``out`` is either complete or absent).

    ``quantization`` (``auto``: :func:`resolve`) float16 or int8_float16 is refused for a T5-family model unless
    ``force_fp16``. Before the rename, ``check_samples`` sentences (of ``check_source``, with ``check_reference``; by
    default the run's validation data or the built-in sample) are translated by both engines and compared
    (:func:`mtkit.export.ct2_check.self_check`); 0 skips that. ``flag`` names the quantization in errors."""
    import ctranslate2.converters
    from transformers import AutoConfig, AutoTokenizer

    model_dir, out = Path(model_dir), Path(out)
    check_quantization(quantization, flag)
    quantization = resolve(quantization)
    check_pretrained_source(str(model_dir), "MODEL", weights=True)  # no such folder, not seq2seq, corrupt weights
    if not (model_dir / "config.json").is_file():
        raise UserError(f"MODEL {model_dir}: not a model directory (no config.json there)")
    try:
        config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise UserError(f"--model: {model_dir}/config.json is not a JSON model config") from None
    check_float16(quantization, config, flag, force_fp16)
    if out.exists() and not force:
        raise UserError(f"--out: {out} exists (pass --force to replace it)")
    if check_samples < 0:
        raise UserError(f"--check_samples: must be >= 0, got {check_samples}")
    sample = check_sample(model_dir, check_samples, check_source, check_reference) if check_samples else None

    class Converter(ctranslate2.converters.TransformersConverter):
        def load_model(self, model_class, path, **kwargs):
            model = super().load_model(model_class, path, **kwargs)
            if model.config.model_type == "bart" and not hasattr(model.config, "normalize_before"):
                model.config.normalize_before = False  # transformers' BART is post-norm; the converter asks
            return model

    tmp = out.with_name(f".{out.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        Converter(str(model_dir)).convert(str(tmp), quantization=quantization, force=True)
        AutoTokenizer.from_pretrained(str(model_dir)).save_pretrained(str(tmp))
        for name in CARRIED:
            if (model_dir / name).is_file():
                shutil.copy2(model_dir / name, tmp / name)
        info = {
            "source": str(model_dir.resolve()),
            "quantization": quantization,
            "position_limit": position_limit(AutoConfig.from_pretrained(str(model_dir))),
        }
        (tmp / INFO).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
        if sample is None:
            print("CTranslate2 self-check skipped (--check_samples 0): not compared with transformers", file=sys.stderr)
            info["check"] = None
        else:
            info["check"] = self_check(model_dir, tmp, sample, quantization, flag)
        (tmp / INFO).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out
