"""Which process of a launch this one is, read from the launcher's environment (standard library only)."""

from __future__ import annotations

import os


def is_main_process() -> bool:
    """Whether this is the main process of a launch: ``RANK`` 0, or no ``RANK`` (a script run without a launcher).
    Read from the environment, so it holds before any process group or accelerator exists."""
    return os.environ.get("RANK", "0") == "0"
