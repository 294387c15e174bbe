"""User-facing errors: one clear line, a non-zero exit, no traceback."""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import wraps
from typing import TypeVar

T = TypeVar("T")


class UserError(Exception):
    """Bad input from the user: a missing file, a malformed recipe, an unknown flag value.

    The message names the file or flag and says what is wrong, in one line.
    """


def cli_entry(main: Callable[..., T]) -> Callable[..., T]:
    """Wrap a script's ``main`` so that a :class:`UserError` prints ``error: ...`` and exits 2."""

    @wraps(main)
    def wrapper(*args, **kwargs):
        try:
            return main(*args, **kwargs)
        except UserError as err:
            print(f"error: {err}", file=sys.stderr)
            sys.exit(2)
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            sys.exit(130)

    return wrapper
