"""User-facing errors: one clear line, a non-zero exit, no traceback (:class:`UserError` is ``bias_eval``'s)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import wraps
from typing import TypeVar

from bias_eval.core.errors import UserError

__all__ = ["EXIT_DIVERGED", "EXIT_STOPPED", "Diverged", "Stopped", "UserError", "cli_entry"]

T = TypeVar("T")


class Diverged(Exception):
    """Training stopped after too many non-finite updates in a row (exit status :data:`EXIT_DIVERGED`)."""


#: the exit status of a run that diverged (see :class:`Diverged`)
EXIT_DIVERGED = 3

#: the exit status of a run stopped by SIGTERM/SIGINT once its checkpoint is written: relaunch to resume
#: (EX_TEMPFAIL; Slurm templates requeue on it). 2 is bad input, 3 divergence, 1 a failure, 130 an interrupt.
EXIT_STOPPED = 75


class Stopped(Exception):
    """A run stopped by a signal at an update boundary, after writing its checkpoint."""

    def __init__(self, signame: str, step: int) -> None:
        super().__init__(f"stopped by {signame} after update {step}; checkpoint written, relaunch to resume")


def cli_entry(main: Callable[..., T]) -> Callable[..., T]:
    """Wrap a script's ``main``: a :class:`UserError` prints ``error: ...`` and exits 2, :class:`Stopped` exits
    :data:`EXIT_STOPPED`, an interrupt 130."""

    @wraps(main)
    def wrapper(*args, **kwargs):
        try:
            return main(*args, **kwargs)
        except UserError as err:
            print(f"error: {err}", file=sys.stderr)
            sys.exit(2)
        except Diverged as err:
            print(f"error: {err}", file=sys.stderr)
            sys.exit(EXIT_DIVERGED)
        except Stopped as stop:
            print(f"mtkit: {stop}", file=sys.stderr)
            sys.exit(EXIT_STOPPED)
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            sys.exit(130)

    return wrapper
