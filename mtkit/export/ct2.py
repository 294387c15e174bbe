"""Conversion of a ``save_pretrained`` model folder to CTranslate2, carrying what decoding needs from the original:
the tokenizer, ``generation_config.json`` (beam, length penalty, output bounds), ``prompt.json`` and
``mtkit_ct2.json`` (the source model, the quantization and the position limit)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from mtkit.decode.bounds import position_limit
from mtkit.decode.ct2 import CARRIED, INFO, QUANTIZATIONS
from mtkit.errors import UserError


def export_ct2(model_dir: str | Path, out: str | Path, quantization: str = "int8", force: bool = False) -> Path:
    """Convert the ``save_pretrained`` model in ``model_dir`` to a CTranslate2 folder ``out`` (written to a
    temporary folder beside it and renamed at the end, so ``out`` is either complete or absent)."""
    import ctranslate2.converters
    from transformers import AutoConfig, AutoTokenizer

    model_dir, out = Path(model_dir), Path(out)
    if quantization not in QUANTIZATIONS:
        raise UserError(f"--quantization: {quantization!r} is not one of {', '.join(QUANTIZATIONS)}")
    if not (model_dir / "config.json").is_file():
        raise UserError(f"--model: {model_dir} is not a model directory (no config.json there)")
    if out.exists() and not force:
        raise UserError(f"--out: {out} exists (pass --force to replace it)")

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
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out
