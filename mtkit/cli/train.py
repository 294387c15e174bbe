"""``scripts/train.py``: train a translation model from a recipe and flags (see :mod:`mtkit.config`)."""

from __future__ import annotations

import sys

from mtkit.config import RunConfig, parse_config
from mtkit.errors import cli_entry
from mtkit.hubcheck import check_hub_source
from mtkit.pipeline import run

#: the keys that may name a hub id, each with the file its probe asks the hub for
HUB_KEYS = {"model_name_or_path": "config.json", "tokenizer_name": "tokenizer_config.json"}


def given_as(key: str, value: str, argv: list[str]) -> str:
    """How the user gave ``key``: ``--key value`` when a flag set it, else ``key: value (from RECIPE)``."""
    flags = {f"--{key}", f"--{key.replace('_', '-')}"}
    if any(arg in flags or arg.split("=", 1)[0] in flags for arg in argv):
        return f"--{key} {value}"
    recipe = next((argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == "--config"), None)
    recipe = recipe or next((arg.split("=", 1)[1] for arg in argv if arg.startswith("--config=")), None)
    return f"{key}: {value} (from {recipe})" if recipe else f"--{key} {value}"


def check_hub_sources(cfg: RunConfig, argv: list[str]) -> None:
    """Each hub id of the run asked of the hub once, before anything is written (:mod:`mtkit.hubcheck`)."""
    values = {"model_name_or_path": cfg.model.model_name_or_path, "tokenizer_name": cfg.tokenizer.tokenizer_name}
    for key, value in values.items():
        if value:
            check_hub_source(value, given_as(key, value, argv), HUB_KEYS[key])


@cli_entry
def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else list(argv)
    cfg = parse_config(argv)
    check_hub_sources(cfg, argv)
    run(cfg)
