"""Outputs kept apart from inputs: every script names what it reads and what it writes, and an output that is,
contains or lies inside one of its inputs (symbolic links resolved) is refused before anything is written."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from mtkit.errors import UserError

#: a flag and its value: one path, several, or none
Paths = Mapping[str, "str | os.PathLike | Iterable[str | os.PathLike] | None"]


def _each(named: Paths) -> list[tuple[str, str, Path]]:
    """``(flag, as given, resolved)`` for every path of ``named``."""
    found = []
    for flag, value in named.items():
        values = [value] if isinstance(value, (str, os.PathLike)) else list(value or ())
        found += [(flag, str(v), Path(v).expanduser().resolve()) for v in values if v is not None and str(v)]
    return found


def relation(output: Path, input_: Path) -> str | None:
    """How the resolved ``output`` stands to the resolved ``input_``: ``is``, ``lies inside``, ``contains`` or
    ``None`` (apart)."""
    if output == input_:
        return "is"
    if input_ in output.parents:
        return "lies inside"
    if output in input_.parents:
        return "contains"
    return None


def check_apart(inputs: Paths, outputs: Paths) -> None:
    """Refuse, in one line naming both flags, an output path that is, contains or lies inside an input path that
    exists (a missing input has nothing to lose, and is reported by its own check; a hub id is no path here)."""
    sources = [(flag, given, path) for flag, given, path in _each(inputs) if path.exists()]
    for out_flag, out_given, out in _each(outputs):
        for in_flag, in_given, source in sources:
            how = relation(out, source)
            if how == "lies inside" and not source.is_dir():
                continue  # a path through a file cannot be written at all: the script's own check says so
            if how is not None:
                same = f" ({source})" if how == "is" and out_given != in_given else ""
                raise UserError(
                    f"{out_flag} {out_given}: {how} the input {in_flag} {in_given}{same}, which writing there would "
                    "overwrite; write somewhere else"
                )
