"""The one field helper of the config groups: a recipe key with its default and its ``--help`` line."""

from __future__ import annotations

from dataclasses import field
from typing import Any


def key(default: Any, help: str) -> Any:
    """A dataclass field for a recipe key: ``default``, and ``help`` as ``--help`` shows it."""
    return field(default=default, metadata={"help": help})
