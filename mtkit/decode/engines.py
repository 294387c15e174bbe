"""One interface over the decoding engines: transformers' ``generate`` (``hf``) and CTranslate2 (``ct2``)."""

from __future__ import annotations

from pathlib import Path

from mtkit.decode.ct2 import CT2Translator
from mtkit.decode.devices import check_device
from mtkit.decode.generate import Translator
from mtkit.decode.settings import ENGINES
from mtkit.errors import UserError


def load_translator(model: str | Path, engine: str = "hf", device: str | None = None, dtype: str = "auto"):
    """A :class:`Translator` (``engine`` hf: transformers' ``generate``) or a :class:`mtkit.decode.ct2.CT2Translator`
    (``ct2``: a folder written by ``scripts/export_ct2.py``)."""
    if engine not in ENGINES:
        raise UserError(f"--engine: {engine!r} is not one of {', '.join(ENGINES)}")
    check_device(device, engine)
    if engine == "hf":
        return Translator(model, device=device, dtype=dtype)
    if dtype != "auto":
        raise UserError("--dtype: not used with --engine ct2 (its weights' type is export_ct2.py's --quantization)")
    return CT2Translator(model, device=device)
