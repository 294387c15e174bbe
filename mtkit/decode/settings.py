"""How a model decodes: one settings object (:class:`DecodingSettings`), its defaults (:data:`DEFAULTS`), and one rule
for where each setting comes from (:func:`resolve`: the flag, else what was saved with the model, else the default).

Fields are named as ``scripts/translate.py``'s flags, the recipe's ``eval`` keys and transformers'
``GenerationConfig`` name them (``num_beams``, not ``beam_size``), so that each is read and written one way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from bias_eval.core.memory import check_fits, machine_memory
from mtkit.config import MAX_LEN_A, MAX_LEN_B, MAX_NEW_TOKENS, NUM_BEAMS, EvalConfig
from mtkit.data.prompts import Prompt
from mtkit.data.prompts import resolve as resolve_prompt
from mtkit.decode.mbr import MBR, MBR_KEYS, mbr_settings

#: the decoding engines (:func:`mtkit.decode.engines.load_translator`): transformers' ``generate`` (hf) and
#: CTranslate2 (ct2)
ENGINES = ("hf", "ct2")
#: the weight types ``--dtype`` takes with engine hf (``auto``: the checkpoint's)
DTYPES = ("auto", "fp32", "bf16", "fp16")
#: the settings a model folder's ``generation_config.json`` holds (what a run evaluated with; :meth:`save_into`)
SAVED = ("num_beams", "length_penalty", "max_new_tokens", "max_len_a", "max_len_b")


@dataclass(frozen=True)
class DecodingSettings:
    """Everything that decides a translation besides the model and the sources; the field defaults are the one
    table of defaults (:data:`DEFAULTS`).

    ``max_len_a``/``max_len_b`` bound each batch's output to ``max_len_a`` x its longest source + ``max_len_b``
    tokens (never more than ``max_new_tokens``). The MBR keys (:data:`mtkit.decode.mbr.MBR_KEYS`) are set only with
    ``decoding`` mbr (``None``: :class:`MBR`'s own defaults, filled in; ``epsilon``/``top_p``: the engine's cutoff);
    ``utility`` (a name in :data:`mtkit.decode.mbr.UTILITIES`; no flag) scores the candidates, ``seed`` fixes MBR's
    samples.
    ``prompt`` is the template sources are rendered with (by the caller, per target language: :meth:`render`); the
    engines translate the sentences they are given.
    """

    num_beams: int = NUM_BEAMS
    length_penalty: float = 1.0
    max_new_tokens: int = MAX_NEW_TOKENS
    max_len_a: float = MAX_LEN_A
    max_len_b: int = MAX_LEN_B
    decoding: str = "beam"
    mbr_samples: int | None = None
    mbr_candidates: str | None = None
    epsilon: float | None = None
    top_p: float | None = None
    utility: str = "chrf"
    seed: int = 0
    batch_size: int = 32
    prompt: Prompt | None = None
    engine: str = "hf"
    dtype: str = "auto"

    def __post_init__(self) -> None:
        mbr = self.mbr  # --decoding, the MBR keys only with mbr, their ranges
        if mbr is not None:
            mbr.sampling(self.engine)  # --epsilon with --engine ct2 is refused
            object.__setattr__(self, "mbr_samples", mbr.samples)  # MBR's defaults where not given: one value each
            object.__setattr__(self, "mbr_candidates", mbr.candidates)
        self.check_fits(machine_memory())

    def check_fits(self, memory: int | None) -> None:
        """Refuse, before any model loads, settings whose one batch cannot be held in ``memory`` bytes (``None``:
        unknown, nothing refused): its sequences (``batch_size`` sources x ``num_beams`` beams, or x MBR's
        candidates) of ``max_new_tokens`` token ids each, 8 bytes an id, the least any engine keeps of them; one line
        naming the flag that asks for that many sequences."""
        wide, flag = (self.num_beams, "--num_beams")
        if self.mbr_samples is not None and self.mbr_samples > wide:
            wide, flag = self.mbr_samples, "--mbr_samples"
        what = f"a batch of {self.batch_size} sentences x {wide} x {self.max_new_tokens} new tokens of token ids alone"
        check_fits(self.batch_size * wide * self.max_new_tokens * 8, memory, f"{flag} {wide}", what)

    @property
    def mbr(self) -> MBR | None:
        """The :class:`MBR` these settings decode with; ``None`` for beam search."""
        return mbr_settings(self, self.seed)

    @classmethod
    def from_eval(cls, cfg: EvalConfig) -> DecodingSettings:
        """What a run's ``eval`` section decodes validation and test sets with (its MBR keys only with mbr)."""
        values = {f.name: getattr(cfg, f.name) for f in fields(cls) if hasattr(cfg, f.name)}
        if cfg.decoding == "beam":
            values |= dict.fromkeys(MBR_KEYS)
        return cls(**values, batch_size=cfg.eval_batch_size)

    def render(self, sources: list[str], lang: str) -> list[str]:
        """``sources`` in :attr:`prompt` for the target language ``lang`` (as they are without one)."""
        return list(sources) if self.prompt is None else [self.prompt.render(s, lang) for s in sources]

    def save_into(self, generation_config) -> None:
        """Write :data:`SAVED` into ``generation_config`` (a transformers ``GenerationConfig``) so that
        :func:`resolve` reads them back from the saved folder."""
        generation_config.update(num_beams=self.num_beams, max_new_tokens=self.max_new_tokens)
        generation_config.max_len_a, generation_config.max_len_b = self.max_len_a, self.max_len_b
        generation_config._from_model_config = False  # our settings, not the model config's: else loading drops them
        if self.num_beams > 1:  # transformers refuses to save a length penalty without beam search
            generation_config.update(length_penalty=self.length_penalty)
        else:  # nor the beam settings of a pretrained generation config
            cleared = ("length_penalty", "early_stopping", "num_beam_groups", "diversity_penalty")
            generation_config.update(**dict.fromkeys(cleared))


#: what each setting is when neither a flag nor the model says otherwise
DEFAULTS = DecodingSettings()


def saved_generation(model: str | Path) -> dict[str, Any]:
    """The :data:`SAVED` settings ``model``'s ``generation_config.json`` sets (transformers filling in its own
    defaults, e.g. ``num_beams`` 1, as ``generate`` would); nothing for a model without one."""
    try:
        from transformers import GenerationConfig

        config = GenerationConfig.from_pretrained(str(model))
    except Exception:  # noqa: BLE001 - no generation config (or no model: loading it reports that)
        return {}
    values = {name: getattr(config, name, None) for name in SAVED}
    return {name: value for name, value in values.items() if value is not None}


def resolve(flags: Any, model: str | Path) -> tuple[DecodingSettings, dict[str, str]]:
    """The settings ``model`` decodes with, and where each came from: the flag (``flags.<field>``, or
    ``flags[<field>]`` of a mapping; ``None`` or absent: not given) as ``--<field>``; else, for :data:`SAVED`, the
    model's ``generation_config.json`` and for the prompt its ``prompt.json`` (their paths); else ``default``
    (:data:`DEFAULTS`). MBR keys are refused without ``--decoding mbr``."""
    saved = saved_generation(model) | {"prompt": resolve_prompt(None, model)}
    files = dict.fromkeys(SAVED, Path(model, "generation_config.json")) | {"prompt": Path(model, "prompt.json")}
    values: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for name in (f.name for f in fields(DecodingSettings)):
        given = flags.get(name) if isinstance(flags, Mapping) else getattr(flags, name, None)
        if given is not None:
            values[name] = resolve_prompt(given, model) if name == "prompt" else given
            origin[name] = f"--{name}"
        elif saved.get(name) is not None:
            values[name], origin[name] = saved[name], str(files[name])
        else:
            origin[name] = "default"
    return DecodingSettings(**values), origin
