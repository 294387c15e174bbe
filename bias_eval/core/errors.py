"""The one error type of ``bias_eval``: bad input from the user, said in one line (``mtkit.errors`` re-exports it,
so that every script prints it as ``error: ...``)."""

from __future__ import annotations


class UserError(Exception):
    """Bad input from the user: a missing file, a malformed recipe, an unknown flag value.

    The message names the file or flag and says what is wrong, in one line.
    """
