"""A recipe and ``--key value`` flags read into a :class:`mtkit.config.run.RunConfig`: every key and type checked,
unknown keys named with the closest one, values out of range refused (:mod:`mtkit.ranges`)."""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import sys
import typing
from pathlib import Path
from typing import Any, Literal

import yaml
from transformers import HfArgumentParser

from mtkit.config.run import FIELDS, GROUPS, RunConfig
from mtkit.errors import UserError
from mtkit.flags import DefaultsHelpFormatter, first_names, join_lists
from mtkit.overrides import settle
from mtkit.ranges import RANGES


def _unknown(key: str, where: str) -> UserError:
    close = difflib.get_close_matches(key, FIELDS, n=1)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    return UserError(f"{where}: unknown key '{key}'{hint}")


def _coerce(key: str, value: Any, where: str) -> Any:
    """Check a recipe value against the field's type; return it (ints accepted for floats)."""
    hint = typing.get_type_hints(GROUPS[FIELDS[key][0]])[key]
    optional = typing.get_origin(hint) is not Literal and type(None) in typing.get_args(hint)
    if value is None:
        if optional:
            return None
        raise UserError(f"{where}: key '{key}' may not be empty")
    base = next(a for a in typing.get_args(hint) if a is not type(None)) if optional else hint
    if typing.get_origin(base) is Literal:
        if value not in typing.get_args(base):
            raise UserError(f"{where}: key '{key}' must be one of {list(typing.get_args(base))}, got {value!r}")
        return value
    if base is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if base is float and isinstance(value, str):
        try:
            return float(value)  # YAML reads 7e-4 as a string
        except ValueError:
            pass
    if not isinstance(value, base) or (base is int and isinstance(value, bool)):
        raise UserError(f"{where}: key '{key}' expects {base.__name__}, got {value!r}")
    return value


def load_recipe(path: str | Path) -> dict[str, Any]:
    """Read a YAML recipe into a flat ``{key: value}`` dict, checking every key and type."""
    where = f"--config {path}"
    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{where}: file not found") from None
    except (OSError, UnicodeDecodeError) as err:
        raise UserError(f"{where}: cannot read ({getattr(err, 'strerror', None) or 'not UTF-8 text'})") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f" at line {mark.line + 1}" if mark else ""
        raise UserError(f"{where}: malformed YAML{line}") from None
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise UserError(f"{where}: expected a mapping of sections/keys, got {type(raw).__name__}")
    flat: dict[str, Any] = {}
    for key, value in raw.items():
        if key in GROUPS:
            if not isinstance(value, dict):
                raise UserError(f"{where}: section '{key}' must be a mapping")
            for sub, v in value.items():
                if sub not in FIELDS:
                    raise _unknown(sub, where)
                if FIELDS[sub][0] != key:
                    raise UserError(f"{where}: key '{sub}' belongs in section '{FIELDS[sub][0]}', not '{key}'")
                flat[sub] = _coerce(sub, v, where)
        elif key in FIELDS:
            flat[key] = _coerce(key, value, where)
        else:
            raise _unknown(key, where)
    return flat


def check_ranges(cfg: RunConfig) -> None:
    """One :class:`UserError` naming the first flag whose value is out of its range."""
    for key, (ok, wanted) in RANGES.items():
        value = getattr(getattr(cfg, FIELDS[key][0]), key)
        if value is not None and not ok(value):
            raise UserError(f"--{key}: must be {wanted}, got {value}")


class _Parser(HfArgumentParser):
    """HfArgumentParser whose errors are one-line :class:`UserError` s."""

    def error(self, message: str) -> typing.NoReturn:
        raise UserError(first_names(message))


#: the keys that take a list: comma-separated (``--target_langs de,es``), words after the flag also accepted
LIST_KEYS = ("target_langs", "lora_target_modules", "report_to")


def train_parser(recipe: dict[str, Any] | None = None) -> HfArgumentParser:
    """The parser of ``train.py``: ``--config`` first, then one group per recipe section."""
    parser = _Parser(None, allow_abbrev=False, description="Train a translation model.",
                     formatter_class=DefaultsHelpFormatter)  # fmt: skip
    parser.add_argument("--config", help="YAML recipe (recipes/*.yaml); flags given after it override it.")
    for name, cls in GROUPS.items():
        cls._argument_group_name = f"{name} ({cls.__doc__.rstrip('.')})"  # a recipe section, as --help shows it
        parser._add_dataclass_arguments(cls)
    parser.dataclass_types = list(GROUPS.values())
    parser.set_defaults(**(recipe or {}))
    return parser


def parse_config(argv: list[str] | None = None) -> RunConfig:
    """Build a :class:`RunConfig` from ``--config recipe.yaml`` plus ``--key value`` overrides."""
    argv = sys.argv[1:] if argv is None else list(argv)
    pre = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    pre.add_argument("--config")
    known, rest = pre.parse_known_args(argv)
    recipe = load_recipe(known.config) if known.config else {}
    parser, flags = train_parser(recipe), set()
    for token in rest:
        if token.startswith("--"):
            key = token[2:].split("=", 1)[0].replace("-", "_")  # --max-steps: HfArgumentParser's alias
            plain = key[3:] if key.startswith("no_") else key
            if key not in FIELDS and plain not in FIELDS and key not in ("help", "config"):
                raise _unknown(key, "command line")
            flags.add(key)
    *groups, stray = parser.parse_args_into_dataclasses(args=join_lists(argv, LIST_KEYS), return_remaining_strings=True)
    if stray:
        before = argv[: argv.index(stray[0])][-2:] if stray[0] in argv else []
        where = f" after {' '.join(before)}" if before else ""
        raise UserError(f"command line: unexpected {stray[0]!r}{where} (not a flag, nor a value of the flag before it)")
    cfg = RunConfig(**dict(zip(GROUPS, [g for g in groups if dataclasses.is_dataclass(g)])))
    settle(cfg, recipe, flags, known.config)  # `--mtgeneval_dir none` clears what the recipe set; one data source
    check_ranges(cfg)
    cfg.mitigation.check_flags(flags)  # a mitigation's flags without --gender_data: refused, not ignored
    return cfg
