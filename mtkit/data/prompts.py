"""Prompts: how a source sentence is presented to a pretrained model (T5-style task prefixes, instructions).

A template holds ``{source}`` and may name the target language as ``{lang_name}`` (``German``) or
``{lang}`` (``de``), and the source language as ``{src_lang_name}``. Named presets cover the usual
styles. A run saves its template next to the model (``final/prompt.json``), so that translation and
bias reports score a fine-tuned model with the prompt it was trained with.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from mtkit.errors import UserError

LANGUAGE_NAMES = {
    "ar": "Arabic",
    "cs": "Czech",
    "de": "German",
    "en": "English",
    "es": "Spanish",
    "fr": "French",
    "hi": "Hindi",
    "it": "Italian",
    "ja": "Japanese",
    "nl": "Dutch",
    "pt": "Portuguese",
    "ro": "Romanian",
    "ru": "Russian",
    "zh": "Chinese",
}

#: Named templates: ``t5`` is T5's own task prefix; ``instruction`` the style of the flan-t5 gender notebooks.
PRESETS = {
    "t5": "translate {src_lang_name} to {lang_name}: {source}",
    "instruction": 'Translate the following sentence from {src_lang_name} to {lang_name}: "{source}"',
}

FILENAME = "prompt.json"
_FIELDS = ("source", "lang", "lang_name", "src_lang_name", "language")


def language_name(code: str) -> str:
    """English name of a language code (the code itself when unknown)."""
    return LANGUAGE_NAMES.get(code, code)


@dataclass(frozen=True)
class Prompt:
    """A template and the source language it was written for."""

    template: str
    source_lang: str = "en"
    languages: tuple[str, ...] = ()  # the target languages a model was trained with, when saved with it

    @classmethod
    def parse(
        cls, value: str, source_lang: str = "en", flag: str = "--prompt", languages: tuple[str, ...] = ()
    ) -> Prompt:
        """A preset name or a template, checked: it must hold ``{source}`` and no unknown placeholder."""
        template = PRESETS.get(value, value)
        if "{source}" not in template:
            presets = ", ".join(PRESETS)
            raise UserError(f"{flag}: {value!r} is neither a preset ({presets}) nor a template with {{source}}")
        try:
            template.format(**dict.fromkeys(_FIELDS, ""))
        except (KeyError, IndexError, ValueError) as err:
            problem = f"malformed or has an unknown placeholder ({err})"
            raise UserError(f"{flag}: template {template!r} is {problem}") from None
        return cls(template, source_lang, tuple(languages))

    @property
    def names_language(self) -> bool:
        """Whether the template depends on the target language."""
        return any(f"{{{name}}}" in self.template for name in ("lang", "lang_name", "language"))

    def with_languages(self, languages: list[str]) -> Prompt:
        """The same prompt, recording the target languages it serves (saved with the model)."""
        return Prompt(self.template, self.source_lang, tuple(languages))

    def render(self, source: str, lang: str) -> str:
        """The model input for ``source`` translated into ``lang``."""
        return self.template.format(
            source=source,
            lang=lang,
            lang_name=language_name(lang),
            language=language_name(lang),  # bias_eval's older spelling
            src_lang_name=language_name(self.source_lang),
        )

    def save(self, directory: str | Path) -> None:
        """Write ``prompt.json`` into ``directory`` (a model folder)."""
        Path(directory, FILENAME).write_text(json.dumps(asdict(self), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, model: str | Path) -> Prompt | None:
        """The prompt saved with a model folder, or ``None`` (hub ids and models trained without one)."""
        path = Path(model, FILENAME)
        if not path.is_file():
            return None
        try:
            spec = json.loads(path.read_text(encoding="utf-8"))
            langs = tuple(spec.get("languages", ()))
            return cls.parse(spec["template"], spec.get("source_lang", "en"), flag=str(path), languages=langs)
        except (json.JSONDecodeError, KeyError, TypeError):
            raise UserError(f"{path}: not a prompt file (expected {{'template': ..., 'source_lang': ...}})") from None

    def language_for(self, lang: str | None, flag: str = "--target_lang") -> str:
        """The target language to render with: ``lang``, or the model's only one; an error when it is ambiguous."""
        if lang:
            return lang
        if len(self.languages) == 1 or not self.names_language:
            return self.languages[0] if self.languages else ""
        known = f" (the model was trained for {', '.join(self.languages)})" if self.languages else ""
        raise UserError(f"{flag}: required, the prompt {self.template!r} names the target language{known}")


def resolve(value: str | None, model: str | Path | None, source_lang: str = "en") -> Prompt | None:
    """The prompt to translate with: ``value`` (a preset or template) if given, else the model's saved one."""
    if value is not None:
        return Prompt.parse(value, source_lang) if value.lower() != "none" else None
    return Prompt.load(model) if model is not None else None
