"""Which process of a launch this one is, read from the launcher's environment (standard library only)."""

from __future__ import annotations

import os
from collections.abc import Mapping


def is_main_process(env: Mapping[str, str] | None = None) -> bool:
    """Whether this is the main process of a launch: ``RANK`` 0, or no ``RANK`` (a script run without a launcher).
    Read from the environment (``env``, else this process'), so it holds before any process group or accelerator
    exists."""
    return (os.environ if env is None else env).get("RANK", "0") == "0"


def is_local_main_process(env: Mapping[str, str] | None = None) -> bool:
    """Whether this is the main process of its host (``LOCAL_RANK`` 0, or none), as :func:`is_main_process` reads
    the launch's."""
    return (os.environ if env is None else env).get("LOCAL_RANK", "0") == "0"
