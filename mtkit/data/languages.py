"""The languages of each model family: the ISO 639-1 codes the data uses (``de``) and each family's own codes.

A model family marks the target language its own way: NLLB-200 (``deu_Latn``), mBART-50 (``de_DE``) and M2M100
(``__de__``) put a language token first in the target, so decoding forces it as the first generated token; a
multi-target Marian model (``>>deu<<``) and MADLAD-400 (``<2de>``) read it at the start of the source; T5, mT5 and
models trained from scratch are told by their prompt (:mod:`mtkit.data.prompts`) or write one language only. What a
tokenizer supports is read from the tokenizer itself (the language tokens of its vocabulary), and
:class:`ModelLanguages` is the one place decoding and training ask how to set a pair's languages.
"""

from __future__ import annotations

import re
import weakref
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from bias_eval.core.langtag import LanguageTag, base_language
from mtkit.errors import UserError


@dataclass(frozen=True)
class Family:
    """How a family names a language: its tokens' shape, and where the token goes (``target``: first target token,
    forced when decoding; ``source``: first source token, written into the source text)."""

    name: str
    pattern: str  # a regular expression whose first group is the language part of a token
    side: str  # "target" or "source"
    examples: str  # hub ids, for messages and docs

    def iso(self, token: str) -> str | None:
        """The ISO 639-1 code a token of this family stands for (``deu_Latn`` -> ``de``), or ``None``."""
        found = re.match(self.pattern, token)
        if found is None:
            return None
        tag = LanguageTag.read(found.group(1))
        if tag is None:
            return None
        if tag.script or tag.region:  # a variant (>>pt_BR<<): its own code
            return found.group(1)
        return tag.base if len(tag.base) == 2 else None


#: The families whose tokenizers carry language tokens, in the order they are recognised.
FAMILIES = (
    Family("NLLB-200", r"^([a-z]{3})_[A-Z][a-z]{3}$", "target", "facebook/nllb-200-distilled-600M"),
    Family("mBART-50", r"^([a-z]{2})_[A-Z]{2}$", "target", "facebook/mbart-large-50-many-to-many-mmt"),
    Family("M2M100", r"^__([a-z]{2,3})__$", "target", "facebook/m2m100_418M"),
    Family("Marian", r"^>>([a-z]{2,3}(?:_[A-Za-z]+)?)<<$", "source", "Helsinki-NLP/opus-mt-en-ROMANCE"),
    Family("MADLAD-400", r"^<2([a-z]{2,3}(?:[_-][A-Za-z]+)?)>$", "source", "google/madlad400-3b-mt"),
)


def check_code(value: str, flag: str = "--target_lang") -> str:
    """The one spelling of language tag ``value`` (``DE``, ``ger`` -> ``de``; ``pt_br`` -> ``pt-BR``), else a
    one-line error naming ``flag``."""
    return str(LanguageTag.parse(value, flag))


def _vocabulary(tokenizer) -> list[str]:
    """Every token a tokenizer has, its added (special) tokens included."""
    tokens = list(tokenizer.get_vocab())
    tokens += [str(t) for t in getattr(tokenizer, "all_special_tokens", ())]
    tokens += list(getattr(tokenizer, "lang_token_to_id", None) or ())  # M2M100's language tokens (__de__)
    return tokens


@dataclass(frozen=True)
class ModelLanguages:
    """The languages a model's tokenizer can be told about, and how (small and picklable: no tokenizer inside).

    ``codes`` maps ISO 639-1 codes to the family's tokens; ``only_target`` is the one target language of a
    single-target model (opus-mt-en-de: ``de``); a model without language tokens (``family`` None) is told its target
    language by its prompt, if at all."""

    model: str
    family: Family | None = None
    codes: dict[str, str] = field(default_factory=dict)
    only_target: str | None = None

    @classmethod
    def of(cls, tokenizer, model: str | Path = "the model") -> ModelLanguages:
        """The languages of ``tokenizer`` (of ``model``, named in errors). The vocabulary is read once per tokenizer
        (a second or two for a 256k one; training asks at every evaluation), again only when its size or its
        single target changes."""
        stamp = (len(tokenizer), getattr(tokenizer, "target_lang", None))
        try:
            memo = _READ.get(tokenizer)
        except TypeError:  # an object that cannot be weakly referenced: read each time
            return replace(cls._read(tokenizer), model=str(model))
        if memo is None or memo[0] != stamp:
            memo = _READ[tokenizer] = (stamp, cls._read(tokenizer))
        return replace(memo[1], model=str(model))

    @classmethod
    def _read(cls, tokenizer) -> ModelLanguages:
        """:meth:`of`, from the vocabulary itself."""
        model = "the model"
        vocabulary = [t for t in _vocabulary(tokenizer) if "_" in t or t.startswith((">>", "<2"))]  # the candidates
        for family in FAMILIES:
            codes: dict[str, str] = {}
            for token in vocabulary:
                iso = family.iso(token)
                if iso is not None:
                    codes.setdefault(iso, token)
            if len(codes) >= 2:
                return cls(str(model), family, dict(sorted(codes.items())))
        only = getattr(tokenizer, "target_lang", None) if type(tokenizer).__name__.startswith("Marian") else None
        return cls(str(model), None, {}, only if LanguageTag.read(only) else None)

    @classmethod
    def load(cls, model: str | Path) -> ModelLanguages:
        """The languages of the tokenizer saved with ``model`` (a folder or hub id); none when it has no tokenizer."""
        from transformers import AutoTokenizer

        try:
            return cls.of(AutoTokenizer.from_pretrained(str(model)), model)
        except (OSError, ValueError, TypeError):
            return cls(str(model))

    @property
    def forces_target(self) -> bool:
        """Whether decoding must force the target language's token first."""
        return self.family is not None and self.family.side == "target"

    def describe(self) -> str:
        """What the model supports, in words, for messages."""
        if self.family is not None:
            shown = ", ".join(f"{iso} ({token})" for iso, token in list(self.codes.items())[:12])
            more = f" and {len(self.codes) - 12} more" if len(self.codes) > 12 else ""
            return f"{self.family.name} codes: {shown}{more}"
        return f"it translates into {self.only_target} only"

    def check(self, lang: str, flag: str = "--target_lang") -> str:
        """``lang`` if the model can be asked for it, else a one-line error naming the model and what it has."""
        check_code(lang, flag)
        if self.family is not None and self.token(lang) is None:
            raise UserError(f"{flag}: {self.model} has no language code for {lang!r} ({self.describe()})")
        if self.only_target is not None and base_language(lang) != base_language(self.only_target):
            raise UserError(
                f"{flag}: {self.model} is a single-target model ({self.describe()}); it cannot write {lang}"
            )
        return lang

    def check_source(self, lang: str, flag: str = "--source_lang") -> None:
        """A target-token family must know the source language too (its token starts the source)."""
        check_code(lang, flag)
        if self.forces_target and self.token(lang) is None:
            raise UserError(f"{flag}: {self.model} has no language code for {lang!r} ({self.describe()})")

    def token(self, lang: str | None) -> str | None:
        """The family's token for ``lang`` (``deu_Latn``), ``None`` for a family without tokens or an unknown code."""
        if lang is None or self.family is None:
            return None
        if lang in self.codes:
            return self.codes[lang]
        if lang in self.codes.values():  # the family's own code, given as it is
            return lang
        tag = LanguageTag.read(lang)  # a variant spelled another way (pt-BR for Marian's >>pt_BR<<)
        variants = {str(LanguageTag.read(code)): own for code, own in self.codes.items() if LanguageTag.read(code)}
        return variants.get(str(tag)) or self.codes.get(base_language(lang))

    def tokenizer_code(self, lang: str) -> str | None:
        """What the tokenizer's ``src_lang``/``tgt_lang`` take for ``lang`` (M2M100: ``de``; NLLB: ``deu_Latn``)."""
        token = self.token(lang)
        if token is None or self.family is None or self.family.name != "M2M100":
            return token
        return token.strip("_")

    def forced_token_id(self, tokenizer, lang: str | None) -> int | None:
        """The id decoding forces as the first target token for ``lang``, or ``None`` when the family has none."""
        if not self.forces_target or lang is None:
            return None
        token = self.token(self.check(lang))
        return int(tokenizer.convert_tokens_to_ids(token))

    def target_prefix(self, lang: str | None) -> list[str] | None:
        """CTranslate2's ``target_prefix`` for one sentence into ``lang`` (the forced token), or ``None``."""
        return [self.token(self.check(lang))] if self.forces_target and lang is not None else None

    def source_text(self, text: str, lang: str | None) -> str:
        """``text`` as the model reads it when translating into ``lang`` (Marian: ``>>deu<< text``)."""
        if self.family is None or self.family.side != "source" or lang is None:
            return text
        return f"{self.token(self.check(lang))} {text}"

    def language_of(self, tokenizer, token_id: int | None) -> str | None:
        """The ISO code whose token has id ``token_id`` (a saved ``forced_bos_token_id``), or ``None``."""
        if token_id is None or self.family is None:
            return None
        token = tokenizer.convert_ids_to_tokens(int(token_id))
        return next((iso for iso, own in self.codes.items() if own == token), None)

    def target_for(self, lang: str | None, tokenizer=None, generation_config=None, flag: str = "--target_lang"):
        """The target language to decode into: ``lang`` (checked), else the one the model's generation config
        forces, else a single-target model's; an error when the model needs one and none is known."""
        if lang:
            return self.check(lang, flag)
        forced = getattr(generation_config, "forced_bos_token_id", None)
        saved = self.language_of(tokenizer, forced) if tokenizer is not None else None
        if saved is not None:
            return saved
        if self.family is not None:
            raise UserError(f"{flag}: required for {self.model}, which writes several languages ({self.describe()})")
        return self.only_target

    def set_languages(self, tokenizer, source_lang: str | None, target_lang: str | None) -> None:
        """Set a target-token family's tokenizer to ``source_lang`` -> ``target_lang`` (``src_lang``/``tgt_lang``)."""
        if not self.forces_target:
            return
        if source_lang is not None and hasattr(tokenizer, "src_lang"):
            tokenizer.src_lang = self.tokenizer_code(source_lang) or tokenizer.src_lang
        if target_lang is not None and hasattr(tokenizer, "tgt_lang"):
            tokenizer.tgt_lang = self.tokenizer_code(target_lang)

    def encode_pairs(
        self, tokenizer, sources: Sequence[str], targets: Sequence[str], langs: Sequence[str], source_lang: str
    ) -> tuple[list[list[int]], list[list[int]]]:
        """Token ids of each source and target, each pair with its own target language ``langs[i]`` (one tokenizer
        call per language: the family's token starts the target, or the source)."""
        groups: dict[str, list[int]] = defaultdict(list)
        for i, lang in enumerate(langs):
            groups[lang].append(i)
        src: list[list[int]] = [[] for _ in sources]
        tgt: list[list[int]] = [[] for _ in sources]
        for lang, idx in groups.items():
            self.set_languages(tokenizer, source_lang, lang)
            texts = [self.source_text(sources[i], lang) for i in idx]
            enc = tokenizer(texts, text_target=[targets[i] for i in idx], verbose=False)
            for j, i in enumerate(idx):
                src[i], tgt[i] = enc["input_ids"][j], enc["labels"][j]
        return src, tgt


#: Each tokenizer's languages as :meth:`ModelLanguages.of` last read them, with the size and target they were read at.
_READ: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def decoder_start_token_id(model) -> int:
    """The token a model's decoder starts from (its config's, else its generation config's, else padding)."""
    for config in (model.config, getattr(model, "generation_config", None)):
        value = getattr(config, "decoder_start_token_id", None)
        if value is not None:
            return int(value)
    return int(model.config.pad_token_id)


def check_run_languages(cfg) -> ModelLanguages | None:
    """A run's languages (``cfg``: a :class:`mtkit.config.RunConfig`): codes, and with a pretrained model or
    tokenizer, languages its family has (one error line naming the model, the language and the codes it has)."""
    flag = "--target_langs" if cfg.data.target_langs else "--target_lang"
    for lang in cfg.data.languages():
        check_code(lang, flag)
    check_code(cfg.data.source_lang, "--source_lang")
    source = cfg.tokenizer.tokenizer_name or cfg.model.model_name_or_path
    if not source:
        return None
    languages = ModelLanguages.load(source)
    for lang in cfg.data.languages():
        languages.check(lang, flag)
    languages.check_source(cfg.data.source_lang)
    return languages
