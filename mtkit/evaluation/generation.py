"""How ``--model`` decodes: each setting from its flag, else from what was saved with the model, else a default.

Beam size, length penalty and the longest output come from the model's ``generation_config.json``
(``num_beams``, ``length_penalty``, ``max_new_tokens``, ``max_len_a``, ``max_len_b``: what a run of
``scripts/train.py`` evaluated with), the
prompt from its ``prompt.json`` (:meth:`mtkit.data.prompts.Prompt.load`). Prompts are rendered by
:mod:`mtkit.data.prompts` (``{source}``, ``{lang}``, ``{lang_name}``, ``{src_lang_name}``, and ``{language}``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mtkit.config import MAX_LEN_A, MAX_LEN_B
from mtkit.data.prompts import LANGUAGE_NAMES, Prompt, language_name, resolve
from mtkit.decode.mbr import MBR, mbr_settings

__all__ = [
    "DEFAULTS",
    "LANGUAGE_NAMES",
    "GenerationSettings",
    "fit_to_model",
    "language_name",
    "position_limit",
    "resolve_settings",
    "saved_dtype",
    "saved_generation",
    "settings_flags",
]

#: Used when neither a flag nor the model's generation config sets a value.
DEFAULTS: dict[str, Any] = {
    "beam_size": 4, "length_penalty": 1.0, "max_new_tokens": 256, "max_len_a": MAX_LEN_A, "max_len_b": MAX_LEN_B,
}  # fmt: skip
_CONFIG_NAMES = {key: "num_beams" if key == "beam_size" else key for key in DEFAULTS}
FLAGS = {key: f"--{name}" for key, name in _CONFIG_NAMES.items()}  # as train.py and translate.py name them


@dataclass(frozen=True)
class GenerationSettings:
    """How ``--model`` translates (beam search or MBR, through :func:`mtkit.decode.engines.load_translator`)."""

    prompt: str | None = None  # template (a preset already expanded); None: the sources as they are
    source_lang: str = "en"  # for the template's {src_lang_name}
    beam_size: int = 4
    length_penalty: float = 1.0
    max_new_tokens: int = 256
    max_len_a: float = MAX_LEN_A  # each batch stops after max_len_a x its longest source + max_len_b tokens
    max_len_b: int = MAX_LEN_B
    batch_size: int = 32
    device: str | None = None
    dtype: str = "auto"
    engine: str = "hf"  # or ct2: a folder written by scripts/export_ct2.py
    max_source_tokens: int | None = None  # truncate longer sources (the model's position limit)
    mbr: MBR | None = None  # minimum-Bayes-risk decoding (--decoding mbr); None: the beam's best

    def prompt_for(self, lang: str) -> str | None:
        """The prompt for ``lang`` with ``{source}`` left in place (as recorded in the report)."""
        return None if self.prompt is None else self.render(["{source}"], lang)[0]

    def render(self, sources: Sequence[str], lang: str) -> list[str]:
        """The model inputs for ``sources`` translated into ``lang``."""
        if self.prompt is None:
            return list(sources)
        prompt = Prompt(self.prompt, self.source_lang)
        return [prompt.render(source, lang) for source in sources]


def settings_fields(settings: GenerationSettings) -> dict[str, Any]:
    """The report's decoding fields (``scripts/bias_report.py``'s flags, :class:`~mtkit.evaluation.bias_run.
    ReportRequest`'s fields) that decode with ``settings``, every one spelled out (nothing is then read from a
    model's files but its position limit)."""
    fields: dict[str, Any] = {"prompt": settings.prompt or "none", "num_beams": settings.beam_size}
    fields |= {"length_penalty": settings.length_penalty, "max_new_tokens": settings.max_new_tokens}
    fields |= {"batch_size": settings.batch_size, "max_len_a": settings.max_len_a, "max_len_b": settings.max_len_b}
    fields |= {"dtype": settings.dtype, "engine": settings.engine}
    if settings.mbr is not None:
        mbr = settings.mbr
        fields |= {"decoding": "mbr", "mbr_samples": mbr.samples, "mbr_candidates": mbr.candidates}
        fields |= {key: getattr(mbr, key) for key in ("epsilon", "top_p") if getattr(mbr, key) is not None}
    return fields


def settings_flags(settings: GenerationSettings) -> list[str]:
    """:func:`settings_fields` as ``scripts/bias_report.py``'s flags."""
    return [arg for key, value in settings_fields(settings).items() for arg in (f"--{key}", str(value))]


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


def saved_generation(model: str) -> dict[str, Any]:
    """``beam_size``/``length_penalty``/``max_new_tokens`` set in ``model``'s ``generation_config.json`` (those
    it sets; nothing for a model without one)."""
    try:
        from transformers import GenerationConfig

        config = GenerationConfig.from_pretrained(model)
    except Exception:  # noqa: BLE001 - no generation config (or no model: Translator reports that)
        return {}
    values = {key: getattr(config, name, None) for key, name in _CONFIG_NAMES.items()}
    return {key: value for key, value in values.items() if value is not None}


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


def fit_to_model(settings: GenerationSettings, limit: int | None, origin: str = "") -> GenerationSettings:
    """``settings`` with sources truncated to ``limit`` tokens and at most ``limit`` new tokens (a warning when
    ``max_new_tokens``, which came from ``origin``, is cut)."""
    if limit is None:
        return settings
    if settings.max_new_tokens > limit:
        value = settings.max_new_tokens
        if origin == FLAGS["max_new_tokens"]:
            what = f"--max_new_tokens {value}"
        else:
            what = f"max_new_tokens {value} ({origin if origin == 'default' else f'from {origin}'})"
        message = f"{what} exceeds the model's {limit} positions"
        print(f"warning: {message}; using {limit}", file=sys.stderr)
    return replace(settings, max_new_tokens=min(settings.max_new_tokens, limit), max_source_tokens=limit)


def resolve_settings(args: Any) -> tuple[GenerationSettings, dict[str, str]]:
    """The settings ``--model`` translates with, and where each came from (a flag, a file of the model, a default).

    ``args`` (a :class:`~mtkit.evaluation.bias_run.ReportRequest`) holds ``model``, ``prompt``, ``num_beams``,
    ``length_penalty``, ``max_new_tokens``, ``max_len_a``, ``max_len_b`` (``None``: not given), ``batch_size``,
    ``device``, ``dtype``, ``engine``, the decoding settings (``decoding``, ``mbr_samples``, ...) and ``seed`` (MBR's
    sampling seed as well as the bootstrap's).
    """
    model = args.model
    prompt = resolve(args.prompt, model)
    saved = saved_generation(model)
    values: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for key, flag in FLAGS.items():
        given = getattr(args, _CONFIG_NAMES[key])
        if given is not None:
            values[key], origins[key] = given, flag
        elif key in saved:
            values[key], origins[key] = saved[key], str(Path(model, "generation_config.json"))
        else:
            values[key], origins[key] = DEFAULTS[key], "default"
    if args.prompt is not None:
        origins["prompt"] = "--prompt"
    else:
        origins["prompt"] = str(Path(model, "prompt.json")) if prompt is not None else "none"
    settings = GenerationSettings(
        prompt=None if prompt is None else prompt.template,
        source_lang="en" if prompt is None else prompt.source_lang,
        batch_size=args.batch_size,
        device=args.device,
        dtype=args.dtype,
        engine=args.engine,
        mbr=mbr_settings(args, args.seed),
        **values,
    )
    if settings.mbr is not None:
        settings.mbr.sampling(settings.engine)  # --epsilon with --engine ct2: refused before anything loads
        origins["decoding"] = "--decoding"
    limit = position_limit(model)
    fitted = fit_to_model(settings, limit, origins["max_new_tokens"])
    if fitted.max_new_tokens != settings.max_new_tokens:
        origins["max_new_tokens"] += f", capped at the model's {limit} positions"
    return fitted, origins
