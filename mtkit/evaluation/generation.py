"""How the bias report's ``--model`` decodes: :func:`mtkit.decode.settings.resolve` (each setting from its flag, else
what was saved with the model, else :data:`mtkit.decode.settings.DEFAULTS`), plus what is the report's own: the
model's position limit (:func:`fit_to_model`: sources truncated, ``max_new_tokens`` capped with a warning), the device,
and the record ``metrics.json`` keeps of them (:meth:`ReportDecoding.record`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from mtkit.decode.settings import SAVED, DecodingSettings, resolve

__all__ = ["ReportDecoding", "Resolved", "fit_to_model", "position_limit", "resolve_report", "saved_dtype"]

#: the fields of :class:`DecodingSettings` a report records and spells out as flags (MBR's as one ``mbr`` entry)
_RECORDED = ("num_beams", "length_penalty", "max_new_tokens", "max_len_a", "max_len_b", "batch_size", "engine", "dtype")


@dataclass(frozen=True)
class ReportDecoding:
    """How ``--model`` translates for a report: the one settings object, the device it runs on and the longest
    source (the model's position limit; ``None``: no limit)."""

    settings: DecodingSettings
    device: str | None = None
    max_source_tokens: int | None = None

    def prompt_for(self, lang: str) -> str | None:
        """The prompt for ``lang`` with ``{source}`` left in place (as recorded in the report)."""
        return None if self.settings.prompt is None else self.settings.render(["{source}"], lang)[0]

    def record(self) -> dict[str, Any]:
        """``metrics.json``'s ``config.hypotheses.generation``: the prompt's template and source language, the
        decoding fields (``num_beams``: reports before this one wrote ``beam_size``), ``mbr``, device, source limit."""
        s = self.settings
        prompt = s.prompt
        out: dict[str, Any] = {"prompt": None if prompt is None else prompt.template}
        out["source_lang"] = "en" if prompt is None else prompt.source_lang
        out |= {name: getattr(s, name) for name in _RECORDED}
        out["mbr"] = None if s.mbr is None else asdict(s.mbr)
        return out | {"device": self.device, "max_source_tokens": self.max_source_tokens}

    def flags(self) -> list[str]:
        """``scripts/bias_report.py``'s decoding flags that decode with these settings, every one spelled out (nothing
        is then read from a model's files but its position limit): the rebuild command of a report."""
        s = self.settings
        found: dict[str, Any] = {"prompt": "none" if s.prompt is None else s.prompt.template}
        found |= {name: getattr(s, name) for name in _RECORDED}
        if s.mbr is not None:
            found |= {"decoding": "mbr", "mbr_samples": s.mbr.samples, "mbr_candidates": s.mbr.candidates}
            found |= {key: getattr(s.mbr, key) for key in ("epsilon", "top_p") if getattr(s.mbr, key) is not None}
        return [arg for key, value in found.items() for arg in (f"--{key}", str(value))]


#: how a model translates for a report and where each saved setting came from (:func:`resolve_report`)
Resolved = tuple[ReportDecoding, dict[str, str]]

#: ``config.json``'s weight types as ``--dtype`` names them
_SAVED_DTYPES = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}


def saved_dtype(model: str | Path) -> str:
    """The type of the weights saved in model folder ``model`` (its ``config.json``), as ``--dtype`` names it; fp32
    when the config does not say."""
    try:
        config = json.loads(Path(model, "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "fp32"
    return _SAVED_DTYPES.get(str(config.get("dtype") or config.get("torch_dtype")), "fp32")


def position_limit(model: str) -> int | None:
    """The position limit (:func:`mtkit.decode.bounds.position_limit`) of ``model``'s config, if it declares one.

    Models trained with short sequences fail on longer inputs or outputs.
    """
    from mtkit.decode.bounds import position_limit as config_limit
    from mtkit.decode.ct2 import INFO, is_ct2_model

    if is_ct2_model(model):
        return json.loads(Path(model, INFO).read_text(encoding="utf-8")).get("position_limit")
    try:
        from transformers import AutoConfig

        config = AutoConfig.from_pretrained(model)
    except Exception:  # noqa: BLE001 - an unloadable model is reported by Translator itself
        return None
    return config_limit(config)


def fit_to_model(decoding: ReportDecoding, limit: int | None, origin: str = "") -> ReportDecoding:
    """``decoding`` with sources truncated to ``limit`` tokens and at most ``limit`` new tokens (a warning when
    ``max_new_tokens``, which came from ``origin``, is cut)."""
    if limit is None:
        return decoding
    value = decoding.settings.max_new_tokens
    if value > limit:
        what = f"--max_new_tokens {value}" if origin == "--max_new_tokens" else f"max_new_tokens {value}"
        if origin != "--max_new_tokens":
            what += f" ({origin if origin == 'default' else f'from {origin}'})"
        print(f"warning: {what} exceeds the model's {limit} positions; using {limit}", file=sys.stderr)
    settings = replace(decoding.settings, max_new_tokens=min(value, limit))
    return replace(decoding, settings=settings, max_source_tokens=limit)


def resolve_report(model: str, given: Mapping[str, Any], device: str | None = None) -> Resolved:
    """How ``model`` translates for a report on ``device``, from the decoding settings ``given`` (by
    :class:`~mtkit.decode.settings.DecodingSettings`'s field names, as :func:`mtkit.decode.settings.resolve` takes
    flags; ``seed`` is MBR's), and where its saved settings and prompt came from (and ``decoding``, with MBR), fitted
    to the model's position limit."""
    settings, found = resolve(given, model)
    origin = {name: found[name] for name in (*SAVED, "prompt")}
    if settings.mbr is not None:
        origin["decoding"] = found["decoding"]
    limit = position_limit(model)
    fitted = fit_to_model(ReportDecoding(settings, device), limit, origin["max_new_tokens"])
    if fitted.settings.max_new_tokens != settings.max_new_tokens:
        origin["max_new_tokens"] += f", capped at the model's {limit} positions"
    return fitted, origin
