"""What the command line does to a recipe's keys: ``none`` (or an empty value) clears a key that may be unset, and a
data source given on the command line while the recipe names another is refused in one line naming the recipe's
key and how to clear it (``--mtgeneval_dir none``)."""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Iterable, Mapping
from types import NoneType
from typing import Any

from mtkit.errors import UserError

#: The keys that name where the training data comes from; a run takes exactly one.
DATA_SOURCES = ("data_dir", "train_file", "dataset_name", "mtgeneval_dir")
#: The value that clears a key (any case; an empty value does too).
NONE = "none"
#: Optional keys where ``none`` is a value of its own rather than "unset": ``--prompt none`` is no prompt, while an
#: unset prompt is the one saved with the model.
OWN_NONE = frozenset({"prompt"})


def is_none(value: Any) -> bool:
    """Whether ``value`` spells "unset": ``none`` in any case, or empty."""
    return isinstance(value, str) and value.strip().lower() in ("", NONE)


def cleared(values: Mapping[str, Any], optional: Iterable[str]) -> dict[str, Any]:
    """The keys among ``optional`` (those that may be unset) whose value in ``values`` spells unset, mapped to
    ``None`` (``prompt`` left alone: ``none`` means no prompt)."""
    return {key: None for key in optional if key not in OWN_NONE and is_none(values.get(key))}


def check_one_source(values: Mapping[str, Any], recipe: Mapping[str, Any], flags: Iterable[str], config: str) -> str:
    """The ``UserError`` message when ``values`` (the parsed run) names more than one data source, else ``""``.

    ``recipe`` holds the recipe's own keys, ``flags`` the keys given on the command line and ``config`` the recipe's
    path: a source the recipe set is named as the recipe's, with the flag that clears it."""
    given = [key for key in DATA_SOURCES if values.get(key)]
    if len(given) < 2:
        return ""
    flags = set(flags)
    from_recipe = [key for key in given if key not in flags and key in recipe]
    from_flags = [key for key in given if key not in from_recipe]
    if from_flags and from_recipe:
        ours = from_recipe[0]
        return f"--{from_flags[0]}: the recipe {config} sets {ours}; pass --{ours} {NONE} to replace it"
    if from_recipe:
        first, second = from_recipe[:2]
        return f"--config {config}: sets both {first} and {second}; give one (or pass --{first} {NONE})"
    named = " and ".join(f"--{key}" for key in given)
    return f"data: give exactly one of {', '.join(f'--{k}' for k in DATA_SOURCES)} (got {named})"


def settle(cfg: Any, recipe: Mapping[str, Any], flags: Iterable[str], config: str | None) -> None:
    """Clear ``cfg``'s optional text keys (``str | None``) that spell unset, in place, then refuse a second data
    source (:func:`check_one_source`); ``cfg`` is a :class:`mtkit.config.RunConfig`."""
    for group in (getattr(cfg, f.name) for f in dataclasses.fields(cfg)):
        hints = typing.get_type_hints(type(group))  # not field.type: HfArgumentParser rewrites it
        optional = [f.name for f in dataclasses.fields(group) if set(typing.get_args(hints[f.name])) == {str, NoneType}]
        for key in cleared(dataclasses.asdict(group), optional):
            setattr(group, key, None)
    if problem := check_one_source(cfg.flat(), recipe, flags, config or "?"):
        raise UserError(problem)
