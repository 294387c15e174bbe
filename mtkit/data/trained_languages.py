"""The target languages a model folder of a run was fine-tuned for, as the folder records them, and the one-line
warning when it is asked for another.

A run's ``final/`` (and every folder ``scripts/export_model.py``, ``scripts/average_checkpoints.py`` and
``scripts/export_ct2.py`` make from it) records them in ``generation_config.json`` under :data:`KEY`; folders written
before that record them only with a prompt that names the language (``prompt.json``'s ``languages``). A hub id or a
model no run has written records none: nothing is said about it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path

from mtkit.data.prompts import Prompt

#: The key of ``generation_config.json`` (the file that travels with every model folder) holding the run's targets.
KEY = "target_langs"


def trained_languages(model: str | Path | None) -> tuple[str, ...]:
    """The target languages ``model`` (a folder) was fine-tuned for; empty when it records none."""
    if model is None or not Path(model).is_dir():
        return ()
    path = Path(model, "generation_config.json")
    try:
        langs = json.loads(path.read_text(encoding="utf-8")).get(KEY) if path.is_file() else None
    except (OSError, ValueError, AttributeError):  # unreadable: the model's loading reports it
        langs = None
    if isinstance(langs, list) and all(isinstance(lang, str) for lang in langs):
        return tuple(langs)
    prompt = Prompt.load(model)
    return prompt.languages if prompt is not None else ()


def untrained(model: str | Path | None, langs: Iterable[str]) -> str | None:
    """The warning (without ``warning:``) when ``langs`` holds a language ``model`` was not fine-tuned for, naming
    the ones it was; ``None`` when all are (or the model records none)."""
    trained = trained_languages(model)
    others = [lang for lang in dict.fromkeys(langs) if lang and trained and lang not in trained]
    if not others:
        return None
    return (
        f"{model} was fine-tuned for {', '.join(trained)} only, not {', '.join(others)}: expect poor translations, "
        "or ones in another language"
    )


def warn_untrained(model: str | Path | None, langs: Iterable[str], flag: str) -> None:
    """Print :func:`untrained`'s warning to stderr on one line starting with ``flag``, if there is one."""
    message = untrained(model, langs)
    if message:
        print(f"warning: {flag}: {message}", file=sys.stderr)
